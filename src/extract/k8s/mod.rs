//! Kubernetes objects → engine launches: workloads with pod templates, and the custom resources
//! that wrap them, read as their platform files say (`serving`, `crds`). Each container's `command` + `args` is an exec-form argv, with Kubernetes
//! `$(VAR)` references expanded from the container's env first; the shell reader takes it from there
//! (`sh -c` strings included).

mod based;
mod crds;
pub mod instances;
pub mod mounts;
pub mod placement;
pub mod scalar;
mod serving;
mod templates;

use crate::extract::images;
use crate::extract::shell::{self, Chars, MappedWord};
use crate::finding::Finding;
use crate::launch::{Launch, ObjectRef};
use crate::source::{FileId, Loc, SourceFile};
use crate::yaml::{Node, Value};
use placement::items;
use std::collections::HashSet;
use std::ops::Range;

/// Launches in one Kubernetes object (a document with `apiVersion` and `kind`), and findings about what in it could not be read.
pub fn read(file: FileId, src: &SourceFile, doc: &Node) -> (Vec<Launch>, Vec<Finding>) {
    // A template another object of the input renders (a ServingRuntime that serves an
    // InferenceService) is read there, merged with it, never alone.
    if crate::extract::by_platform::holder::claimed(file, src, doc) {
        return (Vec::new(), Vec::new());
    }
    let mut cx = Cx::new(file, src, doc);
    // A review or a list says nothing of its own: each object in it is read (and said) alone.
    if cx.object(doc) {
        cx.unread(doc);
    }
    (cx.out, cx.findings)
}

/// Whether a YAML document is a Kubernetes object.
pub fn is_object(doc: &Node) -> bool {
    doc.get("apiVersion").is_some() && doc.get("kind").and_then(Node::as_str).is_some()
}

/// What the object says around a pod template: the role it plays, pods per group, and a GPU
/// count or type given outside the containers (Dynamo's `resources.limits.gpu`).
#[derive(Debug, Clone, Default)]
struct Group {
    role: Option<String>,
    pods: Option<u32>,
    gpus: Option<u32>,
    /// Names the container in findings when the container itself has no name (Dynamo services).
    service: Option<String>,
}

/// Walks one object, collecting launches.
struct Cx<'a> {
    file: FileId,
    src: &'a SourceFile,
    kind: String,
    namespace: Option<String>,
    name: String,
    out: Vec<Launch>,
    findings: Vec<Finding>,
    /// Containers and nested objects read so far, by where they start: the walk over the
    /// object's other pod templates (`templates`) reads each once.
    read: HashSet<usize>,
    /// What a reader skipped on purpose (a Dynamo frontend): not walked again.
    skipped: Vec<Range<usize>>,
}

impl<'a> Cx<'a> {
    fn new(file: FileId, src: &'a SourceFile, doc: &Node) -> Self {
        let meta = doc.get("metadata");
        let text = |key: &str| meta.and_then(|m| m.get(key)).and_then(Node::scalar_text);
        Cx {
            file,
            src,
            kind: doc
                .get("kind")
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_string(),
            namespace: text("namespace"),
            name: text("name")
                .or_else(|| text("generateName"))
                .unwrap_or_default(),
            out: Vec::new(),
            findings: Vec::new(),
            read: HashSet::new(),
            skipped: Vec::new(),
        }
    }

    /// Reads the object; `false` when it only holds other objects (an AdmissionReview, a List).
    fn object(&mut self, doc: &Node) -> bool {
        let spec = doc.get("spec");
        let g = Group::default();
        let kind = self.kind.clone();
        match kind.as_str() {
            "Pod" => {
                let g = Group {
                    role: super::roles::from_labels(doc.get("metadata")),
                    ..g
                };
                self.pod_spec(spec, &g)
            }
            "Deployment" | "StatefulSet" | "Job" | "DaemonSet" | "ReplicaSet" => {
                self.pod_template(spec.and_then(|s| s.get("template")), &g)
            }
            "CronJob" => {
                let job = spec
                    .and_then(|s| s.get("jobTemplate"))
                    .and_then(|j| j.get("spec"));
                self.pod_template(job.and_then(|j| j.get("template")), &g)
            }
            "AdmissionReview" => {
                self.review(doc);
                return false;
            }
            "List" => {
                self.list(doc);
                return false;
            }
            _ => {
                // A platform file and the kind's own reader may both read parts of it (a
                // RayService's Ray Serve config and its Ray cluster).
                self.platforms(doc);
            }
        }
        // Pod templates the kind's reader did not take, wherever the object keeps them.
        self.templates(doc);
        true
    }

    /// A `kind: List` (what `kubectl get -o yaml` prints): each item is an object.
    fn list(&mut self, doc: &Node) {
        for item in items(doc.get("items")).filter(|i| is_object(i)) {
            self.nested(item);
        }
    }

    /// An AdmissionReview carries the object under review in `request.object`.
    fn review(&mut self, doc: &Node) {
        if let Some(obj) = doc
            .get("request")
            .and_then(|r| r.get("object"))
            .filter(|o| is_object(o))
        {
            self.nested(obj);
        }
    }

    /// An object held inside this one (a List item, a reviewed object, a Template's object).
    fn nested(&mut self, obj: &Node) {
        if !self.read.insert(obj.loc.start) {
            return;
        }
        let (launches, findings) = read(self.file, self.src, obj);
        self.out.extend(launches);
        self.findings.extend(findings);
    }

    fn pod_template(&mut self, template: Option<&Node>, g: &Group) {
        let mut g = g.clone();
        if g.role.is_none() {
            g.role = super::roles::from_labels(template.and_then(|t| t.get("metadata")));
        }
        self.pod_spec(template.and_then(|t| t.get("spec")), &g);
    }

    /// A pod spec's containers, and its init containers that run for the pod's life (native
    /// sidecars: `restartPolicy: Always`, Kubernetes 1.29+). An init container that runs to
    /// completion and an ephemeral (debugging) container are no launches of the pod.
    fn pod_spec(&mut self, spec: Option<&Node>, g: &Group) {
        let Some(spec) = spec else { return };
        for c in items(spec.get("containers")) {
            self.container(c, Some(spec), g);
        }
        for c in items(spec.get("initContainers")) {
            if c.get("restartPolicy").and_then(Node::as_str) == Some("Always") {
                self.container(c, Some(spec), g);
            } else {
                self.init_container(c);
            }
        }
        for c in items(spec.get("ephemeralContainers")) {
            self.ephemeral_container(c);
        }
    }

    /// One container: its argv, read with its env, and where it runs. A container already read
    /// (by the kind's reader, before the walk over the object's templates) is not read again.
    fn container(&mut self, c: &Node, pod: Option<&Node>, g: &Group) {
        if !self.read.insert(c.loc.start) {
            return;
        }
        let (env, pod_env) = (self.env(c), pod_env(c));
        let mut found = shell::container_launches(self.file, self.argv(c, &env), &env, &pod_env);
        if found.launches.is_empty() && found.findings.is_empty() {
            found = self.mounted_script(c, pod, &env).unwrap_or(found);
        }
        if found.launches.is_empty() && found.findings.is_empty() {
            // A container whose server reads its settings from env (NIM, DJL LMI): a platform
            // file that knows its image reads them.
            match crate::extract::by_platform::container(self.file, self.src, c) {
                Some((p, read)) => {
                    self.findings.extend(read.findings);
                    for l in read.launches {
                        let mut l = self.finish(l, c, pod, g);
                        if let Some(o) = l.object.as_mut() {
                            o.kind = p.title.clone();
                        }
                        self.out.push(l);
                    }
                    return;
                }
                None if !self.not_engine(c) => {
                    self.engine_not_read(c);
                    self.settings_in_env(c);
                }
                None => {}
            }
        }
        self.findings.extend(found.findings);
        // A launch read through an image that names no engine says so where the image is.
        let entrypoint = c
            .get("image")
            .is_some_and(|i| found.launches.iter().any(|l| l.command == i.loc));
        if let Some((read, image)) = self.by_flags(c, &env).filter(|_| entrypoint) {
            let name = image.as_str().unwrap_or_default();
            self.findings.push(read.finding(name, image.loc));
        }
        // Kubernetes refuses an image that is a `${NAME}` placeholder: the manifest is a
        // template a deploy script fills (`envsubst`), and its other `${NAME}` are not known.
        let image = c.get("image").and_then(Node::as_str).unwrap_or_default();
        let template = !crate::extract::by_platform::placeholders(image).is_empty();
        for launch in found.launches {
            let mut launch = self.finish(launch, c, pod, g);
            if template {
                let engine = launch.engine;
                crate::extract::option_map::unresolved_placeholders(engine, &mut launch.args);
            }
            // A file the container's own script writes is that; the others come from mounts.
            for f in mounts::launch_files(self.file, self.src, &launch) {
                if !launch.files.iter().any(|w| w.path == f.path) {
                    launch.files.push(f);
                }
            }
            self.out.push(launch);
        }
    }

    /// The launches of a script a ConfigMap of the input mounts into the container, which its
    /// command runs (`command: ["/scripts/entrypoint.sh"]`, `bash /scripts/run.sh`): read as the
    /// script it is, at its place in the manifest; none when no ConfigMap here holds it.
    fn mounted_script(
        &self,
        c: &Node,
        pod: Option<&Node>,
        env: &[(String, MappedWord)],
    ) -> Option<crate::extract::Extracted> {
        let at = c.get("command").or(c.get("args"))?.loc;
        let words: Vec<String> = self
            .argv(c, env)
            .map(|w| w.chars.as_str().to_string())
            .collect();
        let shell = |w: &str| matches!(w.rsplit('/').next(), Some("sh" | "bash"));
        let first = usize::from(words.first().is_some_and(|w| shell(w)));
        let path = words.get(first).filter(|w| !w.starts_with('-'))?;
        if !mounts::may_hold(c, pod, path) {
            return None;
        }
        match mounts::resolve(self.file, self.src, at, path) {
            mounts::Mounted::Found(script) => Some(shell::script(self.file, &script.text)),
            _ => None,
        }
    }

    /// The container's `command` (else its image's entrypoint) and `args`, with `$(VAR)`
    /// expanded from `env`. The args are read as the shell reader takes them: a padded list of
    /// 120,000 words is not also held as a list of its own.
    fn argv<'s>(
        &'s self,
        c: &'s Node,
        env: &'s [(String, MappedWord)],
    ) -> impl Iterator<Item = MappedWord> + 's {
        let mut command = self.words(c.get("command"), env);
        if command.is_empty() {
            command = self.image_entrypoint(c, env);
        }
        command
            .into_iter()
            .chain(self.word_iter(c.get("args"), env))
    }

    /// The container's `env` entries whose value is written out; each may use earlier ones. A
    /// later `valueFrom` entry of the same name hides the written value ([`pod_env`]).
    fn env(&self, c: &Node) -> Vec<(String, MappedWord)> {
        let mut env: Vec<(String, MappedWord)> = Vec::new();
        for e in items(c.get("env")) {
            let Some(name) = e.get("name").and_then(Node::as_str) else {
                continue;
            };
            let Some(value) = e.get("value") else {
                env.retain(|(n, _)| n != name);
                continue;
            };
            if let Some(w) = scalar::word(self.src, value) {
                let w = expand(w, &env);
                env.push((name.to_string(), w));
            }
        }
        env
    }

    /// The scalars of a `command` / `args` list with `$(VAR)` expanded. A string where a list
    /// belongs (`command: vllm serve m`, as hand-written manifests and chart values give it) is
    /// read as the words a shell splits it into.
    fn words(&self, list: Option<&Node>, env: &[(String, MappedWord)]) -> Vec<MappedWord> {
        self.word_iter(list, env).collect()
    }

    /// [`Cx::words`], one at a time.
    fn word_iter<'s>(
        &'s self,
        list: Option<&'s Node>,
        env: &'s [(String, MappedWord)],
    ) -> Box<dyn Iterator<Item = MappedWord> + 's> {
        if let Some(line) = list.filter(|n| matches!(n.value, Value::Str(_))) {
            let words = scalar::word(self.src, line)
                .map(|w| shell::split_words(self.file, &expand(w, env)))
                .unwrap_or_default();
            return Box::new(words.into_iter());
        }
        Box::new(
            items(list)
                .filter_map(|n| scalar::word(self.src, n))
                .map(|w| expand(w, env)),
        )
    }

    /// Without a `command`, the image's entrypoint runs: `vllm/vllm-openai` images start
    /// `vllm serve` (vllm docker/Dockerfile, target `vllm-openai`: `ENTRYPOINT ["vllm", "serve"]`),
    /// and an image named for an engine its server where `args` are engine options alone
    /// ([`crate::extract::images`]).
    fn image_entrypoint(&self, c: &Node, env: &[(String, MappedWord)]) -> Vec<MappedWord> {
        let Some(image) = c.get("image") else {
            return Vec::new();
        };
        let Some(name) = image.as_str() else {
            return Vec::new();
        };
        let first = self.word_iter(c.get("args"), env).next();
        let first = first.as_ref().map(|w| w.chars.as_str());
        let engine =
            images::entrypoint(name, first).or_else(|| Some(self.by_flags(c, env)?.0.engine));
        match engine {
            Some(engine) => synthetic_words(images::server_command(engine), image.loc),
            None => Vec::new(),
        }
    }

    /// Without a `command`, an image that names no engine (`${VLLM_IMAGE}`, a site's own build)
    /// is taken to run the engine whose flags its `args` are ([`images::by_flags`]); with the
    /// image's node.
    fn by_flags<'n>(
        &self,
        c: &'n Node,
        env: &[(String, MappedWord)],
    ) -> Option<(images::ByFlags, &'n Node)> {
        let image = c.get("image")?;
        if !self.words(c.get("command"), env).is_empty() {
            return None;
        }
        let args: Vec<MappedWord> = self
            .word_iter(c.get("args"), env)
            .take(images::FLAG_WORDS)
            .collect();
        let args: Vec<&str> = args.iter().map(|w| w.chars.as_str()).collect();
        Some((images::by_flags(image.as_str()?, &args)?, image))
    }

    /// Fills in what the object tells about the launch.
    fn finish(&self, mut l: Launch, c: &Node, pod: Option<&Node>, g: &Group) -> Launch {
        let (gpus, mig) = placement::gpus(c.get("resources"));
        let image = c
            .get("image")
            .and_then(|i| Some((i.as_str()?.to_string(), i.loc)));
        l.engine_version = image
            .as_ref()
            .and_then(|(i, loc)| Some((placement::image_version(i, l.engine.name())?, *loc)));
        let node = pod.and_then(placement::node_gpu);
        let per_node = node.as_ref().and_then(|n| n.per_node);
        // A pod that asks for no GPU count gets what its node type has.
        l.placement.gpus_per_pod = gpus.or(g.gpus).or(l.placement.gpus_per_pod).or(per_node);
        l.placement.gpus_per_node = per_node;
        l.placement.gpu = mig.or_else(|| node.map(|n| (n.name, n.loc)));
        l.placement.pods = Some(g.pods.unwrap_or(1));
        l.placement.image = image;
        let container = c
            .get("name")
            .and_then(Node::scalar_text)
            .or_else(|| g.service.clone());
        l.object = Some(self.object_ref(container));
        l.role_hint = g.role.clone();
        l.group = Some(self.group_id());
        l
    }

    fn object_ref(&self, container: Option<String>) -> ObjectRef {
        ObjectRef {
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            container,
        }
    }

    fn group_id(&self) -> String {
        // `join`, not `format!`, which cost more than the rest of `finish` per launch.
        match &self.namespace {
            Some(ns) => [self.kind.as_str(), ns, &self.name].join("/"),
            None => [self.kind.as_str(), &self.name].join("/"),
        }
    }
}

/// The names a container's env sets from elsewhere (`valueFrom`), unless a later written `value`
/// sets them again, and whether `envFrom` may set any other name.
fn pod_env(c: &Node) -> shell::PodEnv {
    let mut pod = shell::PodEnv {
        unknown: Vec::new(),
        any_name: items(c.get("envFrom")).next().is_some(),
    };
    for e in items(c.get("env")) {
        let Some(name) = e.get("name").and_then(Node::as_str) else {
            continue;
        };
        pod.unknown.retain(|(n, _)| n != name);
        if e.get("value").is_some() {
            continue;
        }
        let from = e.get("valueFrom").map_or_else(
            || "an entry without a value".to_string(),
            |v| match &v.value {
                Value::Map(entries) => entries
                    .iter()
                    .map(|(k, _)| k.as_str().unwrap_or("valueFrom").to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                _ => "valueFrom".to_string(),
            },
        );
        pod.unknown.push((name.to_string(), from));
    }
    pod
}

/// Kubernetes `$(VAR)` expansion (kubernetes `third_party/forked/golang/expansion`): a defined
/// variable is replaced by its value, `$$` is a literal `$`, an undefined reference stays as
/// written and is recorded as unresolved.
pub fn expand(w: MappedWord, env: &[(String, MappedWord)]) -> MappedWord {
    if !w.chars.as_str().contains('$') {
        return w;
    }
    let cs: Vec<(char, usize, usize)> = w.chars.iter().collect();
    let mut out = MappedWord {
        chars: Chars::default(),
        loc: w.loc,
        unresolved: Vec::new(),
        defaulted: false,
    };
    // Characters written so far: `Chars::len` counts, this does not.
    let mut len = 0;
    let mut i = 0;
    while i < cs.len() {
        let next = cs.get(i + 1).map(|c| c.0);
        if cs[i].0 == '$' && next == Some('$') {
            out.chars.push(('$', cs[i].1, cs[i + 1].2));
            len += 1;
            i += 2;
            continue;
        }
        let Some((name, end)) = reference(&cs, i) else {
            out.chars.push(cs[i]);
            len += 1;
            i += 1;
            continue;
        };
        let (start, stop) = (cs[i].1, cs[end].2);
        match env.iter().rev().find(|(n, _)| *n == name) {
            Some((_, value)) => {
                out.unresolved
                    .extend(value.unresolved.iter().map(|(at, n)| (len + at, n.clone())));
                for c in value.chars.as_str().chars() {
                    out.chars.push((c, start, stop));
                    len += 1;
                }
            }
            None => {
                out.unresolved.push((len, name));
                out.chars.extend(cs[i..=end].iter().copied());
                len += end + 1 - i;
            }
        }
        i = end + 1;
    }
    out
}

/// `$(NAME)` at `i`: the name and the index of the closing parenthesis.
fn reference(cs: &[(char, usize, usize)], i: usize) -> Option<(String, usize)> {
    if cs.get(i)?.0 != '$' || cs.get(i + 1)?.0 != '(' {
        return None;
    }
    let close = (i + 2..cs.len()).find(|&j| cs[j].0 == ')')?;
    let name: String = cs[i + 2..close].iter().map(|ch| ch.0).collect();
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    valid.then_some((name, close))
}

/// Words that are not written in the input (an image's entrypoint), all pointing at `at`.
pub fn synthetic_words(words: &[&str], at: Loc) -> Vec<MappedWord> {
    words
        .iter()
        .map(|w| MappedWord {
            chars: w.chars().map(|ch| (ch, at.start, at.end)).collect(),
            loc: at,
            unresolved: Vec::new(),
            defaulted: false,
        })
        .collect()
}

/// The entries of a mapping node.
fn entries(node: Option<&Node>) -> &[(Node, Node)] {
    match node.map(|n| &n.value) {
        Some(Value::Map(e)) => e,
        _ => &[],
    }
}

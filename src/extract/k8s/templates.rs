//! Pod templates wherever an object keeps them, read without knowing its kind: an Argo
//! Rollout's or a ReplicationController's `spec.template`, a Knative Service's, a CronJob's
//! `spec.jobTemplate.spec.template`, a CRD's own layout at any depth. A pod spec is a mapping with a
//! `containers` (or `initContainers`) list; an object embedded in another (`apiVersion` + `kind`)
//! is read as an object. What an object names but gives no launch for is said (INP006).

use super::{items, Cx, Group};
use crate::extract::{roles, unread};
use crate::finding::Finding;
use crate::source::Loc;
use crate::yaml::{Node, Value};

/// Top-level keys that hold no pod template: the object's identity and what the cluster reports.
const NOT_TEMPLATES: &[&str] = &["apiVersion", "kind", "metadata", "status"];

impl Cx<'_> {
    /// Reads every pod spec of the object that its kind's reader did not read.
    pub(super) fn templates(&mut self, doc: &Node) {
        let Value::Map(entries) = &doc.value else {
            return;
        };
        for (key, value) in entries {
            if key.as_str().is_some_and(|k| NOT_TEMPLATES.contains(&k)) {
                continue;
            }
            self.walk(value, &Group::default());
        }
    }

    /// One node under the object: a pod spec is read, an embedded object read as one, anything
    /// else searched. The role a key or a `name` says (`prefill:`, `- name: decode`) is kept for
    /// the templates below it; a template's own labels say it first.
    fn walk(&mut self, node: &Node, g: &Group) {
        if self.skipped.iter().any(|r| r.contains(&node.loc.start)) {
            return;
        }
        match &node.value {
            Value::Map(entries) => {
                if super::is_object(node) {
                    return self.nested(node);
                }
                if is_pod_spec(node) {
                    return self.pod_spec(Some(node), g);
                }
                let mut g = g.clone();
                if let Some(role) = roles::from_labels(node.get("metadata"))
                    .or_else(|| role_named(node.get("name")))
                    .or_else(|| role_named(node.get("role")))
                {
                    g.role = Some(role);
                }
                for (key, value) in entries {
                    let role = role_named(Some(key));
                    let g = Group {
                        role: role.or_else(|| g.role.clone()),
                        ..g.clone()
                    };
                    self.walk(value, &g);
                }
            }
            Value::Seq(list) => list.iter().for_each(|item| self.walk(item, g)),
            _ => {}
        }
    }

    /// An init container runs to completion before the pod's containers start. An engine server
    /// never completes, so one there is said (INP006) and not taken as the pod's launch: the
    /// pod would never start, and nothing checks the engine that holds its GPUs meanwhile.
    pub(super) fn init_container(&mut self, c: &Node) {
        if !self.read.insert(c.loc.start) {
            return;
        }
        let env = self.env(c);
        let found = crate::extract::shell::exec_launches(self.file, self.argv(c, &env), &env);
        let Some(launch) = found.launches.first() else {
            return;
        };
        let engine = self.named_engine(c).map_or("an engine", |(_, e)| e);
        self.unread_engine(
            launch.command,
            engine,
            "it runs in an init container, which must exit before the pod's containers start, \
             and an engine server does not exit",
            "run the engine as a container, or as a sidecar (`restartPolicy: Always` on the init \
             container), so kvlint reads it as the pod's launch",
        );
    }

    /// An ephemeral container is a debugging container added to a running pod (it has no
    /// resources, so no GPU): never a launch. One that names an engine is said (INP007).
    pub(super) fn ephemeral_container(&mut self, c: &Node) {
        if !self.read.insert(c.loc.start) || self.named_engine(c).is_none() {
            return;
        }
        self.findings.push(
            Finding::new("INP007", Some(c.loc))
                .var("what", "an ephemeral container")
                .var(
                    "reason",
                    "debugging containers get no resources and are never a pod's launch",
                )
                .var("help", "the pod's own containers are checked"),
        );
    }

    /// INP006 on a container that names an engine but gave neither a launch nor a finding.
    pub(super) fn engine_not_read(&mut self, c: &Node) {
        if let Some((at, engine)) = self.named_engine(c) {
            self.unread_engine(
                at,
                engine,
                "no launch could be read from this container's command",
                "give the launch as the container's command and args, or a script kvlint reads",
            );
        }
    }

    /// A container that gave no launch but whose env sets an engine's sizing options (a wrapper
    /// script passes `MAX_MODEL_LEN` on as `--max-model-len`): INP006 at its command, since the
    /// launch is in a script kvlint was not given, and INP004 at each such value set from
    /// elsewhere (a ConfigMap or Secret key), which no one can read here.
    pub(super) fn settings_in_env(&mut self, c: &Node) {
        if self
            .findings
            .iter()
            .any(|f| f.primary.is_some_and(|p| c.loc.range().contains(&p.start)))
        {
            return;
        }
        let sizing: Vec<&Node> = items(c.get("env"))
            .filter(|e| {
                e.get("name")
                    .and_then(Node::as_str)
                    .is_some_and(unread::sizing_env)
            })
            .collect();
        if sizing.is_empty() {
            return;
        }
        let names: Vec<&str> = sizing
            .iter()
            .filter_map(|e| e.get("name")?.as_str())
            .collect();
        // The script it runs is the last word of its command line.
        let words = items(c.get("command")).chain(items(c.get("args")));
        let at = words.last().map_or(c.loc, |n| n.loc);
        self.unread_engine(
            at,
            &format!("an engine's settings ({} in env)", names.join(", ")),
            "the container sets an engine's sizing options in its env, but its command runs no \
             engine kvlint can see (a script that is not in this input, or one that reads them)",
            "check the script it runs with these values (`kvlint check SCRIPT`), or give kvlint \
             the manifests that hold it (the ConfigMap it mounts)",
        );
        for e in sizing {
            let (Some(name), Some(from)) =
                (e.get("name").and_then(Node::as_str), e.get("valueFrom"))
            else {
                continue;
            };
            self.findings.push(
                Finding::new("INP004", Some(from.loc))
                    .var("flag", format!("{name} (env)"))
                    .var("vars", value_source(from))
                    .label("set when the pod starts, not in this input"),
            );
        }
    }

    /// A container whose image is an engine's mock or simulator (`aibrix/vllm-mock`,
    /// `llm-d-inference-sim`): it answers an engine's API without running one, so it holds no KV
    /// pool. Said (INP007), and no engine is looked for in it.
    pub(super) fn not_engine(&mut self, c: &Node) -> bool {
        let Some(image) = c.get("image").and_then(Node::as_str) else {
            return false;
        };
        let repo = image.rsplit('/').next().unwrap_or(image);
        let repo = repo
            .split([':', '@'])
            .next()
            .unwrap_or(repo)
            .to_ascii_lowercase();
        let imitates = ["mock", "-sim", "_sim", "simulator"]
            .iter()
            .any(|m| repo.contains(m));
        let engine = ["vllm", "sglang", "trtllm", "inference", "llm"]
            .iter()
            .any(|w| repo.contains(w));
        if !(imitates && engine) {
            return false;
        }
        let at = c.get("image").map_or(c.loc, |i| i.loc);
        self.findings.push(
            Finding::new("INP007", Some(at))
                .var("what", format!("a mock engine (image `{image}`)"))
                .var(
                    "reason",
                    "its image imitates an engine's API without running one, so it holds no KV pool",
                )
                .var("help", "the engine it stands in for is checked where it is deployed"),
        );
        true
    }

    /// INP006 on an object that names an engine but gave no launch and no finding saying why
    /// (the file-level scan says the same of a document; the webhook reads objects alone).
    pub(super) fn unread(&mut self, doc: &Node) {
        let said = |f: &Finding| f.rule != "INP007";
        if !self.out.is_empty() || self.findings.iter().any(said) {
            return;
        }
        // An object no reader knows whose mapping is an engine's options (an operator's custom
        // resource with `maxModelLen`, `gpuMemoryUtilization`): read by their keys. A ConfigMap's
        // or Secret's data is read by the pods that use it, never as a launch of its own.
        if !matches!(self.kind.as_str(), "ConfigMap" | "Secret") && !fixed_schema(doc) {
            let shaped = crate::extract::option_map::by_shape(self.file, self.src, doc);
            if !shaped.launches.is_empty() {
                self.out.extend(shaped.launches);
                return;
            }
        }
        let base = doc.loc.start;
        let Some(text) = self.src.text.get(doc.loc.range()) else {
            return;
        };
        // What the INP007 findings here said already (an ephemeral container's engine).
        let said: Vec<_> = self
            .findings
            .iter()
            .filter_map(|f| f.primary.map(|p| p.range()))
            .collect();
        let found = unread::engines_in(text)
            .into_iter()
            .find(|(at, _)| !said.iter().any(|s| s.contains(&(base + at.start))));
        if let Some((at, engine)) = found {
            let at = Loc::new(self.file, base + at.start..base + at.end);
            self.unread_engine(
                at,
                engine,
                "no launch was found in this object",
                "give the launch in a form kvlint reads: a pod template's container command/args, \
                 a script, or an engine config file; or check the command its controller renders",
            );
        }
    }

    fn unread_engine(&mut self, at: Loc, engine: &str, reason: &str, help: &str) {
        self.findings.push(
            Finding::new("INP006", Some(at))
                .var("engine", engine)
                .var("reason", reason)
                .var("help", help),
        );
    }

    /// The engine the container's command and args name, in whatever YAML style they are
    /// written (a block list puts `vllm` and `serve` on lines of their own), and where.
    fn named_engine(&self, c: &Node) -> Option<(Loc, &'static str)> {
        let env = self.env(c);
        // The words joined by spaces, and each character's place in the text and in the file.
        let mut text = String::new();
        let mut at: Vec<(usize, usize, usize)> = Vec::new();
        for w in self.argv(c, &env) {
            if !text.is_empty() {
                text.push(' ');
            }
            for (ch, start, end) in w.chars.iter() {
                at.push((text.len(), start, end));
                text.push(ch);
            }
        }
        let (range, engine) = unread::engines_in(&text).into_iter().next()?;
        let first = at.iter().find(|(i, ..)| *i >= range.start)?;
        let last = at.iter().rev().find(|(i, ..)| *i < range.end)?;
        Some((Loc::new(self.file, first.1..last.2.max(first.1)), engine))
    }
}

/// Where an env value comes from: `ConfigMap runtime, key MAX_MODEL_LEN`.
fn value_source(from: &Node) -> String {
    let refs = [("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")];
    refs.iter()
        .find_map(|(key, what)| {
            let r = from.get(key)?;
            let name = r
                .get("name")
                .and_then(Node::scalar_text)
                .unwrap_or_default();
            let k = r.get("key").and_then(Node::scalar_text).unwrap_or_default();
            Some(format!("{what} {name}, key {k}"))
        })
        .unwrap_or_else(|| "valueFrom".to_string())
}

/// A mapping with a list of containers: a pod spec (`template.spec`, a CRD's own pod spec).
fn is_pod_spec(node: &Node) -> bool {
    ["containers", "initContainers"].iter().any(|key| {
        items(node.get(key)).any(|c| c.get("image").is_some() || c.get("name").is_some())
    })
}

/// `prefill` or `decode` when a key or scalar names exactly one of them.
fn role_named(node: Option<&Node>) -> Option<String> {
    roles::named(node?.as_str()?).map(str::to_string)
}

/// Built-in Kubernetes objects whose schema has no place for a workload's settings (a Service's
/// ports and selector, a Role's rules), by API group and kind: no option map is searched in
/// them (a search of every Service was a twentieth of a 10,000-object render). A custom
/// resource of the same kind in another group is still searched.
const FIXED_SCHEMAS: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "Service",
            "ServiceAccount",
            "PersistentVolumeClaim",
            "PersistentVolume",
            "Namespace",
            "Endpoints",
            "ResourceQuota",
            "LimitRange",
        ],
    ),
    (
        "networking.k8s.io",
        &["Ingress", "IngressClass", "NetworkPolicy"],
    ),
    (
        "rbac.authorization.k8s.io",
        &["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"],
    ),
    ("policy", &["PodDisruptionBudget"]),
    ("autoscaling", &["HorizontalPodAutoscaler"]),
    ("storage.k8s.io", &["StorageClass"]),
    ("scheduling.k8s.io", &["PriorityClass"]),
    ("discovery.k8s.io", &["EndpointSlice"]),
];

fn fixed_schema(doc: &Node) -> bool {
    let text = |k: &str| doc.get(k).and_then(Node::as_str).unwrap_or_default();
    let group = text("apiVersion").rsplit_once('/').map_or("", |(g, _)| g);
    let kind = text("kind");
    FIXED_SCHEMAS
        .iter()
        .any(|(g, kinds)| *g == group && kinds.contains(&kind))
}

#[cfg(test)]
mod tests {
    use super::fixed_schema;

    fn doc(text: &str) -> crate::yaml::Node {
        let mut sources = crate::source::Sources::default();
        let file = sources.add("object.yaml", text);
        crate::yaml::parse_document(file, sources.get(file)).unwrap()
    }

    #[test]
    fn only_built_in_kinds_of_their_own_group_have_a_fixed_schema() {
        assert!(fixed_schema(&doc("apiVersion: v1\nkind: Service\n")));
        assert!(fixed_schema(&doc(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n"
        )));
        // Knative's Service holds a pod template; a CRD may reuse any kind name.
        assert!(!fixed_schema(&doc(
            "apiVersion: serving.knative.dev/v1\nkind: Service\n"
        )));
        assert!(!fixed_schema(&doc(
            "apiVersion: example.com/v1\nkind: Role\n"
        )));
        assert!(!fixed_schema(&doc(
            "apiVersion: apps/v1\nkind: Deployment\n"
        )));
    }
}

//! Serving resources whose engine launch is not a pod template's argv, but is built by their
//! controller from fields: KAITO `Workspace` (+ its ConfigMap), and the objects a platform file
//! reads (`platforms/*.toml`: KubeAI `Model`, KubeRay `RayService`'s Ray Serve config, the pod
//! templates of RoleBasedGroup, StormService, DisaggregatedSet, llmaz `Service`); and those
//! wrapping pod templates in their own layout: AIBrix `RayClusterFleet` / KubeRay `RayCluster`,
//! llmaz `BackendRuntime`, and OpenShift `Template` (each of its `objects` is read as an object).

use super::placement::{count_of, items};
use super::{instances, mounts, Cx, Group};
use crate::extract::by_platform;
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch};
use crate::source::{Loc, SourceFile};
use crate::yaml::{self, Node};

impl Cx<'_> {
    /// Reads the resources this file knows; `false` for any other kind.
    pub(super) fn serving(&mut self, doc: &Node) -> bool {
        let spec = doc.get("spec");
        let kind = self.kind.clone();
        match (kind.as_str(), spec) {
            ("Workspace", _) if doc.get("inference").is_some() => self.kaito(doc),
            ("RayService", Some(s)) => {
                if let Some(c) = s.get("rayClusterConfig") {
                    self.ray_started(c);
                }
            }
            ("RayClusterFleet", Some(s)) => {
                self.ray_cluster(s.get("template").and_then(|t| t.get("spec")))
            }
            ("RayCluster", Some(s)) => self.ray_cluster(Some(s)),
            ("BackendRuntime", Some(s)) if s.get("command").is_some() => self.backend_runtime(s),
            _ => return false,
        }
        true
    }

    /// KAITO `Workspace`: `inference.config` names a ConfigMap whose `inference_config.yaml` holds a
    /// `vllm:` map of vLLM flags (kaito-project/kaito presets/workspace/inference/vllm); the model is
    /// the preset's; GPUs come from `resource.instanceType`.
    fn kaito(&mut self, doc: &Node) {
        let inference = doc.get("inference");
        let preset = inference
            .and_then(|i| i.get("preset"))
            .and_then(|p| p.get("name"));
        let Some(preset) = preset else {
            let at = inference.map_or(doc.loc, |i| i.loc);
            self.not_read(at, "KAITO Workspace", "it names no preset model");
            return;
        };
        let mut args = vec![
            Arg::new("--model", preset.loc),
            Arg::new(preset.scalar_text().unwrap_or_default(), preset.loc),
        ];
        let config = inference.and_then(|i| i.get("config"));
        if let Some(cfg) = config {
            let name = cfg.as_str().unwrap_or_default();
            let root = match self.configmap_yaml(name, "inference_config.yaml") {
                Ok(root) => root,
                Err(why) => return self.not_read(cfg.loc, "KAITO inference config", &why),
            };
            if let Some(vllm) = root.get("vllm") {
                match crate::engine::config_file_args(Engine::Vllm, vllm) {
                    Ok(a) => args.extend(a),
                    Err(why) => return self.not_read(cfg.loc, "KAITO vLLM config", &why),
                }
            }
        }
        let mut launch = Launch::new(Engine::Vllm, preset.loc, args);
        if let Some(it) = doc.get("resource").and_then(|r| r.get("instanceType")) {
            if let Some((gpu, n)) = it.as_str().and_then(instances::gpus) {
                launch.placement.gpu = Some((gpu.to_string(), it.loc));
                launch.placement.gpus_per_pod = Some(n);
            }
        }
        self.push(launch, None);
    }

    /// Objects a platform file reads (`platforms/*.toml`): by kind, or a document held in one of
    /// the object's strings (KubeRay `RayService` `spec.serveConfigV2`, a Ray Serve config).
    /// `false` when no platform knows the kind, or none of those that read it directly
    /// recognizes this object (a KServe InferenceService of another model format).
    pub(super) fn platforms(&mut self, doc: &Node) -> bool {
        let registry = crate::platform::registry();
        if !registry.knows_kind(&self.kind) {
            return false;
        }
        let kind = self.kind.clone();
        let direct = registry.for_kind(&kind);
        let mut read = registry.embedded_in(&kind).next().is_some();
        if let Some(p) = by_platform::find(direct, self.src, doc) {
            let out = by_platform::read(p, self.file, self.src, doc, None);
            self.take(out);
            read = true;
            self.pod_sites(p, doc);
        }
        for p in registry.embedded_in(&kind) {
            let Some(held) = p.recognize.embedded_in.as_ref() else {
                continue;
            };
            let Some(key) = key_at(doc, &held.path) else {
                continue;
            };
            let inner = match self.block_yaml(key.loc) {
                Ok(inner) => inner,
                Err(why) => {
                    self.not_read(key.loc, &p.title, &why);
                    continue;
                }
            };
            if by_platform::recognizes(p, self.src, &inner) {
                let out = by_platform::read(p, self.file, self.src, &inner, Some(doc));
                self.take(out);
            }
        }
        read
    }

    /// Launches a platform read, as this object's.
    fn take(&mut self, out: crate::extract::Extracted) {
        self.findings.extend(out.findings);
        for mut launch in out.launches {
            let name = launch
                .object
                .take()
                .map(|o| o.name)
                .filter(|n| !n.is_empty());
            self.push(launch, name);
        }
    }

    /// A RayCluster spec: the head runs the engine command; every worker host is a pod of it.
    fn ray_cluster(&mut self, spec: Option<&Node>) {
        let Some(spec) = spec else { return };
        self.ray_started(spec);
        let workers: u32 = items(spec.get("workerGroupSpecs"))
            .map(|w| {
                let replicas = w.get("replicas").and_then(count_of).unwrap_or(1);
                replicas * w.get("numOfHosts").and_then(count_of).unwrap_or(1)
            })
            .sum();
        let g = Group {
            pods: Some(1 + workers),
            ..Group::default()
        };
        let head = spec.get("headGroupSpec").and_then(|h| h.get("template"));
        self.pod_template(head, &g);
    }

    /// KubeRay runs `ray start` in a group's Ray container (the first) when it has no `command`
    /// (ray-project/kuberay ray-operator/controllers/ray/common/pod.go `BuildPod`: command
    /// `/bin/bash -lc --`, args `ulimit ...; $KUBERAY_GEN_RAY_START_CMD`), whatever its image's
    /// entrypoint: no launch there.
    fn ray_started(&mut self, spec: &Node) {
        let groups = spec
            .get("headGroupSpec")
            .into_iter()
            .chain(items(spec.get("workerGroupSpecs")));
        for group in groups {
            let pod = group.get("template").and_then(|t| t.get("spec"));
            if let Some(ray) = items(pod.and_then(|p| p.get("containers"))).next() {
                if ray.get("command").is_none() {
                    self.read.insert(ray.loc.start);
                }
            }
        }
    }

    /// llmaz `BackendRuntime`: `spec.command` + each `recommendedConfigs[].args`, one launch per
    /// config. Template placeholders (`{{ .ModelPath }}`) are values kvlint cannot see.
    fn backend_runtime(&mut self, spec: &Node) {
        let env = Vec::new();
        let command = self.words(spec.get("command"), &env);
        for cfg in items(spec.get("recommendedConfigs")) {
            let mut argv = command.clone();
            argv.extend(self.words(cfg.get("args"), &env));
            let found = crate::extract::shell::exec_launches(self.file, argv, &env);
            self.findings.extend(found.findings);
            for mut launch in found.launches {
                for a in &mut launch.args {
                    if a.text.contains("{{") {
                        a.unresolved.push(a.text.clone());
                    }
                }
                let name = cfg.get("name").and_then(Node::scalar_text);
                self.push(launch, name);
            }
        }
    }

    /// Fills in the object's identity and keeps the launch.
    fn push(&mut self, mut launch: Launch, container: Option<String>) {
        launch.object = Some(self.object_ref(container));
        launch.group = Some(self.group_id());
        launch.placement.pods = launch.placement.pods.or(Some(1));
        self.out.push(launch);
    }

    /// INP006 on `at`: the object names an engine that could not be turned into a launch.
    fn not_read(&mut self, at: Loc, what: &str, reason: &str) {
        self.findings.push(
            Finding::new("INP006", Some(at))
                .var("engine", what)
                .var("reason", reason)
                .var(
                    "help",
                    "check the engine command the controller renders for this object",
                ),
        );
    }

    /// The YAML held in the block scalar whose key is at `key`, with spans in this file.
    fn block_yaml(&self, key: Loc) -> Result<Node, String> {
        let text = mounts::block_of(&self.src.text, key);
        let src = SourceFile::new(self.src.name.clone(), text);
        yaml::parse_document(self.file, &src).map_err(|e| e.message)
    }

    /// The YAML under `key` of the ConfigMap `name` in this file.
    fn configmap_yaml(&self, name: &str, key: &str) -> Result<Node, String> {
        let at = mounts::configmap_key(self.file, self.src, name, key)?;
        self.block_yaml(at)
    }
}

/// The key node of the entry at `path` (`spec.serveConfigV2`).
fn key_at<'n>(doc: &'n Node, path: &str) -> Option<&'n Node> {
    let (parent, last) = path.rsplit_once('.').unwrap_or(("", path));
    let parent = crate::platform::path::Path::parse(parent)
        .ok()?
        .first(doc, doc)?;
    super::entries(Some(parent))
        .iter()
        .find(|(k, _)| k.as_str() == Some(last))
        .map(|(k, _)| k)
}

#[cfg(test)]
mod tests {
    use crate::extract::{extract, Extracted};
    use crate::source::Sources;

    fn read(text: &str) -> (Sources, Extracted) {
        let mut s = Sources::default();
        let f = s.add("m.yaml", text);
        let out = extract(f, &s);
        (s, out)
    }

    #[test]
    fn kubeai_engines_other_than_vllm_are_said_to_be_unread() {
        let (_, out) = read(
            "apiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: m}\nspec:\n  url: ollama://qwen2:0.5b\n  engine: OLlama\n",
        );
        assert!(out.launches.is_empty());
        assert_eq!(out.findings.len(), 1);
        assert_eq!(out.findings[0].rule, "INP006");
        assert_eq!(out.findings[0].get("engine"), Some("KubeAI Model"));
        assert!(out.findings[0]
            .get("reason")
            .unwrap()
            .ends_with("not OLlama"));
    }
}

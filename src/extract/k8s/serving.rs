//! Kubernetes objects read as a platform file says (`platforms/*.toml`): by kind (KubeAI `Model`,
//! KAITO `Workspace`, llmaz `BackendRuntime`, LeaderWorkerSet, KubeRay clusters, the pod templates
//! and containers of RoleBasedGroup, StormService, DisaggregatedSet, Dynamo, OME,
//! LLMInferenceService), or as a document held in one of the object's strings (KubeRay
//! `RayService` `spec.serveConfigV2`).

use super::{mounts, Cx};
use crate::extract::by_platform;
use crate::finding::Finding;
use crate::launch::Launch;
use crate::source::{Loc, SourceFile};
use crate::yaml::{self, Node};

impl Cx<'_> {
    /// Objects a platform file reads (`platforms/*.toml`): by kind, or a document held in one of
    /// the object's strings (KubeRay `RayService` `spec.serveConfigV2`, a Ray Serve config). An
    /// object no platform recognizes (a KServe InferenceService of another model format) is left
    /// to the walk over its pod templates.
    pub(super) fn platforms(&mut self, doc: &Node) {
        let registry = crate::platform::registry();
        if !registry.knows_kind(&self.kind) {
            return;
        }
        let kind = self.kind.clone();
        let direct = registry.for_kind(&kind);
        if let Some(p) = by_platform::find(direct, self.src, doc) {
            let out = by_platform::read_said(p, self.file, self.src, doc, None);
            self.take(out);
            // The containers those launches run in are read.
            for site in &p.launches {
                let Ok(at) = crate::platform::path::Path::parse(&site.at) else {
                    continue;
                };
                for node in at.all(doc, doc) {
                    let c = crate::platform::path::first_of(&site.runs_in, doc, node);
                    self.read.extend(c.map(|c| c.loc.start));
                }
            }
            self.pod_sites(p, doc);
        }
        let mut unread = Vec::new();
        for p in registry.embedded_in(&kind) {
            let Some(held) = p.recognize.embedded_in.as_ref() else {
                continue;
            };
            let Some(key) = key_at(doc, &held.path) else {
                continue;
            };
            // Text that is no YAML is said once, whichever platforms it could have been.
            if unread.contains(&key.loc) {
                continue;
            }
            let inner = match self.block_yaml(key.loc) {
                Ok(inner) => inner,
                // Text that is no YAML (a template with `${VAR}` placeholders) is the platform's
                // only where it names an engine: a Ray Serve config of other apps is not.
                Err(why) => {
                    if names_engine(&mounts::block_of(&self.src.text, key.loc)) {
                        self.not_read(key.loc, &p.title, &why);
                    }
                    unread.push(key.loc);
                    continue;
                }
            };
            if by_platform::recognizes(p, self.src, &inner) {
                let out = by_platform::read_said(p, self.file, self.src, &inner, Some(doc));
                self.take(out);
            }
        }
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
}

/// Whether text names an engine: an entrypoint, or an LLM serving config's own keys.
fn names_engine(text: &str) -> bool {
    let llm_keys = [
        "llm_configs",
        "engine_kwargs",
        "vllm",
        "sglang",
        "tensorrt_llm",
    ];
    !crate::extract::unread::engines_in(text).is_empty()
        || llm_keys.iter().any(|k| text.contains(k))
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

    /// A serve config with unrendered `${VAR}` placeholders is no YAML: one of other apps is left
    /// alone, one that runs an LLM is said to be unread.
    #[test]
    fn templated_serve_configs_are_unread_only_where_they_name_an_engine() {
        let object = |app: &str| {
            format!(
                "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {{name: s}}\nspec:\n  serveConfigV2: |\n    applications:\n      - name: a\n        import_path: {app}\n        deployments:\n          - name: D\n            ray_actor_options: {{num_gpus: 0, num_cpus: ${{CPUS}}}}\n"
            )
        };
        let (_, out) = read(&object("fruit.deployment_graph"));
        assert!(out.launches.is_empty());
        assert!(out.findings.is_empty(), "{:?}", out.findings);
        let (_, out) = read(&object(
            "ray.serve.llm:build_openai_app\n        args: {llm_configs: []}",
        ));
        assert_eq!(out.findings.len(), 1);
        assert_eq!(out.findings[0].rule, "INP006");
    }
}

//! Serving resources read as a platform file says (`platforms/*.toml`: KubeAI `Model`, KAITO
//! `Workspace`, KubeRay `RayService`'s Ray Serve config, llmaz `BackendRuntime`, the pod templates
//! and containers of RoleBasedGroup, StormService, DisaggregatedSet, Dynamo, OME,
//! LLMInferenceService); and KubeRay's clusters (AIBrix `RayClusterFleet` / KubeRay `RayCluster`,
//! a RayService's `rayClusterConfig`), whose Ray containers KubeRay starts itself.

use super::placement::{count_of, items};
use super::{mounts, Cx, Group};
use crate::extract::by_platform;
use crate::finding::Finding;
use crate::launch::Launch;
use crate::source::{Loc, SourceFile};
use crate::yaml::{self, Node};

impl Cx<'_> {
    /// Reads the resources this file knows; `false` for any other kind.
    pub(super) fn serving(&mut self, doc: &Node) -> bool {
        let spec = doc.get("spec");
        let kind = self.kind.clone();
        match (kind.as_str(), spec) {
            ("RayService", Some(s)) => {
                if let Some(c) = s.get("rayClusterConfig") {
                    self.ray_started(c);
                }
            }
            ("RayClusterFleet", Some(s)) => {
                self.ray_cluster(s.get("template").and_then(|t| t.get("spec")))
            }
            ("RayCluster", Some(s)) => self.ray_cluster(Some(s)),
            _ => return false,
        }
        true
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

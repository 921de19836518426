//! What a pod spec says about hardware: GPUs per container, the GPU type its node selectors pin,
//! and the engine version its image tag names.

use crate::source::Loc;
use crate::yaml::{Node, Value};

/// Resource names that count whole GPUs.
const GPU_RESOURCES: &[&str] = &["nvidia.com/gpu", "amd.com/gpu"];

/// GPUs a container asks for: `limits` (else `requests`) of a GPU resource, an int or a string.
/// A MIG slice (`nvidia.com/mig-3g.40gb`) counts too and names the device, because the engine
/// sees the slice, not the whole GPU the node labels describe.
pub fn gpus(resources: Option<&Node>) -> (Option<u32>, Option<(String, Loc)>) {
    let Some(res) = resources else {
        return (None, None);
    };
    for side in ["limits", "requests"] {
        let Some(Value::Map(entries)) = res.get(side).map(|n| &n.value) else {
            continue;
        };
        for (key, value) in entries {
            let Some(name) = key.as_str() else { continue };
            let count = count_of(value);
            if GPU_RESOURCES.contains(&name) || name == "gpu" {
                return (count, None);
            }
            if let Some(slice) = name.strip_prefix("nvidia.com/mig-") {
                return (count, Some((format!("MIG-{slice}"), key.loc)));
            }
        }
    }
    (None, None)
}

/// `4`, `"4"`.
pub fn count_of(node: &Node) -> Option<u32> {
    match &node.value {
        Value::Int(i) => u32::try_from(*i).ok(),
        Value::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Node label keys that say something about the GPU.
#[derive(Clone, Copy, PartialEq)]
enum Key {
    /// A GPU model: GPU Feature Discovery's product, GKE's accelerator, Karpenter's GPU name.
    Model,
    /// A VM size or instance type, which may or may not have GPUs.
    Instance,
    /// An AWS instance family (`g4dn`), whose sizes differ in GPU count, not in GPU.
    Family,
    /// GPUs per node.
    Count,
    /// MiB per GPU.
    Memory,
}

fn key_kind(key: &str) -> Option<Key> {
    Some(match key {
        "nvidia.com/gpu.product"
        | "cloud.google.com/gke-accelerator"
        | "karpenter.k8s.aws/instance-gpu-name"
        | "eks.amazonaws.com/instance-gpu-name"
        | "karpenter.azure.com/sku-gpu-name"
        // CoreWeave: `A100_PCIE_80GB`, `RTX_A6000` (coreweave/kubernetes-cloud node-types.md),
        // `H100`, `GH200_480GB` on CKS nodes.
        | "gpu.nvidia.com/class"
        | "gpu.nvidia.com/model"
        // AMD's node labeller (ROCm/k8s-device-plugin cmd/k8s-node-labeller, `-product-name`):
        // the product name with '_' for spaces, `AMD_Instinct_MI300X_OAM`.
        | "amd.com/gpu.product-name"
        | "beta.amd.com/gpu.product-name" => Key::Model,
        "node.kubernetes.io/instance-type" | "beta.kubernetes.io/instance-type" => Key::Instance,
        "karpenter.k8s.aws/instance-family" | "eks.amazonaws.com/instance-family" => Key::Family,
        "nvidia.com/gpu.count"
        | "karpenter.k8s.aws/instance-gpu-count"
        | "eks.amazonaws.com/instance-gpu-count"
        | "karpenter.azure.com/sku-gpu-count" => Key::Count,
        "nvidia.com/gpu.memory"
        | "karpenter.k8s.aws/instance-gpu-memory"
        | "eks.amazonaws.com/instance-gpu-memory" => Key::Memory,
        _ => return None,
    })
}

/// What a GPU label's value says.
enum GpuLabel {
    /// The GPU model as the catalog may name it, and the GPUs per node when the label tells.
    Model(String, Option<u32>),
    Count(u32),
    Memory(u64),
}

/// What the value of a GPU label says; `None` for a value that says nothing (a CPU instance
/// type, a count that is not a number).
fn gpu_label(key: &str, value: &str) -> Option<GpuLabel> {
    let value = value.trim();
    Some(match key_kind(key)? {
        // `-SHARED` is appended by GPU Feature Discovery when time-slicing renames the product.
        Key::Model => GpuLabel::Model(value.trim_end_matches("-SHARED").to_string(), None),
        // AKS `Standard_ND96isr_H100_v5`, EKS `p5.48xlarge`, GCP `a3-highgpu-8g`.
        Key::Instance => {
            let (name, count) = super::instances::node_gpu(value)?;
            GpuLabel::Model(name, count)
        }
        Key::Family => GpuLabel::Model(super::instances::family_gpu(value)?.to_string(), None),
        Key::Count => GpuLabel::Count(value.parse().ok()?),
        Key::Memory => GpuLabel::Memory(value.parse().ok()?),
    })
}

/// The GPU a pod's nodes have, as its node constraints pin it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeGpu {
    /// As the catalog may name it; a name it lacks is reported, never replaced.
    pub name: String,
    pub loc: Loc,
    /// GPUs each such node has, when a label or instance type tells.
    pub per_node: Option<u32>,
}

/// What one set of ANDed requirements (the `nodeSelector` with one affinity term) admits.
#[derive(Default, Clone)]
struct Admitted {
    /// The models an `In` (or a selector's equality) allows; one set per requirement, ANDed.
    models: Vec<Vec<NodeGpu>>,
    count: Option<u32>,
    memory_mib: Option<u64>,
    /// Where a memory label is written: memory alone does not say which GPU.
    memory_at: Option<Loc>,
    /// Where a requirement on a GPU label admits nodes whatever their GPU (NotIn, Exists, …).
    open: Option<Loc>,
}

impl Admitted {
    fn add(&mut self, key: &str, values: &[(&str, Loc)]) {
        let labels: Vec<(GpuLabel, Loc)> = values
            .iter()
            .filter_map(|(v, loc)| Some((gpu_label(key, v)?, *loc)))
            .collect();
        let mut models = Vec::new();
        for (label, loc) in labels {
            match label {
                GpuLabel::Model(name, per_node) => models.push(NodeGpu {
                    name,
                    loc,
                    per_node,
                }),
                // Of several counts or sizes a node may have, the smallest.
                GpuLabel::Count(n) => self.count = Some(self.count.map_or(n, |c| c.min(n))),
                GpuLabel::Memory(m) => {
                    self.memory_mib = Some(self.memory_mib.map_or(m, |c| c.min(m)));
                    self.memory_at = self.memory_at.or(Some(loc));
                }
            }
        }
        if !models.is_empty() {
            self.models.push(models);
        }
    }

    /// The least-memory GPU these requirements admit; `Err` where they admit any GPU.
    fn worst(self) -> Result<Option<NodeGpu>, Loc> {
        // ANDed sets: the models in every set; when the sets share none (no node matches), the
        // union, so nothing larger than what is written is assumed.
        let mut sets = self.models.into_iter();
        let Some(first) = sets.next() else {
            return match self.open.or(self.memory_at) {
                Some(loc) => Err(loc),
                None => Ok(None),
            };
        };
        let rest: Vec<Vec<NodeGpu>> = sets.collect();
        // A model both sets name keeps a count either gives (a product label and an instance
        // type on one selector).
        let both: Vec<NodeGpu> = first
            .iter()
            .filter(|g| rest.iter().all(|s| s.iter().any(|o| same_gpu(g, o))))
            .map(|g| NodeGpu {
                per_node: g.per_node.or_else(|| {
                    let mut others = rest.iter().flatten().filter(|o| same_gpu(g, o));
                    others.find_map(|o| o.per_node)
                }),
                ..g.clone()
            })
            .collect();
        let pool = match both.is_empty() {
            true => first
                .into_iter()
                .chain(rest.into_iter().flatten())
                .collect(),
            false => both,
        };
        let memory = self.memory_mib;
        let count = self.count;
        Ok(worst_of(pool.into_iter().map(|mut g| {
            if let Some(m) = memory {
                g.name = sized(&g.name, m);
            }
            g.per_node = g.per_node.or(count);
            g
        })))
    }
}

fn same_gpu(a: &NodeGpu, b: &NodeGpu) -> bool {
    match (crate::gpu::lookup(&a.name), crate::gpu::lookup(&b.name)) {
        (Some(x), Some(y)) => x.name == y.name,
        _ => a.name.eq_ignore_ascii_case(&b.name),
    }
}

/// A short name (`a100`, Karpenter's) made exact by the memory label beside it: `a100` with
/// 81920 MiB is the catalog's `a100-80GB`; kept as written when no such entry exists.
fn sized(name: &str, memory_mib: u64) -> String {
    let exact = format!("{name}-{}GB", memory_mib.div_ceil(1024));
    match crate::gpu::lookup(&exact) {
        Some(_) => exact,
        None => name.to_string(),
    }
}

/// `(key, operator, values)` of each requirement of a node selector term.
fn requirements(term: &Node) -> impl Iterator<Item = (&str, &str, Vec<(&str, Loc)>)> {
    let exprs = items(term.get("matchExpressions")).chain(items(term.get("matchFields")));
    exprs.filter_map(|e| {
        let values = items(e.get("values"))
            .filter_map(|v| Some((v.as_str()?, v.loc)))
            .collect();
        Some((
            e.get("key")?.as_str()?,
            e.get("operator")?.as_str()?,
            values,
        ))
    })
}

/// The GPU a pod spec pins through `nodeSelector` and required node affinity. The affinity's
/// `nodeSelectorTerms` are ORed (each ANDed with the `nodeSelector`): the pod is planned on the
/// least-memory GPU any term admits. A term that admits nodes of any GPU (no GPU requirement,
/// `NotIn`, `Exists`, `DoesNotExist`, `Gt`/`Lt`, only `matchFields`) makes the GPU unknown once
/// any requirement names one: it is returned under a name the catalog lacks, so INP003 reports
/// it and no default stands in.
pub fn node_gpu(pod: &Node) -> Option<NodeGpu> {
    let mut selector = Admitted::default();
    let mut names_gpu = false;
    if let Some(Value::Map(entries)) = pod.get("nodeSelector").map(|n| &n.value) {
        for (k, v) in entries {
            if let (Some(key), Some(val)) = (k.as_str(), v.as_str()) {
                let values = [(val, v.loc)];
                names_gpu |= names_gpu_key(key, &values);
                selector.add(key, &values);
            }
        }
    }
    let terms: Vec<&Node> = affinity_terms(pod).collect();
    let mut outcomes = Vec::new();
    for term in &terms {
        let mut admitted = selector.clone();
        for (key, op, values) in requirements(term) {
            let on_gpu = names_gpu_key(key, &values);
            match op {
                "In" => {
                    names_gpu |= on_gpu;
                    admitted.add(key, &values);
                }
                // NotIn and DoesNotExist admit nodes without the label; Exists, Gt and Lt any
                // value (`nvidia.com/gpu.memory Gt 40000`): none tells which GPU the node has.
                _ if on_gpu || matches!(key_kind(key), Some(Key::Model | Key::Memory)) => {
                    names_gpu = true;
                    admitted.open = admitted.open.or(Some(term.loc));
                }
                _ => {}
            }
        }
        if admitted.models.is_empty() {
            admitted.open = admitted.open.or(Some(term.loc));
        }
        outcomes.push(admitted.worst());
    }
    if !names_gpu {
        return None;
    }
    if terms.is_empty() {
        return selector.worst().unwrap_or_else(|loc| Some(any_gpu(loc)));
    }
    let mut admitted = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(g) => admitted.extend(g),
            Err(loc) => return Some(any_gpu(loc)),
        }
    }
    worst_of(admitted.into_iter())
}

/// A requirement that bears on the GPU's memory: a model label, an instance type that has GPUs,
/// or a memory label (a count alone says nothing about memory).
fn names_gpu_key(key: &str, values: &[(&str, Loc)]) -> bool {
    values.iter().any(|(v, _)| {
        matches!(
            gpu_label(key, v),
            Some(GpuLabel::Model(..) | GpuLabel::Memory(_))
        )
    })
}

/// The name of a GPU no requirement pins: not in the catalog, so INP003 reports it.
fn any_gpu(loc: Loc) -> NodeGpu {
    NodeGpu {
        name: crate::gpu::source::ANY_GPU.to_string(),
        loc,
        per_node: None,
    }
}

/// [`node_gpu`]'s model and where it is written.
pub fn gpu_type(pod: &Node) -> Option<(String, Loc)> {
    node_gpu(pod).map(|g| (g.name, g.loc))
}

/// Of the GPUs a pod may be scheduled on, the one with the least memory; one the catalog does
/// not know wins outright, so it is reported rather than assumed larger. Of equal GPUs, the
/// node with the fewest.
fn worst_of(candidates: impl Iterator<Item = NodeGpu>) -> Option<NodeGpu> {
    let memory = |name: &str| crate::gpu::lookup(name).map(|g| g.cuda_total_bytes);
    candidates.min_by_key(|g| {
        let m = memory(&g.name).map_or((0, 0), |m| (1, m));
        (m, g.per_node.unwrap_or(0))
    })
}

fn affinity_terms(pod: &Node) -> impl Iterator<Item = &Node> {
    let terms = pod
        .get("affinity")
        .and_then(|a| a.get("nodeAffinity"))
        .and_then(|a| a.get("requiredDuringSchedulingIgnoredDuringExecution"))
        .and_then(|r| r.get("nodeSelectorTerms"));
    items(terms)
}

/// The items of a sequence node (none for anything else).
pub fn items(node: Option<&Node>) -> std::slice::Iter<'_, Node> {
    match node.map(|n| &n.value) {
        Some(Value::Seq(items)) => items.iter(),
        _ => [].iter(),
    }
}

/// Images whose tags are engine releases: `lmsysorg/sglang:v0.5.21-cu129`, `vllm/vllm-openai:v0.11.0`.
/// Other images that carry an engine (Dynamo runtimes, LMCache builds) tag their own releases.
const ENGINE_IMAGES: &[(&str, &str)] =
    &[("lmsysorg/sglang", "sglang"), ("vllm/vllm-openai", "vllm")];

/// The engine release an image tag names, for the given engine (`sglang`, `vllm`).
pub fn image_version(image: &str, engine: &str) -> Option<String> {
    let image = image.split('@').next().unwrap_or(image);
    let (repo, tag) = image.rsplit_once(':').filter(|(_, t)| !t.contains('/'))?;
    let official = ENGINE_IMAGES
        .iter()
        .any(|(name, e)| *e == engine && under_name(repo, name));
    let tag = tag.strip_prefix('v').unwrap_or(tag);
    if !official {
        return None;
    }
    if is_release(tag) {
        return Some(release_part(tag));
    }
    // Nightly-style tags carry the release among other parts: `vllm-x86_64-cu13-0.25.1-7a33ba9`.
    tag.split('-')
        .filter(|p| p.split('.').count() == 3 && is_release(p))
        .map(str::to_string)
        .next()
}

/// `repo` is `name` or ends with `/name` (checked without building `/name` per launch).
fn under_name(repo: &str, name: &str) -> bool {
    repo.strip_suffix(name)
        .is_some_and(|head| head.is_empty() || head.ends_with('/'))
}

/// `0.5.21…`: three dotted parts, each starting with a digit.
fn is_release(tag: &str) -> bool {
    let numeric = tag
        .split('.')
        .take(3)
        .all(|p| p.chars().next().is_some_and(|c| c.is_ascii_digit()));
    numeric && tag.contains('.')
}

/// `0.5.21-cu129` → `0.5.21`; `0.5.5.post3-cu129-amd64` → `0.5.5.post3`.
fn release_part(tag: &str) -> String {
    tag.split('-').next().unwrap_or(tag).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags_name_engine_releases_only_on_official_images() {
        let v = |i: &str, e: &str| image_version(i, e);
        assert_eq!(
            v("lmsysorg/sglang:v0.5.21-cu129", "sglang").as_deref(),
            Some("0.5.21")
        );
        assert_eq!(
            v(
                "docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64",
                "sglang"
            )
            .as_deref(),
            Some("0.5.5.post3")
        );
        assert_eq!(
            v("vllm/vllm-openai:v0.11.0", "vllm").as_deref(),
            Some("0.11.0")
        );
        assert_eq!(v("vllm/vllm-openai:v0.11.0", "sglang"), None);
        assert_eq!(v("lmsysorg/sglang:latest", "sglang"), None);
        assert_eq!(
            v("nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.3.1", "sglang"),
            None
        );
        assert_eq!(v("lmcache/vllm-openai:2025-05-27-v1", "vllm"), None);
        assert_eq!(v("localhost:5000/lmsysorg/sglang", "sglang"), None);
    }
}

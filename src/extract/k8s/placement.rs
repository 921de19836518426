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

/// Node labels that name a GPU model, and how a value becomes a catalog name.
fn gpu_label(key: &str, value: &str) -> Option<String> {
    match key {
        "nvidia.com/gpu.product" => Some(value.to_string()),
        // GKE: `nvidia-h100-80gb`, `nvidia-tesla-a100`.
        "cloud.google.com/gke-accelerator" => Some(value.trim_start_matches("nvidia-").to_string()),
        // EKS (Karpenter, Auto Mode): `h100`, `a100`, `l4`, `a10g`.
        "karpenter.k8s.aws/instance-gpu-name" | "eks.amazonaws.com/instance-gpu-name" => {
            Some(value.to_string())
        }
        // Every node's VM size or instance type (AKS `Standard_ND96isr_H100_v5`, EKS `p5.48xlarge`).
        "node.kubernetes.io/instance-type" | "beta.kubernetes.io/instance-type" => {
            super::instances::node_gpu(value)
        }
        _ => None,
    }
}

/// The GPU model a pod spec pins through `nodeSelector` or required node affinity (`In` terms).
pub fn gpu_type(pod: &Node) -> Option<(String, Loc)> {
    if let Some(Value::Map(entries)) = pod.get("nodeSelector").map(|n| &n.value) {
        for (k, v) in entries {
            if let (Some(key), Some(val)) = (k.as_str(), v.as_str()) {
                if let Some(name) = gpu_label(key, val) {
                    return Some((name, v.loc));
                }
            }
        }
    }
    affinity_terms(pod).find_map(|expr| {
        let key = expr.get("key")?.as_str()?;
        if expr.get("operator")?.as_str()? != "In" {
            return None;
        }
        let Value::Seq(values) = &expr.get("values")?.value else {
            return None;
        };
        worst_of(values.iter().filter_map(|v| {
            let name = gpu_label(key, v.as_str()?)?;
            Some((name, v.loc))
        }))
    })
}

/// Of the GPUs a pod may be scheduled on, the one with the least memory; one the catalog does
/// not know wins outright, so it is reported rather than assumed larger.
fn worst_of(candidates: impl Iterator<Item = (String, Loc)>) -> Option<(String, Loc)> {
    let memory = |name: &str| crate::gpu::lookup(name).map(|g| g.cuda_total_bytes);
    candidates.min_by_key(|(name, _)| memory(name).map_or((0, 0), |m| (1, m)))
}

fn affinity_terms(pod: &Node) -> impl Iterator<Item = &Node> {
    let terms = pod
        .get("affinity")
        .and_then(|a| a.get("nodeAffinity"))
        .and_then(|a| a.get("requiredDuringSchedulingIgnoredDuringExecution"))
        .and_then(|r| r.get("nodeSelectorTerms"));
    items(terms).flat_map(|t| items(t.get("matchExpressions")))
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

//! Instance types and VM sizes on nodes and in serving resources: KAITO's
//! `resource.instanceType`, ai-on-eks chart values, and the `node.kubernetes.io/instance-type`
//! node label (AKS, EKS and GKE set it on every node), read through the catalog's instance table
//! (`crate::gpu::instance`).
//!
//! AKS labels its GPU nodes `kubernetes.azure.com/accelerator: nvidia`, which names the vendor,
//! not the GPU, and `kubernetes.azure.com/agentpool` is a name the cluster owner chooses: neither
//! tells the GPU, so only the VM size does.

use crate::gpu::instance;

/// Azure sizes that get a slice of one GPU (nvadsa10v5-series: 1/6, 1/3, 1/2 of an A10, with 4, 8
/// and 12 GB): no catalog GPU has that memory, so the name says what the node has.
const PARTIAL: &[(&str, &str)] = &[
    ("Standard_NV6ads_A10_v5", "1/6 of an A10, 4 GB"),
    ("Standard_NV12ads_A10_v5", "1/3 of an A10, 8 GB"),
    ("Standard_NV18ads_A10_v5", "1/2 of an A10, 12 GB"),
];

/// The catalog GPU and GPU count of an instance type kvlint knows.
pub fn gpus(instance: &str) -> Option<(&'static str, u32)> {
    instance::gpus(instance).map(|(spec, n)| (spec.name.as_str(), n))
}

/// The GPU a node of this instance type has, as the catalog names it, and how many. A GPU
/// instance type kvlint does not map (a partial-GPU size, a family not in the table) is returned
/// as written, with no count, so it is reported as a GPU the catalog lacks rather than replaced
/// by a default; a CPU instance type names no GPU.
pub fn node_gpu(instance: &str) -> Option<(String, Option<u32>)> {
    let instance = instance.trim();
    if let Some((gpu, n)) = gpus(instance) {
        return Some((gpu.to_string(), Some(n)));
    }
    if let Some((name, what)) = PARTIAL
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(instance))
    {
        return Some((format!("{name} ({what})"), None));
    }
    is_gpu_family(instance).then(|| (instance.to_string(), None))
}

/// The GPU every instance type of an AWS family has (`g4dn`: T4, from `g4dn.xlarge` to
/// `g4dn.metal`), as Karpenter's and EKS Auto Mode's `instance-family` labels name it. A family
/// the table does not map, or whose sizes differ in GPU, names none.
pub fn family_gpu(family: &str) -> Option<&'static str> {
    let prefix = format!("{}.", family.trim().to_ascii_lowercase());
    let mut gpus = crate::gpu::catalog::instances()
        .iter()
        .filter(|i| i.name.to_ascii_lowercase().starts_with(&prefix))
        .filter_map(|i| instance::gpus(&i.name).map(|(spec, _)| spec.name.as_str()));
    let first = gpus.next()?;
    gpus.all(|g| g == first).then_some(first)
}

/// Azure N-series (`Standard_NC…`, `Standard_ND…`, `Standard_NV…`, `Standard_NG…`), AWS P and G
/// families (`p4d.24xlarge`, `g4dn.xlarge`, `gr6.4xlarge`, `p6-b200.48xlarge`), GCP
/// accelerator-optimized machine types, OCI GPU shapes, Lambda's `gpu_…` types, CoreWeave's
/// (`gd-8xh100ib-i128`, `b200-8x`, `gb200-4x`, `rtxp6000-8x`) and Nebius's (`gpu-h100-sxm`).
fn is_gpu_family(instance: &str) -> bool {
    let lower = instance.to_ascii_lowercase();
    if lower.starts_with("standard_n") {
        return true;
    }
    let aws = lower.split_once('.').is_some_and(|(family, _)| {
        let mut chars = family.chars();
        matches!(chars.next(), Some('p' | 'g'))
            && chars.next().is_some_and(|c| c.is_ascii_digit() || c == 'r')
    });
    let prefixed = [
        "a2-",
        "a3-",
        "a4-",
        "a4x-",
        "g2-",
        "g4-",
        "bm.gpu",
        "vm.gpu",
        "gpu_",
        "gpu-",
        "gd-",
        "b200-",
        "b300-",
        "gb200-",
        "gb300-",
        "rtxp6000-",
    ]
    .iter()
    .any(|p| lower.starts_with(p));
    aws || prefixed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Karpenter's `instance-family` label: one GPU across the family's sizes, else none.
    #[test]
    fn an_instance_family_names_its_gpu_when_all_its_sizes_share_it() {
        assert_eq!(family_gpu("g4dn"), Some("T4"));
        assert_eq!(family_gpu("G6E"), Some("L40S"));
        assert_eq!(family_gpu("p4d"), Some("A100-40GB"));
        assert_eq!(family_gpu("p4de"), Some("A100-80GB"));
        assert_eq!(family_gpu("m5"), None);
        assert_eq!(family_gpu("g4"), None);
    }

    #[test]
    fn node_instance_types_name_the_gpu_or_are_kept_when_unmapped() {
        let gpu = |i: &str| node_gpu(i);
        assert_eq!(
            gpu("Standard_ND96isr_H100_v5"),
            Some(("H100-80GB".into(), Some(8)))
        );
        assert_eq!(
            gpu("standard_nd96isr_h200_v5"),
            Some(("H200".into(), Some(8)))
        );
        assert_eq!(
            gpu("Standard_ND96asr_v4"),
            Some(("A100-40GB".into(), Some(8)))
        );
        assert_eq!(gpu("p5.48xlarge"), Some(("H100-80GB".into(), Some(8))));
        assert_eq!(gpu("g4dn.xlarge"), Some(("T4".into(), Some(1))));
        assert_eq!(gpu("a3-highgpu-8g"), Some(("H100-80GB".into(), Some(8))));
        assert_eq!(
            gpu("Standard_NV6ads_A10_v5"),
            Some(("Standard_NV6ads_A10_v5 (1/6 of an A10, 4 GB)".into(), None))
        );
        // GPU sizes not in the table stay as written (then INP003), CPU sizes name no GPU.
        assert_eq!(
            gpu("Standard_NV12s_v3"),
            Some(("Standard_NV12s_v3".into(), None))
        );
        assert_eq!(gpu("g7e.2xlarge"), Some(("g7e.2xlarge".into(), None)));
        assert_eq!(gpu("BM.GPU.X99.8"), Some(("BM.GPU.X99.8".into(), None)));
        assert_eq!(gpu("Standard_D4s_v5"), None);
        assert_eq!(gpu("m5.xlarge"), None);
        assert_eq!(gpu("c7g.large"), None);
        assert_eq!(gpu("VM.Standard.E5.Flex"), None);
        // CoreWeave and Nebius: mapped, GPU but unmapped (kept), CPU (none).
        assert_eq!(gpu("gb200-4x"), Some(("GB200".into(), Some(4))));
        assert_eq!(gpu("b300-8x"), Some(("b300-8x".into(), None)));
        assert_eq!(gpu("gpu-h200-sxm"), Some(("gpu-h200-sxm".into(), None)));
        assert_eq!(gpu("cd-gp-i64-erapids"), None);
        assert_eq!(gpu("turin-gp"), None);
    }
}

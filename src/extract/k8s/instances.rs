//! Cloud instance types and VM sizes that name a GPU: KAITO's `resource.instanceType`, ai-on-eks
//! chart values, and the `node.kubernetes.io/instance-type` node label (AKS, EKS and GKE set it on
//! every node), read as the GPU model and how many each has.
//!
//! AKS labels its GPU nodes `kubernetes.azure.com/accelerator: nvidia`, which names the vendor,
//! not the GPU, and `kubernetes.azure.com/agentpool` is a name the cluster owner chooses: neither
//! tells the GPU, so only the VM size does.

/// `(instance type, catalog GPU, GPUs)`. Azure, from Microsoft's size pages
/// (learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/: nca100v4-series,
/// ndasra100v4-series, ndma100v4-series, ndh100v5-series, ncadsh100v5-series,
/// nd-mi300x-v5-series, ncast4v3-series, nvadsa10v5-series: "Accelerators" tables), and ND H200
/// v5 (8 GPUs) from the AKS node VM-size list (github.com/microsoft/aspire,
/// src/Aspire.Hosting.Azure.Kubernetes/AksNodeVmSizes.cs). NCads A10 v4 sizes are left out: the
/// sources disagree on whether they get whole or partial A10s. AWS, from the EC2 accelerated
/// computing instance pages (P4d, P4de, P5, P5e, P5en, G5, G6, G6e).
const INSTANCES: &[(&str, &str, u32)] = &[
    ("Standard_NC24ads_A100_v4", "A100-80GB", 1),
    ("Standard_NC48ads_A100_v4", "A100-80GB", 2),
    ("Standard_NC96ads_A100_v4", "A100-80GB", 4),
    ("Standard_ND96asr_v4", "A100-40GB", 8),
    ("Standard_ND96amsr_A100_v4", "A100-80GB", 8),
    ("Standard_NC40ads_H100_v5", "H100-NVL", 1),
    ("Standard_NC80adis_H100_v5", "H100-NVL", 2),
    ("Standard_ND96isr_H100_v5", "H100-80GB", 8),
    ("Standard_ND96isr_H200_v5", "H200", 8),
    ("Standard_ND96isr_MI300X_v5", "MI300X", 8),
    ("Standard_NC4as_T4_v3", "T4", 1),
    ("Standard_NC8as_T4_v3", "T4", 1),
    ("Standard_NC16as_T4_v3", "T4", 1),
    ("Standard_NC64as_T4_v3", "T4", 4),
    ("Standard_NV36ads_A10_v5", "A10", 1),
    ("Standard_NV36adms_A10_v5", "A10", 1),
    ("Standard_NV72ads_A10_v5", "A10", 2),
    ("p4d.24xlarge", "A100-40GB", 8),
    ("p4de.24xlarge", "A100-80GB", 8),
    ("p5.48xlarge", "H100-80GB", 8),
    ("p5e.48xlarge", "H200", 8),
    ("p5en.48xlarge", "H200", 8),
    ("g5.xlarge", "A10G", 1),
    ("g5.12xlarge", "A10G", 4),
    ("g5.48xlarge", "A10G", 8),
    ("g6.xlarge", "L4", 1),
    ("g6.12xlarge", "L4", 4),
    ("g6.24xlarge", "L4", 4),
    ("g6.48xlarge", "L4", 8),
    ("g6e.xlarge", "L40S", 1),
    ("g6e.12xlarge", "L40S", 4),
    ("g6e.24xlarge", "L40S", 4),
    ("g6e.48xlarge", "L40S", 8),
];

/// Azure sizes that get a slice of one GPU (nvadsa10v5-series: 1/6, 1/3, 1/2 of an A10, with 4, 8
/// and 12 GB): no catalog GPU has that memory, so the name says what the node has.
const PARTIAL: &[(&str, &str)] = &[
    ("Standard_NV6ads_A10_v5", "1/6 of an A10, 4 GB"),
    ("Standard_NV12ads_A10_v5", "1/3 of an A10, 8 GB"),
    ("Standard_NV18ads_A10_v5", "1/2 of an A10, 12 GB"),
];

/// The GPU and GPU count of an instance type kvlint knows.
pub fn gpus(instance: &str) -> Option<(&'static str, u32)> {
    INSTANCES
        .iter()
        .find(|(name, _, _)| name.eq_ignore_ascii_case(instance.trim()))
        .map(|(_, gpu, n)| (*gpu, *n))
}

/// The GPU a node pinned by its instance type has, as the catalog names it. A GPU instance type
/// kvlint does not map (a partial-GPU size, a family not in the table) is returned as written,
/// so it is reported as a GPU the catalog lacks rather than replaced by a default; a CPU
/// instance type names no GPU.
pub fn node_gpu(instance: &str) -> Option<String> {
    let instance = instance.trim();
    if let Some((gpu, _)) = gpus(instance) {
        return Some(gpu.to_string());
    }
    if let Some((name, what)) = PARTIAL
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(instance))
    {
        return Some(format!("{name} ({what})"));
    }
    is_gpu_family(instance).then(|| instance.to_string())
}

/// Azure N-series (`Standard_NC…`, `Standard_ND…`, `Standard_NV…`, `Standard_NG…`), AWS P and G
/// families (`p4d.24xlarge`, `g4dn.xlarge`), GCP accelerator-optimized machine types.
fn is_gpu_family(instance: &str) -> bool {
    let lower = instance.to_ascii_lowercase();
    if lower.starts_with("standard_n") {
        return true;
    }
    let aws = lower.split_once('.').is_some_and(|(family, _)| {
        let mut chars = family.chars();
        matches!(chars.next(), Some('p' | 'g')) && chars.next().is_some_and(|c| c.is_ascii_digit())
    });
    let gcp = ["a2-", "a3-", "a4-", "g2-", "g4-"]
        .iter()
        .any(|p| lower.starts_with(p));
    aws || gcp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_instance_types_name_the_gpu_or_are_kept_when_unmapped() {
        assert_eq!(
            node_gpu("Standard_ND96isr_H100_v5").as_deref(),
            Some("H100-80GB")
        );
        assert_eq!(
            node_gpu("standard_nd96isr_h200_v5").as_deref(),
            Some("H200")
        );
        assert_eq!(
            node_gpu("Standard_ND96asr_v4").as_deref(),
            Some("A100-40GB")
        );
        assert_eq!(node_gpu("p5.48xlarge").as_deref(), Some("H100-80GB"));
        assert_eq!(
            node_gpu("Standard_NV6ads_A10_v5").as_deref(),
            Some("Standard_NV6ads_A10_v5 (1/6 of an A10, 4 GB)")
        );
        // GPU sizes not in the table stay as written (then INP003), CPU sizes name no GPU.
        assert_eq!(
            node_gpu("Standard_NC6s_v3").as_deref(),
            Some("Standard_NC6s_v3")
        );
        assert_eq!(node_gpu("g4dn.xlarge").as_deref(), Some("g4dn.xlarge"));
        assert_eq!(node_gpu("a3-highgpu-8g").as_deref(), Some("a3-highgpu-8g"));
        assert_eq!(node_gpu("Standard_D4s_v5"), None);
        assert_eq!(node_gpu("m5.xlarge"), None);
        assert_eq!(node_gpu("c7g.large"), None);
    }

    #[test]
    fn every_instance_names_a_catalog_gpu() {
        for (name, gpu, n) in INSTANCES {
            assert!(crate::gpu::lookup(gpu).is_some(), "{name}: {gpu}");
            assert!(*n > 0, "{name}");
        }
    }
}

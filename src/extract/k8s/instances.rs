//! Cloud instance types that some serving resources name instead of a GPU (KAITO's
//! `resource.instanceType`, ai-on-eks chart values): the GPU model and how many each has.

/// `(instance type, catalog GPU, GPUs)`, from the providers' instance pages: Azure NC A100 v4,
/// NC H100 v5 and ND H100 v5 series; AWS EC2 accelerated computing (P4d, P4de, P5, P5e, P5en, G5,
/// G6, G6e).
const INSTANCES: &[(&str, &str, u32)] = &[
    ("Standard_NC24ads_A100_v4", "A100-80GB", 1),
    ("Standard_NC48ads_A100_v4", "A100-80GB", 2),
    ("Standard_NC96ads_A100_v4", "A100-80GB", 4),
    ("Standard_NC40ads_H100_v5", "H100-NVL", 1),
    ("Standard_NC80adis_H100_v5", "H100-NVL", 2),
    ("Standard_ND96isr_H100_v5", "H100-80GB", 8),
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

/// The GPU and GPU count of an instance type kvlint knows.
pub fn gpus(instance: &str) -> Option<(&'static str, u32)> {
    INSTANCES
        .iter()
        .find(|(name, _, _)| name.eq_ignore_ascii_case(instance.trim()))
        .map(|(_, gpu, n)| (*gpu, *n))
}

//! Which GPUs join a switch fabric: the collective libraries size their link buffers by it,
//! and the engines measure those buffers into the memory they leave the KV pool.

use crate::gpu::{GpuSpec, Vendor};

/// Catalog GPUs sold only as PCIe cards: no NVSwitch, so no NVLink SHARP buffers in NCCL
/// (some pair over an NVLink bridge).
pub(crate) const PCIE_ONLY: &[&str] = &[
    "L4",
    "L40S",
    "L20",
    "A10",
    "A10G",
    "T4",
    "RTX-3090",
    "RTX-4090",
    "RTX-PRO-6000-Blackwell",
    "H100-PCIe",
    "H100-NVL",
    // RDNA workstation and consumer cards: PCIe only, no Infinity Fabric link (the R9700 TP2
    // vLLM logs show 0.6-0.7 GiB besides weights and KV, no collective buffers).
    "Radeon-AI-PRO-R9700",
    "Radeon-PRO-W7900",
    "Radeon-RX-7900-XTX",
];

/// NVIDIA parts sold in NVSwitch systems (HGX, DGX, NVL racks), whose TP groups build NVLink
/// buffers. A PCIe V100 or A100 is read under these names too, which only lowers its pool.
const NVSWITCH: &[&str] = &[
    "V100-16GB",
    "V100-32GB",
    "A100-40GB",
    "A100-80GB",
    "A800-80GB",
    "H100-80GB",
    "H800",
    "H200",
    "H20",
    "H20-3e",
    "GH200-96GB",
    "GH200-144GB",
    "B100",
    "B200",
    "B300",
    "GB200",
    "GB300",
];

/// NVIDIA cards sold only for PCIe slots beyond `PCIE_ONLY` (whose members also set vLLM's
/// single-card spread): a TP group of them has no switch fabric.
const PCIE_CARDS: &[&str] = &[
    "A40",
    "L40",
    "A30",
    "A16",
    "A2",
    "V100S-32GB",
    "P100",
    "P4",
    "Tesla-P40",
];

/// Whether a TP group of this part is joined by a switch fabric (NVSwitch, Instinct's Infinity
/// Fabric), as far as the catalog knows: `None` for a part it cannot place (a kvlint.toml
/// addition), which the callers read on the pessimistic side.
pub(crate) fn switch_fabric(gpu: &GpuSpec) -> Option<bool> {
    let name = gpu.name.as_str();
    let pcie = PCIE_ONLY.contains(&name)
        || PCIE_CARDS.contains(&name)
        || name.starts_with("RTX-")
        || name.starts_with("Quadro-");
    match gpu.vendor {
        Vendor::Amd => Some(!pcie),
        Vendor::Nvidia if NVSWITCH.contains(&name) => Some(true),
        Vendor::Nvidia if pcie => Some(false),
        Vendor::Nvidia => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_part_is_a_catalog_name_and_unlisted_ones_are_unplaced() {
        for name in PCIE_ONLY.iter().chain(NVSWITCH).chain(PCIE_CARDS) {
            assert!(
                crate::gpu::lookup(name).is_some(),
                "{name} is not a catalog name"
            );
        }
        let placed = |name: &str| switch_fabric(crate::gpu::lookup(name).unwrap());
        assert_eq!(placed("H200"), Some(true));
        assert_eq!(placed("RTX-5090"), Some(false));
        assert_eq!(placed("L4"), Some(false));
        assert_eq!(placed("MI300X"), Some(true));
        assert_eq!(placed("Radeon-AI-PRO-R9700"), Some(false));
        let mut custom = crate::gpu::lookup("H100-80GB").unwrap().clone();
        custom.name = "my-h100-box".into();
        assert_eq!(switch_fabric(&custom), None);
    }
}

//! Which GPUs join a switch fabric: the collective libraries size their link buffers by it,
//! and the engines measure those buffers into the memory they leave the KV pool.

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
pub(crate) const NVSWITCH: &[&str] = &[
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

//! GPUs: the embedded catalog (names, aliases, NVML names, Kubernetes product labels, memory as
//! nvidia-smi and as CUDA report it) and `--gpu SPEC` parsing.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Nvidia,
    Amd,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuSpec {
    /// Catalog name, e.g. `H100-80GB`.
    pub name: String,
    pub vendor: Vendor,
    /// Memory total as nvidia-smi / NVML (v1) reports it, in MiB. SGLang's heuristics read this.
    pub memory_mib: u64,
    /// Total bytes as `cudaMemGetInfo` / `torch.cuda.mem_get_info` report it. The engines size from this.
    pub cuda_total_bytes: u64,
    /// Compute capability (9.0 for Hopper, 10.0 for Blackwell); 0.0 for AMD.
    pub compute_capability: (u32, u32),
    /// Peak memory bandwidth, GB/s.
    pub bandwidth_gbs: f64,
    /// Where the numbers come from.
    pub source: String,
}

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

pub mod catalog;
pub mod instance;
pub mod inventory;
mod local;
pub mod nvml;
pub mod source;

pub use catalog::{catalog, lookup, parse_spec};
pub use inventory::Inventory;
pub use source::GpuSource;

/// A `--gpu SPEC` value: the GPU and, when written (`h200x8`, `8xH200`), how many.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSelection {
    pub spec: GpuSpec,
    pub count: Option<u32>,
}

/// Errors from the catalog, `--gpu` parsing and the NVML inventory.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GpuError {
    #[error("unknown GPU `{name}`{}", did_you_mean(suggestions))]
    Unknown {
        name: String,
        suggestions: Vec<String>,
    },
    #[error(
        "bad GPU count in `{spec}`: expected a positive whole number, as in `h200x8` or `8xH200`"
    )]
    BadCount { spec: String },
    /// The NVML library is missing: no NVIDIA driver on this machine.
    #[error("no NVIDIA driver: {0}")]
    NoDriver(String),
    /// NVML loaded but a call failed.
    #[error("NVML: {0}")]
    Nvml(String),
    /// An inventory JSON (fixture or captured `kvlint gpus --format json`) could not be read.
    #[error("GPU inventory: {0}")]
    Inventory(String),
}

impl GpuError {
    /// Process exit code: 2 for bad input, 4 when the GPU could not be queried.
    pub fn exit_code(&self) -> i32 {
        match self {
            GpuError::Unknown { .. } | GpuError::BadCount { .. } | GpuError::Inventory(_) => 2,
            GpuError::NoDriver(_) | GpuError::Nvml(_) => 4,
        }
    }
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", suggestions.join(", "))
    }
}

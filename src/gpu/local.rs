//! GPUs from kvlint.toml `[gpus]`: added to the catalog, or overriding a catalog entry, for the
//! rest of the process. They are looked up before the embedded catalog.

use super::catalog::{embedded_entry, CatalogEntry};
use super::{GpuSpec, Vendor};
use std::sync::OnceLock;

/// A `[gpus]` entry as written.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalGpu {
    pub name: String,
    pub memory_bytes: Option<u64>,
    pub memory_mib: Option<u64>,
    pub aliases: Vec<String>,
    pub labels: Vec<String>,
    pub compute_capability: Option<[u32; 2]>,
    pub bandwidth_gbs: Option<f64>,
    pub source: String,
}

const MIB: u64 = 1 << 20;

/// The catalog entry a `[gpus]` entry stands for: the embedded entry of that name (or alias)
/// with the given fields replaced, or a new GPU, which needs `memory-bytes` and
/// `compute-capability`.
pub fn local_entry(g: LocalGpu) -> Result<CatalogEntry, String> {
    let base = embedded_entry(&g.name);
    let need = |what: &str| format!("GPU `{}` is not in the catalog: give its {what}", g.name);
    let cuda_total_bytes = match (g.memory_bytes, base) {
        (Some(b), _) => b,
        (None, Some(e)) => e.spec.cuda_total_bytes,
        (None, None) => return Err(need("memory-bytes (as CUDA reports them)")),
    };
    let cc = match (g.compute_capability, base) {
        (Some([a, b]), _) => (a, b),
        (None, Some(e)) => e.spec.compute_capability,
        (None, None) => return Err(need("compute-capability")),
    };
    if cuda_total_bytes < MIB {
        return Err(format!(
            "GPU `{}`: memory-bytes {cuda_total_bytes} is not a GPU's memory in bytes",
            g.name
        ));
    }
    let memory_mib = g.memory_mib.unwrap_or(match (g.memory_bytes, base) {
        (None, Some(e)) => e.spec.memory_mib,
        _ => cuda_total_bytes.div_ceil(MIB),
    });
    let mut names = base.map_or_else(Vec::new, |e| e.aliases.clone());
    names.extend(g.aliases);
    Ok(CatalogEntry {
        spec: GpuSpec {
            name: base.map_or(g.name.clone(), |e| e.spec.name.clone()),
            vendor: base.map_or(Vendor::Nvidia, |e| e.spec.vendor),
            memory_mib,
            cuda_total_bytes,
            compute_capability: cc,
            bandwidth_gbs: g
                .bandwidth_gbs
                .or(base.map(|e| e.spec.bandwidth_gbs))
                .unwrap_or(0.0),
            source: format!("kvlint.toml [gpus]: {}", g.source),
        },
        aliases: names,
        nvml_names: base.map_or_else(Vec::new, |e| e.nvml_names.clone()),
        k8s_labels: [
            base.map_or_else(Vec::new, |e| e.k8s_labels.clone()),
            g.labels,
        ]
        .concat(),
        cuda_total_basis: "kvlint.toml [gpus]".to_string(),
        unified: base.is_some_and(|e| e.unified),
    })
}

static LOCAL: OnceLock<&'static [CatalogEntry]> = OnceLock::new();

/// Installs the `[gpus]` entries for this process; the first call wins (one kvlint.toml per run).
pub fn add_local(entries: Vec<CatalogEntry>) {
    if !entries.is_empty() {
        // Leaked once per process so lookups can hand out `'static` specs like the catalog's.
        let _ = LOCAL.set(Box::leak(entries.into_boxed_slice()));
    }
}

/// The installed `[gpus]` entries.
pub fn local() -> &'static [CatalogEntry] {
    LOCAL.get().copied().unwrap_or(&[])
}

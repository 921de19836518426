//! What the node's GPUs really are: the NVML inventory as a serializable value, so a captured
//! `kvlint gpus --format json` (or a fixture) can stand in for hardware.

use super::{lookup, GpuError, GpuSpec, Vendor};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

const MIB: u64 = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inventory {
    /// Where it came from: `nvml` when read live, a note for captured or synthetic fixtures.
    pub source: String,
    pub driver_version: Option<String>,
    /// CUDA version the driver supports, `major.minor`.
    pub cuda_driver_version: Option<String>,
    pub gpus: Vec<GpuInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// NVML index (PCI bus order; CUDA's default order may differ, match by `uuid`).
    pub index: u32,
    pub uuid: String,
    /// NVML product name, e.g. `NVIDIA H200`.
    pub name: String,
    pub pci_bus_id: String,
    pub compute_capability: Option<(u32, u32)>,
    /// NVML v2 memory info; `None` when the driver only has v1 (see `notes`).
    pub memory: Option<MemoryInfo>,
    pub mig: Option<MigInfo>,
    #[serde(default)]
    pub processes: Vec<GpuProcess>,
    /// Problems met while reading this GPU, in words.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// NVML `nvmlDeviceGetMemoryInfo_v2`, in bytes: `used` excludes `reserved`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryInfo {
    pub total_bytes: u64,
    pub reserved_bytes: u64,
    pub free_bytes: u64,
    pub used_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigInfo {
    pub enabled: bool,
    /// The mode after the next GPU reset.
    pub pending_enabled: bool,
    #[serde(default)]
    pub slices: Vec<MigSlice>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigSlice {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub memory: Option<MemoryInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuProcess {
    pub pid: u32,
    /// `None` where the driver does not say (e.g. inside some containers).
    pub used_bytes: Option<u64>,
}

impl Inventory {
    /// Reads a captured `kvlint gpus --format json` or a fixture.
    pub fn from_json(text: &str) -> Result<Inventory, GpuError> {
        serde_json::from_str(text).map_err(|e| GpuError::Inventory(e.to_string()))
    }

    pub fn to_json(&self) -> String {
        // Plain data with string keys: serialization cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The GPUs a process sees under `CUDA_VISIBLE_DEVICES` (indices or UUID prefixes), in that order.
    /// `None` means the variable is unset: every GPU, NVML order.
    pub fn visible(&self, cuda_visible_devices: Option<&str>) -> Vec<&GpuInfo> {
        let Some(list) = cuda_visible_devices else {
            return self.gpus.iter().collect();
        };
        let mut out = Vec::new();
        // CUDA stops at the first entry it cannot resolve.
        for item in list.split(',').map(str::trim) {
            let found = match item.parse::<u32>() {
                Ok(i) => self.gpus.iter().find(|g| g.index == i),
                Err(_) if item.starts_with("GPU-") => {
                    self.gpus.iter().find(|g| g.uuid.starts_with(item))
                }
                Err(_) => None,
            };
            match found {
                Some(g) if !out.iter().any(|o: &&GpuInfo| o.uuid == g.uuid) => out.push(g),
                _ => break,
            }
        }
        out
    }

    /// Human table, one GPU a row.
    pub fn render_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "driver {}  CUDA {}  ({} GPU{})",
            self.driver_version.as_deref().unwrap_or("?"),
            self.cuda_driver_version.as_deref().unwrap_or("?"),
            self.gpus.len(),
            if self.gpus.len() == 1 { "" } else { "s" }
        );
        let _ = writeln!(
            s,
            "{:>3}  {:<26} {:<12} {:>4}  {:>10} {:>9} {:>10} {:>9}  {:<4} {:>5}  {:<16} uuid",
            "idx",
            "name",
            "catalog",
            "cc",
            "total MiB",
            "resv MiB",
            "free MiB",
            "used MiB",
            "mig",
            "procs",
            "pci"
        );
        for g in &self.gpus {
            let mem = |f: fn(&MemoryInfo) -> u64| {
                g.memory
                    .as_ref()
                    .map_or("-".into(), |m| (f(m) / MIB).to_string())
            };
            let cc = g
                .compute_capability
                .map_or("-".into(), |(a, b)| format!("{a}.{b}"));
            let mig = match &g.mig {
                Some(m) if m.enabled => format!("on:{}", m.slices.len()),
                Some(_) => "off".into(),
                None => "-".into(),
            };
            let _ = writeln!(
                s,
                "{:>3}  {:<26} {:<12} {:>4}  {:>10} {:>9} {:>10} {:>9}  {:<4} {:>5}  {:<16} {}",
                g.index,
                g.name,
                g.catalog_spec().map_or("(unknown)", |c| c.name.as_str()),
                cc,
                mem(|m| m.total_bytes),
                mem(|m| m.reserved_bytes),
                mem(|m| m.free_bytes),
                mem(|m| m.used_bytes),
                mig,
                g.processes.len(),
                g.pci_bus_id,
                g.uuid
            );
            for n in &g.notes {
                let _ = writeln!(s, "     note: {n}");
            }
        }
        s
    }
}

impl GpuInfo {
    /// The catalog entry for this GPU's NVML name, if the catalog knows it.
    pub fn catalog_spec(&self) -> Option<&'static GpuSpec> {
        lookup(&self.name)
    }

    /// The spec to plan with: the catalog's data with this GPU's measured memory, or, for a GPU the
    /// catalog does not know, a spec built from the measurement alone. `None` without memory info.
    pub fn measured_spec(&self) -> Option<GpuSpec> {
        let m = self.memory?;
        let measured =
            |what: &str| format!("measured by NVML on {} ({}){what}", self.name, self.uuid);
        let base = self.catalog_spec().cloned();
        Some(GpuSpec {
            name: base
                .as_ref()
                .map_or_else(|| self.name.clone(), |b| b.name.clone()),
            vendor: Vendor::Nvidia,
            memory_mib: m.total_bytes / MIB,
            // What CUDA can use: the NVML total less the driver's reserve.
            cuda_total_bytes: m.total_bytes.saturating_sub(m.reserved_bytes),
            compute_capability: self
                .compute_capability
                .or(base.as_ref().map(|b| b.compute_capability))
                .unwrap_or((0, 0)),
            bandwidth_gbs: base.as_ref().map_or(0.0, |b| b.bandwidth_gbs),
            source: match &base {
                Some(b) => measured(&format!("; bandwidth from the catalog: {}", b.source)),
                None => measured("; not in the catalog, bandwidth unknown"),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Inventory {
        // Unit tests run from the package root, which is the repository root.
        let text = std::fs::read_to_string(format!("fixtures/gpus/{name}")).expect("fixture");
        Inventory::from_json(&text).expect("valid fixture")
    }

    #[test]
    fn h100_fixture_maps_to_catalog_with_measured_memory() {
        let inv = fixture("h100-80gb-x8.json");
        assert_eq!(inv.gpus.len(), 8);
        let g = &inv.gpus[0];
        assert_eq!(g.catalog_spec().map(|s| s.name.as_str()), Some("H100-80GB"));
        let spec = g.measured_spec().expect("memory");
        assert_eq!(spec.name, "H100-80GB");
        assert_eq!(spec.memory_mib, 81559);
        let m = g.memory.expect("memory");
        assert_eq!(spec.cuda_total_bytes, m.total_bytes - m.reserved_bytes);
        assert_eq!(spec.bandwidth_gbs, 3350.0);
        assert!(spec.source.contains("measured by NVML"));
    }

    #[test]
    fn captured_h200_inventory_matches_the_catalog() {
        // Captured on a real H200: nvidia-smi printed memory.total 143771 MiB.
        let inv = fixture("h200-x1.json");
        assert_eq!(inv.driver_version.as_deref(), Some("580.159.04"));
        let g = &inv.gpus[0];
        let spec = g.measured_spec().expect("memory");
        assert_eq!((spec.name.as_str(), spec.memory_mib), ("H200", 143771));
        let catalog = g.catalog_spec().expect("catalog");
        assert_eq!(catalog.cuda_total_bytes, spec.cuda_total_bytes);
        assert_eq!(g.mig.as_ref().map(|m| m.enabled), Some(false));
    }

    #[test]
    fn unknown_gpu_is_usable_with_measured_memory() {
        let mut inv = fixture("h100-80gb-x8.json");
        inv.gpus[0].name = "NVIDIA Future GPU".into();
        let spec = inv.gpus[0].measured_spec().expect("memory");
        assert_eq!(spec.name, "NVIDIA Future GPU");
        assert_eq!(spec.memory_mib, 81559);
        assert!(spec.source.contains("not in the catalog"));
    }

    #[test]
    fn json_round_trips() {
        let inv = fixture("h100-80gb-x8.json");
        assert_eq!(Inventory::from_json(&inv.to_json()), Ok(inv));
    }

    #[test]
    fn bad_json_is_an_inventory_error() {
        let err = Inventory::from_json("{\"gpus\": 3}").unwrap_err();
        assert!(matches!(err, GpuError::Inventory(_)));
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn cuda_visible_devices_selects_and_orders() {
        let inv = fixture("h100-80gb-x8.json");
        let idx = |v: Vec<&GpuInfo>| v.iter().map(|g| g.index).collect::<Vec<_>>();
        assert_eq!(idx(inv.visible(None)).len(), 8);
        assert_eq!(idx(inv.visible(Some("3,1"))), vec![3, 1]);
        let uuid = inv.gpus[5].uuid[..12].to_string();
        assert_eq!(idx(inv.visible(Some(&format!("{uuid},0")))), vec![5, 0]);
        // CUDA ignores everything after an entry it cannot resolve.
        assert_eq!(idx(inv.visible(Some("2,9,4"))), vec![2]);
        assert!(inv.visible(Some("")).is_empty());
    }

    #[test]
    fn table_shows_every_gpu() {
        let inv = fixture("h100-80gb-x8.json");
        let t = inv.render_table();
        assert_eq!(
            t.lines()
                .filter(|l| l.contains("NVIDIA H100 80GB HBM3"))
                .count(),
            8
        );
        assert!(t.contains("H100-80GB"));
        assert!(t.contains("81559"));
    }
}

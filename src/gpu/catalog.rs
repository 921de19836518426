//! The embedded GPU catalog (`catalog.toml`) and name resolution.

use super::local::local;
pub use super::local::{add_local, local_entry, LocalGpu};
use super::{GpuError, GpuSelection, GpuSpec, Vendor};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::OnceLock;

/// One catalog row: the spec plus every name the GPU goes by.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    pub spec: GpuSpec,
    pub aliases: Vec<String>,
    /// Exact NVML product names (`nvidia-smi --query-gpu=name`).
    pub nvml_names: Vec<String>,
    /// GPU Feature Discovery `nvidia.com/gpu.product` label values.
    pub k8s_labels: Vec<String>,
    /// `published` (a torch or engine figure), `estimated` (by tools/gen_gpu_catalog.py from
    /// the nvidia-smi total), or `system memory` (a unified part).
    pub cuda_total_basis: String,
    /// The GPU shares the system's memory: torch reports the system's total. vLLM applies its
    /// fraction to that total; both engines read free memory as the host's `MemAvailable`
    /// (vLLM `MemorySnapshot.measure`, SGLang `get_available_gpu_memory`), so SGLang's pool
    /// starts from what the host leaves free, not from the total.
    pub unified: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    gpu: Vec<RawEntry>,
    instance: Vec<super::instance::Instance>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    name: String,
    vendor: RawVendor,
    aliases: Vec<String>,
    nvml_names: Vec<String>,
    k8s_labels: Vec<String>,
    memory_mib: u64,
    cuda_total_bytes: u64,
    cuda_total_basis: String,
    unified: bool,
    compute_capability: [u32; 2],
    bandwidth_gbs: f64,
    source: String,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum RawVendor {
    Nvidia,
    Amd,
}

const CATALOG_TOML: &str = include_str!("catalog.toml");

/// The embedded catalog, parsed once.
fn raw() -> &'static RawCatalog {
    static RAW: OnceLock<RawCatalog> = OnceLock::new();
    // The catalog is compiled in and checked by the tests, so a parse failure is a build bug.
    RAW.get_or_init(|| toml::from_str(CATALOG_TOML).expect("embedded catalog.toml is valid"))
}

/// Every catalog row.
pub fn entries() -> &'static [CatalogEntry] {
    static ENTRIES: OnceLock<Vec<CatalogEntry>> = OnceLock::new();
    ENTRIES.get_or_init(|| raw().gpu.iter().cloned().map(CatalogEntry::from).collect())
}

/// Every instance type, VM size and machine type the catalog maps to a GPU.
pub fn instances() -> &'static [super::instance::Instance] {
    &raw().instance
}

impl From<RawEntry> for CatalogEntry {
    fn from(r: RawEntry) -> Self {
        let vendor = match r.vendor {
            RawVendor::Nvidia => Vendor::Nvidia,
            RawVendor::Amd => Vendor::Amd,
        };
        CatalogEntry {
            spec: GpuSpec {
                name: r.name,
                vendor,
                memory_mib: r.memory_mib,
                cuda_total_bytes: r.cuda_total_bytes,
                compute_capability: (r.compute_capability[0], r.compute_capability[1]),
                bandwidth_gbs: r.bandwidth_gbs,
                source: r.source,
            },
            aliases: r.aliases,
            nvml_names: r.nvml_names,
            k8s_labels: r.k8s_labels,
            cuda_total_basis: r.cuda_total_basis,
            unified: r.unified,
        }
    }
}

/// The catalog's GPU specs, in catalog order.
pub fn catalog() -> &'static [GpuSpec] {
    static SPECS: OnceLock<Vec<GpuSpec>> = OnceLock::new();
    SPECS.get_or_init(|| entries().iter().map(|e| e.spec.clone()).collect())
}

/// Lower-case and drop `-`, `_` and spaces, so `NVIDIA H100 80GB HBM3` matches `nvidia-h100-80gb-hbm3`.
fn normalize(s: &str) -> String {
    // ASCII names (all of a node label's) skip the per-char Unicode lowercase tables.
    if s.is_ascii() {
        return s
            .bytes()
            .filter(|b| !matches!(b, b'-' | b'_' | b' ' | b'\t'))
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect();
    }
    normalized(s).collect()
}

fn normalized(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars()
        .filter(|c| !matches!(c, '-' | '_' | ' ' | '\t'))
        .flat_map(char::to_lowercase)
}

impl CatalogEntry {
    /// Every name this entry answers to: catalog name, aliases, NVML names, k8s labels.
    pub fn all_names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.spec.name.as_str())
            .chain(self.aliases.iter().map(String::as_str))
            .chain(self.nvml_names.iter().map(String::as_str))
            .chain(self.k8s_labels.iter().map(String::as_str))
    }
}

fn find_key(list: &'static [CatalogEntry], key: &str) -> Option<&'static CatalogEntry> {
    if key.is_empty() {
        return None;
    }
    // Compared char by char: normalizing every name of every entry allocated per launch.
    list.iter()
        .find(|e| e.all_names().any(|n| normalized(n).eq(key.chars())))
}

/// The embedded entry a name means, ignoring kvlint.toml `[gpus]`: the first entry with the name,
/// as [`find_key`] would scan, from an index built once (the webhook resolves a GPU per review).
pub fn embedded_entry(name: &str) -> Option<&'static CatalogEntry> {
    index_key(&normalize(name))
}

/// [`embedded_entry`] of a normalized name.
fn index_key(key: &str) -> Option<&'static CatalogEntry> {
    static INDEX: OnceLock<HashMap<String, usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut index = HashMap::new();
        for (i, e) in entries().iter().enumerate() {
            for n in e.all_names() {
                index.entry(normalize(n)).or_insert(i);
            }
        }
        index
    });
    if key.is_empty() {
        return None;
    }
    index.get(key).map(|&i| &entries()[i])
}

fn lookup_entry(name: &str) -> Option<&'static CatalogEntry> {
    // Normalized once for both lists (once per launch).
    let key = normalize(name);
    find_key(local(), &key).or_else(|| index_key(&key))
}

/// Resolves a catalog name, alias, NVML product name or k8s product label; kvlint.toml `[gpus]`
/// entries first.
pub fn lookup(name: &str) -> Option<&'static GpuSpec> {
    lookup_entry(name).map(|e| &e.spec)
}

/// Whether the named GPU shares the host's memory (GB10, Jetson, MI300A): the engines then size
/// from what the host has free, not from a device total.
pub fn is_unified(name: &str) -> bool {
    lookup_entry(name).is_some_and(|e| e.unified)
}

/// One row of `kvlint gpus --catalog`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listed {
    pub name: String,
    pub memory_mib: u64,
    pub cuda_total_bytes: u64,
    pub compute_capability: (u32, u32),
    pub bandwidth_gbs: f64,
    /// Aliases, NVML names and node labels.
    pub names: Vec<String>,
    pub cuda_total_basis: String,
    pub unified: bool,
    pub source: String,
    /// Instance types whose nodes have this GPU, each with its count and source.
    pub instances: Vec<&'static super::instance::Instance>,
}

/// Every GPU a name can resolve to: kvlint.toml `[gpus]` entries, then the catalog's others.
pub fn listing() -> Vec<Listed> {
    let overridden = |e: &CatalogEntry| local().iter().any(|l| l.spec.name == e.spec.name);
    local()
        .iter()
        .chain(entries().iter().filter(|e| !overridden(e)))
        .map(|e| Listed {
            name: e.spec.name.clone(),
            memory_mib: e.spec.memory_mib,
            cuda_total_bytes: e.spec.cuda_total_bytes,
            compute_capability: e.spec.compute_capability,
            bandwidth_gbs: e.spec.bandwidth_gbs,
            names: e.all_names().skip(1).map(str::to_string).collect(),
            cuda_total_basis: e.cuda_total_basis.clone(),
            unified: e.unified,
            source: e.spec.source.clone(),
            instances: instances()
                .iter()
                .filter(|i| i.gpu == e.spec.name)
                .collect(),
        })
        .collect()
}

/// Catalog names closest to `name`, best first (at most three).
pub fn suggestions(name: &str) -> Vec<String> {
    let key = normalize(name);
    let mut scored: Vec<(f64, &str)> = local()
        .iter()
        .chain(entries())
        .map(|e| {
            let best = e
                .all_names()
                .map(|n| strsim::normalized_damerau_levenshtein(&key, &normalize(n)))
                .fold(0.0, f64::max);
            (best, e.spec.name.as_str())
        })
        .filter(|(score, _)| *score >= 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored
        .into_iter()
        .take(3)
        .map(|(_, n)| n.to_string())
        .collect()
}

fn resolve(name: &str) -> Result<GpuSpec, GpuError> {
    lookup(name).cloned().ok_or_else(|| GpuError::Unknown {
        name: name.trim().to_string(),
        suggestions: suggestions(name),
    })
}

fn is_count_sep(c: char) -> bool {
    matches!(c, 'x' | 'X' | '×' | '*' | ':')
}

/// `h200x8`, `H100-80GB x8`, `H200:8` → (`h200`, "8").
fn split_suffix_count(s: &str) -> Option<(&str, &str)> {
    let digits_start = s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (rest, digits) = s.split_at(digits_start);
    let rest = rest.trim_end();
    let name = rest.strip_suffix(is_count_sep)?.trim_end();
    (!digits.is_empty() && !name.is_empty()).then_some((name, digits))
}

/// `8xH200`, `8 x H200` → (`H200`, "8").
fn split_prefix_count(s: &str) -> Option<(&str, &str)> {
    let digits_end = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (digits, rest) = s.split_at(digits_end);
    let name = rest.trim_start().strip_prefix(is_count_sep)?.trim_start();
    (!digits.is_empty() && !name.is_empty()).then_some((name, digits))
}

fn parse_count(digits: &str, spec: &str) -> Result<u32, GpuError> {
    match digits.parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(GpuError::BadCount {
            spec: spec.to_string(),
        }),
    }
}

/// Parses a `--gpu SPEC` value: a GPU name, optionally with a count (`h200x8`, `8xH200`).
pub fn parse_spec(s: &str) -> Result<GpuSelection, GpuError> {
    let s = s.trim();
    // A whole-string match wins, so names that end in digits are never split.
    if let Some(spec) = lookup(s) {
        return Ok(GpuSelection {
            spec: spec.clone(),
            count: None,
        });
    }
    // An instance type (`p5.48xlarge`, `a3-highgpu-8g`) names the GPU and how many a node has.
    if let Some((spec, count)) = super::instance::gpus(s) {
        return Ok(GpuSelection {
            spec: spec.clone(),
            count: Some(count),
        });
    }
    let split = split_suffix_count(s)
        .filter(|(name, _)| lookup(name).is_some())
        .or_else(|| split_prefix_count(s));
    match split {
        Some((name, digits)) => {
            let spec = resolve(name)?;
            let count = parse_count(digits, s)?;
            Ok(GpuSelection {
                spec,
                count: Some(count),
            })
        }
        None => Err(GpuError::Unknown {
            name: s.to_string(),
            suggestions: suggestions(s),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_answers_as_a_scan_of_the_catalog() {
        let names = entries()
            .iter()
            .flat_map(|e| e.all_names().map(str::to_string))
            .chain(["h100", "H100 SXM", "nvidia-h200", "", " - ", "no such gpu"].map(String::from));
        for name in names {
            let scan = find_key(entries(), &normalize(&name)).map(|e| &e.spec.name);
            assert_eq!(
                embedded_entry(&name).map(|e| &e.spec.name),
                scan,
                "{name:?}"
            );
        }
    }

    #[test]
    fn every_name_resolves_to_its_entry() {
        for e in entries() {
            for n in e.all_names() {
                assert_eq!(lookup(n).map(|s| &s.name), Some(&e.spec.name), "{n}");
                let spaced = n.replace('-', " ").to_uppercase();
                assert_eq!(
                    lookup(&spaced).map(|s| &s.name),
                    Some(&e.spec.name),
                    "{spaced}"
                );
            }
        }
    }

    #[test]
    fn no_name_belongs_to_two_entries() {
        let mut owner: HashMap<String, &str> = HashMap::new();
        for e in entries() {
            for n in e.all_names() {
                if let Some(prev) = owner.insert(normalize(n), &e.spec.name) {
                    assert_eq!(
                        prev, e.spec.name,
                        "`{n}` is claimed by {prev} and {}",
                        e.spec.name
                    );
                }
            }
        }
    }

    #[test]
    fn brief_aliases_resolve() {
        let cases = [
            ("h200", "H200"),
            ("H100-80GB", "H100-80GB"),
            ("NVIDIA-H100-80GB-HBM3", "H100-80GB"),
            ("NVIDIA H100 80GB HBM3", "H100-80GB"),
            ("nvidia_h100_80gb_hbm3", "H100-80GB"),
            ("NVIDIA H100 PCIe", "H100-PCIe"),
            ("NVIDIA H100 NVL", "H100-NVL"),
            ("A100-40GB", "A100-40GB"),
            ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
            ("NVIDIA A100-PCIE-40GB", "A100-40GB"),
            ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
            ("NVIDIA A100 80GB PCIe", "A100-80GB"),
            ("NVIDIA-A100-SXM4-80GB", "A100-80GB"),
            ("RTX-3090", "RTX-3090"),
            ("3090", "RTX-3090"),
            ("NVIDIA GeForce RTX 3090", "RTX-3090"),
            ("Tesla T4", "T4"),
            ("mi355x", "MI355X"),
        ];
        for (input, want) in cases {
            assert_eq!(
                lookup(input).map(|s| s.name.as_str()),
                Some(want),
                "{input}"
            );
        }
    }

    #[test]
    fn observed_public_names_resolve() {
        // The `gpu` values used in ../shared/validation/observed-public.jsonl.
        for n in [
            "A10",
            "A100-80GB-PCIe",
            "A10G",
            "B200",
            "H100-80GB",
            "H20",
            "H200",
            "L4",
            "MI300X",
            "MI355X",
            "RTX-3090",
            "T4",
        ] {
            assert!(lookup(n).is_some(), "{n}");
        }
    }

    #[test]
    fn required_entries_exist() {
        for n in [
            "H100-80GB",
            "H100-PCIe",
            "H100-NVL",
            "H200",
            "H20",
            "B200",
            "GB200",
            "A100-40GB",
            "A100-80GB",
            "L40S",
            "L4",
            "A10",
            "A10G",
            "RTX-4090",
            "RTX-3090",
            "T4",
            "MI300X",
            "MI325X",
            "MI355X",
        ] {
            assert!(catalog().iter().any(|s| s.name == n), "{n}");
        }
    }

    #[test]
    fn every_entry_is_sourced_and_consistent() {
        for e in entries() {
            let s = &e.spec;
            assert!(s.source.len() > 20, "{}: source", s.name);
            assert!(s.bandwidth_gbs > 0.0, "{}", s.name);
            // CUDA can never see more than the NVML total, and the reserve is under 3 %.
            let nvml_bytes = s.memory_mib * 1024 * 1024;
            assert!(s.cuda_total_bytes <= nvml_bytes, "{}", s.name);
            assert!(s.cuda_total_bytes * 100 >= nvml_bytes * 97, "{}", s.name);
            // GFD labels are the NVML names with spaces as '-'.
            let labels: Vec<String> = e.nvml_names.iter().map(|n| n.replace(' ', "-")).collect();
            assert_eq!(labels, e.k8s_labels, "{}", s.name);
            // AMD parts have no NVML name; an NVIDIA part lacks one only where NVML is absent
            // (Jetson), which only a unified part is, where no NVML name has been observed
            // publicly and its source says so (B100), or where its NVML name is a smaller
            // sibling's, which the name alone must resolve to (RTX 3060 8 and 12 GB): a name is
            // never guessed, and a shared one never reads as the larger card.
            if s.vendor == Vendor::Amd {
                assert!(e.nvml_names.is_empty(), "{}", s.name);
            } else if e.nvml_names.is_empty() {
                let sibling = s
                    .source
                    .split_once("shares its NVML name with ")
                    .and_then(|(_, rest)| rest.split([',', ' ']).next())
                    .and_then(|n| entries().iter().find(|o| o.spec.name == n));
                assert!(
                    e.unified
                        || s.source
                            .contains("no NVML name is listed because none has been observed")
                        || sibling.is_some_and(|o| {
                            !o.nvml_names.is_empty() && o.spec.memory_mib < s.memory_mib
                        }),
                    "{}: an NVIDIA GPU without an NVML name",
                    s.name
                );
            }
            if e.cuda_total_basis == "estimated" {
                assert!(s.source.contains("CUDA total estimated"), "{}", s.name);
            }
        }
    }

    #[test]
    fn published_memory_figures() {
        let h100 = lookup("H100-80GB").unwrap();
        assert_eq!(h100.memory_mib, 81559);
        // torch reports 79.19 GiB total on an H100 80GB HBM3.
        assert!((h100.cuda_total_bytes as f64 / (1u64 << 30) as f64 - 79.19).abs() < 0.01);
        assert_eq!(lookup("H200").unwrap().memory_mib, 143771);
        // Measured on an H200: cuMemGetInfo total = NVML total 150754820096 - reserved 644939776.
        assert_eq!(
            lookup("H200").unwrap().cuda_total_bytes,
            150_754_820_096 - 644_939_776
        );
        assert_eq!(lookup("B200").unwrap().memory_mib, 183359);
        assert!(
            (lookup("RTX-3090").unwrap().cuda_total_bytes as f64 / (1u64 << 30) as f64 - 23.58)
                .abs()
                < 0.01
        );
        assert_eq!(lookup("H200").unwrap().compute_capability, (9, 0));
        assert_eq!(lookup("B200").unwrap().compute_capability, (10, 0));
    }

    #[test]
    fn spec_forms() {
        let cases: [(&str, &str, Option<u32>); 8] = [
            ("h200", "H200", None),
            ("H100-80GB", "H100-80GB", None),
            ("h200x8", "H200", Some(8)),
            ("H100-80GB x8", "H100-80GB", Some(8)),
            ("8xH200", "H200", Some(8)),
            ("8 x H200", "H200", Some(8)),
            ("MI300Xx8", "MI300X", Some(8)),
            ("3090", "RTX-3090", None),
        ];
        for (input, name, count) in cases {
            let sel = parse_spec(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(
                (sel.spec.name.as_str(), sel.count),
                (name, count),
                "{input}"
            );
        }
    }

    #[test]
    fn unknown_names_suggest() {
        let err = parse_spec("H100-80G").unwrap_err();
        match &err {
            GpuError::Unknown { name, suggestions } => {
                assert_eq!(name, "H100-80G");
                assert_eq!(suggestions.first().map(String::as_str), Some("H100-80GB"));
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains("did you mean H100-80GB"));
        assert_eq!(err.exit_code(), 2);
        assert!(matches!(
            parse_spec("h2000x8"),
            Err(GpuError::Unknown { .. })
        ));
        assert!(matches!(parse_spec(""), Err(GpuError::Unknown { .. })));
        match parse_spec("zzzzzzzz") {
            Err(GpuError::Unknown { suggestions, .. }) => assert!(suggestions.is_empty()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_counts_error() {
        assert!(matches!(
            parse_spec("h200x0"),
            Err(GpuError::BadCount { .. })
        ));
        assert!(matches!(
            parse_spec("h200x99999999999"),
            Err(GpuError::BadCount { .. })
        ));
    }
}

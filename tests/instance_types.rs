//! Nodes pinned by their VM size or instance type (`node.kubernetes.io/instance-type`): the GPU
//! comes from the input as it does for GPU product labels, and a default never replaces it.
//! Expected GPUs are from Microsoft's VM size pages (ND H100 v5: 8× H100 80GB; NVads A10 v5:
//! NV36ads one A10, NV6ads a sixth of one).

mod common;
use common::{kvlint, rules};

fn json(args: &[&str]) -> (i32, serde_json::Value) {
    let run = kvlint(args);
    (
        run.code,
        serde_json::from_str(&run.stdout).expect(&run.stderr),
    )
}

#[test]
fn an_aks_vm_size_selector_names_the_gpu_and_wins_over_the_flag() {
    let file = "fixtures/pipeline/aks-nd-h100.yaml";
    let (_, doc) = json(&["check", "--format", "json", "--gpu", "a100-40gb", file]);
    let launch = &doc["launches"][0];
    assert_eq!(launch["gpu"], "H100-80GB");
    assert_eq!(launch["gpu_count"], 2);
    assert_eq!(launch["gpu_source"]["kind"], "input");
    // The VM size's line, not the vendor-only accelerator label above it.
    assert_eq!(launch["gpu_source"]["line"], 11);
    assert_eq!(rules(&doc), ["GPU002"]);
    // The same file without a flag: still the input's GPU.
    let (_, doc) = json(&["check", "--format", "json", file]);
    assert_eq!(doc["launches"][0]["gpu"], "H100-80GB");
}

#[test]
fn a_partial_gpu_vm_size_is_unknown_and_no_default_stands_in() {
    let file = "fixtures/pipeline/aks-affinity-partial-a10.yaml";
    let (code, doc) = json(&["check", "--format", "json", "--gpu", "a10", file]);
    // Of the two sizes the pod may land on, the slice of an A10 is the one planned with.
    assert_eq!(
        doc["launches"][0]["gpu"],
        "Standard_NV6ads_A10_v5 (1/6 of an A10, 4 GB)"
    );
    assert_eq!(rules(&doc), ["INP003"]);
    assert_eq!(code, 1);
}

/// `--gpu` values as users copy them: NVML names verbatim (nvidia-smi --query-gpu=name, from
/// public logs), GKE `cloud.google.com/gke-accelerator` values (GKE docs), Karpenter's
/// `instance-gpu-name`, GPU Feature Discovery labels, instance types with their GPU counts
/// (the clouds' instance pages), and `NAMExN` / `NAME:N` counts.
#[test]
fn names_labels_and_instance_types_resolve_to_the_gpu_and_count() {
    let cases: &[(&str, &str, Option<u32>)] = &[
        ("NVIDIA GeForce RTX 5090", "RTX-5090", None),
        ("nvidia geforce rtx 5090", "RTX-5090", None),
        ("NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada", None),
        ("NVIDIA RTX A6000", "RTX-A6000", None),
        (
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
            "RTX-PRO-6000-Blackwell-Workstation",
            None,
        ),
        (
            "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
            "RTX-PRO-6000-Blackwell-Workstation",
            None,
        ),
        (
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            "RTX-PRO-6000-Blackwell",
            None,
        ),
        ("NVIDIA A40", "A40", None),
        ("NVIDIA L40", "L40", None),
        ("Tesla V100-SXM2-16GB", "V100-16GB", None),
        ("Tesla V100-SXM2-32GB", "V100-32GB", None),
        ("NVIDIA H800", "H800", None),
        ("NVIDIA H20", "H20", None),
        ("NVIDIA H20-3e", "H20-3e", None),
        ("NVIDIA-H20-3e", "H20-3e", None),
        ("NVIDIA A800-SXM4-80GB", "A800-80GB", None),
        ("NVIDIA GH200 480GB", "GH200-96GB", None),
        ("NVIDIA GH200 144G HBM3e", "GH200-144GB", None),
        ("NVIDIA GB10", "GB10", None),
        ("NVIDIA A30", "A30", None),
        ("NVIDIA RTX A4000", "RTX-A4000", None),
        ("NVIDIA RTX A5000", "RTX-A5000", None),
        ("NVIDIA GeForce RTX 4080", "RTX-4080", None),
        ("NVIDIA GeForce RTX 4090 D", "RTX-4090-D", None),
        ("NVIDIA GB300", "GB300", None),
        ("NVIDIA H200 NVL", "H200-NVL", None),
        ("mi250x", "MI250X", None),
        ("MI308X", "MI308X", None),
        ("NVIDIA-GeForce-RTX-5090", "RTX-5090", None),
        (
            "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
            "RTX-PRO-6000-Blackwell",
            None,
        ),
        ("nvidia-tesla-t4", "T4", None),
        ("nvidia-tesla-v100", "V100-16GB", None),
        ("nvidia-tesla-a100", "A100-40GB", None),
        ("nvidia-a100-80gb", "A100-80GB", None),
        ("nvidia-h100-mega-80gb", "H100-80GB", None),
        ("nvidia-h200-141gb", "H200", None),
        ("nvidia-b200", "B200", None),
        ("nvidia-gb200", "GB200", None),
        ("nvidia-rtx-pro-6000", "RTX-PRO-6000-Blackwell", None),
        ("nvidia-l4", "L4", None),
        ("a10g", "A10G", None),
        ("l40s", "L40S", None),
        ("h100", "H100-80GB", None),
        ("A100-80G", "A100-80GB", None),
        ("AMD-Instinct-MI300X-OAM", "MI300X", None),
        ("NVIDIA_TESLA_A100", "A100-40GB", None),
        ("NVIDIA_H100_MEGA_80GB", "H100-80GB", None),
        ("rtx5090x2", "RTX-5090", Some(2)),
        ("H100:8", "H100-80GB", Some(8)),
        ("NVIDIA GeForce RTX 4090 x4", "RTX-4090", Some(4)),
        ("p5.48xlarge", "H100-80GB", Some(8)),
        ("p4d.24xlarge", "A100-40GB", Some(8)),
        ("p4de.24xlarge", "A100-80GB", Some(8)),
        ("p5en.48xlarge", "H200", Some(8)),
        ("p6-b200.48xlarge", "B200", Some(8)),
        ("p6e-gb200.36xlarge", "GB200", Some(4)),
        ("p3.8xlarge", "V100-16GB", Some(4)),
        ("g4dn.12xlarge", "T4", Some(4)),
        ("g5.48xlarge", "A10G", Some(8)),
        ("g6.xlarge", "L4", Some(1)),
        ("g6e.12xlarge", "L40S", Some(4)),
        ("gr6.4xlarge", "L4", Some(1)),
        ("a2-megagpu-16g", "A100-40GB", Some(16)),
        ("a2-ultragpu-8g", "A100-80GB", Some(8)),
        ("a3-megagpu-8g", "H100-80GB", Some(8)),
        ("a3-ultragpu-8g", "H200", Some(8)),
        ("a4-highgpu-8g", "B200", Some(8)),
        ("a4x-highgpu-4g", "GB200", Some(4)),
        ("g2-standard-24", "L4", Some(2)),
        ("Standard_NC24ads_A100_v4", "A100-80GB", Some(1)),
        ("Standard_NC40ads_H100_v5", "H100-NVL", Some(1)),
        ("Standard_ND96isr_H200_v5", "H200", Some(8)),
        ("Standard_ND96isr_MI300X_v5", "MI300X", Some(8)),
        ("Standard_NV36ads_A10_v5", "A10", Some(1)),
        ("Standard_NC64as_T4_v3", "T4", Some(4)),
        ("BM.GPU.H100.8", "H100-80GB", Some(8)),
        ("BM.GPU.A100-v2.8", "A100-80GB", Some(8)),
        ("VM.GPU.A10.2", "A10", Some(2)),
        ("BM.GPU.MI300X.8", "MI300X", Some(8)),
        // Found in public manifests (held-out check): OCI's older and newer shape names, Azure
        // NCv3, and the product labels nodeSelectors write by hand.
        ("BM.GPU.GM4.8", "A100-80GB", Some(8)),
        ("BM.GPU.GB200-v3.4", "GB200", Some(4)),
        ("BM.GPU.GB300.4", "GB300", Some(4)),
        ("Standard_NC6s_v3", "V100-16GB", Some(1)),
        ("Standard_NC24rs_v3", "V100-16GB", Some(4)),
        ("NVIDIA-A100-PCIE-80GB", "A100-80GB", None),
        ("NVIDIA-H100", "H100-80GB", None),
        ("gpu_8x_h100_sxm5", "H100-80GB", Some(8)),
        ("gpu_1x_gh200", "GH200-96GB", Some(1)),
        ("gd-8xh100ib-i128", "H100-80GB", Some(8)),
        ("b200-8x", "B200", Some(8)),
        ("gb200-4x", "GB200", Some(4)),
        ("rtxp6000-8x", "RTX-PRO-6000-Blackwell", Some(8)),
        ("gd-1xgh200", "GH200-96GB", Some(1)),
        // CoreWeave's `gpu.nvidia.com/class` values, Nebius's platform names.
        ("A100_PCIE_80GB", "A100-80GB", None),
        ("A100_NVLINK", "A100-40GB", None),
        ("Tesla_V100_NVLINK", "V100-16GB", None),
        ("RTX_A6000", "RTX-A6000", None),
        ("GH200_480GB", "GH200-96GB", None),
        ("gpu-h100-sxm", "H100-80GB", None),
        ("gpu-b200-sxm", "B200", None),
    ];
    for (input, gpu, count) in cases {
        let sel = kvlint::gpu::parse_spec(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(
            (sel.spec.name.as_str(), sel.count),
            (*gpu, *count),
            "{input}"
        );
    }
    // Unknown stays unknown, with a suggestion, never a default.
    let err = kvlint::gpu::parse_spec("NVIDIA GeForce RTX 5095").unwrap_err();
    assert!(err.to_string().contains("did you mean"), "{err}");
}

/// The second held-out check (issue 24): strings copied from public nvidia-smi output, CoreWeave
/// node selectors, SkyPilot's GCP catalog, Azure's NDv2 page and Lambda's instance types, each
/// with the GPU, count and nvidia-smi total (MiB) the public log or page shows; the lowest where
/// logs differ (ECC on).
#[test]
fn held_out_names_resolve_to_the_gpu_count_and_memory_their_sources_show() {
    let cases: &[(&str, &str, Option<u32>, u64)] = &[
        ("Quadro RTX 8000", "Quadro-RTX-8000", None, 48592),
        ("Quadro RTX 6000", "Quadro-RTX-6000", None, 22698),
        ("Quadro_RTX_5000", "Quadro-RTX-5000", None, 15360),
        ("Tesla P40", "Tesla-P40", None, 22912),
        ("NVIDIA GeForce RTX 2080 Ti", "RTX-2080-Ti", None, 11264),
        ("Tesla V100S-PCIE-32GB", "V100S-32GB", None, 32510),
        (
            "NVIDIA RTX 4000 SFF Ada Generation",
            "RTX-4000-SFF-Ada",
            None,
            20475,
        ),
        ("NVIDIA A2", "A2", None, 15356),
        ("NVIDIA-GeForce-RTX-3070", "RTX-3070", None, 8192),
        ("A100_NVLINK_80GB", "A100-80GB", None, 81920),
        ("H100_NVLINK_80GB", "H100-80GB", None, 81559),
        ("g4-standard-48", "RTX-PRO-6000-Blackwell", Some(1), 97887),
        ("g4-standard-384", "RTX-PRO-6000-Blackwell", Some(8), 97887),
        ("Standard_ND40rs_v2", "V100-32GB", Some(8), 32510),
        ("gpu_1x_a100", "A100-40GB", Some(1), 40960),
        ("gpu_8x_b200_sxm6", "B200", Some(8), 183359),
        // Lambda's `1x RTX 6000 (24 GB)` is the Turing Quadro, not the 48 GB RTX 6000 Ada.
        ("gpu_1x_rtx6000", "Quadro-RTX-6000", Some(1), 22698),
    ];
    for (input, gpu, count, mib) in cases {
        let sel = kvlint::gpu::parse_spec(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(
            (sel.spec.name.as_str(), sel.count, sel.spec.memory_mib),
            (*gpu, *count, *mib),
            "{input}"
        );
    }
}

/// AMD's node labeller writes `amd.com/gpu.product-name` (ROCm/k8s-device-plugin
/// cmd/k8s-node-labeller): a nodeSelector on it names the GPU as GPU Feature Discovery's does.
#[test]
fn an_amd_product_name_label_names_the_gpu() {
    let (_, doc) = json(&[
        "check",
        "--format",
        "json",
        "fixtures/gpus/nodes/amd-product-name.yaml",
    ]);
    let launch = &doc["launches"][0];
    assert_eq!(launch["gpu"], "Radeon-AI-PRO-R9700", "{doc}");
    assert_eq!(launch["gpu_source"]["line"], 10, "{doc}");
}

/// Karpenter's and EKS Auto Mode's `instance-family` label names a family whose sizes share
/// one GPU (`g4dn`: T4s), so the pod's GPU is known though its count per node is not.
#[test]
fn an_instance_family_label_names_the_gpu() {
    let (_, doc) = json(&[
        "check",
        "--format",
        "json",
        "fixtures/gpus/nodes/karpenter-family.yaml",
    ]);
    let launch = &doc["launches"][0];
    assert_eq!(launch["gpu"], "T4", "{doc}");
    assert_eq!(launch["gpu_source"]["line"], 11, "{doc}");
}

/// The 8 GB and 12 GB RTX 3060 report one NVML name, as do the 8 GB and 16 GB RTX 4060 Ti and
/// 5060 Ti: the name alone is the smaller card (a wrong "safe" otherwise), the larger one is named
/// as such or picked by the memory label beside the product label.
#[test]
fn a_name_two_cards_share_reads_as_the_smaller_and_the_memory_label_picks_the_larger() {
    for (input, gpu, mib) in [
        ("NVIDIA GeForce RTX 3060", "RTX-3060", 8192),
        ("rtx-3060-12gb", "RTX-3060-12GB", 12288),
        ("NVIDIA GeForce RTX 4060 Ti", "RTX-4060-Ti", 8188),
        ("NVIDIA-GeForce-RTX-4060-Ti-16GB", "RTX-4060-Ti-16GB", 16380),
        ("NVIDIA GeForce RTX 5060 Ti", "RTX-5060-Ti", 8151),
        ("rtx-5060-ti-16gb", "RTX-5060-Ti-16GB", 16311),
    ] {
        let sel = kvlint::gpu::parse_spec(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!((sel.spec.name.as_str(), sel.spec.memory_mib), (gpu, mib));
    }
    let (_, doc) = json(&[
        "check",
        "--format",
        "json",
        "fixtures/gpus/nodes/rtx3060-by-memory.yaml",
    ]);
    let gpus: Vec<&str> = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["gpu"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(gpus, ["RTX-3060-12GB", "RTX-3060"], "{doc}");
}

/// Unified-memory parts plan on the system memory torch reports (121.63 GiB on a GB10:
/// github.com/MiaAI-Lab/DeepSeek-v4-Flash-One-DGX-Spark/issues/4).
#[test]
fn unified_parts_carry_the_system_memory_torch_reports() {
    let gb10 = kvlint::gpu::parse_spec("NVIDIA GB10").unwrap().spec;
    assert_eq!(
        gb10.cuda_total_bytes,
        (121.63 * (1u64 << 30) as f64) as u64 / (1 << 20) * (1 << 20)
    );
    let entry = kvlint::gpu::catalog::embedded_entry("GB10").unwrap();
    assert!(entry.unified);
    assert!(
        !kvlint::gpu::catalog::embedded_entry("GH200")
            .unwrap()
            .unified
    );
}

fn launch(file: &str) -> (i32, serde_json::Value, serde_json::Value) {
    let (code, doc) = json(&["check", "--format", "json", "--gpu", "h200", file]);
    (code, doc["launches"][0].clone(), doc)
}

/// `nodeSelectorTerms` are ORed: the pod is planned on the least-memory GPU any term admits,
/// and a term that admits nodes of any GPU makes the GPU unknown (issue 29, class 2).
#[test]
fn ored_node_selector_terms_plan_on_the_least_gpu_or_report_it_unknown() {
    let (code, l, doc) = launch("fixtures/gpus/nodes/or-terms.yaml");
    assert_eq!(l["gpu"], "A100-40GB");
    assert_eq!(l["gpu_source"]["line"], 20);
    assert_eq!(
        rules(&doc),
        ["GPU002"],
        "the h200 default disagrees: a warning"
    );
    assert_eq!(code, 0);
    for (file, line) in [
        ("fixtures/gpus/nodes/or-open-term.yaml", 17),
        ("fixtures/gpus/nodes/or-match-fields.yaml", 17),
        ("fixtures/gpus/nodes/not-in.yaml", 13),
        ("fixtures/gpus/nodes/memory-gt.yaml", 14),
    ] {
        let (code, l, doc) = launch(file);
        assert_eq!(rules(&doc), ["INP003"], "{file}");
        assert_eq!(doc["findings"][0]["line"], line, "{file}");
        assert!(l["verdict"] != "fits", "{file}: {l}");
        assert_eq!(code, 1, "{file}");
    }
    // The nodeSelector is ANDed with every term: zone-only terms keep its GPU.
    let (_, l, _) = launch("fixtures/gpus/nodes/selector-and-terms.yaml");
    assert_eq!(l["gpu"], "H200");
    let (_, l, _) = launch("fixtures/gpus/nodes/gke-shared.yaml");
    assert_eq!(
        l["gpu"], "T4",
        "a GKE value and a -SHARED product label: the smaller"
    );
    let (_, l, _) = launch("fixtures/gpus/nodes/karpenter-memory.yaml");
    assert_eq!(l["gpu"], "A100-80GB", "Karpenter's a100 with 81920 MiB");
}

#[test]
fn the_node_types_gpu_count_is_the_default_and_a_pod_cannot_ask_for_more() {
    let (code, l, doc) = launch("fixtures/gpus/nodes/instance-count.yaml");
    assert_eq!(
        (l["gpu"].as_str(), l["gpu_count"].as_u64()),
        (Some("H100-80GB"), Some(8))
    );
    assert!(!rules(&doc).contains(&"PAR002"), "{doc}");
    assert_eq!(code, 0, "{doc}");
    let (_, l, doc) = launch("fixtures/gpus/nodes/product-and-instance.yaml");
    assert_eq!(
        (l["gpu"].as_str(), l["gpu_count"].as_u64()),
        (Some("A100-80GB"), Some(8))
    );
    assert!(!rules(&doc).contains(&"PAR002"), "{doc}");
    let (code, l, doc) = launch("fixtures/gpus/nodes/more-than-node.yaml");
    assert_eq!(l["gpu"], "L4");
    let par = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "PAR002")
        .unwrap_or_else(|| panic!("{doc}"));
    assert!(
        par["message"]
            .as_str()
            .unwrap()
            .contains("nodes with 4 GPUs"),
        "{par}"
    );
    assert_eq!(code, 1);
}

/// CoreWeave nodes: the `gpu.nvidia.com/class` label (ORed values: the smaller GPU), an instance
/// type that gives GPU and count, and a GPU instance type the catalog lacks (INP003, no default).
#[test]
fn coreweave_labels_and_instance_types_name_the_gpu_or_report_it_unknown() {
    let (_, l, doc) = launch("fixtures/gpus/nodes/coreweave-class.yaml");
    assert_eq!(l["gpu"], "A40", "{doc}");
    assert_eq!(l["gpu_source"]["line"], 19, "the A40 value");
    let (code, l, doc) = launch("fixtures/gpus/nodes/coreweave-instance.yaml");
    assert_eq!(
        (l["gpu"].as_str(), l["gpu_count"].as_u64()),
        (Some("H200"), Some(8)),
        "{doc}"
    );
    assert_eq!(code, 0, "{doc}");
    let (code, l, doc) = launch("fixtures/gpus/nodes/coreweave-unmapped.yaml");
    assert_eq!(l["gpu"], "gd-8xa100-i128");
    assert_eq!(rules(&doc), ["INP003"], "{doc}");
    assert_eq!(code, 1);
}

/// Every name the catalog's sources give a GPU (tools/gpu_catalog/gpus.toml: NVML names, aliases;
/// the generated GFD labels of src/gpu/catalog.toml) and every instance type
/// (tools/gpu_catalog/instances.toml) resolves to that GPU and count: verbatim, upper and lower
/// case, and with a count (`NAME x8`, `NAMEx8`, `8xNAME`). A name two GPUs would both answer to,
/// or one the count parser splits wrongly, fails here.
#[test]
fn every_catalog_name_and_instance_type_resolves_to_its_gpu_and_count() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |p: &str| -> toml::Table {
        toml::from_str(&std::fs::read_to_string(format!("{root}/{p}")).unwrap()).unwrap()
    };
    let strings = |row: &toml::Table, key: &str| -> Vec<String> {
        row.get(key)
            .and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let rows = |t: &toml::Table, key: &str| -> Vec<toml::Table> {
        t[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_table().unwrap().clone())
            .collect()
    };
    let resolves = |input: &str, gpu: &str, count: Option<u32>| {
        let sel = kvlint::gpu::parse_spec(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(
            (sel.spec.name.as_str(), sel.count),
            (gpu, count),
            "{input:?}"
        );
    };
    let generated = read("src/gpu/catalog.toml");
    let mut names = 0;
    for row in rows(&read("tools/gpu_catalog/gpus.toml"), "gpu") {
        let gpu = row["name"].as_str().unwrap();
        let labels = rows(&generated, "gpu")
            .into_iter()
            .find(|g| g["name"].as_str() == Some(gpu))
            .map(|g| strings(&g, "k8s_labels"))
            .unwrap_or_default();
        let all: Vec<String> = [vec![gpu.to_string()], strings(&row, "nvml_names")]
            .into_iter()
            .chain([strings(&row, "aliases"), labels])
            .flatten()
            .collect();
        for name in &all {
            names += 1;
            for variant in [name.clone(), name.to_lowercase(), name.to_uppercase()] {
                resolves(&variant, gpu, None);
            }
            resolves(&format!("{name} x8"), gpu, Some(8));
            resolves(&format!("{name}x2"), gpu, Some(2));
            resolves(&format!("8x{name}"), gpu, Some(8));
            resolves(&format!("{name}:4"), gpu, Some(4));
        }
    }
    let mut instances = 0;
    for row in rows(&read("tools/gpu_catalog/instances.toml"), "instance") {
        let name = row["name"].as_str().unwrap();
        let gpu = row["gpu"].as_str().unwrap();
        let count = u32::try_from(row["count"].as_integer().unwrap()).unwrap();
        instances += 1;
        resolves(name, gpu, Some(count));
        resolves(&name.to_lowercase(), gpu, Some(count));
    }
    // The sources are read, not an empty table: 72 GPUs' names and 115 instance types today.
    assert!(
        names > 300 && instances >= 115,
        "{names} names, {instances} instance types"
    );
}

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

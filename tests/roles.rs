//! The role an input gives a launch (prefill or decode), in every input shape: a wrapper's role
//! flag in a script, a role label on a pod, a compose service's name; the engine's own setting
//! first. The role shows in the JSON launch and picks the rules that apply (KV003 is prefill's).

mod common;
use common::kvlint;

/// `role` of each launch in `check --format json`, and the deployments' role maps.
fn roles(path: &str) -> (Vec<String>, serde_json::Value) {
    let run = kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", path]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
    let roles = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["role"].as_str().unwrap_or("-").to_string())
        .collect();
    let deployments = doc["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["roles"].clone())
        .collect();
    (roles, deployments)
}

#[test]
fn dynamo_vllm_role_flags_count_in_a_shell_script() {
    let (roles, deps) = roles("fixtures/extract/roles/dynamo-workers.sh");
    assert_eq!(roles, ["prefill", "decode"]);
    assert_eq!(deps, serde_json::json!([{"prefill": [0], "decode": [1]}]));
}

#[test]
fn dynamo_trtllm_disaggregation_mode_is_the_role() {
    let (roles, _) = roles("fixtures/extract/roles/dynamo-trtllm.sh");
    assert_eq!(roles, ["decode"]);
}

#[test]
fn compose_service_names_give_the_role_the_engine_leaves_open() {
    // kv_both says nothing; the names do. The third service's name says decode, but its engine
    // produces KV (kv_producer): the engine's word wins.
    let (roles, deps) = roles("fixtures/extract/roles/compose-nixl.yaml");
    assert_eq!(roles, ["prefill", "decode", "prefill"]);
    assert_eq!(
        deps,
        serde_json::json!([{"prefill": [0, 2], "decode": [1]}])
    );
}

#[test]
fn pod_role_labels_give_the_role() {
    let (roles, deps) = roles("fixtures/extract/roles/llmd-labels.yaml");
    assert_eq!(roles, ["prefill", "decode"]);
    assert_eq!(deps, serde_json::json!([{"prefill": [0], "decode": [1]}]));
}

/// A prefill by its label alone gets prefill's headroom rule (KV003), as one whose engine says
/// prefill does.
#[test]
fn a_role_from_the_input_picks_the_rules() {
    let run = kvlint(&[
        "check",
        "--format",
        "json",
        "fixtures/extract/roles/prefill-headroom.yaml",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
    let rules = common::rules(&doc);
    assert_eq!(rules, ["KV003"], "{}", run.stdout);
}

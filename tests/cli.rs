//! Whole CLI runs, snapshot-tested: stdout, stderr and exit code together.

mod common;

use common::{kvlint, kvlint_stdin};

const INCIDENT: &[&str] = &[
    "check",
    "--gpu",
    "h200x8",
    "--engine-version",
    "0.5.20",
    "fixtures/incident/prefill.sh",
];

#[test]
fn the_incident_is_refused_with_kv001_pointing_at_the_context() {
    let run = kvlint(INCIDENT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("KV001"), "{}", run.stdout);
    insta::assert_snapshot!(run.transcript(INCIDENT));
}

#[test]
fn the_incident_as_json_states_pool_and_context() {
    let mut args = INCIDENT.to_vec();
    args.insert(1, "--format");
    args.insert(2, "json");
    let run = kvlint(&args);
    assert_eq!(run.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["schema_version"], 1);
    let launch = &doc["launches"][0];
    let pool = launch["pool_tokens"].as_u64().unwrap();
    assert!((600_000..=750_000).contains(&pool), "incident pool {pool}");
    assert_eq!(launch["context_length"], 1_048_576);
    assert_eq!(launch["role"], "prefill");
    let kv001 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "KV001")
        .unwrap();
    assert_eq!(kv001["level"], "deny");
    // The frame points at `--context-length 1048576`, line 17 of the script.
    assert_eq!(
        (kv001["line"].as_u64(), kv001["column"].as_u64()),
        (Some(17), Some(3))
    );
    insta::assert_json_snapshot!(doc, { ".launches[].assumptions" => "[assumptions]" });
}

#[test]
fn capacity_prints_the_plan_of_one_launch() {
    let args = [
        "capacity",
        "--gpu",
        "h100-80gb",
        "--engine-version",
        "0.19.0",
        "--",
        "vllm",
        "serve",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--max-model-len",
        "8192",
        "--gpu-memory-utilization",
        "0.95",
        "--no-enable-prefix-caching",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.transcript(&args));
    let mut json_args = args.to_vec();
    json_args.insert(1, "--format");
    json_args.insert(2, "json");
    let plan: serde_json::Value = serde_json::from_str(&kvlint(&json_args).stdout).unwrap();
    for key in [
        "engine",
        "engine_version",
        "role",
        "model",
        "gpu",
        "tp",
        "context_length",
        "kv_bytes_per_token",
        "pool_tokens",
        "pool_tokens_low",
        "pool_tokens_high",
        "budget_bytes",
        "weights_bytes",
        "assumptions",
    ] {
        assert!(plan.get(key).is_some(), "capacity JSON lacks {key}");
    }
    // Llama 3.1 8B: 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes.
    assert_eq!(plan["kv_bytes_per_token"], 131_072);
}

#[test]
fn capacity_with_an_unknown_model_exits_2_with_one_line() {
    let run = kvlint(&[
        "capacity",
        "--gpu",
        "h100-80gb",
        "--",
        "vllm",
        "serve",
        "my-org/private-7b",
    ]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("pass --model-config"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

#[test]
fn capacity_with_an_unknown_gpu_exits_2_with_one_line() {
    let run = kvlint(&[
        "capacity",
        "--gpu",
        "h300",
        "--",
        "vllm",
        "serve",
        "Qwen/Qwen3-8B",
    ]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("h300"), "{}", run.stderr);
}

#[test]
fn capacity_without_a_gpu_exits_2_with_one_line() {
    let run = kvlint(&["capacity", "--", "vllm", "serve", "Qwen/Qwen3-8B"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

#[test]
fn check_with_an_unreadable_path_exits_2_naming_it() {
    let run = kvlint(&["check", "--gpu", "h200", "no/such/file.sh"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1);
    assert!(run.stderr.contains("no/such/file.sh"), "{}", run.stderr);
}

#[test]
fn check_with_bad_arguments_exits_2() {
    assert_eq!(kvlint(&["check", "--format", "xml", "fixtures"]).code, 2);
    assert_eq!(
        kvlint(&[
            "check",
            "--gpu",
            "h200",
            "--engine-version",
            "banana",
            "fixtures/incident"
        ])
        .code,
        2
    );
}

#[test]
fn check_reads_stdin() {
    let run = kvlint_stdin(
        &["check", "--gpu", "h100-80gb", "-"],
        Some("vllm serve Qwen/Qwen3-8B --max-model-len 32768\n"),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("<stdin>:1: vllm"), "{}", run.stdout);
}

#[test]
fn one_bad_input_does_not_hide_the_other_launches() {
    let args = [
        "check",
        "--gpu",
        "h100-80gb",
        "--format",
        "json",
        "fixtures/INP001/fire-broken.yaml",
        "fixtures/INP002",
        "fixtures/KV005/pass-within-model.sh",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let rules: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"INP001") && rules.contains(&"INP002"),
        "{rules:?}"
    );
    // The unknown model's launch is still listed, with nulls for what could not be computed.
    let launches = doc["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 3, "{launches:#?}");
    assert!(launches
        .iter()
        .any(|l| l["model"].is_null() && l["pool_tokens"].is_null()));
    assert!(launches.iter().any(|l| l["pool_tokens"].as_u64().is_some()));
}

#[test]
fn explain_prints_the_rule_docs() {
    let run = kvlint(&["explain", "KV001"]);
    assert_eq!(run.code, 0);
    insta::assert_snapshot!(run.stdout);
    assert_eq!(
        kvlint(&["explain", "pool-below-context"]).stdout,
        run.stdout
    );
    assert_eq!(kvlint(&["explain", "NOPE01"]).code, 2);
}

#[test]
fn rules_json_lists_every_rule_file() {
    let run = kvlint(&["rules", "--format", "json"]);
    assert_eq!(run.code, 0);
    let rules: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let files = std::fs::read_dir(common::root().join("rules"))
        .unwrap()
        .count();
    assert_eq!(rules.as_array().unwrap().len(), files);
    assert!(rules
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["docs"]["what"].is_string()));
}

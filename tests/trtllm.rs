//! TensorRT-LLM launches end to end: command lines, engine YAML in files and ConfigMaps, plans.

mod common;

use common::kvlint;
use kvlint::engine::{self, ParseContext, SettingValue};
use kvlint::extract;
use kvlint::source::Sources;

fn capacity(argv: &[&str]) -> serde_json::Value {
    let mut args = vec!["capacity", "--gpu", "h100-80gb", "--format", "json", "--"];
    args.extend_from_slice(argv);
    let run = kvlint(&args);
    // 1: the launch is refused (its pool is still printed).
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    match v {
        serde_json::Value::Array(mut a) => a.remove(0),
        other => other,
    }
}

#[test]
fn trtllm_serve_plans_with_blocks_of_32_and_the_free_memory_fraction() {
    let p = capacity(&[
        "trtllm-serve",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--kv_cache_free_gpu_memory_fraction",
        "0.5",
        "--max_seq_len",
        "32768",
    ]);
    assert_eq!(p["engine"], "trtllm");
    // 32 layers × 8 KV heads × 128 × K and V × 2 bytes.
    assert_eq!(p["kv_bytes_per_token"], 131_072);
    assert_eq!(p["page_size"], 32);
    assert_eq!(p["context_length"], 32_768);
    assert_eq!(p["memory_fraction"], 0.5);
    let pool = p["pool_tokens"].as_u64().unwrap();
    assert_eq!(pool % 32, 0);
    // Half of what is left after the weights (about 15 GiB) and the profile run on 79.2 GiB.
    let budget = p["budget_bytes"].as_f64().unwrap() / (1u64 << 30) as f64;
    assert!((29.0..32.5).contains(&budget), "{budget}");
}

#[test]
fn kv_cache_max_tokens_caps_the_pool() {
    let dir = std::env::temp_dir().join(format!("kvlint-trt-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = dir.join("cap.yaml");
    std::fs::write(&yaml, "kv_cache_config:\n  max_tokens: 100010\n").unwrap();
    let p = capacity(&[
        "trtllm-serve",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--config",
        yaml.to_str().unwrap(),
    ]);
    std::fs::remove_dir_all(&dir).ok();
    // min(fraction × free, 100,010 tokens) in whole blocks of 32.
    assert_eq!(p["pool_tokens"], 100_000);
}

#[test]
fn the_pool_is_checked_against_max_seq_len_with_the_silent_clamp_named() {
    let run = kvlint(&[
        "check",
        "--gpu",
        "l4",
        "--format",
        "json",
        "fixtures/KV001/fire-trtllm-l4.sh",
    ]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "KV001");
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("TensorRT-LLM would start anyway and silently lower max_seq_len"));
}

/// The Dynamo TRT-LLM example: its ConfigMap is mounted at /workspace/ while the argument names a
/// path under the working directory, so the engine YAML is not the ConfigMap's file (the file's
/// own header says so). With the argument pointed at the mounted key, the YAML is read.
#[test]
#[ignore = "reads ../shared"]
fn dynamo_configmap_example() {
    let shared = std::env::var("KVLINT_SHARED").unwrap_or_else(|_| "../shared".into());
    let path = format!("{shared}/manifests/dynamo-dgd-trtllm-configmap.yaml");
    let text = std::fs::read_to_string(&path).unwrap();

    let parse = |text: &str| {
        let mut sources = Sources::default();
        let file = sources.add(path.clone(), text.to_string());
        let found = extract::extract(file, &sources);
        assert_eq!(found.launches.len(), 1);
        let launch = &found.launches[0];
        assert_eq!(launch.engine.name(), "trtllm");
        let mut cx = ParseContext {
            sources: &mut sources,
            base_dir: None,
        };
        engine::parse(launch, None, &mut cx)
    };

    let as_written = parse(&text);
    let f = &as_written.findings[0];
    assert_eq!(f.rule, "CFG006");
    let reason = f.get("reason").unwrap();
    assert!(
        reason.contains("/workspace/examples/backends/trtllm/examples/backends/trtllm/engine_configs/qwen3/agg.yaml"),
        "{reason}"
    );
    assert!(
        reason.contains("ConfigMap nvidia-config at /workspace/ (keys: agg.yaml)"),
        "{reason}"
    );

    let mounted = text.replace(
        "./examples/backends/trtllm/engine_configs/qwen3/agg.yaml",
        "/workspace/agg.yaml",
    );
    let p = parse(&mounted);
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    let a = &p.args;
    assert_eq!(a.text("model"), Some("Qwen/Qwen3-0.6B"));
    assert_eq!(
        a.float("kv_cache_config.free_gpu_memory_fraction"),
        Some(0.95)
    );
    assert_eq!(a.int("max_num_tokens"), Some(8192));
    assert_eq!(a.int("max_batch_size"), Some(16));
    assert_eq!(a.int("tensor_parallel_size"), Some(1));
    assert_eq!(
        a.get("enable_attention_dp").map(|s| &s.value),
        Some(&SettingValue::Flag(false))
    );
    assert_eq!(a.int("cuda_graph_config.max_batch_size"), Some(16));
}

fn check_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["check", "--gpu", "h100-80gb", "--format", "json"];
    all.extend_from_slice(args);
    let run = kvlint(&all);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("json")
}

#[test]
fn a_misspelt_kv_cache_field_in_the_engine_yaml_is_refused_where_it_is_written() {
    // KvCacheConfig is a pydantic model with extra="forbid": TensorRT-LLM exits on the file.
    let v = check_json(&[
        "--engine-version",
        "1.2.0",
        "fixtures/CFG001/fire-trtllm-yaml-typo.sh",
    ]);
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "CFG001");
    assert_eq!(f["file"], "trtllm-kv-typo.yaml");
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(4), Some(3))
    );
    assert!(f["help"]
        .as_str()
        .unwrap()
        .contains("kv_cache_config.free_gpu_memory_fraction"));
    assert_eq!(f["level"], "deny");
    // The misspelt 0.6 is not a fraction the engine would read: the plan keeps the 0.9 default,
    // where the correctly spelt file plans with 0.6.
    assert_eq!(v["launches"][0]["memory_fraction"], 0.9);
    let spelled = check_json(&[
        "--engine-version",
        "1.2.0",
        "fixtures/CFG001/pass-trtllm-yaml-spelled.sh",
    ]);
    assert_eq!(spelled["launches"][0]["memory_fraction"], 0.6);
    assert_eq!(spelled["findings"].as_array().map(Vec::len), Some(0));
}

#[test]
fn the_command_line_fraction_survives_a_kv_cache_block_from_1_2_only() {
    let at = |release: &str| {
        let v = check_json(&[
            "--engine-version",
            release,
            "fixtures/TRT001/fire-cli-fraction-dropped.sh",
        ]);
        let rules: Vec<String> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect();
        (v["launches"][0]["memory_fraction"].as_f64(), rules)
    };
    // update_llm_args_with_extra_dict: `llm_args | yaml` in 1.1, `base_kv_config | yaml` in 1.2.
    assert_eq!(at("1.1.0"), (Some(0.9), vec!["TRT001".to_string()]));
    assert_eq!(at("1.2.0"), (Some(0.5), vec![]));
}

/// A platform's LLM-API options are the mapping its input's reader read: a nested block keeps
/// every field (read back from the block's text, a Truss `kv_cache_config` of two fields lost its
/// second, the fraction), and a Python `KvCacheConfig(...)` sets the fields a YAML block does.
#[test]
fn llm_api_options_of_a_platform_keep_every_nested_field() {
    let dir = tempfile::tempdir().unwrap();
    let truss = dir.path().join("config.yaml");
    std::fs::write(
        &truss,
        "model_name: Qwen/Qwen3-8B\nresources:\n  accelerator: H100:1\ntrt_llm:\n  runtime:\n    max_seq_len: 16384\n    patch_kwargs:\n      kv_cache_config:\n        enable_block_reuse: true\n        free_gpu_memory_fraction: 0.6\n",
    )
    .unwrap();
    let python = dir.path().join("offline.py");
    std::fs::write(
        &python,
        "from tensorrt_llm import LLM\nfrom tensorrt_llm.llmapi import KvCacheConfig\n\nllm = LLM(\"Qwen/Qwen3-8B\", max_seq_len=16384, kv_cache_config=KvCacheConfig(enable_block_reuse=True, free_gpu_memory_fraction=0.6))\n",
    )
    .unwrap();
    for f in [&truss, &python] {
        let v = check_json(&["--engine-version", "trtllm=1.0.0", f.to_str().unwrap()]);
        assert_eq!(v["launches"].as_array().map(Vec::len), Some(1), "{v:#}");
        assert_eq!(v["launches"][0]["memory_fraction"], 0.6, "{}", f.display());
    }
}

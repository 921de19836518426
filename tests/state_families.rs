//! The Mamba2 hybrids that issue 25 left INP008 and kvlint now plans (Zamba2 and Bamba on vLLM),
//! each against arithmetic worked by hand from the engine's code; the same families on releases
//! that do not register them, and the attention-free Mamba models, stay INP008 by name.

use std::process::Command;

fn report(config: &serde_json::Value, launch: &str, gpu: &str, version: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.json");
    std::fs::write(&cfg, config.to_string()).unwrap();
    let sh = dir.path().join("launch.sh");
    std::fs::write(&sh, launch).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kvlint"))
        .args([
            "check",
            "--offline",
            "--gpu",
            gpu,
            "--engine-version",
            version,
        ])
        .args(["--format", "json", "--model-config"])
        .arg(&cfg)
        .arg(&sh)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn assumption(plan: &serde_json::Value, term: &str) -> Option<f64> {
    plan["assumptions"]
        .as_array()?
        .iter()
        .find(|a| a["term"] == term)?["value"]
        .as_f64()
}

/// The INP008 finding of a refused launch, which has no pool.
fn refused(report: &serde_json::Value) -> String {
    let f = &report["findings"][0];
    assert_eq!(f["rule"], "INP008", "{report}");
    assert_eq!(f["level"], "deny");
    assert!(report["launches"][0]["pool_tokens"].is_null(), "{report}");
    format!("{} {}", f["message"], f["help"])
}

/// transformers `Zamba2Config()` written out (its "Zamba2-2.7B style configuration": hidden
/// 2,560, 54 layers of which 9 "hybrid", 32 heads, 8 Mamba heads, 1 group, state 64, kernel 4).
fn zamba2() -> serde_json::Value {
    let mut types = vec!["mamba"];
    for _ in 0..7 {
        types.extend(["mamba"; 5]);
        types.push("hybrid");
    }
    types.extend(["mamba", "mamba", "mamba", "mamba", "hybrid"]);
    types.extend(["mamba", "mamba", "mamba", "hybrid", "mamba", "mamba"]);
    serde_json::json!({"architectures": ["Zamba2ForCausalLM"], "model_type": "zamba2",
        "num_hidden_layers": 54, "hidden_size": 2560, "num_attention_heads": 32,
        "intermediate_size": 10240, "vocab_size": 32000, "max_position_embeddings": 4096,
        "mamba_d_state": 64, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_ngroups": 1,
        "n_mamba_heads": 8, "num_mem_blocks": 1, "adapter_rank": 128,
        "use_shared_attention_adapter": false, "hidden_act": "gelu",
        "tie_word_embeddings": true, "torch_dtype": "bfloat16", "layers_block_type": types})
}

/// transformers `BambaConfig()` defaults (Bamba-9B's shape: hidden 4,096, 32 layers, 32 heads,
/// 8 KV heads, 128 Mamba heads of "auto" = 64, 1 group, state 256, kernel 4) with attention on
/// layers 9, 18 and 27.
fn bamba() -> serde_json::Value {
    serde_json::json!({"architectures": ["BambaForCausalLM"], "model_type": "bamba",
        "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128000,
        "max_position_embeddings": 262144, "mamba_n_heads": 128, "mamba_d_head": "auto",
        "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_expand": 2,
        "attn_layer_indices": [9, 18, 27], "tie_word_embeddings": false,
        "torch_dtype": "bfloat16"})
}

/// Zamba2 on vLLM 0.33.0 at TP 1 (bf16), worked by hand:
/// - KV (`zamba2.py :: Zamba2Attention.__init__`: one `Attention` per hybrid layer, no GQA,
///   head size `attention_head_dim` = 2 × 2,560 / 32 = 160): 2 × 32 × 160 × 2 B = 20,480 B per
///   token and layer; × 9 hybrid layers = 184,320 B.
/// - State page (`Zamba2ForCausalLM.get_mamba_state_shape_from_config` →
///   `MambaStateShapeCalculator.mamba2_state_shape`; `mamba2_state_dtype`: the SSM state's `auto`
///   follows the bf16 conv state): conv (5,120 + 2·1·64) × 3 = 15,744, SSM 8 × 640 × 64 =
///   327,680; (15,744 + 327,680) × 2 B = 686,848 B.
/// - Attention block (`update_block_size_for_backend`): 16 × ⌈686,848 / (16 × 20,480)⌉ = 48.
/// - Every layer group shares that page size, so each of the 54 mixer layers takes a page as
///   large as an attention page: kvlint's `kv_bytes_per_token` is (9 + 54) × 20,480 = 1,290,240.
///
/// SGLang 0.5.23 does not register Zamba2ForCausalLM: INP008, not a plan.
#[test]
fn zamba2_plans_on_vllm_and_is_refused_where_unregistered() {
    let vllm = "vllm serve Zyphra/Zamba2-2.7B --max-model-len 4096\n";
    let r = report(&zamba2(), vllm, "h200", "0.33.0");
    let plan = &r["launches"][0];
    assert_eq!(plan["verdict"], "passes", "{r}");
    assert_eq!(plan["kv_bytes_per_token"], 1_290_240);
    assert_eq!(assumption(plan, "attention_block_size"), Some(48.0));
    let sglang =
        "python3 -m sglang.launch_server --model-path Zyphra/Zamba2-2.7B --context-length 4096\n";
    let why = refused(&report(&zamba2(), sglang, "h200", "0.5.23"));
    assert!(why.contains("Zamba2ForCausalLM"), "{why}");
    assert!(why.contains("SGLang 0.5.23 does not register it"), "{why}");
}

/// Bamba on vLLM 0.23.0 (the last release that registers it) at TP 1, worked by hand:
/// - KV (`bamba.py :: BambaAttentionDecoderLayer.__init__`: head_dim = 4,096 / 32 = 128, 8 KV
///   heads): 2 × 8 × 128 × 2 B = 4,096 B per token and layer; × 3 = 12,288 B.
/// - State page (`BambaForCausalLM.get_mamba_state_shape_from_config`): conv (8,192 + 2·256) × 3
///   = 26,112, SSM 128 × 64 × 256 = 2,097,152; (26,112 + 2,097,152) × 2 B = 4,246,528 B.
/// - Attention block: 16 × ⌈4,246,528 / (16 × 4,096)⌉ = 16 × 65 = 1,040; with pages of one
///   size on all 32 layers, `kv_bytes_per_token` is (3 + 29) × 4,096 = 131,072.
///
/// vLLM 0.33.0 and SGLang 0.5.23 do not register BambaForCausalLM: INP008.
#[test]
fn bamba_plans_on_the_vllm_releases_that_register_it() {
    let vllm = "vllm serve ibm-ai-platform/Bamba-9B --max-model-len 8192\n";
    let r = report(&bamba(), vllm, "h200", "0.23.0");
    let plan = &r["launches"][0];
    assert_eq!(plan["verdict"], "passes", "{r}");
    assert_eq!(plan["kv_bytes_per_token"], 131_072);
    assert_eq!(assumption(plan, "attention_block_size"), Some(1040.0));
    // Bamba-9B's model card (https://huggingface.co/ibm-fms/Bamba-9B, README) gives 9.78B
    // parameters for this shape; the bf16 weights kvlint counts are within 1 % of that.
    let params = plan["weights_bytes"].as_f64().unwrap() / 2.0;
    assert!((9.78e9 * 0.99..9.78e9 * 1.01).contains(&params), "{params}");
    let why = refused(&report(&bamba(), vllm, "h200", "0.33.0"));
    assert!(why.contains("vLLM 0.33.0 does not register it"), "{why}");
    let sglang = "python3 -m sglang.launch_server --model-path ibm-ai-platform/Bamba-9B --context-length 8192\n";
    let why = refused(&report(&bamba(), sglang, "h200", "0.5.23"));
    assert!(why.contains("SGLang 0.5.23 does not register it"), "{why}");
}

/// Jamba is registered by vLLM only (architecture table): on SGLang its Mamba1 state would have
/// no pool, so the launch is INP008 rather than a plan.
#[test]
fn jamba_on_sglang_is_refused_by_name() {
    let config: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("fixtures/models/hybrids/jamba-v0.1.json").unwrap(),
    )
    .unwrap();
    let sglang =
        "python3 -m sglang.launch_server --model-path ai21labs/Jamba-v0.1 --context-length 8192\n";
    let why = refused(&report(&config, sglang, "h200x8", "0.5.23"));
    assert!(why.contains("JambaForCausalLM"), "{why}");
    assert!(why.contains("does not register it"), "{why}");
}

/// Attention-free models stay INP008 on both engines and say what kvlint would need (a slot
/// check for a model with no KV cache): a `Mamba2ForCausalLM` in Codestral-Mamba's shape, and a
/// `MambaForCausalLM` in mamba-130m-hf's, whose config.json names no attention heads at all.
#[test]
fn attention_free_mamba_is_refused_with_what_kvlint_would_need() {
    let mamba2 = serde_json::json!({"architectures": ["Mamba2ForCausalLM"],
        "model_type": "mamba2", "num_hidden_layers": 64, "hidden_size": 4096,
        "num_heads": 128, "head_dim": 64, "n_groups": 8, "state_size": 128, "expand": 2,
        "conv_kernel": 4, "vocab_size": 32768, "torch_dtype": "bfloat16"});
    let mamba1 = serde_json::json!({"architectures": ["MambaForCausalLM"],
        "model_type": "mamba", "num_hidden_layers": 24, "hidden_size": 768,
        "intermediate_size": 1536, "state_size": 16, "conv_kernel": 4, "expand": 2,
        "vocab_size": 50280});
    for (config, arch) in [(mamba2, "Mamba2ForCausalLM"), (mamba1, "MambaForCausalLM")] {
        for (launch, version) in [
            ("vllm serve org/mamba --max-model-len 8192\n", "0.33.0"),
            (
                "python3 -m sglang.launch_server --model-path org/mamba --context-length 8192\n",
                "0.5.23",
            ),
        ] {
            let why = refused(&report(&config, launch, "h200", version));
            assert!(why.contains(arch), "{why}");
            assert!(why.contains("attention-free"), "{why}");
        }
    }
}

/// kvlint.toml may assert a layout for an unmodelled architecture, but an attention-free model
/// has no KV pool to plan whatever the assertion says: still INP008, never a pool.
#[test]
fn an_asserted_layout_does_not_plan_an_attention_free_model() {
    let dir = tempfile::tempdir().unwrap();
    let config = serde_json::json!({"architectures": ["FalconMambaForCausalLM"],
        "model_type": "falcon_mamba", "num_hidden_layers": 64, "hidden_size": 4096,
        "intermediate_size": 8192, "state_size": 16, "conv_kernel": 4, "expand": 16,
        "vocab_size": 65024});
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    std::fs::write(
        dir.path().join("kvlint.toml"),
        "[models]\n\"tiiuae/falcon-mamba-7b\" = { config = \"config.json\", layout = \"standard\" }\n",
    )
    .unwrap();
    let sh = dir.path().join("launch.sh");
    std::fs::write(
        &sh,
        "vllm serve tiiuae/falcon-mamba-7b --max-model-len 8192\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kvlint"))
        .args([
            "check",
            "--offline",
            "--gpu",
            "h200",
            "--engine-version",
            "0.33.0",
        ])
        .args(["--format", "json", "--config"])
        .arg(dir.path().join("kvlint.toml"))
        .arg(&sh)
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let why = refused(&r);
    assert!(why.contains("no attention layer"), "{why}");
}

/// Plamo2 on vLLM 0.26.0 (the last release that registers it) at TP 1, worked by hand from
/// `plamo2.py`: attention on the odd layers of 16 (`is_mamba`, `mamba_step` 2), 1 KV head of
/// `hidden_size_per_head` 128: 2 × 1 × 128 × 2 B = 512 B per token and layer. State page
/// (`get_mamba_state_shape_from_config`, no groups): conv 32·128 × 3 = 12,288, SSM 32 × 128 ×
/// 64 = 262,144; (12,288 + 262,144) × 2 B = 548,864 B. Block: 16 × ⌈548,864 / (16 × 512)⌉ =
/// 16 × 67 = 1,072; all 16 layers take a page of that size: 16 × 512 = 8,192 B per token.
/// vLLM 0.27.0 no longer registers it: INP008.
#[test]
fn plamo2_plans_on_the_vllm_releases_that_register_it() {
    let config = serde_json::json!({"architectures": ["Plamo2ForCausalLM"],
        "model_type": "plamo2", "num_hidden_layers": 16, "hidden_size": 2048,
        "num_attention_heads": 32, "num_key_value_heads": 1, "hidden_size_per_head": 128,
        "intermediate_size": 8192, "mamba_num_heads": 32, "mamba_d_state": 64,
        "mamba_d_conv": 4, "mamba_step": 2, "vocab_size": 100000,
        "max_position_embeddings": 10485760, "tie_word_embeddings": true,
        "torch_dtype": "bfloat16"});
    let vllm = "vllm serve pfnet/plamo-2-1b --max-model-len 8192 --trust-remote-code\n";
    let r = report(&config, vllm, "h200", "0.26.0");
    let plan = &r["launches"][0];
    assert_eq!(plan["verdict"], "passes", "{r}");
    assert_eq!(plan["kv_bytes_per_token"], 8_192);
    assert_eq!(assumption(plan, "attention_block_size"), Some(1072.0));
    let why = refused(&report(&config, vllm, "h200", "0.27.0"));
    assert!(why.contains("vLLM 0.27.0 does not register it"), "{why}");
}

//! Model geometry against public facts: parameter totals from model cards, checkpoint sizes
//! vLLM logged ("Model loading took X GiB", TP1, H100), and real config.json files.

use std::path::PathBuf;

use kvlint::model::{catalog_ids, catalog_lookup, Geometry, LayerKind};

const GIB: f64 = (1u64 << 30) as f64;

fn within(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= expected * tolerance
}

/// Public totals (model cards, transformers docs) as given in model-geometry.jsonl.
const PUBLIC_TOTALS: &[(&str, f64)] = &[
    ("zai-org/GLM-5", 744e9),
    ("zai-org/GLM-4.5", 355e9),
    ("zai-org/GLM-4.5-Air", 106e9),
    ("zai-org/GLM-4.6", 355e9),
    ("deepseek-ai/DeepSeek-V3", 671e9),
    ("deepseek-ai/DeepSeek-R1", 671e9),
    ("moonshotai/Kimi-K2-Instruct", 1.04e12),
    ("meta-llama/Llama-3.1-8B-Instruct", 8.03e9),
    ("meta-llama/Llama-3.1-70B", 70.6e9),
    ("meta-llama/Llama-3.1-405B", 405e9),
    ("meta-llama/Llama-3.3-70B-Instruct", 70.6e9),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 109e9),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", 400e9),
    ("Qwen/Qwen2.5-7B-Instruct", 7.61e9),
    ("Qwen/Qwen2.5-72B-Instruct", 72.7e9),
    ("Qwen/Qwen3-8B", 8.2e9),
    ("Qwen/Qwen3-32B", 32.8e9),
    ("Qwen/Qwen3-30B-A3B", 30.5e9),
    ("Qwen/Qwen3-235B-A22B", 235e9),
    ("Qwen/Qwen3-Coder-480B-A35B-Instruct", 480e9),
    ("Qwen/Qwen3-Next-80B-A3B-Thinking", 80e9),
    ("openai/gpt-oss-20b", 21e9),
    ("openai/gpt-oss-120b", 117e9),
    ("mistralai/Mistral-7B-Instruct-v0.3", 7.25e9),
    ("mistralai/Mixtral-8x7B-v0.1", 46.7e9),
    ("mistralai/Mistral-Large-Instruct-2411", 123e9),
    ("google/gemma-2-27b-it", 27.2e9),
    ("google/gemma-3-27b-it", 27e9),
    ("MiniMaxAI/MiniMax-M2", 229e9),
    ("microsoft/phi-4", 14.7e9),
    // Model cards: 31.6B total; 550B (named in the id); MiMo-V2-Flash 309B total.
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31.6e9),
    ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", 550e9),
    ("XiaomiMiMo/MiMo-V2-Flash", 309e9),
];

#[test]
fn parameter_counts_match_public_totals() {
    let mut bad = Vec::new();
    for (id, public) in PUBLIC_TOTALS {
        let g = catalog_lookup(id).unwrap_or_else(|| panic!("{id} not in catalog"));
        let ratio = g.params as f64 / public;
        eprintln!(
            "{id}: {:.3}B vs {:.3}B ({ratio:.4}), nextn {:.2}B",
            g.params as f64 / 1e9,
            public / 1e9,
            g.nextn_params as f64 / 1e9
        );
        if !within(g.params as f64, *public, 0.02) {
            bad.push(format!("{id}: computed {} vs public {public}", g.params));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn deepseek_v32_with_its_mtp_layer_matches_the_hf_size() {
    // 685B on Hugging Face, MTP module included.
    let g = catalog_lookup("deepseek-ai/DeepSeek-V3.2").unwrap();
    assert!(
        within((g.params + g.nextn_params) as f64, 685e9, 0.02),
        "{} + {}",
        g.params,
        g.nextn_params
    );
    assert!(g.nextn_params > 10_000_000_000);
}

/// DeepSeek-V4 `expert_dtype: fp4` checkpoints store their routed experts as MXFP4. The
/// deepseek-ai/DeepSeek-V4-Flash-0731 model-inspection report (gogongxt/python
/// scripts/models/deepseek_v4_flash_0731.md) lists 48 shards of 155.43 GiB, of which the three
/// dspark/MTP layers (`mtp.0-2.*`) take 10.12 GiB: 145.31 GiB for the model the engines load
/// without speculative decoding, its 43 × 256 routed experts 3 × 43.00 GiB of packed e2m1 pairs
/// and 3 × 2.69 GiB of ue8m0 scales. Priced as FP8 the experts alone were 266 GiB.
#[test]
fn deepseek_v4_flash_weights_price_fp4_experts() {
    for id in [
        "deepseek-ai/DeepSeek-V4-Flash",
        "deepseek-ai/DeepSeek-V4-Flash-0731",
    ] {
        let g = catalog_lookup(id).unwrap();
        let got = g.weight_bytes as f64 / GIB;
        eprintln!("{id}: {got:.2} GiB");
        assert!(
            within(got, 145.31, 0.05),
            "{id}: {got:.2} GiB vs 145.31 GiB"
        );
    }
}

/// vLLM "Model loading took X GiB" at TP1 on H100 for bf16 checkpoints in the catalog.
#[test]
fn weight_bytes_match_measured_bf16_loads() {
    for (id, gib) in [
        ("meta-llama/Llama-3.1-8B-Instruct", 14.99),
        ("Qwen/Qwen3-8B", 15.27),
        ("Qwen/Qwen2.5-7B-Instruct", 14.25),
        ("Qwen/Qwen3-30B-A3B", 56.88),
        ("Qwen/Qwen3-32B", 61.03),
        ("google/gemma-3-27b-it", 51.45),
    ] {
        let g = catalog_lookup(id).unwrap();
        let got = g.weight_bytes as f64 / GIB;
        assert!(
            within(got, gib, 0.03),
            "{id}: {got:.2} GiB vs measured {gib} GiB"
        );
    }
}

#[test]
fn every_catalog_model_has_layers_and_a_source() {
    for id in catalog_ids() {
        let g = catalog_lookup(id).unwrap_or_else(|| panic!("{id} does not parse"));
        assert_eq!(g.layers.len(), g.num_layers as usize, "{id}");
        assert!(
            g.source.starts_with("catalog: ") && g.source.len() > 12,
            "{id}"
        );
        assert!(g.params > 0 && g.weight_bytes > 0, "{id}");
    }
}

#[test]
fn catalog_hybrid_layouts_match_the_reference_table() {
    let kinds = |id: &str| {
        let g = catalog_lookup(id).unwrap();
        let sliding = g
            .layers
            .iter()
            .filter(|l| matches!(l, LayerKind::Sliding { .. }))
            .count();
        let chunked = g
            .layers
            .iter()
            .filter(|l| matches!(l, LayerKind::Chunked { .. }))
            .count();
        let linear = g
            .layers
            .iter()
            .filter(|l| matches!(l, LayerKind::Linear))
            .count();
        (g.full_layers(), sliding, chunked, linear)
    };
    assert_eq!(kinds("openai/gpt-oss-20b"), (12, 12, 0, 0));
    assert_eq!(kinds("google/gemma-2-27b-it"), (23, 23, 0, 0));
    assert_eq!(kinds("google/gemma-3-27b-it"), (10, 52, 0, 0));
    assert_eq!(
        kinds("meta-llama/Llama-4-Scout-17B-16E-Instruct"),
        (12, 0, 36, 0)
    );
    assert_eq!(kinds("Qwen/Qwen3-Next-80B-A3B-Thinking"), (12, 0, 0, 36));
    assert_eq!(kinds("Qwen/Qwen2.5-7B-Instruct"), (28, 0, 0, 0));
    assert_eq!(kinds("mistralai/Mistral-7B-Instruct-v0.3"), (32, 0, 0, 0));
}

#[test]
fn catalog_dsa_indexer_layers() {
    let glm5 = catalog_lookup("zai-org/GLM-5").unwrap();
    let dsa = glm5.dsa.expect("GLM-5 is DSA");
    assert_eq!(
        (dsa.index_head_dim, dsa.index_topk, dsa.indexer_layers),
        (128, 2048, 78)
    );
    // GLM-5.2 IndexShare: 21 full indexers, 57 shared (model-geometry.md).
    assert_eq!(
        catalog_lookup("zai-org/GLM-5.2")
            .unwrap()
            .dsa
            .unwrap()
            .indexer_layers,
        21
    );
    // DeepSeek-V3 has no index_topk: MLA only.
    let v3 = catalog_lookup("deepseek-ai/DeepSeek-V3").unwrap();
    assert!(v3.dsa.is_none());
    assert_eq!(
        v3.mla.map(|m| (m.kv_lora_rank, m.qk_rope_head_dim)),
        Some((512, 64))
    );
}

// ---- real config.json files (other projects' files: read in place, never copied) ----

/// `../shared` from the repository root; `KVLINT_SHARED` points elsewhere (a git worktree).
fn shared_dir() -> PathBuf {
    std::env::var_os("KVLINT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

fn cfg(name: &str) -> Geometry {
    let path = shared_dir().join("reference/model-configs").join(name);
    kvlint::model::load_config_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
#[ignore = "reads ../shared"]
fn real_configs_all_parse() {
    let mut n = 0;
    for entry in std::fs::read_dir(shared_dir().join("reference/model-configs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let g = kvlint::model::load_config_file(&path).unwrap_or_else(|e| panic!("{e}"));
            eprintln!(
                "{}: {:.3}B params, {:.2} GiB, nextn {:.2}B",
                path.display(),
                g.params as f64 / 1e9,
                g.weight_bytes as f64 / GIB,
                g.nextn_params as f64 / 1e9
            );
            n += 1;
        }
    }
    assert!(n >= 20);
}

#[test]
#[ignore = "reads ../shared"]
fn real_configs_measured_weight_loads() {
    for (name, gib) in [
        ("local--Qwen3-32B-W4A16-GPTQ.json", 18.03),
        ("google--gemma-2-9b-it.json", 17.22),
        ("deepseek-ai--DeepSeek-V2-Lite-Chat.json", 29.43),
        ("Qwen--QwQ-32B.json", 61.03), // Qwen2.5-32B geometry; Qwen3-32B's load is 61.03 too
    ] {
        let got = cfg(name).weight_bytes as f64 / GIB;
        assert!(
            within(got, gib, 0.03),
            "{name}: {got:.2} GiB vs measured {gib}"
        );
    }
}

#[test]
#[ignore = "reads ../shared"]
fn real_gemma4_has_separate_sliding_heads() {
    let g = cfg("mattbucci--gemma-4-26B-AWQ.json");
    assert_eq!((g.num_kv_heads, g.head_dim, g.v_head_dim), (2, 512, 512));
    let swa = g.swa_heads.clone().expect("sliding layers differ");
    assert_eq!(
        (swa.num_kv_heads, swa.head_dim, swa.v_head_dim),
        (8, 256, 256)
    );
    assert_eq!(g.full_layers(), 5);
    assert!(g
        .layers
        .iter()
        .all(|l| matches!(l, LayerKind::Full | LayerKind::Sliding { window: 1024 })));
    assert!(g.multimodal && g.moe);
    assert_eq!(
        g.quantization
            .as_ref()
            .map(|q| (q.method.as_str(), q.weight_bits)),
        Some(("awq", 4))
    );
    let g31 = cfg("mattbucci--gemma-4-31B-AWQ.json");
    assert_eq!((g31.num_kv_heads, g31.head_dim), (4, 512));
    assert_eq!(
        g31.swa_heads.map(|s| (s.num_kv_heads, s.head_dim)),
        Some((16, 256))
    );
    assert!(!g31.moe);
}

#[test]
#[ignore = "reads ../shared"]
fn real_kimi_k25_reads_the_text_config() {
    let g = cfg("moonshotai--Kimi-K2.5.json");
    assert_eq!(g.num_layers, 61);
    assert_eq!(
        g.mla.as_ref().map(|m| (m.kv_lora_rank, m.qk_rope_head_dim)),
        Some((512, 64))
    );
    assert!(g.dsa.is_none(), "no index_topk");
    let q = g
        .quantization
        .as_ref()
        .expect("quantization_config inside text_config");
    assert_eq!(
        (q.method.as_str(), q.weight_bits, q.kv_cache_fp8),
        ("compressed-tensors", 4, false)
    );
    assert!(g.multimodal);
    assert_eq!(g.max_position_embeddings(), Some(262144));
    // INT4 experts, bf16 attention/shared experts/dense: about 595 GB published.
    assert!(
        within(g.weight_bytes as f64, 595e9, 0.05),
        "{}",
        g.weight_bytes
    );
}

#[test]
#[ignore = "reads ../shared"]
fn real_dsa_and_quantized_configs() {
    let glm = cfg("zai-org--GLM-5-FP8.json");
    assert_eq!(glm.dsa.as_ref().map(|d| d.indexer_layers), Some(78));
    assert_eq!(glm.nextn_layers, 1);
    assert_eq!(
        glm.quantization
            .as_ref()
            .map(|q| (q.method.as_str(), q.weight_bits)),
        Some(("fp8", 8))
    );
    let mx = cfg("amd--GLM-5.1-MXFP4.json");
    assert_eq!(
        mx.quantization
            .as_ref()
            .map(|q| (q.method.as_str(), q.weight_bits)),
        Some(("quark", 4))
    );
    assert!(mx.weight_bytes < glm.weight_bytes * 6 / 10);
    let fp8 = cfg("RedHatAI--Llama-3.3-70B-Instruct-fp8-dynamic.json");
    assert_eq!(fp8.quantization.as_ref().map(|q| q.weight_bits), Some(8));
    assert!(within(
        fp8.weight_bytes as f64,
        70.55e9 + 2.0 * 128256.0 * 8192.0,
        0.02
    ));
    let gptq = cfg("Qwen--Qwen1.5-7B-Chat-GPTQ-Int4.json");
    assert_eq!(
        gptq.quantization
            .as_ref()
            .map(|q| (q.method.as_str(), q.weight_bits)),
        Some(("gptq", 4))
    );
}

#[test]
#[ignore = "reads ../shared"]
fn real_vlms_read_their_language_model() {
    let dev = cfg("mattbucci--Devstral-Small-2-24B-AWQ.json");
    assert_eq!(
        (dev.num_layers, dev.num_kv_heads, dev.head_dim),
        (40, 8, 128)
    );
    assert_eq!(
        dev.length_keys,
        vec![("max_position_embeddings".to_string(), 393216)]
    );
    let rope = dev.rope_scaling.as_ref().expect("yarn");
    assert_eq!(
        (
            rope.rope_type.as_str(),
            rope.factor,
            rope.original_max_position_embeddings
        ),
        ("yarn", 48.0, Some(8192))
    );
    assert_eq!(dev.full_layers(), 40, "sliding_window null");
    let vl = cfg("Qwen--Qwen2.5-VL-7B-Instruct.json");
    assert!(vl.multimodal);
    assert_eq!(vl.full_layers(), 28, "use_sliding_window false");
    // Qwen2.5-VL-7B: 8.29B with the vision tower (model card).
    assert!(within(vl.params as f64, 8.29e9, 0.02), "{}", vl.params);
    let g2 = cfg("google--gemma-2-9b-it.json");
    assert_eq!(
        g2.layers
            .iter()
            .filter(|l| matches!(l, LayerKind::Sliding { window: 4096 }))
            .count(),
        21
    );
}

fn hybrid(name: &str) -> Geometry {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("fixtures/models/hybrids/{name}.json"));
    kvlint::model::load_config_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The hybrid fixtures' parameter counts against their model cards' totals: the recurrent
/// mixers, Nemotron-H's one-module blocks and Jamba's every-other-layer experts counted as the
/// engines build them.
#[test]
fn hybrid_parameter_counts_match_public_totals() {
    for (name, total, tolerance) in [
        ("falcon-h1-0.5b-instruct", 0.52e9, 0.05),
        ("jamba-v0.1", 52e9, 0.03),
        ("kimi-linear-48b-a3b-instruct", 48e9, 0.05),
        ("minimax-text-01", 456e9, 0.03),
    ] {
        let g = hybrid(name);
        assert!(
            within(g.params as f64, total, tolerance),
            "{name}: {:.3}B",
            g.params as f64 / 1e9
        );
    }
}

/// MiMo-V2: `hybrid_layer_pattern` 1 marks the sliding layers (vLLM and SGLang `mimo_v2.py ::
/// is_swa_layer`), with their own head shape; a list-valued `moe_layer_freq` marks the MoE
/// layers one by one (`is_moe_layer`). By hand: 2 full layers × 4 heads × (192 + 128) × 2 B +
/// 2 sliding layers × 8 heads × (192 + 128) × 2 B = 15,360.
#[test]
fn per_layer_lists_of_mimo_v2() {
    let v = serde_json::json!({"architectures": ["MiMoV2FlashForCausalLM"],
        "model_type": "mimo_v2_flash", "num_hidden_layers": 4, "hidden_size": 1024,
        "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 192, "v_head_dim": 128,
        "swa_num_attention_heads": 16, "swa_num_key_value_heads": 8, "swa_head_dim": 192,
        "swa_v_head_dim": 128, "sliding_window_size": 128, "vocab_size": 1000,
        "hybrid_layer_pattern": [0, 1, 1, 0], "moe_layer_freq": [0, 1, 1, 1],
        "n_routed_experts": 8, "moe_intermediate_size": 256, "intermediate_size": 2048});
    let g = Geometry::from_config_json("t", "config.json", &v).unwrap();
    assert_eq!(g.layers[1], LayerKind::Sliding { window: 128 });
    assert_eq!(g.full_layers(), 2);
    assert_eq!(g.kv_bytes_per_token(), 2 * 4 * 320 * 2 + 2 * 8 * 320 * 2);
    // Layer 0 is dense (3 × 1024 × 2048), the others route to 8 experts of 3 × 1024 × 256: the
    // same model with an integer frequency of 1 counts layer 0 as MoE too.
    let mut every = v.clone();
    every["moe_layer_freq"] = serde_json::json!(1);
    let all_moe = Geometry::from_config_json("t", "config.json", &every).unwrap();
    let dense = 3 * 1024 * 2048;
    let moe = 8 * 3 * 1024 * 256 + 8 * 1024;
    assert_eq!(g.params + moe - dense, all_moe.params);
}

/// A tiny Qwen3.5 text config: 8 layers, full attention every 4th (layers 3 and 7).
fn tiny_qwen3_5() -> serde_json::Value {
    serde_json::json!({"architectures": ["Qwen3_5ForCausalLM"],
        "model_type": "qwen3_5_text", "num_hidden_layers": 8, "full_attention_interval": 4,
        "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
        "linear_num_key_heads": 4, "linear_num_value_heads": 8, "linear_key_head_dim": 32,
        "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4, "intermediate_size": 1024,
        "vocab_size": 1000, "torch_dtype": "bfloat16"})
}

/// Qwen3.5/3.6 full-attention layers are vLLM's and SGLang's `Qwen3NextAttention`, whose q
/// projection also emits the output gate (`qkv_proj` of `num_heads × (1 + attn_output_gate)`
/// heads, `attn_output_gate` defaulting to true). By hand: 2 full layers × 8 heads × 64 ×
/// 512 hidden = 524,288 gate parameters, gone when the config turns the gate off.
#[test]
fn qwen3_5_full_attention_counts_its_output_gate() {
    let v = tiny_qwen3_5();
    let gated = Geometry::from_config_json("t", "config.json", &v).unwrap();
    let mut off = v.clone();
    off["attn_output_gate"] = serde_json::json!(false);
    let plain = Geometry::from_config_json("t", "config.json", &off).unwrap();
    assert_eq!(gated.full_layers(), 2);
    assert_eq!(gated.params - plain.params, 2 * 8 * 64 * 512);
}

/// A checkpoint's skip list names the modules it stores, the engine's fused modules are looked
/// up through them (vLLM `should_ignore_layer` with the model's `packed_modules_mapping`;
/// Sehyo/Qwen3.5-35B-A3B-NVFP4 lists its Gated DeltaNet projections so). The tiny Qwen3.5 of
/// the test above, compressed-tensors NVFP4 (0.5 + 1/16 = 0.5625 B a weight) against bf16 (2 B):
/// - layer 0 (linear attention, key 4 × 32 = 128, value 8 × 32 = 256, hidden 512):
///   `in_proj_qkvz` 512 × (2 × 128 + 2 × 256) = 393,216, `in_proj_ba` 512 × 2 × 8 = 8,192,
///   `out_proj` 256 × 512 = 131,072: 532,480 weights × 1.4375 B = 765,440 more bytes;
/// - layer 3 (full attention), q, k and v but not o, gate and up but not down: `qkv_proj`
///   512 × (8 × 64 × 2 + 2 × 2 × 64) = 655,360 and `gate_up_proj` 2 × 512 × 1,024 = 1,048,576,
///   1,703,936 weights × 1.4375 B = 2,449,408 more bytes.
#[test]
fn skip_lists_reach_fused_modules_through_their_shards() {
    let v = tiny_qwen3_5();
    let weights = |ignore: &[&str]| {
        let mut c = v.clone();
        c["quantization_config"] = serde_json::json!({"quant_method": "compressed-tensors",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4,
                "type": "float", "strategy": "tensor_group", "group_size": 16}}},
            "ignore": ignore});
        let g = Geometry::from_config_json("t", "config.json", &c).unwrap();
        g.weight_bytes
    };
    let all = weights(&[]);
    let gdn = [
        "model.layers.0.linear_attn.in_proj_qkv",
        "model.layers.0.linear_attn.in_proj_z",
        "model.layers.0.linear_attn.in_proj_b",
        "model.layers.0.linear_attn.in_proj_a",
        "model.layers.0.linear_attn.out_proj",
    ];
    assert_eq!(weights(&gdn) - all, 765_440);
    let full = [
        "model.layers.3.self_attn.q_proj",
        "model.layers.3.self_attn.k_proj",
        "model.layers.3.self_attn.v_proj",
        "model.layers.3.mlp.gate_proj",
        "model.layers.3.mlp.up_proj",
    ];
    assert_eq!(weights(&full) - all, 2_449_408);
}

/// A tiny Nemotron-H, one Mamba2 layer and one attention layer ("M*"), hidden 256.
fn tiny_nemotron_h(quantization: serde_json::Value) -> Geometry {
    let v = serde_json::json!({"architectures": ["NemotronHForCausalLM"],
        "model_type": "nemotron_h", "num_hidden_layers": 2, "hybrid_override_pattern": "M*",
        "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
        "mamba_num_heads": 8, "mamba_head_dim": 32, "n_groups": 2, "ssm_state_size": 16,
        "conv_kernel": 4, "intermediate_size": 512, "vocab_size": 1000,
        "torch_dtype": "bfloat16", "quantization_config": quantization});
    Geometry::from_config_json("t", "config.json", &v).unwrap()
}

/// Nemotron-H checkpoints list their modules as `backbone.layers.N.mixer.*`
/// (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4's `exclude_modules`), which vLLM maps to
/// `model.layers.N.mixer.*` (`nemotron_h.py :: hf_to_vllm_mapper`), the names it builds for
/// both the Mamba2 mixer and the attention. The tiny model above, NVFP4 (0.5 + 1/16 = 0.5625 B a
/// weight) against bf16 (2 B), 1.4375 B more a weight kept bf16:
/// - layer 0: Mamba2 of 8 heads × 32 = 256 inner, conv 256 + 2 × 2 groups × 16 = 320 wide;
///   `in_proj` 256 × (256 + 320 + 8) = 149,504, `out_proj` 256 × 256 = 65,536: 215,040
///   weights, 309,120 more bytes;
/// - layer 1: `qkv_proj` 256 × (4 + 2 × 2) × 64 = 131,072, `o_proj` 256 × 256 = 65,536:
///   196,608 weights, 282,624 more bytes.
#[test]
fn nemotron_h_skip_lists_use_the_checkpoint_s_backbone_names() {
    let weights = |exclude: &[&str]| {
        let q = serde_json::json!({"producer": {"name": "modelopt"}, "quantization":
            {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": exclude}});
        tiny_nemotron_h(q).weight_bytes
    };
    let all = weights(&["lm_head"]);
    let mamba = [
        "backbone.layers.0.mixer.in_proj",
        "backbone.layers.0.mixer.out_proj",
    ];
    assert_eq!(weights(&mamba) - all, 309_120);
    let attention = [
        "backbone.layers.1.mixer.q_proj",
        "backbone.layers.1.mixer.k_proj",
        "backbone.layers.1.mixer.v_proj",
        "backbone.layers.1.mixer.o_proj",
    ];
    assert_eq!(weights(&attention) - all, 282_624);
    // `out_proj` alone: the in projection stays NVFP4, 65,536 × 1.4375 = 94,208 more bytes.
    assert_eq!(weights(&mamba[1..]) - all, 94_208);
}

/// nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4 is MIXED_PRECISION with its
/// `quantized_layers` in the checkpoint's spelling too (vLLM maps them with the same
/// `hf_to_vllm_mapper`, `ModelOptMixedPrecisionConfig.apply_vllm_mapper`): the tiny model's
/// Mamba2 projections in FP8 (1 B a weight) save 215,040 B against layers it does not name.
#[test]
fn nemotron_h_mixed_precision_reads_backbone_layer_names() {
    let weights = |layers: serde_json::Value| {
        let q = serde_json::json!({"producer": {"name": "modelopt"}, "quantization":
            {"quant_algo": "MIXED_PRECISION", "quantized_layers": layers}});
        tiny_nemotron_h(q).weight_bytes
    };
    let fp8 = serde_json::json!({"quant_algo": "FP8"});
    let none = weights(serde_json::json!({"backbone.layers.5.mixer.in_proj": fp8}));
    let mamba = weights(serde_json::json!({"backbone.layers.0.mixer.in_proj": fp8,
        "backbone.layers.0.mixer.out_proj": fp8}));
    assert_eq!(none - mamba, 215_040);
}

/// Gemma 4's `attention_k_eq_v` full layers store no `v_proj`, but vLLM, SGLang and
/// TensorRT-LLM build the whole `qkv_proj` and load K into its V part: the flag leaves the
/// count alone. Without V the full layer would count 512 × 1 KV head × 128 = 65,536 fewer.
#[test]
fn gemma4_k_eq_v_layers_count_the_v_part_the_engines_allocate() {
    let v = serde_json::json!({"architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4",
        "num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 8,
        "num_key_value_heads": 4, "head_dim": 64, "global_head_dim": 128,
        "num_global_key_value_heads": 1, "sliding_window": 512, "intermediate_size": 1024,
        "layer_types": ["sliding_attention", "full_attention"], "vocab_size": 100,
        "attention_k_eq_v": true});
    let k_eq_v = Geometry::from_config_json("t", "config.json", &v).unwrap();
    let mut own_v = v.clone();
    own_v["attention_k_eq_v"] = serde_json::json!(false);
    let own_v = Geometry::from_config_json("t", "config.json", &own_v).unwrap();
    assert_eq!(k_eq_v.params, own_v.params);
    assert_eq!(k_eq_v.weight_bytes, own_v.weight_bytes);
}

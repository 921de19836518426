use super::*;
use crate::model::Geometry;

fn geo(v: Value) -> Geometry {
    Geometry::from_config_json("t", "config.json", &v).unwrap()
}

fn state(g: &Geometry) -> &Recurrent {
    g.recurrent.as_ref().unwrap()
}

/// Nemotron-3-Nano-30B-A3B's hybrid block (64 Mamba2 heads of 64, 8 groups, state 128,
/// kernel 4), on a short pattern: `M*E-M` is 2 Mamba2, 1 attention, 2 stateless layers.
#[test]
fn nemotron_h_mamba2_state_by_hand() {
    let g = geo(
        serde_json::json!({"architectures": ["NemotronHForCausalLM"],
        "model_type": "nemotron_h", "num_hidden_layers": 5, "hidden_size": 2688,
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
        "vocab_size": 131072, "hybrid_override_pattern": "M*E-M", "mamba_num_heads": 64,
        "mamba_head_dim": 64, "n_groups": 8, "ssm_state_size": 128, "conv_kernel": 4}),
    );
    let r = state(&g);
    assert_eq!(r.layers, 2);
    assert_eq!(g.full_layers(), 1);
    assert_eq!(g.kv_bytes_per_token(), 2 * 256 * 2);
    // conv_dim = 64·64 + 2·8·128 = 6,144; × (4 − 1) = 18,432. SSM 64 × 64 × 128 = 524,288.
    let e = r.elems(1, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (18_432, 524_288));
    // TP 4 divides the 8 groups: 6,144 / 4 × 3 = 4,608; 16 × 64 × 128 = 131,072.
    let e = r.elems(4, Reader::Sglang);
    assert_eq!((e.conv, e.ssm), (4_608, 131_072));
    // TP 16 does not: the groups are replicated to 16, conv_dim = 4,096 + 2·16·128 = 8,192;
    // 8,192 / 16 × 3 = 1,536; 4 × 64 × 128 = 32,768.
    let e = r.elems(16, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (1_536, 32_768));
    // vLLM's Nemotron-H hook: the SSM cache dtype defaults to float32.
    assert_eq!(r.config_ssm_cache_dtype.as_deref(), Some("float32"));
    // No `mtp_hybrid_override_pattern`: no MTP attention layers.
    assert_eq!(r.mtp_attention_per_step, 0);
    // Nemotron-3-Super's MTP step "*E": one attention layer, one MoE layer.
    let mut c = serde_json::json!({"architectures": ["NemotronHForCausalLM"],
        "model_type": "nemotron_h", "num_hidden_layers": 5, "hidden_size": 2688,
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
        "vocab_size": 131072, "hybrid_override_pattern": "M*E-M", "mamba_num_heads": 64,
        "mamba_head_dim": 64, "n_groups": 8, "ssm_state_size": 128, "conv_kernel": 4,
        "num_nextn_predict_layers": 1, "mtp_hybrid_override_pattern": "*E"});
    assert_eq!(state(&geo(c.clone())).mtp_attention_per_step, 1);
    c["mtp_hybrid_override_pattern"] = "*E*E".into();
    assert_eq!(state(&geo(c)).mtp_attention_per_step, 2);
    // The newer spelling reads the same.
    let list = geo(
        serde_json::json!({"architectures": ["NemotronHForCausalLM"],
        "model_type": "nemotron_h", "num_hidden_layers": 3, "hidden_size": 2688,
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
        "vocab_size": 131072, "layers_block_type": ["mamba", "attention", "moe"],
        "mamba_num_heads": 64, "mamba_head_dim": 64, "n_groups": 8,
        "ssm_state_size": 128, "conv_kernel": 4, "mamba_ssm_cache_dtype": "bfloat16"}),
    );
    assert_eq!((state(&list).layers, list.full_layers()), (1, 1));
    assert_eq!(
        state(&list).config_ssm_cache_dtype.as_deref(),
        Some("bfloat16")
    );
}

#[test]
fn granite_falcon_jamba_layers_and_shapes() {
    // Granite-4.0-H: intermediate = mamba_expand × hidden = 2 × 4096 = 8,192; 1 group:
    // TP 2 replicates it to 2 → conv (8,192 + 2·2·128) / 2 × 3 = 13,056; SSM 64 × 64 × 128.
    let g = geo(
        serde_json::json!({"architectures": ["GraniteMoeHybridForCausalLM"],
        "model_type": "granitemoehybrid", "num_hidden_layers": 4, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 100352,
        "layer_types": ["mamba", "attention", "mamba", "mamba"], "mamba_expand": 2,
        "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_n_groups": 1,
        "mamba_d_state": 128, "mamba_d_conv": 4}),
    );
    assert_eq!((state(&g).layers, g.full_layers()), (3, 1));
    let e = state(&g).elems(2, Reader::Sglang);
    assert_eq!((e.conv, e.ssm), (13_056, 524_288));
    // Falcon-H1: attention and a Mamba2 mixer on every layer; mamba_d_ssm is the width.
    let g = geo(serde_json::json!({"architectures": ["FalconH1ForCausalLM"],
        "model_type": "falcon_h1", "num_hidden_layers": 3, "hidden_size": 1024,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
        "vocab_size": 32784, "mamba_d_ssm": 1536, "mamba_n_heads": 24, "mamba_d_head": 64,
        "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4}));
    assert_eq!((state(&g).layers, g.full_layers()), (3, 3));
    // (1,536 + 2·128) × 3 = 5,376; 24 × 64 × 128 = 196,608.
    let e = state(&g).elems(1, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (5_376, 196_608));
    // Jamba: attention at i % 8 == 4 (layers 4 and 12 of 16), Mamba1 elsewhere;
    // intermediate 2 × 4096 = 8,192: conv 8,192 × 3 = 24,576, SSM 8,192 × 16 = 131,072.
    let g = geo(serde_json::json!({"architectures": ["JambaForCausalLM"],
        "model_type": "jamba", "num_hidden_layers": 16, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 65536,
        "attn_layer_period": 8, "attn_layer_offset": 4, "mamba_d_state": 16,
        "mamba_d_conv": 4, "mamba_expand": 2}));
    assert_eq!(g.layers[4], LayerKind::Full);
    assert_eq!((state(&g).layers, g.full_layers()), (14, 2));
    let e = state(&g).elems(1, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (24_576, 131_072));
}

#[test]
fn short_conv_kda_and_lightning_by_hand() {
    // LFM2 with the early `full_attn_idxs` spelling; conv_L_cache 3 keeps 2 columns.
    let g = geo(serde_json::json!({"architectures": ["Lfm2ForCausalLM"],
        "model_type": "lfm2", "num_hidden_layers": 6, "hidden_size": 2048,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 65536,
        "conv_L_cache": 3, "full_attn_idxs": [2, 5]}));
    assert_eq!((state(&g).layers, g.full_layers()), (4, 2));
    // 2,048 / 2 × 2 = 2,048 conv elements at TP 2, no SSM state.
    let e = state(&g).elems(2, Reader::Sglang);
    assert_eq!((e.conv, e.ssm), (2_048, 0));
    // Kimi-Linear: kda_layers are 1-based; 32 heads of 128, kernel 4.
    let g = geo(
        serde_json::json!({"architectures": ["KimiLinearForCausalLM"],
        "model_type": "kimi_linear", "num_hidden_layers": 4, "hidden_size": 2304,
        "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 163840,
        "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
        "v_head_dim": 128, "linear_attn_config": {"num_heads": 32, "head_dim": 128,
        "short_conv_kernel_size": 4, "kda_layers": [1, 2, 3], "full_attn_layers": [4]}}),
    );
    assert_eq!(g.layers[3], LayerKind::Full);
    assert_eq!((state(&g).layers, g.full_layers()), (3, 1));
    // conv 3 × 32·128 × 3 = 36,864; recurrent 32 × 128 × 128 = 524,288.
    let e = state(&g).elems(1, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (36_864, 524_288));
    // MiniMax-Text-01: attn_type_list 0 is lightning; state 64 / 8 × 128 × 128 at TP 8.
    let g = geo(
        serde_json::json!({"architectures": ["MiniMaxText01ForCausalLM"],
        "model_type": "minimax_text_01", "num_hidden_layers": 4, "hidden_size": 6144,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
        "vocab_size": 200064, "attn_type_list": [0, 0, 0, 1]}),
    );
    assert_eq!((state(&g).layers, g.full_layers()), (3, 1));
    let e = state(&g).elems(8, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (0, 131_072));
}

/// transformers `Zamba2Config()` (its "Zamba2-2.7B style configuration", every key at its
/// default, `layers_block_type` written out: 9 "hybrid" of 54), read as vLLM `zamba2.py`
/// reads it: width 2 × 2,560 = 5,120 over 8 heads of 640, 1 group, state 64, kernel 4.
fn zamba2_defaults() -> Value {
    let mut types = vec!["mamba"];
    for _ in 0..7 {
        types.extend(["mamba"; 5]);
        types.push("hybrid");
    }
    types.extend(["mamba", "mamba", "mamba", "mamba", "hybrid"]);
    types.extend(["mamba", "mamba", "mamba", "hybrid", "mamba", "mamba"]);
    serde_json::json!({"architectures": ["Zamba2ForCausalLM"], "model_type": "zamba2",
        "num_hidden_layers": 54, "hidden_size": 2560, "num_attention_heads": 32,
        "vocab_size": 32000, "layers_block_type": types})
}

#[test]
fn zamba2_and_bamba_by_hand() {
    let g = geo(zamba2_defaults());
    // Every layer runs a mixer; the 9 hybrid layers attend, MHA of 2 × 2,560 / 32 = 160.
    assert_eq!((state(&g).layers, g.full_layers()), (54, 9));
    assert_eq!((g.num_kv_heads, g.head_dim), (32, 160));
    assert_eq!(g.kv_bytes_per_token(), 9 * 2 * 32 * 160 * 2);
    // conv (5,120 + 2·1·64) × 3 = 15,744; SSM 8 × 640 × 64 = 327,680. At TP 2 the one
    // group is replicated to 2: (5,120 + 2·2·64) / 2 × 3 = 8,064; 4 × 640 × 64 = 163,840.
    let e = state(&g).elems(1, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (15_744, 327_680));
    let e = state(&g).elems(2, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (8_064, 163_840));
    // Bamba (transformers `BambaConfig` defaults: 128 heads, `mamba_d_head` "auto" =
    // 2 × 4,096 / 128 = 64, 1 group, state 256, kernel 4) with attention on layers 9, 18
    // and 27 of 32: conv (8,192 + 2·256) × 3 = 26,112, SSM 128 × 64 × 256 = 2,097,152.
    let g = geo(
        serde_json::json!({"architectures": ["BambaForCausalLM"], "model_type": "bamba",
        "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "vocab_size": 128000, "mamba_d_head": "auto",
        "attn_layer_indices": [9, 18, 27]}),
    );
    assert_eq!(g.layers[9], LayerKind::Full);
    assert_eq!((state(&g).layers, g.full_layers()), (29, 3));
    assert_eq!(g.kv_bytes_per_token(), 3 * 2 * 8 * 128 * 2);
    let e = state(&g).elems(1, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (26_112, 2_097_152));
}

/// Plamo2 (vLLM `plamo2.py`): `mamba_step` 2 puts attention on the odd layers; 32 Mamba
/// heads of `hidden_size_per_head` 128 and no groups: conv 4,096 × 3 = 12,288, SSM
/// 32 × 128 × 64 = 262,144; KV 1 head × 128 (`hidden_size_per_head`, not 2,048 / 32).
#[test]
fn plamo2_by_hand() {
    let g = geo(
        serde_json::json!({"architectures": ["Plamo2ForCausalLM"], "model_type": "plamo2",
        "num_hidden_layers": 16, "hidden_size": 2048, "num_attention_heads": 32,
        "num_key_value_heads": 1, "hidden_size_per_head": 128, "mamba_num_heads": 32,
        "mamba_d_state": 64, "mamba_d_conv": 4, "mamba_step": 2, "vocab_size": 100000}),
    );
    assert_eq!(
        (g.layers[0], g.layers[1]),
        (LayerKind::Linear, LayerKind::Full)
    );
    assert_eq!((state(&g).layers, g.full_layers()), (8, 8));
    assert_eq!(g.kv_bytes_per_token(), 8 * 2 * 128 * 2);
    let e = state(&g).elems(1, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (12_288, 262_144));
    // TP 2: no groups to replicate; 2,048 × 3 and 16 × 128 × 64.
    let e = state(&g).elems(2, Reader::Vllm);
    assert_eq!((e.conv, e.ssm), (6_144, 131_072));
}

#[test]
fn a_hybrid_config_without_its_layer_map_is_an_error() {
    let bad = serde_json::json!({"architectures": ["NemotronHForCausalLM"],
        "model_type": "nemotron_h", "num_hidden_layers": 5, "hidden_size": 2688,
        "num_attention_heads": 32, "vocab_size": 131072, "hybrid_override_pattern": "M*",
        "mamba_num_heads": 64, "mamba_head_dim": 64, "n_groups": 8,
        "ssm_state_size": 128});
    let err = Geometry::from_config_json("t", "config.json", &bad).unwrap_err();
    assert!(err.to_string().contains("2 entries for 5 layers"), "{err}");
    // A Bamba without `attn_layer_indices` would keep no KV at all; a Zamba2 without
    // `layers_block_type` has no layer map.
    let mut bamba = zamba2_defaults();
    bamba["model_type"] = "bamba".into();
    let err = Geometry::from_config_json("t", "config.json", &bamba).unwrap_err();
    assert!(err.to_string().contains("attn_layer_indices"), "{err}");
    let mut zamba = zamba2_defaults();
    zamba["layers_block_type"] = serde_json::json!(["mamba", "hybrid"]);
    let err = Geometry::from_config_json("t", "config.json", &zamba).unwrap_err();
    assert!(err.to_string().contains("2 entries for 54 layers"), "{err}");
}

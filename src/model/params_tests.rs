//! The parameter count of hand-written configs, checked against their sums written out.

use serde_json::{json, Value};

use crate::model::Geometry;

/// 2 layers, h 64, 4 heads of 16, 2 KV heads, MLP 128, vocab 100, untied, fp16.
fn tiny(extra: Value) -> Geometry {
    let mut v = json!({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100, "tie_word_embeddings": false,
        "torch_dtype": "float16"});
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    Geometry::from_config_json("t", "t.json", &v).unwrap()
}

// Per layer: attention 4096+2048+2048+4096 = 12288, MLP 3*64*128 = 24576, norms 128.
// Embedding 6400, lm_head 6400, final norm 64.
const LINEAR: u64 = 2 * (12288 + 24576);
const DENSE_BYTES: f64 = 2.0 * (2.0 * 128.0 + 6400.0 + 6400.0 + 64.0);

#[test]
fn dense_count_by_hand() {
    let g = tiny(json!({}));
    assert_eq!(g.params, 86848);
    assert_eq!(g.weight_bytes, 2 * 86848);
    assert_eq!(
        tiny(json!({"tie_word_embeddings": true})).params,
        86848 - 6400
    );
}

#[test]
fn moe_layers_follow_first_k_dense_replace() {
    let g = tiny(
        json!({"num_hidden_layers": 4, "n_routed_experts": 8, "moe_intermediate_size": 32,
        "n_shared_experts": 1, "first_k_dense_replace": 1}),
    );
    // Layer 0 dense 36992; layers 1-3: attention, norms, router 512, experts 49152, shared 6144.
    assert_eq!(
        g.params,
        36992 + 3 * (12288 + 128 + 512 + 49152 + 6144) + 12864
    );
    assert!(g.moe);
}

#[test]
fn awq_and_fp8_price_quantized_linears() {
    let awq =
        tiny(json!({"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 32}}));
    let expect = LINEAR as f64 * (0.5 + 2.5 / 32.0) + DENSE_BYTES;
    assert_eq!(awq.weight_bytes, expect.ceil() as u64);
    let fp8 = tiny(
        json!({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}),
    );
    let expect = LINEAR as f64 * (1.0 + 4.0 / 16384.0) + DENSE_BYTES;
    assert_eq!(fp8.weight_bytes, expect.ceil() as u64);
}

#[test]
fn skip_lists_keep_modules_in_16_bit() {
    // gpt-oss style glob: attention stays bf16, the MLP is MXFP4.
    let mx = tiny(json!({"quantization_config": {"quant_method": "mxfp4",
        "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]}}));
    let expect = 2.0 * 12288.0 * 2.0 + 2.0 * 24576.0 * (0.5 + 1.0 / 32.0) + DENSE_BYTES;
    assert_eq!(mx.weight_bytes, expect.ceil() as u64);
    // compressed-tensors `re:` ignore entries are anchored regexes.
    let ct = tiny(
        json!({"quantization_config": {"quant_method": "compressed-tensors", "ignore": ["lm_head", "re:.*mlp.*"],
        "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group",
        "group_size": 128, "symmetric": true}}}}}),
    );
    let expect = 2.0 * 12288.0 * (0.5 + 2.0 / 128.0) + 2.0 * 24576.0 * 2.0 + DENSE_BYTES;
    assert_eq!(ct.weight_bytes, expect.ceil() as u64);
    // An exact name does not match a longer component (`mlp.gate` vs `mlp.gate_proj`).
    let fp8 = tiny(json!({"quantization_config": {"quant_method": "fp8",
        "modules_to_not_convert": ["model.layers.0.mlp.gate", "model.layers.1.mlp.gate"]}}));
    assert_eq!(fp8.weight_bytes, (LINEAR as f64 + DENSE_BYTES) as u64);
}

#[test]
fn parts_split_what_engines_replicate_from_what_they_shard() {
    // Dense: embedding 6400 params, two layers of attention 12288 + MLP 24576 + norms 128.
    let g = tiny(json!({}));
    assert_eq!(g.weight_parts.embedding, 2 * 6400);
    assert_eq!(g.weight_parts.layers, 2 * 2 * (12288 + 24576 + 128));
    assert_eq!(g.weight_parts.attention, 2 * 2 * 12288);
    assert_eq!(g.weight_parts.replicated, 0);
    // MLA with q LoRA 32, latent 16 + rope 8, 4 heads of nope 8 / v 8, 8 experts from layer 0:
    // fused_qkv_a_proj_with_mqa 64·(32+16+8) = 3584 and the q_a/kv_a norms 32+16 = 48 are
    // whole on every rank; so is the 64·8 = 512 router.
    let mla = tiny(
        json!({"q_lora_rank": 32, "kv_lora_rank": 16, "qk_rope_head_dim": 8,
        "qk_nope_head_dim": 8, "v_head_dim": 8, "n_routed_experts": 8, "moe_intermediate_size": 16}),
    );
    assert_eq!(mla.weight_parts.replicated, 2 * 2 * (3584 + 48 + 512));
}

#[test]
fn unknown_quantization_is_priced_unquantized() {
    let g = tiny(json!({"quantization_config": {"quant_method": "exotic"}}));
    assert_eq!(g.weight_bytes, 2 * 86848);
    assert_eq!(g.quantization.map(|q| q.weight_bits), Some(16));
    let bad = json!({"num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 1, "vocab_size": 4,
        "quantization_config": {"quant_method": "compressed-tensors", "ignore": ["re:("]}});
    assert!(Geometry::from_config_json("t", "t.json", &bad).is_err());
}

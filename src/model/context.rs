//! The context length each engine derives from `config.json` when no length is given.

use super::Geometry;
use crate::version::Version;

/// SGLang's keys, in its order (`utils/hf_transformers/common.py :: CONTEXT_LENGTH_KEYS`).
const SGLANG_KEYS: [&str; 5] = [
    "max_sequence_length",
    "seq_length",
    "max_seq_len",
    "model_max_length",
    "max_position_embeddings",
];

/// SGLang `utils/hf_transformers/common.py :: get_context_length` (0.5.x), as used by
/// `ModelConfig._derive_context_length`: the first length key present, times the RoPE factor
/// unless the scaling states `original_max_position_embeddings` or is `llama3`; 2048 if none.
pub fn derived_context_length_sglang(g: &Geometry) -> u64 {
    let factor = match &g.rope_scaling {
        Some(r) if r.original_max_position_embeddings.is_none() && r.rope_type != "llama3" => {
            r.factor
        }
        _ => 1.0,
    };
    let value = SGLANG_KEYS.iter().find_map(|k| {
        g.length_keys
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| *v)
    });
    value.map_or(2048, |v| (factor * v as f64) as u64)
}

/// vLLM `config/model.py :: _get_and_verify_max_len` with the keys of
/// `ModelArchConfigConvertorBase.derive_max_model_len_and_key`: the smallest length key
/// (`model_max_length` overrides), then RoPE scaling unless the model type is Gemma 3.
///
/// YaRN changed in vLLM 0.33.0 (PR #56446): it no longer rescales. Up to 0.27.0 YaRN gives
/// `original_max_position_embeddings * factor`. Versions between were not checked and keep the
/// old rule, the larger value: a longer derived context never hides a pool that is too small.
pub fn derived_max_model_len_vllm(g: &Geometry, version: &Version) -> u64 {
    let Some(mut derived) = g.length_keys.iter().map(|(_, v)| *v).min() else {
        return 2048;
    };
    if let Some((_, v)) = g.length_keys.iter().find(|(k, _)| k == "model_max_length") {
        derived = *v;
    }
    let Some(r) = g
        .rope_scaling
        .as_ref()
        .filter(|_| !g.model_type.contains("gemma3"))
    else {
        return derived;
    };
    let new_yarn = version.release() >= Version::new(0, 33, 0);
    let unscaled: &[&str] = if new_yarn {
        &[
            "su",
            "longrope",
            "llama3",
            "yarn",
            "deepseek_yarn",
            "deepseek_llama_scaling",
        ]
    } else {
        &["su", "longrope", "llama3"]
    };
    if unscaled.contains(&r.rope_type.as_str()) {
        return derived;
    }
    match r.original_max_position_embeddings {
        Some(orig) if r.rope_type == "yarn" => (orig as f64 * r.factor) as u64,
        _ => (derived as f64 * r.factor) as u64,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn g(extra: Value) -> Geometry {
        let mut v = json!({"model_type": "qwen2", "num_hidden_layers": 1, "hidden_size": 64,
            "num_attention_heads": 4, "vocab_size": 10});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        Geometry::from_config_json("t", "t.json", &v).unwrap()
    }

    const V011: Version = Version::new(0, 11, 0);
    const V033: Version = Version::new(0, 33, 0);

    #[test]
    fn yarn_with_original_length() {
        // Example of vllm-trtllm-capacity.md §6: Qwen2.5 with user-added YaRN ×4.
        let m = g(json!({"max_position_embeddings": 32768,
            "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}));
        assert_eq!(derived_max_model_len_vllm(&m, &V011), 131072);
        assert_eq!(derived_max_model_len_vllm(&m, &V033), 32768);
        assert_eq!(derived_context_length_sglang(&m), 32768);
    }

    #[test]
    fn llama3_and_linear_scaling() {
        let m = g(
            json!({"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
            "original_max_position_embeddings": 8192}}),
        );
        assert_eq!(derived_max_model_len_vllm(&m, &V011), 131072);
        assert_eq!(derived_max_model_len_vllm(&m, &V033), 131072);
        assert_eq!(derived_context_length_sglang(&m), 131072);
        let m = g(
            json!({"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2.0}}),
        );
        assert_eq!(derived_max_model_len_vllm(&m, &V033), 8192);
        assert_eq!(derived_context_length_sglang(&m), 8192);
        let gemma3 = g(
            json!({"model_type": "gemma3", "max_position_embeddings": 131072,
            "rope_scaling": {"rope_type": "linear", "factor": 8.0}}),
        );
        assert_eq!(derived_max_model_len_vllm(&gemma3, &V033), 131072);
    }

    #[test]
    fn key_choice_and_fallback() {
        // vLLM takes the smallest key, SGLang the first in its own order.
        let m = g(json!({"max_position_embeddings": 8192, "seq_length": 4096}));
        assert_eq!(derived_max_model_len_vllm(&m, &V033), 4096);
        assert_eq!(derived_context_length_sglang(&m), 4096);
        let m = g(json!({"max_position_embeddings": 2048, "max_sequence_length": 4096}));
        assert_eq!(derived_max_model_len_vllm(&m, &V033), 2048);
        assert_eq!(derived_context_length_sglang(&m), 4096);
        let none = g(json!({}));
        assert_eq!(
            (
                derived_max_model_len_vllm(&none, &V033),
                derived_context_length_sglang(&none)
            ),
            (2048, 2048)
        );
    }
}

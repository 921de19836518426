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

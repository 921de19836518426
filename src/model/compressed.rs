//! DeepSeek-V4 compressed attention: every layer keeps a sliding window of raw latents, and
//! layers with `compress_ratios[i]` 4 or 128 also keep one compressed latent per 4 or 128 tokens
//! (ratio 4 with a lightning-indexer key). Read as SGLang reads it
//! (`configs/model_config.py :: ModelConfig._derive_model_shapes`, the `DeepseekV4ForCausalLM`
//! branch: `qk_nope_head_dim = head_dim - qk_rope_head_dim`, `window_size = sliding_window`,
//! `compress_ratios` and `index_head_dim` as given).

use serde::Serialize;
use serde_json::Value;

use super::raw::{as_uint, invalid, Cfg};
use super::ModelError;

/// SGLang `configs/model_config.py :: is_deepseek_v4`: the architectures its DSv4 pool
/// configurator sizes.
pub(crate) const DSV4_ARCHS: [&str; 2] = ["DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN"];

/// The compressed-attention layout of one DeepSeek-V4 checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compressed {
    /// `compress_ratios` as config.json lists it: one entry per decoder layer, then the MTP
    /// layers' (0 = sliding window only, 4 = CSA with indexer, 128 = HCA).
    pub ratios: Vec<u32>,
    /// `sliding_window`: the raw tokens every layer keeps.
    pub window: u32,
    pub qk_nope_head_dim: u32,
    pub qk_rope_head_dim: u32,
    pub index_head_dim: u32,
}

impl Compressed {
    /// Layers of `ratios` whose compression ratio is `r`.
    pub fn layers_with(ratios: &[u32], r: u32) -> u32 {
        ratios.iter().filter(|x| **x == r).count() as u32
    }
}

pub(super) fn compressed(c: &Cfg, archs: &[String]) -> Result<Option<Compressed>, ModelError> {
    if !archs.iter().any(|a| DSV4_ARCHS.contains(&a.as_str())) {
        return Ok(None);
    }
    let Some(list) = c.get("compress_ratios").and_then(Value::as_array) else {
        return Err(invalid(
            c.file,
            "a DeepSeek-V4 config without `compress_ratios`: the compressed layers are unknown",
        ));
    };
    let ratios = list
        .iter()
        .map(|v| match as_uint(v) {
            Some(r @ (0 | 4 | 128)) => Ok(r as u32),
            _ => Err(invalid(
                c.file,
                format!("`compress_ratios` holds {v}; SGLang supports 0, 4 and 128"),
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let field = |k: &str| -> Result<u32, ModelError> { c.u32(k, c.required(&[k])?) };
    let head_dim = field("head_dim")?;
    let rope = field("qk_rope_head_dim")?;
    let Some(nope) = head_dim.checked_sub(rope) else {
        return Err(invalid(c.file, "`qk_rope_head_dim` exceeds `head_dim`"));
    };
    Ok(Some(Compressed {
        ratios,
        window: field("sliding_window")?,
        qk_nope_head_dim: nope,
        qk_rope_head_dim: rope,
        index_head_dim: field("index_head_dim")?,
    }))
}

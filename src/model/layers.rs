//! Which attention each decoder layer runs (full, sliding window, chunked, linear), read from
//! config.json the way SGLang and vLLM read it. The recurrent hybrids' own layer maps are in
//! `state.rs`.

use serde_json::Value;

use super::raw::{as_uint, invalid, Cfg};
use super::{LayerKind, ModelError};

/// One [`LayerKind`] per decoder layer.
pub(super) fn layer_kinds(c: &Cfg, n: u32, model_type: &str) -> Result<Vec<LayerKind>, ModelError> {
    let window = window(c)?;
    let sliding =
        |w: Option<u32>| w.map_or(LayerKind::Full, |window| LayerKind::Sliding { window });
    if let Some(types) = c.get("layer_types").and_then(Value::as_array) {
        if types.len() < n as usize {
            return Err(invalid(
                c.file,
                format!("`layer_types` has {} entries for {n} layers", types.len()),
            ));
        }
        return Ok(types
            .iter()
            .take(n as usize)
            .map(|t| kind_from_name(t.as_str().unwrap_or(""), window))
            .collect());
    }
    if let Some(pattern) = c.get("hybrid_layer_pattern").and_then(Value::as_array) {
        // MiMo-V2: 1 marks a sliding-window layer (vLLM and SGLang `mimo_v2.py ::
        // is_swa_layer`), 0 a full one.
        if pattern.len() < n as usize {
            return Err(invalid(
                c.file,
                format!(
                    "`hybrid_layer_pattern` has {} entries for {n} layers",
                    pattern.len()
                ),
            ));
        }
        return Ok(pattern
            .iter()
            .take(n as usize)
            .map(|v| {
                if as_uint(v) == Some(1) {
                    sliding(window)
                } else {
                    LayerKind::Full
                }
            })
            .collect());
    }
    let text_type = c.str("model_type").unwrap_or(model_type);
    let idx = 0..n;
    if text_type == "gemma2" {
        // Gemma 2: even layers slide (transformers `Gemma2DecoderLayer`: `not bool(layer_idx % 2)`).
        return Ok(idx
            .map(|i| {
                if i.is_multiple_of(2) {
                    sliding(window)
                } else {
                    LayerKind::Full
                }
            })
            .collect());
    }
    if text_type.starts_with("gemma3") {
        // Gemma 3: every `sliding_window_pattern`-th layer is global (transformers default 6).
        let p = c.uint_or("sliding_window_pattern", 6)?.max(1);
        return Ok(idx
            .map(|i| {
                if (u64::from(i) + 1).is_multiple_of(p) {
                    LayerKind::Full
                } else {
                    sliding(window)
                }
            })
            .collect());
    }
    if let Some(chunk) = c.uint("attention_chunk_size")? {
        return llama4_layers(c, n, c.u32("attention_chunk_size", chunk)?);
    }
    if let Some(interval) = c.uint("full_attention_interval")? {
        // Qwen3-Next: one full-attention layer every `full_attention_interval`, the rest linear.
        let p = interval.max(1);
        return Ok(idx
            .map(|i| {
                if (u64::from(i) + 1).is_multiple_of(p) {
                    LayerKind::Full
                } else {
                    LayerKind::Linear
                }
            })
            .collect());
    }
    // Mistral-style `sliding_window` on every layer unless `use_sliding_window` is false (Qwen2);
    // Qwen2 with it on slides only from `max_window_layers` up.
    if c.flag("use_sliding_window") == Some(false) {
        return Ok(vec![LayerKind::Full; n as usize]);
    }
    let from = if c.flag("use_sliding_window") == Some(true) {
        c.uint_or("max_window_layers", 0)?
    } else {
        0
    };
    Ok(idx
        .map(|i| {
            if u64::from(i) >= from {
                sliding(window)
            } else {
                LayerKind::Full
            }
        })
        .collect())
}

fn kind_from_name(name: &str, window: Option<u32>) -> LayerKind {
    if name.contains("linear") || name.contains("mamba") {
        LayerKind::Linear
    } else if name.contains("sliding") {
        // A sliding layer without a window is treated as full: it then never looks cheaper than it is.
        window.map_or(LayerKind::Full, |window| LayerKind::Sliding { window })
    } else {
        LayerKind::Full
    }
}

/// Llama 4: layers with RoPE use chunked attention, NoPE layers are global. `no_rope_layers[i]`
/// is 1 for RoPE layers; the transformers default makes every `no_rope_layer_interval`-th (4th)
/// layer NoPE.
fn llama4_layers(c: &Cfg, n: u32, size: u32) -> Result<Vec<LayerKind>, ModelError> {
    let chunked = LayerKind::Chunked { size };
    if let Some(list) = c
        .get("no_rope_layers")
        .and_then(Value::as_array)
        .filter(|l| l.len() >= n as usize)
    {
        return Ok(list
            .iter()
            .take(n as usize)
            .map(|v| {
                if as_uint(v) == Some(0) {
                    LayerKind::Full
                } else {
                    chunked
                }
            })
            .collect());
    }
    let p = c.uint_or("no_rope_layer_interval", 4)?.max(1);
    Ok((0..u64::from(n))
        .map(|i| {
            if (i + 1).is_multiple_of(p) {
                LayerKind::Full
            } else {
                chunked
            }
        })
        .collect())
}

/// The sliding window, when set and positive (`sliding_window: 0` means none in vLLM).
fn window(c: &Cfg) -> Result<Option<u32>, ModelError> {
    match c.first_uint(&["sliding_window", "sliding_window_size"])? {
        Some(w) if w > 0 => Ok(Some(c.u32("sliding_window", w)?)),
        _ => Ok(None),
    }
}

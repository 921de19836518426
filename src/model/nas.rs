//! Nemotron-NAS ("puzzle") models, `DeciLMForCausalLM`: each decoder layer is described by its
//! own `block_configs[i]` (attention: `n_heads_in_group`, `no_op`, `replace_with_linear`; ffn:
//! `ffn_mult`, `no_op`), and `num_key_value_heads` is left null. Both engines build the layers
//! alike (vLLM 0.24.0 and 0.33.0 `model_executor/models/nemotron_nas.py`, SGLang 0.5.17 and 0.5.23
//! `srt/models/nemotron_nas.py`, `DeciLMDecoderLayer.__init__`): a no-op attention builds no
//! attention module and no `input_layernorm`, any other gets `num_attention_heads //
//! n_heads_in_group` KV heads; a no-op FFN builds no MLP and no `post_attention_layernorm`, any
//! other a `LlamaMLP` of `_ffn_mult_to_intermediate_size(ffn_mult, hidden_size)`.
//!
//! The KV caches differ. vLLM registers a KV spec only for the attention modules it built, so
//! no-op layers hold no KV (`config/model.py :: get_num_layers_by_block_type`, `has_noops`).
//! SGLang takes one KV head count for the model (`configs/model_config.py ::
//! get_total_num_kv_heads`, "nemotron-nas": the set of per-layer counts, ValueError "Variable GQA
//! (VGQA) is not yet supported" when it has more than one) and sizes its pool for every decoder
//! layer (`model_runner_components/layer_setup.py :: _compute_model_num_layers`,
//! `pool_configurator.py :: _compute_cell_size`), the no-op ones included.

use serde::Serialize;
use serde_json::Value;

use super::raw::{invalid, Cfg};
use super::{LayerKind, ModelError};

/// One decoder layer as `block_configs[i]` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Block {
    /// KV heads of its attention; None for a no-op attention.
    pub kv_heads: Option<u32>,
    /// Intermediate size of its MLP; None for a no-op FFN.
    pub ffn: Option<u64>,
}

/// The per-layer blocks of a Nemotron-NAS config, and what kvlint cannot plan from them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Nas {
    pub blocks: Vec<Block>,
    /// Why the engines' KV cache for these blocks is not modelled (None: it is).
    pub unmodelled: Option<String>,
}

impl Nas {
    /// No-op attention layers keep no KV; the others are full attention.
    pub fn layers(&self) -> Vec<LayerKind> {
        let kind = |b: &Block| match b.kv_heads {
            Some(_) => LayerKind::Full,
            None => LayerKind::NoAttention,
        };
        self.blocks.iter().map(kind).collect()
    }

    /// The KV heads of the attention layers: the one count SGLang accepts, else the largest
    /// (the model is then unmodelled, see [`Nas::unmodelled`]).
    pub fn kv_heads(&self) -> Option<u32> {
        self.blocks.iter().filter_map(|b| b.kv_heads).max()
    }
}

/// `DeciLMForCausalLM` (vLLM's registry) or `model_type` "nemotron-nas" (SGLang's test).
pub(super) fn is_nas(archs: &[String], model_type: &str) -> bool {
    model_type == "nemotron-nas" || archs.iter().any(|a| a == "DeciLMForCausalLM")
}

/// The blocks of a Nemotron-NAS config, one per decoder layer.
pub(super) fn read(c: &Cfg, layers: u32, heads: u32, hidden: u64) -> Result<Nas, ModelError> {
    let list = c
        .get("block_configs")
        .and_then(Value::as_array)
        .filter(|l| l.len() == layers as usize)
        .ok_or_else(|| {
            invalid(
                c.file,
                format!("`block_configs` should list one block per layer ({layers})"),
            )
        })?;
    let mut blocks = Vec::with_capacity(list.len());
    let mut unmodelled = None;
    for (i, b) in list.iter().enumerate() {
        let (block, why) = block(c, i, b, heads, hidden)?;
        blocks.push(block);
        unmodelled = unmodelled.or(why);
    }
    let mut counts: Vec<u32> = blocks.iter().filter_map(|b| b.kv_heads).collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.len() > 1 {
        unmodelled = unmodelled.or(Some(format!(
            "its attention layers have different KV head counts ({counts:?}): SGLang refuses it \
             (\"Variable GQA (VGQA) is not yet supported\"), vLLM sizes each layer's pages apart, \
             and kvlint holds one KV head count per model"
        )));
    }
    Ok(Nas { blocks, unmodelled })
}

fn block(
    c: &Cfg,
    i: usize,
    b: &Value,
    heads: u32,
    hidden: u64,
) -> Result<(Block, Option<String>), ModelError> {
    let part = |name: &str| {
        b.get(name)
            .and_then(Value::as_object)
            .ok_or_else(|| invalid(c.file, format!("`block_configs[{i}].{name}` is missing")))
    };
    let (attn, ffn) = (part("attention")?, part("ffn")?);
    let flag = |o: &serde_json::Map<String, Value>, k: &str| o.get(k) == Some(&Value::Bool(true));
    // Neither engine builds a linear replacement: a block marked so is not planned.
    let linear = (flag(attn, "replace_with_linear") && !flag(attn, "no_op"))
        || (flag(ffn, "replace_with_linear") && !flag(ffn, "no_op"));
    let why = linear.then(|| {
        format!(
            "`block_configs[{i}]` replaces a block with a linear layer, which neither vLLM nor \
             SGLang nemotron_nas.py builds"
        )
    });
    let kv_heads = if flag(attn, "no_op") || linear {
        None
    } else {
        let group = attn
            .get("n_heads_in_group")
            .and_then(Value::as_u64)
            .filter(|g| *g > 0 && u64::from(heads).is_multiple_of(*g));
        let group = group.ok_or_else(|| {
            invalid(
                c.file,
                format!(
                    "`block_configs[{i}].attention.n_heads_in_group` should divide \
                     num_attention_heads ({heads})"
                ),
            )
        })?;
        Some(heads / group as u32)
    };
    let ffn = if flag(ffn, "no_op") {
        None
    } else {
        let mult = ffn.get("ffn_mult").and_then(Value::as_f64).ok_or_else(|| {
            invalid(
                c.file,
                format!("`block_configs[{i}].ffn.ffn_mult` is missing"),
            )
        })?;
        Some(ffn_intermediate(mult, hidden))
    };
    Ok((Block { kv_heads, ffn }, why))
}

/// `_ffn_mult_to_intermediate_size` (vLLM and SGLang nemotron_nas.py):
/// `int(2 * ffn_mult * n_embd / 3)` rounded up to a multiple of 256 (`_find_multiple`).
fn ffn_intermediate(mult: f64, hidden: u64) -> u64 {
    let size = (2.0 * mult * hidden as f64 / 3.0) as u64;
    size.next_multiple_of(256)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nas(blocks: Value) -> Result<Nas, ModelError> {
        let n = blocks.as_array().map_or(1, Vec::len) as u32;
        let v = json!({"block_configs": blocks});
        let c = Cfg::new(&v, "config.json").unwrap();
        read(&c, n, 64, 8192)
    }

    fn attn(group: Value, no_op: bool) -> Value {
        json!({"attention": {"n_heads_in_group": group, "no_op": no_op, "replace_with_linear": false},
               "ffn": {"ffn_mult": 1.0, "no_op": false, "replace_with_linear": false}})
    }

    /// `int(2 * 1.0 * 8192 / 3)` = 5461 → 5632; 0.5 → 2730 → 2816; 5.25 → 28672 exactly.
    #[test]
    fn ffn_mult_rounds_up_to_256() {
        assert_eq!(ffn_intermediate(1.0, 8192), 5632);
        assert_eq!(ffn_intermediate(0.5, 8192), 2816);
        assert_eq!(ffn_intermediate(5.25, 8192), 28672);
    }

    #[test]
    fn no_op_attention_keeps_no_kv_and_heads_come_from_the_group() {
        let n = nas(json!([attn(json!(8), false), attn(Value::Null, true)])).unwrap();
        assert_eq!(n.layers(), vec![LayerKind::Full, LayerKind::NoAttention]);
        assert_eq!(n.kv_heads(), Some(8));
        assert_eq!(n.unmodelled, None);
        assert_eq!(n.blocks[0].ffn, Some(5632));
    }

    #[test]
    fn variable_gqa_and_linear_blocks_are_unmodelled() {
        let vgqa = nas(json!([attn(json!(8), false), attn(json!(16), false)])).unwrap();
        assert_eq!(vgqa.kv_heads(), Some(8));
        assert!(vgqa.unmodelled.unwrap().contains("[4, 8]"));
        let mut lin = attn(Value::Null, false);
        lin["attention"]["replace_with_linear"] = json!(true);
        let n = nas(json!([lin])).unwrap();
        assert!(n.unmodelled.unwrap().contains("linear layer"));
        let bad = nas(json!([attn(json!(6), false)])).unwrap_err().to_string();
        assert!(
            bad.contains("block_configs[0].attention.n_heads_in_group"),
            "{bad}"
        );
    }

    #[test]
    fn malformed_blocks_name_the_key() {
        let err = nas(json!([{"attention": {"no_op": true}}]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("block_configs[0].ffn"), "{err}");
        assert!(nas(json!({})).is_err());
        let v = json!({"block_configs": [attn(json!(8), false)]});
        let c = Cfg::new(&v, "config.json").unwrap();
        let short = read(&c, 2, 64, 8192).unwrap_err().to_string();
        assert!(short.contains("one block per layer (2)"), "{short}");
    }
}

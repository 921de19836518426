//! `config.json` → the geometry fields of a [`Geometry`] (layers, heads, attention kinds, rope,
//! dtype, quantization), read the way SGLang and vLLM read them. Parameter counting sits above
//! this file (`params`), the parsed config below it (`raw`).

use serde_json::Value;

use super::quant::quantization;
use super::raw::{as_uint, invalid, num_experts, Cfg, Obj};
use super::{
    Dsa, Dtype, Geometry, LayerKind, LinearAttn, Mla, ModelError, RopeScaling, RopeTable,
    RoutedExperts, SwaHeads, WeightsSource,
};

/// KV-head keys in the engines' alias order (vLLM `transformers_utils/config.py`, SGLang
/// `ModelConfig.get_total_num_kv_heads`): the first non-null one wins.
const KV_HEAD_KEYS: [&str; 5] = [
    "n_head_kv",
    "num_kv_heads",
    "num_key_value_heads",
    "multi_query_group_num",
    "num_attention_groups",
];

/// Context-length keys vLLM reads (`ModelArchConfigConvertorBase.derive_max_model_len_and_key`);
/// SGLang's `CONTEXT_LENGTH_KEYS` are a subset.
pub(crate) const LENGTH_KEYS: [&str; 9] = [
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
];

/// SGLang `is_deepseek_dsa` architectures (`configs/model_config.py`): with `index_topk` they
/// keep an indexer key cache.
pub(super) const DSA_ARCHS: [&str; 14] = [
    "DeepseekV3ForCausalLM",
    "DeepseekV3ForCausalLMNextN",
    "DeepseekV32ForCausalLM",
    "GlmMoeDsaForCausalLM",
    "GlmMoeDsaForCausalLMNextN",
    "Glm5NextForConditionalGeneration",
    "MistralLarge3ForCausalLM",
    "LongcatFlashForCausalLM",
    "LongcatFlashForCausalLMNextN",
    "Dots3NoteForCausalLM",
    "Dots3NoteForCausalLMNextN",
    "HYV4ForCausalLM",
    "HYV4ForCausalLMNextN",
    "Glm5NextForConditionalGenerationNextN",
];

/// SGLang `configs/model_config.py :: PURE_SSM_ARCHITECTURES` (vLLM `mamba.py`, `mamba2.py`):
/// attention-free models, whose config.json need not name any attention heads.
const PURE_SSM: [&str; 3] = [
    "MambaForCausalLM",
    "Mamba2ForCausalLM",
    "FalconMambaForCausalLM",
];

pub(super) fn base_geometry(c: &Cfg, id: &str, source: &str) -> Result<Geometry, ModelError> {
    let architectures = architectures(c);
    let pure_ssm = architectures.iter().any(|a| PURE_SSM.contains(&a.as_str()));
    let model_type = c
        .root
        .get("model_type")
        .or_else(|| c.text.get("model_type"));
    let model_type = model_type
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let text_model_type = c
        .text
        .get("model_type")
        .and_then(Value::as_str)
        .map_or_else(|| model_type.clone(), str::to_string);
    // Newer Nemotron-H configs state only `layers_block_type` (SGLang
    // `configs/nemotron_h.py :: num_hidden_layers` is its length).
    let block_types = c
        .get("layers_block_type")
        .and_then(Value::as_array)
        .map(|l| l.len() as u64);
    let num_layers = match c.first_uint(&["num_hidden_layers", "n_layer", "num_layers"])? {
        Some(n) => n,
        None => block_types.ok_or_else(|| invalid(c.file, "missing `num_hidden_layers`"))?,
    };
    let num_layers = c.u32("num_hidden_layers", num_layers)?;
    let hidden_size = c.required(&["hidden_size", "d_model", "n_embd"])?;
    let head_keys = ["num_attention_heads", "n_head", "num_heads"];
    // An attention-free model reads as one nominal head over layers that hold no KV; the
    // architecture table refuses it (INP008) before any plan.
    let heads = match c.first_uint(&head_keys)? {
        None if pure_ssm => 1,
        _ => c.required(&head_keys)?,
    };
    let num_attention_heads = c.u32("num_attention_heads", heads)?;
    if num_attention_heads == 0 || num_layers == 0 {
        return Err(invalid(
            source,
            "`num_attention_heads` and `num_hidden_layers` must be positive",
        ));
    }
    let heads = Heads::read(c, hidden_size, num_attention_heads)?;
    let mla = mla(c)?;
    let (head_dim, v_head_dim) = match &mla {
        // MLA: the per-head q/k and v sizes; the KV cache holds the latent instead.
        Some(_) => (
            c.u32(
                "qk_nope_head_dim",
                c.required(&["qk_nope_head_dim"])? + c.required(&["qk_rope_head_dim"])?,
            )?,
            c.u32("v_head_dim", c.required(&["v_head_dim"])?)?,
        ),
        None => (heads.full_head_dim, heads.full_v_head_dim),
    };
    // Zamba2's shared attention block: MHA over `2 × hidden` (state.rs `zamba2_attention`).
    let (full_kv, head_dim, v_head_dim) = if text_model_type == "zamba2" {
        let (kv, d) = super::state::zamba2_attention(hidden_size, num_attention_heads);
        let d = c.u32("attention_head_dim", d)?;
        (kv, d, d)
    } else if text_model_type == "plamo2" {
        // vLLM `plamo2.py :: Plamo2AttentionMixer.__init__`: head_dim = `hidden_size_per_head`.
        let d = c.u32(
            "hidden_size_per_head",
            c.required(&["hidden_size_per_head"])?,
        )?;
        (heads.full_kv, d, d)
    } else {
        (heads.full_kv, head_dim, v_head_dim)
    };
    let nas = super::nas::is_nas(&architectures, &model_type)
        .then(|| super::nas::read(c, num_layers, num_attention_heads, hidden_size))
        .transpose()?;
    let (recurrent, layers) = match (&nas, super::state::read(c, &text_model_type, num_layers)?) {
        _ if pure_ssm => (None, vec![LayerKind::NoAttention; num_layers as usize]),
        (Some(n), _) => (None, n.layers()),
        (None, Some((r, kinds))) => (Some(r), kinds),
        (None, None) => (
            None,
            super::layers::layer_kinds(c, num_layers, &model_type)?,
        ),
    };
    let dsa = dsa(c, &architectures, num_layers)?;
    let compressed = super::compressed::compressed(c, &architectures)?;
    Ok(Geometry {
        id: id.to_string(),
        source: source.to_string(),
        model_source: None,
        moe: num_experts(c)? > 0,
        experts: routed_experts(c)?,
        intermediate: c.intermediate_size()?,
        multimodal: ["vision_config", "audio_config"]
            .iter()
            .any(|k| c.root.get(*k).is_some_and(Value::is_object))
            || super::architectures::multimodal_class(&architectures),
        vision: vision_tower(c.root.get("vision_config")),
        architectures,
        model_type,
        text_model_type,
        num_layers,
        hidden_size,
        num_attention_heads,
        num_kv_heads: nas
            .as_ref()
            .and_then(super::nas::Nas::kv_heads)
            .unwrap_or(full_kv),
        head_dim,
        v_head_dim,
        mla,
        dsa,
        layers,
        swa_heads: heads.swa,
        linear: linear(c)?,
        recurrent,
        compressed,
        nas,
        nextn_layers: nextn_layers(c)?,
        kv_shared_layers: c.u32(
            "num_kv_shared_layers",
            c.uint_or("num_kv_shared_layers", 0)?,
        )?,
        length_keys: length_keys(c.text)?,
        rope_scaling: rope_scaling(c),
        dtype: dtype(c)?,
        quantization: quantization(c),
        vocab_size: c.required(&["vocab_size", "padded_vocab_size"])?,
        params: 0,
        nextn_params: 0,
        weight_bytes: 0,
        nextn_weight_bytes: 0,
        weight_bytes_source: WeightsSource::ParamCount,
        weight_parts: Default::default(),
        rope_tables: Vec::new(),
    })
}

/// MTP layers: `num_nextn_predict_layers` (DeepSeek, Qwen3-Next), else Qwen3.5 / 3.6's
/// `mtp_num_hidden_layers` (vLLM `config/speculative.py :: SpeculativeConfig.hf_config_override`
/// reads it as `n_predict` for `qwen3_5` / `qwen3_5_moe`; `models/qwen3_5_mtp.py` builds that many
/// full-attention decoder layers).
fn nextn_layers(c: &Cfg) -> Result<u32, ModelError> {
    let n = c.first_uint(&["num_nextn_predict_layers", "mtp_num_hidden_layers"])?;
    c.u32("num_nextn_predict_layers", n.unwrap_or(0))
}

/// The routed experts' count and width, read as the parameter count reads them (`params.rs`
/// `Mlp::read`).
fn routed_experts(c: &Cfg) -> Result<Option<RoutedExperts>, ModelError> {
    let count = num_experts(c)?;
    if count == 0 {
        return Ok(None);
    }
    let intermediate = match c.first_uint(&["moe_intermediate_size", "expert_intermediate_size"])? {
        Some(i) => i,
        None => c.intermediate_size()?,
    };
    Ok(Some(RoutedExperts {
        count,
        intermediate,
        top_k: experts_per_token(c),
    }))
}

/// Experts per token: `num_experts_per_tok` (Mixtral, Qwen, DeepSeek, Llama 4), gpt-oss's
/// `experts_per_token`, Step's `num_experts_per_token`, Gemma 4's `top_k_experts`. Not `top_k`,
/// which is a sampling default in several configs.
fn experts_per_token(c: &Cfg) -> Option<u64> {
    [
        "num_experts_per_tok",
        "experts_per_token",
        "num_experts_per_token",
        "top_k_experts",
    ]
    .iter()
    .find_map(|k| c.get(k).and_then(Value::as_u64))
    .filter(|&k| k > 0)
}

fn architectures(c: &Cfg) -> Vec<String> {
    let list = |o: &Obj| -> Vec<String> {
        o.get("architectures")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut archs = list(c.root);
    if archs.is_empty() {
        archs = list(c.text);
    }
    archs
}

/// KV heads and head sizes of full-attention layers, and of sliding layers where they differ.
struct Heads {
    full_kv: u32,
    full_head_dim: u32,
    full_v_head_dim: u32,
    swa: Option<SwaHeads>,
}

impl Heads {
    fn read(c: &Cfg, hidden: u64, heads: u32) -> Result<Heads, ModelError> {
        let kv = match c.first_uint(&KV_HEAD_KEYS)? {
            Some(v) => c.u32("num_key_value_heads", v)?,
            None => heads,
        };
        // `head_dim` when present and positive, else hidden / heads
        // (vLLM `ModelArchConfigConvertorBase.get_head_size`, SGLang `ModelConfig._derive_model_shapes`).
        let head_dim = match c.uint("head_dim")? {
            Some(d) if d > 0 => c.u32("head_dim", d)?,
            _ => c.u32("head_dim", hidden / u64::from(heads))?,
        };
        // Gemma 4 states the sliding shape first and overrides it for full attention
        // (SGLang `utils/hf_transformers/config.py :: _apply_gemma4_attention_overrides`).
        let full_kv = match c.uint("num_global_key_value_heads")? {
            Some(v) => c.u32("num_global_key_value_heads", v)?,
            None => kv,
        };
        let full_head_dim = match c.uint("global_head_dim")? {
            Some(d) if d > 0 => c.u32("global_head_dim", d)?,
            _ => head_dim,
        };
        let v_head_dim = match c.uint("v_head_dim")? {
            Some(d) if d > 0 && full_head_dim == head_dim => c.u32("v_head_dim", d)?,
            _ => full_head_dim,
        };
        // SGLang-native keys (`swa_num_key_value_heads`, `swa_head_dim`, `swa_v_head_dim`).
        let swa_kv = match c.uint("swa_num_key_value_heads")? {
            Some(v) => c.u32("swa_num_key_value_heads", v)?,
            None => kv,
        };
        let swa_head_dim = match c.uint("swa_head_dim")? {
            Some(d) if d > 0 => c.u32("swa_head_dim", d)?,
            _ => head_dim,
        };
        let swa_v = match c.uint("swa_v_head_dim")? {
            Some(d) if d > 0 => c.u32("swa_v_head_dim", d)?,
            _ => swa_head_dim,
        };
        let swa = SwaHeads {
            num_kv_heads: swa_kv,
            head_dim: swa_head_dim,
            v_head_dim: swa_v,
        };
        let differs = (swa_kv, swa_head_dim, swa_v) != (full_kv, full_head_dim, v_head_dim);
        Ok(Heads {
            full_kv,
            full_head_dim,
            full_v_head_dim: v_head_dim,
            swa: differs.then_some(swa),
        })
    }
}

/// MLA when both `kv_lora_rank` and `qk_rope_head_dim` are set (DeepSeek V2/V3, Kimi K2, GLM-5).
fn mla(c: &Cfg) -> Result<Option<Mla>, ModelError> {
    match (c.uint("kv_lora_rank")?, c.uint("qk_rope_head_dim")?) {
        (Some(r), Some(p)) => Ok(Some(Mla {
            kv_lora_rank: c.u32("kv_lora_rank", r)?,
            qk_rope_head_dim: c.u32("qk_rope_head_dim", p)?,
        })),
        _ => Ok(None),
    }
}

fn dsa(c: &Cfg, archs: &[String], num_layers: u32) -> Result<Option<Dsa>, ModelError> {
    let Some(topk) = c.uint("index_topk")? else {
        return Ok(None);
    };
    let text_archs = c.text.get("architectures").and_then(Value::as_array);
    let text_archs = text_archs.into_iter().flatten().filter_map(Value::as_str);
    let is_dsa = archs
        .iter()
        .map(String::as_str)
        .chain(text_archs)
        .any(|a| DSA_ARCHS.contains(&a));
    if !is_dsa {
        return Ok(None);
    }
    // Layers that reuse another layer's top-k keep no index keys
    // (SGLang `_compute_dsa_indexer_cell_size`: `indexer_types[i] == "shared"`).
    let indexer_layers = match c.get("indexer_types").and_then(Value::as_array) {
        Some(types) => types
            .iter()
            .take(num_layers as usize)
            .filter(|t| t.as_str() != Some("shared"))
            .count() as u32,
        None => num_layers,
    };
    Ok(Some(Dsa {
        index_head_dim: c.u32("index_head_dim", c.uint_or("index_head_dim", 128)?)?,
        index_topk: c.u32("index_topk", topk)?,
        indexer_layers,
    }))
}

fn linear(c: &Cfg) -> Result<Option<LinearAttn>, ModelError> {
    let Some(nk) = c.uint("linear_num_key_heads")? else {
        return Ok(None);
    };
    let field = |k: &str| -> Result<u32, ModelError> { c.u32(k, c.required(&[k])?) };
    Ok(Some(LinearAttn {
        num_key_heads: c.u32("linear_num_key_heads", nk)?,
        num_value_heads: field("linear_num_value_heads")?,
        key_head_dim: field("linear_key_head_dim")?,
        value_head_dim: field("linear_value_head_dim")?,
        conv_kernel: c.u32(
            "linear_conv_kernel_dim",
            c.uint_or("linear_conv_kernel_dim", 4)?,
        )?,
    }))
}

fn length_keys(text: &Obj) -> Result<Vec<(String, u64)>, ModelError> {
    Ok(text
        .iter()
        .filter(|(k, _)| LENGTH_KEYS.contains(&k.as_str()))
        .filter_map(|(k, v)| as_uint(v).map(|v| (k.clone(), v)))
        .collect())
}

/// The rotary tables the engines build at load (SGLang and vLLM `get_rope` → one
/// `RotaryEmbedding` per distinct setup, cached in `_ROPE_DICT`). Rows: `max_position_embeddings`,
/// or `original_max_position_embeddings × factor` for YaRN (`YaRNScalingRotaryEmbedding`,
/// `DeepseekScalingRotaryEmbedding`) and `max_position_embeddings × factor` for linear and
/// dynamic NTK scaling. Width: the rotary dims (`qk_rope_head_dim` for MLA, else head_dim ×
/// `partial_rotary_factor`), except Gemma 4's "proportional" rope, whose table spans the whole
/// head (SGLang rotary_embedding/rope_variant.py :: Gemma4RotaryEmbedding). Sliding-window
/// layers with their own head size or rope base get a table of their own, and a DSA indexer
/// one more (its rope is neox-style, the MLA rope is not).
pub(super) fn rope_tables(c: &Cfg, g: &Geometry) -> Vec<RopeTable> {
    let Some(max_pos) = g.max_position_embeddings() else {
        return Vec::new();
    };
    let positions = rope_positions(max_pos, g.rope_scaling.as_ref());
    let params = ["rope_parameters", "rope_scaling"]
        .iter()
        .find_map(|k| c.text.get(*k).and_then(Value::as_object));
    let layer_params = |kind: &str| params.and_then(|p| p.get(kind)).and_then(Value::as_object);
    let partial = |o: Option<&Obj>| {
        o.and_then(|o| o.get("partial_rotary_factor"))
            .or_else(|| c.text.get("partial_rotary_factor"))
            .or_else(|| c.text.get("rotary_pct"))
            .and_then(Value::as_f64)
            .unwrap_or(1.0)
    };
    let full = layer_params("full_attention");
    let width = match (&g.mla, &g.rope_scaling) {
        (Some(m), _) => u64::from(m.qk_rope_head_dim),
        (None, Some(r)) if r.rope_type == "proportional" => u64::from(g.head_dim),
        _ => (f64::from(g.head_dim) * partial(full.or(params))) as u64,
    };
    let mut tables = vec![RopeTable { positions, width }];
    let sliding = layer_params("sliding_attention");
    let has_sliding = g
        .layers
        .iter()
        .any(|l| matches!(l, LayerKind::Sliding { .. } | LayerKind::Chunked { .. }));
    let swa_dim = g.swa_heads.as_ref().map_or(g.head_dim, |s| s.head_dim);
    let own_rope =
        swa_dim != g.head_dim || sliding.is_some() || c.text.contains_key("rope_local_base_freq");
    if has_sliding && own_rope && g.mla.is_none() {
        let width = (f64::from(swa_dim) * partial(sliding)) as u64;
        tables.push(RopeTable {
            positions: max_pos,
            width,
        });
    }
    if g.dsa.is_some() {
        tables.push(RopeTable { positions, width });
    }
    tables
}

/// Rows of the full-attention rotary table (see [`rope_tables`]).
pub(super) fn rope_positions(max_pos: u64, r: Option<&RopeScaling>) -> u64 {
    match r {
        Some(r) if r.rope_type.contains("yarn") => {
            (r.original_max_position_embeddings.unwrap_or(max_pos) as f64 * r.factor) as u64
        }
        Some(r) if matches!(r.rope_type.as_str(), "linear" | "dynamic") => {
            (max_pos as f64 * r.factor) as u64
        }
        _ => max_pos,
    }
}

/// `rope_scaling`, or transformers v5 `rope_parameters` (per layer type for Gemma 4: the
/// full-attention entry counts). `None` when it states no scaling.
pub(super) fn rope_scaling(c: &Cfg) -> Option<RopeScaling> {
    let obj = ["rope_scaling", "rope_parameters"]
        .iter()
        .find_map(|k| c.text.get(*k).and_then(Value::as_object))?;
    let obj = obj
        .get("full_attention")
        .and_then(Value::as_object)
        .unwrap_or(obj);
    let rope_type = obj
        .get("rope_type")
        .or_else(|| obj.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("default");
    let factor = obj.get("factor").and_then(Value::as_f64);
    let original = obj
        .get("original_max_position_embeddings")
        .and_then(as_uint);
    if rope_type == "default" && factor.is_none() && original.is_none() {
        return None;
    }
    Some(RopeScaling {
        rope_type: rope_type.to_string(),
        factor: factor.unwrap_or(1.0),
        original_max_position_embeddings: original,
    })
}

fn dtype(c: &Cfg) -> Result<Dtype, ModelError> {
    let s = c.str("torch_dtype").or_else(|| c.str("dtype"));
    match s.map(|s| s.trim_start_matches("torch.")) {
        None | Some("bfloat16") => Ok(Dtype::Bf16),
        Some("float16" | "half") => Ok(Dtype::F16),
        Some("float32" | "float") => Ok(Dtype::F32),
        Some(other) => Err(invalid(c.file, format!("unknown `torch_dtype` {other:?}"))),
    }
}

/// Vision encoder depth and width under the key spellings VLM configs use
/// (`num_hidden_layers`/`depth`/`vt_num_hidden_layers`, `hidden_size`/`embed_dim`/`vt_hidden_size`).
fn vision_tower(v: Option<&Value>) -> Option<crate::model::VisionTower> {
    let v = v?.as_object()?;
    let first = |keys: &[&str]| keys.iter().find_map(|k| v.get(*k).and_then(Value::as_u64));
    Some(crate::model::VisionTower {
        layers: u32::try_from(first(&[
            "num_hidden_layers",
            "depth",
            "vt_num_hidden_layers",
            "num_layers",
        ])?)
        .ok()?,
        hidden: first(&["hidden_size", "embed_dim", "vt_hidden_size", "width"])?,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::Quantization;

    fn geo(v: Value) -> Geometry {
        Geometry::from_config_json("t", "test.json", &v).unwrap()
    }

    fn base(extra: Value) -> Value {
        let mut v = json!({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 4,
            "hidden_size": 1024, "num_attention_heads": 16, "vocab_size": 1000});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v
    }

    #[test]
    fn dense_gqa_defaults() {
        let g = geo(base(json!({"num_key_value_heads": 4})));
        assert_eq!((g.num_kv_heads, g.head_dim, g.v_head_dim), (4, 64, 64));
        assert_eq!(g.layers, vec![LayerKind::Full; 4]);
        assert_eq!(g.dtype, Dtype::Bf16);
        assert!(g.mla.is_none() && !g.moe && !g.multimodal);
    }

    #[test]
    fn kv_head_aliases_in_engine_order() {
        let g = geo(base(
            json!({"num_key_value_heads": 4, "num_kv_heads": 2, "multi_query_group_num": 8}),
        ));
        assert_eq!(g.num_kv_heads, 2);
        let g = geo(base(json!({"n_head_kv": null, "multi_query_group_num": 8})));
        assert_eq!(g.num_kv_heads, 8);
        assert_eq!(geo(base(json!({}))).num_kv_heads, 16, "MHA fallback");
    }

    /// Qwen3.5 / 3.6 name their MTP layers `mtp_num_hidden_layers`; DeepSeek's key wins where
    /// both are present, and neither means no MTP layer.
    #[test]
    fn mtp_layer_keys() {
        assert_eq!(
            geo(base(json!({"mtp_num_hidden_layers": 1}))).nextn_layers,
            1
        );
        let both = json!({"num_nextn_predict_layers": 3, "mtp_num_hidden_layers": 1});
        assert_eq!(geo(base(both)).nextn_layers, 3);
        assert_eq!(geo(base(json!({}))).nextn_layers, 0);
    }

    #[test]
    fn mla_and_dsa() {
        let g = geo(base(
            json!({"architectures": ["GlmMoeDsaForCausalLM"], "kv_lora_rank": 512, "qk_rope_head_dim": 64,
            "qk_nope_head_dim": 192, "v_head_dim": 256, "q_lora_rank": 256, "head_dim": 64, "index_topk": 2048,
            "index_head_dim": 128, "index_n_heads": 4, "indexer_types": ["full", "shared", "shared", "full"],
            "num_nextn_predict_layers": 1}),
        ));
        assert_eq!(
            g.mla,
            Some(Mla {
                kv_lora_rank: 512,
                qk_rope_head_dim: 64
            })
        );
        assert_eq!((g.head_dim, g.v_head_dim), (256, 256));
        assert_eq!(
            g.dsa,
            Some(Dsa {
                index_head_dim: 128,
                index_topk: 2048,
                indexer_layers: 2
            })
        );
        assert_eq!(g.nextn_layers, 1);
        assert!(g.nextn_params > 0);
        // index_topk on an architecture outside SGLang's DSA list: no indexer cache.
        let g = geo(base(
            json!({"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
            "v_head_dim": 128, "index_topk": 2048}),
        ));
        assert!(g.dsa.is_none() && g.mla.is_some());
    }

    #[test]
    fn layer_types_and_alternating_patterns() {
        let g = geo(base(json!({"sliding_window": 128,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]})));
        assert_eq!(g.layers[0], LayerKind::Sliding { window: 128 });
        assert_eq!(g.full_layers(), 2);
        let g = geo(base(
            json!({"model_type": "gemma2", "sliding_window": 4096}),
        ));
        assert_eq!(g.layers[0], LayerKind::Sliding { window: 4096 });
        assert_eq!(g.layers[1], LayerKind::Full);
        let g = geo(base(
            json!({"model_type": "gemma3_text", "num_hidden_layers": 12, "sliding_window": 1024}),
        ));
        assert_eq!(g.full_layers(), 2);
        assert_eq!(g.layers[5], LayerKind::Full);
        let short = base(json!({"layer_types": ["full_attention"]}));
        assert!(Geometry::from_config_json("t", "x.json", &short).is_err());
    }

    #[test]
    fn llama4_chunked_and_qwen3_next_linear() {
        let g = geo(base(
            json!({"model_type": "llama4_text", "num_hidden_layers": 8, "attention_chunk_size": 8192}),
        ));
        assert_eq!(g.full_layers(), 2);
        assert_eq!(g.layers[0], LayerKind::Chunked { size: 8192 });
        assert_eq!(g.layers[3], LayerKind::Full);
        let g = geo(base(
            json!({"model_type": "qwen3_next", "num_hidden_layers": 8, "full_attention_interval": 4,
            "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
            "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4}),
        ));
        assert_eq!(g.full_layers(), 2);
        assert_eq!(
            g.layers.iter().filter(|l| **l == LayerKind::Linear).count(),
            6
        );
        assert_eq!(
            g.linear.map(|l| (l.num_value_heads, l.conv_kernel)),
            Some((32, 4))
        );
    }

    #[test]
    fn mistral_window_unless_use_sliding_window_is_false() {
        let g = geo(base(
            json!({"model_type": "mistral", "sliding_window": 4096}),
        ));
        assert_eq!(g.layers, vec![LayerKind::Sliding { window: 4096 }; 4]);
        let g = geo(base(
            json!({"model_type": "qwen2", "sliding_window": 131072, "use_sliding_window": false}),
        ));
        assert_eq!(g.full_layers(), 4);
        assert_eq!(geo(base(json!({"sliding_window": null}))).full_layers(), 4);
        assert_eq!(geo(base(json!({"sliding_window": 0}))).full_layers(), 4);
    }

    #[test]
    fn rope_tables_follow_each_rotary_setup() {
        let t = |positions, width| RopeTable { positions, width };
        // Llama 4 Scout: 10,485,760 positions × head_dim 128 (llama3 scaling keeps the length).
        let scout = geo(
            json!({"model_type": "llama4_text", "num_hidden_layers": 2, "hidden_size": 512,
            "num_attention_heads": 4, "head_dim": 128, "vocab_size": 100, "max_position_embeddings": 10485760,
            "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "original_max_position_embeddings": 8192}}),
        );
        assert_eq!(scout.rope_tables, vec![t(10_485_760, 128)]);
        // YaRN: original × factor rows; partial rotary halves the width.
        let yarn = geo(
            json!({"model_type": "qwen3", "num_hidden_layers": 2, "hidden_size": 512,
            "num_attention_heads": 4, "head_dim": 128, "vocab_size": 100, "max_position_embeddings": 131072,
            "partial_rotary_factor": 0.5,
            "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16384}}),
        );
        assert_eq!(yarn.rope_tables, vec![t(65_536, 64)]);
        // Gemma 4: the proportional full-layer table spans the whole 128-wide head; the sliding
        // layers (head 64, own rope parameters) get their own.
        let gemma4 = geo(
            json!({"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
            "text_config": {"num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 8,
                "num_key_value_heads": 4, "head_dim": 64, "global_head_dim": 128, "num_global_key_value_heads": 1,
                "sliding_window": 512, "layer_types": ["sliding_attention", "full_attention"], "vocab_size": 100,
                "max_position_embeddings": 4096, "rope_parameters": {
                    "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25},
                    "sliding_attention": {"rope_type": "default"}}}}),
        );
        assert_eq!(gemma4.rope_tables, vec![t(4096, 128), t(4096, 64)]);
    }

    #[test]
    fn gemma4_split_heads_in_text_config() {
        let g = geo(
            json!({"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
            "vision_config": {"hidden_size": 64, "num_hidden_layers": 2},
            "text_config": {"num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 8,
                "num_key_value_heads": 4, "head_dim": 64, "global_head_dim": 128, "num_global_key_value_heads": 1,
                "sliding_window": 512, "layer_types": ["sliding_attention", "full_attention"], "vocab_size": 100,
                "max_position_embeddings": 4096}}),
        );
        assert_eq!((g.num_kv_heads, g.head_dim, g.v_head_dim), (1, 128, 128));
        assert_eq!(
            g.swa_heads,
            Some(SwaHeads {
                num_kv_heads: 4,
                head_dim: 64,
                v_head_dim: 64
            })
        );
        assert!(g.multimodal);
        assert_eq!(g.max_position_embeddings(), Some(4096));
    }

    #[test]
    fn lengths_rope_dtype_and_quantization() {
        let g = geo(base(
            json!({"seq_length": 8192, "max_position_embeddings": 4096, "torch_dtype": "float16",
            "rope_parameters": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024},
            "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}}),
        ));
        assert_eq!(
            g.length_keys,
            vec![
                ("seq_length".into(), 8192),
                ("max_position_embeddings".into(), 4096)
            ]
        );
        assert_eq!(
            g.rope_scaling.map(|r| (r.rope_type, r.factor)),
            Some(("yarn".into(), 4.0))
        );
        assert_eq!(g.dtype, Dtype::F16);
        assert_eq!(
            g.quantization,
            Some(Quantization {
                method: "modelopt".into(),
                weight_bits: 4,
                kv_cache_fp8: true,
                group_size: Some(16)
            })
        );
        let ct = geo(base(
            json!({"quantization_config": {"quant_method": "compressed-tensors",
            "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}},
            "kv_cache_scheme": {"num_bits": 8, "type": "float"}}}),
        ));
        assert_eq!(
            ct.quantization.map(|q| (q.weight_bits, q.kv_cache_fp8)),
            Some((8, true))
        );
        assert!(geo(base(json!({"rope_scaling": {"rope_type": "default"}})))
            .rope_scaling
            .is_none());
    }

    /// Gemma 3n states `intermediate_size` per layer: counted as the mean rounded up (100.5 →
    /// 101); `num_kv_shared_layers` is kept for the engines that skip those layers' KV.
    #[test]
    fn per_layer_intermediate_sizes_and_kv_shared_layers() {
        let list = geo(base(json!({"intermediate_size": [100, 101, 100, 101],
            "num_kv_shared_layers": 2})));
        assert_eq!(
            list.params,
            geo(base(json!({"intermediate_size": 101}))).params
        );
        assert_eq!(list.kv_shared_layers, 2);
        let bad = base(json!({"intermediate_size": [100, "x"]}));
        let err = Geometry::from_config_json("t", "c", &bad).unwrap_err();
        assert!(err.to_string().contains("intermediate_size"), "{err}");
    }

    #[test]
    fn bad_input_is_an_error_naming_the_file() {
        let err = Geometry::from_config_json("t", "cfg.json", &json!([1]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cfg.json"), "{err}");
        let err = Geometry::from_config_json("t", "cfg.json", &json!({"hidden_size": 8}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("num_hidden_layers"), "{err}");
        let err = Geometry::from_config_json("t", "cfg.json", &base(json!({"hidden_size": "big"})))
            .unwrap_err();
        assert!(err.to_string().contains("hidden_size"));
        assert!(
            Geometry::from_config_json("t", "c", &base(json!({"torch_dtype": "int3"}))).is_err()
        );
        assert!(
            Geometry::from_config_json("t", "c", &base(json!({"num_attention_heads": 0}))).is_err()
        );
    }
}

//! Per-request recurrent state of the hybrid layers that are not Gated DeltaNet (that one is
//! [`super::LinearAttn`]): Mamba2 (Nemotron-H, Granite-4.0-H, Falcon-H1, Zamba2, Bamba), Mamba1
//! (Jamba), short convolutions (LFM2), KimiDeltaAttention (Kimi-Linear) and lightning attention
//! (MiniMax-Text-01 / M1). The shapes are the engines' own state-shape calculators; both engines
//! carry the same ones (vLLM `model_executor/layers/mamba/mamba_utils.py ::
//! MambaStateShapeCalculator`, SGLang `configs/mamba_utils.py :: Mamba2StateShape` /
//! `KimiLinearStateShape`, 0.33.0 / 0.5.23). Which element dtype each engine stores them in is
//! capacity code (`capacity/sglang/mamba.rs`, `capacity/vllm/mamba.rs`).

use serde::Serialize;
use serde_json::Value;

use super::raw::{as_uint, invalid, Cfg};
use super::{LayerKind, ModelError};

/// The state layout of one recurrent layer, unsharded.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum StateShape {
    /// `mamba2_state_shape`: a conv state over `intermediate + 2 × groups × state` channels and
    /// an SSM state of `heads × head_dim × state`.
    Mamba2 {
        intermediate: u64,
        groups: u64,
        heads: u64,
        head_dim: u64,
        state: u64,
        conv_kernel: u64,
    },
    /// `mamba1_state_shape` (SGLang `create_full_rank`): conv over `intermediate` channels, SSM
    /// state `intermediate × state`.
    Mamba1 {
        intermediate: u64,
        state: u64,
        conv_kernel: u64,
    },
    /// `short_conv_state_shape`: a conv state only. vLLM convolves `conv_dim` channels, SGLang
    /// `hidden_size` (`configs/lfm2.py :: Lfm2Config.mamba2_cache_params`).
    ShortConv {
        conv_dim: u64,
        hidden: u64,
        conv_kernel: u64,
    },
    /// `kda_state_shape` / `KimiLinearStateShape.create`: conv over q, k and v projections
    /// (`heads × head_dim` each), recurrent state `heads × head_dim × head_dim`.
    Kda {
        heads: u64,
        head_dim: u64,
        conv_kernel: u64,
    },
    /// `linear_attention_state_shape`: `heads × head_dim × head_dim`, no conv state.
    Lightning { heads: u64, head_dim: u64 },
}

/// The recurrent layers of a hybrid model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recurrent {
    pub shape: StateShape,
    /// Layers that hold one state per request (Falcon-H1: every layer, beside its attention).
    pub layers: u32,
    /// `mamba_ssm_dtype` as config.json states it, for the families whose SGLang config passes
    /// itself to `mamba2_state_dtype` (Nemotron-H, Falcon-H1, LFM2).
    pub config_ssm_dtype: Option<String>,
    /// Nemotron-H's `mamba_ssm_cache_dtype`, float32 when unset (vLLM
    /// `models/config.py :: NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype`).
    pub config_ssm_cache_dtype: Option<String>,
    /// Attention ('*') layers in one step of Nemotron-H's `mtp_hybrid_override_pattern` (vLLM
    /// `models/nemotron_h_mtp.py :: NemotronHMultiTokenPredictor.__init__` builds
    /// `num_nextn_predict_layers` steps of that pattern); 0 for the other families.
    pub mtp_attention_per_step: u32,
}

/// Which engine's variant of a shape to take where the two differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Sglang,
    Vllm,
}

/// Conv-state and SSM-state elements of one layer on one of `tp` ranks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StateElems {
    pub conv: u64,
    pub ssm: u64,
}

impl StateShape {
    /// The architecture table's name for this layout (tools/gen_architectures.py `MARKERS`).
    pub fn layout(&self) -> &'static str {
        match self {
            StateShape::Mamba2 { .. } | StateShape::Mamba1 { .. } => "mamba",
            StateShape::ShortConv { .. } => "short_conv",
            StateShape::Kda { .. } => "kimi_linear",
            StateShape::Lightning { .. } => "lightning",
        }
    }
}

impl Recurrent {
    /// Conv-state elements of one row on one of `tp` ranks (`conv_dim / tp`) for a Mamba2
    /// layer, whose conv state vLLM widens by one row per speculative token
    /// (`mamba_utils.py :: MambaStateShapeCalculator.mamba2_state_shape`, `num_spec`); None for
    /// the other shapes.
    pub fn mamba2_conv_row(&self, tp: u32, reader: Reader) -> Option<u64> {
        match self.shape {
            StateShape::Mamba2 { conv_kernel, .. } if conv_kernel > 1 => {
                Some(self.elems(tp, reader).conv / (conv_kernel - 1))
            }
            _ => None,
        }
    }

    /// Elements per layer and rank. Mamba2 replicates the B/C groups when `groups % tp != 0`
    /// (`extra_groups_for_head_shards`: `tp − groups` more), then splits channels and heads.
    pub fn elems(&self, tp: u32, reader: Reader) -> StateElems {
        let tp = u64::from(tp.max(1));
        match self.shape {
            StateShape::Mamba2 {
                intermediate,
                groups,
                heads,
                head_dim,
                state,
                conv_kernel,
            } => {
                let groups = if groups % tp == 0 { groups } else { tp };
                StateElems {
                    conv: (intermediate + 2 * groups * state) / tp * (conv_kernel - 1),
                    ssm: heads / tp * head_dim * state,
                }
            }
            StateShape::Mamba1 {
                intermediate,
                state,
                conv_kernel,
            } => StateElems {
                conv: intermediate / tp * (conv_kernel - 1),
                ssm: intermediate / tp * state,
            },
            StateShape::ShortConv {
                conv_dim,
                hidden,
                conv_kernel,
            } => {
                let dim = if reader == Reader::Vllm {
                    conv_dim
                } else {
                    hidden
                };
                StateElems {
                    conv: dim / tp * (conv_kernel - 1),
                    ssm: 0,
                }
            }
            StateShape::Kda {
                heads,
                head_dim,
                conv_kernel,
            } => StateElems {
                conv: 3 * (heads * head_dim / tp) * (conv_kernel - 1),
                ssm: heads / tp * head_dim * head_dim,
            },
            StateShape::Lightning { heads, head_dim } => StateElems {
                conv: 0,
                ssm: heads / tp * head_dim * head_dim,
            },
        }
    }
}

/// The recurrent layers and the per-layer kinds of a hybrid model whose family this file
/// reads, by the text config's `model_type`; None for every other model.
pub(super) fn read(
    c: &Cfg,
    model_type: &str,
    n: u32,
) -> Result<Option<(Recurrent, Vec<LayerKind>)>, ModelError> {
    let linear = |l: &[LayerKind]| l.iter().filter(|k| **k == LayerKind::Linear).count() as u32;
    let (shape, layers, state_layers) = match model_type {
        "nemotron_h" => {
            let pattern = nemotron_h_pattern(c, n)?;
            let mamba = pattern.iter().filter(|ch| **ch == 'M').count() as u32;
            // Only '*' layers attend; MLP and MoE layers keep nothing, Mamba2 layers a state.
            let layers = pattern
                .iter()
                .map(|ch| {
                    if *ch == '*' {
                        LayerKind::Full
                    } else {
                        LayerKind::Linear
                    }
                })
                .collect();
            (mamba2(c, NEMOTRON_H)?, layers, mamba)
        }
        "granitemoehybrid" => {
            let layers = named_layers(c, n, &["mamba"])?;
            let k = linear(&layers);
            (mamba2(c, GRANITE)?, layers, k)
        }
        // Falcon-H1 runs a Mamba2 mixer beside the attention of every layer (SGLang
        // `configs/falcon_h1.py :: linear_layer_ids` and `full_attention_layer_ids`: all).
        "falcon_h1" => (mamba2(c, FALCON_H1)?, vec![LayerKind::Full; n as usize], n),
        "jamba" => {
            let layers = jamba_layers(c, n)?;
            let k = linear(&layers);
            (jamba(c)?, layers, k)
        }
        "lfm2" | "lfm2_moe" => {
            let layers = lfm2_layers(c, n)?;
            let k = linear(&layers);
            (short_conv(c)?, layers, k)
        }
        "kimi_linear" => {
            let (shape, layers) = kimi_linear(c, n)?;
            let k = linear(&layers);
            (shape, layers, k)
        }
        // Zamba2 runs a Mamba2 mixer on every layer; its "hybrid" layers add a shared
        // attention block with a KV cache of its own (vLLM `zamba2.py :: Zamba2Attention`).
        "zamba2" => (zamba2(c)?, zamba2_layers(c, n)?, n),
        "bamba" => {
            let layers = bamba_layers(c, n)?;
            let k = linear(&layers);
            (bamba(c)?, layers, k)
        }
        "plamo2" => {
            let layers = plamo2_layers(c, n)?;
            let k = linear(&layers);
            (plamo2(c)?, layers, k)
        }
        "minimax_text_01" | "minimax_m1" | "minimax" => {
            let (shape, layers) = minimax(c, n)?;
            let k = linear(&layers);
            (shape, layers, k)
        }
        _ => return Ok(None),
    };
    let text = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_string);
    // SGLang passes the config to `mamba2_state_dtype` for these families only; vLLM's
    // Nemotron-H hook defaults to float32 (`DEFAULT_MAMBA_SSM_CACHE_DTYPE`).
    let sglang_reads = matches!(model_type, "nemotron_h" | "falcon_h1" | "lfm2" | "lfm2_moe");
    let nemotron = model_type == "nemotron_h";
    Ok(Some((
        Recurrent {
            shape,
            layers: state_layers,
            config_ssm_dtype: text("mamba_ssm_dtype").filter(|_| sglang_reads),
            config_ssm_cache_dtype: nemotron
                .then(|| text("mamba_ssm_cache_dtype").unwrap_or_else(|| "float32".into())),
            mtp_attention_per_step: match text("mtp_hybrid_override_pattern") {
                Some(p) if nemotron => p.chars().filter(|ch| *ch == '*').count() as u32,
                _ => 0,
            },
        },
        layers,
    )))
}

/// Mamba2 key names per family: (intermediate, groups, heads, head_dim, state, conv kernel).
/// An intermediate of "" is `heads × head_dim` (Nemotron-H: vLLM and SGLang `nemotron_h.py`
/// pass `mamba_num_heads * mamba_head_dim`); "expand" is `mamba_expand × hidden_size`
/// (vLLM `granitemoehybrid.py`, SGLang `configs/granitemoehybrid.py`), Falcon-H1 first takes
/// `mamba_d_ssm` (vLLM `falcon_h1.py`, SGLang `configs/falcon_h1.py :: mamba_intermediate`).
type Mamba2Keys = [&'static str; 6];
const NEMOTRON_H: Mamba2Keys = [
    "",
    "n_groups",
    "mamba_num_heads",
    "mamba_head_dim",
    "ssm_state_size",
    "conv_kernel",
];
const GRANITE: Mamba2Keys = [
    "expand",
    "mamba_n_groups",
    "mamba_n_heads",
    "mamba_d_head",
    "mamba_d_state",
    "mamba_d_conv",
];
const FALCON_H1: Mamba2Keys = [
    "mamba_d_ssm",
    "mamba_n_groups",
    "mamba_n_heads",
    "mamba_d_head",
    "mamba_d_state",
    "mamba_d_conv",
];

fn need(c: &Cfg, k: &str) -> Result<u64, ModelError> {
    c.required(&[k])
}

fn mamba2(c: &Cfg, keys: Mamba2Keys) -> Result<StateShape, ModelError> {
    let [inter, groups, heads, head_dim, state, kernel] = keys;
    let (heads, head_dim) = (need(c, heads)?, need(c, head_dim)?);
    let expand = || -> Result<u64, ModelError> {
        Ok(c.uint_or("mamba_expand", 2)? * need(c, "hidden_size")?)
    };
    let intermediate = match inter {
        "" => heads * head_dim,
        "expand" => expand()?,
        key => match c.uint(key)? {
            Some(v) => v,
            None => expand()?,
        },
    };
    Ok(StateShape::Mamba2 {
        intermediate,
        groups: need(c, groups)?,
        heads,
        head_dim,
        state: need(c, state)?,
        conv_kernel: c.uint_or(kernel, 4)?.max(1),
    })
}

/// vLLM `jamba.py :: get_mamba_state_shape_from_config`: `mamba_expand × hidden_size`.
fn jamba(c: &Cfg) -> Result<StateShape, ModelError> {
    Ok(StateShape::Mamba1 {
        intermediate: c.uint_or("mamba_expand", 2)? * need(c, "hidden_size")?,
        state: c.uint_or("mamba_d_state", 16)?,
        conv_kernel: c.uint_or("mamba_d_conv", 4)?.max(1),
    })
}

/// vLLM `zamba2.py :: Zamba2ForCausalLM.get_mamba_state_shape_from_config` (0.33.0): width
/// `mamba_expand × hidden_size`, `mamba_ngroups` groups, `n_mamba_heads` heads of
/// `mamba_headdim`, which transformers `Zamba2Config.__post_init__` derives as width /
/// heads whatever the file says. Unset keys take `Zamba2Config`'s defaults.
fn zamba2(c: &Cfg) -> Result<StateShape, ModelError> {
    let intermediate = c.uint_or("mamba_expand", 2)? * need(c, "hidden_size")?;
    let heads = c.uint_or("n_mamba_heads", 8)?.max(1);
    Ok(StateShape::Mamba2 {
        intermediate,
        groups: c.uint_or("mamba_ngroups", 1)?,
        heads,
        head_dim: intermediate / heads,
        state: c.uint_or("mamba_d_state", 64)?,
        conv_kernel: c.uint_or("mamba_d_conv", 4)?.max(1),
    })
}

/// Zamba2's attention, as vLLM builds it (`zamba2.py :: Zamba2Attention.__init__`): one
/// `Attention` per hybrid layer with `num_attention_heads` KV heads (no GQA) of
/// `attention_head_dim`, which transformers `Zamba2Config.__post_init__` sets to
/// `2 × hidden_size / num_attention_heads` (the shared block attends over the hidden state
/// concatenated with the embeddings). Returns (KV heads, head dim).
pub(super) fn zamba2_attention(hidden: u64, heads: u32) -> (u32, u64) {
    (heads, 2 * hidden / u64::from(heads.max(1)))
}

/// `layers_block_type`: "hybrid" layers attend (and run their mixer), the others
/// ("mamba", or "linear_attention" as transformers 5 remaps it) run only the mixer.
fn zamba2_layers(c: &Cfg, n: u32) -> Result<Vec<LayerKind>, ModelError> {
    let Some(types) = c.get("layers_block_type").and_then(Value::as_array) else {
        return Err(invalid(c.file, "a zamba2 config needs `layers_block_type`"));
    };
    if types.len() != n as usize {
        return Err(invalid(
            c.file,
            format!(
                "`layers_block_type` has {} entries for {n} layers",
                types.len()
            ),
        ));
    }
    Ok(types
        .iter()
        .map(|t| {
            if t.as_str() == Some("hybrid") {
                LayerKind::Full
            } else {
                LayerKind::Linear
            }
        })
        .collect())
}

/// vLLM `bamba.py :: BambaForCausalLM.get_mamba_state_shape_from_config` (0.23.0): width
/// `mamba_expand × hidden_size`; `mamba_d_head` "auto" (or unset) is width / `mamba_n_heads`
/// (transformers `BambaConfig`, whose defaults fill the unset keys).
fn bamba(c: &Cfg) -> Result<StateShape, ModelError> {
    let intermediate = c.uint_or("mamba_expand", 2)? * need(c, "hidden_size")?;
    let heads = c.uint_or("mamba_n_heads", 128)?.max(1);
    let head_dim = match c.get("mamba_d_head") {
        Some(v) if v.as_str() == Some("auto") => intermediate / heads,
        _ => c.uint_or("mamba_d_head", intermediate / heads)?,
    };
    Ok(StateShape::Mamba2 {
        intermediate,
        groups: c.uint_or("mamba_n_groups", 1)?,
        heads,
        head_dim,
        state: c.uint_or("mamba_d_state", 256)?,
        conv_kernel: c.uint_or("mamba_d_conv", 4)?.max(1),
    })
}

/// Bamba: attention on `attn_layer_indices`, Mamba2 elsewhere (transformers
/// `BambaConfig.layers_block_type`, from which vLLM `bamba.py :: BambaModel` builds its layers).
/// Without the list every layer would be Mamba2 and hold no KV at all, which kvlint does not plan.
fn bamba_layers(c: &Cfg, n: u32) -> Result<Vec<LayerKind>, ModelError> {
    let attn: Vec<u64> = c
        .get("attn_layer_indices")
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(as_uint).collect())
        .unwrap_or_default();
    if attn.is_empty() {
        return Err(invalid(c.file, "a bamba config needs `attn_layer_indices`"));
    }
    Ok((0..u64::from(n))
        .map(|i| {
            if attn.contains(&i) {
                LayerKind::Full
            } else {
                LayerKind::Linear
            }
        })
        .collect())
}

/// vLLM `plamo2.py :: Plamo2ForCausalLM.get_mamba_state_shape_from_config` (0.26.0): width
/// `mamba_num_heads × hidden_size_per_head`, no B/C groups (`n_groups=0`), state
/// `mamba_d_state`, kernel `mamba_d_conv`.
fn plamo2(c: &Cfg) -> Result<StateShape, ModelError> {
    let (heads, head_dim) = (
        need(c, "mamba_num_heads")?,
        need(c, "hidden_size_per_head")?,
    );
    Ok(StateShape::Mamba2 {
        intermediate: heads * head_dim,
        groups: 0,
        heads,
        head_dim,
        state: need(c, "mamba_d_state")?,
        conv_kernel: c.uint_or("mamba_d_conv", 4)?.max(1),
    })
}

/// vLLM `plamo2.py :: is_mamba`: with more than `mamba_step / 2` layers, layer i attends when
/// `i % mamba_step == mamba_step / 2`; a shorter model attends on its last layer only.
fn plamo2_layers(c: &Cfg, n: u32) -> Result<Vec<LayerKind>, ModelError> {
    let step = need(c, "mamba_step")?;
    if step < 2 {
        return Err(invalid(c.file, "Plamo2's `mamba_step` must be above 1"));
    }
    let n = u64::from(n);
    Ok((0..n)
        .map(|i| {
            let mamba = if n <= step / 2 {
                i != n - 1
            } else {
                i % step != step / 2
            };
            if mamba {
                LayerKind::Linear
            } else {
                LayerKind::Full
            }
        })
        .collect())
}

/// vLLM `lfm2.py` (`conv_dim`, `conv_L_cache`), SGLang `configs/lfm2.py` (`hidden_size`).
fn short_conv(c: &Cfg) -> Result<StateShape, ModelError> {
    let hidden = need(c, "hidden_size")?;
    Ok(StateShape::ShortConv {
        conv_dim: c.uint_or("conv_dim", hidden)?,
        hidden,
        conv_kernel: c.uint_or("conv_L_cache", 3)?.max(1),
    })
}

/// Nemotron-H's per-layer block letters: `hybrid_override_pattern` (M Mamba2, * attention, -
/// MLP, E MoE), or the newer `layers_block_type` names (SGLang `configs/nemotron_h.py`).
pub(super) fn nemotron_h_pattern(c: &Cfg, n: u32) -> Result<Vec<char>, ModelError> {
    let pattern: Vec<char> =
        if let Some(p) = c.get("hybrid_override_pattern").and_then(Value::as_str) {
            p.chars().collect()
        } else if let Some(list) = c.get("layers_block_type").and_then(Value::as_array) {
            list.iter()
                .map(|v| match v.as_str().unwrap_or("") {
                    "mamba" => 'M',
                    "attention" => '*',
                    "moe" => 'E',
                    _ => '-',
                })
                .collect()
        } else {
            return Err(invalid(
                c.file,
                "a nemotron_h config needs `hybrid_override_pattern` or `layers_block_type`",
            ));
        };
    if pattern.len() != n as usize {
        return Err(invalid(
            c.file,
            format!(
                "the Nemotron-H layer pattern has {} entries for {n} layers",
                pattern.len()
            ),
        ));
    }
    Ok(pattern)
}

/// `layer_types` whose names in `state` mark the recurrent layers; the rest attend.
fn named_layers(c: &Cfg, n: u32, state: &[&str]) -> Result<Vec<LayerKind>, ModelError> {
    let Some(types) = c.get("layer_types").and_then(Value::as_array) else {
        return Err(invalid(c.file, "this hybrid config needs `layer_types`"));
    };
    if types.len() < n as usize {
        return Err(invalid(
            c.file,
            format!("`layer_types` has {} entries for {n} layers", types.len()),
        ));
    }
    Ok(types
        .iter()
        .take(n as usize)
        .map(|t| {
            if state.contains(&t.as_str().unwrap_or("")) {
                LayerKind::Linear
            } else {
                LayerKind::Full
            }
        })
        .collect())
}

/// transformers `JambaConfig.layers_block_type`: attention where `i % attn_layer_period ==
/// attn_layer_offset`, Mamba elsewhere (vLLM `jamba.py` builds its layers from it).
fn jamba_layers(c: &Cfg, n: u32) -> Result<Vec<LayerKind>, ModelError> {
    let period = c.uint_or("attn_layer_period", 8)?.max(1);
    let offset = c.uint_or("attn_layer_offset", 4)?;
    Ok((0..u64::from(n))
        .map(|i| {
            if i % period == offset {
                LayerKind::Full
            } else {
                LayerKind::Linear
            }
        })
        .collect())
}

/// LFM2: `layer_types` ("conv" / "full_attention"), or the older `full_attn_idxs`
/// (transformers `Lfm2Config` builds `layer_types` from it).
fn lfm2_layers(c: &Cfg, n: u32) -> Result<Vec<LayerKind>, ModelError> {
    if c.get("layer_types").is_some() {
        return named_layers(c, n, &["conv", "short_conv"]);
    }
    let Some(idxs) = c.get("full_attn_idxs").and_then(Value::as_array) else {
        return Err(invalid(
            c.file,
            "an LFM2 config needs `layer_types` or `full_attn_idxs`",
        ));
    };
    let full: Vec<u64> = idxs.iter().filter_map(as_uint).collect();
    Ok((0..u64::from(n))
        .map(|i| {
            if full.contains(&i) {
                LayerKind::Full
            } else {
                LayerKind::Linear
            }
        })
        .collect())
}

/// Kimi-Linear: `linear_attn_config.kda_layers` (1-based: SGLang `configs/kimi_linear.py ::
/// is_kda_layer` tests `layer_idx + 1`) hold KDA state; the others are MLA.
fn kimi_linear(c: &Cfg, n: u32) -> Result<(StateShape, Vec<LayerKind>), ModelError> {
    let Some(lac) = c.get("linear_attn_config").and_then(Value::as_object) else {
        return Err(invalid(
            c.file,
            "a kimi_linear config needs `linear_attn_config`",
        ));
    };
    let field = |k: &str| {
        lac.get(k)
            .and_then(as_uint)
            .ok_or_else(|| invalid(c.file, format!("`linear_attn_config.{k}` is missing")))
    };
    let kda: Vec<u64> = lac
        .get("kda_layers")
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(as_uint).collect())
        .unwrap_or_default();
    let shape = StateShape::Kda {
        heads: field("num_heads")?,
        head_dim: field("head_dim")?,
        conv_kernel: lac
            .get("short_conv_kernel_size")
            .and_then(as_uint)
            .unwrap_or(4)
            .max(1),
    };
    let layers = (1..=u64::from(n))
        .map(|i| {
            if kda.contains(&i) {
                LayerKind::Linear
            } else {
                LayerKind::Full
            }
        })
        .collect();
    Ok((shape, layers))
}

/// MiniMax-Text-01 / M1 (vLLM `minimax_text_01.py :: MiniMaxText01Model.__init__`):
/// `attn_type_list` (0 lightning, 1 softmax), else `layer_types`; the lightning state has
/// `num_attention_heads × head_dim × head_dim` elements.
fn minimax(c: &Cfg, n: u32) -> Result<(StateShape, Vec<LayerKind>), ModelError> {
    let layers = if let Some(list) = c.get("attn_type_list").and_then(Value::as_array) {
        if list.len() < n as usize {
            return Err(invalid(
                c.file,
                format!("`attn_type_list` has {} entries for {n} layers", list.len()),
            ));
        }
        list.iter()
            .take(n as usize)
            .map(|v| {
                if as_uint(v) == Some(0) {
                    LayerKind::Linear
                } else {
                    LayerKind::Full
                }
            })
            .collect()
    } else {
        named_layers(c, n, &["linear_attention"])?
    };
    let heads = need(c, "num_attention_heads")?;
    let head_dim = c.uint_or("head_dim", need(c, "hidden_size")? / heads.max(1))?;
    Ok((StateShape::Lightning { heads, head_dim }, layers))
}

#[cfg(test)]
mod tests;

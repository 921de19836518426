//! The state page of one Mamba2, Mamba1, short-convolution, KDA or lightning-attention layer
//! (`model::Recurrent`) on one rank, as vLLM sizes it: `MambaSpec.page_size_bytes` is the sum of
//! each state's elements × its dtype (`v1/kv_cache_interface.py`), the dtypes from
//! `model_executor/layers/mamba/mamba_utils.py :: MambaStateDtypeCalculator` (0.33.0).

use super::hybrid::dtype_bytes;
use crate::engine::EngineArgs;
use crate::model::{Reader, Recurrent, StateShape};

/// `--mamba-cache-dtype` (`auto`: the model dtype) for the conv state, and the SSM state's:
/// `_mamba_state_dtype` takes `--mamba-ssm-cache-dtype`, whose `auto` is the conv dtype, except
/// that Nemotron-H first turns `auto` into the config's `mamba_ssm_cache_dtype` or float32
/// (`models/config.py :: NemotronHForCausalLMConfig`, kept by `model::state` for that family
/// only) and `kda_state_dtype` keeps float32 for `auto`. `linear_attention_state_dtype` and
/// `short_conv_state_dtype` have one state, in the conv dtype.
pub(super) fn state_page(args: &EngineArgs, r: &Recurrent, tp: u32, model_bytes: f64) -> f64 {
    let e = r.elems(tp, Reader::Vllm);
    let conv_b = args
        .text("mamba_cache_dtype")
        .and_then(dtype_bytes)
        .unwrap_or(model_bytes);
    let asked = args.text("mamba_ssm_cache_dtype").and_then(dtype_bytes);
    let ssm_b = match &r.shape {
        StateShape::Lightning { .. } => conv_b,
        StateShape::Kda { .. } => asked.unwrap_or(4.0),
        _ => asked
            .or_else(|| r.config_ssm_cache_dtype.as_deref().and_then(dtype_bytes))
            .unwrap_or(conv_b),
    };
    e.conv as f64 * conv_b + e.ssm as f64 * ssm_b
}

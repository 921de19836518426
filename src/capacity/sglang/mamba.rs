//! The per-request state of the Mamba2, Mamba1, short-convolution and KDA layers
//! (`model::Recurrent`) as SGLang stores it in its mamba pool (`HybridReqToTokenPool`), 0.5.23:
//! `configs/mamba_utils.py :: BaseLinearStateParams.mamba_cache_per_req` is `(conv elements ×
//! conv dtype + SSM elements × SSM dtype) × layers`.

use crate::engine::EngineArgs;
use crate::model::{Reader, Recurrent};

/// Element bytes of an SGLang dtype name; unknown names fall back to float32, as
/// `mamba2_state_dtype` does.
fn bytes(name: &str) -> f64 {
    match name {
        "bfloat16" | "float16" => 2.0,
        _ => 4.0,
    }
}

/// `mamba2_state_dtype`: the conv state is `SGLANG_MAMBA_CONV_DTYPE` (bfloat16 unless set);
/// the SSM state is `--mamba-ssm-dtype` (which sets `SGLANG_MAMBA_SSM_DTYPE`,
/// `arg_groups/serving_hook.py`), else the config's `mamba_ssm_dtype` where the family's config
/// passes itself (`model::state` keeps it only for those), else float32.
pub(super) fn per_request(r: &Recurrent, attn_tp: u32, args: &EngineArgs) -> f64 {
    let e = r.elems(attn_tp, Reader::Sglang);
    let ssm = args
        .text("mamba_ssm_dtype")
        .or(r.config_ssm_dtype.as_deref())
        .map_or(4.0, bytes);
    (e.conv as f64 * 2.0 + e.ssm as f64 * ssm) * f64::from(r.layers)
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::testing::args;
    use crate::engine::SettingValue::Text;
    use crate::launch::Engine;
    use crate::model::StateShape;

    fn nemotron(config_dtype: Option<&str>) -> Recurrent {
        Recurrent {
            shape: StateShape::Mamba2 {
                intermediate: 4096,
                groups: 8,
                heads: 64,
                head_dim: 64,
                state: 128,
                conv_kernel: 4,
            },
            layers: 23,
            config_ssm_dtype: config_dtype.map(str::to_string),
            config_ssm_cache_dtype: Some("float32".into()),
            mtp_attention_per_step: 0,
        }
    }

    /// Nemotron-3-Nano-30B-A3B (23 Mamba2 layers) at attention TP 1: conv 6,144 × 3 × 2 B =
    /// 36,864 and SSM 64 × 64 × 128 × 4 B = 2,097,152 per layer; × 23 = 49,082,368 B.
    #[test]
    fn mamba2_state_per_request_by_hand() {
        let a = args(Engine::Sglang, "0.5.23", &[]);
        assert_eq!(per_request(&nemotron(None), 1, &a), 49_082_368.0);
        // A bf16 SSM state from the config (`mamba2_state_dtype(config)`): 36,864 + 1,048,576.
        let bf16 = nemotron(Some("bfloat16"));
        assert_eq!(per_request(&bf16, 1, &a), 23.0 * 1_085_440.0);
        // `--mamba-ssm-dtype float32` overrides the config.
        let f32 = args(
            Engine::Sglang,
            "0.5.23",
            &[("mamba_ssm_dtype", Text("float32".into()))],
        );
        assert_eq!(per_request(&bf16, 1, &f32), 49_082_368.0);
        // TP 8: conv 6,144 / 8 × 3 × 2 = 4,608; SSM 8 × 64 × 128 × 4 = 262,144.
        assert_eq!(per_request(&nemotron(None), 8, &a), 23.0 * 266_752.0);
    }
}

//! The state page of one Mamba2, Mamba1, short-convolution, KDA or lightning-attention layer
//! (`model::Recurrent`) on one rank, as vLLM sizes it: `MambaSpec.page_size_bytes` is the sum of
//! each state's elements × its dtype (`v1/kv_cache_interface.py`), the dtypes from
//! `model_executor/layers/mamba/mamba_utils.py :: MambaStateDtypeCalculator` (0.33.0).

use super::hybrid::dtype_bytes;
use crate::engine::EngineArgs;
use crate::model::{Reader, Recurrent, StateShape};
use crate::version::Version;

/// The speculative tokens' rows a family's Mamba2 conv state keeps in this vLLM version: its
/// `get_mamba_state_shape_from_config` passes `num_spec=vllm_config.num_speculative_tokens`
/// (the `--speculative-config` count, any method; 0 without one: `config/vllm.py ::
/// VllmConfig.num_speculative_tokens`) to `mamba2_state_shape` in `models/nemotron_h.py` and
/// `mamba2.py` since 0.17.0, and in `falcon_h1.py`, `granitemoehybrid.py` and `zamba2.py`
/// since 0.32.0; the other families' conv state keeps `conv_kernel − 1` rows.
pub(super) fn spec_rows(args: &EngineArgs, model_type: &str, num_spec: u32) -> u32 {
    let since = match model_type {
        "nemotron_h" | "mamba2" => Version::new(0, 17, 0),
        "falcon_h1" | "granitemoehybrid" | "zamba2" => Version::new(0, 32, 0),
        _ => return 0,
    };
    if args.version >= since {
        num_spec
    } else {
        0
    }
}

/// `--mamba-cache-dtype` (`auto`: the model dtype) for the conv state, and the SSM state's:
/// `_mamba_state_dtype` takes `--mamba-ssm-cache-dtype`, whose `auto` is the conv dtype, except
/// that Nemotron-H first turns `auto` into the config's `mamba_ssm_cache_dtype` or float32
/// (`models/config.py :: NemotronHForCausalLMConfig`, kept by `model::state` for that family
/// only) and `kda_state_dtype` keeps float32 for `auto`. `linear_attention_state_dtype` and
/// `short_conv_state_dtype` have one state, in the conv dtype. A Mamba2 conv state holds
/// `spec_rows` more rows of `conv_dim / tp` (`spec_rows` above).
pub(super) fn state_page(
    args: &EngineArgs,
    r: &Recurrent,
    tp: u32,
    model_bytes: f64,
    spec_rows: u32,
) -> f64 {
    let e = r.elems(tp, Reader::Vllm);
    let conv = e.conv + r.mamba2_conv_row(tp, Reader::Vllm).unwrap_or(0) * u64::from(spec_rows);
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
    conv as f64 * conv_b + e.ssm as f64 * ssm_b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::testing::args;
    use crate::engine::SettingValue::Text;
    use crate::launch::Engine;

    fn recurrent(shape: StateShape, ssm_cache: Option<&str>) -> Recurrent {
        Recurrent {
            shape,
            layers: 1,
            config_ssm_dtype: None,
            config_ssm_cache_dtype: ssm_cache.map(str::to_string),
            mtp_attention_per_step: 0,
        }
    }

    /// One layer's page at TP 1 with a bf16 model, worked from the dtype rules above.
    #[test]
    fn state_pages_by_hand() {
        let a = args(Engine::Vllm, "0.33.0", &[]);
        let mamba2 = StateShape::Mamba2 {
            intermediate: 4096,
            groups: 8,
            heads: 64,
            head_dim: 64,
            state: 128,
            conv_kernel: 4,
        };
        // Nemotron-H: conv 18,432 × 2 B + SSM 524,288 × 4 B (float32 by the hook) = 2,134,016.
        let nemotron = recurrent(mamba2.clone(), Some("float32"));
        assert_eq!(state_page(&a, &nemotron, 1, 2.0, 0), 2_134_016.0);
        // Another Mamba2 family: `auto` SSM follows the conv dtype: 36,864 + 1,048,576.
        assert_eq!(
            state_page(&a, &recurrent(mamba2, None), 1, 2.0, 0),
            1_085_440.0
        );
        // `--mamba-ssm-cache-dtype bfloat16` beats the hook.
        let bf16 = args(
            Engine::Vllm,
            "0.33.0",
            &[("mamba_ssm_cache_dtype", Text("bfloat16".into()))],
        );
        assert_eq!(state_page(&bf16, &nemotron, 1, 2.0, 0), 1_085_440.0);
        // KDA keeps a float32 recurrent state under `auto`: 36,864 × 2 + 524,288 × 4.
        let kda = StateShape::Kda {
            heads: 32,
            head_dim: 128,
            conv_kernel: 4,
        };
        assert_eq!(
            state_page(&a, &recurrent(kda, None), 1, 2.0, 0),
            2_170_880.0
        );
        // Lightning: one state in the model dtype, 64 × 128 × 128 × 2 B.
        let lightning = StateShape::Lightning {
            heads: 64,
            head_dim: 128,
        };
        assert_eq!(
            state_page(&a, &recurrent(lightning, None), 1, 2.0, 0),
            2_097_152.0
        );
        // Short conv: conv_dim (vLLM) 2,048 × 2 × 2 B.
        let conv = StateShape::ShortConv {
            conv_dim: 2048,
            hidden: 1024,
            conv_kernel: 3,
        };
        assert_eq!(state_page(&a, &recurrent(conv, None), 1, 2.0, 0), 8_192.0);
    }

    /// Which families keep the drafted tokens' conv rows, from which release (`spec_rows`).
    #[test]
    fn speculative_rows_follow_each_family_s_shape_hook() {
        let rows = |v: &str, family: &str| spec_rows(&args(Engine::Vllm, v, &[]), family, 3);
        assert_eq!(rows("0.16.0", "nemotron_h"), 0);
        assert_eq!(rows("0.17.0", "nemotron_h"), 3);
        assert_eq!(rows("0.31.0", "granitemoehybrid"), 0);
        assert_eq!(rows("0.32.0", "falcon_h1"), 3);
        assert_eq!(rows("0.33.0", "zamba2"), 3);
        // Bamba's hook passes no `num_spec`.
        assert_eq!(rows("0.33.0", "bamba"), 0);
        // Mamba2 conv 18,432 + 3 rows of 6,144 = 36,864 × 2 B; SSM 524,288 × 4 B.
        let a = args(Engine::Vllm, "0.33.0", &[]);
        let nemotron = recurrent(
            StateShape::Mamba2 {
                intermediate: 4096,
                groups: 8,
                heads: 64,
                head_dim: 64,
                state: 128,
                conv_kernel: 4,
            },
            Some("float32"),
        );
        assert_eq!(state_page(&a, &nemotron, 1, 2.0, 3), 2_170_880.0);
        // Other shapes keep their conv state.
        let conv = StateShape::ShortConv {
            conv_dim: 2048,
            hidden: 1024,
            conv_kernel: 3,
        };
        assert_eq!(state_page(&a, &recurrent(conv, None), 1, 2.0, 3), 8_192.0);
    }
}

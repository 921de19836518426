//! Hybrid models (linear-attention layers beside attention layers): the per-request state page of
//! a linear-attention layer, and the attention block size vLLM raises so that one attention page
//! holds it (`platforms/interface.py :: Platform.update_block_size_for_backend`, 0.30.0). Every
//! KV cache group shares that page, so the block size moves the pool: a 262,144-token request of
//! Qwen3.6-35B-A3B needs 249 attention blocks of 1,056 tokens plus 9 state blocks, not 16,384 + 9
//! blocks of 16.

use super::super::Notes;
use crate::engine::EngineArgs;
use crate::model::Geometry;

/// Bytes of a dtype name as `--mamba-cache-dtype` / `--mamba-ssm-cache-dtype` spell it; `auto`
/// and unknown names are `None`.
pub(super) fn dtype_bytes(name: &str) -> Option<f64> {
    match name {
        "float32" => Some(4.0),
        "bfloat16" | "float16" => Some(2.0),
        _ => None,
    }
}

/// Conv-state and SSM-state element bytes. `layers/mamba/mamba_utils.py ::
/// MambaStateDtypeCalculator._mamba_state_dtype`: the conv state takes `--mamba-cache-dtype`
/// (`auto`: the model dtype), the SSM state `--mamba-ssm-cache-dtype` (`auto`: the conv state's).
/// `models/config.py :: Qwen3_5ForConditionalGenerationConfig.verify_and_update_config` first
/// turns an `auto` SSM dtype into the checkpoint's `mamba_ssm_dtype`, which every Qwen3.5/3.6
/// config.json in the catalog states as float32 (Geometry does not carry the field).
fn state_dtypes(args: &EngineArgs, m: &Geometry, model_bytes: f64) -> (f64, f64) {
    let conv = args
        .text("mamba_cache_dtype")
        .and_then(dtype_bytes)
        .unwrap_or(model_bytes);
    let qwen35 = m.text_model_type.starts_with("qwen3_5");
    let ssm = match args.text("mamba_ssm_cache_dtype").and_then(dtype_bytes) {
        Some(b) => b,
        None if qwen35 => 4.0,
        None => conv,
    };
    (conv, ssm)
}

/// `MambaSpec.page_size_bytes` of one gated-delta-net layer on one rank
/// (`MambaStateShapeCalculator.gated_delta_net_state_shape`): a conv state of
/// `conv_dim / tp × (kernel − 1)` and a temporal state of `v_heads / tp × head_v × head_k`.
pub(super) fn state_page(args: &EngineArgs, m: &Geometry, tp: u32, model_bytes: f64) -> f64 {
    if let Some(r) = &m.recurrent {
        return super::mamba::state_page(args, r, tp, model_bytes);
    }
    let Some(lin) = &m.linear else { return 0.0 };
    let tp = f64::from(tp.max(1));
    let (conv_b, ssm_b) = state_dtypes(args, m, model_bytes);
    let conv_dim = f64::from(
        lin.num_key_heads * lin.key_head_dim * 2 + lin.num_value_heads * lin.value_head_dim,
    );
    let conv = conv_dim / tp * f64::from(lin.conv_kernel.saturating_sub(1)) * conv_b;
    let ssm = f64::from(lin.num_value_heads) / tp
        * f64::from(lin.value_head_dim * lin.key_head_dim)
        * ssm_b;
    conv + ssm
}

/// The attention block size of a hybrid model: the smallest multiple of the kernel alignment
/// (the backend's smallest kernel block, 16 on FlashAttention, FlashInfer and Triton, or the
/// configured block size if larger; 128 for MLA) whose page holds one state page. A larger
/// `--block-size` stands. `--mamba-cache-mode all` aligns to the mamba chunk size instead; kvlint
/// plans it like `align`, which the engine falls back to for models without that support.
pub(super) fn attention_block(
    bs: u32,
    mla: bool,
    state: f64,
    attn_token_bytes: f64,
    notes: &mut Notes,
) -> u32 {
    if state <= 0.0 || attn_token_bytes <= 0.0 {
        return bs;
    }
    let align = if mla { bs.max(128) } else { bs.max(16) };
    let per_align = f64::from(align) * attn_token_bytes;
    let attn = align.saturating_mul((state / per_align).ceil() as u32);
    if attn <= bs {
        return bs;
    }
    notes.exact(
        "attention_block_size",
        f64::from(attn),
        format!(
            "raised from {bs} so one attention page holds a {state:.0}-byte linear-attention \
             state (update_block_size_for_backend)"
        ),
    );
    attn
}

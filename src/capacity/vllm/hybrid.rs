//! Hybrid models (linear-attention layers beside attention layers): the per-request state page of
//! a linear-attention layer, and the attention block size vLLM raises so that one attention page
//! holds it (`platforms/interface.py :: Platform.update_block_size_for_backend`, 0.30.0). Every
//! KV cache group shares that page, so the block size moves the pool: a 262,144-token request of
//! Qwen3.6-35B-A3B needs 249 attention blocks of 1,056 tokens plus 9 state blocks, not 16,384 + 9
//! blocks of 16.

use super::super::Notes;
use crate::engine::{EngineArgs, SettingValue};
use crate::model::Geometry;
use crate::version::Version;

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

/// `--speculative-config`, when given and resolved (argparse's `json.loads` refused bad JSON).
fn speculative(args: &EngineArgs) -> Option<serde_json::Value> {
    let s = args
        .get("speculative_config")
        .filter(|s| s.unresolved.is_empty())?;
    let SettingValue::Text(text) = &s.value else {
        return None;
    };
    serde_json::from_str(text).ok()
}

/// Whether `--speculative-config` runs the target's own MTP layers: a method ending in `mtp`
/// (`config/speculative.py :: MTPModelTypes`: `mtp`, `qwen3_5_mtp`, `qwen3_next_mtp`, ...;
/// `SpeculativeConfig.__post_init__` makes the target its own draft model), or another
/// model-based method without a model. The same rule as `adapters::vllm_draft`.
fn runs_mtp(spec: &serde_json::Value) -> bool {
    let method = spec.get("method").and_then(|v| v.as_str()).unwrap_or("");
    let model = spec.get("model").and_then(|v| v.as_str());
    if matches!(method, "ngram" | "ngram_gpu" | "suffix") || (method.is_empty() && model.is_none())
    {
        return false;
    }
    method.ends_with("mtp") || model.is_none()
}

/// `SpeculativeConfig.num_speculative_tokens`: the given count, else for MTP the checkpoint's
/// MTP layers (`__post_init__`: `num_speculative_tokens = n_predict`); 0 without drafting.
pub(super) fn spec_tokens(args: &EngineArgs, m: &Geometry) -> u32 {
    let Some(spec) = speculative(args) else {
        return 0;
    };
    let given = spec
        .get("num_speculative_tokens")
        .and_then(serde_json::Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    match given {
        Some(n) => n,
        None if runs_mtp(&spec) => m.nextn_layers,
        None => 0,
    }
}

/// MTP attention layers that join the target's full-attention KV cache group on a hybrid
/// (linear-attention or Mamba) model. `models/qwen3_5_mtp.py :: Qwen3_5MultiTokenPredictor.__init__`
/// builds `mtp_num_hidden_layers` decoder layers with `layer_type="full_attention"`, and
/// `v1/worker/gpu_model_runner.py :: get_kv_cache_spec` gives the drafter's `Attention` layers the
/// same `FullAttentionSpec` as the target's, so `_get_kv_cache_groups_uniform_page_size` counts
/// them with the target's (0.23.0: 16 + 1 full layers against 48 GDN ones make a group of 17
/// and "Add 3 padding layers" to the GDN groups). `qwen3_next_mtp.py` builds its layers the
/// same way. Nemotron-H (since 0.17.0, `models/nemotron_h_mtp.py ::
/// NemotronHMultiTokenPredictor.__init__`) builds `num_nextn_predict_layers` steps of
/// `mtp_hybrid_override_pattern`, whose '*' layers are `NemotronHMTPAttentionDecoderLayer`s, the
/// target's attention layer. Other hybrids' MTP layers are unread.
pub(super) fn mtp_group_layers(args: &EngineArgs, m: &Geometry) -> u32 {
    if !speculative(args).is_some_and(|spec| runs_mtp(&spec)) {
        return 0;
    }
    match &m.recurrent {
        _ if m.linear.is_some() => m.nextn_layers,
        Some(r) if args.version >= Version::new(0, 17, 0) => {
            m.nextn_layers * r.mtp_attention_per_step
        }
        _ => 0,
    }
}

/// `MambaSpec.page_size_bytes` of one gated-delta-net layer on one rank
/// (`MambaStateShapeCalculator.gated_delta_net_state_shape`, 0.23.0): a conv state of
/// `conv_dim / tp × (kernel − 1 + num_spec)` and a temporal state of
/// `v_heads / tp × head_v × head_k`. `num_spec` is `num_speculative_tokens` whenever a
/// speculative config is set (`models/qwen3_5.py ::
/// Qwen3_5ForCausalLMBase.get_mamba_state_shape_from_config`, the same in `qwen3_next.py` since
/// 0.10.2): the conv state keeps the drafted tokens' rows too.
pub(super) fn state_page(
    args: &EngineArgs,
    m: &Geometry,
    tp: u32,
    model_bytes: f64,
    num_spec: u32,
) -> f64 {
    if let Some(r) = &m.recurrent {
        let rows = super::mamba::spec_rows(args, &m.text_model_type, num_spec);
        return super::mamba::state_page(args, r, tp, model_bytes, rows);
    }
    let Some(lin) = &m.linear else { return 0.0 };
    let tp = f64::from(tp.max(1));
    let (conv_b, ssm_b) = state_dtypes(args, m, model_bytes);
    let conv_dim = f64::from(
        lin.num_key_heads * lin.key_head_dim * 2 + lin.num_value_heads * lin.value_head_dim,
    );
    let rows = lin.conv_kernel.saturating_sub(1) + num_spec;
    let conv = conv_dim / tp * f64::from(rows) * conv_b;
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

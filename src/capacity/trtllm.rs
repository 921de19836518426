//! TensorRT-LLM's KV pool (PyTorch backend, 1.0 and later), mirroring (vllm-trtllm-capacity.md
//! §0 and §8) tensorrt_llm/_torch/pyexecutor/_util.py :: KvCacheCreator and
//! _torch/pyexecutor/resource_manager.py :: KVCacheManager.
//!
//! Every 1.x release sizes the pool the same way: a profile run of dummy context requests
//! totalling `max_num_tokens` (`_create_dummy_context_requests`) on a temporary KV cache, then
//! `KV = free_gpu_memory_fraction × (total − peak + temporary KV)`, where `peak` is torch's peak
//! plus what torch does not own (NCCL, CUDA graphs): 1.0–1.1 `_cal_max_tokens` turns it into
//! `kv_cache_config.max_tokens`, 1.2+ `_cal_max_memory` into `max_gpu_total_bytes` (and
//! `max_tokens` for the V1 manager). The result is `min()`-ed with a given
//! `kv_cache_config.max_tokens × bytes_per_token` and `max_gpu_total_bytes`, and cut into
//! blocks of `tokens_per_block` (C++ `KVCacheManager::calculateMaxNumBlocks` up to 1.1, Python
//! `KVCacheManager.calculate_max_num_blocks` after: one block apart at most). The engine never
//! refuses a `max_seq_len` the pool cannot hold: it lowers it with a warning (§8.3).

use super::{
    unresolved, weights_per_rank_counted, ContextSource, Estimate, Inputs, Notes, Plan, Role,
};
use crate::engine::trtllm::{CONFIG, DEFAULT_FRACTION, FRACTION, FRONTEND};
use crate::engine::{EngineArgs, SettingValue};
use crate::finding::Finding;
use crate::launch::Engine;
use crate::model::{Dtype, Geometry, LayerKind};

mod peak;
pub use peak::FITTED_ON;

pub(crate) const NEEDED: &[&str] = &[
    "model",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "max_seq_len",
    "max_num_tokens",
    "max_batch_size",
    "max_beam_width",
    FRACTION,
    // The whole block, where its value is one the input does not fix (a Python call's
    // `kv_cache_config=make_kv_config()`): every field in it is unknown.
    "kv_cache_config",
    "kv_cache_config.max_tokens",
    "kv_cache_config.tokens_per_block",
    "kv_cache_config.dtype",
    CONFIG,
];

/// `KvCacheConfig.tokens_per_block` default (PyTorch backend).
const TOKENS_PER_BLOCK: u32 = 32;
/// `BuildConfig` / `TorchLlmArgs` defaults for the profile-run shape.
const MAX_NUM_TOKENS: i64 = 8192;
const MAX_BATCH_SIZE: i64 = 2048;

fn int_or(args: &EngineArgs, dest: &str, default: u32) -> u32 {
    args.int(dest)
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}

/// Storage of one KV element: bytes, or NVFP4's packed 4 bits plus one fp8 scale per 16.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KvElem {
    Bytes(f64),
    Nvfp4,
}

impl KvElem {
    /// Bytes of `n` elements (`get_cache_size_per_token`: nvfp4 = ceil(n/2) + ceil(n/16)).
    fn of(self, n: u64) -> f64 {
        match self {
            KvElem::Bytes(b) => n as f64 * b,
            KvElem::Nvfp4 => (n.div_ceil(2) + n.div_ceil(16)) as f64,
        }
    }
}

/// `kv_cache_config.dtype`: `auto` is the checkpoint's KV quantization, else the model dtype.
fn kv_dtype(args: &EngineArgs, m: &Geometry) -> (String, KvElem) {
    match args.text("kv_cache_config.dtype").unwrap_or("auto") {
        "fp8" => ("fp8".into(), KvElem::Bytes(1.0)),
        "nvfp4" => ("nvfp4".into(), KvElem::Nvfp4),
        _ if m.quantization.as_ref().is_some_and(|q| q.kv_cache_fp8) => {
            ("fp8".into(), KvElem::Bytes(1.0))
        }
        _ => match m.dtype {
            Dtype::F32 => ("float32".into(), KvElem::Bytes(4.0)),
            Dtype::F16 => ("float16".into(), KvElem::Bytes(2.0)),
            _ => ("bfloat16".into(), KvElem::Bytes(2.0)),
        },
    }
}

/// How the KV cache is laid out on one rank.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub tp: u32,
    pub pp: u32,
    /// `enable_attention_dp`: every rank holds all KV heads (tp := 1 for the heads).
    pub attention_dp: bool,
    pub elem: KvElem,
    /// MTP / draft layers, held by the last pipeline stage.
    pub draft_layers: u32,
}

/// KV bytes per token on the binding rank. MLA keeps one latent of `kv_lora_rank +
/// qk_rope_head_dim` per layer (kv_factor 1, not split by TP); other models keep K and V of
/// `ceil(num_kv_heads / tp)` heads (`KVCacheManager` num_kv_heads_per_layer). Linear-attention
/// layers hold a state, not KV, and are not counted.
pub fn bytes_per_token(m: &Geometry, l: &Layout) -> f64 {
    let attention = m
        .layers
        .iter()
        .filter(|k| !matches!(k, LayerKind::Linear))
        .count() as u32;
    let layers = attention.div_ceil(l.pp.max(1)) + l.draft_layers;
    let per_layer = match &m.mla {
        Some(mla) => l
            .elem
            .of(u64::from(mla.kv_lora_rank + mla.qk_rope_head_dim)),
        None => {
            let tp = if l.attention_dp { 1 } else { l.tp.max(1) };
            let heads = m.num_kv_heads.div_ceil(tp).max(1);
            2.0 * l.elem.of(u64::from(heads) * u64::from(m.head_dim))
        }
    };
    per_layer * f64::from(layers)
}

/// Under attention DP every rank holds all but the routed experts whole: the attention
/// projections (tensorrt_llm/_torch/modules/attention.py :: Attention.__init__, MLA.__init__:
/// `tp_size = 1` when `mapping.enable_attention_dp`), the dense MLPs and shared experts
/// (_torch/models/modeling_deepseekv3.py :: DeepseekV3DecoderLayer._compute_mlp_tp_size,
/// Deepseekv3MoE._compute_shared_expert_tp_size: 1 under attention DP) and the LM head
/// (sharded only with `enable_lm_head_tp_in_adp`, default off: _torch/models/modeling_utils.py
/// :: DecoderModelForCausalLM.__init__ builds a whole `LMHead` only under attention DP without
/// it, else a column-parallel one). The split estimate counted `1/tp` of them; the rest (less
/// what is already held whole) is added here.
fn attention_dp_weights(
    args: &EngineArgs,
    m: &Geometry,
    l: &Layout,
    pp: u32,
) -> Option<(Estimate, String)> {
    if !l.attention_dp || l.tp <= 1 {
        return None;
    }
    let parts = &m.weight_parts;
    let head_split = args.flag("enable_lm_head_tp_in_adp");
    let head = if head_split { lm_head_bytes(m) } else { 0 };
    let whole = m
        .weight_bytes
        .saturating_sub(parts.routed_experts + parts.replicated + head) as f64;
    let extra = super::unsplit_share(whole, f64::from(l.tp), f64::from(pp.max(1)));
    Some((
        Estimate::exact(extra),
        format!(
            "weights besides the routed experts{}, whole on every attention-DP rank (attention.py, modeling_deepseekv3.py: tp_size 1 under enable_attention_dp)",
            if head_split { " and the LM head (split by enable_lm_head_tp_in_adp)" } else { "" }
        ),
    ))
}

/// The untied LM head's bytes: what the weight count holds besides the embedding and the decoder
/// layers (the final norm, a few kilobytes, rides along). A VLM's count also holds its vision
/// tower, so none is taken apart there.
fn lm_head_bytes(m: &Geometry) -> u64 {
    if m.multimodal {
        return 0;
    }
    let parts = &m.weight_parts;
    m.weight_bytes
        .saturating_sub(parts.embedding + parts.layers)
}

/// MTP decoding loads the checkpoint's MTP layers next to the target
/// (_torch/models/modeling_deepseekv3.py :: DeepseekV3ForCausalLM.__init__ extends the model's
/// layers with `draft_model.mtp_layers`); `weight_bytes` leaves them out.
fn mtp_weights(m: &Geometry, l: &Layout) -> Option<(Estimate, String)> {
    if l.draft_layers == 0 || m.nextn_weight_bytes == 0 {
        return None;
    }
    let per = m.nextn_weight_bytes as f64 / f64::from(l.tp.max(1));
    Some((
        Estimate::exact(per),
        "the checkpoint's MTP layers, loaded for MTP decoding".into(),
    ))
}

/// `DeepGemmFusedMoE.__init__`'s cap on the MoE chunk when `moe_config.max_num_tokens` is unset
/// ("It can avoid OOM for 8k/1k cases").
const DEEPGEMM_MOE_MAX_NUM_TOKENS: u64 = 18688;

/// The DEEPGEMM MoE backend's workspace, made in the warm-up and still held when the memory
/// profile starts, so the engine counts it with the weights
/// (tensorrt_llm/_torch/modules/fused_moe/fused_moe_deepgemm.py :: DeepGemmFusedMoE.__init__,
/// get_workspace, forward_impl; _torch/memory_buffer_utils.py :: Buffers.get_buffer). All MoE
/// layers share one set of three buffers from a module-wide pool that keeps the last ones it
/// made (CUDA-graph capture then reserves them): `workspace_0` (fp8, local experts × m ×
/// max(hidden, intermediate)), `workspace_1` (bf16, local experts × m × max(2 × intermediate,
/// hidden)) and `workspace_sf` (int32 scales), m the largest MoE chunk the warm-up ran, aligned
/// to 128. The warm-up runs `max_num_tokens` on every rank, and attention-DP ranks gather all
/// ranks' tokens into the MoE; rows beyond twice `moe_max_num_tokens` (`moe_config.max_num_tokens`,
/// else `max_num_tokens × dp_size` capped at 18,688) are split into `ceil(rows /
/// moe_max_num_tokens)` chunks of each rank's tokens.
fn deepgemm_workspace(args: &EngineArgs, m: &Geometry, l: &Layout) -> Option<(Estimate, String)> {
    if !args
        .text("moe_config.backend")
        .is_some_and(|b| b.eq_ignore_ascii_case("deepgemm"))
    {
        return None;
    }
    let experts = m.experts?;
    let ep = u64::from(int_or(args, "moe_expert_parallel_size", 1));
    let local = (experts.count / ep).max(1);
    let inter = experts.intermediate / (u64::from(l.tp) / ep).max(1);
    let dp = if l.attention_dp { u64::from(l.tp) } else { 1 };
    let per_rank = args.int("max_num_tokens").unwrap_or(MAX_NUM_TOKENS).max(1) as u64;
    let rows = per_rank * dp;
    let cap = match args.int("moe_config.max_num_tokens").filter(|n| *n > 0) {
        Some(n) => n as u64,
        None => rows.min(DEEPGEMM_MOE_MAX_NUM_TOKENS),
    };
    let chunk = if rows > 2 * cap {
        per_rank.div_ceil(rows.div_ceil(cap)) * dp
    } else {
        rows
    };
    let m_max = chunk.next_multiple_of(128);
    let h = m.hidden_size;
    let fp8_dim = h.max(inter);
    // `align(ceil_div(fp8_dim, 128), 4) // 4` int32 words of packed scales per row.
    let scale_cols = fp8_dim.div_ceil(128).div_ceil(4);
    let bytes = local * m_max * fp8_dim
        + 2 * local * m_max * (2 * inter).max(h)
        + 4 * local * scale_cols * m_max.next_multiple_of(4);
    Some((
        Estimate::exact(bytes as f64),
        format!("DEEPGEMM MoE workspace kept from the warm-up: {local} local experts × {m_max} tokens (fused_moe_deepgemm.py DeepGemmFusedMoE.get_workspace)"),
    ))
}

/// Draft layers of MTP speculative decoding (`speculative_config.decoding_type: MTP`).
fn draft_layers(args: &EngineArgs, m: &Geometry, notes: &mut Notes) -> u32 {
    let mtp = args
        .text("speculative_config.decoding_type")
        .is_some_and(|t| t.eq_ignore_ascii_case("mtp"));
    if !mtp {
        if args.text("speculative_config.decoding_type").is_some() {
            notes.exact(
                "draft_layers",
                0.0,
                "a draft model's own KV layers are not counted (only MTP is modelled)",
            );
        }
        return 0;
    }
    let n = int_or(
        args,
        "speculative_config.num_nextn_predict_layers",
        m.nextn_layers.max(1),
    );
    notes.exact(
        "draft_layers",
        f64::from(n),
        "MTP layers of speculative_config",
    );
    n
}

/// `max_seq_len` the engine deduces when none is given (tensorrt_llm/builder.py ::
/// _init_max_seq_len): `max_position_embeddings` times the RoPE factor, except for the scaling
/// types that already count it (su, longrope, llama3, yarn); 2048 without a length.
pub fn derived_max_seq_len(m: &Geometry) -> u64 {
    let Some(base) = m.max_position_embeddings() else {
        return 2048;
    };
    let factor = match &m.rope_scaling {
        Some(r) if !matches!(r.rope_type.as_str(), "su" | "longrope" | "llama3" | "yarn") => {
            r.factor
        }
        _ => 1.0,
    };
    (base as f64 * factor) as u64
}

/// Role from Dynamo `--disaggregation-mode` or `trtllm-serve --server_role`.
fn role(args: &EngineArgs) -> Role {
    let mode = args
        .text("disaggregation_mode")
        .or_else(|| args.text("server_role"))
        .unwrap_or("")
        .to_ascii_lowercase();
    match mode.as_str() {
        "prefill" | "context" => Role::Prefill,
        "decode" | "generation" => Role::Decode,
        _ => Role::Unified,
    }
}

/// `non_kv` plus the MoE backend's workspace held before the profile, when there is one.
fn with_moe_workspace(
    other: Estimate,
    args: &EngineArgs,
    m: &Geometry,
    l: &Layout,
    notes: &mut Notes,
) -> Estimate {
    let Some((ws, why)) = deepgemm_workspace(args, m, l) else {
        return other;
    };
    notes.estimate("moe_workspace_bytes", ws, why);
    Estimate::range(
        other.point + ws.point,
        other.low + ws.low,
        other.high + ws.high,
    )
}

fn fraction(args: &EngineArgs, notes: &mut Notes) -> f64 {
    match args.float(FRACTION) {
        Some(f) => {
            notes.exact(
                "free_gpu_memory_fraction",
                f,
                "kv_cache_config.free_gpu_memory_fraction",
            );
            f
        }
        None => {
            notes.exact(
                "free_gpu_memory_fraction",
                DEFAULT_FRACTION,
                "KvCacheConfig default (older releases: None, meaning 0.9)",
            );
            DEFAULT_FRACTION
        }
    }
}

/// The option that sets the fraction for this launch: in the engine YAML when one is given
/// (a YAML `kv_cache_config` block would drop the flag), else the command-line flag.
fn fraction_flag(args: &EngineArgs) -> &'static str {
    let dynamo = args.text(FRONTEND) == Some("dynamo.trtllm");
    match (args.get(CONFIG).is_some(), dynamo) {
        (true, _) => "kv_cache_config.free_gpu_memory_fraction",
        (false, true) => "--free-gpu-memory-fraction",
        (false, false) => "--kv_cache_free_gpu_memory_fraction",
    }
}

/// Records what the math takes as given about the release and backend.
fn version_notes(args: &EngineArgs, notes: &mut Notes) {
    notes.exact(
        "engine_version",
        0.0,
        format!(
            "TensorRT-LLM {}: one budget for every 1.x release (a given version is taken as it is, none is reported as 1.0.0): tensorrt_llm/_torch/pyexecutor/_util.py KvCacheCreator (_cal_max_tokens up to 1.1, _cal_max_memory after), tensorrt_llm/llmapi/llm_args.py KvCacheConfig",
            args.version
        ),
    );
    match args.text("backend").unwrap_or("pytorch") {
        "pytorch" => {}
        other => notes.exact(
            "backend",
            0.0,
            format!("backend {other}: budget modelled as the PyTorch backend's (the C++ engine path takes the fraction of free memory after engine load the same way)"),
        ),
    }
}

pub fn plan(inp: &Inputs) -> Result<Plan, Vec<Finding>> {
    let args = inp.args;
    let missing = unresolved(args, NEEDED);
    if !missing.is_empty() {
        return Err(missing);
    }
    let (m, gpu) = (inp.model, inp.gpu);
    let mut notes = Notes::default();
    version_notes(args, &mut notes);
    super::check_ints(
        args,
        &[
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "context_parallel_size",
        ],
        &["kv_cache_config.tokens_per_block", "max_beam_width"],
    )?;
    let tp = int_or(args, "tensor_parallel_size", 1);
    let pp = int_or(args, "pipeline_parallel_size", 1);
    let cp = int_or(args, "context_parallel_size", 1);
    let tpb = int_or(args, "kv_cache_config.tokens_per_block", TOKENS_PER_BLOCK);
    let beam = u64::from(int_or(args, "max_beam_width", 1));
    let (kv_name, elem) = kv_dtype(args, m);
    let layout = Layout {
        tp,
        pp,
        attention_dp: args.flag("enable_attention_dp"),
        elem,
        draft_layers: draft_layers(args, m, &mut notes),
    };
    let b_tok = bytes_per_token(m, &layout);
    notes.exact(
        "kv_bytes_per_token",
        b_tok,
        "KVCacheManager.get_cache_size_per_token (binding pipeline stage)",
    );

    let f = fraction(args, &mut notes);
    let w = weights_per_rank_counted(
        m,
        None,
        (tp, pp),
        attention_dp_weights(args, m, &layout, pp)
            .into_iter()
            .chain(mtp_weights(m, &layout)),
        &mut notes,
    );
    let other = with_moe_workspace(
        peak::non_kv(args, m, gpu, &layout, &mut notes),
        args,
        m,
        &layout,
        &mut notes,
    );
    let caps = caps(args, b_tok, &mut notes);
    let total = gpu.cuda_total_bytes as f64;
    let budget = |w: f64, o: f64| (f * (total - w - o)).min(caps);
    let kv = Estimate::range(
        budget(w.point, other.point),
        budget(w.high, other.high),
        budget(w.low, other.low),
    );
    let tokens = |kv: f64| pool_tokens(kv, b_tok, tpb);
    // One request: the block-rounded tokens per beam (§8.3 upper bound, no sink tokens).
    let usable = |kv: f64| tokens(kv) / beam / u64::from(tpb) * u64::from(tpb);

    let model_max = derived_max_seq_len(m);
    let (context_length, context_source) = match args.get("max_seq_len") {
        Some(s) => match s.value {
            SettingValue::Int(n) if n > 0 => (n as u64, ContextSource::Flag(s.loc())),
            _ => (model_max, ContextSource::Model),
        },
        None => (model_max, ContextSource::Model),
    };
    let needed_fraction = {
        let need = context_length.div_ceil(u64::from(tpb)) as f64 * f64::from(tpb) * b_tok;
        let room = total - w.high - other.high;
        let nf = need * beam as f64 / room;
        (room > 0.0 && nf < 1.0 && need <= caps).then_some((nf * 1000.0).ceil() / 1000.0)
    };

    Ok(Plan {
        engine: Engine::Trtllm,
        engine_version: args.version.to_string(),
        role: role(args),
        model: m.id.clone(),
        gpu: gpu.name.clone(),
        gpu_count: inp.gpu_count.unwrap_or(tp * pp * cp),
        tp,
        pp,
        dp: 1,
        context_length,
        context_source,
        model_max_context: model_max,
        kv_cache_dtype: kv_name,
        page_size: tpb,
        kv_bytes_per_token: b_tok.round() as u64,
        pool_tokens: tokens(kv.point),
        pool_tokens_low: tokens(kv.low),
        pool_tokens_high: tokens(kv.high),
        usable_tokens: usable(kv.point),
        usable_tokens_low: usable(kv.low),
        usable_tokens_high: usable(kv.high),
        budget_bytes: kv.point.round() as i64,
        weights_bytes: w.point.round() as u64,
        memory_fraction: f,
        memory_fraction_loc: args.get(FRACTION).map(|s| s.loc()),
        memory_fraction_flag: fraction_flag(args),
        needed_fraction,
        max_context_fit: usable(kv.low).min(model_max),
        assumptions: notes.0,
    })
}

/// The smaller of `kv_cache_config.max_tokens × bytes per token` and `max_gpu_total_bytes`
/// ("Both free_gpu_memory_fraction and max_tokens are set ... The smaller value will be used").
fn caps(args: &EngineArgs, b_tok: f64, notes: &mut Notes) -> f64 {
    let mut cap = f64::INFINITY;
    if let Some(t) = args.int("kv_cache_config.max_tokens").filter(|t| *t > 0) {
        cap = cap.min(t as f64 * b_tok);
        notes.exact(
            "kv_cache_max_tokens",
            t as f64,
            "kv_cache_config.max_tokens",
        );
    }
    if let Some(b) = args
        .int("kv_cache_config.max_gpu_total_bytes")
        .filter(|b| *b > 0)
    {
        cap = cap.min(b as f64);
        notes.exact(
            "max_gpu_total_bytes",
            b as f64,
            "kv_cache_config.max_gpu_total_bytes",
        );
    }
    cap
}

/// `floor(KV / b_tok / tokens_per_block) × tokens_per_block` (`blocks_in_primary_pool × tpb`).
pub fn pool_tokens(kv: f64, b_tok: f64, tpb: u32) -> u64 {
    if kv <= 0.0 || b_tok <= 0.0 {
        return 0;
    }
    let blocks = (kv / b_tok / f64::from(tpb.max(1))).floor() as u64;
    blocks * u64::from(tpb.max(1))
}

#[cfg(test)]
mod tests {
    //! Expected values: the per-token sizes and pool sizes TRT-LLM logged in the cross-checks of
    //! vllm-trtllm-capacity.md §7 ("kv size per token", "Allocated X GiB for max tokens (N)").
    use super::*;
    use crate::capacity::testing::{args, deepseek_v3, dense};
    use crate::units::GIB;

    fn layout(tp: u32, elem: KvElem) -> Layout {
        Layout {
            tp,
            pp: 1,
            attention_dp: false,
            elem,
            draft_layers: 0,
        }
    }

    #[test]
    fn qwen25_1_5b_fp16_is_28672_bytes_per_token() {
        // 28 layers, 2 KV heads of 128: 2 × 2 × 128 × 2 B × 28.
        let m = dense(28, 12, 2, 128);
        assert_eq!(
            bytes_per_token(&m, &layout(1, KvElem::Bytes(2.0))),
            28_672.0
        );
        // × 273,792 tokens = 7.31 GiB, as logged.
        let gib = 28_672.0 * 273_792.0 / GIB;
        assert!((gib - 7.31).abs() < 0.005, "{gib}");
    }

    #[test]
    fn llama2_7b_fp8_kv_is_262144_bytes_per_token() {
        // 32 layers, 32 KV heads (MHA) of 128, fp8: 2 × 32 × 128 × 1 B × 32.
        let m = dense(32, 32, 32, 128);
        assert_eq!(
            bytes_per_token(&m, &layout(1, KvElem::Bytes(1.0))),
            262_144.0
        );
        let gib = 262_144.0 * 259_840.0 / GIB;
        assert!((gib - 63.44).abs() < 0.005, "{gib}");
    }

    #[test]
    fn deepseek_r1_fp8_mla_is_35136_and_ignores_tp() {
        // "kv size is 35136": 61 layers × (512 + 64) × 1 B, no factor 2, on any TP.
        let m = deepseek_v3();
        assert_eq!(
            bytes_per_token(&m, &layout(8, KvElem::Bytes(1.0))),
            35_136.0
        );
        // MTP adds its layer on the last stage.
        let mtp = Layout {
            draft_layers: 1,
            ..layout(8, KvElem::Bytes(1.0))
        };
        assert_eq!(bytes_per_token(&m, &mtp), 35_712.0);
    }

    #[test]
    fn kv_heads_round_up_per_rank_and_attention_dp_keeps_them_all() {
        // 8 KV heads over TP 16: ceil → 1 head per rank, not 0.
        let m = dense(80, 64, 8, 128);
        assert_eq!(
            bytes_per_token(&m, &layout(16, KvElem::Bytes(2.0))),
            40_960.0
        );
        assert_eq!(
            bytes_per_token(&m, &layout(4, KvElem::Bytes(2.0))),
            81_920.0
        );
        let dp = Layout {
            attention_dp: true,
            ..layout(4, KvElem::Bytes(2.0))
        };
        assert_eq!(bytes_per_token(&m, &dp), 327_680.0);
    }

    #[test]
    fn nvfp4_packs_two_elements_a_byte_plus_a_scale_per_16() {
        // 8 heads × 128 = 1024 elements: 512 + 64 bytes, for K and V, over 32 layers.
        let m = dense(32, 32, 8, 128);
        assert_eq!(
            bytes_per_token(&m, &layout(1, KvElem::Nvfp4)),
            2.0 * 576.0 * 32.0
        );
    }

    #[test]
    fn pools_are_whole_blocks_and_max_tokens_caps_them() {
        let logged = 273_792.0 * 28_672.0;
        assert_eq!(pool_tokens(logged, 28_672.0, 32), 273_792);
        assert_eq!(pool_tokens(logged - 1.0, 28_672.0, 32), 273_760);
        assert_eq!(pool_tokens(-1.0, 28_672.0, 32), 0);
        let a = args(
            Engine::Trtllm,
            "1.0.0",
            &[("kv_cache_config.max_tokens", SettingValue::Int(1000))],
        );
        let cap = caps(&a, 100.0, &mut Notes::default());
        assert_eq!(pool_tokens(cap.min(1e12), 100.0, 32), 992);
    }

    #[test]
    fn the_deduced_max_seq_len_scales_only_plain_rope_factors() {
        let mut m = dense(32, 32, 8, 128);
        m.length_keys = vec![("max_position_embeddings".into(), 32768)];
        assert_eq!(derived_max_seq_len(&m), 32768);
        m.rope_scaling = Some(crate::model::RopeScaling {
            rope_type: "linear".into(),
            factor: 4.0,
            original_max_position_embeddings: None,
        });
        assert_eq!(derived_max_seq_len(&m), 131072);
        if let Some(r) = m.rope_scaling.as_mut() {
            r.rope_type = "yarn".into();
        }
        assert_eq!(derived_max_seq_len(&m), 32768);
    }

    #[test]
    fn a_vlm_gives_its_encoder_profile_a_gib_and_the_band_three() {
        // KvCacheCreator.configure_kv_cache_capacity profiles the vision encoder before the pool
        // is sized: 0.9 × 1 GiB less KV at the point, the low end 0.9 × 3 GiB lower still.
        let text = dense(32, 32, 8, 128);
        let vlm = Geometry {
            multimodal: true,
            ..text.clone()
        };
        let gpu = crate::gpu::lookup("h100-80gb").cloned().unwrap();
        let a = args(Engine::Trtllm, "1.2.1", &[]);
        let plan_of = |m: &Geometry| {
            plan(&Inputs {
                args: &a,
                model: m,
                gpu: &gpu,
                gpu_count: None,
                at: crate::source::Loc::new(crate::source::FileId(0), 0..0),
            })
            .unwrap()
        };
        let (t, v) = (plan_of(&text), plan_of(&vlm));
        let less = (t.budget_bytes - v.budget_bytes) as f64;
        assert!((less - 0.9 * GIB).abs() < 2.0, "{less}");
        let b = t.kv_bytes_per_token as f64;
        let low_gap = (t.pool_tokens_low - v.pool_tokens_low) as f64 * b;
        assert!((low_gap - 0.9 * 3.0 * GIB).abs() < 64.0 * b, "{low_gap}");
        // The high end moves only by the weights' low side, up: −2 % for a VLM's count, whose
        // tower a launch may not build, −0.5 % for a text-only one (`capacity::weights`).
        let high_gap = (v.pool_tokens_high - t.pool_tokens_high) as f64 * b;
        let expected = 0.9 * 0.015 * t.weights_bytes as f64;
        assert!(
            (high_gap - expected).abs() < 64.0 * b,
            "{high_gap} vs {expected}"
        );
    }

    #[test]
    fn attention_dp_ranks_hold_all_but_the_routed_experts_whole() {
        // 8 ranks: the split estimate counted 1/8 of everything; attention DP adds the other 7/8
        // of what is neither a routed expert nor already held whole.
        let mut m = deepseek_v3();
        m.weight_bytes = 100_000;
        m.weight_parts.routed_experts = 92_000;
        m.weight_parts.replicated = 800;
        let on = Layout {
            attention_dp: true,
            ..layout(8, KvElem::Bytes(1.0))
        };
        let plain = args(Engine::Trtllm, "1.2.0", &[]);
        let (e, _) = attention_dp_weights(&plain, &m, &on, 1).unwrap();
        assert_eq!(e.point, 7_200.0 * 7.0 / 8.0);
        assert!(attention_dp_weights(&plain, &m, &layout(8, KvElem::Bytes(1.0)), 1).is_none());
        // enable_lm_head_tp_in_adp splits the LM head: what the count holds besides the
        // embedding and the layers (here 100,000 − 1,000 − 98,000 = 1,000 bytes) stays split.
        m.weight_parts.embedding = 1_000;
        m.weight_parts.layers = 98_000;
        let split = args(
            Engine::Trtllm,
            "1.2.0",
            &[("enable_lm_head_tp_in_adp", SettingValue::Flag(true))],
        );
        let (e, _) = attention_dp_weights(&split, &m, &on, 1).unwrap();
        assert_eq!(e.point, 6_200.0 * 7.0 / 8.0);
    }

    #[test]
    fn deepgemm_keeps_one_workspace_of_the_largest_warm_up_chunk() {
        // DeepSeek-R1 at TP 8, EP 8, attention DP, max_num_tokens 8192: 8 × 8192 gathered rows
        // exceed 2 × 18688, so 4 chunks of 8 × 2048 = 16384 rows. The run's log shows the fp8
        // workspace_0 of 32 × 16384 × 7168 bytes ("storage of size 3758096384"); workspace_1 is
        // twice that in bf16, the scales 32 × 14 × 16384 int32.
        let mut m = deepseek_v3();
        m.hidden_size = 7168;
        let dp = Layout {
            attention_dp: true,
            ..layout(8, KvElem::Bytes(1.0))
        };
        let deepgemm = |pairs: &[(&str, SettingValue)]| {
            let mut all = vec![("moe_config.backend", SettingValue::Text("DEEPGEMM".into()))];
            all.extend_from_slice(pairs);
            args(Engine::Trtllm, "1.2.0", &all)
        };
        let ep8 = [("moe_expert_parallel_size", SettingValue::Int(8))];
        let (ws, _) = deepgemm_workspace(&deepgemm(&ep8), &m, &dp).unwrap();
        assert_eq!(
            ws.point,
            3.0 * 3_758_096_384_f64 + 32.0 * 14.0 * 16384.0 * 4.0
        );
        // A given moe_config.max_num_tokens replaces the cap: 65536 rows in one chunk.
        let big = [
            ("moe_expert_parallel_size", SettingValue::Int(8)),
            ("moe_config.max_num_tokens", SettingValue::Int(65536)),
        ];
        let (one, _) = deepgemm_workspace(&deepgemm(&big), &m, &dp).unwrap();
        assert_eq!(one.point, ws.point * 4.0);
        // Other backends keep no such buffer.
        let cutlass = args(Engine::Trtllm, "1.2.0", &ep8);
        assert!(deepgemm_workspace(&cutlass, &m, &dp).is_none());
    }

    #[test]
    fn the_fraction_is_of_memory_left_after_the_profile_run() {
        // Llama-3.1-8B on an 80 GB GPU at 0.5: half of (total − weights − non-KV).
        let m = dense(32, 32, 8, 128);
        let gpu = crate::gpu::lookup("h100-80gb").cloned().unwrap();
        let a = args(
            Engine::Trtllm,
            "1.0.0",
            &[(FRACTION, SettingValue::Float(0.5))],
        );
        let inp = Inputs {
            args: &a,
            model: &m,
            gpu: &gpu,
            gpu_count: None,
            at: crate::source::Loc::new(crate::source::FileId(0), 0..0),
        };
        let p = plan(&inp).unwrap();
        let w = p.weights_bytes as f64;
        let kv = p.budget_bytes as f64;
        let total = gpu.cuda_total_bytes as f64;
        assert!(kv < 0.5 * (total - w) && kv > 0.5 * (total - w - 4.0 * GIB));
        assert_eq!(p.pool_tokens % 32, 0);
        assert_eq!(p.context_length, 131072);
        assert_eq!(
            p.memory_fraction_flag,
            "--kv_cache_free_gpu_memory_fraction"
        );
    }
}

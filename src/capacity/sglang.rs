//! SGLang's KV pool, mirroring `python/sglang/srt/model_executor/pool_configurator.py`
//! (`DefaultPoolConfigurator`, `HybridSWAPoolConfigurator`), `mem_cache/kv_cache_configurator.py`
//! (`_profile_available_bytes`, `calculate_mla_kv_cache_dim`) and
//! `arg_groups/memory_hook.py :: handle_gpu_memory_settings` of 0.5.23, with the older
//! versions' differences (0.5.9 `model_runner_kv_cache_mixin.py`, 0.4.6 `model_runner.py`).
//! Reference: `sglang-capacity.md`.

use super::{
    int_or, kv_dtype_bytes, page_floor, part_scale, rope_tables, unresolved, unsplit_share,
    weights_per_rank, ContextSource, Estimate, Inputs, Notes, Plan, Role, GIB,
};
use crate::engine::EngineArgs;
use crate::finding::Finding;
use crate::gpu::{GpuSpec, Vendor};
use crate::launch::Engine;
use crate::model::{Geometry, LayerKind};
use crate::version::Version;

const V0_5_0: Version = Version::new(0, 5, 0);
const V0_5_7: Version = Version::new(0, 5, 7);
const V0_5_10: Version = Version::new(0, 5, 10);
const V0_5_18: Version = Version::new(0, 5, 18);
const V0_5_22: Version = Version::new(0, 5, 22);
/// Every release above: the math is the same between two of them, so a launch whose release is
/// unknown is planned once per stretch (capacity::releases). A new threshold belongs here too.
pub const MATH_CHANGES: &[Version] = &[V0_5_0, V0_5_7, V0_5_10, V0_5_18, V0_5_22];

/// Settings the pool math reads; an unresolved variable in any of them stops the plan.
const NEEDED: &[&str] = &[
    "model_path",
    "tp_size",
    "pp_size",
    "dp_size",
    "attn_dp_size",
    "context_length",
    "mem_fraction_static",
    "kv_cache_dtype",
    "page_size",
    "max_total_tokens",
    "chunked_prefill_size",
    "max_running_requests",
    "disaggregation_mode",
    "swa_full_tokens_ratio",
    "dcp_size",
];

/// Parallel layout of one SGLang server.
struct Layout {
    tp: u32,
    pp: u32,
    dp: u32,
    attn_dp: u32,
    attn_tp: u32,
    dcp: u32,
}

impl Layout {
    /// GPUs of one server: attention-DP ranks live inside the TP group, while plain
    /// `--dp-size` starts `dp` copies of the TP×PP group
    /// (managers/data_parallel_controller.py :: DataParallelController).
    fn gpus(&self) -> u32 {
        let replicas = if self.attn_dp > 1 { 1 } else { self.dp };
        self.tp * self.pp * replicas
    }
}

fn layout(args: &EngineArgs) -> Layout {
    let tp = int_or(args, "tp_size", 1);
    let pp = int_or(args, "pp_size", 1);
    let dp = int_or(args, "dp_size", 1);
    // 0.5.22 added --attn-dp-size; --enable-dp-attention means attention-DP over dp_size.
    let attn_dp = match args.int("attn_dp_size") {
        Some(n) if n > 1 && args.version >= V0_5_22 => n as u32,
        _ if args.flag("enable_dp_attention") => dp,
        _ => 1,
    };
    let dcp = int_or(args, "dcp_size", 1);
    Layout {
        tp,
        pp,
        dp,
        attn_dp,
        attn_tp: (tp / attn_dp).max(1),
        dcp,
    }
}

fn role(args: &EngineArgs) -> Role {
    match args.text("disaggregation_mode") {
        Some("prefill") => Role::Prefill,
        Some("decode") => Role::Decode,
        _ => Role::Unified,
    }
}

/// `is_deepseek_dsa` in `configs/model_config.py`: a DSA architecture with `index_topk`.
fn is_dsa(m: &Geometry) -> bool {
    m.dsa.is_some() && m.mla.is_some()
}

/// `is_hybrid_swa_model` (0.5.23): the sliding-window pool split applies to these archs only;
/// Gemma 2/3 are forced to `disable_hybrid_swa_memory` (`model_overrides/gemma2_gemma3.py`).
fn hybrid_swa(m: &Geometry, args: &EngineArgs) -> bool {
    const ARCHS: &[&str] = &[
        "GptOssForCausalLM",
        "Llama4ForConditionalGeneration",
        "Llama4ForCausalLM",
        "Gemma4ForConditionalGeneration",
        "Gemma4ForCausalLM",
        "MiMoV2FlashForCausalLM",
        "Step3p5ForCausalLM",
    ];
    args.version >= V0_5_0
        && !args.flag("disable_hybrid_swa_memory")
        && m.architectures.iter().any(|a| ARCHS.contains(&a.as_str()))
        && m.layers
            .iter()
            .any(|l| matches!(l, LayerKind::Sliding { .. } | LayerKind::Chunked { .. }))
}

/// KV dtype after `configure_kv_cache_dtype` and the DSA override `_dsa_kv_cache_dtype_default`.
fn kv_dtype(args: &EngineArgs, m: &Geometry, gpu: &GpuSpec, notes: &mut Notes) -> (String, f64) {
    let flag = args.text("kv_cache_dtype").unwrap_or("auto");
    if flag != "auto" {
        let bytes = match flag {
            // mxfp8 keeps one e8m0 scale per 32 elements.
            "mxfp8" => 1.0 + 1.0 / 32.0,
            // FP4 recipes: packed nibbles plus one scale byte per 16 elements.
            "nvfp4" | "fp4_e2m1" | "fp4_mx_block16" => 0.5 + 1.0 / 16.0,
            other => kv_dtype_bytes(other).unwrap_or(2.0),
        };
        return (flag.to_string(), bytes);
    }
    if is_dsa(m) {
        let blackwell = gpu.compute_capability.0 >= 10;
        let (name, bytes) = if blackwell {
            ("fp8_e4m3", 1.0)
        } else {
            ("bfloat16", 2.0)
        };
        notes.exact(
            "kv_cache_dtype",
            bytes,
            format!("auto → {name} for DSA models on this GPU (arg_groups/overrides.py :: _dsa_kv_cache_dtype_default)"),
        );
        return (name.to_string(), bytes);
    }
    if m.quantization.as_ref().is_some_and(|q| q.kv_cache_fp8) {
        notes.exact(
            "kv_cache_dtype",
            1.0,
            "auto → fp8_e4m3: the checkpoint declares an FP8 KV cache",
        );
        return ("fp8_e4m3".into(), 1.0);
    }
    let model_dtype = match args.text("dtype") {
        Some("float16" | "half") => ("float16", 2.0),
        Some("float32") => ("float32", 4.0),
        _ => ("bfloat16", 2.0),
    };
    (model_dtype.0.to_string(), model_dtype.1)
}

/// `_page_size_default` and the backends that force a page size (sglang-capacity.md §1.3).
fn page_size(args: &EngineArgs, m: &Geometry, gpu: &GpuSpec) -> u32 {
    if is_dsa(m) {
        return 64; // model_overrides/deepseek_v2.py: 64 * index_kpool for DSA
    }
    let flag = args.int("page_size").map(|p| p.max(1) as u32);
    let backend = args.text("attention_backend").unwrap_or("");
    let keep_or = |allowed: &[u32], fallback: u32| match flag {
        Some(p) if allowed.contains(&p) => p,
        _ => fallback,
    };
    match backend {
        "flashmla" => 64,
        "trtllm_mla" | "cutedsl_mla" => keep_or(&[32, 64], 64),
        "trtllm_mha" => keep_or(&[16, 32, 64, 128], 64),
        "" if m.mla.is_some() && gpu.compute_capability.0 >= 10 => keep_or(&[32, 64], 64),
        _ => flag.unwrap_or(1),
    }
}

/// Layers of the largest pipeline stage (`get_pp_indices` gives the remainder to the last stages).
fn stage_layers(n: u32, pp: u32) -> u32 {
    n.div_ceil(pp.max(1))
}

/// Per-token bytes on one rank (`DefaultPoolConfigurator._compute_cell_size` and friends).
struct Cell {
    bytes: f64,
    /// Sliding-window share of the cell, for the SWA token split.
    swa_ratio: Option<f64>,
    how: String,
}

fn mha_heads(m: &Geometry, lay: &Layout) -> u32 {
    // ModelConfig.get_num_kv_heads: max(1, total // (attn_tp // dcp))
    let div = (lay.attn_tp / lay.dcp.max(1)).max(1);
    (m.num_kv_heads / div).max(1)
}

fn cell(args: &EngineArgs, m: &Geometry, gpu: &GpuSpec, lay: &Layout, kvb: f64, kv: &str) -> Cell {
    let v = &args.version;
    // 0.4.x counted every hidden layer on every PP stage.
    let layers = |n: u32| {
        if *v < V0_5_0 {
            n
        } else {
            stage_layers(n, lay.pp)
        }
    };
    if let Some(mla) = &m.mla {
        let raw = f64::from(mla.kv_lora_rank + mla.qk_rope_head_dim);
        let l = f64::from(layers(m.num_layers));
        if let Some(dsa) = m.dsa.as_ref().filter(|_| is_dsa(m)) {
            let per_layer = dsa_latent_bytes(
                args,
                gpu,
                raw,
                kvb,
                kv,
                mla.kv_lora_rank,
                mla.qk_rope_head_dim,
            );
            let ihd = f64::from(dsa.index_head_dim);
            let idx =
                (ihd + (ihd / 128.0).floor() * 4.0).ceil() * f64::from(layers(dsa.indexer_layers));
            let idx = idx * f64::from(lay.dcp.max(1));
            return Cell {
                bytes: per_layer * l + idx,
                swa_ratio: None,
                how: format!("DSA: {per_layer} B latent × {l} layers + {idx} B indexer keys"),
            };
        }
        return Cell {
            bytes: raw * kvb * l,
            swa_ratio: None,
            how: format!(
                "MLA: ({} + {}) × {kvb} B × {l} layers, not split by TP",
                mla.kv_lora_rank, mla.qk_rope_head_dim
            ),
        };
    }
    let n = f64::from(mha_heads(m, lay));
    let per_full = n * f64::from(m.head_dim + m.v_head_dim) * kvb;
    if hybrid_swa(m, args) {
        let r = args.float("swa_full_tokens_ratio").unwrap_or(0.8);
        let (sn, shd, svd) = match &m.swa_heads {
            Some(s) => (s.num_kv_heads, s.head_dim, s.v_head_dim),
            None => (m.num_kv_heads, m.head_dim, m.v_head_dim),
        };
        let div = (lay.attn_tp / lay.dcp.max(1)).max(1);
        let per_swa = f64::from((sn / div).max(1)) * f64::from(shd + svd) * kvb;
        let n_full = f64::from(layers(m.full_layers()));
        let n_swa = f64::from(layers(m.layers.len() as u32 - m.full_layers()));
        return Cell {
            bytes: per_full * n_full + r * per_swa * n_swa,
            swa_ratio: Some(r),
            how: format!("hybrid SWA: {per_full} B × {n_full} full layers + {r} × {per_swa} B × {n_swa} window layers"),
        };
    }
    // Linear-attention hybrids keep KV only on their full-attention layers.
    let kv_layers = if m.linear.is_some() {
        m.full_layers()
    } else {
        m.num_layers
    };
    let l = f64::from(layers(kv_layers));
    Cell {
        bytes: per_full * l,
        swa_ratio: None,
        how: format!(
            "{n} KV heads × ({} + {}) × {kvb} B × {l} layers",
            m.head_dim, m.v_head_dim
        ),
    }
}

/// `calculate_mla_kv_cache_dim`: the FP8 FlashMLA layout stores rope in bf16 plus fp32 scales
/// (656 B for 512/64); trtllm, both-tilelang and the HIP backends keep the raw layout. 0.5.9
/// profiled with the raw layout whatever was allocated.
fn dsa_latent_bytes(
    args: &EngineArgs,
    gpu: &GpuSpec,
    raw: f64,
    kvb: f64,
    kv: &str,
    lora: u32,
    rope: u32,
) -> f64 {
    let backend = |d: &str, legacy: &str| args.text(d).or_else(|| args.text(legacy)).unwrap_or("");
    let (pre, dec) = (
        backend("dsa_prefill_backend", "nsa_prefill_backend"),
        backend("dsa_decode_backend", "nsa_decode_backend"),
    );
    let raw_layout = args.version < V0_5_10
        || gpu.vendor == Vendor::Amd
        || pre == "trtllm"
        || dec == "trtllm"
        || (pre == "tilelang" && dec == "tilelang");
    if kv == "fp8_e4m3" && !raw_layout {
        f64::from(lora + lora / 128 * 4 + rope * 2)
    } else {
        raw * kvb
    }
}

/// Decode CUDA-graph batch size and chunked-prefill size defaults by GPU memory (MiB).
fn tier_defaults(gpu_mib: u64, tp: u32, v: &Version) -> (i64, i64) {
    let g = gpu_mib as f64 / 1024.0;
    let new = *v >= V0_5_18;
    match g {
        g if g < 20.0 => (2048, 8),
        g if g < 35.0 && new => (4096, if tp < 4 { 48 } else { 160 }),
        g if g < 35.0 => (2048, if tp < 4 { 24 } else { 80 }),
        g if g < 60.0 => (4096, if tp < 4 { 32 } else { 160 }),
        g if g < 160.0 => (8192, if tp < 4 { 256 } else { 512 }),
        _ => (16384, 512),
    }
}

/// `prefill_capture_sizes`, filtered to ≤ max_bs.
fn prefill_capture_sizes(max_bs: i64) -> usize {
    let ranges: [(i64, i64, i64); 6] = [
        (4, 32, 4),
        (48, 256, 16),
        (288, 512, 32),
        (576, 1024, 64),
        (1280, 4096, 256),
        (4608, i64::MAX, 512),
    ];
    ranges
        .iter()
        .flat_map(|&(a, b, s)| (a..=b.min(max_bs.max(0))).step_by(s as usize))
        .count()
}

fn speculative(args: &EngineArgs) -> Option<&str> {
    args.text("speculative_algorithm")
        .filter(|a| !a.eq_ignore_ascii_case("none"))
}

/// The default `mem_fraction_static` (sglang-capacity.md §2).
fn default_fraction(
    args: &EngineArgs,
    m: &Geometry,
    gpu: &GpuSpec,
    lay: &Layout,
    role: Role,
) -> (f64, String) {
    let v = &args.version;
    let gpu_mib = gpu.memory_mib;
    if *v < V0_5_0 {
        // 0.4.6 server_args.py :: ServerArgs.__post_init__
        let f = if gpu_mib <= 81920 {
            match lay.tp {
                t if t >= 16 => 0.79,
                t if t >= 8 => 0.81,
                t if t >= 4 => 0.85,
                t if t >= 2 => 0.87,
                _ => 0.88,
            }
        } else {
            (gpu_mib as f64 - 13.0 * 1024.0) / gpu_mib as f64
        };
        return (
            f,
            "0.4.x table by TP and GPU memory (server_args.py :: ServerArgs.__post_init__)".into(),
        );
    }
    let (chunk_default, bs_default) = tier_defaults(gpu_mib, lay.tp, v);
    let chunked = args.int("chunked_prefill_size").unwrap_or(chunk_default);
    let mrr = args.int("max_running_requests");
    let bs_flag = args
        .int("cuda_graph_max_bs_decode")
        .or_else(|| args.int("cuda_graph_max_bs"));
    let max_bs = match (bs_flag, mrr) {
        (Some(b), _) => b,
        (None, Some(r)) if r < bs_default => r,
        _ => bs_default,
    };
    let no_graphs = args.flag("disable_cuda_graph");
    let tpp = f64::from(lay.tp * lay.pp) / 8.0 * 1024.0;
    let spec = speculative(args);
    let mut reserved;
    if *v >= V0_5_18 {
        let draft = args.int("speculative_num_draft_tokens").unwrap_or(1).max(1);
        let act = match role {
            Role::Decode => (mrr.unwrap_or(max_bs).max(1) * draft).max(2048),
            _ if chunked > 0 => chunked.max(2048),
            _ => args.int("max_prefill_tokens").unwrap_or(16384).max(2048),
        };
        reserved = 512.0 + act as f64 * 1.5 + tpp;
        let decode_graph = !no_graphs && !args.flag("disable_decode_cuda_graph");
        let prefill_graph = !no_graphs && !args.flag("disable_prefill_cuda_graph");
        if role != Role::Prefill && decode_graph {
            reserved += max_bs as f64 * 2.0;
        }
        if lay.attn_dp > 1 && role != Role::Prefill {
            let w = (max_bs * i64::from(lay.attn_dp)) as f64;
            reserved += w * 3.0 + if max_bs > 300 { w * 1.5 } else { 0.0 };
        }
        if role != Role::Decode && prefill_graph {
            let prefill_bs = args
                .int("cuda_graph_max_bs_prefill")
                .unwrap_or(if m.mla.is_some() {
                    chunked.min(8192)
                } else {
                    chunked
                });
            reserved += if m.mla.is_some() {
                1536.0
            } else {
                8.0 * prefill_capture_sizes(prefill_bs) as f64
            };
        }
    } else {
        // 0.5.9 server_args.py :: ServerArgs._handle_gpu_memory_settings
        reserved = 512.0 + chunked.max(2048) as f64 * 1.5 + max_bs as f64 * 2.0 + tpp;
        if args.flag("enable_dp_attention") {
            let w = (max_bs * i64::from(lay.dp)) as f64;
            reserved += w * 3.0 + if max_bs > 300 { w * 1.5 } else { 0.0 };
        }
        match spec {
            Some(a) if a.eq_ignore_ascii_case("standalone") => reserved += 6144.0,
            Some(a) if !a.eq_ignore_ascii_case("ngram") => reserved += 2048.0,
            _ => {}
        }
    }
    if gpu_mib > 60 * 1024 {
        reserved = reserved.max(10240.0);
    }
    let g = gpu_mib as f64;
    let mut f = ((g - reserved) / g * 1000.0).round() / 1000.0;
    let mut how =
        format!("heuristic: ({gpu_mib} MiB − {reserved:.0} MiB reserved) / {gpu_mib} MiB");
    if m.multimodal && role != Role::Decode {
        // adjust_mem_fraction_for_vlm: a larger vision tower leaves less for the KV cache.
        let scale = m.vision.as_ref().map_or(1.0, |v| {
            let x = f64::from(v.layers) * (v.hidden as f64).powi(2) / (24.0 * 1024.0 * 1024.0);
            (1.0 - 0.1 * (x - 1.0)).clamp(0.8, 1.05)
        });
        f *= 0.95 * scale;
        how.push_str(&format!(
            ", × 0.95 × {scale:.4} for a VLM (adjust_mem_fraction_for_vlm)"
        ));
    }
    (f, how)
}

/// SGLang keeps rotary tables in fp32 on CUDA and casts them to the model dtype elsewhere
/// (layers/rotary_embedding/base.py :: RotaryEmbedding.__init__, `if not _is_cuda`).
fn rope_elem_bytes(m: &Geometry, gpu: &GpuSpec) -> f64 {
    match gpu.vendor {
        Vendor::Nvidia => 4.0,
        Vendor::Amd => m.dtype.bytes().max(2.0),
    }
}

/// Weight bytes per rank that SGLang's own model classes add to the even TP split.
fn model_code_weights(
    m: &Geometry,
    lay: &Layout,
    v: &Version,
    scale: f64,
) -> Option<(Estimate, String)> {
    let (tp, pp) = (f64::from(lay.tp.max(1)), f64::from(lay.pp.max(1)));
    let parts = &m.weight_parts;
    let text = m.text_model_type.as_str();
    if text.starts_with("gemma3") || text.starts_with("gemma4") {
        // models/gemma3_causal.py, gemma4_causal.py :: *TextModel.__init__: the token
        // embeddings are a plain nn.Embedding (`Gemma3TextScaledWordEmbedding`), whole on
        // every TP rank rather than a VocabParallelEmbedding.
        let x = unsplit_share(parts.embedding as f64, tp, pp);
        return (x > 0.0).then(|| {
            (
                Estimate::exact(x),
                "the Gemma token embedding is whole on every rank".into(),
            )
        });
    }
    if text == "ministral3" && *v >= V0_5_7 {
        // models/ministral3.py (0.5.7+): `Ministral3Model.__init__` lets `LlamaModel` build
        // every decoder layer, then builds them again; each `Ministral3DecoderLayer` also
        // replaces the `LlamaAttention` its parent built. The discarded modules sit in
        // reference cycles (parameters hold their module's bound `weight_loader`), so they
        // stay allocated until a full garbage collection; the load-time measurement counts
        // them. The band's low end assumes they were collected.
        let x = (parts.layers + parts.attention) as f64 * scale / (tp * pp);
        return Some((
            Estimate::range(x, 0.0, x),
            "decoder layers that Ministral3Model builds twice and discards".into(),
        ));
    }
    None
}

/// Free bytes per GPU when SGLang takes its memory baseline: CUDA's total less the CUDA
/// context and the distributed set-up, which the engine measures and kvlint can only estimate.
fn baseline(gpu: &GpuSpec, lay: &Layout, args: &EngineArgs, notes: &mut Notes) -> Estimate {
    let total = gpu.cuda_total_bytes as f64;
    let multi = lay.tp * lay.pp > 1;
    // Observed: H100 TP1 0.71 GiB, RTX 3090 TP2 0.67 GiB below CUDA's total; MI355X TP8 4.5 to
    // 11 GiB (ROCm's distributed init takes far more).
    let (point, low, high) = match (gpu.vendor, multi) {
        (Vendor::Nvidia, false) => (0.7, 0.4, 1.5),
        (Vendor::Nvidia, true) => (0.7, 0.4, 2.5),
        (Vendor::Amd, false) => (1.5, 0.5, 4.0),
        (Vendor::Amd, true) => (8.0, 3.5, 12.0),
    };
    let symm = if args.flag("enable_symm_mem") {
        4.0
    } else {
        0.0
    };
    let e = Estimate::range(
        total - (point + symm) * GIB,
        total - (high + symm) * GIB,
        total - (low + symm) * GIB,
    );
    notes.estimate(
        "baseline_free_bytes",
        e,
        format!("CUDA total {:.2} GiB less an estimated {point} GiB (range {low}–{high}) for the CUDA context and distributed set-up{}", total / GIB, if symm > 0.0 { " and 4 GiB of symmetric memory" } else { "" }),
    );
    e
}

/// Bytes per request of the linear-attention state (`Mamba2CacheParams.mamba_cache_per_req`,
/// Qwen3-Next GDN shapes in `configs/qwen3_next.py`), fp32 SSM state by default.
fn mamba_per_request(m: &Geometry, tp: u32) -> f64 {
    let Some(lin) = &m.linear else { return 0.0 };
    let tp = f64::from(tp.max(1));
    let conv_dim = f64::from(
        lin.num_value_heads * lin.value_head_dim + 2 * lin.num_key_heads * lin.key_head_dim,
    );
    let conv = conv_dim / tp * f64::from(lin.conv_kernel.saturating_sub(1)) * 2.0;
    let ssm = f64::from(lin.num_value_heads) / tp
        * f64::from(lin.value_head_dim * lin.key_head_dim)
        * 4.0;
    let n_linear = m
        .layers
        .iter()
        .filter(|l| matches!(l, LayerKind::Linear))
        .count() as f64;
    (conv + ssm) * n_linear
}

/// KV bytes left after the mamba state is carved out (`_handle_max_mamba_cache`, ratio path).
fn after_mamba(rest: f64, per_req: f64, args: &EngineArgs, attn_dp: u32) -> f64 {
    if per_req <= 0.0 || rest <= 0.0 {
        return rest;
    }
    let slots = if let Some(n) = args.int("max_mamba_cache_size") {
        n as f64
    } else if let (true, Some(mrr)) = (
        args.flag("disable_radix_cache"),
        args.int("max_running_requests"),
    ) {
        (mrr / i64::from(attn_dp.max(1))) as f64
    } else {
        let r = args.float("mamba_full_memory_ratio").unwrap_or(0.9);
        ((rest * r / (1.0 + r) - per_req) / per_req)
            .floor()
            .max(0.0)
    };
    rest - (slots + 1.0) * per_req
}

/// Tokens the pool holds for a KV budget, after page alignment and `--max-total-tokens`.
fn tokens(rest: f64, cell: &Cell, page: u32, cap: Option<u64>) -> u64 {
    if rest <= 0.0 || cell.bytes <= 0.0 {
        return 0;
    }
    let t = page_floor((rest.floor() / cell.bytes).floor() as u64, page);
    cap.map_or(t, |c| t.min(page_floor(c, page)))
}

pub fn plan(inp: &Inputs) -> Result<Plan, Vec<Finding>> {
    let args = inp.args;
    let missing = unresolved(args, NEEDED);
    if !missing.is_empty() {
        return Err(missing);
    }
    let (m, gpu) = (inp.model, inp.gpu);
    let v = &args.version;
    let mut notes = Notes::default();
    let lay = layout(args);
    let role = role(args);

    let (kv_name, kvb) = kv_dtype(args, m, gpu, &mut notes);
    let page = page_size(args, m, gpu);
    let mut cell = cell(args, m, gpu, &lay, kvb, &kv_name);
    let spec = speculative(args);
    let eagle_like = spec.is_some_and(|a| {
        ["eagle", "eagle3", "nextn", "mtp", "standalone"].contains(&a.to_ascii_lowercase().as_str())
    });
    if eagle_like && *v >= V0_5_18 {
        // 0.5.18+: the draft KV shares the budget, so the cell grows by draft/target layers.
        let draft_layers = if m.nextn_layers > 0 {
            m.nextn_layers
        } else {
            1
        };
        let grow = (cell.bytes * f64::from(draft_layers) / f64::from(m.num_layers.max(1))).floor();
        cell.bytes += grow;
        cell.how
            .push_str(&format!(" + {grow} B for {draft_layers} draft layer(s)"));
    }
    notes.exact("kv_bytes_per_token", cell.bytes, cell.how.clone());

    let (fraction, fraction_how, fraction_loc) = match args.float("mem_fraction_static") {
        Some(f) => (
            f,
            "--mem-fraction-static".to_string(),
            args.get("mem_fraction_static").map(|s| s.loc()),
        ),
        None => {
            let (f, how) = default_fraction(args, m, gpu, &lay, role);
            (f, how, None)
        }
    };
    notes.exact("mem_fraction_static", fraction, fraction_how);

    let b = baseline(gpu, &lay, args, &mut notes);
    let quant = args.text("quantization");
    let extras = model_code_weights(m, &lay, v, part_scale(m, quant))
        .into_iter()
        .chain(rope_tables(m, rope_elem_bytes(m, gpu)))
        // model_config.py::_get_and_verify_dtype: `--dtype float32` loads weights at 4 bytes.
        .chain(super::dtype_weights(args, m, quant, lay.tp * lay.pp));
    let mut w = weights_per_rank(m, quant, (lay.tp, lay.pp), extras, &mut notes);
    if eagle_like && *v >= V0_5_18 && m.nextn_weight_bytes > 0 {
        let draft = m.nextn_weight_bytes as f64 / f64::from(lay.tp);
        notes.estimate(
            "draft_weights_bytes",
            Estimate::rel(draft, 0.1),
            "MTP layers load before profiling (0.5.18+)",
        );
        w = Estimate::range(w.point + draft, w.low + draft * 0.9, w.high + draft * 1.1);
    }
    let per_req = mamba_per_request(m, lay.attn_tp);
    if per_req > 0.0 {
        notes.exact(
            "mamba_state_bytes_per_request",
            per_req,
            "conv + fp32 SSM state of the linear-attention layers",
        );
    }

    let rest_at = |b: f64, w: f64| after_mamba(fraction * b - w, per_req, args, lay.attn_dp);
    let cap = args.int("max_total_tokens").map(|t| t.max(0) as u64);
    let logical = |t: u64| t * u64::from(lay.dcp.max(1));
    let pool = |rest: f64| logical(tokens(rest, &cell, page, cap));
    let rest = rest_at(b.point, w.point);
    let (pool_point, pool_low, pool_high) = (
        pool(rest),
        pool(rest_at(b.low, w.high)),
        pool(rest_at(b.high, w.low)),
    );

    // 0.5.9 and older used min(swa, full) tokens as the request capacity for hybrid SWA.
    let usable = |t: u64| match cell.swa_ratio {
        Some(r) if *v < V0_5_18 => page_floor((t as f64 * r) as u64, page).min(t),
        _ => t,
    };

    let model_max = crate::model::derived_context_length_sglang(m);
    let (context_length, context_source) = match args.int("context_length") {
        Some(c) => (
            c.max(0) as u64,
            ContextSource::Flag(args.get("context_length").map_or(inp.at, |s| s.loc())),
        ),
        None => (model_max, ContextSource::Model),
    };

    // Fraction at which the low end of the band holds the context.
    let need_tokens = context_length.div_ceil(u64::from(lay.dcp.max(1))) + u64::from(page);
    let needed = (need_tokens as f64 * cell.bytes + w.high) / b.low;
    let needed_fraction = (per_req == 0.0 && cell.swa_ratio.is_none() && needed < 0.99)
        .then_some((needed * 1000.0).ceil() / 1000.0);

    Ok(Plan {
        engine: Engine::Sglang,
        engine_version: v.to_string(),
        role,
        model: m.id.clone(),
        gpu: gpu.name.clone(),
        gpu_count: inp.gpu_count.unwrap_or(lay.gpus()),
        tp: lay.tp,
        pp: lay.pp,
        dp: lay.dp,
        context_length,
        context_source,
        model_max_context: model_max,
        kv_cache_dtype: kv_name,
        page_size: page,
        kv_bytes_per_token: cell.bytes.round() as u64,
        pool_tokens: pool_point,
        pool_tokens_low: pool_low,
        pool_tokens_high: pool_high,
        usable_tokens: usable(pool_point),
        usable_tokens_low: usable(pool_low),
        usable_tokens_high: usable(pool_high),
        budget_bytes: rest.round() as i64,
        weights_bytes: w.point.round() as u64,
        memory_fraction: fraction,
        memory_fraction_loc: fraction_loc,
        memory_fraction_flag: "--mem-fraction-static",
        needed_fraction,
        max_context_fit: usable(pool_low),
        assumptions: notes.0,
    })
}

#[cfg(test)]
mod tests {
    //! Expected values are the worked examples of sglang-capacity.md §2.1 and §7, computed
    //! there from the engine's formulas.
    use super::*;
    use crate::capacity::testing::{args, deepseek_v3, deepseek_v32, dense};
    use crate::engine::SettingValue::{Flag, Int, Text};
    use crate::gpu;

    fn gpu(name: &str) -> GpuSpec {
        gpu::lookup(name).unwrap().clone()
    }

    fn fraction(g: &str, m: &Geometry, pairs: &[(&str, crate::engine::SettingValue)]) -> f64 {
        let a = args(Engine::Sglang, "0.5.23", pairs);
        default_fraction(&a, m, &gpu(g), &layout(&a), role(&a)).0
    }

    #[test]
    fn default_mem_fraction_matches_the_heuristic_table() {
        let llama = dense(80, 64, 8, 128);
        let ds = deepseek_v3();
        assert_eq!(fraction("H100-80GB", &llama, &[("tp_size", Int(8))]), 0.812);
        assert_eq!(fraction("H100-80GB", &llama, &[]), 0.830);
        assert_eq!(fraction("H200", &llama, &[("tp_size", Int(8))]), 0.893);
        assert_eq!(fraction("H200", &ds, &[("tp_size", Int(8))]), 0.886);
        let prefill = ("disaggregation_mode", Text("prefill".into()));
        let decode = ("disaggregation_mode", Text("decode".into()));
        assert_eq!(
            fraction("H200", &ds, &[("tp_size", Int(8)), prefill.clone()]),
            0.893
        );
        assert_eq!(
            fraction("H200", &ds, &[("tp_size", Int(8)), decode.clone()]),
            0.929
        );
        let dp_attn = [
            ("tp_size", Int(8)),
            ("dp_size", Int(8)),
            ("enable_dp_attention", Flag(true)),
            decode,
        ];
        assert_eq!(fraction("H200", &ds, &dp_attn), 0.833);
        assert_eq!(
            fraction("B200", &ds, &[("tp_size", Int(8)), prefill]),
            0.849
        );
    }

    fn cell_of(m: &Geometry, gpu_name: &str, pairs: &[(&str, crate::engine::SettingValue)]) -> f64 {
        let a = args(Engine::Sglang, "0.5.23", pairs);
        let mut notes = Notes::default();
        let g = gpu(gpu_name);
        let (kv, kvb) = kv_dtype(&a, m, &g, &mut notes);
        cell(&a, m, &g, &layout(&a), kvb, &kv).bytes
    }

    fn weights(
        m: &Geometry,
        version: &str,
        pairs: &[(&str, crate::engine::SettingValue)],
    ) -> Estimate {
        let a = args(Engine::Sglang, version, pairs);
        let lay = layout(&a);
        let extras = model_code_weights(m, &lay, &a.version, 1.0);
        weights_per_rank(m, None, (lay.tp, lay.pp), extras, &mut Notes::default())
    }

    #[test]
    fn replicated_modules_and_model_code_add_to_the_even_split() {
        let tp2 = [("tp_size", Int(2))];
        let mut m = dense(4, 8, 8, 128);
        m.weight_bytes = 10_000;
        m.weight_parts.replicated = 1_000;
        m.weight_parts.embedding = 2_000;
        m.weight_parts.layers = 6_000;
        m.weight_parts.attention = 1_000;
        // 10,000 / 2 + 1,000 · (1 − 1/2).
        assert_eq!(weights(&m, "0.5.23", &tp2).point, 5_500.0);
        // Gemma 3/4: the nn.Embedding is whole on every rank: + 2,000 · (1 − 1/2).
        m.text_model_type = "gemma4_text".into();
        assert_eq!(weights(&m, "0.5.23", &tp2).point, 6_500.0);
        // Ministral 3 from 0.5.7: a second copy of the layers and of their attention.
        m.text_model_type = "ministral3".into();
        let w = weights(&m, "0.5.12", &tp2);
        assert_eq!((w.point, w.low), (5_500.0 + 3_500.0, 5_500.0 * 0.98));
        assert_eq!(weights(&m, "0.5.6", &tp2).point, 5_500.0);
    }

    #[test]
    fn attention_dp_runs_inside_the_tp_group() {
        let a = args(
            Engine::Sglang,
            "0.5.23",
            &[
                ("tp_size", Int(8)),
                ("dp_size", Int(8)),
                ("enable_dp_attention", Flag(true)),
            ],
        );
        assert_eq!(layout(&a).gpus(), 8);
        let a = args(
            Engine::Sglang,
            "0.5.23",
            &[("tp_size", Int(2)), ("dp_size", Int(4))],
        );
        assert_eq!(layout(&a).gpus(), 8);
    }

    #[test]
    fn cell_sizes_match_the_worked_examples() {
        let llama70 = dense(80, 64, 8, 128);
        assert_eq!(
            cell_of(&llama70, "H100-80GB", &[("tp_size", Int(8))]),
            40_960.0
        );
        assert_eq!(
            cell_of(&llama70, "H100-80GB", &[("tp_size", Int(16))]),
            40_960.0
        );
        let fp8 = ("kv_cache_dtype", Text("fp8_e4m3".into()));
        assert_eq!(
            cell_of(&llama70, "H100-80GB", &[("tp_size", Int(8)), fp8.clone()]),
            20_480.0
        );
        assert_eq!(cell_of(&dense(28, 28, 4, 128), "H100-80GB", &[]), 57_344.0);
        assert_eq!(
            cell_of(&deepseek_v3(), "H200", &[("tp_size", Int(8))]),
            70_272.0
        );
        assert_eq!(
            cell_of(&deepseek_v32(), "H200", &[("tp_size", Int(8))]),
            78_324.0
        );
        assert_eq!(
            cell_of(&deepseek_v32(), "B200", &[("tp_size", Int(8))]),
            48_068.0
        );
    }

    #[test]
    fn gpt_oss_hybrid_swa_cell_counts_window_layers_at_the_ratio() {
        let mut m = dense(36, 64, 8, 64);
        m.architectures = vec!["GptOssForCausalLM".into()];
        m.layers = (0..36)
            .map(|i| {
                if i % 2 == 0 {
                    LayerKind::Sliding { window: 128 }
                } else {
                    LayerKind::Full
                }
            })
            .collect();
        let c = cell_of(&m, "H100-80GB", &[("tp_size", Int(8))]);
        assert!((c - 8_294.4).abs() < 1e-6, "{c}");
    }

    #[test]
    fn nextn_draft_grows_the_cell_by_its_layer_share() {
        let m = deepseek_v3();
        let a = args(
            Engine::Sglang,
            "0.5.23",
            &[
                ("tp_size", Int(8)),
                ("speculative_algorithm", Text("NEXTN".into())),
            ],
        );
        let g = gpu("H200");
        let inputs = Inputs {
            args: &a,
            model: &m,
            gpu: &g,
            gpu_count: None,
            at: crate::source::Loc::new(crate::source::FileId(0), 0..0),
        };
        assert_eq!(plan(&inputs).unwrap().kv_bytes_per_token, 71_424);
    }
}

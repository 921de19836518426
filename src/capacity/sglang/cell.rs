//! Bytes per token on one rank: KV dtype, page size and the cell of each attention kind
//! (`pool_configurator.py :: DefaultPoolConfigurator._compute_cell_size`,
//! `kv_cache_configurator.py :: calculate_mla_kv_cache_dim`).

use super::{Layout, V0_5_0, V0_5_10};
use crate::capacity::{kv_dtype_bytes, Notes};
use crate::engine::EngineArgs;
use crate::gpu::{GpuSpec, Vendor};
use crate::model::{Geometry, LayerKind};

/// `is_deepseek_dsa` in `configs/model_config.py`: a DSA architecture with `index_topk`.
pub(super) fn is_dsa(m: &Geometry) -> bool {
    m.dsa.is_some() && m.mla.is_some()
}

/// `is_hybrid_swa_model` (0.5.23): the sliding-window pool split applies to these archs only;
/// Gemma 2/3 are forced to `disable_hybrid_swa_memory` (`model_overrides/gemma2_gemma3.py`).
pub(super) fn hybrid_swa(m: &Geometry, args: &EngineArgs) -> bool {
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
pub(super) fn kv_dtype(
    args: &EngineArgs,
    m: &Geometry,
    gpu: &GpuSpec,
    notes: &mut Notes,
) -> (String, f64) {
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
pub(super) fn page_size(args: &EngineArgs, m: &Geometry, gpu: &GpuSpec) -> u32 {
    if is_dsa(m) {
        return 64; // model_overrides/deepseek_v2.py: 64 * index_kpool for DSA
    }
    let flag = args
        .int("page_size")
        .map(|p| u32::try_from(p.max(1)).unwrap_or(u32::MAX));
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
pub(super) fn stage_layers(n: u32, pp: u32) -> u32 {
    n.div_ceil(pp.max(1))
}

/// Per-token bytes on one rank (`DefaultPoolConfigurator._compute_cell_size` and friends).
pub(super) struct Cell {
    pub(super) bytes: f64,
    /// Sliding-window share of the cell, for the SWA token split.
    pub(super) swa_ratio: Option<f64>,
    pub(super) how: String,
}

pub(super) fn mha_heads(m: &Geometry, lay: &Layout) -> u32 {
    // ModelConfig.get_num_kv_heads: max(1, total // (attn_tp // dcp))
    let div = (lay.attn_tp / lay.dcp.max(1)).max(1);
    (m.num_kv_heads / div).max(1)
}

pub(super) fn cell(
    args: &EngineArgs,
    m: &Geometry,
    gpu: &GpuSpec,
    lay: &Layout,
    kvb: f64,
    kv: &str,
) -> Cell {
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
        // A hybrid (Kimi-Linear) sizes its cell over the full-attention layers only
        // (`pool_configurator.py`, 0.5.23: `mambaish.full_attention_layer_ids`).
        let l = f64::from(layers(if m.has_state() {
            m.full_layers()
        } else {
            m.num_layers
        }));
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
    let kv_layers = if m.has_state() {
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
pub(super) fn dsa_latent_bytes(
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

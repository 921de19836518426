//! The default `--mem-fraction-static` (`arg_groups/memory_hook.py :: handle_gpu_memory_settings`,
//! 0.5.9 `server_args.py :: ServerArgs._handle_gpu_memory_settings`, 0.4.6 `ServerArgs.__post_init__`).

use super::{Layout, V0_5_0, V0_5_10, V0_5_14, V0_5_18, V0_5_5};
use crate::capacity::Role;
use crate::engine::EngineArgs;
use crate::gpu::{GpuSpec, Vendor};
use crate::model::Geometry;
use crate::version::Version;

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

pub(super) fn speculative(args: &EngineArgs) -> Option<&str> {
    args.text("speculative_algorithm")
        .filter(|a| !a.eq_ignore_ascii_case("none"))
}

/// MiB the default fraction set aside for a draft model, added after the 10 GiB floor
/// (`server_args.py :: ServerArgs._handle_gpu_memory_settings`): STANDALONE 6 GiB, the other
/// drafts but NGRAM 2 GiB in 0.5.9 and 4 GiB in 0.5.10–0.5.13. 0.5.14 dropped it, when the draft
/// began to load before the pool is profiled (`mod.rs :: draft_before_pool`).
fn draft_reserve(v: &Version, spec: Option<&str>) -> f64 {
    match spec {
        _ if *v >= V0_5_14 => 0.0,
        Some(a) if a.eq_ignore_ascii_case("standalone") => 6144.0,
        Some(a) if a.eq_ignore_ascii_case("ngram") => 0.0,
        Some(_) if *v >= V0_5_10 => 4096.0,
        Some(_) => 2048.0,
        None => 0.0,
    }
}

/// The default `mem_fraction_static` (sglang-capacity.md §2).
pub(super) fn default_fraction(
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
    }
    if gpu_mib > 60 * 1024 {
        reserved = reserved.max(10240.0);
    }
    reserved += draft_reserve(v, spec);
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

/// Architectures whose model-specific adjustment picks a non-aiter backend on ROCm when none is
/// given (0.5.12 `server_args.py :: _handle_model_specific_adjustments`: Gemma 2/3/3n and Olmo2
/// take `triton`); kvlint leaves them unscaled rather than guess.
const NOT_AITER_BY_DEFAULT: [&str; 6] = [
    "Gemma2ForCausalLM",
    "Gemma3ForCausalLM",
    "Gemma3ForConditionalGeneration",
    "Gemma3nForCausalLM",
    "Gemma3nForConditionalGeneration",
    "Olmo2ForCausalLM",
];

/// ROCm's aiter attention shrinks `mem_fraction_static` — the default and a given
/// `--mem-fraction-static` alike — when the context exceeds 8,192 tokens, to leave aiter its
/// workspace: × 0.90 in 0.5.4.post1 (`server_args.py :: _handle_attention_backend_compatibility`,
/// "AMD platforms backends"; 0.5.4 itself has no such step), × 0.85 from 0.5.5 (same function through 0.5.18, then
/// `arg_groups/attention_hook.py`; 0.5.20+ skips a given fraction only under
/// `SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION`, default off, which kvlint cannot see). The backend is aiter when given, or by default on HIP for a model that is
/// neither MLA nor DSA (`elif is_hip(): self.attention_backend = "aiter"`); an MLA default
/// depends on its per-rank head count and is left unscaled. `context_len` is
/// `--context-length` when given, else the model's.
pub(super) fn rocm_aiter_scale(
    args: &EngineArgs,
    m: &Geometry,
    gpu: &GpuSpec,
    context_len: u64,
) -> Option<(f64, &'static str)> {
    let v = args.version.release();
    let first = Version::parse("0.5.4.post1").expect("a valid version");
    if gpu.vendor != Vendor::Amd || args.version < first || context_len <= 8192 {
        return None;
    }
    let aiter = match args.text("attention_backend") {
        Some(b) => b.eq_ignore_ascii_case("aiter"),
        None => {
            m.mla.is_none()
                && m.dsa.is_none()
                && !m
                    .architectures
                    .iter()
                    .any(|a| NOT_AITER_BY_DEFAULT.contains(&a.as_str()))
        }
    };
    aiter.then(|| {
        if v < V0_5_5 {
            (0.90, "× 0.90 for ROCm aiter attention past 8,192 tokens (0.5.4.post1 server_args.py :: _handle_attention_backend_compatibility)")
        } else {
            (0.85, "× 0.85 for ROCm aiter attention past 8,192 tokens (0.5.5+ server_args.py :: _handle_attention_backend_compatibility, 0.5.20+ arg_groups/attention_hook.py)")
        }
    })
}

//! What the pool budget subtracts: the free-memory baseline, SGLang's own additions to the
//! weights, and the linear-attention state.

use super::cell::stage_layers;
use super::{
    Layout, V0_5_10, V0_5_13, V0_5_16, V0_5_17, V0_5_18, V0_5_19, V0_5_22, V0_5_6, V0_5_7,
};
use crate::capacity::{model_dtype_bytes, switch_fabric, unsplit_share, Estimate, Headroom, Notes};
use crate::engine::EngineArgs;
use crate::gpu::{GpuSpec, Vendor};
use crate::model::{Geometry, LayerKind};
use crate::units::{GIB, MIB};
use crate::version::Version;

/// Headroom over a parameter-count estimate of the weights SGLang logs at "Load weight end":
/// (a 4-bit checkpoint whose config declares its layout, a 16- or 8-bit one). Fitted to data,
/// not derived. SGLang logs as weights the free-memory drop over `load_model`
/// (`model_executor/model_runner.py :: ModelRunner.load_model`, `mem usage`, read after
/// `torch.cuda.empty_cache()` in `utils/common.py :: get_available_gpu_memory`), which is also
/// what the pool loses. AWQ/GPTQ and Quark checkpoints, allocated as priced, take the 16/8-bit
/// headroom (`capacity::allocated_as_priced`). The other 4-bit loaders convert (NVFP4 scale
/// swizzling, compressed-tensors' MoE repacks on ROCm): over their public logs (0.5.8–0.5.9;
/// Kimi K2.5 compressed-tensors, DeepSeek-R1 NVFP4) the logged weights lie within −1.7 % and
/// +3.3 % of the estimate with its model-code terms (Kimi K2.5 on MI355X the highest, its cause
/// not found); +5 %. A 16- or 8-bit checkpoint is loaded at its stored dtype with nothing to
/// convert (`model_loader/loader.py :: DefaultModelLoader`), and the count misses only the
/// vocabulary padding to 64 rows (`layers/vocab_parallel_embedding.py :: pad_vocab_size`) and
/// small buffers: its logs run +0.05 % (Qwen3-32B, 0.5.19), +0.5 % (Qwen3-8B, 0.4.6),
/// +0.4–0.8 % (GLM-5 FP8, 0.5.8/0.5.9), so it takes the +3 % that bounds vLLM's 36 such logs
/// (`capacity::COUNTED_HEADROOM`). Online quantization, planned from the unquantized config,
/// keeps +10 % (the quantized checkpoint's unquantized modules are unknown), and a 4-bit
/// checkpoint without a declared layout +30 %.
/// SGLang builds a multimodal checkpoint's towers whatever the launch (0.5.23 has no
/// language-only launch; `models/gemma4_mm.py :: Gemma4ForConditionalGeneration.__init__`
/// builds the vision and audio towers on the first pipeline rank), so the count stands.
pub(super) const WEIGHTS_HEADROOM: Headroom = Headroom {
    declared: 0.05,
    counted: crate::capacity::COUNTED_HEADROOM,
    tower_built: true,
    padding_known: false,
    counted_excess: Some(crate::capacity::COUNTED_EXCESS),
};

/// SGLang keeps rotary tables in fp32 on CUDA and casts them to the model dtype elsewhere
/// (layers/rotary_embedding/base.py :: RotaryEmbedding.__init__, `if not _is_cuda`).
pub(super) fn rope_elem_bytes(m: &Geometry, gpu: &GpuSpec) -> f64 {
    match gpu.vendor {
        Vendor::Nvidia => 4.0,
        Vendor::Amd => m.dtype.bytes().max(2.0),
    }
}

/// Weight bytes per rank that SGLang's own model classes add to the even TP split.
pub(super) fn model_code_weights(
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
        // them. The band's low end assumes they were collected: whether a full collection ran
        // is Python's collector timing, which no launch setting fixes. From 0.5.19
        // `kv_cache_configurator.py :: _profile_available_bytes` calls `gc.collect()` before it
        // reads the free memory, so the copies are gone when the pool is sized.
        if *v >= V0_5_19 {
            return None;
        }
        let x = (parts.layers + parts.attention) as f64 * scale / (tp * pp);
        return Some((
            Estimate::range(x, 0.0, x),
            "decoder layers that Ministral3Model builds twice and discards".into(),
        ));
    }
    None
}

/// `models/deepseek_common/deepseek_weight_loader.py :: post_load_weights`: every MLA layer
/// splits `kv_b_proj` into `w_kc` and `w_vc` with `.contiguous()` copies and keeps `kv_b_proj`
/// for the prefill path, so those bytes count twice at "Load weight end". The copies are bf16
/// (FP8 128×128 blocks are dequantized with `block_quant_dequant` on CUDA, AWQ and int8
/// likewise), except on ROCm, where FP8 blocks are requantized to per-tensor FP8
/// (`block_quant_to_tensor_quant`). Heads split over the attention TP group.
pub(super) fn mla_absorbed_copies(
    m: &Geometry,
    lay: &Layout,
    gpu: &GpuSpec,
) -> Option<(Estimate, String)> {
    let mla = m.mla.as_ref()?;
    let fp8 = m.quantization.as_ref().is_some_and(|q| q.method == "fp8");
    let bytes = if fp8 && gpu.vendor == Vendor::Amd {
        1.0
    } else {
        2.0
    };
    let nope = m.head_dim.saturating_sub(mla.qk_rope_head_dim);
    let heads = (m.num_attention_heads / lay.attn_tp.max(1)).max(1);
    let per_layer = f64::from(mla.kv_lora_rank) * f64::from(heads) * f64::from(nope + m.v_head_dim);
    let x = per_layer * f64::from(stage_layers(m.num_layers, lay.pp)) * bytes;
    Some((
        Estimate::exact(x),
        format!("w_kc/w_vc copies of kv_b_proj at {bytes} B (post_load_weights)"),
    ))
}

/// Free bytes per GPU when SGLang takes its memory baseline: CUDA's total less the CUDA
/// context and the distributed set-up, which the engine measures and kvlint can only estimate,
/// less the ROCm custom all-reduce buffers, which it can read from code.
pub(super) fn baseline(
    gpu: &GpuSpec,
    lay: &Layout,
    args: &EngineArgs,
    notes: &mut Notes,
) -> Estimate {
    let total = gpu.cuda_total_bytes as f64;
    let multi = lay.tp * lay.pp > 1;
    // A group joined by a switch fabric builds its link buffers; a part kvlint cannot place
    // is read as one (the larger baseline).
    let fabric = switch_fabric(gpu) != Some(false);
    let (point, low, high) = match (gpu.vendor, multi && fabric) {
        // Observed, not derived: the device context and, on several GPUs, the communicators,
        // which CUDA and NCCL size in C. Public SGLang logs ("Load weight begin. avail mem"
        // against torch's total), one card or a PCIe group: L40S 0.51, A100 40GB 0.52, RTX 5090
        // 0.68, H100 0.71, B200 0.78, RTX 3090 under WSL2 with a desktop 0.82 GiB at TP 1; A100
        // PCIe TP 2 0.38, L4 TP 4 0.40, RTX 3090 TP 2 0.67, RTX 4090 TP 2 0.71 GiB (custom
        // all-reduce off or failed without P2P, "Init torch distributed" 0.13-0.19 GiB). The
        // range holds them with 0.1 GiB to spare on the pessimistic side (ranks of one launch
        // differ by up to 0.2 GiB, and SGLang keeps the least free rank).
        (Vendor::Nvidia, false) => (0.7, 0.35, 0.95),
        // An NVSwitch group adds the custom all-reduce buffers and NCCL's NVLink channels
        // ("Init torch distributed" 1.25 GiB at H100 TP 8, 1.77-2.01 GiB at H200 TP 8): H100
        // TP 8 1.76, H200 TP 8 2.46 and TP 16 1.71, B200 TP 4 and 8 1.79 GiB; an unnamed
        // DeepSeek-R1 NVFP4 TP 4 log of 175.34 GiB free (sgl-project/sglang PR 9162, read as a
        // B200) 3.01 GiB.
        (Vendor::Nvidia, true) => (1.8, 1.3, 3.1),
        // ROCm, with the all-reduce buffers below taken out: MI355X TP2 5.8 GiB (0.5.10-0.5.12:
        // 0.67 GiB context + 5.17 GiB in "Init torch distributed" beyond the aiter buffers),
        // TP8 7.7-8.1 GiB (same releases), TP8 about 4 GiB (0.5.8, from its pool and fraction),
        // MI300X TP4 1.65 GiB (0.5.4.post1: 190.28 GB free at weight load of 191.98 GiB,
        // github.com/sgl-project/sglang/issues/12419). The point is the middle launch.
        (Vendor::Amd, false) => (1.5, 0.5, 4.0),
        (Vendor::Amd, true) => (5.8, 1.5, 9.0),
    };
    // `--enable-symm-mem` takes nothing here in any modelled release: the NCCL memory pool
    // (`device_communicators/pynccl_allocator.py :: get_nccl_mem_pool`) is created on first use
    // inside `use_symmetric_memory`, at forward/CUDA-graph time, and the 4 GiB that 0.5.9+
    // `server_args.py` sets as `SGLANG_SYMM_MEM_PREALLOC_GB_SIZE` is allocated by
    // `model_runner.py :: prealloc_symmetric_memory_pool` at the end of `initialize`, after
    // `init_memory_pool` (0.5.18+: `cuda_graph_setup.py`, after graph capture), so it comes out
    // of the headroom the fraction leaves, not out of the pool.
    let ar = rocm_allreduce_buffers(gpu, lay, args);
    let fixed = ar.map_or(0.0, |(b, _)| b);
    let mut e = Estimate::range(
        total - point * GIB - fixed,
        total - high * GIB - fixed,
        total - low * GIB - fixed,
    );
    let mut how = format!("CUDA total {:.2} GiB less an estimated {point} GiB (range {low}–{high}) for the device context and the collective communicators", total / GIB);
    if let Some((b, why)) = ar {
        how += &format!(", {:.2} GiB of {why}", b / GIB);
    }
    if let Some((u, why)) = unified_host_available(gpu, e) {
        (e, how) = (u, why);
    }
    notes.estimate("baseline_free_bytes", e, how);
    e
}

/// On a unified-memory part SGLang's baseline is not CUDA's total: sglang 0.5.23
/// `srt/utils/common.py :: get_available_gpu_memory` reads `psutil.virtual_memory().available`
/// (the host's MemAvailable) when `torch.cuda.get_device_properties(...).is_integrated`, and
/// `kv_pool_runtime.py` keeps `pre_model_load_memory × (1 − mem_fraction_static)` of that
/// reading free. What the host holds at launch (OS, desktop, other services, page cache the
/// kernel will not reclaim) is not knowable before launch, so the baseline is a range: its
/// high end an idle host (CUDA's total less the context, as on a discrete card), its point and
/// low end the public DGX Spark readings of 121.69 GiB: 101.3–102.2 GiB free at boot on
/// headless hosts with caches dropped (github.com/MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks
/// issue 47), 98.89 GiB MemAvailable with a raised `vm.min_free_kbytes`
/// (github.com/tonyd2wild/GLM-5.3-Flash-NVFP4-DFlash2-2x-DGX-Spark pull 19).
fn unified_host_available(gpu: &GpuSpec, discrete: Estimate) -> Option<(Estimate, String)> {
    if !crate::gpu::catalog::is_unified(&gpu.name) {
        return None;
    }
    let total = gpu.cuda_total_bytes as f64;
    let (point, low) = (UNIFIED_AVAILABLE.0 * total, UNIFIED_AVAILABLE.1 * total);
    let how = format!(
        "unified memory: the host's MemAvailable at launch, which kvlint cannot see; \
         {:.0}–{:.0} % of the {:.2} GiB total as public DGX Spark launches read it, up to an \
         idle host's {:.2} GiB (measure it on the node: `kvlint probe`)",
        UNIFIED_AVAILABLE.1 * 100.0,
        UNIFIED_AVAILABLE.0 * 100.0,
        total / GIB,
        discrete.high / GIB
    );
    Some((
        Estimate::range(point.min(discrete.point), low, discrete.high),
        how,
    ))
}

/// MemAvailable at launch over the torch total on a unified part: (point, low). 102.2 GiB and
/// 98.89 GiB of 121.69 GiB (see `unified_host_available`), rounded down.
const UNIFIED_AVAILABLE: (f64, f64) = (0.84, 0.80);

/// Bytes per rank of the custom all-reduce buffers a ROCm TP group allocates in "Init torch
/// distributed", before the baseline is taken. `parallel_state.py :: GroupCoordinator.__init__`
/// builds one for the TP group only (the world, attention-TP, MoE and PP groups pass
/// `use_custom_allreduce=False`), unless `--disable-custom-all-reduce`; from 0.5.6
/// `custom_all_reduce.py :: dispatch_custom_allreduce` picks aiter's class on ROCm
/// (`SGLANG_USE_AITER_AR`, default true). aiter `dist/device_communicators/custom_all_reduce.py
/// :: CustomAllreduce.__init__` (world sizes 2, 4, 6, 8) holds 8 MiB of `rank_data` and, at the
/// aiter commit `docker/rocm.Dockerfile` pins: 0.5.10.post1 (a6bb4993, April 2026):
/// `max_size` 1 GiB, an uncached meta buffer of `meta_size() + 2 × max_size` and a 1 GiB
/// input buffer (`_init_ipc`); 0.5.9 (v0.1.11.post1): `max_size` 128 MiB, meta + input +
/// output buffers of that size. Before 0.5.6 SGLang's own `CustomAllreduce` on HIP: meta,
/// buffer and `rank_data` of `_MAX_CAR_SIZE` (16 MiB) each.
fn rocm_allreduce_buffers(
    gpu: &GpuSpec,
    lay: &Layout,
    args: &EngineArgs,
) -> Option<(f64, &'static str)> {
    if gpu.vendor != Vendor::Amd
        || ![2, 4, 6, 8].contains(&lay.tp)
        || args.flag("disable_custom_all_reduce")
    {
        return None;
    }
    // A 0.5.10 release candidate counts as 0.5.10: the v0.5.10rc0 image's "Init torch
    // distributed" takes the same 8.18 GB at TP2 as the 0.5.10.post1–0.5.12 images.
    let v = args.version.release();
    Some(if v >= V0_5_10 {
        (
            3.0 * GIB + 8.0 * MIB,
            "aiter custom all-reduce buffers (2 GiB meta, 1 GiB input)",
        )
    } else if v >= V0_5_6 {
        (
            3.0 * 128.0 * MIB + 8.0 * MIB,
            "aiter custom all-reduce buffers (128 MiB meta, input, output)",
        )
    } else {
        (3.0 * 16.0 * MIB, "custom all-reduce buffers (16 MiB each)")
    })
}

/// Bytes per request of the linear-attention state (`Mamba2CacheParams.mamba_cache_per_req`,
/// Qwen3-Next GDN shapes in `configs/qwen3_next.py`). The SSM state is fp32 unless
/// `--mamba-ssm-dtype` says otherwise (`configs/mamba_utils.py :: mamba2_state_dtype`; the
/// Qwen3.5/3.6 configs state float32 too); the conv state is bf16.
pub(super) fn mamba_per_request(m: &Geometry, tp: u32, args: &EngineArgs) -> f64 {
    if let Some(r) = &m.recurrent {
        return super::mamba::per_request(r, tp, args);
    }
    let Some(lin) = &m.linear else { return 0.0 };
    let tp = f64::from(tp.max(1));
    let conv_dim = f64::from(
        lin.num_value_heads * lin.value_head_dim + 2 * lin.num_key_heads * lin.key_head_dim,
    );
    let conv = conv_dim / tp * f64::from(lin.conv_kernel.saturating_sub(1)) * 2.0;
    let ssm = f64::from(lin.num_value_heads) / tp
        * f64::from(lin.value_head_dim * lin.key_head_dim)
        * match args.text("mamba_ssm_dtype") {
            Some("bfloat16" | "float16") => 2.0,
            _ => 4.0,
        };
    let n_linear = m
        .layers
        .iter()
        .filter(|l| matches!(l, LayerKind::Linear))
        .count() as f64;
    (conv + ssm) * n_linear
}

/// Bytes a hybrid (mamba / linear-attention) model's speculative decoding takes for its
/// intermediate per-draft-token states out of the budget before the KV pool is sized:
/// `mamba_cache_per_req · requests · speculative_num_draft_tokens` (`_handle_max_mamba_cache`).
/// - 0.5.9–0.5.12 (`model_runner_kv_cache_mixin.py`): on every path, requests =
///   max_running_requests / attention-DP.
/// - 0.5.13+ (there, and `mem_cache/kv_cache_configurator.py` from 0.5.16): on the
///   `--disable-radix-cache` path only, requests = its slot count, plus the padding slot from
///   0.5.17; not under ReplaySSM (0.5.17+), nor on a PD prefill server without role switching
///   or unified memory (0.5.22+, `_pd_prefill_skips_mamba_spec_state`). The ratio path solves
///   the states into the mamba share `after_mamba` sets apart; the `--max-mamba-cache-size`
///   path is not counted.
///
/// `Err` names what kvlint needs and does not see.
pub(super) fn spec_mamba_scratch(
    v: &Version,
    args: &EngineArgs,
    per_req: f64,
    attn_dp: u32,
    prefill: bool,
) -> Result<f64, &'static str> {
    let in_path = if *v < V0_5_13 {
        true
    } else {
        // Speculative decoding sets max_running_requests when none is given (48 in 0.5.17
        // arg_groups/speculative_hook.py), so this path is taken without the flag too.
        args.flag("disable_radix_cache")
            && args.int("max_mamba_cache_size").is_none()
            && !(*v >= V0_5_17 && args.flag("enable_linear_replayssm_spec"))
            && !pd_prefill_skips(v, args, prefill)
    };
    if per_req <= 0.0 || super::speculative(args).is_none() || !in_path {
        return Ok(0.0);
    }
    let (Some(mrr), Some(d)) = (
        args.int("max_running_requests"),
        args.int("speculative_num_draft_tokens"),
    ) else {
        return Err("--max-running-requests and --speculative-num-draft-tokens");
    };
    let reqs = (mrr / i64::from(attn_dp.max(1))).max(0) as f64;
    let pad = if *v >= V0_5_17 { 1.0 } else { 0.0 };
    Ok(per_req * (reqs + pad) * d.max(0) as f64)
}

/// 0.5.22+ `_pd_prefill_skips_mamba_spec_state`: a PD prefill server never verifies drafts.
fn pd_prefill_skips(v: &Version, args: &EngineArgs, prefill: bool) -> bool {
    prefill
        && *v >= V0_5_22
        && !args.flag("enable_pd_role_switch")
        && !args.flag("enable_unified_memory")
}

/// KV bytes left after the mamba state is carved out (`_handle_max_mamba_cache`, ratio path).
pub(super) fn after_mamba(rest: f64, per_req: f64, args: &EngineArgs, attn_dp: u32) -> f64 {
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

/// Bytes per rank of the vocabulary tensors an MTP (NEXTN) draft builds for itself and holds
/// while the target pool is sized. The draft model class constructs its own `embed_tokens`
/// (`VocabParallelEmbedding`, vocabulary padded to 64, split over TP; under attention-DP whole
/// on every rank in the Qwen3.5 family, `qwen3_5.py`: `enable_tp=not is_dp_attention_enabled()`,
/// and over the attention-TP group in DeepSeek's, `get_embedding_tp_kwargs`: kvlint takes whole)
/// and `lm_head` (`ParallelLMHead` over the TP group; the embedding itself when the config ties
/// them), both unquantized (`models/qwen3_5_mtp.py`, `deepseek_nextn.py`); the checkpoint's
/// `mtp.*` weights hold neither. `speculative/eagle_worker_v2.py :: init_lm_head` replaces them
/// with the target's tensors, but only from `alloc_memory_pool`, which
/// `managers/scheduler.py :: init_memory_pools` calls after `init_target_memory_pool` has read
/// the free memory (0.5.14–0.5.23, `mod.rs :: draft_before_pool`). The point keeps both tensors; the low end one, for a
/// config that ties them, which kvlint does not read.
pub(super) fn mtp_vocab_copies(m: &Geometry, lay: &Layout, args: &EngineArgs) -> Estimate {
    let rows = (m.vocab_size.div_ceil(64) * 64) as f64;
    let table = rows * m.hidden_size as f64 * model_dtype_bytes(args, m);
    let embed = if lay.attn_dp > 1 {
        table
    } else {
        table / f64::from(lay.tp.max(1))
    };
    let head = table / f64::from(lay.tp.max(1));
    Estimate::range(embed + head, embed, embed + head)
}

/// The CUDA IPC multimodal feature pool the tokenizer process allocates on the base GPU
/// (`multimodal/processors/base_processor.py :: BaseMultimodalProcessor.__init__`,
/// `MmItemMemoryPool`), with that process's own CUDA context. The tokenizer starts while the
/// scheduler loads weights, so the pool is resident when `_profile_available_bytes` reads the
/// free memory after loading (min over ranks: every rank loses it). Which launches get it
/// (`server_args.py :: _handle_multimodal_feature_transport`, 0.5.20+
/// `arg_groups/serving_hook.py :: handle_multimodal_feature_transport`): a multimodal model on
/// CUDA with `--mm-feature-transport cuda_ipc` (0.5.16+) or `cuda_vmm` (0.5.18+) or the deprecated
/// `--keep-mm-feature-on-device` (0.5.16+); unset, 0.5.17 alone resolves single-node,
/// non-disaggregated, non-encoder-only serving to `cuda_ipc` (0.5.16 and 0.5.18+ to `cpu`).
/// Its size is `SGLANG_MM_FEATURE_CACHE_MB`, 1024 MiB by default, which kvlint cannot read.
/// The low end takes only `fraction ×` the pool: allocated before the pre-load baseline, it
/// shrinks the baseline too. The context is observed, not derived: 0.3–0.6 GiB for torch on
/// a Hopper/Blackwell part.
pub(super) fn mm_feature_pool(
    m: &Geometry,
    args: &EngineArgs,
    gpu: &GpuSpec,
    fraction: f64,
) -> Option<(Estimate, String)> {
    let v = args.version.release();
    if !m.multimodal || gpu.vendor != Vendor::Nvidia || v < V0_5_16 {
        return None;
    }
    let transport = args.text("mm_feature_transport");
    let on = match transport {
        Some("cuda_ipc") => true,
        Some("cuda_vmm") => v >= V0_5_18,
        Some(_) => false,
        None if args.flag("keep_mm_feature_on_device") => true,
        None => {
            v == V0_5_17
                && args.int("nnodes").unwrap_or(1) <= 1
                && args.text("disaggregation_mode").unwrap_or("null") == "null"
                && !args.flag("encoder_only")
        }
    };
    if !on {
        return None;
    }
    let pool = 1024.0 * MIB;
    let how = match transport {
        Some(t) => format!("the {t} multimodal feature pool"),
        None if v == V0_5_17 => "the CUDA IPC multimodal feature pool (0.5.17's default)".into(),
        None => "the CUDA IPC multimodal feature pool (--keep-mm-feature-on-device)".into(),
    };
    Some((
        Estimate::range(pool + 0.5 * GIB, pool * fraction, pool + 0.6 * GIB),
        format!(
            "{how}: 1024 MiB (SGLANG_MM_FEATURE_CACHE_MB unread) and the tokenizer's CUDA context on the base GPU"
        ),
    ))
}

/// Weight bytes per rank that the heaviest pipeline stage holds over the even split when the
/// decoder layers differ in size (Nemotron-NAS `layer_bytes`). `distributed/utils.py ::
/// get_pp_indices` gives each stage `n / pp` layers and the last `n % pp` stages one more.
pub(super) fn uneven_stage(m: &Geometry, lay: &Layout) -> Option<(Estimate, String)> {
    let (pp, sizes) = (lay.pp.max(1) as usize, &m.weight_parts.layer_bytes);
    if pp == 1 || sizes.len() < pp {
        return None;
    }
    let (base, extra) = (sizes.len() / pp, sizes.len() % pp);
    let mut start = 0;
    let mut heaviest = 0;
    for stage in 0..pp {
        let len = base + usize::from(stage >= pp - extra);
        heaviest = heaviest.max(sizes[start..start + len].iter().sum::<u64>());
        start += len;
    }
    let even = sizes.iter().sum::<u64>() as f64 / pp as f64;
    let x = (heaviest as f64 - even) / f64::from(lay.tp.max(1));
    (x > 0.0).then(|| {
        (
            Estimate::exact(x),
            format!(
                "the heaviest pipeline stage's decoder layers ({:.2} GiB; their sizes differ) over an even share",
                heaviest as f64 / GIB
            ),
        )
    })
}

#[cfg(test)]
mod unified_tests {
    use super::*;
    use crate::capacity::testing::args;
    use crate::launch::Engine;

    fn baseline_of(name: &str) -> (Estimate, f64) {
        let g = crate::gpu::lookup(name).unwrap().clone();
        let a = args(Engine::Sglang, "0.5.9", &[]);
        let lay = super::super::layout(&a);
        (
            baseline(&g, &lay, &a, &mut Notes::default()),
            g.cuda_total_bytes as f64,
        )
    }

    /// GB10's 121.63 GiB torch total: the pool starts from MemAvailable, 80–84 % of it as public
    /// DGX Spark launches read it (102.2 and 98.89 GiB of 121.69), up to an idle host's total
    /// less the 0.35 GiB low-end context.
    #[test]
    fn a_unified_part_starts_from_the_hosts_available_memory() {
        let (b, total) = baseline_of("GB10");
        assert_eq!(b.point, 0.84 * total);
        assert_eq!(b.low, 0.80 * total);
        assert_eq!(b.high, total - 0.35 * GIB);
        // A discrete card keeps CUDA's total less the context.
        let (h, total) = baseline_of("H100-80GB");
        assert_eq!(h.point, total - 0.7 * GIB);
    }
}

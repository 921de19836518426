//! vLLM V1's KV pool, mirroring `vllm/v1/worker/gpu_worker.py :: Worker.determine_available_memory`,
//! `vllm/v1/worker/utils.py :: request_memory`, `vllm/v1/core/kv_cache_planning.py ::
//! get_kv_cache_configs / _get_kv_cache_groups_uniform_page_size` and
//! `vllm/v1/core/kv_cache_utils.py :: get_max_concurrency_for_kv_cache_config` of 0.33.0, with the
//! 0.11–0.27 differences. Reference: `vllm-trtllm-capacity.md`.

use super::{
    int_or, kv_dtype_bytes, switch_fabric, unresolved, weights_per_rank_with_headroom,
    ContextSource, Estimate, Headroom, Inputs, Notes, Plan, Role, COUNTED_EXCESS, COUNTED_HEADROOM,
    PCIE_ONLY,
};
use crate::engine::{EngineArgs, SettingValue};
use crate::finding::Finding;
use crate::gpu::GpuSpec;
use crate::launch::Engine;
use crate::model::{Geometry, LayerKind};
use crate::units::GIB;
use crate::version::Version;
use groups::{blocks_per_request, grouping, groups, layer_bytes, max_len, Shape};

mod dsv4;
mod forward;
mod groups;
mod hybrid;
mod mamba;
mod moe;
mod multimodal;
#[cfg(test)]
mod tests;

const V0_16: Version = Version::new(0, 16, 0);
const V0_17: Version = Version::new(0, 17, 0);
const V0_18: Version = Version::new(0, 18, 0);
const V0_20: Version = Version::new(0, 20, 0);
const V0_20_1: Version = Version::new(0, 20, 1);
const V0_24: Version = Version::new(0, 24, 0);
const V0_26: Version = Version::new(0, 26, 0);
const V0_33: Version = Version::new(0, 33, 0);
/// Every release above (0.33 also changes model/context.rs and engine/startup.rs): the math is
/// the same between two of them, so a launch whose release is unknown is planned once per
/// stretch (capacity::releases). A new threshold belongs here too.
pub const MATH_CHANGES: &[Version] = &[V0_16, V0_17, V0_18, V0_20, V0_20_1, V0_33];

pub(crate) const NEEDED: &[&str] = &[
    "model",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "max_model_len",
    "gpu_memory_utilization",
    "kv_cache_dtype",
    "block_size",
    "kv_cache_memory_bytes",
    "max_num_batched_tokens",
    "max_num_seqs",
    "num_gpu_blocks_override",
    "mm_ipc_gpu_memory_gb",
    "mm_encoder_tp_mode",
    "env:VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
];

/// Role from `--kv-transfer-config {"kv_role": ...}`.
fn role(args: &EngineArgs) -> Role {
    let json = match args.get("kv_transfer_config").map(|s| &s.value) {
        Some(SettingValue::Text(t)) => serde_json::from_str::<serde_json::Value>(t).ok(),
        _ => None,
    };
    match json
        .as_ref()
        .and_then(|j| j.get("kv_role"))
        .and_then(|r| r.as_str())
    {
        Some("kv_producer") => Role::Prefill,
        Some("kv_consumer") => Role::Decode,
        _ => Role::Unified,
    }
}

/// `--gpu-memory-utilization`: `CacheConfig.gpu_memory_utilization` (`vllm/config/cache.py`,
/// `Field(default=...)`, which `EngineArgs.gpu_memory_utilization` in `engine/arg_utils.py` copies)
/// is 0.9 in the 0.16 to 0.19 wheels (read in 0.17.0 gb31e9326a and 0.17.1 g95c0f928c at line 49,
/// 0.18.0 gbcf2be961 and 0.18.1 ga26e8dc7f at line 41) and 0.92 from 0.20 (0.20.0 gb8160878f and
/// 0.20.2 gbc150f502 at line 66; 0.21 and 0.28 too).
fn utilization(args: &EngineArgs, notes: &mut Notes) -> Estimate {
    if let Some(u) = args.float("gpu_memory_utilization") {
        notes.exact("gpu_memory_utilization", u, "--gpu-memory-utilization");
        return Estimate::exact(u);
    }
    let e = Estimate::exact(if args.version >= V0_20 { 0.92 } else { 0.9 });
    notes.estimate(
        "gpu_memory_utilization",
        e,
        "engine default for this version (CacheConfig.gpu_memory_utilization)",
    );
    e
}

/// On a unified-memory part vLLM still budgets `total × gpu_memory_utilization` (torch's total,
/// the system memory), but 0.24.0 `utils/mem_utils.py :: MemorySnapshot.measure` takes the free
/// figure from `psutil.virtual_memory().available` when `is_integrated_gpu`, and
/// `v1/worker/utils.py :: request_memory` refuses to start when that is below the request. The
/// host's MemAvailable at launch is not knowable before it; public DGX Spark launches read
/// 98.89–102.2 GiB of 121.69 GiB (see sglang/budget.rs :: unified_host_available), started at
/// 0.85 and were refused at 0.87 (MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks issue 47) and at
/// the 0.92 default (vllm-project/recipes pull 632), so a fraction above 0.80 may not start.
/// Recorded, with that reading, in the plan.
fn unified_startup_check(gpu: &GpuSpec, util: f64, notes: &mut Notes) {
    if !crate::gpu::catalog::is_unified(&gpu.name) {
        return;
    }
    let total = gpu.cuda_total_bytes as f64;
    let need = (total * util).ceil();
    let risk = if util > 0.80 {
        "above the 80 % that public DGX Spark hosts had available at launch (refused there at 0.87 and 0.92): the start may be refused"
    } else {
        "within what public DGX Spark hosts had available at launch (80 % or more)"
    };
    notes.exact(
        "unified_memory_available_needed_bytes",
        need,
        format!(
            "unified memory: vLLM starts only if the host's MemAvailable is at least \
             {:.2} GiB ({util} of {:.2} GiB), {risk}",
            need / GIB,
            total / GIB
        ),
    );
}

/// On a unified part the profile's `non_torch_increase` is the growth of `total − MemAvailable −
/// torch reserved` (0.24.0 `MemorySnapshot.measure`, `psutil` on integrated GPUs), so host
/// memory that anything takes during the profile run (torch.compile and Triton JIT work in the
/// process, page cache of the checkpoint being read) comes out of the KV budget. It is not
/// knowable before launch. Fitted to data, not derived: the point is the median excess of a
/// public DGX Spark log's non-KV memory over kvlint's discrete-card estimate, over the six
/// vLLM GB10 records of `fixtures/validation/vllm.jsonl` (1.45, 2.23, 3.54, 4.10, 7.04 and
/// 8.59 GiB; those records are marked tuned-on); the low end allows the largest public reading:
/// 31.6 GiB (github.com/eugr/spark-vllm-docker pull 286, the KV cache at 9.5 GiB instead of 40+).
fn unified_host_growth(gpu: &GpuSpec, other: Estimate, notes: &mut Notes) -> Estimate {
    if !crate::gpu::catalog::is_unified(&gpu.name) {
        return other;
    }
    let growth = Estimate::range(
        UNIFIED_GROWTH_MEDIAN_GIB * GIB,
        0.0,
        UNIFIED_GROWTH_MOST_GIB * GIB,
    );
    notes.estimate(
        "unified_host_growth_bytes",
        growth,
        "unified memory: host memory taken during the profile run counts as non-torch memory \
         (compile work, page cache); kvlint cannot see it: the point is the median of six public \
         DGX Spark logs, the band's low end allows the largest public reading",
    );
    Estimate::range(
        other.point + growth.point,
        other.low,
        other.high + growth.high,
    )
}

/// The median and the largest host-memory growth during vLLM's profile run publicly read on a
/// unified part, beyond kvlint's estimate for a discrete card.
const UNIFIED_GROWTH_MEDIAN_GIB: f64 = 3.82;
const UNIFIED_GROWTH_MOST_GIB: f64 = 31.6;

/// Headroom over a 4-bit checkpoint whose config declares its layout but whose loader converts
/// it (NVFP4 scale swizzling, compressed-tensors and MXFP4 MoE repacks). On CUDA "Model loading
/// took" is the allocator's peak of live tensors after emptying its cache
/// (`platforms/cuda.py :: CudaPlatform.get_current_memory_usage`, 0.13.0 and 0.23.0), so what
/// a conversion frees does not count: the logged weights of seven such NVIDIA launches run
/// +0.2 % to +1.7 % over kvlint's estimate (Kimi-K2.5 NVFP4 B200, Gemma-4-26B NVFP4 RTX 5090,
/// Qwen3.6 NVFP4 and Nemotron-3-Super NVFP4 GB10; 0.19–0.23), gpt-oss-20b MXFP4 +0.3 % on five
/// cards (0.12): the class of a counted checkpoint (0–2.4 % over), hence its +3 %
/// (`capacity::COUNTED_HEADROOM`). ROCm measures the device's used memory without
/// emptying the cache (`platforms/rocm.py :: RocmPlatform.get_current_memory_usage`: `total −
/// free` from `mem_get_info`), so blocks a conversion freed count as weights (gpt-oss-20b MXFP4
/// on one R9700: +8.1 %, 0.13): +10 %. Fitted to data; the accuracy report lists it.
fn declared_headroom(gpu: &GpuSpec) -> f64 {
    match gpu.vendor {
        crate::gpu::Vendor::Amd => 0.10,
        crate::gpu::Vendor::Nvidia => COUNTED_HEADROOM,
    }
}

/// `get_batch_defaults` for the API server: by GPU memory and whether it is an A100. The memory
/// is NVML's (0.24.0 `platforms/cuda.py :: NvmlCudaPlatform.get_device_total_memory`); where NVML
/// cannot report it, the `except` branch of `arg_utils.py :: get_batch_defaults` reads 0 bytes
/// and takes the small defaults.
fn batch_defaults(gpu: &GpuSpec) -> (i64, i64) {
    if NVML_MEMORY_UNSUPPORTED.contains(&gpu.name.as_str()) {
        return (2048, 256);
    }
    let gib = gpu.cuda_total_bytes as f64 / GIB;
    let a100 = gpu.name.starts_with("A100");
    if gib >= 160.0 {
        (16384, 1024)
    } else if gib >= 70.0 && !a100 {
        (8192, 1024)
    } else {
        (2048, 256)
    }
}

/// Parts whose `nvmlDeviceGetMemoryInfo` returns NOT_SUPPORTED: GB10 (DGX Spark), read on
/// driver 580.173.02 (github.com/XuehaiPan/nvitop pull 208) and 595.58.03
/// (github.com/kubernetes-sigs/dra-driver-nvidia-gpu issue 1073). A public DGX Spark startup log
/// of vLLM 0.19.2rc1 compiles for (1, 2048) batched tokens with no flag setting them
/// (djangodevreng/dgx-spark-benchmarks, qwen-3.6-35b-a3b/bf16/_bootlog.txt).
const NVML_MEMORY_UNSUPPORTED: &[&str] = &["GB10"];

/// KV element type after `resolve_kv_cache_dtype_string` / `kv_cache_dtype_str_to_dtype`.
fn kv_dtype(args: &EngineArgs, m: &Geometry) -> (String, f64) {
    let flag = args.text("kv_cache_dtype").unwrap_or("auto");
    if flag != "auto" {
        return (flag.to_string(), kv_dtype_bytes(flag).unwrap_or(2.0));
    }
    if m.dsa.is_some() && m.mla.is_some() {
        return ("fp8_ds_mla".into(), 1.0); // "Some models (namely DeepSeekV3.2) default to fp8"
    }
    let modelopt_fp8 = m
        .quantization
        .as_ref()
        .is_some_and(|q| q.method.starts_with("modelopt") && q.kv_cache_fp8);
    if modelopt_fp8 {
        return ("fp8_e4m3".into(), 1.0);
    }
    // cache.py: "auto" KV follows the model dtype (config/model.py::_get_and_verify_dtype).
    let name = match args.text("dtype") {
        Some("float32" | "float") => return ("float32".into(), 4.0),
        Some("float16" | "half") => "float16",
        _ => "bfloat16",
    };
    (name.into(), 2.0)
}

/// Default block size: 16, unless the attention backend only takes larger pages
/// (`Platform.update_block_size_for_backend`, 0.11 `platforms/cuda.py`).
fn block_size(args: &EngineArgs, m: &Geometry, gpu: &GpuSpec) -> u32 {
    if let Some(b) = args.int("block_size").filter(|b| *b > 0) {
        return u32::try_from(b).unwrap_or(u32::MAX); // plan() refused larger ones
    }
    let sparse = m.dsa.is_some() && m.mla.is_some();
    match (m.mla.is_some(), gpu.compute_capability.0) {
        (true, _) if sparse => 64,
        (true, cc) if cc >= 10 => 128,           // CUTLASS_MLA
        (true, _) if args.version < V0_16 => 64, // FlashMLA was the Hopper default in 0.11
        _ => 16,
    }
}

/// NCCL buffers of the TP group that the profile run counts. `gpu_worker.py :: init_device`
/// takes the memory snapshot after `init_worker_distributed_environment`, and NCCL connects
/// lazily (`NCCL_RUNTIME_CONNECT`, default on since NCCL 2.22), so the buffers of the first
/// large collectives land in the non-torch increase (`utils/mem_utils.py :: memory_profiling`).
/// Measured: about 1.8 GiB per rank at TP 2 and 4 on H100 SXM (NVSwitch, where NCCL sets up
/// NVLink SHARP); none visible on PCIe-only L4 at TP 2 and 4 (0.28), at most 0.47 GiB beyond the
/// estimate on RTX PRO 6000 at TP 4 (0.27). Without a switch fabric NCCL keeps only its P2P/SHM
/// channel buffers, per channel and peer its Simple (`NCCL_BUFFSIZE`, 4 MiB), LL128 (about
/// 4.6 MiB) and LL buffers, in each direction: tens to a few hundred MiB over the channels a
/// PCIe ring and tree open. Such a group keeps up to 0.6 GiB on the pessimistic side; AMD
/// Instinct's xGMI and parts kvlint cannot place keep 1.8 GiB.
fn tp_comm(gpu: &GpuSpec, tp: u32) -> Estimate {
    if tp <= 1 {
        return Estimate::exact(0.0);
    }
    if switch_fabric(gpu) == Some(false) {
        Estimate::range(0.0, 0.0, 0.6 * GIB)
    } else {
        Estimate::exact(1.8 * GIB)
    }
}

/// Decoder layers per pipeline stage: `get_pp_indices` (`distributed/utils.py`) gives each
/// stage `n / pp` and the remainder to the middle stages, one each from the second-to-last.
fn pp_split(n: u32, pp: u32) -> Vec<u32> {
    let pp = pp.max(1);
    let mut layers = vec![n / pp; pp as usize];
    for i in 2..(n % pp + 2) as usize {
        layers[pp as usize - i] += 1;
    }
    layers
}

/// The most layers of one kind that any pipeline stage holds.
fn busiest_stage(m: &Geometry, pp: u32, pred: fn(&LayerKind) -> bool) -> u32 {
    let mut start = 0;
    let mut most = 0;
    for n in pp_split(m.num_layers, pp) {
        let end = (start + n as usize).min(m.layers.len());
        most = most.max(m.layers[start..end].iter().filter(|l| pred(l)).count() as u32);
        start = end;
    }
    most
}

/// Under data parallelism a MoE's routed experts span every DP rank of the TP group: vLLM's
/// `FusedMoE` flattens TP across DP (`model_executor/layers/fused_moe/config.py ::
/// FusedMoEParallelConfig.make`, `flatten_tp_across_dp`, 0.11.0 through 0.33.0), sharding them
/// over DP × TP devices, or giving each device DP × TP-th of the experts under
/// `--enable-expert-parallel`. The even split counted `1 / TP` of them per rank; this takes the
/// share the other DP ranks hold back out. Attention, dense MLPs and the embedding stay per DP
/// replica.
fn dp_expert_share(
    args: &EngineArgs,
    m: &Geometry,
    tp: u32,
    pp: u32,
    dp: u32,
) -> Option<(Estimate, String)> {
    let routed = m.weight_parts.routed_experts as f64;
    if dp <= 1 || routed == 0.0 {
        return None;
    }
    let bytes = routed * super::part_scale(m, args.text("quantization"));
    let less = bytes / f64::from(tp * pp.max(1)) * (1.0 - 1.0 / f64::from(dp));
    let how = if args.flag("enable_expert_parallel") {
        "expert parallelism"
    } else {
        "tensor parallelism flattened across DP"
    };
    Some((
        Estimate::exact(-less),
        format!(
            "the routed experts span DP {dp} × TP {tp} ranks ({how}; FusedMoEParallelConfig.make), so each rank holds 1/{} of them",
            dp * tp
        ),
    ))
}

/// Extra weight bytes on the heaviest pipeline stage over an even split: `get_pp_indices`
/// (`distributed/utils.py`) gives the remainder layers to the middle stages, the first stage
/// holds the embedding and the last the head and final norm; the pool is sized by the stage
/// with the fewest free blocks.
fn pp_stage_extra(m: &Geometry, tp: u32, pp: u32) -> f64 {
    let (pp, w) = (pp.max(1), m.weight_bytes as f64);
    if pp == 1 || w <= 0.0 || m.num_layers == 0 {
        return 0.0;
    }
    let parts = &m.weight_parts;
    let per_layer = parts.layers as f64 / f64::from(m.num_layers);
    let rest = (w - parts.layers as f64 - parts.embedding as f64).max(0.0);
    let mut start = 0;
    let heaviest = pp_split(m.num_layers, pp)
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let ends = if i == 0 { parts.embedding as f64 } else { 0.0 }
                + if i + 1 == pp as usize { rest } else { 0.0 };
            let end = (start + *n as usize).min(parts.layer_bytes.len());
            // Layers of their own sizes (Nemotron-NAS) are summed stage by stage.
            let layers = match parts.layer_bytes.get(start..end) {
                Some(own) if !own.is_empty() => own.iter().sum::<u64>() as f64,
                _ => f64::from(*n) * per_layer,
            };
            start += *n as usize;
            ends + layers
        })
        .fold(0.0, f64::max);
    ((heaviest - w / f64::from(pp)) / f64::from(tp.max(1))).max(0.0)
}

fn pp_stage(m: &Geometry, tp: u32, pp: u32) -> Option<(Estimate, String)> {
    let extra = pp_stage_extra(m, tp, pp);
    (extra > 0.0).then(|| {
        (
            Estimate::exact(extra),
            "the heaviest pipeline stage (get_pp_indices) over an even split".to_string(),
        )
    })
}

/// What the 0.20+ profile adds for CUDA graphs: `gpu_worker.py :: determine_available_memory`
/// subtracts `profile_cudagraph_memory` (`gpu_model_runner.py`: the first capture of each mode
/// plus the second capture's increase times the remaining graphs) unless
/// `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0`. The engine measures it, so its size is not in
/// the code; the 0.27/0.28 logs of three dense models at TP 1, 2 and 4 and PP 2 on L4 and L40S
/// show the non-KV memory shrinking with TP and a PP 2 stage matching TP 1 (a stage runs its
/// layers at full width), so kvlint takes it per channel of the rank's attention width
/// (`num_attention_heads × head_dim / tp`): about 0.2 MiB per channel, 1 GiB at TP 1 for a
/// 5120-wide model, half at TP 2. The same launch measured 9.10 and 10.33 GiB of KV cache in two
/// runs (capstone L4 records), so the optimistic side keeps none of it. Eager launches capture
/// nothing (`cudagraph_mode` NONE) but keep it on the pessimistic side.
/// Fitted, and not to graphs alone: those L4/L40S launches were dense models, which 0.28 runs on
/// the V2 model runner by default (`config/vllm.py :: _is_default_v2_model_runner_model`: not
/// MoE, not hybrid; 0.23 also not quantized), whose `profile_cudagraph_memory` returns 0 there
/// (`v1/worker/gpu/model_runner.py`, 0.23.0–0.28.0), while its profile peak runs above the V1
/// runner's (Llama-3.1-8B on an A40, 0.26: 1.01 GiB of peak activation, no graph memory taken
/// from the budget). The term stands for that gap on such launches and for the graphs on V1 ones.
fn graph_profile(args: &EngineArgs, m: &Geometry, gpu: &GpuSpec, tp: u32) -> Estimate {
    if !graphs_estimated(args, gpu) {
        return Estimate::exact(0.0);
    }
    let width = f64::from(m.num_attention_heads) * f64::from(m.head_dim) / f64::from(tp.max(1));
    let est = width * 0.2 * 1024.0 * 1024.0;
    if args.flag("enforce_eager") {
        Estimate::range(0.0, 0.0, est)
    } else {
        Estimate::range(est, 0.0, est)
    }
}

/// Whether the profile subtracts its CUDA-graph estimate: `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`
/// (`envs.py`, read as `bool(int(...))`) exists from 0.18.0 with default 0 and defaults to 1 from
/// 0.20.0 (read in the 0.16.0–0.20.0 wheels; the 0.20 logs call it "default since v0.21.0");
/// `v1/worker/gpu_worker.py :: determine_available_memory` adds the estimate to the peak only
/// when it is set. A value that is not an integer stops the engine; kvlint keeps the default.
/// On ROCm the estimate is not taken before 0.26: that function profiles graphs only under
/// `not current_platform.is_rocm()` in 0.20.0 and `current_platform.is_cuda()` in 0.21.0
/// through 0.25.0 ("graph pool handles and mem_get_info behave differently"), and under
/// `is_cuda_alike()` from 0.26.0 (read in each of those wheels).
fn graphs_estimated(args: &EngineArgs, gpu: &GpuSpec) -> bool {
    if gpu.vendor == crate::gpu::Vendor::Amd && args.version < V0_26 {
        return false;
    }
    let env = args
        .text("env:VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")
        .and_then(|v| v.trim().parse::<i64>().ok());
    match env {
        Some(n) if args.version >= V0_18 => n != 0,
        _ => args.version >= V0_20,
    }
}

/// Whether a multimodal model's tower is built: `--language-model-only` sets every modality's
/// limit to 0 (`config/multimodal.py :: get_limit_per_prompt`) and `models/interfaces.py ::
/// _mark_tower_model` then builds none; a `--limit-mm-per-prompt` may do the same, and kvlint
/// reads it as perhaps skipping the tower.
fn builds_tower(args: &EngineArgs) -> bool {
    !args.flag("language_model_only") && args.get("limit_mm_per_prompt").is_none()
}

/// How far the profile's non-KV memory, NCCL buffers aside, may fall under and run over kvlint's
/// estimate of it, as factors (the high end adds 0.3 GiB besides). Fitted to data, not derived:
/// the engine measures this memory (`utils/mem_utils.py :: memory_profiling`: the torch peak of
/// the dummy run, the non-torch increase, 0.21+ the CUDA graphs) and its size depends on kernels
/// and library buffers kvlint does not model. Over the public logs that state weights and KV
/// size (non-KV = utilization × total − weights − KV), it is 0.93–1.07× the estimate on H100 SXM
/// at TP 1, 2 and 4 (0.16–0.19, 17 logs), 0.88–1.30× on one A100 PCIe, L40S or RTX 6000 Ada
/// (0.19–0.28), and 1.18–1.23× at TP 4 on RTX PRO 6000 (0.27), where the point counts no NCCL
/// buffers (`tp_comm`): 0.8–1.3×. One PCIe-only card (`PCIE_ONLY`) keeps 0.6–2.0×: a low-confidence L4 log (0.28,
/// possibly another machine) implies about 2×, its replica under 0.6×. Under a pipeline the
/// binding stage need not be the one that runs the sampler (0.55× at PP 2 on H100): 0.6–1.6×.
/// The 2× held those PCIe pools before through +10 % on their weights, whose logs run at most
/// 2.4 % over the count.
fn non_kv_spread(gpu: &GpuSpec, tp: u32, pp: u32) -> (f64, f64) {
    if pp > 1 {
        (0.6, 1.6)
    } else if tp <= 1 && PCIE_ONLY.contains(&gpu.name.as_str()) {
        (0.6, 2.0)
    } else {
        (0.8, 1.3)
    }
}

/// Memory the profile run takes besides weights: activation peak, sampler buffers, NCCL and
/// CUDA-graph pools. vLLM measures these; kvlint estimates them from the shapes the dummy run
/// uses (`max_num_batched_tokens` tokens through the model, `max_num_seqs` rows of logits).
fn non_kv(
    args: &EngineArgs,
    m: &Geometry,
    gpu: &GpuSpec,
    (tp, pp): (u32, u32),
    notes: &mut Notes,
) -> Estimate {
    let (tokens_default, seqs_default) = batch_defaults(gpu);
    let tokens = args.int("max_num_batched_tokens").unwrap_or(tokens_default) as f64;
    let seqs = args.int("max_num_seqs").unwrap_or(seqs_default) as f64;
    // Forward activations: a handful of hidden-sized bf16 tensors per token.
    let act = tokens * m.hidden_size as f64 * 12.0;
    // Sampler dummy run: fp32 logits, probabilities and sort buffers over the vocabulary.
    let per_entry = if args.version < V0_17 {
        13.6 * 2.8
    } else {
        13.6
    };
    let sampler = seqs * m.vocab_size as f64 * per_entry;
    let comm = tp_comm(gpu, tp);
    // Multimodal models also run the vision encoder on its token budget in the profile run;
    // `--language-model-only` sets every modality's limit to 0 (`config/multimodal.py ::
    // get_limit_per_prompt`), so the tower is never built (`models/interfaces.py ::
    // _mark_tower_model`) and nothing is profiled (its weights: `multimodal::skipped_tower`).
    let encoder = if m.multimodal && !args.flag("language_model_only") {
        1.0 * GIB
    } else {
        0.0
    };
    let (moe, moe_how) = moe::workspace(args, m, tokens, tp);
    let graphs = graph_profile(args, m, gpu, tp);
    let base = (act + sampler + moe + encoder).max(forward::mlp_floor(m, tokens, tp)) + 0.1 * GIB;
    let (under, over) = non_kv_spread(gpu, tp, pp);
    // The factors spread what kvlint estimates from shapes; the NCCL buffers are a measured size
    // whose own range (none to 1.8 GiB on PCIe) stays as it is.
    let e = Estimate::range(
        base + comm.point + graphs.point,
        base * under + comm.low + graphs.low,
        (base + graphs.high) * over + comm.high + 0.3 * GIB,
    );
    notes.estimate(
        "non_kv_bytes",
        e,
        format!(
            "estimated profile-run peak: activations for {tokens} batched tokens, sampler over {seqs} sequences × {} vocabulary, {}{}{moe_how}{}",
            m.vocab_size,
            if comm.high > 0.0 { "NCCL buffers of the TP group, " } else { "" },
            if encoder > 0.0 { "vision encoder, " } else { "" },
            if graphs.point > 0.0 { "CUDA-graph estimate" } else { "no CUDA graphs counted" },
        ),
    );
    e
}

/// The target's part of the KV budget when a drafter's attention layers share it (V1 sizes one
/// pool for every layer in the KV cache spec): the budget in proportion to bytes per token.
fn draft_share(
    kv: Estimate,
    target: f64,
    draft: Option<&super::adapters::Draft>,
    notes: &mut Notes,
) -> Estimate {
    let Some(d) = draft.filter(|d| d.kv_per_token > 0.0 && target > 0.0) else {
        return kv;
    };
    notes.exact("draft_kv_bytes_per_token", d.kv_per_token, d.how.clone());
    let share = target / (target + d.kv_per_token);
    Estimate {
        point: kv.point * share,
        low: kv.low * share,
        high: kv.high * share,
    }
}

pub fn plan(inp: &Inputs) -> Result<Plan, Vec<Finding>> {
    let args = inp.args;
    let missing = unresolved(args, NEEDED);
    if !missing.is_empty() {
        return Err(missing);
    }
    let (m, gpu) = (inp.model, inp.gpu);
    let v = &args.version;
    super::check_ints(
        args,
        &[
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "data_parallel_size",
        ],
        &["decode_context_parallel_size", "block_size"],
    )?;
    let mut notes = Notes::default();
    let tp = int_or(args, "tensor_parallel_size", 1);
    let pp = int_or(args, "pipeline_parallel_size", 1);
    let dp = int_or(args, "data_parallel_size", 1);
    let dcp = int_or(args, "decode_context_parallel_size", 1);

    let (kv_name, kvb) = kv_dtype(args, m);
    // DeepSeek-V4 lays its caches out in packed groups of its own (capacity/vllm/dsv4.rs).
    let dsv4 = match &m.compressed {
        Some(c) => Some(dsv4::layout(args, m, c, gpu, inp.at, &mut notes)?),
        None => None,
    };
    let draft = super::adapters::vllm_draft(args, m, tp, kvb)?;
    // On a Gated-DeltaNet or Nemotron-H hybrid the MTP layers' KV is laid out in the groups
    // below, so it takes no proportional share of the budget as well.
    let mtp_layers = hybrid::mtp_group_layers(args, m);
    let draft = draft.map(|d| match mtp_layers {
        0 => d,
        _ => super::adapters::Draft {
            kv_per_token: 0.0,
            ..d
        },
    });
    if mtp_layers > 0 {
        notes.exact(
            "mtp_attention_layers",
            f64::from(mtp_layers),
            "the drafter's MTP attention layers join the full-attention KV cache group \
             (get_kv_cache_spec, _get_kv_cache_groups_uniform_page_size)",
        );
    }
    let state = hybrid::state_page(
        args,
        m,
        tp,
        super::model_dtype_bytes(args, m),
        hybrid::spec_tokens(args, m),
    );
    let bs = hybrid::attention_block(
        block_size(args, m, gpu),
        m.mla.is_some(),
        state,
        layer_bytes(m, tp, dcp, &kv_name, kvb),
        &mut notes,
    );
    // The hybrid allocator is off when a connector without HMA support is configured (always in 0.11).
    let hma = !args.flag("disable_hybrid_kv_cache_manager")
        && (args.get("kv_transfer_config").is_none() || *v >= V0_16);
    let shape = Shape {
        tp,
        pp,
        dcp,
        kv: &kv_name,
        kvb,
        bs,
        hma,
        version: v,
        mtp_layers,
    };
    let groups = groups(m, &shape);
    let g = grouping(&groups);
    let per_token: f64 = groups
        .iter()
        .map(|x| x.page / f64::from(bs * x.mult) * f64::from(x.layers))
        .sum();
    let per_token = dsv4
        .as_ref()
        .map_or(per_token, dsv4::Layout::full_bytes_per_token);
    let bs = dsv4.as_ref().map_or(bs, dsv4::Layout::block);
    let how = match &dsv4 {
        Some(_) => "DeepSeek-V4: the full group's compressed latents and indexer keys per token; \
                    the sliding window and compressor states are held per request"
            .to_string(),
        None => format!(
            "{} layer group(s) of {} layers, block {bs}",
            g.kinds.len(),
            g.group_size
        ),
    };
    notes.exact("kv_bytes_per_token", per_token, how);

    let util = utilization(args, &mut notes);
    let total = gpu.cuda_total_bytes as f64;
    unified_startup_check(gpu, util.high, &mut notes);
    let padding = moe::mxfp4_padding(args, m, gpu, (tp, pp));
    let padding_known = padding.is_some();
    let w = weights_per_rank_with_headroom(
        m,
        args.text("quantization"),
        (tp, pp),
        // rotary_embedding/base.py :: RotaryEmbedding.__init__ casts the table to the model dtype.
        super::rope_tables(m, super::model_dtype_bytes(args, m))
            .into_iter()
            .chain(pp_stage(m, tp, pp))
            .chain(super::dtype_weights(
                args,
                m,
                args.text("quantization"),
                tp * pp,
            ))
            .chain(super::adapters::lora(args, m, tp))
            .chain(dp_expert_share(args, m, tp, pp, dp))
            .chain(padding)
            .chain(multimodal::encoder_replicas(args, m, tp))
            .chain(multimodal::skipped_tower(args, m, tp))
            .chain(
                draft
                    .as_ref()
                    .map(|d| (Estimate::rel(d.weights, 0.1), d.how.clone())),
            ),
        &mut notes,
        Headroom {
            declared: declared_headroom(gpu),
            counted: COUNTED_HEADROOM,
            tower_built: builds_tower(args),
            padding_known,
            counted_excess: Some(COUNTED_EXCESS),
        },
    );
    let other = non_kv(args, m, gpu, (tp, pp), &mut notes);
    let other = unified_host_growth(gpu, other, &mut notes);
    let fixed = args.int("kv_cache_memory_bytes").map(|b| b as f64);
    let mm = multimodal::reserved(args, m, &mut notes);
    let budget = |u: f64, w: f64, o: f64| fixed.unwrap_or_else(|| (total * u).ceil() - w - o) - mm;
    let kv = Estimate::range(
        budget(util.point, w.point, other.point),
        budget(util.low, w.high, other.high),
        budget(util.high, w.low, other.low),
    );
    let kv = draft_share(kv, per_token, draft.as_ref(), &mut notes);
    let block_count = |kv: f64| match args.int("num_gpu_blocks_override") {
        Some(n) => n.max(0) as u64,
        None if kv > 0.0 => match &dsv4 {
            Some(d) => d.num_blocks(kv),
            None => (kv / g.bytes_per_block).floor() as u64,
        },
        None => 0,
    };

    let model_max = crate::model::derived_max_model_len_vllm(m, v);
    let mml_setting = args.get("max_model_len");
    let (tokens_default, _) = batch_defaults(gpu);
    let batched = args
        .int("max_num_batched_tokens")
        .unwrap_or(tokens_default)
        .max(1) as u64;
    // Tokens a sliding-window or chunked-local group holds beyond its window
    // (`kv_cache_interface.py :: SlidingWindowSpec.max_admission_blocks_per_request`): from
    // 0.26.0 `VllmConfig.max_in_flight_tokens`, `max_concurrent_batches` (2 under async
    // scheduling) × `max_num_batched_tokens`; up to 0.25.0 (read in the 0.17.0, 0.19.0, 0.20.2,
    // 0.24.0 and 0.25.0 wheels) `max_num_batched_tokens` alone.
    let in_flight = if *v >= V0_26 { 2 * batched } else { batched };
    let prefix = !matches!(
        args.get("enable_prefix_caching").map(|s| &s.value),
        Some(SettingValue::Flag(false))
    );
    let fit = |kv: f64| match &dsv4 {
        Some(d) => d.fit(block_count(kv), kv, batched),
        None => max_len(&g, block_count(kv), bs, in_flight, v, prefix) * u64::from(dcp),
    };
    let (context_length, context_source) = match mml_setting.map(|s| (&s.value, s.loc())) {
        Some((SettingValue::Int(n), loc)) if *n > 0 => (*n as u64, ContextSource::Flag(loc)),
        Some((SettingValue::Auto | SettingValue::Int(_), loc)) => {
            (fit(kv.low).min(model_max), ContextSource::Auto(loc))
        }
        _ => (model_max, ContextSource::Model),
    };

    // "GPU KV cache size": concurrency × max_model_len from 0.20.1
    // (`kv_cache_utils.py :: _report_kv_cache_config`, read in the 0.20.1 and 0.20.2 wheels); up
    // to 0.20.0 the same function logs num_blocks // groups × min block size (0.19.0, 0.20.0).
    let logged = |kv: f64| {
        let blocks = block_count(kv);
        if let Some(d) = &dsv4 {
            d.logged(blocks, context_length.max(1), batched)
        } else if *v >= V0_20_1 {
            let per_req =
                blocks_per_request(&g, context_length.max(1), bs, in_flight, v, prefix).max(1);
            (blocks as f64 / per_req as f64 * context_length as f64) as u64
        } else {
            blocks
                / g.kinds
                    .iter()
                    .map(|(_, n, _)| u64::from(*n))
                    .sum::<u64>()
                    .max(1)
                * u64::from(bs)
                * u64::from(dcp)
        }
    };

    let util_loc = args.get("gpu_memory_utilization").map(|s| s.loc());
    let needed_fraction = {
        let (need_blocks, block_bytes) = match &dsv4 {
            Some(d) => (
                d.blocks_for(context_length, batched),
                d.bytes_per_block as f64,
            ),
            None => (
                blocks_per_request(&g, context_length, bs, in_flight, v, prefix),
                g.bytes_per_block,
            ),
        };
        let need = (need_blocks + 1) as f64 * block_bytes + w.high + other.high;
        let f = need / total;
        (fixed.is_none() && f < 0.99).then_some((f * 1000.0).ceil() / 1000.0)
    };

    Ok(Plan {
        engine: Engine::Vllm,
        engine_version: v.to_string(),
        role: role(args),
        model: m.id.clone(),
        gpu: gpu.name.clone(),
        gpu_count: inp.gpu_count.unwrap_or(tp * pp * dp),
        tp,
        pp,
        dp,
        context_length,
        context_source,
        model_max_context: model_max,
        kv_cache_dtype: if dsv4.is_some() {
            "fp8_ds_mla".into() // `_resolve_dsv4_kv_cache_dtype`
        } else {
            kv_name
        },
        page_size: bs,
        kv_bytes_per_token: per_token.round() as u64,
        pool_tokens: logged(kv.point),
        pool_tokens_low: logged(kv.low),
        pool_tokens_high: logged(kv.high),
        usable_tokens: fit(kv.point),
        usable_tokens_low: fit(kv.low),
        usable_tokens_high: fit(kv.high),
        budget_bytes: kv.point.round() as i64,
        weights_bytes: w.point.round() as u64,
        memory_fraction: util.point,
        memory_fraction_loc: util_loc,
        memory_fraction_flag: "--gpu-memory-utilization",
        needed_fraction,
        max_context_fit: fit(kv.low).min(model_max),
        assumptions: notes.0,
    })
}

//! What TensorRT-LLM's memory profile counts besides the weights and the temporary KV cache:
//! `peak − model_bytes` of tensorrt_llm/_torch/pyexecutor/_util.py ::
//! KvCacheCreator.configure_kv_cache_capacity (1.2 and later; `_cal_max_tokens` in 1.0–1.1
//! takes the same peak). The engine measures it after the estimation executor's warm-up
//! (autotuner, CUDA-graph capture, the warm-up forwards), as two parts it logs:
//! - `extra_cost = (total − free) − torch allocated` after `empty_cache()`, "Memory used outside
//!   torch (e.g., NCCL and CUDA graphs)": the CUDA context and loaded kernel modules, NCCL and
//!   the all-reduce / MoE all-to-all IPC buffers, CUDA-graph pools and what the caching
//!   allocator cannot hand back;
//! - `torch_peak − model_bytes`, "Memory dynamically allocated during inference (inside
//!   torch)": the activation peak of the dummy context requests (`max_num_tokens` tokens).
//!
//! Neither part is in config.json. The non-torch sizes below are **fitted to data**: the values
//! TRT-LLM itself printed on the "outside torch" lines of the public runs listed in
//! [`FITTED_ON`] (B200/B300, 1.2.0rc6.post2 – 1.3.0rc10), not to any logged pool.

use super::{int_or, Layout, MAX_NUM_TOKENS};
use crate::capacity::{Estimate, Notes};
use crate::engine::EngineArgs;
use crate::gpu::GpuSpec;
use crate::model::Geometry;
use crate::units::GIB;

/// The runs whose logged non-torch memory sizes [`non_torch`] (reported by the accuracy test).
pub const FITTED_ON: &str = "TensorRT-LLM non-torch memory after warm-up: 'Memory used after loading model weights (outside torch)' of zufayu/ClaudeSkillsE2EPerf results/b200_*, b300_* (gpt-oss-120b TP1: 4.12–4.29 GiB; DeepSeek-R1 TP2–TP8: 6.78–12.51 GiB)";

/// Non-torch memory of one rank. On data-center Blackwell (compute capability 10.x) the sizes
/// are the logged ones: one GPU 4.1–4.3 GiB for gpt-oss-120b on B200 and B300 (an MoE: its
/// autotuned MoE kernels and their modules; a dense model keeps the CUDA context and graph pools,
/// 1.1 GiB, as the H100 Qwen3 runs leave room for); every further rank adds NCCL (NVLS on
/// NVSwitch) and TRT-LLM's all-reduce workspaces (tensorrt_llm/_torch/distributed/ops.py ::
/// get_allreduce_workspace; plugin.py :: allocate_allreduce_fusion_workspace): 6.8–7.8 GiB logged
/// with 2–8 ranks, less the one-GPU base; expert parallelism adds the MoE all-to-all workspace
/// (7.1–12.5 GiB logged with EP 4–8). No log of another GPU family prints these lines in the
/// public set, so elsewhere the earlier estimates stay: context and graphs 1.1 GiB, MoE
/// workspace 0.5 GiB, NCCL 1.0 GiB, each with the same relative spread.
fn non_torch(m: &Geometry, gpu: &GpuSpec, ranks: u32, ep: u32) -> (Estimate, &'static str) {
    let logged = gpu.compute_capability.0 == 10;
    let gib = |point: f64, low: f64, high: f64| Estimate::range(point * GIB, low * GIB, high * GIB);
    let base = match (m.moe, logged) {
        (true, true) => gib(4.2, 3.9, 4.6),
        (true, false) => gib(1.6, 1.0, 2.3),
        (false, _) => gib(1.1, 0.7, 1.6),
    };
    let comm = match (ranks > 1, logged) {
        (false, _) => Estimate::exact(0.0),
        (true, true) => gib(3.0, 2.4, 4.0),
        (true, false) => gib(1.0, 0.6, 2.0),
    };
    let a2a = if ep > 1 && m.moe {
        gib(1.0, 0.0, 5.0)
    } else {
        Estimate::exact(0.0)
    };
    let why = match (ranks > 1, ep > 1 && m.moe) {
        (false, _) => "CUDA context, kernel modules, CUDA-graph pools",
        (true, false) => "CUDA context, kernel modules, CUDA-graph pools, NCCL and all-reduce workspaces",
        (true, true) => "CUDA context, kernel modules, CUDA-graph pools, NCCL and all-reduce workspaces, MoE all-to-all workspace",
    };
    (sum(&[base, comm, a2a]), why)
}

fn sum(parts: &[Estimate]) -> Estimate {
    parts.iter().fold(Estimate::exact(0.0), |a, e| {
        Estimate::range(a.point + e.point, a.low + e.low, a.high + e.high)
    })
}

/// The torch activation peak of the dummy context requests: hidden states of `max_num_tokens`
/// tokens, logits of the last token of each request (CUDA-graph warm-up decodes up to 256
/// rows), and for an MoE the routed copies of every token (top-8 assumed: config.json's
/// `num_experts_per_tok` is not read) in and out of the fused MoE
/// (_torch/modules/fused_moe: permuted input and unpermuted output, bf16).
fn activations(args: &EngineArgs, m: &Geometry) -> (f64, f64) {
    let tokens = args.int("max_num_tokens").unwrap_or(MAX_NUM_TOKENS).max(1) as f64;
    let rows = (args
        .int("max_batch_size")
        .unwrap_or(super::MAX_BATCH_SIZE)
        .max(1) as f64)
        .min(tokens)
        .min(256.0);
    let hidden = tokens * m.hidden_size as f64 * 12.0;
    let logits = rows * m.vocab_size as f64 * 4.0 * 2.0;
    let routed = if m.moe {
        tokens * 8.0 * m.hidden_size as f64 * 2.0 * 2.0
    } else {
        0.0
    };
    (tokens, hidden + logits + routed)
}

/// Memory the profile run leaves taken besides the weights: activations, non-torch memory and
/// a VLM's encoder. A TRT engine (`--backend tensorrt`) sized its activation buffers when it was
/// built, which the serve command does not show: a wider band above.
pub fn non_kv(
    args: &EngineArgs,
    m: &Geometry,
    gpu: &GpuSpec,
    l: &Layout,
    notes: &mut Notes,
) -> Estimate {
    let (tokens, act) = activations(args, m);
    let ranks = l.tp * l.pp;
    let ep = int_or(args, "moe_expert_parallel_size", 1);
    let (outside, why) = non_torch(m, gpu, ranks, ep);
    let engine = matches!(args.text("backend"), Some("tensorrt" | "trt"));
    let act = Estimate::range(act, 0.5 * act, if engine { 3.0 } else { 1.6 } * act);
    // A VLM's vision encoder runs on its own worst-case dummy batch inside the profile run, and
    // recent releases reserve an encoder-embedding cache before sizing the pool
    // (KvCacheCreator.configure_kv_cache_capacity: _encode_dummy_inputs,
    // _reserve_multimodal_encoder_cache_memory). config.json sizes neither: 1 GiB at the point
    // (as vLLM's encoder profile), 0 to 3 GiB in the band.
    let encoder = if m.multimodal {
        Estimate::range(GIB, 0.0, 3.0 * GIB)
    } else {
        Estimate::exact(0.0)
    };
    let e = sum(&[act, outside, encoder]);
    notes.estimate(
        "non_kv_bytes",
        e,
        format!(
            "profile-run peak besides weights: activations and logits of {tokens} dummy tokens; non-torch memory after warm-up ({why}), sized from TRT-LLM's own 'outside torch' log lines (fitted to data){}{}",
            if m.multimodal { "; vision encoder profile and cache" } else { "" },
            if engine { "; TRT engine buffers sized at build time widen the band" } else { "" },
        ),
    );
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_of_an_moe_keeps_the_logged_one_gpu_non_torch_memory() {
        let mut m = crate::capacity::testing::deepseek_v3();
        m.moe = true;
        let b200 = crate::gpu::lookup("b200").cloned().unwrap();
        let (one, _) = non_torch(&m, &b200, 1, 1);
        // gpt-oss-120b on one B200 / B300 logged 4.28 and 4.12 GiB outside torch.
        assert!(one.low <= 4.12 * GIB && 4.28 * GIB <= one.high);
        // DeepSeek-R1 FP8, TP 8, EP 1 logged 7.46 GiB; NVFP4 TP 8 EP 8 logged 12.51 GiB.
        let (tp8, _) = non_torch(&m, &b200, 8, 1);
        assert!(tp8.low <= 7.46 * GIB && 7.46 * GIB <= tp8.high);
        let (ep8, _) = non_torch(&m, &b200, 8, 8);
        assert!(ep8.low <= 12.51 * GIB && 12.51 * GIB <= ep8.high);
        // A dense model on one GPU holds neither the MoE kernels nor any NCCL buffer.
        // Hopper prints no such line in the public set: the earlier, smaller estimates stay.
        let h100 = crate::gpu::lookup("h100-80gb").cloned().unwrap();
        assert!(non_torch(&m, &h100, 8, 1).0.point < 7.46 * GIB);
        m.moe = false;
        assert!(non_torch(&m, &b200, 1, 1).0.point < one.point);
    }
}

//! What a routed-expert (MoE) layer adds to vLLM's profile run and to its weights, from the
//! fused-MoE kernels' own allocation code.

use super::super::Estimate;
use super::V0_16;
use crate::engine::EngineArgs;
use crate::gpu::{GpuSpec, Vendor};
use crate::model::Geometry;
use crate::units::GIB;

/// The fused-MoE intermediate buffers of one layer in the profile run, at bf16: the Triton
/// experts' `workspace_shapes` of 0.33.0 (`fused_moe/experts/triton_moe.py :: TritonExperts`)
/// are `M × topk × max(I, H)` and `M × topk × max(2I, H)` plus an `M × H` output, where `I` is a
/// rank's expert width and `H` the hidden size; Marlin's (`marlin_moe.py`) are no larger. Up to
/// 0.15 `fused_experts_impl` walks the tokens in `VLLM_FUSED_MOE_CHUNK_SIZE` chunks (16,384 in
/// the 0.12.0 and 0.15.0 `envs.py`); 0.20.0 reads no such variable, and the release between is
/// taken unchunked, the larger. An NVFP4 MoE runs FlashInfer's CUTLASS or TRT-LLM kernels,
/// which allocate their own workspace out of kvlint's sight
/// (`fused_moe/flashinfer_cutlass_moe.py :: FlashInferExperts.workspace_shapes` declares only
/// `M × H`); it, and a config that names no experts-per-token count, keep the flat 0.5 GiB.
pub(super) fn workspace(args: &EngineArgs, m: &Geometry, tokens: f64, tp: u32) -> (f64, String) {
    let Some(ex) = m.experts.filter(|_| m.moe) else {
        return (0.0, String::new());
    };
    let nvfp4 = m
        .quantization
        .as_ref()
        .is_some_and(|q| q.weight_bits == 4 && q.group_size == Some(16));
    let Some(topk) = ex.top_k.filter(|_| !nvfp4) else {
        return (0.5 * GIB, "MoE workspace (flat 0.5 GiB), ".into());
    };
    let rows = if args.version < V0_16 {
        tokens.min(16384.0)
    } else {
        tokens
    };
    let width = if args.flag("enable_expert_parallel") {
        ex.intermediate as f64
    } else {
        (ex.intermediate as f64 / f64::from(tp.max(1))).ceil()
    };
    let h = m.hidden_size as f64;
    let per_row = topk as f64 * (width.max(h) + (2.0 * width).max(h)) + h;
    (
        rows * per_row * 2.0,
        format!("MoE workspace ({rows} tokens × {topk} experts), "),
    )
}

/// The weights an MXFP4 MoE gains from its kernel's tile padding where the backend is certain
/// (`quantization/mxfp4.py :: get_mxfp4_backend` and `Mxfp4MoEMethod.create_weights`, read in
/// the 0.12.0 and 0.15.0 wheels):
/// - an NVIDIA part outside the FlashInfer (9.0 with an opt-in variable, 10.x) and Triton-kernel
///   (9.0 ≤ CC < 11.0) ranges runs Marlin, which pads a rank's expert width to 128 and the
///   hidden size to 256: Ampere, Ada, consumer Blackwell, GB10;
/// - ROCm pads both to `mxfp4_utils.py :: get_padding_alignment`: 256 on gfx950 (MI350X,
///   MI355X), else 128.
///
/// The kernel's tile sizes are in its code, so the padding is exact: it adds to every end and
/// the high end takes no 256-wide bound besides (`Headroom::padding_known`). From 0.16 the choice
/// moved into a backend oracle with more kernels, so later releases keep the padding in the high
/// end only (`capacity::mxfp4_padding`, 256 on both sides, which covers these).
pub(super) fn mxfp4_padding(
    args: &EngineArgs,
    m: &Geometry,
    gpu: &GpuSpec,
    (tp, pp): (u32, u32),
) -> Option<(Estimate, String)> {
    let q = m.quantization.as_ref()?;
    let ex = m.experts?;
    let cc = gpu.compute_capability;
    let ((hidden_to, width_to), kernel) = match gpu.vendor {
        Vendor::Nvidia if !((9, 0)..(11, 0)).contains(&cc) => ((256.0, 128.0), "Marlin"),
        Vendor::Amd if gpu.name.starts_with("MI35") => ((256.0, 256.0), "ROCm gfx950"),
        Vendor::Amd => ((128.0, 128.0), "ROCm"),
        Vendor::Nvidia => return None,
    };
    if q.method != "mxfp4" || args.version >= V0_16 || m.hidden_size == 0 {
        return None;
    }
    let width = (ex.intermediate as f64 / f64::from(tp.max(1))).ceil();
    let up = |x: f64, to: f64| (x / to).ceil() * to / x;
    let grow = up(m.hidden_size as f64, hidden_to) * up(width, width_to) - 1.0;
    let bytes = m.weight_parts.routed_experts as f64 / f64::from(tp.max(1) * pp.max(1)) * grow;
    Some((
        Estimate::exact(bytes),
        format!("the {kernel} MXFP4 MoE kernel's padding of the experts"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::testing::{args, dense, gpt_oss};
    use crate::engine::SettingValue;
    use crate::launch::Engine;
    use crate::model::{Quantization, RoutedExperts};

    #[test]
    fn the_moe_workspace_is_the_triton_experts_buffers_per_batched_token() {
        let m = gpt_oss(0);
        // Per token: 4 × (max(2880, 2880) + max(5760, 2880)) + 2880 = 37,440 bf16 values.
        let at = |v: &str, extra: &[(&str, SettingValue)]| {
            workspace(&args(Engine::Vllm, v, extra), &m, 32768.0, 2).0
        };
        // TP 2 halves the expert width: 4 × (2880 + 2880) + 2880 = 25,920 values per token.
        assert_eq!(at("0.20.0", &[]), 32768.0 * 25920.0 * 2.0);
        // 0.15 walks 16,384 tokens at a time.
        assert_eq!(at("0.15.0", &[]), 16384.0 * 25920.0 * 2.0);
        // Expert parallelism keeps whole experts on a rank.
        let ep = [("enable_expert_parallel", SettingValue::Flag(true))];
        assert_eq!(at("0.20.0", &ep), 32768.0 * 37440.0 * 2.0);
    }

    #[test]
    fn nvfp4_and_an_unnamed_top_k_keep_the_flat_workspace() {
        let a = args(Engine::Vllm, "0.20.0", &[]);
        let mut m = gpt_oss(0);
        m.experts = m.experts.map(|e| RoutedExperts { top_k: None, ..e });
        assert_eq!(workspace(&a, &m, 8192.0, 1).0, 0.5 * GIB);
        let mut m = gpt_oss(0);
        m.quantization = m.quantization.map(|q| Quantization {
            method: "modelopt".into(),
            group_size: Some(16),
            ..q
        });
        assert_eq!(workspace(&a, &m, 8192.0, 1).0, 0.5 * GIB);
        assert_eq!(workspace(&a, &dense(4, 8, 8, 128), 8192.0, 1).0, 0.0);
    }

    #[test]
    fn mxfp4_padding_follows_the_backend_the_release_picks_for_the_part() {
        let m = gpt_oss(1_000_000_000);
        let gpu = |n: &str| crate::gpu::lookup(n).unwrap();
        let pad = |v: &str, g: &str| {
            mxfp4_padding(&args(Engine::Vllm, v, &[]), &m, gpu(g), (1, 1)).map(|(e, _)| e.point)
        };
        // Marlin (RTX 4090, CC 8.9): 2880 → 3072 hidden, 2880 → 2944 wide.
        let marlin = 1e9 * (3072.0 / 2880.0 * 2944.0 / 2880.0 - 1.0);
        assert!((pad("0.12.0", "RTX-4090").unwrap() - marlin).abs() < 1.0);
        assert!((pad("0.15.0", "RTX-5090").unwrap() - marlin).abs() < 1.0);
        // ROCm: 128 on both sides, 256 on gfx950.
        let rocm = 1e9 * ((2944.0f64 / 2880.0).powi(2) - 1.0);
        assert!((pad("0.12.0", "MI300X").unwrap() - rocm).abs() < 1.0);
        let gfx950 = 1e9 * ((3072.0f64 / 2880.0).powi(2) - 1.0);
        assert!((pad("0.12.0", "MI355X").unwrap() - gfx950).abs() < 1.0);
        // Hopper runs the Triton kernels; 0.16 and later choose through the oracle.
        assert_eq!(pad("0.12.0", "H100-80GB"), None);
        assert_eq!(pad("0.16.0", "RTX-4090"), None);
    }
}

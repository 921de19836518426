//! The second copy of the block scales that SGLang's NVFP4 MoE holds at "Load weight end" when
//! the FlashInfer TRT-LLM runner serves it (0.5.1 to 0.5.12).

use super::{Layout, V0_5_0, V0_5_13};
use crate::capacity::Estimate;
use crate::engine::EngineArgs;
use crate::gpu::{GpuSpec, Vendor};
use crate::model::Geometry;
use crate::version::Version;

/// Bytes per rank of the swizzled block-scale copies. From 0.5.1 to 0.5.12,
/// `layers/quantization/modelopt_quant.py :: ModelOptNvFp4FusedMoEMethod.create_weights` builds
/// `w13_blockscale_swizzled` and `w2_blockscale_swizzled` (one fp8 scale per 16 weights, rows
/// padded to 128) next to the loaded `w*_weight_scale`. On the TRT-LLM runner,
/// `process_weights_after_loading` (0.5.9: `moe_runner/flashinfer_trtllm.py ::
/// align_fp4_moe_weights_for_flashinfer_trtllm`) replaces the weights and scales with shuffled
/// copies and deletes the originals but never the swizzled scales, so every routed expert weight
/// carries its scale twice. The CUTLASS paths copy into the swizzled tensor and delete the
/// original: one copy. 0.5.13 skips the allocation on the TRT-LLM runner
/// (`layer.w13_blockscale_swizzled = None`); 0.4.10 swizzles in `process_weights_after_loading`
/// and frees the original, and has no TRT-LLM FP4 MoE runner.
///
/// `weight_parts.routed_experts` prices NVFP4 at 0.5 + 1/16 bytes per weight
/// (model/weight_format.rs), so the scales are 1/9 of it. `--moe-runner-backend auto` picks
/// the TRT-LLM runner on SM100 for some architectures and releases (0.5.9
/// `server_args.py :: _handle_model_specific_adjustments`: DeepseekV3ForCausalLM with
/// modelopt_fp4 and no all-to-all backend); elsewhere the copy is only the band's high end.
pub(super) fn swizzled_scale_copies(
    m: &Geometry,
    lay: &Layout,
    v: &Version,
    args: &EngineArgs,
    gpu: &GpuSpec,
) -> Option<(Estimate, String)> {
    let q = m.quantization.as_ref()?;
    let nvfp4 = matches!(q.method.as_str(), "modelopt" | "modelopt_fp4")
        && q.weight_bits == 4
        && q.group_size == Some(16);
    if !nvfp4 || *v < V0_5_0 || *v >= V0_5_13 || gpu.vendor != Vendor::Nvidia {
        return None;
    }
    let x = m.weight_parts.routed_experts as f64 / 9.0 / f64::from((lay.tp * lay.pp).max(1));
    if x <= 0.0 {
        return None;
    }
    let how = "swizzled NVFP4 MoE block scales kept beside the TRT-LLM runner's shuffled ones";
    let auto = matches!(args.text("moe_runner_backend"), None | Some("auto"));
    let e = match args.text("moe_runner_backend") {
        Some("flashinfer_trtllm") => Estimate::exact(x),
        _ if auto && gpu.compute_capability.0 == 10 => {
            let deepseek = m.architectures.iter().any(|a| a == "DeepseekV3ForCausalLM");
            let a2a = args.text("moe_a2a_backend").is_some_and(|b| b != "none");
            let point = if deepseek && !a2a { x } else { 0.0 };
            Estimate::range(point, 0.0, x)
        }
        _ => return None,
    };
    Some((e, how.into()))
}

#[cfg(test)]
mod tests {
    use super::super::layout;
    use super::*;
    use crate::capacity::testing::{args, deepseek_v3};
    use crate::engine::SettingValue::{self, Int, Text};
    use crate::launch::Engine;
    use crate::model::Quantization;

    /// DeepSeek-V3 in NVFP4 whose routed experts are priced at 9,000,000 bytes (0.5 + 1/16 per
    /// weight: 16,000,000 weights, 1,000,000 bytes of fp8 scales).
    fn nvfp4() -> Geometry {
        let mut m = deepseek_v3();
        m.quantization = Some(Quantization {
            method: "modelopt".into(),
            weight_bits: 4,
            kv_cache_fp8: false,
            group_size: Some(16),
        });
        m.weight_parts.routed_experts = 9_000_000;
        m
    }

    fn copies(
        m: &Geometry,
        version: &str,
        gpu: &str,
        pairs: &[(&str, SettingValue)],
    ) -> Option<Estimate> {
        let mut all = vec![("tp_size", Int(4))];
        all.extend(pairs.iter().cloned());
        let a = args(Engine::Sglang, version, &all);
        let g = crate::gpu::lookup(gpu).unwrap();
        swizzled_scale_copies(m, &layout(&a), &a.version, &a, g).map(|(e, _)| e)
    }

    #[test]
    fn the_trtllm_runner_holds_the_scales_twice_before_0_5_13() {
        let m = nvfp4();
        let trtllm = [("moe_runner_backend", Text("flashinfer_trtllm".into()))];
        // 1,000,000 bytes of scales over 4 ranks.
        let e = copies(&m, "0.5.9", "B200", &trtllm).unwrap();
        assert_eq!((e.point, e.low, e.high), (250_000.0, 250_000.0, 250_000.0));
        assert!(copies(&m, "0.5.13", "B200", &trtllm).is_none());
        assert!(copies(&m, "0.4.10", "B200", &[]).is_none());
        let cutlass = [("moe_runner_backend", Text("flashinfer_cutlass".into()))];
        assert!(copies(&m, "0.5.9", "B200", &cutlass).is_none());
        // `auto` on SM100 picks the TRT-LLM runner for DeepSeek-V3 without an all-to-all backend.
        let e = copies(&m, "0.5.9", "B200", &[]).unwrap();
        assert_eq!((e.point, e.low, e.high), (250_000.0, 0.0, 250_000.0));
        let deepep = [("moe_a2a_backend", Text("deepep".into()))];
        let e = copies(&m, "0.5.9", "B200", &deepep).unwrap();
        assert_eq!((e.point, e.low, e.high), (0.0, 0.0, 250_000.0));
        // Hopper has no TRT-LLM FP4 MoE runner to pick.
        assert!(copies(&m, "0.5.9", "H200", &[]).is_none());
        // Not NVFP4: FP8 ModelOpt checkpoints keep no block-scale copy.
        let mut fp8 = nvfp4();
        fp8.quantization.as_mut().unwrap().weight_bits = 8;
        assert!(copies(&fp8, "0.5.9", "B200", &trtllm).is_none());
    }
}

//! The weights a rank holds, per engine class of checkpoint: the parameter count or the
//! checkpoint's index, split over TP × PP, with what each engine's model code adds, and the
//! headroom its logged weights allow.

use super::{model_dtype_bytes, Estimate, Notes};
use crate::engine::EngineArgs;
use crate::model::Geometry;
use crate::units::GIB;

/// The weight bytes per rank `--dtype` adds (or removes) when an unquantized checkpoint is
/// loaded at another width than it is stored in; quantized weights keep their width.
pub fn dtype_weights(
    args: &EngineArgs,
    m: &Geometry,
    online_quant: Option<&str>,
    ranks: u32,
) -> Option<(Estimate, String)> {
    if m.quantization.is_some() || online_quant.is_some() {
        return None;
    }
    let (stored, loaded) = (m.dtype.bytes(), model_dtype_bytes(args, m));
    if stored == loaded || stored < 2.0 {
        return None;
    }
    let extra = m.weight_bytes as f64 / f64::from(ranks.max(1)) * (loaded / stored - 1.0);
    let why = format!(
        "unquantized weights loaded at {loaded} bytes per parameter (stored at {stored}; --dtype {})",
        args.text("dtype").unwrap_or("auto")
    );
    Some((Estimate::exact(extra), why))
}

/// How far the logged weights may run over an estimate (fractions over a declared 4-bit layout
/// and over a count), whether the launch builds every module the count holds (a multimodal
/// count includes the vision tower, which some launches skip), and whether the engine's extras
/// already hold an MXFP4 MoE's tile padding for the kernel the launch is certain to run, so the
/// high end needs no 256-wide bound for a kernel it cannot name.
#[derive(Clone, Copy, Debug)]
pub struct Headroom {
    pub declared: f64,
    pub counted: f64,
    pub tower_built: bool,
    pub padding_known: bool,
    /// A tighter bound on a counted rank's excess, a fraction plus bytes, where the engine's
    /// logs show it absolute (`COUNTED_EXCESS`).
    pub counted_excess: Option<(f64, f64)>,
}

/// Headroom over a 16- or 8-bit checkpoint's parameter count, fitted to the logged weights (the
/// accuracy report lists it): the count misses the vocabulary padding and small buffers; the
/// logged weights of such startups run 0–2.4 % over it on vLLM (36 logs), 0.05–0.8 % on SGLang
/// (Qwen3-8B, Qwen3-32B, GLM-5 FP8), 2.9 % on TensorRT-LLM's DeepSeek-R1 FP8 ranks.
pub const COUNTED_HEADROOM: f64 = 0.03;

/// The same excess bounded for a large rank: what the count misses is mostly a few buffers of
/// fixed size, not a share of the weights. Over the vLLM and SGLang logs of counted 16- or
/// 8-bit ranks from 7.5 to 214 GiB the excess is at most 0.33 GiB (0.07 GiB on Qwen3-235B FP8
/// TP 4, 0.20 on Gemma-4-31B, 0.24 on MiniMax-M2.5 FP8 TP 1, 0.33 or 0.37 % on GLM-5 FP8 TP 8),
/// and 0.59–1.26 GiB for GLM-5.1 MXFP4 (1.1 % of 52.5 GiB, 0.6 % of 198 GiB): 1 % +
/// 0.25 GiB holds each, and is tighter than `COUNTED_HEADROOM` above 12.5 GiB a rank. A
/// checkpoint whose tower the count cannot see (`tower_uncounted`) keeps the 3 %. Fitted to
/// data; the accuracy report lists it.
pub const COUNTED_EXCESS: (f64, f64) = (0.01, 0.25 * GIB);

/// A multimodal model whose config gives no tower kvlint can count: a class the engines register
/// as multimodal (`model::architectures::multimodal_class`) without `vision_config` (Gemma 3 and
/// Llama 4 in the catalog), or one with only an audio tower.
fn tower_uncounted(model: &Geometry) -> bool {
    model.multimodal && model.vision.is_none()
}

/// `weights_per_rank_with_headroom` for TensorRT-LLM, whose logged weights match a 16- or 8-bit
/// checkpoint's parameter count: +3 % headroom instead of +10 % (vLLM and SGLang pass their own
/// `Headroom`). Such a checkpoint is loaded at the dtype config.json gives; the count misses only the embedding's padding to 64 rows per
/// rank (vLLM `VocabParallelEmbedding`, DEFAULT_VOCAB_PADDING_SIZE) and small buffers. The logged
/// weights of 36 such vLLM startups run 0–2.4 % over the count, TensorRT-LLM's DeepSeek-R1 FP8
/// ranks 2.9 %. Fitted to data: `COUNTED_HEADROOM`.
pub fn weights_per_rank_counted(
    model: &Geometry,
    online_quant: Option<&str>,
    tp_pp: (u32, u32),
    engine_extras: impl IntoIterator<Item = (Estimate, String)>,
    notes: &mut Notes,
) -> Estimate {
    weights_per_rank_with_headroom(
        model,
        online_quant,
        tp_pp,
        engine_extras,
        notes,
        // TensorRT-LLM's multimodal launches are not modelled apart: the tower may be skipped.
        Headroom {
            declared: 0.10,
            counted: COUNTED_HEADROOM,
            tower_built: false,
            padding_known: false,
            counted_excess: None,
        },
    )
}

/// Bytes of weights a rank holds: the checkpoint (or its online-quantized form) split over
/// TP × PP, plus the modules every TP rank holds whole (`WeightParts::replicated`), plus what
/// the engine's own model code adds (`engine_extras`, bytes per rank with their reasons). A
/// 4-bit checkpoint whose config fixes the layout (`Quantization::group_size`) is priced per
/// weight with its scales and zero points as the engines allocate them (AWQ/GPTQ packed int32
/// values, fp16 scales and packed zeros per group; MXFP4 one e8m0 scale per 32, NVFP4 one fp8
/// scale per 16); over every engine's 4-bit records the logged weights run at most 8.4 % over
/// the estimate (DeepSeek-R1 NVFP4 on SGLang 0.5.9) and
/// 9.2 % for gpt-oss-20b on vLLM, whose padding `mxfp4_padding` adds to the high end. A 4-bit
/// checkpoint whose config leaves the layout to the loader (bitsandbytes, unknown methods)
/// keeps +30 %.
///
/// The headroom is per class, for an engine whose logged weights bound it: `declared` over a 4-bit checkpoint priced in the layout its config
/// declares (`group_size`) that the loader converts, `counted` over a 16- or 8-bit checkpoint's
/// parameter count and a 4-bit layout the loader allocates as priced (SGLang:
/// `sglang::budget::WEIGHTS_HEADROOM`, both fitted to the logged weights); online quantization
/// keeps +10 % and an undeclared 4-bit layout +30 %.
pub fn weights_per_rank_with_headroom(
    model: &Geometry,
    online_quant: Option<&str>,
    (tp, pp): (u32, u32),
    engine_extras: impl IntoIterator<Item = (Estimate, String)>,
    notes: &mut Notes,
    headroom: Headroom,
) -> Estimate {
    use crate::model::WeightsSource;
    let four_bit = model
        .quantization
        .as_ref()
        .is_some_and(|q| q.weight_bits <= 4);
    let declared_layout = model
        .quantization
        .as_ref()
        .is_some_and(|q| q.group_size.is_some());
    let bytes = model.weight_bytes as f64;
    let (total, high, counted, how) = match online_quant.and_then(|q| online_quant_bytes(model, q)) {
        Some(bytes) => (
            bytes,
            0.10,
            false,
            "online quantization of the checkpoint's parameters",
        ),
        None => match model.weight_bytes_source {
            WeightsSource::SafetensorsIndex => (
                bytes,
                0.03,
                false,
                "model.safetensors.index.json total_size",
            ),
            WeightsSource::ParamCount if four_bit && declared_layout && allocated_as_priced(model) => (
                bytes,
                headroom.counted,
                true,
                "parameter count from config.json at 4 bits in the layout its quantization_config declares, which the loader allocates as priced",
            ),
            WeightsSource::ParamCount if four_bit && declared_layout => (
                bytes,
                headroom.declared,
                false,
                "parameter count from config.json at 4 bits in the layout its quantization_config declares",
            ),
            WeightsSource::ParamCount if four_bit => (
                bytes,
                0.30,
                false,
                "parameter count from config.json at 4 bits",
            ),
            WeightsSource::ParamCount => (
                bytes,
                headroom.counted,
                true,
                "parameter count from config.json × dtype/quantization",
            ),
        },
    };
    let (tp, pp) = (f64::from(tp.max(1)), f64::from(pp.max(1)));
    let replicated = unsplit_share(
        model.weight_parts.replicated as f64 * part_scale(model, online_quant),
        tp,
        pp,
    );
    let per = total / (tp * pp) + replicated;
    let pad = match online_quant {
        None if !headroom.padding_known => mxfp4_padding(model, tp, pp),
        _ => 0.0,
    };
    // What the count may hold that the engine does not build: a vision tower a text-only launch
    // skips, modules its model class drops. A checkpoint counted from its config whose launch
    // builds every counted tensor (text-only, or its tower built) never logs under the count
    // (−0.02 % at worst over 50 vLLM and SGLang startups), so it keeps −0.5 %; the rest −2 % (a
    // multimodal Qwen3.6 logged 0.9 % under on vLLM, DeepSeek-R1 NVFP4 1.7 % under on SGLang).
    let under = if counted && (!model.multimodal || headroom.tower_built) {
        0.995
    } else {
        0.98
    };
    let over = match headroom.counted_excess {
        Some((share, bytes)) if counted && !tower_uncounted(model) => {
            (per * high).min(per * share + bytes)
        }
        _ => per * high,
    };
    let mut e = Estimate::range(per, per * under, per + over + pad);
    let ranks = tp * pp;
    let mut how = match ranks as u64 {
        1 => format!("{how}, on one rank"),
        n => format!("{how}, split over {n} ranks"),
    };
    if replicated >= GIB / 100.0 {
        how += &format!(
            ", plus {:.2} GiB of modules every TP rank holds whole (MLA down-projections, indexers, routers)",
            replicated / GIB
        );
    }
    for (x, why) in engine_extras {
        e = Estimate::range(e.point + x.point, e.low + x.low, e.high + x.high);
        let sign = if x.point < 0.0 { "less" } else { "plus" };
        how += &format!(", {sign} {:.2} GiB: {why}", x.point.abs() / GIB);
    }
    notes.estimate("weights_bytes_per_rank", e, how);
    e
}

/// A 4-bit checkpoint whose weights the loaders allocate exactly as kvlint prices them
/// (`model::weight_format`), with nothing of a conversion left when the free memory is read:
/// - AWQ/GPTQ: packed int32 values, an fp16 scale and a packed zero point per group and column
///   (SGLang `layers/quantization/awq/schemes/awq_marlin.py :: AWQMarlinLinearScheme.
///   create_weights`, vLLM `quantization/awq_marlin.py :: AWQMarlinLinearMethod.create_weights`);
///   the Marlin repack replaces each with a tensor of the same size and adds a per-layer
///   workspace of a few KiB (SGLang `hardware_backend/gpu/quantization/awq_kernels.py ::
///   AWQMarlinLinearKernel.process_weights_after_loading`);
/// - Quark MXFP4: packed uint8 values and one e8m0 scale per 32 (`quark/schemes/
///   quark_w4a4_mxfp4.py :: QuarkW4A4MXFP4.create_weights`); the MoE's ROCm shuffle of values
///   and scales swaps in tensors of the same shape (`quark_w4a4_mxfp4_moe.py ::
///   QuarkW4A4MXFp4MoE.process_weights_after_loading`).
///
/// SGLang reads the free memory after emptying the allocator's cache (`utils/common.py ::
/// get_available_gpu_memory`), so the replaced tensors do not count. Such a checkpoint gets the
/// headroom of a counted 16- or 8-bit one: its logged weights run 0.6–1.6 % over the estimate
/// (Gemma 4 AWQ and GLM-5.1 MXFP4 on SGLang 0.5.10–0.5.12, Qwen3-14B/32B AWQ on vLLM). The
/// other 4-bit formats keep the engine's own headroom: their loaders convert (NVFP4 scale
/// swizzling, compressed-tensors' MoE repacks) and their logs run up to 3.3 % over.
fn allocated_as_priced(model: &Geometry) -> bool {
    model.quantization.as_ref().is_some_and(|q| {
        matches!(
            q.method.as_str(),
            "awq" | "awq_marlin" | "gptq" | "gptq_marlin" | "quark"
        )
    })
}

/// Bytes per rank an MXFP4 (`quant_method: mxfp4`, gpt-oss) MoE may gain from the kernels'
/// tile padding, for the band's high end: vLLM `fused_moe/layer.py ::
/// maybe_roundup_hidden_size` rounds the hidden size up to 128 or 256 and `mxfp4.py ::
/// Mxfp4MoEMethod.create_weights` the per-rank intermediate size to 64, 128 or 256, by backend
/// (SGLang `layers/quantization/mxfp4.py` likewise); the bound takes 256 for both.
fn mxfp4_padding(model: &Geometry, tp: f64, pp: f64) -> f64 {
    let (Some(q), Some(ex)) = (&model.quantization, &model.experts) else {
        return 0.0;
    };
    let per_rank = (ex.intermediate as f64 / tp).ceil();
    if q.method != "mxfp4" || per_rank <= 0.0 || model.hidden_size == 0 {
        return 0.0;
    }
    let up = |x: f64| (x / 256.0).ceil() * 256.0 / x;
    let grow = up(model.hidden_size as f64) * up(per_rank) - 1.0;
    model.weight_parts.routed_experts as f64 / (tp * pp) * grow
}

/// What a rank holds beyond its even share of `bytes` when the module is whole on every TP rank
/// of its pipeline stage.
pub fn unsplit_share(bytes: f64, tp: f64, pp: f64) -> f64 {
    bytes / pp * (1.0 - 1.0 / tp)
}

/// The rotary tables every rank builds at load, at `elem` bytes per value, as a weights term:
/// both engines measure them with the weights. Negligible for most models; gigabytes for a
/// model that allows millions of positions (Llama 4 Scout: 10M × 128).
pub fn rope_tables(model: &Geometry, elem: f64) -> Option<(Estimate, String)> {
    let values: u64 = model
        .rope_tables
        .iter()
        .map(|t| t.positions * t.width)
        .sum();
    let bytes = values as f64 * elem;
    (bytes >= GIB / 100.0).then(|| {
        (
            Estimate::exact(bytes),
            format!(
                "rotary cos/sin tables for {} positions",
                model
                    .rope_tables
                    .iter()
                    .map(|t| t.positions)
                    .max()
                    .unwrap_or(0)
            ),
        )
    })
}

/// Factor from the checkpoint's bytes of a `WeightParts` entry to its bytes once loaded:
/// online quantization shrinks the linear layers along with the whole model.
pub fn part_scale(model: &Geometry, online_quant: Option<&str>) -> f64 {
    match online_quant.and_then(|q| online_quant_bytes(model, q)) {
        Some(bytes) if model.weight_bytes > 0 => bytes / model.weight_bytes as f64,
        _ => 1.0,
    }
}

/// Weight bytes after `--quantization fp8`-style online quantization of a 16-bit checkpoint:
/// linear layers go to 8 bits, embeddings and the LM head stay in 16 bits.
pub(super) fn online_quant_bytes(model: &Geometry, method: &str) -> Option<f64> {
    let bits = match method {
        "fp8" | "fbgemm_fp8" | "modelopt" | "ptpc_fp8" => 8.0,
        _ => return None,
    };
    if model.quantization.is_some() {
        return None; // already quantized: the checkpoint's bytes stand
    }
    let embed = (model.vocab_size * model.hidden_size) as f64 * 2.0;
    let linear = (model.params as f64 - embed).max(0.0);
    Some(linear * bits / 8.0 + embed * 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::testing::{dense, gpt_oss};
    use crate::model::VisionTower;

    const HEADROOM: Headroom = Headroom {
        declared: 0.03,
        counted: COUNTED_HEADROOM,
        tower_built: true,
        padding_known: false,
        counted_excess: Some(COUNTED_EXCESS),
    };

    fn high(m: &Geometry, headroom: Headroom) -> f64 {
        weights_per_rank_with_headroom(m, None, (1, 1), [], &mut Notes(Vec::new()), headroom).high
    }

    #[test]
    fn a_large_counted_rank_takes_one_percent_and_a_quarter_gib() {
        let mut m = dense(4, 8, 8, 128);
        m.weight_bytes = (100.0 * GIB) as u64;
        // 1 % + 0.25 GiB is under 3 % of 100 GiB.
        assert!((high(&m, HEADROOM) - 101.25 * GIB).abs() < 1.0);
        // Without the bound (TensorRT-LLM), or under 12.5 GiB a rank, the 3 % stands.
        let plain = Headroom {
            counted_excess: None,
            ..HEADROOM
        };
        assert!((high(&m, plain) - 103.0 * GIB).abs() < 1.0);
        m.weight_bytes = (10.0 * GIB) as u64;
        assert!((high(&m, HEADROOM) - 10.3 * GIB).abs() < 1.0);
    }

    #[test]
    fn a_tower_the_count_cannot_see_keeps_three_percent() {
        let mut m = dense(4, 8, 8, 128);
        m.weight_bytes = (100.0 * GIB) as u64;
        // Gemma 3 in the catalog: a multimodal class with no vision_config.
        m.multimodal = true;
        assert!((high(&m, HEADROOM) - 103.0 * GIB).abs() < 1.0);
        // Its tower counted from vision_config: the bound applies again.
        m.vision = Some(VisionTower {
            layers: 27,
            hidden: 1152,
        });
        assert!((high(&m, HEADROOM) - 101.25 * GIB).abs() < 1.0);
    }

    #[test]
    fn a_known_mxfp4_kernel_leaves_the_256_wide_bound_out() {
        // gpt-oss-20b's MoE shape, 8 GiB of MXFP4 experts in 10 GiB declared at 4 bits.
        let mut m = gpt_oss((8.0 * GIB) as u64);
        m.weight_bytes = (10.0 * GIB) as u64;
        // Unknown kernel: 2880 → 3072 on both sides of the experts, on top of +3 %.
        let bound = 8.0 * GIB * ((3072.0f64 / 2880.0).powi(2) - 1.0);
        assert!((high(&m, HEADROOM) - (10.3 * GIB + bound)).abs() < 1.0);
        let known = Headroom {
            padding_known: true,
            ..HEADROOM
        };
        assert!((high(&m, known) - 10.3 * GIB).abs() < 1.0);
    }
}

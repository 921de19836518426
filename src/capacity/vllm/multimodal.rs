//! What a multimodal launch costs besides the language model: the vision tower's weights on
//! every rank under `--mm-encoder-tp-mode data`, and the GPU memory its API server sequesters for
//! decoding, carved out of the KV budget after the profile run. 0.25–0.26 `v1/worker/gpu_worker.py ::
//! Worker._reserve_mm_ipc_gpu_memory`, 0.27+ `multimodal/gpu_ipc_memory.py ::
//! reserve_mm_ipc_gpu_memory` (read in the 0.25.0–0.28.0 and 0.30.0–0.33.0 wheels), applied to
//! a fixed `--kv-cache-memory-bytes` as well. A text-only model has no multimodal config and
//! reserves nothing.

use super::super::{Estimate, Notes};
use crate::engine::{EngineArgs, SettingValue};
use crate::model::Geometry;
use crate::units::{GIB, MIB};
use crate::version::Version;

const V0_25: Version = Version::new(0, 25, 0);
const V0_27: Version = Version::new(0, 27, 0);
const V0_33: Version = Version::new(0, 33, 0);

/// `PYNVVIDEOCODEC_DECODER_GPU_MEMORY_BYTES`, `PYNVVIDEOCODEC_CUDA_CONTEXT_BYTES`: each API
/// server's decoder surfaces and its NVDEC CUDA context (the same in every release read).
const DECODER_BYTES: f64 = 128.0 * MIB;
const DECODER_CONTEXT_BYTES: f64 = 1.8 * 1024.0 * MIB;

/// Bytes taken from the KV budget: the `--mm-ipc-gpu-memory-gb` raw-frame budget (default 0,
/// shared by the API servers), plus, when `--media-io-kwargs` puts video decoding on the GPU
/// (`pynvvideocodec`, the only loader registered with `requires_gpu=True`), each API server's
/// decoders and context. The `VLLM_VIDEO_LOADER_BACKEND` variable can select it too; kvlint reads
/// the flags only.
pub(super) fn reserved(args: &EngineArgs, m: &Geometry, notes: &mut Notes) -> f64 {
    if !m.multimodal || args.version < V0_25 {
        return 0.0;
    }
    let raw = (args.float("mm_ipc_gpu_memory_gb").unwrap_or(0.0).max(0.0) * GIB).floor();
    let video = video_kwargs(args);
    let decoders = video
        .as_ref()
        .filter(|v| gpu_backend(v))
        .map_or(0.0, |v| decoder_bytes(args, v));
    let total = raw + decoders;
    if total > 0.0 {
        notes.exact(
            "mm_ipc_reserved_bytes",
            total,
            format!(
                "multimodal GPU decoding in the API server: {:.2} GiB raw-frame budget \
                 (--mm-ipc-gpu-memory-gb), {:.2} GiB of hardware video decoders, taken from the \
                 KV cache (reserve_mm_ipc_gpu_memory)",
                raw / GIB,
                decoders / GIB
            ),
        );
    }
    total
}

/// `--mm-encoder-tp-mode data` keeps the whole vision tower on every TP rank and splits the
/// images instead (`config/multimodal.py :: MultiModalConfig.mm_encoder_tp_mode`; the towers
/// build their layers with `disable_tp=is_vit_use_data_parallel()`, e.g. `models/qwen3_vl.py`),
/// so a rank holds `1 − 1/TP` of the tower beyond its even share. The tower is sized as a ViT
/// from `vision_config` (12 · hidden² per layer, bf16). A tower that does not support it falls
/// back to `weights`, so the optimistic end counts none.
pub(super) fn encoder_replicas(
    args: &EngineArgs,
    m: &Geometry,
    tp: u32,
) -> Option<(Estimate, String)> {
    let v = m.vision.as_ref().filter(|_| m.multimodal && tp > 1)?;
    if args.text("mm_encoder_tp_mode") != Some("data") || args.flag("language_model_only") {
        return None;
    }
    let tower = 12.0 * (v.hidden as f64).powi(2) * f64::from(v.layers) * 2.0;
    let extra = tower * (1.0 - 1.0 / f64::from(tp));
    Some((
        Estimate::range(extra, 0.0, extra),
        "the vision tower whole on every rank (--mm-encoder-tp-mode data)".into(),
    ))
}

/// `--language-model-only` builds no tower (`config/multimodal.py :: get_limit_per_prompt` sets
/// every modality's limit to 0, and `models/interfaces.py :: _mark_tower_model` then builds
/// none), so the count's tower comes off each rank's even share. The tower is sized as above
/// (12 · hidden² per layer), at the byte the count priced it: bf16, or FP8 where kvlint counts
/// the checkpoint online-quantized; the pessimistic end keeps a tenth of it for what that
/// sizing misses.
pub(super) fn skipped_tower(
    args: &EngineArgs,
    m: &Geometry,
    tp: u32,
) -> Option<(Estimate, String)> {
    let v = m.vision.as_ref().filter(|_| m.multimodal)?;
    if !args.flag("language_model_only") {
        return None;
    }
    let online = args
        .text("quantization")
        .and_then(|q| crate::capacity::online_quant_bytes(m, q))
        .is_some();
    let bytes = if online { 1.0 } else { 2.0 };
    let share =
        12.0 * (v.hidden as f64).powi(2) * f64::from(v.layers) * bytes / f64::from(tp.max(1));
    Some((
        Estimate::range(-share, -share, -0.9 * share),
        "the vision tower --language-model-only does not build".into(),
    ))
}

/// The `video` object of `--media-io-kwargs`, when it parses.
fn video_kwargs(args: &EngineArgs) -> Option<serde_json::Value> {
    let Some(SettingValue::Text(t)) = args.get("media_io_kwargs").map(|s| &s.value) else {
        return None;
    };
    let json: serde_json::Value = serde_json::from_str(t).ok()?;
    json.get("video").cloned()
}

fn gpu_backend(video: &serde_json::Value) -> bool {
    ["video_backend", "backend"]
        .iter()
        .any(|k| video.get(k).and_then(|b| b.as_str()) == Some("pynvvideocodec"))
}

/// Per API server: 0.25–0.26 keep one retained decoder; from 0.27 `hw_decoders` (default 2)
/// decoders; 0.33 sizes each for `max_width × max_height` when both are given
/// (`video_decoders/pynvvideocodec.py :: get_pynvvideocodec_decoder_gpu_memory_bytes`: three
/// bytes per pixel, two cached surfaces, never under the default). Times `--api-server-count`.
fn decoder_bytes(args: &EngineArgs, video: &serde_json::Value) -> f64 {
    let v = &args.version;
    let count = if *v < V0_27 {
        1
    } else {
        video
            .get("hw_decoders")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(2)
    };
    let dim = |k: &str| video.get(k).and_then(serde_json::Value::as_u64);
    let each = match (dim("max_width"), dim("max_height")) {
        (Some(w), Some(h)) if *v >= V0_33 => DECODER_BYTES.max((w * h * 3 * 2) as f64),
        _ => DECODER_BYTES,
    };
    let servers = args.int("api_server_count").unwrap_or(1).max(1) as f64;
    servers * (each * count as f64 + DECODER_CONTEXT_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::testing::{args, dense};
    use crate::launch::Engine;
    use SettingValue::{Float, Int, Text};

    fn reserve(version: &str, multimodal: bool, pairs: &[(&str, SettingValue)]) -> f64 {
        let mut m = dense(32, 32, 8, 128);
        m.multimodal = multimodal;
        reserved(
            &args(Engine::Vllm, version, pairs),
            &m,
            &mut Notes::default(),
        )
    }

    /// Worked by hand from `reserve_mm_ipc_gpu_memory`: 4 GiB raw; two hardware decoders of
    /// 128 MiB and a 1,843.2 MiB context per API server; 0.26 keeps one decoder; from 0.33 an
    /// 8192 × 8192 decoder is 8192 × 8192 × 3 × 2 B = 384 MiB.
    #[test]
    fn the_api_servers_multimodal_budget_comes_out_of_the_kv_cache() {
        let gb4 = [("mm_ipc_gpu_memory_gb", Float(4.0))];
        assert_eq!(reserve("0.28.0", true, &gb4), 4.0 * GIB);
        assert_eq!(reserve("0.28.0", false, &gb4), 0.0);
        assert_eq!(reserve("0.24.0", true, &gb4), 0.0);
        assert_eq!(reserve("0.28.0", true, &[]), 0.0);

        let nvdec = |extra: &str| {
            (
                "media_io_kwargs",
                Text(format!(
                    r#"{{"video": {{"video_backend": "pynvvideocodec"{extra}}}}}"#
                )),
            )
        };
        let context = 1843.2 * MIB;
        assert_eq!(
            reserve("0.28.0", true, &[nvdec("")]),
            2.0 * 128.0 * MIB + context
        );
        assert_eq!(reserve("0.26.0", true, &[nvdec("")]), 128.0 * MIB + context);
        let two_servers = [nvdec(r#", "hw_decoders": 4"#), ("api_server_count", Int(2))];
        assert_eq!(
            reserve("0.30.0", true, &two_servers),
            2.0 * (4.0 * 128.0 * MIB + context)
        );
        // 8192 × 8192 × 6 = 402,653,184 B = 384 MiB per decoder, from 0.33 only.
        let big = [nvdec(r#", "max_width": 8192, "max_height": 8192"#)];
        assert_eq!(reserve("0.33.0", true, &big), 2.0 * 384.0 * MIB + context);
        assert_eq!(reserve("0.32.0", true, &big), 2.0 * 128.0 * MIB + context);
        let software = (
            "media_io_kwargs",
            Text(r#"{"video": {"video_backend": "opencv"}}"#.into()),
        );
        assert_eq!(reserve("0.33.0", true, &[software]), 0.0);
    }

    /// A model with a 27-layer, 1152-wide vision tower.
    fn vlm() -> Geometry {
        let mut m = dense(32, 32, 8, 128);
        m.multimodal = true;
        m.vision = Some(crate::model::VisionTower {
            layers: 27,
            hidden: 1152,
        });
        m
    }

    /// A 27-layer, 1152-wide tower (MoonViT, SigLIP-so400m) is 12 × 1152² × 27 × 2 B =
    /// 859,963,392 B; at TP 4 a rank holds 3/4 of it beyond its share: 644,972,544 B.
    #[test]
    fn data_parallel_encoders_keep_the_whole_tower_on_every_rank() {
        let m = vlm();
        let data = [("mm_encoder_tp_mode", Text("data".into()))];
        let extra = |pairs: &[(&str, SettingValue)], tp| {
            encoder_replicas(&args(Engine::Vllm, "0.21.0", pairs), &m, tp).map(|(e, _)| e)
        };
        let e = extra(&data, 4).unwrap();
        assert_eq!(
            (e.point, e.low, e.high),
            (644_972_544.0, 0.0, 644_972_544.0)
        );
        assert!(extra(&data, 1).is_none());
        assert!(extra(&[("mm_encoder_tp_mode", Text("weights".into()))], 4).is_none());
        assert!(extra(&[], 4).is_none());
    }

    /// `--language-model-only` builds no tower: the same 859,963,392 B tower comes off a TP 2
    /// rank's share (429,981,696 B), at half that where the count priced it online FP8.
    #[test]
    fn a_language_only_launch_drops_the_towers_share() {
        let m = vlm();
        let off = |pairs: &[(&str, SettingValue)]| {
            skipped_tower(&args(Engine::Vllm, "0.30.0", pairs), &m, 2).map(|(e, _)| e)
        };
        let only = ("language_model_only", SettingValue::Flag(true));
        let e = off(std::slice::from_ref(&only)).unwrap();
        assert_eq!((e.point, e.low), (-429_981_696.0, -429_981_696.0));
        assert!((e.high + 0.9 * 429_981_696.0).abs() < 1.0);
        let fp8 = off(&[only, ("quantization", Text("fp8".into()))]).unwrap();
        assert_eq!(fp8.point, -214_990_848.0);
        assert!(off(&[]).is_none());
    }
}

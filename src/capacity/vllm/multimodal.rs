//! GPU memory a multimodal launch's API server sequesters for decoding, carved out of the KV
//! budget after the profile run. 0.25–0.26 `v1/worker/gpu_worker.py ::
//! Worker._reserve_mm_ipc_gpu_memory`, 0.27+ `multimodal/gpu_ipc_memory.py ::
//! reserve_mm_ipc_gpu_memory` (read in the 0.25.0–0.28.0 and 0.30.0–0.33.0 wheels), applied to
//! a fixed `--kv-cache-memory-bytes` as well. A text-only model has no multimodal config and
//! reserves nothing.

use super::super::Notes;
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
}

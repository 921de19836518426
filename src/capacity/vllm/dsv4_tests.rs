//! DeepSeek-V4-Flash on vLLM 0.25.0, worked by hand from the engine's code (dsv4.rs cites each
//! function). The config: 43 decoder layers, `compress_ratios[..43]` = 2 of ratio 0, 21 of
//! ratio 4, 20 of ratio 128; head_dim 512, index_head_dim 128, sliding_window 128.

use super::*;
use crate::capacity::testing::args;
use crate::engine::SettingValue::{self, Int, Text};
use crate::launch::Engine;
use crate::source::FileId;

fn flash() -> Geometry {
    let json = include_str!("../../../fixtures/INP008/deepseek-v4-flash.json");
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    Geometry::from_config_json("deepseek-ai/DeepSeek-V4-Flash", "config.json", &v).unwrap()
}

fn on(gpu: &str, version: &str, pairs: &[(&str, SettingValue)]) -> Result<Layout, Vec<Finding>> {
    let m = flash();
    let c = m.compressed.clone().unwrap();
    let g = crate::gpu::lookup(gpu).unwrap();
    let a = args(Engine::Vllm, version, pairs);
    layout(
        &a,
        &m,
        &c,
        g,
        Loc::new(FileId(0), 0..0),
        &mut Notes::default(),
    )
}

fn fp8() -> [(&'static str, SettingValue); 1] {
    [("kv_cache_dtype", Text("fp8".into()))]
}

/// Pages (`_apply_alignment_padding` to 576 B):
/// - SWA cache, 64 tokens × 584 B = 37,376 → 37,440 (65 × 576);
/// - ratio-4 latents, 256 / 4 = 64 stored × 584 = 37,376 → 37,440;
/// - ratio-128 latents, 2 × 584 = 1,168 → 1,728;
/// - indexer keys, 64 × (128 + 4) = 8,448 → 8,640;
/// - ratio-4 compressor states, 4 tokens × 2·2·512 fp32 = 32,768 → 32,832, the indexer's
///   4 × 2·2·128 × 4 = 8,192 → 8,640; ratio-128 states 8 × 2·512 × 4 = 32,768 → 32,832.
///
/// Groups: full (21 × 37,440 + 21 × 8,640 + 20 × 1,728 = 1,002,240 B), SWA keyed (64, 128) with
/// 43 layers, ratio-4 states (4, 8) with 21 + 21, ratio-128 states (8, 128) with 20. Tuple
/// counts [21, 43, 21, 20]: `_approximate_gcd` from 21 pads 21 + 0 + 21 + 1 at 21 and
/// 1 + 1 + 1 + 2 = 5 at 22, the least: 22. SWA splits into ⌈43 / 22⌉ = 2 groups (22 and 21
/// layers); the 32,832-B states pad up to 37,440. Packed block: 37,440 B × 22 slots (the
/// 22-layer SWA group) + 8,640 × 21 + 1,728 × 20 = 823,680 + 181,440 + 34,560 = 1,039,680 B.
/// Startup check: 22 tuples × (37,440 + 8,640 + 1,728) = 22 × 47,808 = 1,051,776 B per page.
#[test]
fn flash_packs_five_groups_into_blocks_of_1_039_680_bytes() {
    let d = on("H200", "0.25.0", &fp8()).unwrap();
    let sums: Vec<u64> = d.groups.iter().map(Group::page_sum).collect();
    assert_eq!(
        sums,
        [
            1_002_240,
            22 * 37_440,
            21 * 37_440,
            21 * 37_440 + 21 * 8_640,
            20 * 37_440
        ]
    );
    assert_eq!(d.bytes_per_block, 1_039_680);
    assert_eq!(d.check_bytes_per_page, 1_051_776);
    assert_eq!(approximate_gcd(&[21, 43, 21, 20], 21), 22);
    // The full group's bytes per token: 1,002,240 / 256 = 3,915.
    assert_eq!(d.full_bytes_per_token(), 3_915.0);
    assert_eq!(d.block(), 256);
}

/// "GPU KV cache size" at max_model_len 1,048,576 and 8,192 batched tokens. Pages per request:
/// full 1,048,576 / 256 = 4,096; SWA ⌈min(127 + 8,192, len) / 64⌉ + 1 = 130 + 1 = 131 in each of
/// two groups; ratio-4 states ⌈8,199 / 4⌉ + 1 = 2,051; ratio-128 states ⌈8,319 / 8⌉ + 1 = 1,041.
/// Bytes: 4,096 × 1,002,240 + 131 × (823,680 + 786,240) + 2,051 × 967,680 + 1,041 × 748,800 =
/// 7,080,287,040, that is ⌈7,080,287,040 / 1,002,240⌉ = 7,065 full pages. 100,000 blocks:
/// int(100,000 / 7,065 × 1,048,576) = 14,841,840.
#[test]
fn the_logged_size_is_concurrency_times_max_model_len() {
    let d = on("H200", "0.25.0", &fp8()).unwrap();
    assert_eq!(d.logged(100_000, 1_048_576, 8_192), 14_841_840);
    // Block ids per request: 4,096 + 2 × 131 + 2,051 + 1,041 = 7,450.
    assert_eq!(d.blocks_for(1_048_576, 8_192), 7_450);
}

/// 10,000 blocks from 10,000 × 1,039,680 B: the startup check allows ⌊10,396,800,000 /
/// 1,051,776⌋ = 9,884 pages; the fixed part is 2 × 131 + 2,051 + 1,041 = 3,354, so ⌈len / 256⌉
/// ≤ 6,530: len 6,530 × 256 = 1,671,680 (the pool's 9,999 usable blocks allow more).
#[test]
fn the_longest_request_passes_the_startup_check() {
    let d = on("H200", "0.25.0", &fp8()).unwrap();
    let avail = 10_000.0 * 1_039_680.0;
    assert_eq!(d.num_blocks(avail), 10_000);
    assert_eq!(d.fit(10_000, avail, 8_192), 1_671_680);
    assert_eq!(d.fit(0, 0.0, 8_192), 0);
}

#[test]
fn releases_and_setups_outside_the_model_are_inp008() {
    for v in ["0.20.0", "0.24.0", "0.26.0", "0.33.0"] {
        let Err(f) = on("H200", v, &fp8()) else {
            panic!("{v} planned");
        };
        assert_eq!(f[0].rule, "INP008", "{v}");
    }
    // `auto` trips the FlashMLA path's fp8 assertion.
    assert!(on("H200", "0.25.0", &[]).is_err());
    assert!(on("RTX-PRO-6000", "0.25.0", &fp8()).is_err());
    let with = |k: &'static str, v: SettingValue| [fp8()[0].clone(), (k, v)];
    assert!(on("H200", "0.25.0", &with("block_size", Int(128))).is_err());
    assert!(on("H200", "0.25.0", &with("block_size", Int(256))).is_ok());
    let mtp = Text(r#"{"method":"mtp","num_speculative_tokens":1}"#.into());
    assert!(on("H200", "0.25.0", &with("speculative_config", mtp)).is_err());
    assert!(on("H200", "0.25.0", &with("pipeline_parallel_size", Int(2))).is_err());
}

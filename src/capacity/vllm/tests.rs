//! Expected values come from real vLLM 0.19 startup logs (../shared/validation): given the
//! KV memory the engine logged, the block count and logged token count must follow.
use super::groups::*;
use super::*;
use crate::capacity::testing::{args, dense};

fn tokens_for(m: &Geometry, tp: u32, kv_gib: f64) -> (u64, u64) {
    let a = args(Engine::Vllm, "0.19.0", &[]);
    let bs = 16;
    let shape = Shape {
        tp,
        pp: 1,
        dcp: 1,
        kv: "bfloat16",
        kvb: 2.0,
        bs,
        hma: true,
        version: &Version::new(0, 33, 0),
        mtp_layers: 0,
    };
    let g = grouping(&groups(m, &shape));
    let blocks = (kv_gib * GIB / g.bytes_per_block).floor() as u64;
    let per_req = blocks_per_request(&g, 8192, bs, 8192, &a.version, false);
    (blocks, (blocks as f64 / per_req as f64 * 8192.0) as u64)
}

#[test]
fn full_attention_max_len_is_whole_blocks_per_group_as_the_search_finds() {
    let v = Version::new(0, 19, 0);
    let full = |groups: Vec<u32>| Grouping {
        group_size: 36,
        kinds: groups
            .into_iter()
            .map(|n| (LayerKind::Full, n, 1))
            .collect(),
        bytes_per_block: 1.0,
    };
    // One group, block 16, 1,000 blocks: 16,000 tokens; a 17th in the last block is one too many.
    assert_eq!(max_len(&full(vec![1]), 1_000, 16, 0, &v, false), 16_000);
    // Two groups share the blocks: 3 blocks each, 1 left over.
    assert_eq!(max_len(&full(vec![1, 1]), 7, 16, 0, &v, false), 48);
    // From 0.33 one null block is kept back.
    let v33 = Version::new(0, 33, 0);
    assert_eq!(max_len(&full(vec![1]), 1_000, 16, 0, &v33, false), 15_984);
    for groups in [vec![], vec![1], vec![3], vec![1, 2], vec![7, 7, 7]] {
        let g = full(groups);
        for bs in [0, 1, 16, 64, 528] {
            for blocks in [0, 1, 2, 5, 99, 1_000, 123_457, 1 << 30, 1 << 40, u64::MAX] {
                for prefix in [false, true] {
                    assert_eq!(
                        max_len(&g, blocks, bs, 4096, &v, prefix),
                        search_len(&g, blocks, bs, 4096, &v, prefix),
                        "{:?} bs {bs} blocks {blocks}",
                        g.kinds
                    );
                }
            }
        }
    }
}

fn near(got: u64, want: u64) -> bool {
    (got as f64 - want as f64).abs() <= want as f64 * 0.002
}

#[test]
fn pipeline_stages_take_the_remainder_layers_in_the_middle() {
    // 94 layers over 4 stages: get_pp_indices gives [23, 24, 24, 23]; at 1 GiB per layer
    // with a 1 GiB embedding on the first stage and a 1 GiB head on the last, every stage
    // holds 24 GiB: the even share.
    let mut m = dense(94, 64, 4, 128);
    let g = GIB as u64;
    m.weight_parts.layers = 94 * g;
    m.weight_parts.embedding = g;
    m.weight_bytes = 96 * g;
    assert_eq!(pp_stage_extra(&m, 1, 4), 0.0);
    // 10 layers over 4 stages: [2, 3, 3, 2]; the middle stages hold 3 GiB against 12 / 4.
    let mut m = dense(10, 32, 8, 128);
    m.weight_parts.layers = 10 * g;
    m.weight_parts.embedding = 0;
    m.weight_bytes = 10 * g;
    assert!((pp_stage_extra(&m, 1, 4) - 0.5 * GIB).abs() < 1.0);
    // Split again over 2 TP ranks, and nothing without pipeline stages.
    assert!((pp_stage_extra(&m, 2, 4) - 0.25 * GIB).abs() < 1.0);
    assert_eq!(pp_stage_extra(&m, 1, 1), 0.0);
}

#[test]
fn graph_profile_follows_the_rank_width_from_0_20() {
    // 40 heads of 128: a 5120-wide rank at TP 1 (or a PP stage) takes 1 GiB, TP 2 half.
    let m = dense(40, 40, 8, 128);
    let h100 = crate::gpu::lookup("H100-80GB").unwrap();
    let graph_profile = |a: &EngineArgs, m: &Geometry, tp: u32| graph_profile(a, m, h100, tp);
    let v28 = args(Engine::Vllm, "0.28.0", &[]);
    assert!((graph_profile(&v28, &m, 1).point - GIB).abs() < 1.0);
    assert!((graph_profile(&v28, &m, 2).point - 0.5 * GIB).abs() < 1.0);
    assert_eq!(graph_profile(&v28, &m, 1).low, 0.0);
    // Not counted before 0.20; eager launches keep it on the pessimistic side only.
    let v19 = args(Engine::Vllm, "0.19.0", &[]);
    assert_eq!(graph_profile(&v19, &m, 1).high, 0.0);
    // 0.20.0's envs.py already defaults VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS to 1.
    let v20 = args(Engine::Vllm, "0.20.0", &[]);
    assert!((graph_profile(&v20, &m, 1).point - GIB).abs() < 1.0);
    let eager = args(
        Engine::Vllm,
        "0.28.0",
        &[("enforce_eager", SettingValue::Flag(true))],
    );
    let e = graph_profile(&eager, &m, 1);
    assert_eq!(e.point, 0.0);
    assert!((e.high - GIB).abs() < 1.0);
}

#[test]
fn rocm_takes_the_graph_estimate_from_0_26() {
    let m = dense(40, 40, 8, 128);
    let mi = crate::gpu::lookup("MI355X").unwrap();
    let at = |v: &str| super::graph_profile(&args(Engine::Vllm, v, &[]), &m, mi, 1);
    for v in ["0.20.0", "0.22.0", "0.25.0"] {
        assert_eq!(at(v).high, 0.0, "{v}");
    }
    assert!((at("0.26.0").point - GIB).abs() < 1.0);
}

#[test]
fn default_utilization_is_each_release_cache_config_default() {
    // `CacheConfig.gpu_memory_utilization` read from the PyPI wheels' vllm/config/cache.py:
    // 0.17.x line 49 and 0.18.x line 41 `Field(default=0.9, ...)`, 0.20.x line 66 `0.92`.
    for (release, want) in [
        ("0.17.0", 0.9),
        ("0.17.1", 0.9),
        ("0.18.0", 0.9),
        ("0.18.1", 0.9),
        ("0.20.0", 0.92),
        ("0.20.2", 0.92),
    ] {
        let got = utilization(&args(Engine::Vllm, release, &[]), &mut Notes::default());
        assert_eq!(got.point, want, "{release}");
    }
}

#[test]
fn nccl_buffers_count_on_nvswitch_parts_only() {
    let h100 = crate::gpu::lookup("H100-80GB").unwrap();
    let l4 = crate::gpu::lookup("L4").unwrap();
    assert_eq!(tp_comm(h100, 1).high, 0.0);
    assert_eq!(tp_comm(h100, 2).point, 1.8 * GIB);
    // Without a switch fabric: P2P/SHM channel buffers only, up to 0.6 GiB on the pessimistic
    // side, also for a consumer card outside `PCIE_ONLY`; AMD Instinct's xGMI keeps 1.8 GiB.
    for name in ["L4", "RTX-5090"] {
        let pcie = tp_comm(crate::gpu::lookup(name).unwrap(), 4);
        assert_eq!((pcie.point, pcie.high), (0.0, 0.6 * GIB), "{name}");
    }
    assert_eq!(tp_comm(l4, 1).high, 0.0);
    let mi300x = crate::gpu::lookup("MI300X").unwrap();
    assert_eq!(tp_comm(mi300x, 2).point, 1.8 * GIB);
}

#[test]
fn the_tower_is_built_unless_the_launch_may_skip_it() {
    // A counted multimodal checkpoint logs at most 1 % under the count when its tower is
    // built; --language-model-only or a --limit-mm-per-prompt may skip it (2 %).
    let built = args(Engine::Vllm, "0.20.1", &[]);
    let skipped = args(
        Engine::Vllm,
        "0.20.1",
        &[("language_model_only", SettingValue::Flag(true))],
    );
    let limited = args(
        Engine::Vllm,
        "0.20.1",
        &[(
            "limit_mm_per_prompt",
            SettingValue::Text("{\"image\":0}".into()),
        )],
    );
    assert!(builds_tower(&built));
    assert!(!builds_tower(&skipped));
    assert!(!builds_tower(&limited));
}

#[test]
fn gemma3_groups_sliding_layers_in_tens() {
    // 62 layers: 52 sliding (1024) and 10 global, 16 KV heads of 128: "Available KV cache
    // memory: 19.53 GiB", "GPU KV cache size: 36,560 tokens", 15,997 blocks.
    let mut m = dense(62, 32, 16, 128);
    m.layers = (0..62)
        .map(|i| {
            if i % 6 == 5 {
                LayerKind::Full
            } else {
                LayerKind::Sliding { window: 1024 }
            }
        })
        .collect();
    m.layers.truncate(62);
    let full = m
        .layers
        .iter()
        .filter(|l| matches!(l, LayerKind::Full))
        .count();
    assert_eq!(full, 10);
    let (blocks, tokens) = tokens_for(&m, 1, 19.53);
    assert!(near(blocks, 15_997), "{blocks}");
    assert!(near(tokens, 36_560), "{tokens}");
}

#[test]
fn uniform_llama_pool_is_blocks_times_block_size() {
    // Llama-3.1-8B TP1: 58.11 GiB → 29,751 blocks → 476,016 tokens.
    let (blocks, tokens) = tokens_for(&dense(32, 32, 8, 128), 1, 58.11);
    assert!(
        near(blocks, 29_751) && near(tokens, 476_016),
        "{blocks} {tokens}"
    );
}

#[test]
fn llama4_chunked_layers_form_three_groups() {
    // Llama-4-Scout TP4: 36 chunked (8192) + 12 global layers, 8 KV heads of 128:
    // 16.75 GiB → 365,968 tokens.
    let mut m = dense(48, 40, 8, 128);
    m.layers = (0..48)
        .map(|i| {
            if i % 4 == 3 {
                LayerKind::Full
            } else {
                LayerKind::Chunked { size: 8192 }
            }
        })
        .collect();
    let (_, tokens) = tokens_for(&m, 4, 16.75);
    assert!(near(tokens, 365_968), "{tokens}");
}

/// Qwen3.6-35B-A3B's text model from its config.json: 40 layers, every fourth full attention
/// (2 KV heads × 256), gated delta net with 16 key and 32 value heads of 128, conv kernel 4.
fn qwen36_a3b() -> Geometry {
    let mut g = dense(40, 16, 2, 256);
    g.text_model_type = "qwen3_5_moe_text".into();
    g.layers = (0..40)
        .map(|i| {
            if i % 4 == 3 {
                LayerKind::Full
            } else {
                LayerKind::Linear
            }
        })
        .collect();
    g.linear = Some(crate::model::LinearAttn {
        num_key_heads: 16,
        num_value_heads: 32,
        key_head_dim: 128,
        value_head_dim: 128,
        conv_kernel: 4,
    });
    g
}

#[test]
fn hybrid_attention_block_holds_one_linear_attention_state() {
    let m = qwen36_a3b();
    let block = |pairs: &[(&str, SettingValue)]| {
        let a = args(Engine::Vllm, "0.30.0", pairs);
        let state = hybrid::state_page(&a, &m, 1, 2.0, 0);
        let attn = layer_bytes(&m, 1, 1, "bfloat16", 2.0);
        hybrid::attention_block(16, false, state, attn, &mut Notes::default())
    };
    let text = |s: &str| SettingValue::Text(s.into());
    // conv 8192 × 3 × 2 B + SSM 32 × 128 × 128 × 4 B (the config's float32) = 2,146,304 B;
    // one token of attention is 2 × 2 × 256 × 2 B = 2,048 B: 16 × ⌈2,146,304 / 32,768⌉ = 1,056.
    assert_eq!(block(&[]), 1056);
    // `--mamba-cache-dtype bfloat16` is the conv state's dtype; the SSM state stays float32.
    assert_eq!(block(&[("mamba_cache_dtype", text("bfloat16"))]), 1056);
    // A bf16 SSM state: 49,152 + 1,048,576 B → 16 × 34.
    assert_eq!(block(&[("mamba_ssm_cache_dtype", text("bfloat16"))]), 544);
    // A larger block stands.
    let a = args(Engine::Vllm, "0.30.0", &[]);
    let state = hybrid::state_page(&a, &m, 1, 2.0, 0);
    assert_eq!(
        hybrid::attention_block(2048, false, state, 2048.0, &mut Notes::default()),
        2048
    );
    // Attention-only models keep their block.
    assert_eq!(
        hybrid::state_page(&a, &dense(32, 32, 8, 128), 1, 2.0, 0),
        0.0
    );
}

#[test]
fn hybrid_pool_counts_whole_attention_blocks_per_request() {
    // 0.30's logged pool is concurrency × max_model_len: with 1,056-token blocks a 262,144-token
    // request takes ⌈262,144 / 1,056⌉ = 249 attention blocks and 3 × 2 state blocks (prefix
    // caching, "align"; 3 × 1 without).
    let m = qwen36_a3b();
    let v = Version::new(0, 30, 0);
    let shape = Shape {
        tp: 1,
        pp: 1,
        dcp: 1,
        kv: "bfloat16",
        kvb: 2.0,
        bs: 1056,
        hma: true,
        version: &Version::new(0, 33, 0),
        mtp_layers: 0,
    };
    let g = grouping(&groups(&m, &shape));
    assert_eq!(blocks_per_request(&g, 262_144, 1056, 32_768, &v, true), 255);
    assert_eq!(
        blocks_per_request(&g, 262_144, 1056, 32_768, &v, false),
        252
    );
}

/// A public vLLM 0.24.0 log (github.com/noonghunna/club-3090 issue 652, Qwen3.6-35B-A3B NVFP4,
/// fp8 KV, prefix caching, `--max-model-len 131072`): "Available KV cache memory: 6.01 GiB",
/// "GPU KV cache size: 569,878 tokens", "Maximum concurrency ... 4.35x". One fp8 attention token
/// is 1,024 B, so the block is 16 × ⌈2,146,304 / 16,384⌉ = 2,096 tokens and ten layers' pages make
/// a 21,463,040-byte block: 300 blocks, 63 + 3 × 2 per request.
#[test]
fn hybrid_pool_matches_a_qwen36_log() {
    let m = qwen36_a3b();
    let a = args(Engine::Vllm, "0.24.0", &[]);
    let state = hybrid::state_page(&a, &m, 1, 2.0, 0);
    let bs = hybrid::attention_block(16, false, state, 1024.0, &mut Notes::default());
    assert_eq!(bs, 2096);
    let shape = Shape {
        tp: 1,
        pp: 1,
        dcp: 1,
        kv: "fp8",
        kvb: 1.0,
        bs,
        hma: true,
        version: &Version::new(0, 33, 0),
        mtp_layers: 0,
    };
    let g = grouping(&groups(&m, &shape));
    let blocks = (6.01 * GIB / g.bytes_per_block).floor() as u64;
    assert_eq!(blocks, 300);
    let per_req = blocks_per_request(&g, 131_072, bs, 16_384, &a.version, true);
    assert_eq!(per_req, 69);
    assert_eq!((blocks as f64 / per_req as f64 * 131_072.0) as u64, 569_878);
}

/// On GB10 the non-KV point grows by the median public profile-run host growth (3.82 GiB), its
/// high end by the largest (31.6 GiB), and the start needs MemAvailable ≥ util × 121.63 GiB; a discrete card is left alone.
#[test]
fn unified_parts_widen_the_low_end_and_record_the_startup_check() {
    let gb10 = crate::gpu::lookup("GB10").unwrap();
    let other = Estimate::range(2.0 * GIB, 1.0 * GIB, 3.0 * GIB);
    let mut notes = Notes::default();
    let e = unified_host_growth(gb10, other, &mut notes);
    assert_eq!((e.point, e.low), (2.0 * GIB + 3.82 * GIB, 1.0 * GIB));
    assert_eq!(e.high, 3.0 * GIB + 31.6 * GIB);
    unified_startup_check(gb10, 0.85, &mut notes);
    let need = notes.0.last().unwrap();
    assert_eq!(need.value, (0.85 * gb10.cuda_total_bytes as f64).ceil());
    assert!(need.source.contains("may be refused"));

    let h100 = crate::gpu::lookup("H100-80GB").unwrap();
    let mut notes = Notes::default();
    let e = unified_host_growth(h100, other, &mut notes);
    unified_startup_check(h100, 0.85, &mut notes);
    assert_eq!(e.high, 3.0 * GIB);
    assert!(notes.0.is_empty());
}

/// `get_batch_defaults` takes 8192 tokens / 1024 sequences for a ≥ 70 GiB part, but on GB10 NVML
/// raises NOT_SUPPORTED for memory and the except branch reads 0 bytes: 2048 / 256, as the public
/// DGX Spark log's compile range (1, 2048) shows. An H100 keeps the large defaults.
#[test]
fn gb10_takes_the_small_batch_defaults_nvml_cannot_size_it() {
    let gb10 = crate::gpu::lookup("GB10").unwrap();
    assert!(gb10.cuda_total_bytes as f64 / GIB >= 70.0);
    assert_eq!(batch_defaults(gb10), (2048, 256));
    let h100 = crate::gpu::lookup("H100-80GB").unwrap();
    assert_eq!(batch_defaults(h100), (8192, 1024));
}

/// Gemma-4-31B's text model: 60 layers, every sixth full attention with 4 KV heads of 512, the
/// others sliding (window 1024) with 16 KV heads of 256.
fn gemma4_31b() -> Geometry {
    let mut m = dense(60, 32, 4, 512);
    m.layers = (0..60)
        .map(|i| {
            if i % 6 == 5 {
                LayerKind::Full
            } else {
                LayerKind::Sliding { window: 1024 }
            }
        })
        .collect();
    m.swa_heads = Some(crate::model::SwaHeads {
        num_kv_heads: 16,
        head_dim: 256,
        v_head_dim: 256,
    });
    m
}

#[test]
fn sliding_layers_with_their_own_heads_have_their_own_page() {
    // vLLM 0.26.0, one B300, Gemma-4-31B-it, --max-model-len 16384, 8192 batched tokens, async
    // scheduling: "Available KV cache memory: 182.37 GiB" → "GPU KV cache size: 217,116 tokens"
    // (13.25x). A sliding page (16 × 512 × 2 B × 16) is twice a full one (4 × 1024 × 2 B × 16),
    // so full layers take 32 tokens per block; 2 × 8192 in-flight tokens exceed the window, so
    // each sliding group holds the whole request, plus the one block
    // `SlidingWindowSpec.max_admission_blocks_per_request` always adds: 74,698 blocks / 5,637 =
    // 13.2513 → 217,110 tokens (without it 5,632 blocks would log 217,303).
    let m = gemma4_31b();
    let v = Version::new(0, 26, 0);
    let shape = Shape {
        tp: 1,
        pp: 1,
        dcp: 1,
        kv: "bfloat16",
        kvb: 2.0,
        bs: 16,
        hma: true,
        version: &v,
        mtp_layers: 0,
    };
    let g = grouping(&groups(&m, &shape));
    assert_eq!(g.kinds.len(), 2);
    assert_eq!(g.kinds[0], (LayerKind::Full, 1, 2));
    assert_eq!(g.kinds[1], (LayerKind::Sliding { window: 1024 }, 5, 1));
    let blocks = (182.37 * GIB / g.bytes_per_block).floor() as u64;
    let per_req = blocks_per_request(&g, 16384, 16, 2 * 8192, &v, true);
    assert_eq!(per_req, 512 + 5 * 1025);
    let tokens = (blocks as f64 / per_req as f64 * 16384.0) as u64;
    // The logged 182.37 GiB is rounded to ±0.005 GiB: ±0.003 %.
    assert!(
        (tokens as f64 - 217_116.0).abs() < 217_116.0 * 0.0005,
        "{tokens}"
    );
    // Without the hybrid manager the same layers share one group: the mean page per layer.
    let plain = grouping(&groups(
        &m,
        &Shape {
            hma: false,
            ..shape
        },
    ));
    assert_eq!(plain.kinds, vec![(LayerKind::Full, 1, 1)]);
    assert_eq!(
        plain.bytes_per_block,
        (50.0 * 16384.0 + 10.0 * 8192.0) * 16.0
    );
}

#[test]
fn logged_pool_is_concurrency_times_length_from_0_20_1() {
    // `kv_cache_utils.py :: _report_kv_cache_config` logs num_blocks // groups × block size in
    // the 0.20.0 wheel and concurrency × max_model_len in the 0.20.1 and 0.20.2 wheels: with
    // sliding layers that hold a window, not the whole request, the second is the larger.
    let m = gemma4_31b();
    let gpu = crate::gpu::lookup("H100").expect("catalog H100").clone();
    let pool = |v: &str| {
        let a = args(
            Engine::Vllm,
            v,
            &[("max_model_len", SettingValue::Int(131_072))],
        );
        plan(&Inputs {
            args: &a,
            model: &m,
            gpu: &gpu,
            gpu_count: None,
            at: crate::source::Loc::new(crate::source::FileId(0), 0..0),
        })
        .expect("a plan")
        .pool_tokens
    };
    let (whole_blocks, concurrency) = (pool("0.20.0"), pool("0.20.1"));
    assert_eq!(whole_blocks % 16, 0, "{whole_blocks}");
    assert!(
        concurrency > 3 * whole_blocks,
        "{concurrency} vs {whole_blocks}"
    );
}

/// Qwen3.6-27B's text model from its config.json: 64 layers, every fourth full attention
/// (4 KV heads × 256), gated delta net with 16 key and 48 value heads of 128, conv kernel 4,
/// one MTP layer (`mtp_num_hidden_layers`).
fn qwen36_27b() -> Geometry {
    let mut g = qwen36_a3b();
    g.num_layers = 64;
    g.num_kv_heads = 4;
    g.text_model_type = "qwen3_5_text".into();
    g.layers = (0..64)
        .map(|i| {
            if i % 4 == 3 {
                LayerKind::Full
            } else {
                LayerKind::Linear
            }
        })
        .collect();
    if let Some(lin) = g.linear.as_mut() {
        lin.num_value_heads = 48;
    }
    g.nextn_layers = 1;
    g
}

fn mtp_args(version: &str, spec: &str) -> EngineArgs {
    args(
        Engine::Vllm,
        version,
        &[("speculative_config", SettingValue::Text(spec.into()))],
    )
}

/// The 99sono DGX Spark logs (fixtures/validation/vllm.jsonl): "Setting attention block size to
/// 1568 tokens" without MTP and "1600 tokens" with two speculative tokens (Qwen3.6-27B, 0.23.1),
/// 2128 with two for Qwen3.6-35B-A3B (0.22.1), where kvlint planned 2096 before.
#[test]
fn speculative_tokens_widen_the_gated_deltanet_conv_state() {
    let fp8_block = |m: &Geometry, a: &EngineArgs, num_spec: u32| {
        let state = hybrid::state_page(a, m, 1, 2.0, num_spec);
        // fp8 KV: 2 × kv_heads × 256 × 1 B per token.
        let attn = layer_bytes(m, 1, 1, "fp8", 1.0);
        (
            state,
            hybrid::attention_block(16, false, state, attn, &mut Notes::default()),
        )
    };
    let a = args(Engine::Vllm, "0.23.1", &[]);
    let m = qwen36_27b();
    // conv_dim = 16 × 128 × 2 + 48 × 128 = 10,240; SSM 48 × 128 × 128 × 4 B = 3,145,728 B.
    // No drafting: conv 10,240 × 3 × 2 B = 61,440 → 3,207,168 B; one token is 2,048 B, so
    // 16 × ⌈3,207,168 / 32,768⌉ = 16 × 98 = 1,568.
    assert_eq!(fp8_block(&m, &a, 0), (3_207_168.0, 1568));
    // Two speculative tokens: conv 10,240 × 5 × 2 B = 102,400 → 3,248,128 B,
    // 16 × ⌈3,248,128 / 32,768⌉ = 16 × 100 = 1,600.
    assert_eq!(fp8_block(&m, &a, 2), (3_248_128.0, 1600));
    // 35B-A3B: conv_dim 8,192, SSM 2,097,152 B, one token 1,024 B. Conv 8,192 × 3 × 2 B:
    // 2,146,304 B = 16 × 131 × 1,024 exactly → 2,096; with 8,192 × 5 × 2 B: 2,179,072 B →
    // 16 × ⌈2,179,072 / 16,384⌉ = 16 × 133 = 2,128.
    let m = qwen36_a3b();
    assert_eq!(fp8_block(&m, &a, 0), (2_146_304.0, 2096));
    assert_eq!(fp8_block(&m, &a, 2), (2_179_072.0, 2128));
}

#[test]
fn speculative_token_count_comes_from_the_config_or_the_mtp_layers() {
    let m = qwen36_27b();
    let n = |spec: &str| hybrid::spec_tokens(&mtp_args("0.23.1", spec), &m);
    assert_eq!(n(r#"{"method":"mtp","num_speculative_tokens":2}"#), 2);
    // MTP without a count drafts n_predict = mtp_num_hidden_layers tokens.
    assert_eq!(n(r#"{"method":"qwen3_5_mtp"}"#), 1);
    assert_eq!(n(r#"{"method":"ngram","num_speculative_tokens":4}"#), 4);
    assert_eq!(
        hybrid::spec_tokens(&args(Engine::Vllm, "0.23.1", &[]), &m),
        0
    );
    // Only an MTP drafter's layers join the target's groups, and only on a GDN hybrid.
    let layers = |spec: &str, m: &Geometry| hybrid::mtp_group_layers(&mtp_args("0.23.1", spec), m);
    assert_eq!(
        layers(r#"{"method":"mtp","num_speculative_tokens":2}"#, &m),
        1
    );
    // No method and no model: `SpeculativeConfig.__post_init__` refuses it; nothing is drafted.
    assert_eq!(layers(r#"{"num_speculative_tokens":2}"#, &m), 0);
    assert_eq!(
        layers(r#"{"method":"ngram","num_speculative_tokens":2}"#, &m),
        0
    );
    let mut dense_mtp = dense(32, 32, 8, 128);
    dense_mtp.nextn_layers = 1;
    assert_eq!(layers(r#"{"method":"mtp"}"#, &dense_mtp), 0);
}

/// "Add 3 padding layers, may waste at most 6.25% KV cache memory" (27B) and "... 10.00%"
/// (35B-A3B): the MTP layer makes 17 (11) full-attention layers against 48 (30) GDN ones;
/// 48 ≥ 1.5 × 17, so the group size is the smaller count, 17: one full group and ⌈48 / 17⌉ = 3
/// GDN groups holding 51 slots for 48 layers (3 / 48 = 6.25 %); 35B-A3B: 11, 1 + ⌈30 / 11⌉ = 3
/// groups, 33 − 30 = 3 padding (10 %). Without MTP the counts are 16 and 10, with no padding.
#[test]
fn mtp_layer_joins_the_full_attention_group() {
    let layout = |m: &Geometry, mtp_layers: u32| {
        let shape = Shape {
            tp: 1,
            pp: 1,
            dcp: 1,
            kv: "fp8",
            kvb: 1.0,
            bs: 1600,
            hma: true,
            version: &Version::new(0, 23, 1),
            mtp_layers,
        };
        let g = grouping(&groups(m, &shape));
        (g.group_size, g.kinds, g.bytes_per_block)
    };
    // One fp8 page of the 27B is 1,600 × 2,048 B = 3,276,800 B.
    let (size, kinds, block) = layout(&qwen36_27b(), 1);
    assert_eq!(size, 17);
    assert_eq!(
        kinds,
        vec![(LayerKind::Full, 1, 1), (LayerKind::Linear, 3, 1)]
    );
    assert_eq!(block, 17.0 * 3_276_800.0);
    let (size, kinds, _) = layout(&qwen36_27b(), 0);
    assert_eq!(size, 16);
    assert_eq!(
        kinds,
        vec![(LayerKind::Full, 1, 1), (LayerKind::Linear, 3, 1)]
    );
    let (size, kinds, _) = layout(&qwen36_a3b(), 1);
    assert_eq!(size, 11);
    assert_eq!(
        kinds,
        vec![(LayerKind::Full, 1, 1), (LayerKind::Linear, 3, 1)]
    );
}

/// The djangodevreng DGX Spark log (fixtures/validation/vllm.jsonl,
/// vllm-djangodevreng-nemotron3-super-nvfp4-mtp3-gb10): Nemotron-3-Super with
/// `{"method": "mtp", "num_speculative_tokens": 3}`, fp8 KV, float32 SSM cache, "Setting
/// attention block size to 8432 tokens" and "Add 5 padding layers, may waste at most 12.50%".
#[test]
fn nemotron_h_mtp_widens_the_mamba2_conv_state_and_joins_the_attention_group() {
    let m = crate::model::catalog_lookup("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4").unwrap();
    let spec = r#"{"method": "mtp", "num_speculative_tokens": 3, "moe_backend": "triton"}"#;
    let a = mtp_args("0.19.2", spec);
    assert_eq!(hybrid::spec_tokens(&a, &m), 3);
    // One MTP step "*E" (num_nextn_predict_layers 1): one attention layer.
    assert_eq!(hybrid::mtp_group_layers(&a, &m), 1);
    // conv_dim = 128 × 64 + 2 × 8 × 128 = 10,240; SSM 128 × 64 × 128 = 1,048,576 × 4 B.
    // Without drafting: conv 10,240 × 3 × 2 B = 61,440 → 4,255,744 B; a token of one fp8
    // attention layer is 2 × 2 × 128 × 1 B = 512 B, so 16 × ⌈4,255,744 / 8,192⌉ = 16 × 520 =
    // 8,320 (kvlint's block before). Three speculative tokens: 10,240 × 6 × 2 B = 122,880 →
    // 4,317,184 B = 527 × 8,192 exactly → 16 × 527 = 8,432, the logged block.
    let block = |a: &EngineArgs, num_spec: u32| {
        let state = hybrid::state_page(a, &m, 1, 2.0, num_spec);
        let attn = layer_bytes(&m, 1, 1, "fp8", 1.0);
        assert_eq!(attn, 512.0);
        (
            state,
            hybrid::attention_block(16, false, state, attn, &mut Notes::default()),
        )
    };
    assert_eq!(block(&a, 0), (4_255_744.0, 8320));
    assert_eq!(block(&a, 3), (4_317_184.0, 8432));
    // Before 0.17.0 `nemotron_h.py` passed no `num_spec` and there was no Nemotron-H MTP model.
    let old = mtp_args("0.16.0", spec);
    assert_eq!(block(&old, 3), (4_255_744.0, 8320));
    assert_eq!(hybrid::mtp_group_layers(&old, &m), 0);
    // 8 + 1 attention layers against 40 Mamba2 ones: 40 ≥ 1.5 × 9, so groups of 9: one
    // attention group and ⌈40 / 9⌉ = 5 Mamba groups holding 45 slots for 40 layers, 5 padding
    // (5 / 40 = 12.5 %). Without the MTP layer: groups of 8, 40 / 8 = 5, no padding.
    let layout = |mtp_layers: u32| {
        let shape = Shape {
            tp: 1,
            pp: 1,
            dcp: 1,
            kv: "fp8",
            kvb: 1.0,
            bs: 8432,
            hma: true,
            version: &Version::new(0, 19, 2),
            mtp_layers,
        };
        let g = grouping(&groups(&m, &shape));
        (g.group_size, g.kinds, g.bytes_per_block)
    };
    let kinds = vec![(LayerKind::Full, 1, 1), (LayerKind::Linear, 5, 1)];
    // One page: 8,432 × 512 B = 4,317,184 B; a block spans the group size's layers.
    assert_eq!(layout(1), (9, kinds.clone(), 9.0 * 4_317_184.0));
    assert_eq!(layout(0), (8, kinds, 8.0 * 4_317_184.0));
}

/// nvidia/Gemma-4-26B-A4B-NVFP4 on vLLM 0.20.2 (fixtures/validation/vllm.jsonl,
/// vllm-99sono-gemma4-26b-a4b-nvfp4-rtx5090-v0202): "Available KV cache memory: 4.58 GiB",
/// "GPU KV cache size: 286,007 tokens" at --max-model-len 256000, --max-num-batched-tokens
/// 16384, fp8 KV. Before 0.26.0 a sliding group holds the window and one batch
/// (`SlidingWindowSpec.max_admission_blocks_per_request` takes `max_num_batched_tokens`).
#[test]
fn sliding_groups_hold_one_batch_beyond_the_window_before_0_26() {
    let m = crate::model::catalog_lookup("nvidia/Gemma-4-26B-A4B-NVFP4").unwrap();
    let v = Version::new(0, 20, 2);
    let shape = Shape {
        tp: 1,
        pp: 1,
        dcp: 1,
        kv: "fp8_e4m3",
        kvb: 1.0,
        bs: 16,
        hma: true,
        version: &v,
        mtp_layers: 0,
    };
    let g = grouping(&groups(&m, &shape));
    // A sliding page is 16 × 2 × 8 × 256 × 1 B = 65,536 B; a full layer's token is
    // 2 × 2 × 512 B, so its page holds 32 tokens. 5 full layers against 25 sliding ones.
    assert_eq!(
        g.kinds,
        vec![
            (LayerKind::Full, 1, 2),
            (LayerKind::Sliding { window: 1024 }, 5, 1)
        ]
    );
    assert_eq!(g.bytes_per_block, 5.0 * 65_536.0);
    // 256,000 / 32 = 8,000 full blocks; each sliding group ⌈(1,023 + 16,384) / 16⌉ + 1 = 1,089.
    let per_req = blocks_per_request(&g, 256_000, 16, 16_384, &v, true);
    assert_eq!(per_req, 8_000 + 5 * 1_089);
    // 4.58 GiB / 327,680 B = 15,007 blocks: 1.116 requests × 256,000 tokens.
    let blocks = (4.58 * GIB / g.bytes_per_block).floor() as u64;
    let tokens = blocks as f64 / per_req as f64 * 256_000.0;
    assert!((tokens - 286_007.0).abs() < 286_007.0 * 0.002, "{tokens}");
    // Two batches (0.26.0's `max_in_flight_tokens` under async scheduling) would log 206,938.
    let two = blocks_per_request(&g, 256_000, 16, 32_768, &v, true);
    assert!(blocks as f64 / two as f64 * 256_000.0 < 210_000.0);
}

#[test]
fn data_parallel_ranks_split_the_routed_experts() {
    // 8 GB of routed experts (set below) on the DeepSeek-V3 test geometry. FusedMoE
    // flattens TP across DP (FusedMoEParallelConfig.make): at TP 2, DP 4 each rank holds 1/8
    // of the routed experts where the even split gave it 1/2, so it drops 3/8 of them.
    let mut m = crate::capacity::testing::deepseek_v3();
    m.weight_parts.routed_experts = 8_000_000_000;
    use crate::engine::SettingValue::{Flag, Int};
    let dp4 = args(
        Engine::Vllm,
        "0.17.0",
        &[
            ("data_parallel_size", Int(4)),
            ("enable_expert_parallel", Flag(true)),
        ],
    );
    let (e, why) = dp_expert_share(&dp4, &m, 2, 1, 4).unwrap();
    assert_eq!(e.point, -3_000_000_000.0);
    assert!(why.contains("1/8"), "{why}");
    // Without EP the experts are TP-sharded over the same 8 devices: the same bytes.
    let dp4_tp = args(Engine::Vllm, "0.17.0", &[("data_parallel_size", Int(4))]);
    assert_eq!(
        dp_expert_share(&dp4_tp, &m, 2, 1, 4).unwrap().0.point,
        -3_000_000_000.0
    );
    // One DP rank, or a dense model: nothing to take back.
    assert!(dp_expert_share(&dp4, &m, 2, 1, 1).is_none());
    m.weight_parts.routed_experts = 0;
    assert!(dp_expert_share(&dp4, &m, 2, 1, 4).is_none());
}

/// A declared 4-bit layout that the loader converts (NVFP4) keeps +3 % over its priced weights on
/// CUDA, where the logged figure is the allocator's live peak, and +10 % on ROCm, where the
/// device's used memory also counts the blocks a conversion freed.
#[test]
fn declared_4_bit_headroom_is_wider_on_rocm() {
    let mut m = dense(32, 32, 8, 128);
    m.quantization = Some(crate::model::Quantization {
        method: "modelopt".into(),
        weight_bits: 4,
        kv_cache_fp8: false,
        group_size: Some(16),
    });
    let a = args(Engine::Vllm, "0.22.0", &[]);
    let high_over_point = |name: &str| {
        let gpu = crate::gpu::lookup(name).expect("catalog GPU").clone();
        let p = plan(&Inputs {
            args: &a,
            model: &m,
            gpu: &gpu,
            gpu_count: None,
            at: crate::source::Loc::new(crate::source::FileId(0), 0..0),
        })
        .expect("a plan");
        let w = p
            .assumptions
            .iter()
            .find(|n| n.term == "weights_bytes_per_rank")
            .expect("weights term");
        w.high.expect("a range") / w.value
    };
    assert!((high_over_point("H100-80GB") - 1.03).abs() < 1e-9);
    assert!((high_over_point("MI300X") - 1.10).abs() < 1e-9);
}

//! Expected values are the worked examples of sglang-capacity.md §2.1 and §7, computed
//! there from the engine's formulas.
use super::*;
use crate::capacity::testing::{args, deepseek_v3, deepseek_v32, dense};
use crate::engine::SettingValue::{Flag, Int, Text};
use crate::gpu;
use crate::gpu::GpuSpec;
use crate::model::{Geometry, LayerKind};

fn gpu(name: &str) -> GpuSpec {
    gpu::lookup(name).unwrap().clone()
}

fn fraction(g: &str, m: &Geometry, pairs: &[(&str, crate::engine::SettingValue)]) -> f64 {
    let a = args(Engine::Sglang, "0.5.23", pairs);
    default_fraction(&a, m, &gpu(g), &layout(&a), role(&a)).0
}

#[test]
fn default_mem_fraction_matches_the_heuristic_table() {
    let llama = dense(80, 64, 8, 128);
    let ds = deepseek_v3();
    assert_eq!(fraction("H100-80GB", &llama, &[("tp_size", Int(8))]), 0.812);
    assert_eq!(fraction("H100-80GB", &llama, &[]), 0.830);
    assert_eq!(fraction("H200", &llama, &[("tp_size", Int(8))]), 0.893);
    assert_eq!(fraction("H200", &ds, &[("tp_size", Int(8))]), 0.886);
    let prefill = ("disaggregation_mode", Text("prefill".into()));
    let decode = ("disaggregation_mode", Text("decode".into()));
    assert_eq!(
        fraction("H200", &ds, &[("tp_size", Int(8)), prefill.clone()]),
        0.893
    );
    assert_eq!(
        fraction("H200", &ds, &[("tp_size", Int(8)), decode.clone()]),
        0.929
    );
    let dp_attn = [
        ("tp_size", Int(8)),
        ("dp_size", Int(8)),
        ("enable_dp_attention", Flag(true)),
        decode,
    ];
    assert_eq!(fraction("H200", &ds, &dp_attn), 0.833);
    assert_eq!(
        fraction("B200", &ds, &[("tp_size", Int(8)), prefill]),
        0.849
    );
}

fn cell_of(m: &Geometry, gpu_name: &str, pairs: &[(&str, crate::engine::SettingValue)]) -> f64 {
    let a = args(Engine::Sglang, "0.5.23", pairs);
    let mut notes = Notes::default();
    let g = gpu(gpu_name);
    let (kv, kvb) = kv_dtype(&a, m, &g, &mut notes);
    cell(&a, m, &g, &layout(&a), kvb, &kv).bytes
}

fn weights(m: &Geometry, version: &str, pairs: &[(&str, crate::engine::SettingValue)]) -> Estimate {
    let a = args(Engine::Sglang, version, pairs);
    let lay = layout(&a);
    let extras = model_code_weights(m, &lay, &a.version, 1.0);
    weights_per_rank_with_headroom(
        m,
        None,
        (lay.tp, lay.pp),
        extras,
        &mut Notes::default(),
        WEIGHTS_HEADROOM,
    )
}

#[test]
fn replicated_modules_and_model_code_add_to_the_even_split() {
    let tp2 = [("tp_size", Int(2))];
    let mut m = dense(4, 8, 8, 128);
    m.weight_bytes = 10_000;
    m.weight_parts.replicated = 1_000;
    m.weight_parts.embedding = 2_000;
    m.weight_parts.layers = 6_000;
    m.weight_parts.attention = 1_000;
    // 10,000 / 2 + 1,000 · (1 − 1/2).
    assert_eq!(weights(&m, "0.5.23", &tp2).point, 5_500.0);
    // Gemma 3/4: the nn.Embedding is whole on every rank: + 2,000 · (1 − 1/2).
    m.text_model_type = "gemma4_text".into();
    assert_eq!(weights(&m, "0.5.23", &tp2).point, 6_500.0);
    // Ministral 3 from 0.5.7: a second copy of the layers and of their attention.
    m.text_model_type = "ministral3".into();
    let w = weights(&m, "0.5.12", &tp2);
    assert_eq!((w.point, w.low), (5_500.0 + 3_500.0, 5_500.0 * 0.98));
    assert_eq!(weights(&m, "0.5.6", &tp2).point, 5_500.0);
    // 0.5.19+ collects garbage before it measures the free memory: the copies are gone.
    let w = weights(&m, "0.5.19", &tp2);
    assert_eq!((w.point, w.low), (5_500.0, 5_500.0 * 0.98));
}

#[test]
fn a_declared_layout_gets_five_percent_of_headroom_and_online_quantization_ten() {
    let mut m = dense(4, 8, 8, 128);
    m.weight_bytes = 10_000;
    let w = weights(&m, "0.5.23", &[]);
    // 10,000 · 1.05 and 10,000 · 0.98 (`budget::WEIGHTS_HEADROOM`).
    assert_eq!((w.low, w.point), (9_800.0, 10_000.0));
    assert!((w.high - 10_500.0).abs() < 1e-6, "{}", w.high);
    let a = args(Engine::Sglang, "0.5.23", &[]);
    let lay = layout(&a);
    let online = weights_per_rank_with_headroom(
        &m,
        Some("fp8"),
        (lay.tp, lay.pp),
        None,
        &mut Notes::default(),
        WEIGHTS_HEADROOM,
    );
    // Online FP8 halves a bf16 checkpoint's linear layers; the headroom stays +10 %.
    assert!((online.high / online.point - 1.10).abs() < 1e-9);
}

#[test]
fn attention_dp_runs_inside_the_tp_group() {
    let a = args(
        Engine::Sglang,
        "0.5.23",
        &[
            ("tp_size", Int(8)),
            ("dp_size", Int(8)),
            ("enable_dp_attention", Flag(true)),
        ],
    );
    assert_eq!(layout(&a).gpus(), 8);
    let a = args(
        Engine::Sglang,
        "0.5.23",
        &[("tp_size", Int(2)), ("dp_size", Int(4))],
    );
    assert_eq!(layout(&a).gpus(), 8);
}

#[test]
fn cell_sizes_match_the_worked_examples() {
    let llama70 = dense(80, 64, 8, 128);
    assert_eq!(
        cell_of(&llama70, "H100-80GB", &[("tp_size", Int(8))]),
        40_960.0
    );
    assert_eq!(
        cell_of(&llama70, "H100-80GB", &[("tp_size", Int(16))]),
        40_960.0
    );
    let fp8 = ("kv_cache_dtype", Text("fp8_e4m3".into()));
    assert_eq!(
        cell_of(&llama70, "H100-80GB", &[("tp_size", Int(8)), fp8.clone()]),
        20_480.0
    );
    assert_eq!(cell_of(&dense(28, 28, 4, 128), "H100-80GB", &[]), 57_344.0);
    assert_eq!(
        cell_of(&deepseek_v3(), "H200", &[("tp_size", Int(8))]),
        70_272.0
    );
    assert_eq!(
        cell_of(&deepseek_v32(), "H200", &[("tp_size", Int(8))]),
        78_324.0
    );
    assert_eq!(
        cell_of(&deepseek_v32(), "B200", &[("tp_size", Int(8))]),
        48_068.0
    );
}

#[test]
fn gpt_oss_hybrid_swa_cell_counts_window_layers_at_the_ratio() {
    let mut m = dense(36, 64, 8, 64);
    m.architectures = vec!["GptOssForCausalLM".into()];
    m.layers = (0..36)
        .map(|i| {
            if i % 2 == 0 {
                LayerKind::Sliding { window: 128 }
            } else {
                LayerKind::Full
            }
        })
        .collect();
    let c = cell_of(&m, "H100-80GB", &[("tp_size", Int(8))]);
    assert!((c - 8_294.4).abs() < 1e-6, "{c}");
}

#[test]
fn nextn_draft_grows_the_cell_by_its_layer_share() {
    let m = deepseek_v3();
    let a = args(
        Engine::Sglang,
        "0.5.23",
        &[
            ("tp_size", Int(8)),
            ("speculative_algorithm", Text("NEXTN".into())),
        ],
    );
    let g = gpu("H200");
    let inputs = Inputs {
        args: &a,
        model: &m,
        gpu: &g,
        gpu_count: None,
        at: crate::source::Loc::new(crate::source::FileId(0), 0..0),
    };
    assert_eq!(plan(&inputs).unwrap().kv_bytes_per_token, 71_424);
}

#[test]
fn mla_layers_hold_kv_b_twice() {
    // DeepSeek-V3 at TP8: 512 latent × 16 heads × (128 nope + 128 v) × 61 layers × 2 B.
    let mut m = deepseek_v3();
    m.head_dim = 192;
    let a = args(Engine::Sglang, "0.5.12", &[("tp_size", Int(8))]);
    let (x, _) = budget::mla_absorbed_copies(&m, &layout(&a), &gpu("H200")).unwrap();
    assert_eq!(x.point, 255_852_544.0);
    // DP attention over 8 ranks leaves every head on every rank.
    let dp = args(
        Engine::Sglang,
        "0.5.12",
        &[
            ("tp_size", Int(8)),
            ("dp_size", Int(8)),
            ("enable_dp_attention", Flag(true)),
        ],
    );
    let (x, _) = budget::mla_absorbed_copies(&m, &layout(&dp), &gpu("H200")).unwrap();
    assert_eq!(x.point, 255_852_544.0 * 8.0);
    assert!(budget::mla_absorbed_copies(&dense(4, 8, 8, 128), &layout(&a), &gpu("H200")).is_none());
}

#[test]
fn dsa_forces_attention_dp_from_0_5_3_to_0_5_5() {
    // 0.5.3–0.5.5 server_args.py :: _handle_model_specific_adjustments sets
    // enable_dp_attention and dp_size = tp_size for DeepSeek DSA; 0.5.3 also fixes the fraction
    // at 0.8 over the flag; 0.5.6 leaves dp_size alone.
    let m = deepseek_v32();
    let g = gpu("H200");
    let run = |version: &str, pairs: &[(&str, crate::engine::SettingValue)]| {
        let a = args(Engine::Sglang, version, pairs);
        let inputs = Inputs {
            args: &a,
            model: &m,
            gpu: &g,
            gpu_count: None,
            at: crate::source::Loc::new(crate::source::FileId(0), 0..0),
        };
        let p = plan(&inputs).unwrap();
        (p.dp, p.memory_fraction, p.gpu_count)
    };
    let tp8 = [("tp_size", Int(8))];
    let tp8_f = [
        ("tp_size", Int(8)),
        (
            "mem_fraction_static",
            crate::engine::SettingValue::Float(0.9),
        ),
    ];
    assert_eq!(run("0.5.3", &tp8_f), (8, 0.8, 8));
    assert_eq!(run("0.5.3.post1", &tp8_f), (8, 0.9, 8));
    assert_eq!(run("0.5.5", &tp8_f).0, 8);
    assert_eq!(run("0.5.6", &tp8_f), (1, 0.9, 8));
    // The default fraction is computed from the flags as given, before the adjustment.
    let given = args(Engine::Sglang, "0.5.4", &tp8);
    let f = default_fraction(&given, &m, &g, &layout(&given), role(&given)).0;
    assert_eq!(run("0.5.4", &tp8), (8, f, 8));
    // Not a DSA checkpoint: nothing changes.
    let a = args(Engine::Sglang, "0.5.4", &tp8);
    assert!(!dsa_forces_attention_dp(&a.version, &deepseek_v3()));
}

/// GiB below CUDA's total that the baseline's point leaves on an MI355X.
fn mi355x_baseline_gib(version: &str, pairs: &[(&str, crate::engine::SettingValue)]) -> f64 {
    let a = args(Engine::Sglang, version, pairs);
    let g = gpu("MI355X");
    let b = baseline(&g, &layout(&a), &a, &mut Notes::default());
    (g.cuda_total_bytes as f64 - b.point) / crate::units::GIB
}

/// `--enable-symm-mem` allocates after the pool is sized in every release (budget.rs).
#[test]
fn symmetric_memory_leaves_the_baseline_alone() {
    let b = |pairs: &[(&str, crate::engine::SettingValue)]| {
        let a = args(Engine::Sglang, "0.5.9", pairs);
        baseline(&gpu("B200"), &layout(&a), &a, &mut Notes::default()).point
    };
    let tp4 = ("tp_size", Int(4));
    assert_eq!(
        b(std::slice::from_ref(&tp4)),
        b(&[tp4, ("enable_symm_mem", Flag(true))])
    );
}

#[test]
fn rocm_tp_groups_hold_the_custom_all_reduce_buffers_of_their_release() {
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    let tp2 = [("tp_size", Int(2))];
    // 5.8 GiB of context and communicators, plus aiter's buffers as the image pins them.
    // a6bb4993 (0.5.10.post1): 2 GiB meta, 1 GiB input, 8 MiB rank data.
    let aiter_2026_04 = 5.8 + 3.0 + 8.0 / 1024.0;
    assert!(close(mi355x_baseline_gib("0.5.12", &tp2), aiter_2026_04));
    assert!(close(mi355x_baseline_gib("0.5.10rc0", &tp2), aiter_2026_04));
    // v0.1.11.post1 (0.5.9): meta, input and output of 128 MiB, 8 MiB rank data.
    let old = 5.8 + 392.0 / 1024.0;
    assert!(close(mi355x_baseline_gib("0.5.9", &tp2), old));
    // 0.5.5: SGLang's own class, three buffers of 16 MiB.
    assert!(close(
        mi355x_baseline_gib("0.5.5", &tp2),
        5.8 + 48.0 / 1024.0
    ));
    // None when disabled, on one GPU, or at a world size the class refuses.
    let off = [
        ("tp_size", Int(2)),
        ("disable_custom_all_reduce", Flag(true)),
    ];
    assert!(close(mi355x_baseline_gib("0.5.12", &off), 5.8));
    assert!(close(mi355x_baseline_gib("0.5.12", &[]), 1.5));
    assert!(close(
        mi355x_baseline_gib("0.5.12", &[("tp_size", Int(3))]),
        5.8
    ));
    // Only the TP group builds one: PP stages alone do not.
    assert!(close(
        mi355x_baseline_gib("0.5.12", &[("pp_size", Int(2))]),
        5.8
    ));
}

#[test]
fn a_declared_4_bit_layout_narrows_the_weight_headroom() {
    use crate::model::{Quantization, RoutedExperts};
    let quant = |method: &str, group_size| {
        Some(Quantization {
            method: method.into(),
            weight_bits: 4,
            kv_cache_fp8: false,
            group_size,
        })
    };
    let mut m = dense(4, 64, 8, 45); // hidden 2880, as gpt-oss
    m.weight_bytes = 2_000_000;
    m.quantization = quant("awq", Some(128));
    // A declared layout: +5 % (budget::WEIGHTS_HEADROOM); none declared: +30 %.
    assert!((weights(&m, "0.5.23", &[]).high - 2_100_000.0).abs() < 1e-6);
    m.quantization = quant("bitsandbytes", None);
    assert!((weights(&m, "0.5.23", &[]).high - 2_600_000.0).abs() < 1e-6);
    // MXFP4 MoE: hidden 2880 and intermediate 2880 both pad to 3072 at most.
    m.quantization = quant("mxfp4", Some(32));
    m.experts = Some(RoutedExperts {
        count: 32,
        intermediate: 2880,
    });
    m.weight_parts.routed_experts = 1_000_000;
    let pad = 1_000_000.0 * ((3072.0f64 / 2880.0).powi(2) - 1.0);
    assert!((weights(&m, "0.5.23", &[]).high - (2_100_000.0 + pad)).abs() < 1e-6);
    // At TP 2 the per-rank intermediate 1440 pads to 1536.
    let pad2 = 500_000.0 * ((3072.0f64 / 2880.0) * (1536.0 / 1440.0) - 1.0);
    let w = weights(&m, "0.5.23", &[("tp_size", Int(2))]);
    assert!((w.high - (1_050_000.0 + pad2)).abs() < 1e-6);
}

#[test]
fn the_cuda_ipc_feature_pool_comes_out_of_a_multimodal_launch_that_uses_it() {
    let mut vlm = dense(64, 24, 4, 256);
    vlm.multimodal = true;
    let h100 = gpu("H100-80GB");
    let pool = |m: &Geometry, version: &str, pairs: &[(&str, crate::engine::SettingValue)]| {
        let a = args(Engine::Sglang, version, pairs);
        budget::mm_feature_pool(m, &a, &h100, 0.8).map(|(e, _)| e)
    };
    // 0.5.17 resolves an unset transport to cuda_ipc on one node: 1024 MiB and the tokenizer's
    // CUDA context; the low end charges fraction × the pool.
    let e = pool(&vlm, "0.5.17", &[]).expect("0.5.17 default");
    assert_eq!(e.point, 1.5 * crate::units::GIB);
    assert_eq!(e.low, 0.8 * crate::units::GIB);
    // 0.5.16 and 0.5.18+ leave it to the flag.
    assert!(pool(&vlm, "0.5.16", &[]).is_none());
    assert!(pool(&vlm, "0.5.18", &[]).is_none());
    let ipc = ("mm_feature_transport", Text("cuda_ipc".into()));
    assert!(pool(&vlm, "0.5.16", std::slice::from_ref(&ipc)).is_some());
    assert!(pool(&vlm, "0.5.23", &[ipc]).is_some());
    assert!(pool(
        &vlm,
        "0.5.17",
        &[("mm_feature_transport", Text("cpu".into()))]
    )
    .is_none());
    let pd = ("disaggregation_mode", Text("decode".into()));
    assert!(pool(&vlm, "0.5.17", &[pd]).is_none());
    // A text-only model builds no multimodal processor.
    assert!(pool(&dense(64, 24, 4, 256), "0.5.17", &[]).is_none());
}

#[test]
fn mamba_ssm_dtype_halves_the_ssm_state() {
    let mut m = dense(4, 24, 4, 256);
    m.layers = vec![LayerKind::Linear; 3]
        .into_iter()
        .chain([LayerKind::Full])
        .collect();
    m.linear = Some(crate::model::LinearAttn {
        num_key_heads: 16,
        num_value_heads: 48,
        key_head_dim: 128,
        value_head_dim: 128,
        conv_kernel: 4,
    });
    let per = |pairs: &[(&str, crate::engine::SettingValue)]| {
        budget::mamba_per_request(&m, 1, &args(Engine::Sglang, "0.5.17", pairs))
    };
    // conv (48 + 2 × 16) × 128 × 3 × 2 B = 61,440; SSM 48 × 128 × 128 × 4 B = 3,145,728.
    assert_eq!(per(&[]), 3.0 * (61_440.0 + 3_145_728.0));
    let bf16 = ("mamba_ssm_dtype", Text("bfloat16".into()));
    assert_eq!(per(&[bf16]), 3.0 * (61_440.0 + 1_572_864.0));
}

/// GiB below CUDA's total at the baseline's low end (the most taken) on `name` at TP `tp`.
fn nvidia_baseline_low_gib(name: &str, tp: i64) -> f64 {
    let a = args(Engine::Sglang, "0.5.12", &[("tp_size", Int(tp))]);
    let g = gpu(name);
    let b = baseline(&g, &layout(&a), &a, &mut Notes::default());
    (g.cuda_total_bytes as f64 - b.low) / crate::units::GIB
}

#[test]
fn pcie_only_groups_keep_the_single_gpu_baseline_range() {
    // No NVSwitch, no NVLink SHARP buffers: a PCIe-only TP group keeps 1.5 GiB at most.
    assert_eq!(nvidia_baseline_low_gib("RTX-3090", 2), 1.5);
    assert_eq!(nvidia_baseline_low_gib("RTX-3090", 1), 1.5);
    assert_eq!(nvidia_baseline_low_gib("H100-80GB", 8), 2.5);
}

#[test]
fn an_mtp_draft_holds_its_own_vocabulary_tensors_when_the_pool_is_sized() {
    // Qwen3.5-27B's vocabulary and width: 248,320 rows (a multiple of 64) × 5,120 in bf16 is
    // 2,542,796,800 B per table; embed_tokens and lm_head both, split over TP 2.
    let mut m = dense(4, 8, 8, 128);
    m.vocab_size = 248_320;
    m.hidden_size = 5_120;
    let table = 248_320.0 * 5_120.0 * 2.0;
    let a = args(Engine::Sglang, "0.5.23", &[("tp_size", Int(2))]);
    let e = budget::mtp_vocab_copies(&m, &layout(&a), &a);
    assert_eq!((e.point, e.low, e.high), (table, table / 2.0, table));
    // Attention-DP 2 inside TP 2: the embedding is whole on each rank, the head split.
    let a = args(
        Engine::Sglang,
        "0.5.23",
        &[
            ("tp_size", Int(2)),
            ("dp_size", Int(2)),
            ("enable_dp_attention", Flag(true)),
        ],
    );
    let e = budget::mtp_vocab_copies(&m, &layout(&a), &a);
    assert_eq!(e.point, table + table / 2.0);
}

/// The aiter step on ROCm: none before 0.5.4.post1, × 0.90 there, × 0.85 from 0.5.5; only past
/// 8,192 tokens of context, only on AMD, only for aiter (given, or the HIP default of a
/// non-MLA model), and over a given `--mem-fraction-static` too.
#[test]
fn rocm_aiter_attention_scales_the_fraction_past_8k_context() {
    let m = dense(32, 32, 8, 128);
    let scale =
        |gpu_name: &str, v: &str, ctx: u64, pairs: &[(&str, crate::engine::SettingValue)]| {
            let a = args(Engine::Sglang, v, pairs);
            rocm_aiter_scale(&a, &m, &gpu(gpu_name), ctx).map(|(s, _)| s)
        };
    assert_eq!(scale("MI300X", "0.5.4", 262_144, &[]), None);
    assert_eq!(scale("MI300X", "0.5.4.post1", 262_144, &[]), Some(0.90));
    assert_eq!(scale("MI355X", "0.5.9", 262_144, &[]), Some(0.85));
    assert_eq!(scale("MI355X", "0.5.23", 262_144, &[]), Some(0.85));
    assert_eq!(scale("MI355X", "0.5.9", 8192, &[]), None);
    assert_eq!(scale("H100-80GB", "0.5.9", 262_144, &[]), None);
    let triton = [("attention_backend", Text("triton".into()))];
    assert_eq!(scale("MI355X", "0.5.9", 262_144, &triton), None);
    // MLA defaults depend on the per-rank head count: unscaled unless aiter is given.
    let mla = deepseek_v3();
    let a = args(Engine::Sglang, "0.5.9", &[]);
    assert_eq!(rocm_aiter_scale(&a, &mla, &gpu("MI355X"), 163_840), None);
    let given = args(
        Engine::Sglang,
        "0.5.9",
        &[("attention_backend", Text("aiter".into()))],
    );
    assert!(rocm_aiter_scale(&given, &mla, &gpu("MI355X"), 163_840).is_some());
}

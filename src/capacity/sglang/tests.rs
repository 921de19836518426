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
    // The low end: collected copies, and a text-only count 0.5 % under.
    let w = weights(&m, "0.5.12", &tp2);
    assert_eq!((w.point, w.low), (5_500.0 + 3_500.0, 5_500.0 * 0.995));
    assert_eq!(weights(&m, "0.5.6", &tp2).point, 5_500.0);
    // 0.5.19+ collects garbage before it measures the free memory: the copies are gone.
    let w = weights(&m, "0.5.19", &tp2);
    assert_eq!((w.point, w.low), (5_500.0, 5_500.0 * 0.995));
}

#[test]
fn a_counted_checkpoint_gets_three_percent_of_headroom_and_online_quantization_ten() {
    let mut m = dense(4, 8, 8, 128);
    m.weight_bytes = 10_000;
    let w = weights(&m, "0.5.23", &[]);
    // An unquantized checkpoint: 10,000 · 1.03 and 10,000 · 0.995 (`budget::WEIGHTS_HEADROOM`;
    // the low side −0.5 %, a multimodal one's too: SGLang builds its tower).
    assert_eq!((w.low, w.point), (9_950.0, 10_000.0));
    m.multimodal = true;
    assert_eq!(weights(&m, "0.5.23", &[]).low, 9_950.0);
    m.multimodal = false;
    assert!((w.high - 10_300.0).abs() < 1e-6, "{}", w.high);
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
    // AWQ groups, which the loader allocates as priced: +3 %; another declared layout: +5 %
    // (budget::WEIGHTS_HEADROOM); none declared: +30 %.
    assert!((weights(&m, "0.5.23", &[]).high - 2_060_000.0).abs() < 1e-6);
    m.quantization = quant("compressed-tensors", Some(32));
    assert!((weights(&m, "0.5.23", &[]).high - 2_100_000.0).abs() < 1e-6);
    m.quantization = quant("bitsandbytes", None);
    assert!((weights(&m, "0.5.23", &[]).high - 2_600_000.0).abs() < 1e-6);
    // MXFP4 MoE: hidden 2880 and intermediate 2880 both pad to 3072 at most.
    m.quantization = quant("mxfp4", Some(32));
    m.experts = Some(RoutedExperts {
        count: 32,
        intermediate: 2880,
        top_k: None,
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
fn only_nvswitch_groups_take_the_nvlink_baseline_range() {
    // Public logs: 0.38-0.82 GiB below the total on one card or a PCIe group, 1.71-3.01 GiB in
    // an NVSwitch TP group. A consumer card outside the PCIe-only list stays with the cards.
    assert!((nvidia_baseline_low_gib("RTX-3090", 2) - 0.95).abs() < 1e-9);
    assert!((nvidia_baseline_low_gib("RTX-3090", 1) - 0.95).abs() < 1e-9);
    assert!((nvidia_baseline_low_gib("RTX-5090", 2) - 0.95).abs() < 1e-9);
    assert!((nvidia_baseline_low_gib("H100-80GB", 1) - 0.95).abs() < 1e-9);
    assert!((nvidia_baseline_low_gib("H100-80GB", 8) - 3.1).abs() < 1e-9);
    assert!((nvidia_baseline_low_gib("B200", 4) - 3.1).abs() < 1e-9);
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

fn nextn_plan(version: &str, spec: bool) -> Plan {
    let mut pairs = vec![
        ("tp_size", Int(8)),
        (
            "mem_fraction_static",
            crate::engine::SettingValue::Float(0.85),
        ),
    ];
    if spec {
        pairs.push(("speculative_algorithm", Text("NEXTN".into())));
    }
    let a = args(Engine::Sglang, version, &pairs);
    let m = deepseek_v3();
    let g = gpu("H200");
    let inputs = Inputs {
        args: &a,
        model: &m,
        gpu: &g,
        gpu_count: None,
        at: crate::source::Loc::new(crate::source::FileId(0), 0..0),
    };
    plan(&inputs).unwrap()
}

#[test]
fn an_eagle_draft_is_inside_the_pool_budget_from_0_5_14() {
    // 0.5.14 scheduler.py :: init_model_worker loads the draft before init_memory_pools; 0.5.13
    // sized the target pool inside ModelRunner, before the draft existed.
    // Cell: MLA (512 + 64) × 2 B × 61 layers = 70,272 B; + 70,272 × 1/61 = 1,152 B for the
    // one NEXTN layer from 0.5.14 on.
    assert_eq!(nextn_plan("0.5.13", true).kv_bytes_per_token, 70_272);
    assert_eq!(nextn_plan("0.5.14", true).kv_bytes_per_token, 71_424);
    assert_eq!(nextn_plan("0.5.17", true).kv_bytes_per_token, 71_424);
    // Weights: the draft's own embed_tokens and lm_head, 128,256 rows × 16,384 × 2 B, each
    // split over TP 8: 2 × 525,336,576 B per rank (the test geometry prices no MTP layer).
    let held = |v: &str| nextn_plan(v, true).weights_bytes - nextn_plan(v, false).weights_bytes;
    assert_eq!(held("0.5.13"), 0);
    assert_eq!(held("0.5.14"), 1_050_673_152);
    assert_eq!(held("0.5.17"), 1_050_673_152);
}

fn fraction_at(version: &str, pairs: &[(&str, crate::engine::SettingValue)]) -> f64 {
    let a = args(Engine::Sglang, version, pairs);
    let m = dense(80, 64, 8, 128);
    default_fraction(&a, &m, &gpu("H100-80GB"), &layout(&a), role(&a)).0
}

#[test]
fn the_draft_reserve_comes_after_the_10_gib_floor_and_goes_in_0_5_14() {
    // H100-80GB, 81,559 MiB, TP 1, chunked prefill 2,048, CUDA-graph bs 256 (80 GB tier):
    // 512 + 2,048 × 1.5 + 256 × 2 + 1/8 × 1,024 = 4,224 MiB, raised to the 10,240 MiB floor,
    // then + the EAGLE reserve: 2,048 (0.5.9) → (81,559 − 12,288) / 81,559 = 0.849;
    // 4,096 (0.5.13) → 67,223 / 81,559 = 0.824; none (0.5.14) → 71,319 / 81,559 = 0.874.
    let eagle = [
        ("chunked_prefill_size", Int(2048)),
        ("speculative_algorithm", Text("EAGLE".into())),
    ];
    assert_eq!(fraction_at("0.5.9", &eagle), 0.849);
    assert_eq!(fraction_at("0.5.13", &eagle), 0.824);
    assert_eq!(fraction_at("0.5.14", &eagle), 0.874);
    assert_eq!(fraction_at("0.5.9", &eagle[..1]), 0.874);
}

#[test]
fn a_hybrid_draft_layer_is_a_share_of_the_full_attention_layers() {
    // Qwen3.6-27B's layout: 64 layers, every fourth full attention (4 KV heads × 256), the rest
    // Gated DeltaNet. Cell: 16 × 4 × 256 × 2 (K, V) × 2 B = 65,536 B; the one NEXTN layer adds
    // 65,536 / 16 = 4,096 B (pool_configurator divides by the full-attention layers), not / 64.
    let mut m = dense(64, 24, 4, 256);
    m.layers = (0..64)
        .map(|i| {
            if i % 4 == 3 {
                LayerKind::Full
            } else {
                LayerKind::Linear
            }
        })
        .collect();
    m.linear = Some(crate::model::LinearAttn {
        num_key_heads: 16,
        num_value_heads: 48,
        key_head_dim: 128,
        value_head_dim: 128,
        conv_kernel: 4,
    });
    m.nextn_layers = 1;
    let a = args(
        Engine::Sglang,
        "0.5.17",
        &[
            (
                "mem_fraction_static",
                crate::engine::SettingValue::Float(0.9),
            ),
            ("speculative_algorithm", Text("EAGLE".into())),
        ],
    );
    let g = gpu("A100-80GB");
    let inputs = Inputs {
        args: &a,
        model: &m,
        gpu: &g,
        gpu_count: None,
        at: crate::source::Loc::new(crate::source::FileId(0), 0..0),
    };
    assert_eq!(plan(&inputs).unwrap().kv_bytes_per_token, 69_632);
}

#[test]
fn speculative_decoding_sets_intermediate_mamba_states_apart_before_the_pool() {
    // Qwen3.6-27B's linear layers at TP 1: conv (48 + 2 × 16) × 128 × 3 × 2 B = 61,440 B and
    // SSM 48 × 128 × 128 × 4 B = 3,145,728 B, over 48 layers: 153,944,064 B per request.
    let per_req = 153_944_064.0;
    let spec = |v: &str, extra: &[(&str, crate::engine::SettingValue)]| {
        let mut pairs = vec![
            ("speculative_algorithm", Text("EAGLE".into())),
            ("max_running_requests", Int(8)),
            ("speculative_num_draft_tokens", Int(4)),
        ];
        pairs.extend(extra.iter().cloned());
        args(Engine::Sglang, v, &pairs)
    };
    let no_radix = [("disable_radix_cache", Flag(true))];
    let at = |v: &str, extra: &[(&str, crate::engine::SettingValue)], prefill: bool| {
        budget::spec_mamba_scratch(
            &Version::parse(v).unwrap(),
            &spec(v, extra),
            per_req,
            1,
            prefill,
        )
    };
    // 0.5.12: 8 requests × 4 draft tokens on every path.
    assert_eq!(at("0.5.12", &[], false), Ok(per_req * 8.0 * 4.0));
    // 0.5.13+: only with --disable-radix-cache; the ratio path solves them into the mamba share.
    assert_eq!(at("0.5.16", &[], false), Ok(0.0));
    assert_eq!(at("0.5.16", &no_radix, false), Ok(per_req * 8.0 * 4.0));
    // 0.5.17+: the padding slot too: 153,944,064 × 9 × 4 = 5,541,986,304 B.
    assert_eq!(at("0.5.19", &no_radix, false), Ok(5_541_986_304.0));
    // 0.5.23 skips it on a PD prefill server.
    assert_eq!(at("0.5.23", &no_radix, true), Ok(0.0));
    assert_eq!(at("0.5.23", &no_radix, false), Ok(5_541_986_304.0));
    // Without the draft-token count kvlint cannot size it, and says so.
    let a = args(
        Engine::Sglang,
        "0.5.19",
        &[
            ("speculative_algorithm", Text("EAGLE".into())),
            ("disable_radix_cache", Flag(true)),
        ],
    );
    let v = Version::parse("0.5.19").unwrap();
    assert!(budget::spec_mamba_scratch(&v, &a, per_req, 1, false).is_err());
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

//! The architecture table against the geometry code and the CLI: every catalog model plans from
//! a layout the table gives its architecture; made-up and real-but-unmodelled architectures are
//! INP008 (deny) with no plan; DeepSeek-V4 plans only where its engine's pools are modelled.

use std::path::Path;
use std::process::Command;

use kvlint::model::architectures::{check, table, MODELLED};
use kvlint::model::{catalog_ids, catalog_lookup, Geometry, LayerKind};

/// Layouts the table may give (tools/gen_architectures.py `MARKERS` and task layouts).
const LAYOUTS: [&str; 15] = [
    "standard",
    "mla",
    "dsa",
    "gdn",
    "chunked",
    "sliding",
    "multimodal",
    "draft",
    "mamba",
    "lightning",
    "kimi_linear",
    "short_conv",
    "compressed",
    "cross_attention",
    "nas",
];

fn layout(arch: &str) -> Vec<String> {
    table()
        .get(arch)
        .map_or_else(Vec::new, |r| r.layout.clone())
}

/// What the geometry code read from a config, as table layouts.
fn read_layouts(g: &Geometry) -> Vec<&'static str> {
    let any = |f: fn(&LayerKind) -> bool| g.layers.iter().any(f);
    let state = g.recurrent.as_ref().map(|r| r.shape.layout());
    [
        (g.mla.is_some(), "mla"),
        (g.dsa.is_some(), "dsa"),
        (g.linear.is_some(), "gdn"),
        (state == Some("mamba"), "mamba"),
        (state == Some("short_conv"), "short_conv"),
        (state == Some("kimi_linear"), "kimi_linear"),
        (state == Some("lightning"), "lightning"),
        (g.compressed.is_some(), "compressed"),
        (g.nas.is_some(), "nas"),
        (any(|l| matches!(l, LayerKind::Sliding { .. })), "sliding"),
        (any(|l| matches!(l, LayerKind::Chunked { .. })), "chunked"),
        (g.multimodal, "multimodal"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect()
}

/// Every catalog model's config.json: its architecture is in the table with a modelled layout,
/// and what the geometry code reads from it is a layout the table gives that architecture.
#[test]
fn every_catalog_model_plans_from_a_layout_the_table_gives_its_architecture() {
    let mut disagree = Vec::new();
    let mut walked = 0;
    for id in catalog_ids() {
        let Some(g) = catalog_lookup(id) else {
            disagree.push(format!("{id}: the catalog lists it but cannot read it"));
            continue;
        };
        walked += 1;
        if let Err(u) = check(&g) {
            disagree.push(format!("{id}: {u:?}"));
        }
        let arch = g.architectures.first().map_or("", String::as_str);
        let given = layout(arch);
        for read in read_layouts(&g) {
            // A config-wide `sliding_window` applies to any standard attention layer (vLLM
            // `Attention` takes `cache_config.sliding_window`), so a model file need not name it.
            let generic = read == "sliding" && given.iter().any(|l| l == "standard");
            if !generic && !given.iter().any(|l| l == read) {
                disagree.push(format!(
                    "{id} ({arch}): reads as {read}, table says {given:?}"
                ));
            }
        }
    }
    assert!(walked >= 200, "only {walked} catalog models");
    assert!(disagree.is_empty(), "{disagree:#?}");
}

/// Every layout in the table is one kvlint names: modelled, or refused with what it would need.
#[test]
fn the_table_holds_only_known_layouts_and_marks_few_for_review() {
    let mut review = Vec::new();
    for row in table().values() {
        for l in &row.layout {
            assert!(LAYOUTS.contains(&l.as_str()), "{}: {l}", row.architecture);
        }
        if row.review.is_some() {
            review.push(row.architecture.as_str());
        }
    }
    for arch in [
        "NemotronHForCausalLM",
        "JambaForCausalLM",
        "Lfm2ForCausalLM",
    ] {
        assert!(!review.contains(&arch), "{arch} is still marked for review");
    }
    assert!(MODELLED.iter().all(|l| LAYOUTS.contains(l)));
}

fn kvlint(dir: &Path, launch: &str, cfg: &serde_json::Value, version: &str) -> serde_json::Value {
    let (code, report) = run(dir, launch, cfg, version);
    assert_eq!(code, Some(1), "{report}");
    report
}

/// The report whatever the verdict.
fn kvlint_any(dir: &Path, launch: &str, cfg: &serde_json::Value, v: &str) -> serde_json::Value {
    run(dir, launch, cfg, v).1
}

fn run(
    dir: &Path,
    launch: &str,
    config: &serde_json::Value,
    version: &str,
) -> (Option<i32>, serde_json::Value) {
    let cfg = dir.join("config.json");
    std::fs::write(&cfg, config.to_string()).unwrap();
    let sh = dir.join("launch.sh");
    std::fs::write(&sh, launch).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kvlint"))
        .args([
            "check",
            "--gpu",
            "h200x8",
            "--engine-version",
            version,
            "--format",
            "json",
        ])
        .arg("--model-config")
        .arg(&cfg)
        .arg(&sh)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), report)
}

fn config(arch: &str) -> serde_json::Value {
    serde_json::json!({"architectures": [arch], "model_type": "x", "num_hidden_layers": 4,
        "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 4,
        "vocab_size": 32000, "max_position_embeddings": 32768})
}

/// A made-up architecture and real ones whose layout kvlint does not read from a config without
/// their family's keys (Mamba2, Mamba1, lightning attention, KimiDeltaAttention, short
/// convolutions), or does not model at all (attention-free Mamba, cross-attention,
/// DeepSeek-V4.1): each is INP008 naming the architecture, and the launch has no pool.
#[test]
fn made_up_and_real_unmodelled_architectures_are_refused_never_planned() {
    let dir = tempfile::tempdir().unwrap();
    let launch =
        "python3 -m sglang.launch_server --model-path org/m --tp-size 8 --context-length 32768\n";
    for arch in [
        "ZorblaxForCausalLM",
        "NemotronHForCausalLM",
        "GraniteMoeHybridForCausalLM",
        "FalconH1ForCausalLM",
        "JambaForCausalLM",
        "FalconMambaForCausalLM",
        "KimiLinearForCausalLM",
        "MiniMaxText01ForCausalLM",
        "MiniMaxM1ForCausalLM",
        "Lfm2ForCausalLM",
        "MllamaForConditionalGeneration",
        "DeepseekV41ForCausalLM",
    ] {
        let report = kvlint(dir.path(), launch, &config(arch), "0.5.23");
        let f = &report["findings"][0];
        assert_eq!(f["rule"], "INP008", "{arch}: {report}");
        assert_eq!(f["level"], "deny");
        assert!(f["message"].as_str().unwrap().contains(arch), "{f}");
        let plan = &report["launches"][0];
        assert!(
            plan["pool_tokens"].is_null() && plan["kv_bytes_per_token"].is_null(),
            "{arch}: {plan}"
        );
        assert_eq!(plan["verdict"], "refused");
    }
}

/// DeepSeek-V4-Flash (its public config.json): SGLang 0.5.12 plans it from the DSv4 pool
/// calculation (16,072.65 B per full token, worked by hand in capacity/sglang/dsv4.rs), never
/// from plain attention (1 KV head × (512 + 512) × 2 B × 43 layers = 88,064 B), and vLLM 0.25.0
/// from its packed groups; vLLM and SGLang releases whose DSv4 math kvlint does not model are
/// INP008.
#[test]
fn deepseek_v4_plans_from_its_compressed_pools_or_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let json = std::fs::read_to_string("fixtures/INP008/deepseek-v4-flash.json").unwrap();
    let v4: serde_json::Value = serde_json::from_str(&json).unwrap();
    let sglang = "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash --tp-size 8 --disaggregation-mode prefill --context-length 1048576\n";
    let report = kvlint(dir.path(), sglang, &v4, "0.5.12");
    let plan = &report["launches"][0];
    assert_eq!(plan["kv_bytes_per_token"], 16_073, "{plan}");
    assert_eq!(plan["page_size"], 256);
    // The prefill server admits up to its SWA pool: int(full × 0.1) floored to a 256-token page.
    let full = plan["pool_tokens"].as_u64().unwrap();
    assert_eq!(
        plan["usable_tokens"].as_u64().unwrap(),
        (full / 10) / 256 * 256
    );
    assert!(report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule"] == "KV001"));

    // 0.5.23 (FlashMLA V4 layout, worked by hand in capacity/sglang/dsv4.rs): 7,086.75 B per
    // full token after 2,715,811,840 B of c128 states for 256 request slots; no prefill cap.
    let report = kvlint_any(dir.path(), sglang, &v4, "0.5.23");
    let plan = &report["launches"][0];
    assert_eq!(plan["kv_bytes_per_token"], 7_087, "{plan}");
    let budget = plan["budget_bytes"].as_f64().unwrap();
    let full = ((budget - 2_715_811_840.0) / 7_086.75).floor() as u64 / 256 * 256;
    assert_eq!(plan["pool_tokens"].as_u64(), Some(full));
    assert_eq!(plan["usable_tokens"].as_u64(), Some(full));
    for v in ["0.5.14", "0.5.22"] {
        let report = kvlint(dir.path(), sglang, &v4, v);
        let rules: Vec<&str> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["rule"].as_str())
            .collect();
        assert!(rules.contains(&"INP008"), "{v}: {report}");
        assert!(report["launches"][0]["pool_tokens"].is_null());
    }

    // vLLM 0.25.0 (packed fp8_ds_mla groups, worked by hand in capacity/vllm/dsv4.rs): the full
    // group's 1,002,240 B per 256-token page, 3,915 B per token, and blocks of 1,039,680 B; a
    // 1,048,576-token request takes ⌈7,080,287,040 / 1,002,240⌉ = 7,065 full pages in the log.
    let vllm = "vllm serve deepseek-ai/DeepSeek-V4-Flash --tensor-parallel-size 8 --kv-cache-dtype fp8 --max-model-len 1048576 --max-num-batched-tokens 8192\n";
    let report = kvlint_any(dir.path(), vllm, &v4, "0.25.0");
    let plan = &report["launches"][0];
    assert_eq!(plan["kv_bytes_per_token"], 3_915, "{report}");
    assert_eq!(plan["kv_cache_dtype"], "fp8_ds_mla");
    assert_eq!(plan["page_size"], 256);
    let blocks = (plan["budget_bytes"].as_f64().unwrap() / 1_039_680.0).floor();
    let logged = (blocks / 7_065.0 * 1_048_576.0) as u64;
    assert_eq!(plan["pool_tokens"].as_u64(), Some(logged), "{plan}");
    assert!(
        !report["findings"].to_string().contains("INP008"),
        "{report}"
    );

    // A release whose DeepSeek-V4 specs kvlint does not mirror, and TensorRT-LLM, stay INP008.
    let report = kvlint(dir.path(), vllm, &v4, "0.33.0");
    let f = &report["findings"][0];
    assert_eq!(f["rule"], "INP008", "{report}");
    assert!(
        f["message"].as_str().unwrap().contains("0.25.0 only"),
        "{f}"
    );
    assert!(report["launches"][0]["pool_tokens"].is_null());
    let trtllm = "trtllm-serve deepseek-ai/DeepSeek-V4-Flash --tp_size 8\n";
    let report = kvlint(dir.path(), trtllm, &v4, "1.0.0");
    let f = &report["findings"][0];
    assert_eq!(f["rule"], "INP008", "{report}");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("not for TensorRT-LLM"),
        "{f}"
    );
    assert!(report["launches"][0]["pool_tokens"].is_null());
}

fn catalog(id: &str) -> Geometry {
    catalog_lookup(id).unwrap_or_else(|| panic!("{id} is not in the catalog"))
}

fn count(g: &Geometry, f: fn(&LayerKind) -> bool) -> usize {
    g.layers.iter().filter(|l| f(l)).count()
}

/// The families issue 25 names, read from their catalog config.json, against arithmetic done by
/// hand from those configs (whole model, 16-bit KV, sliding and chunked layers counted whole,
/// linear layers holding no per-token KV).
#[test]
fn named_families_read_as_their_own_layout() {
    // MiniMax-M2.5 (MiniMaxM2ForCausalLM): plain GQA, 62 layers × 8 heads × (128 + 128) × 2 B.
    let g = catalog("MiniMaxAI/MiniMax-M2.5");
    assert!(g.mla.is_none() && g.linear.is_none());
    assert_eq!(g.kv_bytes_per_token(), 62 * 8 * 256 * 2);
    // Kimi-K2.5: MLA, 61 layers × (512 + 64) × 2 B, no indexer (no index_topk).
    let g = catalog("moonshotai/Kimi-K2.5");
    assert!(g.mla.is_some() && g.dsa.is_none());
    assert_eq!(g.kv_bytes_per_token(), 61 * 576 * 2);
    // GLM-5.1 (GlmMoeDsaForCausalLM): MLA plus a DSA indexer on all 78 layers.
    let g = catalog("zai-org/GLM-5.1");
    assert_eq!(g.kv_bytes_per_token(), 78 * 576 * 2);
    let dsa = g.dsa.as_ref().unwrap();
    assert_eq!(
        (dsa.index_head_dim, dsa.index_topk, dsa.indexer_layers),
        (128, 2048, 78)
    );
    // gpt-oss-120b: layer_types alternate sliding (window 128) and full, 18 each.
    let g = catalog("openai/gpt-oss-120b");
    assert_eq!(count(&g, |l| *l == LayerKind::Sliding { window: 128 }), 18);
    assert_eq!(g.full_layers(), 18);
    assert_eq!(g.kv_bytes_per_token(), 36 * 8 * 128 * 2);
    // Llama 4 Scout: chunks of 8192 on RoPE layers, every 4th layer (NoPE) global: 36 + 12.
    let g = catalog("meta-llama/Llama-4-Scout-17B-16E-Instruct");
    assert_eq!(count(&g, |l| *l == LayerKind::Chunked { size: 8192 }), 36);
    assert_eq!(g.full_layers(), 12);
    assert_eq!(g.kv_bytes_per_token(), 48 * 8 * 256 * 2);
    // Gemma 3 27B: every 6th of 62 layers global (10), the rest a 1024-token window.
    let g = catalog("google/gemma-3-27b-it");
    assert_eq!(g.full_layers(), 10);
    assert_eq!(count(&g, |l| *l == LayerKind::Sliding { window: 1024 }), 52);
    assert_eq!(g.kv_bytes_per_token(), 62 * 16 * 256 * 2);
    // Qwen3-Next-80B and Qwen3.5-27B: Gated DeltaNet on three layers of four.
    let g = catalog("Qwen/Qwen3-Next-80B-A3B-Thinking");
    assert_eq!(
        (g.full_layers(), count(&g, |l| *l == LayerKind::Linear)),
        (12, 36)
    );
    assert_eq!(g.kv_bytes_per_token(), 12 * 2 * 512 * 2);
    let g = catalog("Qwen/Qwen3.5-27B");
    assert_eq!(
        (g.full_layers(), count(&g, |l| *l == LayerKind::Linear)),
        (16, 48)
    );
    assert_eq!(g.kv_bytes_per_token(), 16 * 4 * 512 * 2);
}

/// The GDN state SGLang keeps per request (`Mamba2CacheParams.mamba_cache_per_req`) for
/// Qwen3-Next-80B at TP 1, worked by hand: conv_dim = 32·128 + 2·16·128 = 8,192; conv state
/// 8,192 × (4 − 1) × 2 B = 49,152; fp32 SSM state 32 × 128 × 128 × 4 B = 2,097,152; × 36
/// linear layers = 77,266,944 B. KV: 12 full layers × 2 heads × (256 + 256) × 2 B = 24,576.
#[test]
fn qwen3_next_plans_its_gated_deltanet_state_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let sh = dir.path().join("launch.sh");
    std::fs::write(&sh, "python3 -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Thinking --context-length 32768\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kvlint"))
        .args([
            "check",
            "--offline",
            "--gpu",
            "h200",
            "--engine-version",
            "0.5.23",
        ])
        .args(["--format", "json"])
        .arg(&sh)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let plan = &report["launches"][0];
    assert_eq!(plan["kv_bytes_per_token"], 24_576, "{plan}");
    let state = plan["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["term"] == "mamba_state_bytes_per_request")
        .unwrap();
    assert_eq!(state["value"], 77_266_944.0);
}

/// kvlint's JSON report for `launch` serving `model`: a catalog id (its pinned public
/// config.json, offline) or a fixture under fixtures/models/hybrids/.
fn hybrid_report(model: &str, launch: &str, gpu: &str, version: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let sh = dir.path().join("launch.sh");
    std::fs::write(&sh, launch.replace("MODEL", model)).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvlint"));
    cmd.args([
        "check",
        "--offline",
        "--gpu",
        gpu,
        "--engine-version",
        version,
    ])
    .args(["--format", "json"]);
    if !model.contains('/') {
        cmd.arg("--model-config")
            .arg(format!("fixtures/models/hybrids/{model}.json"));
    }
    let out = cmd.arg(&sh).output().unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn assumption(plan: &serde_json::Value, term: &str) -> Option<f64> {
    plan["assumptions"]
        .as_array()?
        .iter()
        .find(|a| a["term"] == term)?["value"]
        .as_f64()
}

/// The hybrid families, planned by SGLang 0.5.23 at TP 1, never refused as unmodelled:
/// Nemotron-3-Nano, Granite-4.0-H-350M and LFM2.5-VL from their pinned public config.json (the
/// catalog), the others from the geometry keys of theirs (fixtures/models/hybrids). Worked by hand from
/// `Mamba2StateShape.create` / `create_full_rank` / `KimiLinearStateShape.create` and
/// `mamba_cache_per_req` (conv bf16, SSM fp32):
/// - Nemotron-3-Nano-30B-A3B: conv (64·64 + 2·8·128) × 3 × 2 B = 36,864, SSM 64·64·128 × 4 B =
///   2,097,152; × 23 'M' layers = 49,082,368. KV: 6 '*' layers × 2 heads × 256 × 2 B = 6,144.
/// - Granite-4.0-H-350M (real pinned config): conv (48·32 + 2·128) × 3 × 2 = 10,752, SSM
///   48·32·128 × 4 = 786,432; × 28 'mamba' layers = 22,321,152. KV: 4 layers × 4 × (64 + 64) × 2
///   = 4,096.
/// - Falcon-H1-0.5B: conv (1,536 + 256) × 3 × 2 = 10,752, SSM 24·64·128 × 4 = 786,432; × 36
///   (a mixer on every layer) = 28,698,624. KV: all 36 layers × 2 × 128 × 2 = 18,432.
/// - LFM2.5-VL-1.6B (real pinned config; its `text_config` is LFM2-1.2B): conv `hidden_size`
///   2,048 × (`conv_L_cache` 3 − 1) × 2 B = 8,192, no SSM; × 10 conv layers = 81,920. KV: 6
///   full-attention layers × 8 heads × (64 + 64) × 2 B = 12,288.
/// - Kimi-Linear-48B-A3B: conv 3·32·128 × 3 × 2 = 73,728, state 32·128·128 × 4 = 2,097,152; × 20
///   KDA layers = 43,417,600. KV: MLA on its 7 full layers × 576 × 2 = 8,064.
#[test]
fn hybrid_families_plan_their_state_on_sglang() {
    let launch = "python3 -m sglang.launch_server --model-path MODEL --context-length 8192\n";
    for (fixture, kv, state) in [
        (
            "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
            6_144,
            49_082_368.0,
        ),
        ("ibm-granite/granite-4.0-h-350m", 4_096, 22_321_152.0),
        ("falcon-h1-0.5b-instruct", 18_432, 28_698_624.0),
        ("LiquidAI/LFM2.5-VL-1.6B", 12_288, 81_920.0),
        ("kimi-linear-48b-a3b-instruct", 8_064, 43_417_600.0),
    ] {
        let report = hybrid_report(fixture, launch, "h200", "0.5.23");
        let plan = &report["launches"][0];
        assert_eq!(plan["verdict"], "passes", "{fixture}: {report}");
        assert_eq!(plan["kv_bytes_per_token"], kv, "{fixture}");
        assert_eq!(
            assumption(plan, "mamba_state_bytes_per_request"),
            Some(state),
            "{fixture}"
        );
    }
}

/// The same families on vLLM, plus the vLLM-only Jamba and MiniMax-Text-01: the attention block
/// grows until one page holds a layer's state (`update_block_size_for_backend`), each state page
/// worked by hand from `MambaStateShapeCalculator` and `MambaStateDtypeCalculator` (bf16 model):
/// - Nemotron-H: 18,432 × 2 + 524,288 × 4 (float32 by its hook) = 2,134,016 B; a token of
///   attention is 2 × 2 × 128 × 2 = 1,024 B: 16 × ⌈2,134,016 / 16,384⌉ = 2,096.
/// - Granite-4.0-H-350M: 5,376 × 2 + 196,608 × 2 (`auto` follows the conv dtype) = 403,968;
///   4 × (64 + 64) × 2 = 1,024: 16 × ⌈403,968 / 16,384⌉ = 400.
/// - Falcon-H1: 5,376 × 2 + 196,608 × 2 = 403,968; 512: 16 × ⌈403,968 / 8,192⌉ = 800.
/// - Kimi-Linear: 36,864 × 2 + 524,288 × 4 = 2,170,880; MLA aligns to 128, 576 × 2 = 1,152:
///   128 × ⌈2,170,880 / 147,456⌉ = 1,920.
/// - Jamba at TP 2 (Mamba1): 12,288 × 2 + 65,536 × 2 = 155,648; 4 × 2 × 128 × 2 = 2,048:
///   16 × ⌈155,648 / 32,768⌉ = 80.
/// - MiniMax-Text-01 at TP 8 (lightning, one state in the model dtype, 0.23.0):
///   8 × 128 × 128 × 2 = 262,144; 1 × 2 × 128 × 2 = 512: 16 × ⌈262,144 / 8,192⌉ = 512.
#[test]
fn hybrid_families_size_the_vllm_attention_block_for_their_state() {
    for (fixture, gpu, version, tp, block) in [
        (
            "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
            "h200",
            "0.33.0",
            1,
            Some(2096.0),
        ),
        (
            "ibm-granite/granite-4.0-h-350m",
            "h200",
            "0.33.0",
            1,
            Some(400.0),
        ),
        ("falcon-h1-0.5b-instruct", "h200", "0.33.0", 1, Some(800.0)),
        (
            "kimi-linear-48b-a3b-instruct",
            "h200",
            "0.33.0",
            1,
            Some(1920.0),
        ),
        ("jamba-v0.1", "h200x8", "0.33.0", 2, Some(80.0)),
        ("minimax-text-01", "h200x8", "0.23.0", 8, Some(512.0)),
        // LFM2 (LFM2.5-VL's pinned config): its 8,192-byte conv state fits a 16-token page of
        // 8 × (64 + 64) × 2 = 2,048 B tokens (32,768 B): no raise.
        ("LiquidAI/LFM2.5-VL-1.6B", "h200", "0.33.0", 1, None),
    ] {
        let launch = format!("vllm serve MODEL --max-model-len 8192 -tp {tp}\n");
        let report = hybrid_report(fixture, &launch, gpu, version);
        let plan = &report["launches"][0];
        assert_eq!(plan["verdict"], "passes", "{fixture}: {report}");
        assert!(plan["pool_tokens"].as_u64().unwrap() > 8192, "{fixture}");
        assert_eq!(assumption(plan, "attention_block_size"), block, "{fixture}");
    }
}

/// Gemma 3n E4B (35 layers, four sliding then one full, the last 15 reading earlier layers' KV;
/// 2 KV heads × 256 × 2 B × 2 = 2,048 B per layer per token), worked by hand:
/// - vLLM 0.33.0: the 15 shared layers get no KV spec (`gemma3n.py :: Gemma3nAttention.__init__`
///   sets `kv_sharing_target_layer_name`; `gpu_model_runner.py :: get_kv_cache_spec` skips it),
///   so 20 layers (16 sliding, 4 full) × 2,048 = 40,960 B.
/// - vLLM 0.23.0 (code unread) and SGLang 0.5.23 (`gemma3n_causal.py` only reroutes the shared
///   layers' `layer_id`; the pool still holds `num_effective_layers`, `layer_setup.py`): all 35 ×
///   2,048 = 71,680 B.
#[test]
fn gemma_3n_shares_kv_on_vllm_only() {
    for (launch, version, kv) in [
        ("vllm serve MODEL --max-model-len 8192\n", "0.33.0", 40_960),
        ("vllm serve MODEL --max-model-len 8192\n", "0.23.0", 71_680),
        (
            "python3 -m sglang.launch_server --model-path MODEL --context-length 8192\n",
            "0.5.23",
            71_680,
        ),
    ] {
        let report = hybrid_report("gemma-3n-e4b-it", launch, "h200", version);
        let plan = &report["launches"][0];
        assert_eq!(plan["verdict"], "passes", "{version}: {report}");
        assert_eq!(plan["kv_bytes_per_token"], kv, "{version}");
    }
}

/// Nemotron-3-Ultra's pinned config.json states its 108 layers only as `layers_block_type` (48
/// Mamba2, 12 attention, 48 MoE). SGLang 0.5.23 at TP 8, by hand: KV max(1, 2 / 8) = 1 head ×
/// (128 + 128) × 2 B × 12 layers = 6,144 B per token; Mamba2 width 256 · 64 = 16,384, conv
/// (16,384 + 2·8·128) / 8 × 3 × 2 B = 13,824, SSM 32 × 64 × 128 × 4 B = 1,048,576; × 48 =
/// 50,995,200 B per request.
#[test]
fn nemotron_ultra_reads_its_layer_list() {
    let launch =
        "python3 -m sglang.launch_server --model-path MODEL --tp 8 --context-length 8192\n";
    let report = hybrid_report(
        "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
        launch,
        "h200x8",
        "0.5.23",
    );
    let plan = &report["launches"][0];
    assert_eq!(plan["kv_bytes_per_token"], 6_144, "{report}");
    assert_eq!(
        assumption(plan, "mamba_state_bytes_per_request"),
        Some(50_995_200.0)
    );
    // Its experts work in the 2,048-wide latent: about 550B parameters, 1.1 TB in bf16, not
    // the 4 TB that experts as wide as the hidden size would weigh.
    let weights = assumption(plan, "weights_bytes_per_rank").unwrap() * 8.0;
    assert!((1.05e12..1.2e12).contains(&weights), "{weights}");
}

/// The CI step (`tools/gen_architectures.py --check` in .ci/run), offline over a release cache
/// built here: a registry that adds an architecture the table lacks fails it, naming the
/// architecture; one the table holds passes.
#[test]
fn registry_check_fails_on_an_architecture_the_table_lacks() {
    let check = |archs: &[&str]| {
        let cache = tempfile::tempdir().unwrap();
        let root = cache.path().join("architectures/vllm-0.33.0");
        let models = root.join("vllm/model_executor/models");
        std::fs::create_dir_all(&models).unwrap();
        std::fs::write(root.join("complete"), "").unwrap();
        let rows: String = archs
            .iter()
            .map(|a| format!("    \"{a}\": (\"llama\", \"{a}\"),\n"))
            .collect();
        std::fs::write(
            models.join("registry.py"),
            format!("_TEXT_GENERATION_MODELS = {{\n{rows}}}\n"),
        )
        .unwrap();
        std::fs::write(models.join("llama.py"), "class LlamaAttention: pass\n").unwrap();
        let out = Command::new("python3")
            .args(["tools/gen_architectures.py", "--check"])
            .env("KVLINT_CACHE", cache.path())
            .env("KVLINT_ARCH_RELEASES", "vllm=0.33.0")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = check(&["LlamaForCausalLM", "ZorblaxForCausalLM"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("ZorblaxForCausalLM: registered by vllm but not in"),
        "{stderr}"
    );
    assert_eq!(check(&["LlamaForCausalLM"]).0, Some(0));
}

/// TensorRT-LLM registers Nemotron-H, but kvlint does not size its state pool there: INP008,
/// never a plan that leaves the state out.
#[test]
fn recurrent_state_on_tensorrt_llm_is_refused() {
    let launch = "trtllm-serve MODEL --tp_size 1 --max_seq_len 8192\n";
    let report = hybrid_report(
        "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
        launch,
        "h200",
        "1.0.0",
    );
    let f = &report["findings"][0];
    assert_eq!(f["rule"], "INP008", "{report}");
    assert!(
        f["message"].as_str().unwrap().contains("TensorRT-LLM"),
        "{f}"
    );
    assert!(report["launches"][0]["pool_tokens"].is_null());
}

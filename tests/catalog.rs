//! The embedded model catalog as data: every entry parses, is pinned to a public source, is what
//! tools/gen_model_catalog.py writes, and resolves to the KV geometry worked out by hand from its
//! config.json.

use std::collections::HashMap;
use std::path::Path;

use kvlint::model::{catalog_lookup, Geometry, LayerKind};
use serde_json::Value;

const CATALOG: &str = include_str!("../src/model/catalog.json");

fn models() -> Vec<Value> {
    let doc: Value = serde_json::from_str(CATALOG).expect("catalog.json is JSON");
    doc["models"].as_array().expect("models list").clone()
}

fn names(m: &Value, key: &str) -> Vec<String> {
    m[key]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn the_catalog_holds_the_models_people_serve() {
    let ids: Vec<String> = models()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    assert!(ids.len() >= 200, "{} entries", ids.len());
    for id in [
        "meta-llama/Llama-3.1-8B",
        "meta-llama/Llama-3.2-1B-Instruct",
        "meta-llama/Llama-3.3-70B-Instruct",
        "Qwen/Qwen2.5-14B",
        "Qwen/Qwen3-4B",
        "Qwen/Qwen3-14B",
        "Qwen/Qwen3-32B-FP8",
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
        "google/gemma-2-9b-it",
        "openai/gpt-oss-20b",
        "nvidia/Qwen3-235B-A22B-NVFP4",
        "Qwen/Qwen2.5-1.5B-Instruct",
        "Qwen/Qwen2.5-VL-3B-Instruct",
        "mistralai/Mistral-7B-Instruct-v0.2",
        "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF",
    ] {
        assert!(ids.iter().any(|i| i == id), "{id} missing");
    }
}

#[test]
fn every_entry_yields_a_geometry() {
    let bad: Vec<String> = models()
        .iter()
        .filter_map(|m| {
            let id = m["id"].as_str().unwrap();
            catalog_lookup(id).is_none().then(|| id.to_string())
        })
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}

/// Entries of the reference table whose public copy is pinned by a branch, not a commit. The
/// list may only shrink.
const PINNED_BY_BRANCH: &[&str] = &[
    "zai-org/GLM-4.7",
    "zai-org/GLM-4.6",
    "zai-org/GLM-4.5",
    "zai-org/GLM-4.5-Air",
    "mistralai/Mistral-Large-Instruct-2411",
];

/// `github:owner/repo@<40 hex>:path`, or a Hugging Face page at a 40-hex commit.
fn pinned(source: &str) -> bool {
    let hex40 = |s: &str| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if let Some(rest) = source.strip_prefix("github:") {
        let Some((repo, after)) = rest.split_once('@') else {
            return false;
        };
        let Some((commit, path)) = after.split_once(':') else {
            return false;
        };
        return repo.split('/').count() == 2 && hex40(commit) && !path.is_empty();
    }
    source.starts_with("https://huggingface.co/") && source.split('/').any(hex40)
}

#[test]
fn every_source_is_pinned_to_a_revision() {
    let unpinned: Vec<String> = models()
        .iter()
        .filter(|m| !PINNED_BY_BRANCH.contains(&m["id"].as_str().unwrap()))
        .filter(|m| !pinned(m["source"].as_str().unwrap()))
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    assert!(unpinned.is_empty(), "{unpinned:#?}");
    assert!(pinned(
        "github:ai-dynamo/aiconfigurator@095f58a51c4ca8e61b66ec108d86f223f8d559ce:x.json"
    ));
    assert!(!pinned("github:ai-dynamo/aiconfigurator@main:x.json"));
    assert!(!pinned(
        "https://huggingface.co/zai-org/GLM-4.7/blob/refs%2Fpr%2F49/config.json"
    ));
}

#[test]
fn ids_aliases_and_twins_name_one_entry_each() {
    let mut seen: HashMap<String, String> = HashMap::new();
    for m in models() {
        let id = m["id"].as_str().unwrap().to_string();
        let mut all = vec![id.clone()];
        all.extend(names(&m, "aliases"));
        all.extend(names(&m, "same_geometry"));
        for name in all {
            if let Some(other) = seen.insert(name.to_ascii_lowercase(), id.clone()) {
                panic!("{name} names both {other} and {id}");
            }
        }
    }
    // meta-llama renamed Meta-Llama-3.1-* to Llama-3.1-*: one entry carries both names.
    let llama = models()
        .into_iter()
        .find(|m| m["id"] == "meta-llama/Llama-3.1-70B-Instruct")
        .unwrap();
    assert_eq!(
        names(&llama, "aliases"),
        ["meta-llama/Meta-Llama-3.1-70B-Instruct"]
    );
}

#[test]
fn quantized_variants_keep_their_quantization_config() {
    for id in [
        "Qwen/Qwen3-32B-FP8",
        "Qwen/Qwen3-8B-FP8",
        "nvidia/Qwen3-235B-A22B-NVFP4",
        "nvidia/DeepSeek-V3.1-NVFP4",
        "meta-llama/Llama-3.1-405B-Instruct-FP8",
        "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
        "openai/gpt-oss-120b",
        "nvidia/Llama-3.1-8B-Instruct-NVFP4",
        "moonshotai/Kimi-K2.6",
        "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
        "Qwen/Qwen3-30B-A3B-Thinking-2507-FP8",
        "XiaomiMiMo/MiMo-V2.5",
    ] {
        let g = catalog_lookup(id).unwrap_or_else(|| panic!("{id} not in catalog"));
        let q = g
            .quantization
            .unwrap_or_else(|| panic!("{id} lost its quantization"));
        assert!(q.weight_bits < 16, "{id}: {q:?}");
    }
}

/// Rows under tools/model_catalog/ are copied into catalog.json unchanged (the generator's
/// contract); a row edited without regenerating fails here.
#[test]
fn catalog_json_has_every_row_of_tools_model_catalog() {
    let by_id: HashMap<String, Value> = models()
        .into_iter()
        .map(|m| (m["id"].as_str().unwrap().to_string(), m))
        .collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/model_catalog");
    let mut rows = 0;
    for file in std::fs::read_dir(&dir).unwrap() {
        let path = file.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            if line.trim().is_empty() {
                continue;
            }
            let row: Value = serde_json::from_str(line).unwrap();
            let id = row["id"].as_str().unwrap();
            assert_eq!(
                by_id.get(id),
                Some(&row),
                "{id} ({}) differs from catalog.json: run python3 tools/gen_model_catalog.py",
                path.display()
            );
            rows += 1;
        }
    }
    assert!(rows > 100, "{rows} rows");
}

#[test]
#[ignore = "reads ../shared"]
fn generator_output_is_the_committed_catalog() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("kvlint-catalog-{}.json", std::process::id()));
    let jsonl = root.join("../shared/reference/model-geometry.jsonl");
    let status = std::process::Command::new("python3")
        .arg(root.join("tools/gen_model_catalog.py"))
        .arg(&jsonl)
        .arg(&out)
        .status()
        .expect("python3 runs");
    assert!(status.success());
    let fresh = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).ok();
    assert!(
        fresh == CATALOG,
        "src/model/catalog.json is stale: run python3 tools/gen_model_catalog.py"
    );
}

/// KV bytes per token with a 2-byte (bf16) cache: over the layers that keep every past token,
/// and over the windowed layers (whose total is capped by their window). Gemma 4 sliding
/// layers have their own heads (`swa_heads`).
fn kv_bytes(g: &Geometry) -> (u64, u64) {
    let per_layer = match &g.mla {
        Some(m) => u64::from(m.kv_lora_rank + m.qk_rope_head_dim) * 2,
        None => u64::from(g.num_kv_heads) * u64::from(g.head_dim + g.v_head_dim) * 2,
    };
    let per_window_layer = g.swa_heads.as_ref().map_or(per_layer, |s| {
        u64::from(s.num_kv_heads) * u64::from(s.head_dim + s.v_head_dim) * 2
    });
    let count = |f: fn(&LayerKind) -> bool| g.layers.iter().filter(|l| f(l)).count() as u64;
    let full = count(|l| matches!(l, LayerKind::Full));
    let windowed = count(|l| matches!(l, LayerKind::Sliding { .. } | LayerKind::Chunked { .. }));
    (full * per_layer, windowed * per_window_layer)
}

fn windows(g: &Geometry) -> Vec<u32> {
    let mut w: Vec<u32> = g
        .layers
        .iter()
        .filter_map(|l| match l {
            LayerKind::Sliding { window } => Some(*window),
            _ => None,
        })
        .collect();
    w.dedup();
    w
}

#[test]
fn kv_bytes_per_token_match_the_config_json_by_hand() {
    // (id, full-attention bytes/token, windowed bytes/token), worked out from each config.json.
    let cases: &[(&str, u64, u64)] = &[
        // GQA. Llama-3.1-8B: 32 layers × 8 KV heads × 128 head_dim × 2 (K,V) × 2 bytes.
        ("meta-llama/Llama-3.1-8B", 131_072, 0),
        // 80 × 8 × 128 × 2 × 2 (looked up by its new name; the entry also carries the old one).
        ("meta-llama/Llama-3.1-70B-Instruct", 327_680, 0),
        // 126 × 8 × 128 × 2 × 2.
        ("meta-llama/Llama-3.1-405B", 516_096, 0),
        // 16 × 8 × (2048 / 32 = 64) × 2 × 2.
        ("meta-llama/Llama-3.2-1B-Instruct", 32_768, 0),
        // 28 × 8 × 128 (head_dim) × 2 × 2.
        ("meta-llama/Llama-3.2-3B", 114_688, 0),
        // 28 × 4 × (3584 / 28 = 128) × 2 × 2.
        ("Qwen/Qwen2.5-7B", 57_344, 0),
        // 24 × 2 × (896 / 14 = 64) × 2 × 2.
        ("Qwen/Qwen2.5-0.5B", 12_288, 0),
        // 80 × 8 × (8192 / 64 = 128) × 2 × 2.
        ("Qwen/Qwen2.5-72B", 327_680, 0),
        // 40 × 8 × 128 × 2 × 2.
        ("Qwen/Qwen3-14B", 163_840, 0),
        // FP8 weights, bf16 cache: 48 × 4 × 128 × 2 × 2.
        ("Qwen/Qwen3-30B-A3B-FP8", 98_304, 0),
        // 56 × 8 × (6144 / 48 = 128) × 2 × 2.
        ("mistralai/Mixtral-8x22B-v0.1", 229_376, 0),
        // MHA: 40 × 64 × (8192 / 64 = 128) × 2 × 2.
        ("CohereForAI/c4ai-command-r-v01", 1_310_720, 0),
        // ChatGLM: num_layers 40 × multi_query_group_num 2 × kv_channels 128 × 2 × 2.
        ("THUDM/glm-4-9b", 40_960, 0),
        // MLA: one latent per layer, 61 × (kv_lora_rank 512 + qk_rope_head_dim 64) × 2 bytes.
        ("deepseek-ai/DeepSeek-V3.1", 70_272, 0),
        // MLA: 27 × (512 + 64) × 2.
        ("deepseek-ai/DeepSeek-V2-Lite", 31_104, 0),
        // MLA in text_config: 61 × (512 + 64) × 2.
        ("moonshotai/Kimi-K2.5", 70_272, 0),
        // Sliding window: Gemma 2 alternates 4096-token windows and full layers, 42 / 2 = 21
        // each; 21 × 8 × 256 (head_dim) × 2 × 2.
        ("google/gemma-2-9b", 172_032, 172_032),
        // Gemma 3: sliding_window_pattern 6, so layers 6, 12, 18, 24 of 26 are full;
        // 4 × 1 × 256 × 2 × 2 full and 22 × 1 × 256 × 2 × 2 in 512-token windows.
        ("google/gemma-3-1b-it", 4_096, 22_528),
        // gpt-oss: layer_types alternate, 18 full and 18 with 128-token windows;
        // 18 × 8 × 64 × 2 × 2 each.
        ("openai/gpt-oss-120b", 36_864, 36_864),
        // Qwen3.5: full_attention_interval 4, 8 of 32 layers keep KV, the rest are linear
        // attention (fixed state); 8 × 4 × 256 × 2 × 2.
        ("Qwen/Qwen3.5-9B", 32_768, 0),
    ];
    let mut bad = Vec::new();
    for (id, full, windowed) in cases {
        let g = catalog_lookup(id).unwrap_or_else(|| panic!("{id} not in catalog"));
        let got = kv_bytes(&g);
        if got != (*full, *windowed) {
            bad.push(format!("{id}: {got:?} vs {:?}", (full, windowed)));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
    let gemma3 = catalog_lookup("google/gemma-3-1b-it").unwrap();
    assert_eq!(windows(&gemma3), [512]);
    let gpt_oss = catalog_lookup("openai/gpt-oss-120b").unwrap();
    assert_eq!(windows(&gpt_oss), [128]);
    let gemma2 = catalog_lookup("google/gemma-2-9b").unwrap();
    assert_eq!(windows(&gemma2), [4096]);
}

/// src/gpu/catalog.toml is what tools/gen_gpu_catalog.py writes from tools/gpu_catalog/.
#[test]
fn gpu_catalog_is_the_generators_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("kvlint-gpu-catalog-{}.toml", std::process::id()));
    let status = std::process::Command::new("python3")
        .arg(root.join("tools/gen_gpu_catalog.py"))
        .arg(&out)
        .status()
        .expect("python3 runs");
    assert!(status.success());
    let fresh = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).ok();
    let committed = std::fs::read_to_string(root.join("src/gpu/catalog.toml")).unwrap();
    assert!(
        fresh == committed,
        "src/gpu/catalog.toml is stale: run python3 tools/gen_gpu_catalog.py"
    );
}

#[derive(serde::Deserialize)]
struct PopularList {
    model: Vec<Popular>,
}

/// One id of tools/popular_models.toml: its KV bytes per token worked out from its config.json
/// (absent while no public copy is pinned), and the public files that name it.
#[derive(serde::Deserialize)]
struct Popular {
    id: String,
    full: Option<u64>,
    windowed: Option<u64>,
    unmodelled: Option<String>,
    sources: Vec<String>,
}

/// Share of the popularity list that resolves offline with the right KV bytes. The issue's
/// target is 95 %; this floor is what the catalog reaches today, and may only rise.
const POPULAR_FLOOR: f64 = 0.455;

#[test]
fn popular_models_resolve_offline() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/popular_models.toml");
    let list: PopularList = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(list.model.len() >= 150, "{} ids", list.model.len());
    let (mut resolved, mut wrong, mut missing, mut unmodelled) = (0, vec![], vec![], vec![]);
    for m in &list.model {
        assert!(!m.sources.is_empty(), "{}: no public source", m.id);
        let expected = m.full.zip(m.windowed);
        match (catalog_lookup(&m.id), expected) {
            (Some(g), Some(want)) if kv_bytes(&g) == want => resolved += 1,
            (Some(g), want) => wrong.push(format!("{}: {:?} vs {want:?}", m.id, kv_bytes(&g))),
            (None, _) => match &m.unmodelled {
                Some(arch) => unmodelled.push(format!("{} ({arch})", m.id)),
                None => missing.push(m.id.as_str()),
            },
        }
    }
    let share = f64::from(resolved) / list.model.len() as f64;
    println!(
        "popular ids resolved offline with the right KV bytes: {resolved} of {} ({:.1} %)",
        list.model.len(),
        share * 100.0
    );
    println!("config pinned, architecture not modelled (INP008): {unmodelled:#?}");
    println!("no pinned config.json: {missing:#?}");
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(share >= POPULAR_FLOOR, "{share:.3} < {POPULAR_FLOOR}");
}

/// vLLM's own reading of the same checkpoints, transcribed from its
/// tests/config/model_arch_groundtruth.json (vllm-project/vllm@0a4f4724eff0): layers, attention
/// heads, KV heads and head size (for MLA, head_size is kv_lora_rank + qk_rope_head_dim). Five of
/// its checkpoints are catalogued.
#[test]
fn geometry_matches_vllm_model_arch_groundtruth() {
    // (id, layers, attention heads, KV heads, head size)
    let cases: &[(&str, u32, u32, u32, u32)] = &[
        ("Qwen/Qwen3-Next-80B-A3B-Instruct", 48, 16, 2, 256),
        ("zai-org/GLM-4.5", 92, 96, 8, 128),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 48, 40, 8, 128),
        // Nemotron-NAS: no num_key_value_heads; every attention block has n_heads_in_group 8.
        ("nvidia/Llama-3_3-Nemotron-Super-49B-v1", 80, 64, 8, 128),
    ];
    let mut bad = Vec::new();
    for &(id, layers, heads, kv_heads, head) in cases {
        let g = catalog_lookup(id).unwrap_or_else(|| panic!("{id} not in catalog"));
        let got = (
            g.num_layers,
            g.num_attention_heads,
            g.num_kv_heads,
            g.head_dim,
        );
        if got != (layers, heads, kv_heads, head) {
            bad.push(format!(
                "{id}: {got:?} vs {:?}",
                (layers, heads, kv_heads, head)
            ));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
    // MLA: 61 layers, one latent of 576 per layer.
    let v32 = catalog_lookup("deepseek-ai/DeepSeek-V3.2-Exp").unwrap();
    let mla = v32.mla.as_ref().expect("DeepSeek-V3.2-Exp is MLA");
    assert_eq!(
        (v32.num_layers, mla.kv_lora_rank + mla.qk_rope_head_dim),
        (61, 576)
    );
}

/// README.md and the book's introduction state how many models and GPUs the catalogs hold.
#[test]
fn readme_and_introduction_state_the_catalog_size() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let claims = [
        format!("an embedded catalog of {} models", models().len()),
        format!(
            "an embedded catalog of {} GPUs",
            kvlint::gpu::catalog::entries().len()
        ),
    ];
    for page in ["README.md", "docs/src/introduction.md"] {
        let text = std::fs::read_to_string(root.join(page)).unwrap();
        for claim in &claims {
            assert!(text.contains(claim), "{page} does not say {claim:?}");
        }
    }
}

/// A sample of the popularity list, worked by hand from each id's config.json: the catalog's
/// geometry and the figures `tools/popular_models.py` wrote into the list must both equal them.
#[test]
fn popular_ids_kv_bytes_match_hand_arithmetic() {
    // (id, full-attention bytes/token, windowed bytes/token), bf16 cache, all layers.
    let cases: &[(&str, u64, u64)] = &[
        // 80 layers × 8 KV heads × (8192 / 64 = 128) × 2 (K,V) × 2 bytes.
        ("meta-llama/Llama-3.3-70B-Instruct", 327_680, 0),
        // 94 × 4 × 128 (head_dim) × 2 × 2.
        ("Qwen/Qwen3-235B-A22B", 192_512, 0),
        // 64 × 8 × 128 × 2 × 2.
        ("Qwen/Qwen3-32B", 262_144, 0),
        // 28 × 2 × (1536 / 12 = 128) × 2 × 2.
        ("Qwen/Qwen2.5-1.5B-Instruct", 28_672, 0),
        // 40 × 10 × (5120 / 40 = 128) × 2 × 2.
        ("microsoft/phi-4", 204_800, 0),
        // 62 × 8 × 128 × 2 × 2.
        ("MiniMaxAI/MiniMax-M2.5", 253_952, 0),
        // gpt-oss-20b: layer_types alternate over 24 layers, 12 full and 12 in 128-token
        // windows; 12 × 8 × 64 × 2 × 2 each.
        ("openai/gpt-oss-20b", 24_576, 24_576),
        // Llama 4 Scout: 48 layers, every 4th global (12), the other 36 chunked (8192);
        // 12 × 8 × 128 × 2 × 2 and 36 × 8 × 128 × 2 × 2.
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 49_152, 147_456),
        // Qwen3.5-397B: full_attention_interval 4 over 60 layers, 15 keep KV;
        // 15 × 2 × 256 × 2 × 2.
        ("Qwen/Qwen3.5-397B-A17B", 30_720, 0),
        // MLA: 61 × (kv_lora_rank 512 + qk_rope_head_dim 64) × 2 bytes.
        ("deepseek-ai/DeepSeek-R1-0528", 70_272, 0),
        // MLA: 47 × (512 + 64) × 2.
        ("zai-org/GLM-4.7-Flash", 54_144, 0),
        // MLA latent (the DSA indexer cache comes on top): 78 × (512 + 64) × 2.
        ("zai-org/GLM-5", 89_856, 0),
        // The 2507 Instruct release keeps Qwen3-30B-A3B's attention: 48 × 4 × 128 × 2 × 2.
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", 98_304, 0),
        // 16 × 8 × 64 (head_dim) × 2 × 2.
        ("meta-llama/Llama-3.2-1B", 32_768, 0),
        // Gemma 4 E4B: layer_types give 7 full and 35 sliding of 42 layers. Full layers use
        // global_head_dim 512 with num_global_key_value_heads null, read as num_key_value_heads
        // 2: 7 × 2 × 512 × 2 × 2; sliding layers 35 × 2 × 256 × 2 × 2.
        ("google/gemma-4-E4B-it", 28_672, 71_680),
        // Kimi-Linear: linear_attn_config.full_attn_layers names 7 MLA layers of 27, the other 20
        // are KDA (fixed state); 7 × (512 + 64) × 2.
        ("moonshotai/Kimi-Linear-48B-A3B-Instruct", 8_064, 0),
        // MiMo-V2.5: hybrid_layer_pattern gives 9 full and 39 sliding layers of 48; full layers
        // 4 KV heads × (head_dim 192 + v_head_dim 128), sliding ones 8 × (192 + 128); × 2 bytes.
        ("XiaomiMiMo/MiMo-V2.5", 23_040, 199_680),
    ];
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/popular_models.toml");
    let list: PopularList = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut bad = Vec::new();
    for (id, full, windowed) in cases {
        let want = (*full, *windowed);
        let g = catalog_lookup(id).unwrap_or_else(|| panic!("{id} not in catalog"));
        if kv_bytes(&g) != want {
            bad.push(format!("{id}: catalog {:?} vs {want:?}", kv_bytes(&g)));
        }
        let listed = list.model.iter().find(|m| m.id == *id);
        let figures = listed.and_then(|m| m.full.zip(m.windowed));
        if figures != Some(want) {
            bad.push(format!("{id}: popular_models.toml {figures:?} vs {want:?}"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// Rows under tools/model_catalog/pending/ are pinned like catalog rows but kept out of
/// catalog.json because kvlint cannot plan them yet; one that would plan belongs in the catalog.
#[test]
fn pending_rows_are_pinned_and_not_yet_plannable() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/model_catalog/pending");
    let mut rows = 0;
    for file in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let row: Value = serde_json::from_str(line).unwrap();
            let id = row["id"].as_str().unwrap();
            assert!(pinned(row["source"].as_str().unwrap()), "{id}: unpinned");
            assert!(catalog_lookup(id).is_none(), "{id} is also in the catalog");
            let plans = Geometry::from_config_json(id, "pending", &row["config"])
                .is_ok_and(|g| kvlint::model::architectures::check(&g).is_ok());
            assert!(
                !plans,
                "{id} plans now: move its row into tools/model_catalog/"
            );
            rows += 1;
        }
    }
    assert!(rows > 0);
}

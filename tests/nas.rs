//! Nemotron-NAS (`DeciLMForCausalLM`, nvidia/Llama-3_3-Nemotron-Super-49B-v1 as the catalog
//! pins it): planned from its per-layer `block_configs` as vLLM and SGLang nemotron_nas.py build
//! it, never as 64 KV heads × 80 layers of plain attention (2,621,440 B per token). The figures
//! are worked by hand from that config: 49 of its 80 blocks have attention, every one with
//! `n_heads_in_group` 8 (64 / 8 = 8 KV heads of 8192 / 64 = 128); the FFN widths come from
//! `_ffn_mult_to_intermediate_size` (`int(2·mult·8192/3)` rounded up to 256): 49 × 28672
//! (5.25), 6 × 14336 (2.625), 10 × 7168 (1.3125), 8 × 5632 (1.0), 6 × 2816 (0.5), 1 × 17920
//! (3.28125); no FFN is a no-op.

use std::path::Path;
use std::process::Command;

use kvlint::model::{catalog_lookup, LayerKind};
use serde_json::Value;

const ID: &str = "nvidia/Llama-3_3-Nemotron-Super-49B-v1";

fn catalog_config() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model/catalog.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let row = doc["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == ID)
        .unwrap();
    row["config"].clone()
}

/// `kvlint check` of one launch line against `config`, on eight H200s.
fn check(launch: &str, config: &Value, version: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, sh) = (dir.path().join("config.json"), dir.path().join("l.sh"));
    std::fs::write(&cfg, config.to_string()).unwrap();
    std::fs::write(&sh, launch).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kvlint"))
        .args(["check", "--gpu", "h200x8", "--engine-version", version])
        .args(["--format", "json", "--model-config"])
        .arg(&cfg)
        .arg(&sh)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn launch(report: &Value) -> &Value {
    &report["launches"][0]
}

#[test]
fn super_49b_geometry_and_weights_follow_its_blocks() {
    let g = catalog_lookup(ID).unwrap();
    let count = |k: LayerKind| g.layers.iter().filter(|l| **l == k).count();
    assert_eq!(
        (count(LayerKind::Full), count(LayerKind::NoAttention)),
        (49, 31)
    );
    assert_eq!(g.num_kv_heads, 8);
    // 49 layers × 8 heads × 128 × 2 (K, V) × 2 B.
    assert_eq!(g.kv_bytes_per_token(), 200_704);
    // Attention: 49 × (2·8192² q/o + 2·8192·1024 k/v + 8192 norm) = 7,399,153,664.
    // FFN: Σ count × (3·8192·width + 8192) = 40,366,637,056.
    // Embedding and untied head: 2 × 128256 × 8192 = 2,101,346,304; final norm 8192.
    assert_eq!(g.params, 49_867_145_216);
    assert_eq!(g.weight_bytes, 2 * 49_867_145_216);
    assert_eq!(g.weight_parts.layer_bytes.len(), 80);
}

/// Per rank at TP 2: vLLM keeps KV for the 49 attention layers only, SGLang sizes its pool for
/// all 80 decoder layers (`_compute_cell_size` × `num_effective_layers`).
#[test]
fn engines_size_the_kv_of_their_own_layers() {
    let cfg = catalog_config();
    let vllm = check(
        &format!("vllm serve {ID} --tensor-parallel-size 2 --max-model-len 131072\n"),
        &cfg,
        "0.33.0",
    );
    // 49 × (8 / 2) × 128 × 2 × 2 B.
    assert_eq!(launch(&vllm)["kv_bytes_per_token"], 100_352, "{vllm}");
    let sglang = check(
        &format!("python3 -m sglang.launch_server --model-path {ID} --tp-size 2 --context-length 131072\n"),
        &cfg,
        "0.5.23",
    );
    // 80 × (8 / 2) × (128 + 128) × 2 B.
    assert_eq!(launch(&sglang)["kv_bytes_per_token"], 163_840, "{sglang}");
    for r in [&vllm, &sglang] {
        assert!(launch(r)["pool_tokens"].as_u64().unwrap() > 0, "{r}");
    }
}

/// vLLM PP 2 (`get_pp_indices`: layers 0–39 and 40–79): the first stage holds 37 attention
/// layers, the second 12, so the pool is sized by 37 × 4 heads × 128 × 2 × 2 B = 75,776 B, and
/// its weights by the first stage: 37 attention layers, 36 FFNs of 28672, 3 of 14336, 1 of
/// 17920 = 32,451,960,832 params = 64,903,921,664 B, plus the 2,101,346,304 B embedding;
/// over the even half of 99,734,290,432 B that is 8,569,061,376 B per TP rank.
#[test]
fn vllm_pipeline_stages_follow_the_uneven_blocks() {
    let cfg = catalog_config();
    let run = |tp: u32, pp: u32| {
        let line = format!(
            "vllm serve {ID} --tensor-parallel-size {tp} --pipeline-parallel-size {pp} --max-model-len 131072\n"
        );
        launch(&check(&line, &cfg, "0.33.0")).clone()
    };
    let (staged, flat) = (run(2, 2), run(4, 1));
    assert_eq!(staged["kv_bytes_per_token"], 75_776, "{staged}");
    // Same rank count, same even share: the difference is the first stage's excess alone.
    let excess =
        staged["weights_bytes"].as_f64().unwrap() - flat["weights_bytes"].as_f64().unwrap();
    assert!((excess - 8_569_061_376.0).abs() < 1e6, "{excess}");
}

/// What neither engine's KV cache can be planned from is INP008, naming the architecture:
/// attention layers with different KV head counts (SGLang raises "Variable GQA (VGQA) is not
/// yet supported"), and blocks replaced by a linear layer (neither nemotron_nas.py builds one).
#[test]
fn variable_gqa_and_linear_blocks_are_refused_by_name() {
    let line = format!("vllm serve {ID} --tensor-parallel-size 8\n");
    let mut vgqa = catalog_config();
    vgqa["block_configs"][0]["attention"]["n_heads_in_group"] = 16.into();
    let mut linear = catalog_config();
    linear["block_configs"][6]["attention"]["replace_with_linear"] = true.into();
    linear["block_configs"][6]["attention"]["no_op"] = false.into();
    for (cfg, says) in [(vgqa, "[4, 8]"), (linear, "block_configs[6]")] {
        let report = check(&line, &cfg, "0.33.0");
        let f = &report["findings"][0];
        assert_eq!(f["rule"], "INP008", "{report}");
        let msg = f["message"].as_str().unwrap();
        assert!(
            msg.contains("DeciLMForCausalLM") && msg.contains(says),
            "{msg}"
        );
        assert!(launch(&report)["pool_tokens"].is_null());
    }
}

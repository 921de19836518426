//! Launch settings that change the pool before it is sized: integers the engines cannot start
//! with, model overrides that change the context, memory taken by LoRA and draft models.
//! Expected values are worked by hand from the engines' code (cited at each test).

mod common;

use common::kvlint;
use serde_json::Value;

/// `kvlint capacity --format json` of one launch on one H100.
fn capacity(launch: &str) -> (i32, Value) {
    let mut args = vec!["capacity", "--gpu", "h100", "--format", "json", "--"];
    args.extend(launch.split_whitespace());
    let run = kvlint(&args);
    let doc = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    (run.code, doc)
}

/// `(rule, message)` of each finding.
fn findings(doc: &Value) -> Vec<(String, String)> {
    doc["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
                    (s("rule"), s("message"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn has(doc: &Value, rule: &str, text: &str) -> bool {
    findings(doc)
        .iter()
        .any(|(r, m)| r == rule && m.contains(text))
}

#[test]
fn ranks_beyond_32_bits_are_refused_not_truncated() {
    // 4294967297 = 2³² + 1 was read as TP 1. The engines keep Python ints, so they would try to
    // start 4294967297 ranks: CFG004, and no plan at TP 1.
    for launch in [
        "vllm serve Qwen/Qwen3-8B -tp 4294967297",
        "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 4294967297",
    ] {
        let (code, doc) = capacity(launch);
        assert_eq!(code, 1, "{launch}: {doc}");
        assert!(has(&doc, "CFG004", "4294967297"), "{launch}: {doc}");
        assert!(doc["pool_tokens"].is_null(), "{launch}: {doc}");
    }
}

#[test]
fn block_size_beyond_32_bits_is_refused_not_a_zero_byte_block() {
    // `--block-size 4294967296` became block 0: 0 bytes per token and a pool of 2⁶⁴ − 1.
    let (code, doc) = capacity("vllm serve Qwen/Qwen3-8B --block-size 4294967296");
    assert_eq!(code, 1, "{doc}");
    assert!(
        has(&doc, "CFG004", "--block-size does not take 4294967296"),
        "{doc}"
    );
    assert!(doc["pool_tokens"].is_null(), "{doc}");
}

#[test]
fn a_world_size_that_overflows_is_refused() {
    // 65536 × 65536 × 2 = 2³³ GPUs: each size fits 32 bits, their product does not.
    let (code, doc) = capacity("vllm serve Qwen/Qwen3-8B -tp 65536 -pp 65536 -dp 2");
    assert_eq!(code, 1, "{doc}");
    assert!(has(&doc, "CFG004", "world size"), "{doc}");
}

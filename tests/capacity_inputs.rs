//! Launch settings that change the pool before it is sized: integers the engines cannot start
//! with, model overrides that change the context, memory taken by LoRA and draft models.
//! Expected values are worked by hand from the engines' code (cited at each test).

mod common;

use common::kvlint;
use serde_json::Value;

/// `kvlint capacity --format json` of one launch on one H100, words split on spaces.
fn capacity(launch: &str) -> (i32, Value) {
    let run = capacity_run(launch);
    let doc = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    (run.code, doc)
}

fn capacity_run(launch: &str) -> common::Run {
    let mut args = vec!["capacity", "--gpu", "h100", "--format", "json", "--"];
    args.extend(launch.split_whitespace());
    kvlint(&args)
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

const SGLANG: &str = "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B";

#[test]
fn sglang_override_args_set_the_default_context() {
    // Qwen3-8B config.json: max_position_embeddings 40960, no rope_scaling.
    let (_, doc) = capacity(SGLANG);
    assert_eq!(doc["context_length"], 40960, "{doc}");
    // utils/hf_transformers/common.py::get_context_length: the rope factor multiplies the first
    // length key unless original_max_position_embeddings is given: int(4.0 × 40960) = 163840.
    let yarn = r#"{"rope_scaling":{"rope_type":"yarn","factor":4.0}}"#;
    let (_, doc) = capacity(&format!("{SGLANG} --json-model-override-args {yarn}"));
    assert_eq!(doc["context_length"], 163840, "{doc}");
    let with_original = r#"{"rope_scaling":{"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768}}"#;
    let (_, doc) = capacity(&format!(
        "{SGLANG} --json-model-override-args {with_original}"
    ));
    assert_eq!(doc["context_length"], 40960, "{doc}");
    let longer = r#"{"max_position_embeddings":65536}"#;
    let (_, doc) = capacity(&format!("{SGLANG} --json-model-override-args {longer}"));
    assert_eq!(doc["context_length"], 65536, "{doc}");
}

#[test]
fn vllm_hf_overrides_set_the_default_context_in_json_and_dotted_form() {
    // config/model.py::_get_and_verify_max_len: the smallest length key, 131072 after the override.
    for o in [
        r#"--hf-overrides {"max_position_embeddings":131072}"#,
        "--hf-overrides.max_position_embeddings 131072",
    ] {
        let (_, doc) = capacity(&format!("vllm serve Qwen/Qwen3-8B {o}"));
        assert_eq!(doc["context_length"], 131072, "{o}: {doc}");
    }
    // YaRN with its original length: 0.11 rescales (32768 × 4), 0.33 does not (40960).
    let yarn = r#"{"rope_scaling":{"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768}}"#;
    for (version, want) in [("0.11.0", 131072), ("0.33.0", 40960)] {
        let mut args = vec!["capacity", "--gpu", "h100", "--format", "json"];
        args.extend([
            "--engine-version",
            version,
            "--",
            "vllm",
            "serve",
            "Qwen/Qwen3-8B",
        ]);
        args.extend(["--hf-overrides", yarn]);
        let run = kvlint(&args);
        let doc: Value = serde_json::from_str(&run.stdout).unwrap_or_default();
        assert_eq!(doc["context_length"], want, "{version}: {}", run.stdout);
    }
}

#[test]
fn overrides_kvlint_cannot_apply_are_findings() {
    // json.loads fails: the engine does not start.
    let (code, doc) = capacity("vllm serve Qwen/Qwen3-8B --hf-overrides {bad");
    assert_eq!(code, 1, "{doc}");
    assert!(has(&doc, "CFG004", "--hf-overrides does not take"), "{doc}");
    let (_, doc) = capacity(&format!("{SGLANG} --json-model-override-args [1]"));
    assert!(has(&doc, "CFG004", "--json-model-override-args"), "{doc}");
    // A key that changes the layers: the geometry is unknown (INP002), never the old one.
    let run = capacity_run(r#"vllm serve Qwen/Qwen3-8B --hf-overrides {"num_hidden_layers":2}"#);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains("num_hidden_layers"), "{}", run.stderr);
}

fn num(doc: &Value, key: &str) -> f64 {
    doc[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing: {doc}"))
}

/// LoRA A and B elements per slot, layer and unit of rank on one rank of Qwen3-8B at TP 1
/// (hidden 4096, 32 × 128 query, 8 × 128 KV, MLP 12288), every module targeted:
/// qkv 3 × 4096 + 6144, o 4096 + 4096, gate_up 2 × 4096 + 2 × 12288, down 12288 + 4096.
const QWEN3_8B_LORA_PER_RANK_UNIT: f64 = 18432.0 + 8192.0 + 32768.0 + 16384.0;

/// vLLM 0.33 also wraps Qwen3ForCausalLM's `embedding_modules` (vocabulary 151936, hidden
/// 4096): embedding A 151936 × rank + B 4096 × rank, logits A rank × 4096 + B 151936 × rank.
const QWEN3_8B_VLLM_VOCAB_PER_RANK_UNIT: f64 = 2.0 * (151936.0 + 4096.0);

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= want * 1e-4,
        "{what}: {got} instead of {want}"
    );
}

fn lora_bytes(launch: &str, base: &str) -> f64 {
    let (_, with) = capacity(launch);
    let (_, without) = capacity(base);
    num(&with, "weights_bytes") - num(&without, "weights_bytes")
}

#[test]
fn vllm_lora_slots_are_weights_before_the_pool() {
    let (_, base) = capacity("vllm serve Qwen/Qwen3-8B");
    // LoRAConfig defaults: max_loras 1, max_lora_rank 16; 36 layers, 2 bytes:
    // (75776 × 36 + 312064) × 16 × 2 = 3040000 × 32 = 97280000 bytes.
    let (_, one) = capacity("vllm serve Qwen/Qwen3-8B --enable-lora");
    let per_slot = QWEN3_8B_LORA_PER_RANK_UNIT * 36.0 + QWEN3_8B_VLLM_VOCAB_PER_RANK_UNIT;
    assert_close(
        num(&one, "weights_bytes") - num(&base, "weights_bytes"),
        97_280_000.0,
        "rank 16",
    );
    let (_, four) =
        capacity("vllm serve Qwen/Qwen3-8B --enable-lora --max-loras 4 --max-lora-rank 64");
    assert_close(
        num(&four, "weights_bytes") - num(&base, "weights_bytes"),
        per_slot * 64.0 * 4.0 * 2.0,
        "4 × 64",
    );
    assert!(num(&four, "pool_tokens") < num(&base, "pool_tokens"));
    // --lora-dtype float32: 4 bytes an element.
    assert_close(
        lora_bytes(
            "vllm serve Qwen/Qwen3-8B --enable-lora --lora-dtype float32",
            "vllm serve Qwen/Qwen3-8B",
        ),
        per_slot * 16.0 * 4.0,
        "float32",
    );
    // Named targets leave the vocabulary buffers out: q/k/v and o only, 26624 × 36 × 16 × 2.
    assert_close(
        lora_bytes(
            "vllm serve Qwen/Qwen3-8B --enable-lora --lora-target-modules q_proj k_proj v_proj o_proj",
            "vllm serve Qwen/Qwen3-8B",
        ),
        (18432.0 + 8192.0) * 36.0 * 16.0 * 2.0,
        "attention only",
    );
}

#[test]
fn vllm_lora_kv_slices_are_whole_heads_of_a_rank() {
    // TP 16 over 8 KV heads: QKVParallelLinear keeps one head per rank (replicated), so the K and
    // V slices of qkv's B are 128 wide, not 8 × 128 / 16 = 64. Per layer and unit of rank:
    // qkv 3 × 4096 + 4096 / 16 + 2 × 128 = 12800, o 4096 / 16 + 4096 = 4352,
    // gate_up 2 × 4096 + 2 × 12288 / 16 = 9728, down 12288 / 16 + 4096 = 4864: 31744;
    // (31744 × 36 + 312064) × 16 × 2 = 46555136 bytes on each rank.
    assert_close(
        lora_bytes(
            "vllm serve Qwen/Qwen3-8B -tp 16 --enable-lora",
            "vllm serve Qwen/Qwen3-8B -tp 16",
        ),
        46_555_136.0,
        "tp 16",
    );
    // --fully-sharded-loras at TP 2 also splits column-parallel A on rank and row-parallel B on
    // out: qkv 3 × 4096 / 2 + 4096 / 2 + 2 × 512 = 9216, o 2048 + 2048 = 4096,
    // gate_up 4096 + 12288 = 16384, down 6144 + 2048 = 8192: 37888;
    // (37888 × 36 + 312064) × 16 × 2 = 53633024 bytes.
    assert_close(
        lora_bytes(
            "vllm serve Qwen/Qwen3-8B -tp 2 --enable-lora --fully-sharded-loras",
            "vllm serve Qwen/Qwen3-8B -tp 2",
        ),
        53_633_024.0,
        "fully sharded",
    );
}

#[test]
fn vllm_lora_wraps_every_expert() {
    // Qwen3-30B-A3B (hidden 2048, 32 × 128 query, 4 × 128 KV, 48 layers, 128 experts of width
    // 768, vocabulary 151936). FusedMoEWithLoRA holds A and B per local expert: gate_up
    // 128 × (2 × 2048 + 2 × 768) = 720896, down 128 × (768 + 2048) = 360448; qkv
    // 3 × 2048 + 4096 + 1024 = 11264, o 4096 + 2048 = 6144; vocabulary 2 × (151936 + 2048).
    // (1098752 × 48 + 307968) × 16 × 2 = 1697538048 bytes.
    assert_close(
        lora_bytes(
            "vllm serve Qwen/Qwen3-30B-A3B --enable-lora",
            "vllm serve Qwen/Qwen3-30B-A3B",
        ),
        1_697_538_048.0,
        "experts",
    );
}

#[test]
fn sglang_lora_buffers_are_weights_before_the_pool() {
    let (_, base) = capacity(SGLANG);
    // max_loras_per_batch 8 by default.
    let (_, lora) = capacity(&format!(
        "{SGLANG} --enable-lora --max-lora-rank 64 --lora-target-modules all"
    ));
    let want = QWEN3_8B_LORA_PER_RANK_UNIT * 36.0 * 64.0 * 8.0 * 2.0;
    assert_close(
        num(&lora, "weights_bytes") - num(&base, "weights_bytes"),
        want,
        "8 × 64",
    );
    // Rank and targets from adapters kvlint does not read: a band, rank 8 to 256.
    let (_, paths) = capacity(&format!("{SGLANG} --lora-paths a=/adapters/a"));
    assert!(
        num(&paths, "pool_tokens_low") < num(&base, "pool_tokens_low"),
        "{paths}"
    );
    let high = QWEN3_8B_LORA_PER_RANK_UNIT * 36.0 * 256.0 * 8.0 * 2.0;
    assert!(num(&paths, "pool_tokens_low") < num(&base, "pool_tokens_low") - high / 147456.0 * 0.9);
}

#[test]
fn vllm_draft_model_weights_and_kv_share_the_budget() {
    let (_, base) = capacity("vllm serve Qwen/Qwen3-8B");
    let spec = r#"{"model":"Qwen/Qwen3-0.6B","num_speculative_tokens":3,"method":"draft_model"}"#;
    let (_, draft) = capacity(&format!(
        "vllm serve Qwen/Qwen3-8B --speculative-config {spec}"
    ));
    // Qwen3-0.6B: 28 layers × 8 KV heads × 128 × (K + V) × 2 bytes = 114688 B per token, against
    // the target's 36 × 8 × 128 × 2 × 2 = 147456: the target keeps 147456 / 262144 of the budget.
    let draft_kv = draft["assumptions"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["term"] == "draft_kv_bytes_per_token"))
        .map(|x| x["value"].clone());
    assert_eq!(draft_kv, Some(serde_json::json!(114688.0)), "{draft}");
    let ratio = num(&draft, "pool_tokens") / num(&base, "pool_tokens");
    assert!(ratio < 147456.0 / 262144.0, "{ratio}");
    assert!(num(&draft, "weights_bytes") > num(&base, "weights_bytes") + 1.0e9);
    // A draft kvlint cannot find is an unknown model, never a draft of zero bytes.
    let unknown = r#"{"model":"/models/eagle","num_speculative_tokens":3,"method":"eagle"}"#;
    let run = capacity_run(&format!(
        "vllm serve Qwen/Qwen3-8B --speculative-config {unknown}"
    ));
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains("/models/eagle"), "{}", run.stderr);
    // N-gram drafting loads nothing.
    let (_, ngram) = capacity(
        r#"vllm serve Qwen/Qwen3-8B --speculative-config {"method":"ngram","num_speculative_tokens":3}"#,
    );
    assert_eq!(ngram["pool_tokens"], base["pool_tokens"]);
}

#[test]
fn sglang_draft_model_kv_joins_the_cell() {
    // 0.5.18+: the draft KV shares the budget: 147456 + 114688 = 262144 B per token.
    let (_, doc) = capacity(&format!(
        "{SGLANG} --speculative-algorithm STANDALONE --speculative-draft-model-path Qwen/Qwen3-0.6B"
    ));
    assert_eq!(doc["kv_bytes_per_token"], 262144, "{doc}");
    let run = capacity_run(&format!(
        "{SGLANG} --speculative-algorithm EAGLE3 --speculative-draft-model-path /models/eagle3"
    ));
    assert_eq!(run.code, 2, "{}", run.stdout);
}

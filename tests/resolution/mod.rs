//! What tests/resolve.rs and tests/hub.rs share: a Llama-3.1-8B-shaped model, its files in the
//! Hugging Face cache layout, and a hermetic kvlint run.
#![allow(dead_code)]

use crate::common::{hermetic, root, Run};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

pub const COMMIT: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f9001122334";

/// A Llama-3.1-8B-shaped config. KV bytes per token on one rank, by hand: 32 layers × 8 KV heads
/// × 128 head dim × 2 (K and V) × 2 bytes (bf16) = 131,072.
pub fn config() -> Value {
    json!({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 32,
        "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 128256,
        "max_position_embeddings": 131072, "torch_dtype": "bfloat16"})
}
pub const KV_BYTES: u64 = 131_072;
/// `metadata.total_size` of the index served and cached below.
pub const TOTAL_SIZE: u64 = 16_060_522_496;
/// vLLM's weights on one rank: the measured total plus the rotary cos/sin table it builds at
/// load, 131,072 positions × 128 rotary dims × 2 bytes (model dtype) = 33,554,432.
pub const WEIGHTS: u64 = TOTAL_SIZE + 33_554_432;

pub fn index() -> Value {
    json!({"metadata": {"total_size": TOTAL_SIZE}, "weight_map": {}})
}

/// Runs kvlint hermetically, then applies `env` (a `None` value removes the variable).
pub fn kvlint_env(args: &[&str], env: &[(&str, Option<&str>)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvlint"));
    hermetic(&mut cmd).args(args).current_dir(root());
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = cmd.output().expect("kvlint runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}\nstdout: {}\nstderr: {}", run.stdout, run.stderr))
}

/// `capacity --format json` for `vllm serve MODEL extra...`.
pub fn capacity(model: &str, extra: &[&str], env: &[(&str, Option<&str>)]) -> Run {
    let mut args = vec![
        "capacity",
        "--gpu",
        "h100-80gb",
        "--engine-version",
        "0.19.0",
        "--format",
        "json",
        "--",
        "vllm",
        "serve",
        model,
    ];
    args.extend_from_slice(extra);
    kvlint_env(&args, env)
}

pub fn write_json(path: &Path, v: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, v.to_string()).unwrap();
}

/// A cache in huggingface_hub's layout: `models--org--m/refs/{rev}` → `snapshots/{COMMIT}/`.
pub fn cache_with(hf_home: &Path, repo: &str, rev: &str, with_index: bool) {
    let dir = hf_home
        .join("hub")
        .join(format!("models--{}", repo.replace('/', "--")));
    let snap = dir.join("snapshots").join(COMMIT);
    write_json(&snap.join("config.json"), &config());
    if with_index {
        write_json(&snap.join("model.safetensors.index.json"), &index());
    }
    std::fs::create_dir_all(dir.join("refs")).unwrap();
    std::fs::write(dir.join("refs").join(rev), COMMIT).unwrap();
}

// ---- step 1: --model-config and kvlint.toml [models] ----

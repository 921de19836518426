//! Model resolution, one test per step, through the real binary: `--model-config`, kvlint.toml
//! `[models]`, a local model directory, the Hugging Face cache in a temporary `HF_HOME`, and the
//! embedded catalog. The Hub's step (a loopback server) is tests/hub.rs.

mod common;
mod resolution;

use common::root;
use resolution::*;
use serde_json::{json, Value};

#[test]
fn model_config_says_when_it_is_applied_to_a_launch_naming_another_model() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("Llama-3.1-8B-Instruct");
    write_json(&dir.join("config.json"), &config());
    let script = tmp.path().join("two.sh");
    std::fs::write(
        &script,
        "vllm serve meta-llama/Llama-3.1-8B-Instruct\nvllm serve Qwen/Qwen3-8B\n",
    )
    .unwrap();
    let run = kvlint_env(
        &[
            "check",
            "--gpu",
            "h100-80gb",
            "--format",
            "json",
            "--model-config",
            dir.to_str().unwrap(),
            script.to_str().unwrap(),
        ],
        &[],
    );
    let doc = json_of(&run);
    let sources: Vec<&Value> = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["model_source"])
        .collect();
    assert_eq!(sources.len(), 2);
    assert_eq!(sources[0]["kind"], "model-config");
    assert_eq!(
        sources[0]["note"],
        Value::Null,
        "the directory names this model"
    );
    assert_eq!(
        sources[1]["note"],
        "--model-config applies to every launch of the run; this launch names Qwen/Qwen3-8B"
    );
    assert_eq!(doc["launches"][1]["kv_bytes_per_token"], KV_BYTES);
    // The human report says it on the launch's line.
    let run = kvlint_env(
        &[
            "check",
            "--gpu",
            "h100-80gb",
            "--model-config",
            dir.to_str().unwrap(),
            script.to_str().unwrap(),
        ],
        &[],
    );
    let line = run
        .stdout
        .lines()
        // The launch line, not a code frame's `two.sh:2:1` header.
        .find(|l| l.contains("two.sh:2: "))
        .unwrap();
    assert!(
        line.ends_with(
            "(--model-config applies to every launch of the run; this launch names Qwen/Qwen3-8B)"
        ),
        "{line}"
    );
}

#[test]
fn models_table_maps_paths_and_served_names_to_hub_ids_and_configs() {
    let tmp = tempfile::tempdir().unwrap();
    write_json(&tmp.path().join("configs/llama8b.json"), &config());
    std::fs::write(
        tmp.path().join("kvlint.toml"),
        r#"gpu = "h100-80gb"
[models]
"/models/Qwen3-8B/" = "Qwen/Qwen3-8B"
"/mnt/models" = { config = "configs/llama8b.json" }
"chat" = { id = "meta-llama/Llama-3.1-8B-Instruct" }
"#,
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("run.sh"),
        "vllm serve /models/Qwen3-8B\nvllm serve /mnt/models\nvllm serve /data/x --served-model-name chat\n",
    )
    .unwrap();
    let run = kvlint_env(
        &[
            "check",
            "--format",
            "json",
            tmp.path().join("run.sh").to_str().unwrap(),
        ],
        &[],
    );
    let doc = json_of(&run);
    let l = &doc["launches"];
    assert_eq!(l[0]["model_source"]["kind"], "catalog", "{}", run.stdout);
    assert_eq!(l[0]["model"], "/models/Qwen3-8B");
    assert!(l[0]["model_source"]["note"]
        .as_str()
        .unwrap()
        .contains("kvlint.toml:3 maps /models/Qwen3-8B to Qwen/Qwen3-8B"));
    assert_eq!(l[1]["model_source"]["kind"], "kvlint.toml");
    assert!(l[1]["model_source"]["location"]
        .as_str()
        .unwrap()
        .ends_with("configs/llama8b.json"));
    assert_eq!(l[1]["kv_bytes_per_token"], KV_BYTES);
    assert_eq!(l[2]["model_source"]["kind"], "catalog");
    assert!(!run.stdout.contains("INP002"), "{}", run.stdout);
}

#[test]
fn a_bad_models_entry_is_an_error_at_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("kvlint.toml");
    std::fs::write(
        &cfg,
        "[models]\n\"/m\" = { config = \"a.json\", id = \"o/m\" }\n",
    )
    .unwrap();
    let run = kvlint_env(
        &[
            "check",
            "--config",
            cfg.to_str().unwrap(),
            "fixtures/ci/clean.sh",
        ],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("kvlint.toml:2:"), "{}", run.stderr);
    assert!(run.stderr.contains("[models]"), "{}", run.stderr);
}

// ---- step 2: a local model directory ----

#[test]
fn local_model_directory_with_its_safetensors_index() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("Llama-8B");
    write_json(&dir.join("config.json"), &config());
    write_json(&dir.join("model.safetensors.index.json"), &index());
    let run = capacity(dir.to_str().unwrap(), &[], &[]);
    let doc = json_of(&run);
    assert_eq!(doc["model_source"]["kind"], "local-dir");
    assert_eq!(doc["model_source"]["location"], dir.to_str().unwrap());
    assert_eq!(doc["kv_bytes_per_token"], KV_BYTES);
    assert_eq!(doc["weights_bytes"], WEIGHTS, "measured, TP 1");
}

// ---- step 3: the Hugging Face cache ----

#[test]
fn hf_cache_in_hf_home_by_refs_main_and_by_revision() {
    let home = tempfile::tempdir().unwrap();
    cache_with(home.path(), "acme/llama-8b", "main", true);
    let env = [("HF_HOME", home.path().to_str())];
    let doc = json_of(&capacity("acme/llama-8b", &[], &env));
    assert_eq!(doc["model_source"]["kind"], "hf-cache");
    assert_eq!(doc["model_source"]["revision"], COMMIT);
    assert_eq!(doc["kv_bytes_per_token"], KV_BYTES);
    assert_eq!(doc["weights_bytes"], WEIGHTS);
    // A revision the cache has no ref for is not the main snapshot.
    let run = capacity("acme/llama-8b", &["--revision", "v2"], &env);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no snapshot of acme/llama-8b@v2"),
        "{}",
        run.stderr
    );
    cache_with(home.path(), "acme/llama-8b", "v2", false);
    let doc = json_of(&capacity("acme/llama-8b", &["--revision", "v2"], &env));
    assert_eq!(doc["model_source"]["revision"], COMMIT);
}

#[test]
fn hf_hub_cache_overrides_hf_home() {
    let home = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    cache_with(other.path(), "acme/llama-8b", "main", false);
    let hub_cache = other.path().join("hub");
    let env = [
        ("HF_HOME", home.path().to_str()),
        ("HF_HUB_CACHE", hub_cache.to_str()),
    ];
    let doc = json_of(&capacity("acme/llama-8b", &[], &env));
    assert_eq!(doc["model_source"]["kind"], "hf-cache");
    assert!(doc["model_source"]["location"]
        .as_str()
        .unwrap()
        .starts_with(hub_cache.to_str().unwrap()));
    assert_eq!(
        doc["model_source"]["note"],
        "no model.safetensors.index.json: weight bytes estimated"
    );
}

/// DeepSeek-V4-Flash (fixtures/INP008/deepseek-v4-flash.json) keeps compressed and
/// sliding-window pools kvlint does not model: INP008 and no plan, until kvlint.toml asserts a
/// layout. Asserted `standard`, it is planned as read: 1 KV head × (512 + 512) × 2 bytes × 43
/// layers = 88,064 bytes per token on every rank (one KV head is replicated across TP 8). A
/// layout kvlint does not model cannot be asserted.
#[test]
fn an_unmodelled_architecture_is_inp008_until_kvlint_toml_asserts_its_layout() {
    // DeepSeek-V4 on SGLang 0.5.20: modelled on 0.5.12, 0.5.13 and 0.5.23 only (capacity/sglang/dsv4.rs).
    let tmp = tempfile::tempdir().unwrap();
    let config = std::fs::read(root().join("fixtures/INP008/deepseek-v4-flash.json")).unwrap();
    std::fs::create_dir_all(tmp.path().join("configs")).unwrap();
    std::fs::write(tmp.path().join("configs/dsv4.json"), &config).unwrap();
    let run_sh = tmp.path().join("run.sh");
    std::fs::write(
        &run_sh,
        "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash --tp 8 --context-length 1048576\n",
    )
    .unwrap();
    let check = |layout: &str| {
        std::fs::write(
            tmp.path().join("kvlint.toml"),
            format!("gpu = \"h200x8\"\nengine-version = \"0.5.20\"\n[models]\n\"deepseek-ai/DeepSeek-V4-Flash\" = {{ config = \"configs/dsv4.json\"{layout} }}\n"),
        )
        .unwrap();
        kvlint_env(
            &["check", "--format", "json", run_sh.to_str().unwrap()],
            &[],
        )
    };
    let run = check("");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc = json_of(&run);
    let inp008: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "INP008")
        .collect();
    assert_eq!(inp008.len(), 1, "{}", run.stdout);
    let message = inp008[0]["message"].as_str().unwrap();
    assert!(
        message.contains("DeepseekV4ForCausalLM") && message.contains("not 0.5.20"),
        "{message}"
    );
    assert_eq!(
        doc["launches"][0]["kv_bytes_per_token"],
        Value::Null,
        "never planned"
    );

    // An architecture outside the table (DeepSeek-V4's config under a made-up name) is planned
    // from its config.json once kvlint.toml asserts its layout.
    let renamed = String::from_utf8(config)
        .unwrap()
        .replace("DeepseekV4ForCausalLM", "AcmeV4ForCausalLM");
    std::fs::write(tmp.path().join("configs/dsv4.json"), renamed).unwrap();
    let doc = json_of(&check(", layout = \"standard\""));
    assert!(!doc["findings"].to_string().contains("INP008"), "{doc}");
    let launch = &doc["launches"][0];
    assert_eq!(launch["kv_bytes_per_token"], 88_064);
    let note = launch["model_source"]["note"].as_str().unwrap();
    assert!(
        note.contains("AcmeV4ForCausalLM asserted as layout standard in ")
            && note.contains("kvlint.toml:4 ("),
        "{note}"
    );

    let run = check(", layout = \"compressed\"");
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("kvlint.toml")
            && run
                .stderr
                .contains("layout \"compressed\" is not one kvlint models"),
        "{}",
        run.stderr
    );
}
#[test]
fn catalog_last_and_did_you_mean_for_a_mount_path() {
    let doc = json_of(&capacity("Qwen/Qwen3-8B", &[], &[]));
    assert_eq!(doc["model_source"]["kind"], "catalog");
    assert!(doc["model_source"]["location"]
        .as_str()
        .unwrap()
        .starts_with("github:"));
    let run = capacity("/models/Qwen3-8B", &[], &[]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("did you mean one of Qwen/Qwen3-8B,"),
        "{}",
        run.stderr
    );
    assert!(run
        .stderr
        .contains("/models/Qwen3-8B has no config.json on this machine"));
}

// ---- kvlint models, kvlint gpus --catalog, [gpus] ----

#[test]
fn models_lists_and_searches_the_catalog() {
    let run = kvlint_env(&["models", "qwen3-8b", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows = json_of(&run);
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "Qwen/Qwen3-8B")
        .expect("Qwen3-8B listed");
    // Qwen3-8B: 36 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes = 147,456.
    assert_eq!(row["layers"], 36);
    assert_eq!(row["kv_bytes_per_token"], 147_456);
    assert_eq!(row["architecture"], "Qwen3ForCausalLM");
    assert_eq!(row["max_context"], 40960);
    let human = kvlint_env(&["models"], &[]);
    assert_eq!(human.code, 0);
    assert!(human.stdout.starts_with("id "));
    assert!(human.stdout.lines().count() > 30);
    let none = kvlint_env(&["models", "qwen3-8bx-nope"], &[]);
    assert_eq!(none.code, 2);
}

#[test]
fn gpus_catalog_lists_embedded_gpus_and_kvlint_toml_additions() {
    let run = kvlint_env(&["gpus", "--catalog", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows = json_of(&run);
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["name"] == "H200" && r["cuda_total_bytes"] == 150_109_880_320u64));
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("kvlint.toml");
    std::fs::write(
        &cfg,
        "[gpus.\"Lab-GPU-48G\"]\nmemory-bytes = 50_000_000_000\ncompute-capability = [8, 9]\naliases = [\"lab48\"]\nlabels = [\"ACME-Lab-48G\"]\n\n[gpus.H200]\nmemory-bytes = 150_000_000_000\n",
    )
    .unwrap();
    let run = kvlint_env(
        &[
            "gpus",
            "--catalog",
            "--config",
            cfg.to_str().unwrap(),
            "--format",
            "json",
        ],
        &[],
    );
    let rows = json_of(&run);
    let rows = rows.as_array().unwrap();
    let lab = rows.iter().find(|r| r["name"] == "Lab-GPU-48G").unwrap();
    assert_eq!(lab["memory_mib"], 47684, "50e9 bytes rounded up to MiB");
    assert!(lab["source"]
        .as_str()
        .unwrap()
        .starts_with("kvlint.toml [gpus]"));
    let h200: Vec<&Value> = rows.iter().filter(|r| r["name"] == "H200").collect();
    assert_eq!(h200.len(), 1, "an override replaces the catalog row");
    assert_eq!(h200[0]["cuda_total_bytes"], 150_000_000_000u64);
    assert_eq!(h200[0]["compute_capability"], json!([9, 0]), "kept");
    // A launch on a node labelled with the new GPU plans with it.
    std::fs::write(tmp.path().join("run.sh"), "vllm serve Qwen/Qwen3-8B\n").unwrap();
    let run = kvlint_env(
        &[
            "check",
            "--config",
            cfg.to_str().unwrap(),
            "--gpu",
            "lab48x1",
            "--format",
            "json",
            tmp.path().join("run.sh").to_str().unwrap(),
        ],
        &[],
    );
    let doc = json_of(&run);
    assert_eq!(doc["launches"][0]["gpu"], "Lab-GPU-48G", "{}", run.stdout);
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "[gpus.Unknown-X]\naliases = [\"x\"]\n").unwrap();
    let run = kvlint_env(
        &["gpus", "--catalog", "--config", bad.to_str().unwrap()],
        &[],
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("bad.toml:1:"), "{}", run.stderr);
    assert!(run.stderr.contains("memory-bytes"), "{}", run.stderr);
}

//! Model resolution, one test per step, through the real binary: `--model-config`, kvlint.toml
//! `[models]`, a local model directory, the Hugging Face cache in a temporary `HF_HOME`, the Hub
//! served by a loopback HTTP server in the Hub's `/{repo}/resolve/{revision}/{file}` layout, and
//! the embedded catalog. No test reaches the real Hub: `HF_ENDPOINT` is loopback or the run is
//! offline.

mod common;

use common::{hermetic, root, Run};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const COMMIT: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f9001122334";

/// A Llama-3.1-8B-shaped config. KV bytes per token on one rank, by hand: 32 layers × 8 KV heads
/// × 128 head dim × 2 (K and V) × 2 bytes (bf16) = 131,072.
fn config() -> Value {
    json!({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 32,
        "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 128256,
        "max_position_embeddings": 131072, "torch_dtype": "bfloat16"})
}
const KV_BYTES: u64 = 131_072;
/// `metadata.total_size` of the index served and cached below.
const TOTAL_SIZE: u64 = 16_060_522_496;
/// vLLM's weights on one rank: the measured total plus the rotary cos/sin table it builds at
/// load, 131,072 positions × 128 rotary dims × 2 bytes (model dtype) = 33,554,432.
const WEIGHTS: u64 = TOTAL_SIZE + 33_554_432;

fn index() -> Value {
    json!({"metadata": {"total_size": TOTAL_SIZE}, "weight_map": {}})
}

/// Runs kvlint hermetically, then applies `env` (a `None` value removes the variable).
fn kvlint_env(args: &[&str], env: &[(&str, Option<&str>)]) -> Run {
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

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}\nstdout: {}\nstderr: {}", run.stdout, run.stderr))
}

/// `capacity --format json` for `vllm serve MODEL extra...`.
fn capacity(model: &str, extra: &[&str], env: &[(&str, Option<&str>)]) -> Run {
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

fn write_json(path: &Path, v: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, v.to_string()).unwrap();
}

/// A cache in huggingface_hub's layout: `models--org--m/refs/{rev}` → `snapshots/{COMMIT}/`.
fn cache_with(hf_home: &Path, repo: &str, rev: &str, with_index: bool) {
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
    let tmp = tempfile::tempdir().unwrap();
    let config = std::fs::read(root().join("fixtures/INP008/deepseek-v4-flash.json")).unwrap();
    std::fs::create_dir_all(tmp.path().join("configs")).unwrap();
    std::fs::write(tmp.path().join("configs/dsv4.json"), config).unwrap();
    let run_sh = tmp.path().join("run.sh");
    std::fs::write(
        &run_sh,
        "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash --tp 8 --context-length 1048576\n",
    )
    .unwrap();
    let check = |layout: &str| {
        std::fs::write(
            tmp.path().join("kvlint.toml"),
            format!("gpu = \"h200x8\"\nengine-version = \"0.5.23\"\n[models]\n\"deepseek-ai/DeepSeek-V4-Flash\" = {{ config = \"configs/dsv4.json\"{layout} }}\n"),
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
        message.contains("DeepseekV4ForCausalLM") && message.contains("compressed"),
        "{message}"
    );
    assert!(inp008[0]["help"]
        .as_str()
        .unwrap()
        .contains("DSv4 memory calculation"));
    assert_eq!(
        doc["launches"][0]["kv_bytes_per_token"],
        Value::Null,
        "never planned"
    );

    let doc = json_of(&check(", layout = \"standard\""));
    assert!(!doc["findings"].to_string().contains("INP008"), "{doc}");
    let launch = &doc["launches"][0];
    assert_eq!(launch["kv_bytes_per_token"], 88_064);
    let note = launch["model_source"]["note"].as_str().unwrap();
    assert!(
        note.contains("DeepseekV4ForCausalLM asserted as layout standard in ")
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

// ---- step 4: the Hub, served on loopback ----

/// What the loopback Hub saw.
#[derive(Default)]
struct Seen {
    paths: Vec<String>,
    auth: Vec<Option<String>>,
}

/// A loopback server with the Hub's resolve layout and headers: `X-Repo-Commit`, a quoted
/// `ETag`, `Content-Range` for range requests, `X-Error-Code` on errors; `acme/gated` answers
/// 401 GatedRepo without `Authorization: Bearer secret`.
fn loopback_hub() -> (SocketAddr, Arc<Mutex<Seen>>) {
    loopback_mirror(true)
}

/// The same, as a mirror that honours `Range` or one that ignores it (200 and the whole body,
/// no `Content-Range`, as some company proxies and regional mirrors answer).
fn loopback_mirror(honours_range: bool) -> (SocketAddr, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let files: HashMap<String, String> = [
        ("acme/llama-8b/config.json", config().to_string()),
        (
            "acme/llama-8b/model.safetensors.index.json",
            index().to_string(),
        ),
        ("acme/gated/config.json", config().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let s = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            serve(stream, &files, &s, honours_range);
        }
    });
    (addr, seen)
}

fn serve(
    mut stream: TcpStream,
    files: &HashMap<String, String>,
    seen: &Mutex<Seen>,
    honours_range: bool,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
    let auth = headers.get("authorization").cloned();
    {
        let mut s = seen.lock().unwrap();
        s.paths.push(path.clone());
        s.auth.push(auth.clone());
    }
    // /{org}/{name}/resolve/{revision}/{file}
    let parts: Vec<&str> = path.trim_start_matches('/').splitn(5, '/').collect();
    let out = match parts.as_slice() {
        [org, name, "resolve", rev, file] => {
            let repo = format!("{org}/{name}");
            if repo == "acme/gated" && auth.as_deref() != Some("Bearer secret") {
                reply("401 Unauthorized", "X-Error-Code: GatedRepo\r\n", b"gated")
            } else if *rev != "main" && *rev != COMMIT {
                reply("404 Not Found", "X-Error-Code: RevisionNotFound\r\n", b"")
            } else {
                match files.get(&format!("{repo}/{file}")) {
                    None if repo == "acme/llama-8b" || repo == "acme/gated" => {
                        reply("404 Not Found", "X-Error-Code: EntryNotFound\r\n", b"")
                    }
                    None => reply("401 Unauthorized", "X-Error-Code: RepoNotFound\r\n", b""),
                    Some(body) => ranged(
                        body.as_bytes(),
                        headers.get("range").filter(|_| honours_range),
                    ),
                }
            }
        }
        _ => reply("404 Not Found", "", b""),
    };
    let _ = stream.write_all(&out);
    let _ = stream.flush();
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
}

/// An HTTP/1.1 response that closes the connection.
fn reply(status: &str, extra: &str, body: &[u8]) -> Vec<u8> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
        body.len()
    );
    [head.as_bytes(), body].concat()
}

fn ranged(body: &[u8], range: Option<&String>) -> Vec<u8> {
    let etag = format!(
        "ETag: \"{:040x}\"\r\nX-Repo-Commit: {COMMIT}\r\n",
        body.len()
    );
    let Some(spec) = range.and_then(|r| r.strip_prefix("bytes=")) else {
        return reply("200 OK", &etag, body);
    };
    let (a, b) = spec.split_once('-').unwrap_or((spec, ""));
    let start: usize = a.parse().unwrap_or(0).min(body.len());
    let end: usize = b
        .parse()
        .map_or(body.len() - 1, |e: usize| e.min(body.len() - 1));
    let part = &body[start..=end];
    let extra = format!(
        "{etag}Content-Range: bytes {start}-{end}/{}\r\n",
        body.len()
    );
    reply("206 Partial Content", &extra, part)
}

#[test]
fn hub_on_loopback_fills_the_cache_which_then_serves_offline() {
    let (addr, seen) = loopback_hub();
    let home = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{addr}");
    let env = [
        ("HF_HOME", home.path().to_str()),
        ("HF_ENDPOINT", Some(endpoint.as_str())),
        ("HF_HUB_OFFLINE", None),
    ];
    let run = capacity("acme/llama-8b", &[], &env);
    let doc = json_of(&run);
    assert_eq!(doc["model_source"]["kind"], "hub");
    assert_eq!(
        doc["model_source"]["location"],
        format!("{endpoint}/acme/llama-8b/resolve/{COMMIT}/config.json")
    );
    assert_eq!(doc["model_source"]["revision"], COMMIT);
    assert_eq!(doc["kv_bytes_per_token"], KV_BYTES);
    assert_eq!(doc["weights_bytes"], WEIGHTS);
    let paths = seen.lock().unwrap().paths.clone();
    assert!(paths.contains(&"/acme/llama-8b/resolve/main/config.json".to_string()));
    assert!(paths.contains(&"/acme/llama-8b/resolve/main/hf_quant_config.json".to_string()));
    // The cache now has huggingface_hub's layout, and an offline run reads it.
    let repo = home.path().join("hub/models--acme--llama-8b");
    assert_eq!(
        std::fs::read_to_string(repo.join("refs/main")).unwrap(),
        COMMIT
    );
    assert!(repo
        .join("snapshots")
        .join(COMMIT)
        .join("config.json")
        .is_file());
    let before = seen.lock().unwrap().paths.len();
    let offline = [("HF_HOME", home.path().to_str())];
    let doc = json_of(&capacity("acme/llama-8b", &["--offline"], &offline));
    assert_eq!(doc["model_source"]["kind"], "hf-cache");
    assert_eq!(
        seen.lock().unwrap().paths.len(),
        before,
        "no request offline"
    );
}

/// hf-hub asks for `Range: bytes=0-0` first; a mirror that ignores it answers 200 with the
/// whole file and no `Content-Range`. Both mirrors give the same geometry, from the same commit.
#[test]
fn hub_mirror_that_ignores_range_resolves_like_one_that_honours_it() {
    for honours in [true, false] {
        let (addr, seen) = loopback_mirror(honours);
        let home = tempfile::tempdir().unwrap();
        let endpoint = format!("http://{addr}");
        let env = [
            ("HF_HOME", home.path().to_str()),
            ("HF_ENDPOINT", Some(endpoint.as_str())),
            ("HF_HUB_OFFLINE", None),
        ];
        let doc = json_of(&capacity("acme/llama-8b", &[], &env));
        assert_eq!(
            doc["model_source"]["kind"], "hub",
            "honours Range: {honours}"
        );
        assert_eq!(doc["model_source"]["revision"], COMMIT);
        assert_eq!(doc["kv_bytes_per_token"], KV_BYTES);
        assert_eq!(doc["weights_bytes"], WEIGHTS, "the index was read too");
        let snapshot = home
            .path()
            .join("hub/models--acme--llama-8b/snapshots")
            .join(COMMIT);
        let cached: Value =
            serde_json::from_str(&std::fs::read_to_string(snapshot.join("config.json")).unwrap())
                .unwrap();
        assert_eq!(cached, config(), "the cache holds the whole file");
        assert!(seen
            .lock()
            .unwrap()
            .paths
            .contains(&"/acme/llama-8b/resolve/main/config.json".to_string()));
        let offline = [("HF_HOME", home.path().to_str())];
        let doc = json_of(&capacity("acme/llama-8b", &["--offline"], &offline));
        assert_eq!(doc["model_source"]["kind"], "hf-cache");
        assert_eq!(doc["kv_bytes_per_token"], KV_BYTES);
    }
}

#[test]
fn hub_gated_model_needs_hf_token_and_sends_it() {
    let (addr, seen) = loopback_hub();
    let home = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{addr}");
    let env = [
        ("HF_HOME", home.path().to_str()),
        ("HF_ENDPOINT", Some(endpoint.as_str())),
        ("HF_HUB_OFFLINE", None),
    ];
    let run = capacity("acme/gated", &[], &env);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("HTTP 401 GatedRepo"), "{}", run.stderr);
    assert!(run.stderr.contains("set HF_TOKEN"), "{}", run.stderr);
    // The token file in HF_HOME is read like huggingface_hub reads it.
    std::fs::write(home.path().join("token"), "secret\n").unwrap();
    let doc = json_of(&capacity("acme/gated", &[], &env));
    assert_eq!(doc["model_source"]["kind"], "hub");
    let auth = seen.lock().unwrap().auth.clone();
    assert!(auth.contains(&Some("Bearer secret".into())));
}

#[test]
fn hub_unknown_repository_and_unreachable_endpoint_are_clear_inp002() {
    let (addr, _) = loopback_hub();
    let home = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{addr}");
    let env = [
        ("HF_HOME", home.path().to_str()),
        ("HF_ENDPOINT", Some(endpoint.as_str())),
        ("HF_HUB_OFFLINE", None),
    ];
    let run = capacity("acme/nothing-here", &[], &env);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(&format!(
            "{endpoint}/acme/nothing-here/resolve/main/config.json: HTTP 401 RepoNotFound"
        )),
        "{}",
        run.stderr
    );
    // A port nobody listens on: a network error, at once.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let dead = format!("http://{closed}");
    let env = [
        ("HF_HOME", home.path().to_str()),
        ("HF_ENDPOINT", Some(dead.as_str())),
        ("HF_HUB_OFFLINE", None),
    ];
    let run = capacity("acme/llama-8b", &[], &env);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("network error"), "{}", run.stderr);
    assert!(
        run.stderr.contains("not in the embedded catalog"),
        "{}",
        run.stderr
    );
}

#[test]
fn hub_that_never_answers_is_given_up_after_the_timeout() {
    // Accepts connections and never replies.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    let home = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{addr}");
    let env = [
        ("HF_HOME", home.path().to_str()),
        ("HF_ENDPOINT", Some(endpoint.as_str())),
        ("HF_HUB_OFFLINE", None),
        ("HF_HUB_DOWNLOAD_TIMEOUT", Some("1")),
    ];
    let started = Instant::now();
    let run = capacity("acme/llama-8b", &[], &env);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no answer within 1 s"),
        "{}",
        run.stderr
    );
}

// ---- step 5: the catalog, and suggestions ----

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

#[test]
fn the_hub_is_asked_once_per_model_in_a_run_and_every_launch_gets_its_answer() {
    let (addr, seen) = loopback_hub();
    let home = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{addr}");
    let script = home.path().join("serve.sh");
    std::fs::write(
        &script,
        "vllm serve acme/llama-8b --max-model-len 4096\n\
         vllm serve acme/llama-8b --max-model-len 8192\n\
         vllm serve acme/llama-8b --max-model-len 16384\n\
         vllm serve acme/nothing-here\n\
         vllm serve acme/nothing-here\n",
    )
    .unwrap();
    let env = [
        ("HF_HOME", home.path().to_str()),
        ("HF_ENDPOINT", Some(endpoint.as_str())),
        ("HF_HUB_OFFLINE", None),
    ];
    let args = [
        "check",
        "--gpu",
        "h100-80gb",
        "--engine-version",
        "0.19.0",
        "--format",
        "json",
        script.to_str().unwrap(),
    ];
    let doc = json_of(&kvlint_env(&args, &env));
    let kinds: Vec<&Value> = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["model_source"]["kind"])
        .collect();
    // Every launch of the model the Hub knows reads the Hub's answer, not the cache the first
    // answer filled; the unknown model is INP002 on both of its launches.
    assert_eq!(
        kinds,
        [
            &json!("hub"),
            &json!("hub"),
            &json!("hub"),
            &Value::Null,
            &Value::Null
        ]
    );
    let inp002 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "INP002")
        .count();
    assert_eq!(inp002, 2);
    let paths = seen.lock().unwrap().paths.clone();
    let asked = |p: &str| paths.iter().filter(|x| x.as_str() == p).count();
    // One fetch of the known model (it asks for hf_quant_config.json once), and one refusal of
    // the unknown one, which fills no cache: without the run's memo each of its launches asked.
    assert_eq!(
        asked("/acme/llama-8b/resolve/main/hf_quant_config.json"),
        1,
        "{paths:?}"
    );
    assert_eq!(
        asked("/acme/nothing-here/resolve/main/config.json"),
        1,
        "{paths:?}"
    );
}

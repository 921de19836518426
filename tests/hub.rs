//! Model resolution's Hub step through the real binary: the Hub served by a loopback HTTP server
//! in the Hub's `/{repo}/resolve/{revision}/{file}` layout, a mirror that ignores `Range`, gated
//! and unknown repositories, an endpoint that never answers. No test reaches the real Hub:
//! `HF_ENDPOINT` is loopback or the run is offline.

mod common;
mod resolution;

use resolution::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

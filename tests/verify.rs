//! `kvlint verify` as a user runs it: on loopback servers that answer with the engines' own
//! shapes, and on startup logs written in each release's line format (fixtures/verify/).

mod common;
mod loopback;

use common::kvlint;
use loopback::{models, not_found, serve, sglang_server_info, vllm_metrics};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A whole run, with the loopback port replaced so the snapshot is stable.
fn transcript(args: &[&str], url: &str) -> (i32, String) {
    let run = kvlint(args);
    let text = run.transcript(args).replace(url, "http://loopback");
    (run.code, text)
}

/// The incident's prefill server: SGLang 0.5.20, 1,048,576 tokens advertised, 681,280 in the pool.
fn incident_prefill() -> loopback::Server {
    serve(|r| match r.path.as_str() {
        "/v1/models" => (200, models("zai-org/GLM-5.3", "sglang", Some(1_048_576))),
        "/server_info" => (
            200,
            sglang_server_info("prefill", Some(1_048_576), &[681_280], "0.5.20"),
        ),
        _ => not_found(),
    })
}

#[test]
fn the_incident_as_a_live_prefill_server_is_refused() {
    let s = incident_prefill();
    let (code, text) = transcript(&["verify", "--url", &s.url], &s.url);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("681,280"), "{text}");
    assert!(text.contains("KV001"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn the_incident_log_is_refused() {
    let args = [
        "verify",
        "--log",
        "fixtures/verify/sglang-0.5.20-incident-prefill.log",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("681,280"));
    insta::assert_snapshot!(run.transcript(&args));
}

#[test]
fn the_incident_log_in_json_and_sarif() {
    let log = "fixtures/verify/sglang-0.5.20-incident-prefill.log";
    let run = kvlint(&["verify", "--log", log, "--format", "json"]);
    assert_eq!(run.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["measurements"][0]["pool_tokens"], 681_280);
    assert_eq!(doc["measurements"][0]["role"], "prefill");
    assert_eq!(doc["findings"][0]["rule"], "KV001");
    assert_eq!(doc["findings"][0]["line"], 34);
    insta::assert_json_snapshot!(doc);
    let run = kvlint(&["verify", "--log", log, "--format", "sarif"]);
    let sarif: serde_json::Value = serde_json::from_str(&run.stdout).expect("sarif");
    assert_eq!(sarif["version"], "2.1.0");
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "KV001");
    assert_eq!(result["level"], "error");
    assert!(result["message"]["text"]
        .as_str()
        .unwrap()
        .contains("681,280"));
}

/// Every log fixture: which engine and line forms it holds, and the exit code it must give.
#[test]
fn every_log_form_of_the_supported_releases() {
    let cases = [
        ("sglang-0.4.6-dp-attention.log", 0, "709,312"), // DP1 is the smallest rank
        ("sglang-0.5.12-swa.log", 1, "117,840"),         // full-layer pool, not the SWA one
        ("sglang-0.5.20-incident-prefill.log", 1, "681,280"),
        ("sglang-0.5.20-incident-decode.log", 0, "1,734,208"),
        ("sglang-0.5.23-post-capture.log", 0, "312,345"), // not the VA upper bound
        ("vllm-0.19.0-two-lines.log", 0, "1,505,552"),
        ("vllm-0.33.0-one-line-dp.log", 0, "474,960"),
        ("vllm-v0-too-long.log", 1, "23,648"),
        ("trtllm-adjusted.log", 1, "8,224"),
        ("trtllm-fits.log", 0, "10,718"),
    ];
    for (file, code, pool) in cases {
        let path = format!("fixtures/verify/{file}");
        let args = ["verify", "--log", path.as_str()];
        let run = kvlint(&args);
        assert_eq!(run.code, code, "{file}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains(&format!("pool       {pool} tokens")),
            "{file}: {}",
            run.stdout
        );
        insta::assert_snapshot!(format!("log__{file}"), run.transcript(&args));
    }
}

#[test]
fn a_log_from_stdin() {
    let text =
        std::fs::read_to_string(common::root().join("fixtures/verify/vllm-0.33.0-one-line-dp.log"))
            .expect("fixture");
    let run = common::kvlint_stdin(&["verify", "--log", "-"], Some(&text));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run
        .stdout
        .contains("measured: vllm 0.33.0 unified at <stdin>"));
}

#[test]
fn both_halves_of_a_pair_get_the_pd_rules() {
    let args = [
        "verify",
        "--log",
        "fixtures/verify/sglang-0.5.20-incident-prefill.log",
        "--log",
        "fixtures/verify/sglang-0.5.20-decode-128k.log",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("PD001"), "{}", run.stdout);
    // The prefill log's server_args say mooncake, the decode log's nixl.
    assert!(
        run.stdout
            .contains("prefill transfers KV with mooncake, decode with nixl"),
        "{}",
        run.stdout
    );
    insta::assert_snapshot!(run.transcript(&args));
}

#[test]
fn the_prediction_is_printed_beside_the_measurement() {
    let args = [
        "verify",
        "--log",
        "fixtures/verify/sglang-0.5.20-incident-prefill.log",
        "--gpu",
        "h200x8",
        "--engine-version",
        "0.5.20",
        "--",
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "zai-org/GLM-5.3",
        "--tp-size",
        "8",
        "--quantization",
        "fp8",
        "--kv-cache-dtype",
        "fp8_e4m3",
        "--mem-fraction-static",
        "0.88",
        "--disaggregation-mode",
        "prefill",
        "--context-length",
        "1048576",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("predicted"), "{}", run.stdout);
    assert!(run.stdout.contains("error "), "{}", run.stdout);
    insta::assert_snapshot!(run.transcript(&args));
    let mut json_args = args.to_vec();
    json_args.splice(3..3, ["--format", "json"]);
    let json = kvlint(&json_args);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    let p = &doc["measurements"][0]["prediction"];
    let predicted = p["pool_tokens"].as_f64().expect("predicted pool");
    let error = p["error_percent"].as_f64().expect("error");
    let expected = ((predicted - 681_280.0) / 681_280.0 * 1000.0).round() / 10.0;
    assert_eq!(error, expected);
}

#[test]
fn a_vllm_server_whose_pool_is_fine() {
    // vLLM 0.19: `/metrics` cache_config_info (num_gpu_blocks × block_size), `/v1/models`
    // max_model_len, `/version`; no SGLang endpoints.
    let s = serve(|r| match r.path.as_str() {
        "/v1/models" => (200, models("Qwen/Qwen3-14B", "vllm", Some(32_768))),
        "/metrics" => (200, vllm_metrics(18_572, 16, 1)),
        "/version" => (200, json!({"version": "0.19.0"}).to_string()),
        _ => not_found(),
    });
    let (code, text) = transcript(&["verify", "--url", &s.url], &s.url);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("297,152 tokens"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn vllm_data_parallel_engines_share_the_summed_block_count() {
    let s = serve(|r| match r.path.as_str() {
        "/v1/models" => (200, models("Qwen/Qwen3-14B", "vllm", Some(16_384))),
        "/metrics" => (200, vllm_metrics(4000, 16, 2)),
        _ => not_found(),
    });
    let run = kvlint(&["verify", "--url", &s.url]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("32,000 tokens"), "{}", run.stdout);
}

#[test]
fn an_sglang_pd_prefill_server_with_dp_ranks_is_refused_on_its_smallest_rank() {
    let s = serve(|r| match r.path.as_str() {
        "/v1/models" => (200, models("zai-org/GLM-5.3", "sglang", Some(262_144))),
        "/server_info" => (
            200,
            sglang_server_info("prefill", Some(262_144), &[300_000, 250_112], "0.5.23"),
        ),
        _ => not_found(),
    });
    let (code, text) = transcript(&["verify", "--url", &s.url, "--format", "json"], &s.url);
    assert_eq!(code, 1, "{text}");
    let body = text.split("--- stdout\n").nth(1).unwrap_or("");
    let json_text = body.split("--- stderr").next().unwrap_or("");
    let doc: serde_json::Value = serde_json::from_str(json_text).expect("json");
    assert_eq!(doc["measurements"][0]["pool_tokens"], 250_112);
    assert_eq!(doc["findings"][0]["rule"], "KV001");
}

#[test]
fn older_sglang_answers_on_get_server_info() {
    let s = serve(|r| match r.path.as_str() {
        "/get_server_info" => (
            200,
            sglang_server_info("null", Some(131_072), &[500_000], "0.5.2"),
        ),
        _ => not_found(),
    });
    let run = kvlint(&["verify", "--url", &s.url]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("measured: sglang 0.5.2 unified"));
    assert!(run.stdout.contains("/get_server_info"));
}

#[test]
fn a_trtllm_server_says_what_it_cannot_state() {
    let s = serve(|r| match r.path.as_str() {
        "/v1/models" => (200, models("openai/gpt-oss-120b", "tensorrt_llm", None)),
        _ => not_found(),
    });
    let run = kvlint(&["verify", "--url", &s.url]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--log"), "{}", run.stderr);
}

#[test]
fn what_cannot_be_read_exits_2() {
    let run = kvlint(&["verify", "--log", "fixtures/verify/no-such.log"]);
    assert_eq!(run.code, 2);
    assert!(run
        .stderr
        .contains("cannot read fixtures/verify/no-such.log"));
    let run = kvlint(&["verify", "--log", "README.md"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no KV pool line"), "{}", run.stderr);
    let run = kvlint(&["verify", "--url", "http://127.0.0.1:9", "--timeout", "2"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let run = kvlint(&["verify"]);
    assert_eq!(run.code, 2);
}

#[test]
fn the_prediction_from_a_launch_file() {
    let run = kvlint(&[
        "verify",
        "--log",
        "fixtures/verify/sglang-0.5.20-incident-prefill.log",
        "--launch",
        "fixtures/incident/prefill.sh",
        "--gpu",
        "h200x8",
        "--engine-version",
        "0.5.20",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let p = &doc["measurements"][0]["prediction"];
    assert_eq!(p["model"], "zai-org/GLM-5.3");
    assert_eq!(p["context_length"], 1_048_576);
    assert!(p["error_percent"].is_number(), "{p}");
}

#[test]
fn headers_reach_the_server() {
    let s = serve(|r| {
        if r.header("authorization") != Some("Bearer s3cret") {
            return (401, json!({"detail": "unauthorized"}).to_string());
        }
        match r.path.as_str() {
            "/v1/models" => (200, models("zai-org/GLM-5.3", "sglang", Some(131_072))),
            "/server_info" => (
                200,
                sglang_server_info("null", Some(131_072), &[400_000], "0.5.23"),
            ),
            _ => not_found(),
        }
    });
    let run = kvlint(&["verify", "--url", &s.url, "--engine", "sglang"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains("HTTP 401"), "{}", run.stderr);
    let run = kvlint(&[
        "verify",
        "--url",
        &s.url,
        "--header",
        "Authorization: Bearer s3cret",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("400,000 tokens"), "{}", run.stdout);
}

/// A server that sends `/server_info` to `to` with a redirect, and a second one on another
/// loopback address (another host) that counts every request it gets.
fn redirecting_to_another_host() -> (loopback::Server, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let other = loopback::serve_at("127.0.0.2", {
        let seen = seen.clone();
        move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
            (
                200,
                sglang_server_info("null", Some(131_072), &[400_000], "0.5.23"),
            )
        }
    });
    let to = format!("{}/server_info", other.url);
    let s = serve(move |r| match r.path.as_str() {
        "/v1/models" => (200, models("Qwen/Qwen3-8B", "sglang", Some(131_072))),
        "/server_info" => loopback::redirect(&to),
        _ => not_found(),
    });
    (s, seen)
}

/// Issue 29, class 18: a redirect to another host is not followed, so the user's headers (an
/// `X-Api-Key`, not only `Authorization`) never reach it, and the error says where it led.
#[test]
fn a_redirect_to_another_host_is_not_followed_with_the_headers() {
    let (s, seen) = redirecting_to_another_host();
    let run = kvlint(&[
        "verify",
        "--url",
        &s.url,
        "--header",
        "X-Api-Key: s3cret",
        "--header",
        "Authorization: Bearer s3cret",
    ]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(seen.load(Ordering::SeqCst), 0, "the other host was asked");
    assert!(
        run.stderr.contains("redirects to http://127.0.0.2:")
            && run.stderr.contains("another host; not followed"),
        "{}",
        run.stderr
    );
}

/// A redirect within the server's own origin is followed, and the reading says where the
/// numbers came from.
#[test]
fn a_redirect_within_the_server_is_followed_and_named() {
    let s = serve(|r| match r.path.as_str() {
        "/v1/models" => (200, models("Qwen/Qwen3-8B", "sglang", Some(131_072))),
        "/server_info" => loopback::redirect("/v2/server_info"),
        "/v2/server_info" => (
            200,
            sglang_server_info("null", Some(200_000), &[150_000], "0.5.23"),
        ),
        _ => not_found(),
    });
    let run = kvlint(&["verify", "--url", &s.url]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("150,000 tokens"), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "/server_info was read from {}/v2/server_info, where it redirects",
            s.url
        )),
        "{}",
        run.stdout
    );
}

/// Issue 29, class 17: `--log` takes a regular file or stdin; a FIFO or a device (or a link
/// to one) is refused before it is opened, as `check` refuses them.
#[test]
fn a_log_that_is_a_fifo_or_a_device_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("server.log");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let link = dir.path().join("zero.log");
    std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
    for (path, what) in [(&fifo, "a FIFO"), (&link, "a device")] {
        let run = kvlint(&["verify", "--log", path.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{}", run.stdout);
        assert!(
            run.stderr
                .contains(&format!("is {what}, not a regular file")),
            "{}",
            run.stderr
        );
    }
}

/// `kubectl logs -f POD | kvlint verify --log -`: the stream never ends, so the reading stops
/// once the server is up with its pool read.
#[test]
fn a_followed_log_is_read_until_the_server_is_up() {
    use std::io::Write;
    let log = std::fs::read_to_string(
        common::root().join("fixtures/verify/sglang-0.5.20-incident-prefill.log"),
    )
    .expect("fixture");
    assert!(log.contains("Uvicorn running on"));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kvlint"))
        .args(["verify", "--log", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kvlint");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(log.as_bytes()).expect("write");
    // The pipe stays open, as `kubectl logs -f` keeps it: kvlint must answer without EOF.
    let out = child.wait_with_output().expect("kvlint ends");
    drop(stdin);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("681,280"));
}

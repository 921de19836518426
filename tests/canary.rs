//! `kvlint canary` against loopback servers that answer as SGLang and vLLM do (completion and
//! error shapes from their `protocol.py`), one per behaviour: healthy, answering an over-length
//! prompt with HTTP 200 (CAN001), leaking one request's text into another's answer (CAN002).
//! These tests are also the fire/pass fixtures of CAN001 and CAN002 (see tests/rules.rs).

mod common;
mod loopback;

use common::kvlint;
use loopback::{completion, models, nonce_of, not_found, serve, too_long, Last, Request};
use regex_lite::Regex;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

const MODEL: &str = "Qwen/Qwen3-8B";

/// A whole run with the port and the latencies replaced so the snapshot is stable.
fn transcript(args: &[&str], url: &str) -> (i32, String) {
    let run = kvlint(args);
    let text = run.transcript(args).replace(url, "http://loopback");
    let ms = Regex::new(r"\d+ ms").unwrap();
    (run.code, ms.replace_all(&text, "[t] ms").into_owned())
}

/// Prompt ids longer than `limit` are refused, as vLLM does (`serving_engine.py`).
fn refuses_over(r: &Request, limit: u64) -> Option<(u16, String)> {
    let n = r.json()["prompt"].as_array().map(Vec::len)?;
    (n as u64 > limit).then(|| too_long(n, limit))
}

fn healthy() -> loopback::Server {
    serve(|r| match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/v1/models") => (200, models(MODEL, "vllm", Some(4096))),
        ("POST", "/v1/completions") => refuses_over(r, 4096)
            .unwrap_or_else(|| (200, completion(MODEL, &format!(" {}", nonce_of(r))))),
        _ => not_found(),
    })
}

#[test]
fn a_healthy_server_passes() {
    let s = healthy();
    let args = [
        "canary",
        "--url",
        &s.url,
        "--requests",
        "12",
        "--concurrency",
        "4",
    ];
    let (code, text) = transcript(&args, &s.url);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("refused: HTTP 400"), "{text}");
    assert!(text.contains("own nonce echoed in 12 of 12"), "{text}");
    // one over-length prompt and the 12 asked for: never more
    assert_eq!(s.completions.load(Ordering::SeqCst), 13);
    insta::assert_snapshot!(text);
}

#[test]
fn an_over_length_prompt_answered_with_200_is_can001() {
    let s = serve(|r| match r.path.as_str() {
        "/v1/models" => (200, models(MODEL, "sglang", Some(4096))),
        "/v1/completions" => (200, completion(MODEL, "!")),
        _ => not_found(),
    });
    let args = ["canary", "--url", &s.url, "--requests", "8"];
    let (code, text) = transcript(&args, &s.url);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("CAN001"), "{text}");
    // stopped at the first deny: only the over-length request was sent
    assert_eq!(s.completions.load(Ordering::SeqCst), 1);
    insta::assert_snapshot!(text);

    let run = kvlint(&["canary", "--url", &s.url, "--requests", "8", "--keep-going"]);
    assert_eq!(run.code, 1);
    assert_eq!(s.completions.load(Ordering::SeqCst), 1 + 1 + 8);
    assert!(run.stdout.contains("8 of 8 sent"), "{}", run.stdout);
}

/// A server that answers every third request with the previous request's nonce.
fn leaky() -> loopback::Server {
    let last: Last = Arc::new(Mutex::new(None));
    let n = Arc::new(Mutex::new(0usize));
    serve(move |r| match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/v1/models") => (200, models(MODEL, "sglang", Some(4096))),
        ("POST", "/v1/completions") => {
            if let Some(refused) = refuses_over(r, 4096) {
                return refused;
            }
            let own = nonce_of(r);
            let mut count = n.lock().unwrap();
            *count += 1;
            let mut prev = last.lock().unwrap();
            let text = match (count.is_multiple_of(3), prev.clone()) {
                (true, Some(p)) => format!(" {p}"),
                _ => format!(" {own}"),
            };
            *prev = Some(own);
            (200, completion(MODEL, &text))
        }
        _ => not_found(),
    })
}

#[test]
fn another_requests_nonce_in_an_answer_is_can002() {
    let s = leaky();
    let args = [
        "canary",
        "--url",
        &s.url,
        "--requests",
        "30",
        "--concurrency",
        "1",
    ];
    let (code, text) = transcript(&args, &s.url);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("CAN002"), "{text}");
    // the third request leaked: sending stopped there
    assert_eq!(s.completions.load(Ordering::SeqCst), 1 + 3);
    let redacted = Regex::new(r"[0-9a-f]{16}")
        .unwrap()
        .replace_all(&text, "[nonce]")
        .into_owned();
    insta::assert_snapshot!(redacted);
}

#[test]
fn keep_going_sends_every_request_and_counts_every_leak() {
    let s = leaky();
    let run = kvlint(&[
        "canary",
        "--url",
        &s.url,
        "--requests",
        "30",
        "--concurrency",
        "1",
        "--keep-going",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let cross = &doc["canary"]["cross_request"];
    assert_eq!(cross["sent"], 30);
    assert_eq!(cross["leaks"].as_array().map(Vec::len), Some(10));
    assert_eq!(cross["missing_own_nonce"], 10);
    assert_eq!(doc["findings"].as_array().map(Vec::len), Some(10));
    assert_eq!(doc["findings"][0]["rule"], "CAN002");
    assert_eq!(s.completions.load(Ordering::SeqCst), 31);
}

#[test]
fn a_missing_own_nonce_is_counted_not_failed() {
    let s = serve(|r| match r.path.as_str() {
        "/v1/models" => (200, models(MODEL, "vllm", Some(4096))),
        "/v1/completions" => refuses_over(r, 4096)
            .unwrap_or_else(|| (200, completion(MODEL, " I cannot repeat codes."))),
        _ => not_found(),
    });
    let run = kvlint(&["canary", "--url", &s.url, "--requests", "5"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("own nonce echoed in 0 of 5 answers (5 missing"),
        "{}",
        run.stdout
    );
}

/// The incident: SGLang advertising 1,048,576 tokens while its pool holds 681,280. A correct
/// release refuses a prompt above `max_req_input_len`; the incident's answered it with HTTP 200.
fn incident(refuses: bool) -> loopback::Server {
    serve(move |r| match r.path.as_str() {
        "/v1/models" => (200, models("zai-org/GLM-5.3", "sglang", Some(1_048_576))),
        "/server_info" => (
            200,
            loopback::sglang_server_info("prefill", Some(1_048_576), &[681_280], "0.5.20"),
        ),
        "/v1/completions" => match refuses.then(|| refuses_over(r, 681_274)).flatten() {
            Some(refused) => refused,
            None => (200, completion("zai-org/GLM-5.3", " the")),
        },
        _ => not_found(),
    })
}

#[test]
fn the_incident_server_fails_the_canary_and_a_fixed_one_passes() {
    let s = incident(false);
    let run = kvlint(&["canary", "--url", &s.url, "--requests", "4"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains("681,275 tokens"), "{}", run.stderr);
    assert!(run.stderr.contains("--max-tokens-sent"), "{}", run.stderr);
    assert_eq!(s.completions.load(Ordering::SeqCst), 0);

    let run = kvlint(&[
        "canary",
        "--url",
        &s.url,
        "--requests",
        "4",
        "--max-tokens-sent",
        "700000",
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--yes-large"), "{}", run.stderr);
    assert_eq!(s.completions.load(Ordering::SeqCst), 0);

    let args = [
        "canary",
        "--url",
        &s.url,
        "--requests",
        "4",
        "--max-tokens-sent",
        "700000",
        "--yes-large",
    ];
    let (code, text) = transcript(&args, &s.url);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("CAN001"), "{text}");
    insta::assert_snapshot!(text);

    let fixed = incident(true);
    let run = kvlint(&[
        "canary",
        "--url",
        &fixed.url,
        "--requests",
        "4",
        "--max-tokens-sent",
        "700000",
        "--yes-large",
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.contains("refused: HTTP 400"), "{}", run.stdout);
}

#[test]
fn without_an_advertised_context_it_asks_for_one() {
    let s = serve(|r| match r.path.as_str() {
        "/v1/models" => (200, models(MODEL, "tensorrt_llm", None)),
        _ => not_found(),
    });
    let run = kvlint(&["canary", "--url", &s.url]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--context"), "{}", run.stderr);
}

/// The Job and CronJob in deploy/canary/ parse, and every kvlint command line in them is one
/// kvlint accepts.
#[test]
fn the_canary_manifests_run_commands_kvlint_accepts() {
    use clap::Parser;
    let mut commands = 0;
    for name in ["job.yaml", "cronjob.yaml"] {
        let path = common::root().join("deploy/canary").join(name);
        let text = std::fs::read_to_string(&path).expect("manifest");
        let doc: serde_json::Value = serde_saphyr::from_str(&text).expect("yaml");
        let spec = match doc["kind"].as_str() {
            Some("Job") => &doc["spec"]["template"]["spec"],
            Some("CronJob") => &doc["spec"]["jobTemplate"]["spec"]["template"]["spec"],
            other => panic!("{name}: kind {other:?}"),
        };
        assert_eq!(spec["restartPolicy"], "Never", "{name}");
        for list in ["initContainers", "containers"] {
            for c in spec[list].as_array().into_iter().flatten() {
                let args: Vec<&str> = c["args"]
                    .as_array()
                    .expect("args")
                    .iter()
                    .map(|a| a.as_str().expect("text"))
                    .collect();
                let argv = std::iter::once("kvlint").chain(args.iter().copied());
                kvlint::cli::Cli::try_parse_from(argv)
                    .unwrap_or_else(|e| panic!("{name}: {args:?}: {e}"));
                commands += 1;
            }
        }
    }
    assert_eq!(commands, 3);
}

/// `"error": null` in an HTTP 200 completion is no refusal: the over-length prompt was answered
/// (CAN001). A real error object in a 200 (vLLM's `{"error": {"message", "type", "code"}}`) is one.
#[test]
fn a_200_with_a_null_error_is_an_answer_and_a_real_error_object_a_refusal() {
    let with_null = serve(|r| match r.path.as_str() {
        "/v1/models" => (200, models(MODEL, "vllm", Some(4096))),
        "/v1/completions" => {
            let mut c: serde_json::Value = serde_json::from_str(&completion(MODEL, "!")).unwrap();
            c["error"] = serde_json::Value::Null;
            (200, c.to_string())
        }
        _ => not_found(),
    });
    let run = kvlint(&["canary", "--url", &with_null.url, "--requests", "0"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("CAN001"), "{}", run.stdout);
    assert!(run.stdout.contains("ACCEPTED: HTTP 200"), "{}", run.stdout);

    for empty in [
        serde_json::json!(""),
        serde_json::json!({}),
        serde_json::json!(false),
    ] {
        let s = serve(move |r| match r.path.as_str() {
            "/v1/models" => (200, models(MODEL, "vllm", Some(4096))),
            "/v1/completions" => {
                let mut c: serde_json::Value =
                    serde_json::from_str(&completion(MODEL, "!")).unwrap();
                c["error"] = empty.clone();
                (200, c.to_string())
            }
            _ => not_found(),
        });
        let run = kvlint(&["canary", "--url", &s.url, "--requests", "0"]);
        assert_eq!(run.code, 1, "{}", run.stdout);
    }

    let refusing = serve(|r| {
        match r.path.as_str() {
        "/v1/models" => (200, models(MODEL, "vllm", Some(4096))),
        "/v1/completions" => (
            200,
            serde_json::json!({"error": {"message": "This model's maximum context length is 4096 tokens.",
                "type": "BadRequestError", "param": null, "code": 400}})
            .to_string(),
        ),
        _ => not_found(),
    }
    });
    let run = kvlint(&["canary", "--url", &refusing.url, "--requests", "0"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout.contains("refused: HTTP 200 in")
            && run.stdout.contains("maximum context length is 4096"),
        "{}",
        run.stdout
    );
}

/// Issue 29, class 18: a completion redirected to another host is not followed, so neither the
/// prompt nor the user's `--header` values (an `X-Api-Key`) reach it; the run says where it led.
#[test]
fn a_redirect_to_another_host_is_not_followed() {
    let other = loopback::serve_at("127.0.0.2", |_| (200, completion(MODEL, "!")));
    let to = format!("{}/v1/completions", other.url);
    let s = serve(move |r| match r.path.as_str() {
        "/v1/models" => (200, models(MODEL, "vllm", Some(4096))),
        "/v1/completions" => loopback::redirect(&to),
        _ => not_found(),
    });
    let run = kvlint(&[
        "canary",
        "--url",
        &s.url,
        "--requests",
        "2",
        "--header",
        "X-Api-Key: s3cret",
    ]);
    assert_eq!(
        other.completions.load(Ordering::SeqCst),
        0,
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "redirects to {}/v1/completions, another host; not followed",
            other.url
        )),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert!(!run.stdout.contains("CAN001"), "{}", run.stdout);
}

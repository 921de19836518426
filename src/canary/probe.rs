//! The requests the canary sends and what it makes of the answers.

use super::{CanaryArgs, LARGE};
use crate::rules::thousands;
use crate::verify::http::{Answer, Client};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// What the canary tests: the model, the advertised context, and the prompt length that must
/// be refused.
#[derive(Debug, Clone)]
pub struct Target {
    pub model: String,
    pub context: u64,
    pub context_source: &'static str,
    /// Tokens in the over-length prompt.
    pub prompt_tokens: u64,
    /// Why that many.
    pub why: String,
}

/// Learns the model and context (`/v1/models` `max_model_len`, served by SGLang and vLLM), and
/// for SGLang the longest prompt it accepts (`/server_info` `max_req_input_len`: a pool smaller
/// than the context lowers it, and a prompt between the two is the incident's case).
pub fn target(c: &Client, a: &CanaryArgs) -> Result<Target, String> {
    let models = c.get("/v1/models")?;
    let card = models
        .json()
        .filter(|_| models.status == 200)
        .and_then(|v| {
            let data = v.get("data")?.as_array()?.clone();
            match &a.model {
                Some(m) => data
                    .into_iter()
                    .find(|d| d.get("id").and_then(Value::as_str) == Some(m)),
                None => data.into_iter().next(),
            }
        });
    let model = match (&a.model, &card) {
        (Some(m), _) => m.clone(),
        (None, Some(d)) => d
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        (None, None) => {
            return Err(format!(
                "{}/v1/models: HTTP {} and no model listed; pass --model",
                c.base(),
                models.status
            ))
        }
    };
    let advertised = card.as_ref().and_then(|d| d.get("max_model_len")?.as_u64());
    let (context, context_source) = match (a.context, advertised) {
        (Some(n), _) => (n, "--context"),
        (None, Some(n)) => (n, "/v1/models max_model_len"),
        (None, None) => {
            return Err(format!(
                "{}/v1/models states no max_model_len; pass --context N",
                c.base()
            ))
        }
    };
    let mut prompt_tokens = context + 1;
    let mut why = format!(
        "the advertised context of {} + 1, {context_source}",
        thousands(context)
    );
    let limit = c
        .get("/server_info")
        .ok()
        .filter(|x| x.status == 200)
        .and_then(|x| x.json()?.get("max_req_input_len")?.as_u64());
    if let Some(n) = limit.filter(|n| n + 1 < prompt_tokens) {
        prompt_tokens = n + 1;
        why = format!(
            "SGLang's max_req_input_len + 1: the server holds prompts of at most {} tokens, fewer than the {} it advertises",
            thousands(n),
            thousands(context)
        );
    }
    if prompt_tokens > a.max_tokens_sent {
        return Err(format!(
            "the over-length prompt needs {} tokens ({why}), more than --max-tokens-sent {}; raise it to send it",
            thousands(prompt_tokens),
            thousands(a.max_tokens_sent)
        ));
    }
    if prompt_tokens > LARGE && !a.yes_large {
        return Err(format!(
            "the over-length prompt is a {}-token request (about {} MB of JSON, {why}); pass --yes-large to send it",
            thousands(prompt_tokens),
            prompt_tokens * 5 / 1_000_000
        ));
    }
    Ok(Target {
        model,
        context,
        context_source,
        prompt_tokens,
        why,
    })
}

/// How the server answered the over-length prompt.
#[derive(Debug, Clone)]
pub enum Over {
    /// HTTP 4xx/5xx (any status but 2xx), or an error object.
    Refused {
        status: u16,
        message: String,
        latency: Duration,
    },
    /// HTTP 200 with an answer: CAN001.
    Accepted(Answer),
    /// No answer: the request failed or timed out.
    NoAnswer(String),
}

impl Over {
    pub fn accepted(&self) -> bool {
        matches!(self, Over::Accepted(_))
    }
}

/// One completion whose prompt is `t.prompt_tokens` token ids (both engines take a list of ids
/// as `prompt`), asking for one token back.
pub fn over_length(c: &Client, t: &Target) -> Over {
    let ids: Vec<u64> = (0..t.prompt_tokens).map(|i| 1000 + i % 1000).collect();
    let body = json!({"model": t.model, "prompt": ids, "max_tokens": 1, "temperature": 0});
    let a = match c.post_json("/v1/completions", &body) {
        Ok(a) => a,
        Err(e) => return Over::NoAnswer(e),
    };
    let error = a.json().as_ref().and_then(error_message);
    match (a.status, error) {
        (200..=299, None) => Over::Accepted(a),
        (status, error) => Over::Refused {
            status,
            message: error.unwrap_or_else(|| a.body.chars().take(200).collect()),
            latency: a.elapsed,
        },
    }
}

/// The message of an error answer: vLLM's `{"error": {"message": …}}` (`ErrorResponse` with
/// `ErrorInfo`) or SGLang's and older vLLM's `{"object": "error", "message": …}`. A completion
/// may carry `"error": null` (or an empty one): that is no error.
fn error_message(v: &Value) -> Option<String> {
    let e = match v.get("error") {
        Some(Value::Null | Value::Bool(false)) | None => {
            (v.get("object").and_then(Value::as_str) == Some("error")).then_some(v)?
        }
        Some(Value::String(s)) if s.trim().is_empty() => return None,
        Some(Value::Object(o)) if o.is_empty() => return None,
        Some(e) => e,
    };
    Some(match e {
        Value::String(s) => s.clone(),
        _ => e
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| e.to_string(), str::to_string),
    })
}

/// One request of the cross-request test.
#[derive(Debug, Clone)]
pub struct Asked {
    pub index: usize,
    pub nonce: String,
    pub status: Option<u16>,
    pub latency: Duration,
    /// The answer's text (`choices[0].text`).
    pub text: String,
    /// The whole answer.
    pub body: String,
    pub error: Option<String>,
    /// Whether the answer holds this request's own nonce.
    pub echoed: bool,
    /// Other requests whose nonce the answer holds.
    pub foreign: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Cross {
    pub asked: Vec<Asked>,
    pub planned: usize,
    pub nonces: Vec<String>,
}

/// A random 64-bit nonce in hex; a text can only hold it by coming from its request.
fn nonce() -> String {
    let mut b = [0u8; 8];
    if getrandom::getrandom(&mut b).is_err() {
        // No OS randomness: fall back to the std hasher's random keys.
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(std::time::UNIX_EPOCH.elapsed().map_or(0, |d| d.as_nanos()));
        b = h.finish().to_be_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `a.requests` completions, `a.concurrency` at a time, each asking for its own nonce back;
/// stops sending after the first answer with another request's nonce unless `--keep-going`.
pub fn cross_request(c: &Client, t: &Target, a: &CanaryArgs) -> Cross {
    let nonces: Vec<String> = (0..a.requests).map(|_| nonce()).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let done = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..a.concurrency.clamp(1, a.requests.max(1)) {
            s.spawn(|| loop {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(own) = nonces.get(i) else {
                    return;
                };
                let asked = ask(c, t, i, own, &nonces);
                if !asked.foreign.is_empty() && !a.keep_going {
                    stop.store(true, Ordering::SeqCst);
                }
                if let Ok(mut d) = done.lock() {
                    d.push(asked);
                }
            });
        }
    });
    let mut asked = done.into_inner().unwrap_or_default();
    asked.sort_by_key(|x| x.index);
    Cross {
        asked,
        planned: a.requests,
        nonces,
    }
}

fn ask(c: &Client, t: &Target, index: usize, own: &str, all: &[String]) -> Asked {
    let prompt = format!(
        "Repeat the following code exactly, once, and write nothing else.\nCode: {own}\nRepeated code:"
    );
    let body = json!({"model": t.model, "prompt": prompt, "max_tokens": 32, "temperature": 0});
    let mut out = Asked {
        index,
        nonce: own.to_string(),
        status: None,
        latency: Duration::ZERO,
        text: String::new(),
        body: String::new(),
        error: None,
        echoed: false,
        foreign: Vec::new(),
    };
    match c.post_json("/v1/completions", &body) {
        Err(e) => out.error = Some(e),
        Ok(a) => {
            out.status = Some(a.status);
            out.latency = a.elapsed;
            out.text = a
                .json()
                .and_then(|v| v.pointer("/choices/0/text")?.as_str().map(str::to_string))
                .unwrap_or_default();
            // Look in the whole body: a leak may sit in any field, not only the text.
            out.echoed = a.body.contains(own);
            out.foreign = all
                .iter()
                .enumerate()
                .filter(|(j, n)| *j != index && a.body.contains(n.as_str()))
                .map(|(j, _)| j)
                .collect();
            out.body = a.body;
        }
    }
    out
}

//! `kvlint canary`: behaviour tests on a running OpenAI-compatible server. An over-length prompt
//! must be refused (an HTTP 200 is CAN001, the incident's symptom), and concurrent requests must
//! never answer with another request's text (CAN002). It never sends more than asked and stops
//! at the first deny unless `--keep-going`.

pub mod probe;
pub mod report;

use crate::report::Format;
use crate::verify::http::Client;
use clap::Args;
use std::time::Duration;

/// Above this many prompt tokens a request is large enough to need `--yes-large`.
pub const LARGE: u64 = 262_144;

#[derive(Debug, Args)]
pub struct CanaryArgs {
    /// Base URL of the server (e.g. http://my-llm.default.svc:8000).
    #[arg(long, value_name = "URL")]
    pub url: String,
    /// The model to ask for; default: the first one /v1/models lists.
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Cross-request test: how many requests, each with its own nonce (0 skips the test).
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub requests: usize,
    /// Cross-request test: how many requests in flight at once.
    #[arg(long, value_name = "C", default_value_t = 8)]
    pub concurrency: usize,
    /// Most prompt tokens the over-length request may carry; it needs the context + 1.
    #[arg(long, value_name = "T", default_value_t = 131_072)]
    pub max_tokens_sent: u64,
    /// Allow an over-length request above 262,144 tokens (a 1M context means a 1M-token request).
    #[arg(long)]
    pub yes_large: bool,
    /// Seconds each request may take.
    #[arg(long, value_name = "S", default_value_t = 120)]
    pub timeout: u64,
    /// The advertised context, when /v1/models does not state `max_model_len`.
    #[arg(long, value_name = "N")]
    pub context: Option<u64>,
    /// Run every test even after a deny.
    #[arg(long)]
    pub keep_going: bool,
    /// Extra HTTP header for every request, `Name: value`.
    #[arg(long, value_name = "K:V")]
    pub header: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// Runs the canary and returns the exit code: 1 a deny, 0 none, 2 it could not run.
pub fn run(a: &CanaryArgs) -> Result<i32, String> {
    let client = Client::new(&a.url, &a.header, Duration::from_secs(a.timeout.max(1)))?;
    let target = probe::target(&client, a)?;
    let over = probe::over_length(&client, &target);
    let cross = if (over.accepted() && !a.keep_going) || a.requests == 0 {
        None
    } else {
        Some(probe::cross_request(&client, &target, a))
    };
    let done = report::Run {
        target,
        over,
        cross,
    };
    let (text, code) = report::render(&done, a.format);
    print!("{text}");
    Ok(code)
}

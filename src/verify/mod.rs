//! `kvlint verify`: the KV pool a running engine reports, from its HTTP endpoints (`server`) or
//! its startup log (`log`), checked by the same pool and PD rules as `check`, with the measured
//! numbers in the messages. Given the launch too, the prediction is printed beside the
//! measurement with its error (`predict`): how users bring calibration data.

pub mod args;
pub mod http;
pub mod log;
pub mod measured;
pub mod predict;
pub mod report;
pub mod server;

pub use args::VerifyArgs;

use crate::capacity::Role;
use crate::launch::Engine;
use crate::pipeline::{Options, Outcome};
use crate::report::Rendered;
use measured::{Measurement, Reading};
use std::time::Duration;

/// What a run read and found, before it is printed.
pub struct Verified {
    pub outcome: Outcome,
    pub measurements: Vec<Measurement>,
    pub findings: Vec<Rendered>,
}

/// Runs `kvlint verify` and returns the exit code; `Err` is a whole-run failure (exit 2).
/// `opts` carries `--gpu` and friends when a launch is given for the prediction.
pub fn run(a: &VerifyArgs, opts: Option<Options>) -> Result<i32, String> {
    let v = verify(a, opts)?;
    print!("{}", report::render(&v, a.format));
    Ok(crate::report::exit_code(
        &v.findings,
        crate::rules::Level::Deny,
    ))
}

/// Reads every `--url` and `--log`, evaluates the rules, and predicts when a launch is given.
pub fn verify(a: &VerifyArgs, opts: Option<Options>) -> Result<Verified, String> {
    if a.url.is_empty() && a.log.is_empty() {
        return Err("give --url URL of a running server or --log FILE of its startup log".into());
    }
    let mut readings: Vec<Reading> = Vec::new();
    for url in &a.url {
        let client = http::Client::new(url, &a.header, Duration::from_secs(a.timeout.max(1)))?;
        readings.push(server::read(&client, a.engine)?);
    }
    for path in &a.log {
        readings.push(read_log(path, a.engine)?);
    }
    let mut outcome = Outcome::default();
    let mut measurements = Vec::new();
    for mut r in readings {
        if let Some(role) = a.role {
            r.role = Some(role.into());
        }
        let predicted = predict::plan(a, opts.as_ref(), &r)?;
        if let Some(c) = a.context {
            r.context = Some(measured::Fact::given(c, "--context"));
        } else if let (None, Some(p)) = (&r.context, &predicted) {
            r.context = Some(measured::Fact::given(p.context_length, "the launch"));
        }
        let mut m = measured::measure(r, &mut outcome.sources)?;
        m.prediction = predicted.map(|p| predict::compare(&p, m.plan.pool_tokens));
        outcome.findings.extend(measured::findings(&m));
        measurements.push(m);
    }
    outcome
        .findings
        .extend(measured::pd_findings(&measurements));
    let findings = crate::report::render_all(&outcome);
    Ok(Verified {
        outcome,
        measurements,
        findings,
    })
}

/// `--log`: a regular file or stdin, streamed within `check`'s default input limit.
fn read_log(path: &str, engine: Option<EngineArg>) -> Result<Reading, String> {
    let max = crate::input::DEFAULT_MAX_SIZE;
    if path == "-" {
        return log::read("<stdin>", std::io::stdin().lock(), max, engine);
    }
    let (file, _) =
        crate::input::open_regular(std::path::Path::new(path)).map_err(|e| e.to_string())?;
    log::read(path, std::io::BufReader::new(file), max, engine)
}

/// `--role`: which half the server is, when the server or log does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RoleArg {
    Unified,
    Prefill,
    Decode,
}

impl From<RoleArg> for Role {
    fn from(r: RoleArg) -> Role {
        match r {
            RoleArg::Unified => Role::Unified,
            RoleArg::Prefill => Role::Prefill,
            RoleArg::Decode => Role::Decode,
        }
    }
}

/// `--engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    Sglang,
    Vllm,
    Trtllm,
}

impl From<EngineArg> for Engine {
    fn from(e: EngineArg) -> Engine {
        match e {
            EngineArg::Sglang => Engine::Sglang,
            EngineArg::Vllm => Engine::Vllm,
            EngineArg::Trtllm => Engine::Trtllm,
        }
    }
}

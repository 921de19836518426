#![allow(dead_code)]

//! What each fuzz target does with one input; `tests/fuzz_corpus.rs` replays the corpus through
//! the same functions on stable. Each runs the whole pipeline and every report format, so a
//! panic anywhere between extraction and printing is found.

use kvlint::pipeline::{Options, Outcome};
use kvlint::report;
use std::time::{Duration, Instant};

fn options() -> Options {
    Options {
        gpu: kvlint::gpu::parse_spec("h200x8").ok(),
        ..Options::default()
    }
}

fn reports(outcome: &Outcome) {
    let findings = report::render_all(outcome);
    let _ = report::human::render(outcome, &findings, false);
    let _ = report::json::check(outcome, &findings);
    let _ = report::sarif::render(outcome, &findings, &[]);
    let _ = report::github::render(outcome, &findings);
}

fn check_text(name: &str, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut outcome = Outcome::default();
    let file = outcome.sources.add(name, text);
    outcome.check_file(file, &options(), None);
    outcome.finish();
    outcome.apply_suppressions(&Default::default());
    reports(&outcome);
}

/// Shell scripts (and Dockerfiles, `sh -c` strings inside them).
pub fn shell(data: &[u8]) {
    check_text("fuzz.sh", data);
}

/// YAML: Kubernetes objects, Helm values, compose files, engine configs.
pub fn k8s_yaml(data: &[u8]) {
    check_text("fuzz.yaml", data);
}

/// An argv (words separated by NUL) as `kvlint capacity -- ...` gives it to the engine parsers.
pub fn engine_argv(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let argv: Vec<String> = text.split('\0').map(str::to_string).collect();
    let mut outcome = Outcome::default();
    let file = outcome
        .sources
        .add("<command line>", kvlint::extract::quote_argv(&argv));
    let found = kvlint::extract::parse_command_line(file, &outcome.sources);
    for launch in found.launches {
        outcome.check_launch(launch, file, &options(), None);
    }
    outcome.finish();
    reports(&outcome);
}

/// An AdmissionReview body as `POST /validate` receives it. Bodies over the webhook's limit
/// never reach the check.
pub fn admission(data: &[u8]) {
    use kvlint::webhook::{admission, prune, server, Policy};
    let (body, cut) = prune::prune(data, prune::MAX_DEPTH).unwrap_or((data.to_vec(), 0));
    let Ok(req) = server::parse_review(&body) else {
        return;
    };
    let policy = Policy {
        options: options(),
        ..Policy::default()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    if let Ok(verdict) = admission::review(&req, cut, &policy, Some(deadline)) {
        let _ = verdict.answer(&req.uid);
    }
}

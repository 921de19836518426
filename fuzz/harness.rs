#![allow(dead_code)]

//! What each fuzz target does with one input; `tests/fuzz_corpus.rs` replays the corpus through
//! the same functions on stable. Each runs the whole pipeline and every report format, so a
//! panic anywhere between extraction and printing is found, and asserts what must hold of any
//! input: every span lies inside its file on character boundaries, the JSON and SARIF reports
//! are JSON with one entry per finding, the plain human report carries no control character
//! from the input, and a webhook verdict agrees with its own findings.

use kvlint::pipeline::{Options, Outcome};
use kvlint::report::{self, Rendered};
use kvlint::source::{Loc, Sources};
use std::time::{Duration, Instant};

fn options() -> Options {
    Options {
        gpu: kvlint::gpu::parse_spec("h200x8").ok(),
        ..Options::default()
    }
}

/// A span inside its file, on character boundaries (what every report slices the text by).
fn assert_span(sources: &Sources, loc: Loc, what: &str) {
    let n = sources.iter().count();
    assert!(loc.file.0 < n, "{what}: file {} of {n}", loc.file.0);
    let text = &sources.get(loc.file).text;
    assert!(
        loc.start <= loc.end && loc.end <= text.len(),
        "{what}: span {}..{} outside a {}-byte file",
        loc.start,
        loc.end,
        text.len()
    );
    assert!(
        text.is_char_boundary(loc.start) && text.is_char_boundary(loc.end),
        "{what}: span {}..{} splits a character",
        loc.start,
        loc.end
    );
}

fn assert_spans(sources: &Sources, findings: &[Rendered]) {
    for f in findings {
        for loc in f.primary.iter().chain(&f.finding.primary) {
            assert_span(sources, *loc, &f.rule);
        }
        for l in &f.finding.labels {
            assert_span(sources, l.loc, &f.rule);
        }
    }
}

/// What a terminal would act on: control characters other than newline and tab, and
/// bidirectional overrides (`report::human::clean` replaces them).
fn assert_printable(text: &str, what: &str) {
    let bad = text.chars().find(|&c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    });
    assert!(bad.is_none(), "{what} prints {bad:?} raw");
}

/// The number of entries in a JSON array at `pointer`.
fn count(doc: &serde_json::Value, pointer: &str) -> usize {
    doc.pointer(pointer)
        .and_then(serde_json::Value::as_array)
        .map_or(0, Vec::len)
}

fn reports(outcome: &Outcome) {
    let findings = report::render_all(outcome);
    assert_spans(&outcome.sources, &findings);
    assert_printable(
        &report::human::render(outcome, &findings, false, 1),
        "the human report",
    );
    let _ = report::human::render(outcome, &findings, true, 1);
    let _ = report::summary::render(outcome, &findings);
    let json = report::json::check(outcome, &findings).to_string();
    let json: serde_json::Value = serde_json::from_str(&json).expect("the JSON report is JSON");
    assert_eq!(count(&json, "/findings"), findings.len(), "JSON findings");
    let sarif = report::sarif::render(outcome, &findings, &[], 1);
    let sarif: serde_json::Value = serde_json::from_str(&sarif).expect("the SARIF report is JSON");
    assert_eq!(
        count(&sarif, "/runs/0/results"),
        findings.len(),
        "SARIF results"
    );
    let _ = report::github::render(outcome, &findings, 1);
}

fn check_text(name: &str, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut outcome = Outcome::default();
    let file = outcome.sources.add(name, text);
    outcome.check_file(file, &options(), None);
    outcome.finish(1);
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
    outcome.finish(1);
    reports(&outcome);
}

/// An AdmissionReview body as `POST /validate` receives it, under both `--unknown` policies.
/// Bodies over the webhook's limit never reach the check.
pub fn admission(data: &[u8]) {
    use kvlint::webhook::{admission, prune, server, Policy};
    let (body, cut) = prune::prune(data, prune::MAX_DEPTH).unwrap_or((data.to_vec(), 0));
    let Ok(req) = server::parse_review(&body) else {
        return;
    };
    // What the API server sends for a write: an object, CREATE or UPDATE, no subresource.
    let envelope: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let r = &envelope["request"];
    let reviewed = r["object"].is_object()
        && matches!(r["operation"].as_str(), Some("CREATE" | "UPDATE"))
        && r["subResource"].as_str().unwrap_or("").is_empty();
    let mut allowed = Vec::new();
    for unknown in [admission::Unknown::Warn, admission::Unknown::Deny] {
        let policy = Policy {
            options: options(),
            unknown,
            ..Policy::default()
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let Ok(v) = admission::review(req.clone(), cut, &policy, Some(deadline)) else {
            return;
        };
        let denied = v
            .findings
            .iter()
            .any(|(_, l)| *l == kvlint::rules::Level::Deny);
        assert!(!(denied && v.allowed), "allowed with a deny finding");
        assert!(
            v.allowed || !v.message.is_empty(),
            "denied without a message"
        );
        if reviewed && cut > 0 && unknown == admission::Unknown::Deny {
            assert!(!v.allowed, "allowed an object it could not read whole");
        }
        let chars: usize = v.warnings.iter().map(|w| w.chars().count()).sum();
        assert!(
            chars <= admission::WARNINGS_MAX_TOTAL_CHARS,
            "{chars} chars of warnings"
        );
        for w in &v.warnings {
            assert!(
                w.chars().count() <= admission::WARNING_MAX_CHARS,
                "warning {w:?}"
            );
        }
        let answer: serde_json::Value =
            serde_json::from_slice(&v.answer(&req.uid)).unwrap_or_default();
        assert_eq!(answer["response"]["uid"].as_str(), Some(req.uid.as_str()));
        assert_eq!(answer["response"]["allowed"].as_bool(), Some(v.allowed));
        allowed.push(v.allowed);
    }
    // --unknown=deny allows nothing that --unknown=warn denies.
    assert!(
        allowed[0] || !allowed[1],
        "--unknown=deny allowed what warn denied"
    );
}

/// The untrusted text `kvlint verify` reads: the input as one or two startup logs (split at the
/// first NUL: a prefill/decode pair, as `--log` reads them), then as a server's answers (split
/// at every NUL: `/v1/models`, `/server_info`, `/get_server_info`, `/metrics`, `/version`; a
/// missing or empty one is a 404), each with every engine's patterns and then the one detected. What
/// was read is measured, judged (pool and PD rules across all of it) and printed.
pub fn verify_log(data: &[u8]) {
    use kvlint::verify::{log, measured, report, server, EngineArg, Verified};
    let text = String::from_utf8_lossy(data);
    let logs: Vec<&str> = text.splitn(2, '\0').collect();
    let answers = Canned(text.split('\0').collect());
    let order = [EngineArg::Sglang, EngineArg::Vllm, EngineArg::Trtllm];
    let mut readings = Vec::new();
    for (i, l) in logs.iter().enumerate() {
        let found = log::parse(&format!("fuzz{i}.log"), l.to_string(), None);
        // Detection stops at the first engine whose pool lines the log holds (and tries all
        // three when none does): the later engines' patterns run here.
        if let Ok(r) = &found {
            let after = order
                .iter()
                .position(|e| kvlint::launch::Engine::from(*e) == r.engine)
                .map_or(order.len(), |p| p + 1);
            for e in &order[after..] {
                if let Ok(other) = log::parse("fuzz.log", l.to_string(), Some(*e)) {
                    assert_reading(&other);
                }
            }
        }
        readings.extend(found);
    }
    for e in order {
        if let Ok(r) = server::read(&answers, Some(e)) {
            assert_reading(&r);
        }
    }
    readings.extend(server::read(&answers, None));
    let mut outcome = Outcome::default();
    let mut measurements = Vec::new();
    for mut r in readings {
        assert_reading(&r);
        // As `--context` does when the log does not say.
        r.context
            .get_or_insert_with(|| measured::Fact::given(131_072, "--context"));
        let m = measured::measure(r, &mut outcome.sources).expect("a context is given");
        outcome.findings.extend(measured::findings(&m));
        measurements.push(m);
    }
    outcome
        .findings
        .extend(measured::pd_findings(&measurements));
    let findings = kvlint::report::render_all(&outcome);
    assert_spans(&outcome.sources, &findings);
    let v = Verified {
        outcome,
        measurements,
        findings,
    };
    use kvlint::report::Format;
    assert_printable(&report::render(&v, Format::Human), "verify's human report");
    for format in [Format::Json, Format::Sarif] {
        let out = report::render(&v, format);
        let doc: serde_json::Value = serde_json::from_str(&out).expect("verify's report is JSON");
        let key = if format == Format::Json {
            "/findings"
        } else {
            "/runs/0/results"
        };
        assert_eq!(count(&doc, key), v.findings.len(), "{format:?} findings");
    }
    let _ = report::render(&v, Format::Github);
}

/// A server that answers each endpoint `verify` asks with a canned body.
struct Canned<'a>(Vec<&'a str>);

impl kvlint::verify::http::Get for Canned<'_> {
    fn base(&self) -> &str {
        "http://fuzz"
    }
    fn get(&self, path: &str) -> Result<kvlint::verify::http::Answer, String> {
        let paths = [
            "/v1/models",
            "/server_info",
            "/get_server_info",
            "/metrics",
            "/version",
        ];
        let body = paths
            .iter()
            .position(|p| *p == path)
            .and_then(|i| self.0.get(i))
            .filter(|b| !b.is_empty());
        Ok(kvlint::verify::http::Answer {
            url: format!("http://fuzz{path}"),
            redirected: false,
            status: if body.is_some() { 200 } else { 404 },
            body: body.map_or_else(String::new, |b| b.to_string()),
            elapsed: Duration::ZERO,
        })
    }
}

/// Every fact read points into the log's text, on character boundaries.
fn assert_reading(r: &kvlint::verify::measured::Reading) {
    let spans = [
        r.pool.at.clone(),
        r.context.as_ref().and_then(|f| f.at.clone()),
        r.model.as_ref().and_then(|f| f.at.clone()),
        r.page_size.as_ref().and_then(|f| f.at.clone()),
        r.kv_cache_dtype.as_ref().and_then(|f| f.at.clone()),
        r.transfer_backend.as_ref().and_then(|f| f.at.clone()),
    ];
    for at in spans.into_iter().flatten() {
        assert!(
            r.text.get(at.clone()).is_some(),
            "fact at {at:?} outside a {}-byte log",
            r.text.len()
        );
    }
    assert!(!r.ranks.is_empty(), "a pool without a rank");
    assert!(
        r.ranks.iter().all(|(_, n)| *n >= r.pool.value),
        "the pool {} is not the smallest rank's {:?}",
        r.pool.value,
        r.ranks
    );
}

/// Heap bytes a shell read may hold at its peak: 64 per input byte on top of 192 MiB, what the
/// expansion budget (1 Mi characters plus four per input byte) and one command's words allow.
pub fn shell_memory_bound(input: usize) -> usize {
    (192 << 20) + 64 * input
}

/// The shell reader alone, under its expansion budget: every read ends within its step and
/// character budget (time, counted), with at most [`shell_memory_bound`] bytes live above what
/// was live before it (`peak` resets and reads a counting allocator's high-water mark; the
/// fuzz target gives one, `tests/fuzz_corpus.rs` none), and a read that was cut says so.
pub fn shell_budget(data: &[u8], peak: Option<&dyn Fn(bool) -> usize>) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(reset) = peak {
        reset(true);
    }
    let (out, spent) = kvlint::extract::shell::script_spent(kvlint::source::FileId(0), text);
    if let Some(read) = peak {
        let held = read(false);
        assert!(
            held <= shell_memory_bound(text.len()),
            "{held} bytes for a {}-byte script",
            text.len()
        );
    }
    assert!(spent.steps <= spent.max_steps, "{spent:?}");
    let over = spent.bytes > spent.max_bytes || spent.steps == spent.max_steps;
    let said = out
        .findings
        .iter()
        .any(|f| f.rule == "INP001" && f.get("reason").is_some_and(|r| r.contains("budget")));
    assert!(!over || said, "cut without INP001: {spent:?}");
}

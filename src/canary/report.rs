//! What the canary saw: the over-length answer, status and latency counts of the cross-request
//! test, and CAN001/CAN002 findings pointing into the answers that broke the rules.

use super::probe::{Cross, Over, Target};
use crate::finding::Finding;
use crate::pipeline::Outcome;
use crate::report::Format;
use crate::report::{self, github, human, json, sarif, Rendered};
use crate::rules::{thousands, Level};
use crate::source::Loc;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

pub struct Run {
    pub target: Target,
    pub over: Over,
    pub cross: Option<Cross>,
}

/// The printed report and the exit code.
pub fn render(run: &Run, format: Format) -> (String, i32) {
    let outcome = findings(run);
    let rendered = report::render_all(&outcome);
    let cannot = matches!(run.over, Over::NoAnswer(_))
        || run
            .cross
            .as_ref()
            .is_some_and(|c| !c.asked.is_empty() && c.asked.iter().all(|a| a.status.is_none()));
    let code = match report::exit_code(&rendered, Level::Deny) {
        1 => 1,
        _ if cannot => 2,
        _ => 0,
    };
    let text = match format {
        Format::Human => {
            let mut out = summary(run);
            out.push('\n');
            out.push_str(&human::render(&outcome, &rendered, false, 1));
            out
        }
        Format::Json => format!("{:#}\n", document(run, &outcome, &rendered)),
        Format::Sarif => sarif::render_findings(&rendered),
        Format::Github => github::render_findings(&rendered),
    };
    (text, code)
}

/// CAN001 on an accepted over-length prompt, CAN002 on each answer holding another's nonce;
/// each answer is a source so the finding points at what gave it away.
fn findings(run: &Run) -> Outcome {
    let mut o = Outcome::default();
    let t = &run.target;
    if let Over::Accepted(a) = &run.over {
        let file = o
            .sources
            .add("POST /v1/completions (over-length prompt)", pretty(&a.body));
        let text = &o.sources.get(file).text;
        let at = text
            .find("\"choices\"")
            .map_or(0..text.len().min(1), |i| i..i + 9);
        o.findings.push(
            Finding::new("CAN001", Some(Loc::new(file, at)))
                .var("tokens", thousands(t.prompt_tokens))
                .var("context", thousands(t.context))
                .var("why", &t.why)
                .var("ms", a.elapsed.as_millis())
                .label("HTTP 200 with an answer"),
        );
    }
    for asked in run.cross.iter().flat_map(|c| &c.asked) {
        let Some(&other) = asked.foreign.first() else {
            continue;
        };
        let nonces = &run.cross.as_ref().map_or(&[][..], |c| &c.nonces[..]);
        let Some(theirs) = nonces.get(other) else {
            continue;
        };
        let file = o.sources.add(
            format!("POST /v1/completions (request {})", asked.index),
            pretty(&asked.body),
        );
        let text = &o.sources.get(file).text;
        let at = text
            .find(theirs.as_str())
            .map_or(0..0, |i| i..i + theirs.len());
        o.findings.push(
            Finding::new("CAN002", Some(Loc::new(file, at)))
                .var("request", asked.index)
                .var("other", other)
                .var("nonce", theirs)
                .label(format!("the nonce of request {other}")),
        );
    }
    o
}

fn pretty(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| body.to_string())
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

/// Latency percentiles (nearest rank) over the requests that were answered.
fn latency(c: &Cross) -> Option<(u128, u128, u128)> {
    let mut l: Vec<Duration> = c
        .asked
        .iter()
        .filter(|a| a.status.is_some())
        .map(|a| a.latency)
        .collect();
    l.sort();
    let at = |q: f64| {
        l.get(((l.len() as f64 * q).ceil() as usize).saturating_sub(1))
            .copied()
    };
    Some((ms(at(0.5)?), ms(at(0.9)?), ms(*l.last()?)))
}

fn statuses(c: &Cross) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for a in &c.asked {
        let k = a
            .status
            .map_or_else(|| "no answer".to_string(), |s| s.to_string());
        *m.entry(k).or_insert(0) += 1;
    }
    m
}

fn summary(run: &Run) -> String {
    let t = &run.target;
    let mut out = format!(
        "canary: model {} · context {} tokens ({})\n",
        t.model,
        thousands(t.context),
        t.context_source
    );
    let over = match &run.over {
        Over::Refused {
            status,
            message,
            latency,
        } => format!(
            "refused: HTTP {status} in {} ms ({})",
            ms(*latency),
            message
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(120)
                .collect::<String>()
        ),
        Over::Accepted(a) => format!("ACCEPTED: HTTP {} in {} ms", a.status, ms(a.elapsed)),
        Over::NoAnswer(e) => format!("no answer: {e}"),
    };
    out.push_str(&format!(
        "  over-length    {} tokens ({}): {over}\n",
        thousands(t.prompt_tokens),
        t.why
    ));
    match &run.cross {
        None => out.push_str(
            "  cross-request  not run (stopped at the first deny; --keep-going runs it)\n",
        ),
        Some(c) => {
            let counts: Vec<String> = statuses(c)
                .iter()
                .map(|(k, n)| format!("{k} ×{n}"))
                .collect();
            let answered = c.asked.iter().filter(|a| a.status == Some(200)).count();
            let echoed = c.asked.iter().filter(|a| a.echoed).count();
            let leaks = c.asked.iter().filter(|a| !a.foreign.is_empty()).count();
            out.push_str(&format!(
                "  cross-request  {} of {} sent: {}; own nonce echoed in {echoed} of {answered} answers ({} missing: counted, not failed); answers holding another request's nonce: {leaks}\n",
                c.asked.len(),
                c.planned,
                counts.join(", "),
                answered - echoed.min(answered)
            ));
            if let Some((p50, p90, max)) = latency(c) {
                out.push_str(&format!(
                    "  latency        p50 {p50} ms · p90 {p90} ms · max {max} ms\n"
                ));
            }
        }
    }
    out
}

fn document(run: &Run, outcome: &Outcome, findings: &[Rendered]) -> Value {
    let t = &run.target;
    let over = match &run.over {
        Over::Refused {
            status,
            message,
            latency,
        } => {
            json!({"outcome": "refused", "status": status, "message": message, "latency_ms": ms(*latency)})
        }
        Over::Accepted(a) => {
            json!({"outcome": "accepted", "status": a.status, "latency_ms": ms(a.elapsed)})
        }
        Over::NoAnswer(e) => json!({"outcome": "no_answer", "error": e}),
    };
    let cross = run.cross.as_ref().map(|c| {
        let answered = c.asked.iter().filter(|a| a.status == Some(200)).count();
        let echoed = c.asked.iter().filter(|a| a.echoed).count();
        json!({
            "planned": c.planned,
            "sent": c.asked.len(),
            "status_counts": statuses(c),
            "echoed_own_nonce": echoed,
            "missing_own_nonce": answered - echoed.min(answered),
            "leaks": c.asked.iter().flat_map(|a| a.foreign.iter().map(move |o| json!({"request": a.index, "holds_nonce_of": o}))).collect::<Vec<_>>(),
            "latency_ms": latency(c).map(|(p50, p90, max)| json!({"p50": p50, "p90": p90, "max": max})),
        })
    });
    let mut doc = json::check(outcome, findings);
    if let Value::Object(o) = &mut doc {
        o.remove("launches");
        o.remove("deployments");
        o.insert(
            "canary".into(),
            json!({
                "model": t.model,
                "context_length": t.context,
                "context_source": t.context_source,
                "over_length": {"prompt_tokens": t.prompt_tokens, "why": t.why, "answer": over},
                "cross_request": cross,
            }),
        );
    }
    doc
}

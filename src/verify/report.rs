//! `kvlint verify` output: what each server or log measured, beside the prediction when a launch
//! was given, then the findings in `check`'s own formats.

use super::measured::Measurement;
use super::Verified;
use crate::report::Format;
use crate::report::{github, human, json, sarif, Rendered};
use crate::rules::{thousands, Level};
use serde_json::{json, Value};
use std::io::IsTerminal;

pub fn render(v: &Verified, format: Format) -> String {
    match format {
        Format::Human => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            let mut out: String = v
                .measurements
                .iter()
                .map(|m| lines(m, &v.findings))
                .collect();
            out.push('\n');
            out.push_str(&human::render(&v.outcome, &v.findings, color, 1));
            out
        }
        Format::Json => {
            let mut doc = json::check(&v.outcome, &v.findings);
            if let Value::Object(o) = &mut doc {
                let ms = v.measurements.iter().map(|m| object(m, &v.findings));
                o.insert("measurements".into(), Value::Array(ms.collect()));
            }
            format!("{doc:#}\n")
        }
        Format::Sarif => sarif::render_findings(&v.findings),
        Format::Github => github::render_findings(&v.findings),
    }
}

/// The worst finding about a measurement, in `check`'s words.
fn verdict(m: &Measurement, findings: &[Rendered]) -> &'static str {
    let worst = findings
        .iter()
        .filter(|f| f.primary.is_some_and(|l| l.file == m.file))
        .map(|f| f.level)
        .max();
    match worst {
        Some(Level::Deny) => "refused",
        Some(Level::Warn) => "passes with warnings",
        _ => "passes",
    }
}

fn lines(m: &Measurement, findings: &[Rendered]) -> String {
    let r = &m.reading;
    let mut out = format!(
        "measured: {} {} {} at {}\n",
        r.engine.name(),
        r.version.as_deref().unwrap_or("(version unknown)"),
        m.role().name(),
        r.name
    );
    let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<10} {v}\n"));
    row(
        "pool",
        format!("{} tokens — {}", thousands(r.pool.value), r.pool.how),
    );
    let same = r.ranks.iter().all(|(_, n)| *n == r.pool.value);
    if r.ranks.len() > 1 && same {
        row(
            "ranks",
            format!(
                "{} ranks, every one {}",
                r.ranks.len(),
                thousands(r.pool.value)
            ),
        );
    } else if r.ranks.len() > 1 {
        let ranks: Vec<String> = r
            .ranks
            .iter()
            .map(|(k, n)| format!("{k} {}", thousands(*n)))
            .collect();
        row("ranks", ranks.join(" · "));
    }
    row(
        "context",
        format!("{} tokens — {}", thousands(m.context.value), m.context.how),
    );
    if let Some(p) = &m.prediction {
        row(
            "predicted",
            format!(
                "{} tokens (band {}–{}) for {} on {}, {} {}: error {:+.1} %, {} the band",
                thousands(p.pool_tokens),
                thousands(p.pool_tokens_low),
                thousands(p.pool_tokens_high),
                p.model,
                p.gpu,
                r.engine.name(),
                p.engine_version,
                p.error_percent,
                if p.inside_band { "inside" } else { "outside" }
            ),
        );
    }
    for n in &r.notes {
        row("note", n.clone());
    }
    row("verdict", verdict(m, findings).to_string());
    out
}

fn object(m: &Measurement, findings: &[Rendered]) -> Value {
    let r = &m.reading;
    json!({
        "source": r.name,
        "engine": r.engine,
        "engine_version": r.version,
        "role": m.role(),
        "model": r.model.as_ref().map(|f| &f.value),
        "pool_tokens": r.pool.value,
        "pool_source": r.pool.how,
        "ranks": r.ranks.iter().map(|(k, n)| json!({"rank": k, "pool_tokens": n})).collect::<Vec<_>>(),
        "context_length": m.context.value,
        "context_source": m.context.how,
        "page_size": r.page_size.as_ref().map(|f| f.value),
        "kv_cache_dtype": r.kv_cache_dtype.as_ref().map(|f| &f.value),
        "notes": r.notes,
        "prediction": m.prediction,
        "verdict": verdict(m, findings),
    })
}

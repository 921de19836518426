//! The job summary (`--summary FILE`, or `$GITHUB_STEP_SUMMARY` with `--format github`): a
//! Markdown table of the launches with their pool against their context, then the findings.

use super::{verdict, Rendered};
use crate::pipeline::Outcome;
use crate::rules::{thousands, Level};

/// A table cell: control characters made visible as in the terminal report, pipes escaped, on
/// one line (a newline would end the row and start a forged one).
fn cell(s: &str) -> String {
    super::human::clean(s)
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

/// `text` as a code span in a table cell: fenced by more backticks than any run inside it (so a
/// backtick in a file name cannot close it early), padded when it starts or ends with one.
fn code(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    cell(&format!("{fence}{pad}{text}{pad}{fence}"))
}

fn launch_rows(outcome: &Outcome, findings: &[Rendered]) -> String {
    let mut out = String::from(
        "| launch | engine | model | GPU | TP | pool / context (tokens) | headroom | verdict |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for (i, lo) in outcome.launches.iter().enumerate() {
        let pos = outcome.sources.position(lo.launch.command);
        let mut at = code(&format!(
            "{}:{}",
            outcome.sources.get(lo.file).name,
            pos.line
        ));
        if let Some(o) = &lo.launch.object {
            at.push_str(&cell(&format!(" {}/{}", o.kind, o.name)));
        }
        let v = verdict(outcome, findings, i);
        let mark = match v.as_str() {
            "refused" => "❌",
            "passes" => "✅",
            _ if v.starts_with("refused") => "❌",
            _ => "⚠️",
        };
        let row = match &lo.plan {
            Some(p) => [
                format!(
                    "{} {} ({})",
                    p.engine.name(),
                    p.engine_version,
                    p.role.name()
                ),
                p.model.clone(),
                match super::gpu_source_text(outcome, lo) {
                    Some(from) => format!("{}×{} (from {from})", p.gpu_count, p.gpu),
                    None => format!("{}×{}", p.gpu_count, p.gpu),
                },
                p.tp.to_string(),
                format!(
                    "{} / {}",
                    thousands(p.usable_tokens),
                    thousands(p.context_length)
                ),
                headroom(p.usable_tokens, p.context_length),
            ],
            None => [
                format!("{} {}", lo.launch.engine.name(), lo.args.version),
                lo.model.as_ref().map_or("?".into(), |m| m.id.clone()),
                lo.gpu.as_ref().map_or("?".into(), |g| g.name.clone()),
                "?".into(),
                "no plan (see findings)".into(),
                "?".into(),
            ],
        };
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        out.push_str(&format!("| {at} | {} | {mark} {v} |\n", cells.join(" | ")));
    }
    out
}

/// The pool as a multiple of the context, e.g. `0.65×`.
fn headroom(pool: u64, context: u64) -> String {
    if context == 0 {
        return "?".into();
    }
    format!("{:.2}×", pool as f64 / context as f64)
}

fn finding_rows(findings: &[Rendered]) -> String {
    let mut out = String::from("| level | rule | where | message |\n|---|---|---|---|\n");
    for r in findings {
        let level = match r.level {
            Level::Deny => "error",
            _ => "warning",
        };
        let at = match (&r.file, r.line, r.column) {
            (Some(f), Some(l), Some(c)) => code(&format!("{f}:{l}:{c}")),
            _ => String::new(),
        };
        let what = format!("{} — {}", r.message, r.help);
        out.push_str(&format!(
            "| {level} | {} `{}` | {at} | {} |\n",
            cell(&r.rule),
            cell(&r.name),
            cell(&what)
        ));
    }
    out
}

/// The whole summary.
pub fn render(outcome: &Outcome, findings: &[Rendered]) -> String {
    let mut out = String::from("## kvlint\n\n");
    if let Some(none) = super::nothing_found(outcome) {
        out.push_str(&format!("⚠️ {}.\n", cell(&none)));
    } else {
        out.push_str(&launch_rows(outcome, findings));
    }
    if !findings.is_empty() {
        out.push_str("\n### Findings\n\n");
        out.push_str(&finding_rows(findings));
    }
    out.push('\n');
    out.push_str(&format!(
        "{}: {}",
        super::checked_line(outcome),
        super::human::summary(findings, outcome.suppressed.len())
    ));
    out
}

//! Reports: findings rendered with their rule's level and wording, and one printer per format.
//! Checks never format output; printers never compute.

pub mod github;
pub mod human;
pub mod json;
pub mod plan;
mod pretty;
pub mod sarif;
pub mod summary;

use crate::finding::Finding;
use crate::launch::ObjectRef;
use crate::outcome::LaunchOutcome;
use crate::parallel;
use crate::pipeline::Outcome;
use crate::rules::RuleSettings;
use crate::rules::{self, Level};
use crate::source::{Loc, Sources};
use serde::Serialize;

/// The report formats of `check`, `verify` and `canary` (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub Actions annotations (workflow commands).
    Github,
}

/// A finding with its rule's level and wording filled in, and its place as line and column.
#[derive(Debug, Clone, Serialize)]
pub struct Rendered {
    pub rule: String,
    pub name: String,
    pub level: Level,
    pub message: String,
    pub help: String,
    pub file: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub end_line: Option<usize>,
    pub end_column: Option<usize>,
    pub object: Option<ObjectRef>,
    pub fingerprint: String,
    #[serde(skip)]
    pub primary: Option<Loc>,
    #[serde(skip)]
    pub finding: Finding,
    /// The reason a suppression gave, for a suppressed finding.
    #[serde(skip)]
    pub suppression: Option<String>,
}

/// Renders every finding of a run at the rules' own levels, worst first, then by file and line.
pub fn render_all(outcome: &Outcome) -> Vec<Rendered> {
    render_with(outcome, &RuleSettings::default(), 1)
}

/// Renders every reported finding at the levels `kvlint.toml` sets, on up to `jobs` threads.
pub fn render_with(outcome: &Outcome, settings: &RuleSettings, jobs: usize) -> Vec<Rendered> {
    let chunks: Vec<&[Finding]> = outcome.findings.chunks(CHUNK).collect();
    let one = |c: &&[Finding]| -> Vec<Rendered> {
        c.iter()
            .filter_map(|f| render(f, &outcome.sources, settings))
            .collect()
    };
    let mut out = Vec::with_capacity(outcome.findings.len());
    parallel::for_each_ordered(&chunks, jobs, WINDOW, one, |r| out.extend(r));
    sorted(out)
}

/// Renders the findings suppressions hid, each with its reason.
pub fn render_suppressed(outcome: &Outcome, settings: &RuleSettings) -> Vec<Rendered> {
    let one = |s: &crate::suppress::Suppressed| {
        render(&s.finding, &outcome.sources, settings).map(|r| Rendered {
            suppression: Some(s.reason.clone()),
            ..r
        })
    };
    sorted(outcome.suppressed.iter().filter_map(one).collect())
}

fn sorted(mut out: Vec<Rendered>) -> Vec<Rendered> {
    out.sort_by(|a, b| {
        b.level
            .cmp(&a.level)
            .then_with(|| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)))
    });
    out
}

/// Items a thread renders at a time, and chunks rendered ahead of the one appended.
const CHUNK: usize = 32;
const WINDOW: usize = 16;

/// The text `write` gives each item, in the items' order, rendered in chunks on up to `jobs`
/// threads: the text does not depend on `jobs`.
fn concat<T: Sync>(items: &[T], jobs: usize, write: impl Fn(&mut String, &T) + Sync) -> String {
    let chunks: Vec<&[T]> = items.chunks(CHUNK).collect();
    let mut out = String::new();
    let chunk = |c: &&[T]| {
        let mut s = String::new();
        for x in *c {
            write(&mut s, x);
        }
        s
    };
    parallel::for_each_ordered(&chunks, jobs, WINDOW, chunk, |s| out.push_str(&s));
    out
}

/// `--statistics`: how many findings each rule gave, most first (ruff's table).
pub fn statistics(findings: &[Rendered]) -> String {
    let mut counts: Vec<(usize, &Rendered)> = Vec::new();
    for f in findings {
        match counts.iter_mut().find(|(_, r)| r.rule == f.rule) {
            Some((n, _)) => *n += 1,
            None => counts.push((1, f)),
        }
    }
    counts.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.rule.cmp(&b.1.rule)));
    let width = counts.iter().map(|(_, r)| r.name.len()).max().unwrap_or(0);
    counts
        .iter()
        .map(|(n, r)| {
            format!(
                "{n:>5}  {:<7} {:<width$}  {}\n",
                r.rule,
                r.name,
                r.level.name()
            )
        })
        .collect()
}

/// The verdict on one launch from its worst finding: `refused`, `passes with warnings`, `passes`.
pub fn verdict_word(findings: &[Rendered], launch: usize) -> &'static str {
    word(
        findings
            .iter()
            .filter(|f| f.finding.launch == Some(launch))
            .map(|f| f.level)
            .max(),
    )
}

/// [`verdict_word`] of every launch in one pass over the findings.
pub fn verdict_words(launches: usize, findings: &[Rendered]) -> Vec<&'static str> {
    let mut worst: Vec<Option<Level>> = vec![None; launches];
    for f in findings {
        if let Some(w) = f.finding.launch.and_then(|i| worst.get_mut(i)) {
            *w = (*w).max(Some(f.level));
        }
    }
    worst.into_iter().map(word).collect()
}

fn word(worst: Option<Level>) -> &'static str {
    match worst {
        Some(Level::Deny) => "refused",
        Some(Level::Warn) => "passes with warnings",
        _ => "passes",
    }
}

/// [`verdict`] of every launch in one pass over the findings (a call per launch is quadratic
/// in a large render).
pub fn verdicts(outcome: &Outcome, findings: &[Rendered]) -> Vec<String> {
    let n = outcome.launches.len();
    let mut worst: Vec<Option<Level>> = vec![None; n];
    let mut hidden = vec![0usize; n];
    for f in findings {
        if let Some(w) = f.finding.launch.and_then(|i| worst.get_mut(i)) {
            *w = (*w).max(Some(f.level));
        }
    }
    for s in &outcome.suppressed {
        if let Some(h) = s.finding.launch.and_then(|i| hidden.get_mut(i)) {
            *h += 1;
        }
    }
    worst
        .into_iter()
        .zip(hidden)
        .map(|(w, h)| verdict_text(w, h))
        .collect()
}

fn verdict_text(worst: Option<Level>, suppressed: usize) -> String {
    let v = word(worst);
    match suppressed {
        0 => v.to_string(),
        n => format!("{v} ({n} suppressed)"),
    }
}

/// What the run says about one launch, from its worst finding, noting what suppressions hid.
pub fn verdict(outcome: &Outcome, findings: &[Rendered], launch: usize) -> String {
    let worst = findings
        .iter()
        .filter(|f| f.finding.launch == Some(launch))
        .map(|f| f.level)
        .max();
    let suppressed = outcome
        .suppressed
        .iter()
        .filter(|s| s.finding.launch == Some(launch))
        .count();
    verdict_text(worst, suppressed)
}

/// `3 files` / `1 file`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The run's summary line: `checked 3 files, 2 launches`.
pub fn checked_line(outcome: &Outcome) -> String {
    format!(
        "checked {}, {}",
        count(outcome.files_checked, "file", "files"),
        count(outcome.launches.len(), "launch", "launches")
    )
}

/// `no engine launch found in 3 files` when the inputs hold no launch: nothing checked must be
/// visible, in every format.
pub fn nothing_found(outcome: &Outcome) -> Option<String> {
    outcome.launches.is_empty().then(|| {
        let none = format!(
            "no engine launch found in {}",
            count(outcome.files_checked, "file", "files")
        );
        match skipped(outcome) {
            Some(what) => format!("{none}; skipped on purpose: {what}"),
            None => none,
        }
    })
}

/// What the inputs named and kvlint skipped on purpose (INP007, `allow` by default: a router,
/// an in-process benchmark), so that a run that found no launch still says why: each once, the
/// first three, with the rule that lists where.
fn skipped(outcome: &Outcome) -> Option<String> {
    const SHOWN: usize = 3;
    let mut whats: Vec<&str> = Vec::new();
    for f in outcome.findings.iter().filter(|f| f.rule == "INP007") {
        if let Some(what) = f.get("what").filter(|w| !whats.contains(w)) {
            whats.push(what);
        }
    }
    if whats.is_empty() {
        return None;
    }
    let more = whats.len().saturating_sub(SHOWN);
    let mut text = whats[..whats.len().min(SHOWN)].join("; ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    // INP007 is `allow` by default; its rule page says how to list where each was skipped.
    Some(format!("{text} (INP007)"))
}

/// Where a launch's GPU came from, for a reader: `the input, deploy.yaml:12`, `--gpu`.
pub fn gpu_source_text(outcome: &Outcome, lo: &LaunchOutcome) -> Option<String> {
    let src = lo.gpu_source?;
    Some(match src.loc() {
        Some(loc) => format!(
            "{}, {}:{}",
            src.describe(),
            human::clean_name(&outcome.sources.get(loc.file).name),
            outcome.sources.line(loc)
        ),
        None => src.describe().to_string(),
    })
}

fn render(f: &Finding, sources: &Sources, settings: &RuleSettings) -> Option<Rendered> {
    let rule = rules::find(f.rule)?;
    let level = settings.level(rule);
    if level == Level::Allow {
        return None;
    }
    let pos = f
        .primary
        .map(|l| (sources.get(l.file).name.clone(), sources.position(l)));
    let flag_text = f.primary.map_or("", |l| sources.text(l));
    let object = f.object.as_ref().map(|o| {
        format!(
            "{}/{}/{}",
            o.kind,
            o.namespace.as_deref().unwrap_or(""),
            o.name
        )
    });
    Some(Rendered {
        rule: rule.id.clone(),
        name: rule.name.clone(),
        level,
        message: rules::render(&rule.message, &f.vars),
        help: rules::render(&rule.help, &f.vars),
        file: pos.as_ref().map(|(n, _)| n.clone()),
        line: pos.as_ref().map(|(_, p)| p.line),
        column: pos.as_ref().map(|(_, p)| p.column),
        end_line: pos.as_ref().map(|(_, p)| p.end_line),
        end_column: pos.as_ref().map(|(_, p)| p.end_column),
        object: f.object.clone(),
        fingerprint: fingerprint(&[
            &rule.id,
            pos.as_ref().map_or("", |(n, _)| n.as_str()),
            object.as_deref().unwrap_or(""),
            flag_text.split_whitespace().next().unwrap_or(""),
        ]),
        primary: f.primary,
        finding: f.clone(),
        suppression: None,
    })
}

/// A stable id for a finding that survives line moves: FNV-1a over rule, file, object and the
/// option the finding points at.
fn fingerprint(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The exit code of `check`: 1 when a finding is at or above `fail_on`.
pub fn exit_code(findings: &[Rendered], fail_on: Level) -> i32 {
    i32::from(findings.iter().any(|f| f.level >= fail_on))
}

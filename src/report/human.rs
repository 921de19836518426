//! Human output: miette code frames on the offending flags, then one line per launch.

use super::Rendered;
use crate::outcome::LaunchOutcome;
use crate::pipeline::Outcome;
use crate::rules::{thousands, Level};
use crate::source::{Loc, SourceFile};
use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError,
    MietteSpanContents, Severity, SourceCode, SourceSpan, SpanContents,
};
use std::fmt;

/// One finding as a miette diagnostic.
#[derive(Debug)]
struct Diag {
    message: String,
    code: String,
    severity: Severity,
    help: String,
    source: Option<Window>,
    labels: Vec<LabeledSpan>,
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diag {}

impl Diagnostic for Diag {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(&self.code))
    }
    fn severity(&self) -> Option<Severity> {
        Some(self.severity)
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(&self.help))
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        (!self.labels.is_empty())
            .then(|| Box::new(self.labels.iter().cloned()) as Box<dyn Iterator<Item = _>>)
    }
}

fn diag(r: &Rendered, outcome: &Outcome) -> Diag {
    let (source, labels) = match r.primary {
        Some(loc) => {
            let near: Vec<Loc> = r
                .finding
                .labels
                .iter()
                .filter(|l| l.loc.file == loc.file)
                .map(|l| l.loc)
                .collect();
            let window = Window::around(outcome.sources.get(loc.file), loc, &near);
            let primary = window.span(loc).map(|span| {
                LabeledSpan::new_primary_with_span(
                    r.finding.primary_label.as_deref().map(clean),
                    span,
                )
            });
            let mut labels: Vec<LabeledSpan> = primary.into_iter().collect();
            labels.extend(r.finding.labels.iter().filter_map(|l| {
                let span = window.span(l.loc).filter(|_| l.loc.file == loc.file)?;
                Some(LabeledSpan::new_with_span(Some(clean(&l.text)), span))
            }));
            (Some(window), labels)
        }
        None => (None, Vec::new()),
    };
    Diag {
        message: clean(&r.message),
        code: format!("{} {}", r.rule, r.name),
        severity: match r.level {
            Level::Deny => Severity::Error,
            Level::Warn => Severity::Warning,
            Level::Allow => Severity::Advice,
        },
        help: clean(&r.help),
        source,
        labels,
    }
}

/// Lines of context around a finding's span; labels more than `LABEL_LINES` away are left out
/// of the frame.
const CONTEXT_LINES: usize = 3;
const LABEL_LINES: usize = 40;
/// Characters of a long line shown on each side of the span (and of a long span itself).
const LINE_CHARS: usize = 120;

/// The part of a file one frame shows, with its place in the file: every finding copies and
/// scans only these few lines, so the report stays linear in the input, and lines are cut so
/// that no column is wider than the terminal could show (miette's layout breaks past 65,535).
#[derive(Debug)]
struct Window {
    name: String,
    /// The shown text, control characters replaced byte for byte.
    text: String,
    /// File offset of `text[0]`, and its 0-based line and column in the file.
    offset: usize,
    line: usize,
    column: usize,
}

impl Window {
    fn around(file: &SourceFile, loc: Loc, labels: &[Loc]) -> Window {
        let text = &file.text;
        let start = floor(text, loc.start);
        let (line, _) = file.line_col(start);
        let (end_line, _) = file.line_col(floor(text, loc.end).max(start));
        let end_line = end_line.min(line + 2 * CONTEXT_LINES);
        let (mut top, mut bottom) = (line, end_line);
        for l in labels {
            let (at, _) = file.line_col(floor(text, l.start));
            if at + LABEL_LINES >= line && at <= end_line + LABEL_LINES {
                top = top.min(at);
                bottom = bottom.max(at);
            }
        }
        let first = top.saturating_sub(CONTEXT_LINES).max(1);
        let last = bottom + CONTEXT_LINES;
        let top_at = file.offset_of(first, 1);
        let (from, to) = match lines_end(text, top_at, last + 1 - first) {
            Some(end) => (top_at, end),
            None => {
                // One cut line: the span with some characters either side, never past its line.
                let from = back_chars(text, start, LINE_CHARS);
                let from = text[from..start].rfind('\n').map_or(from, |i| from + i + 1);
                let to = fwd_chars(text, start, 2 * LINE_CHARS);
                let to = text[start..to].find('\n').map_or(to, |i| start + i);
                (from, to)
            }
        };
        let (line0, col0) = file.line_col(from);
        Window {
            name: clean_name(&file.name),
            text: clean_keep_len(&text[from..to]),
            offset: from,
            line: line0 - 1,
            column: col0 - 1,
        }
    }

    /// The span of `loc` in the file's offsets, cut to the window; `None` when outside it.
    fn span(&self, loc: Loc) -> Option<SourceSpan> {
        let end = self.offset + self.text.len();
        if loc.start < self.offset || loc.start > end {
            return None;
        }
        let stop = loc.end.clamp(loc.start, end);
        Some((loc.start, stop - loc.start).into())
    }
}

impl SourceCode for Window {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let local = span
            .offset()
            .checked_sub(self.offset)
            .ok_or(MietteError::OutOfBounds)?;
        let inner = self
            .text
            .as_bytes()
            .read_span(&(local, span.len()).into(), before, after)?;
        let column = if inner.line() == 0 {
            inner.column() + self.column
        } else {
            inner.column()
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            (inner.span().offset() + self.offset, inner.span().len()).into(),
            inner.line() + self.line,
            column,
            // miette counts lines from the start of the source: keep its frame merging.
            inner.line_count() + self.line,
        )))
    }
}

/// Where the line `count` lines after the one starting at `start` starts; `None` when one of
/// those lines is longer than a frame shows. Each line is scanned only up to that length, so a
/// megabyte-long line costs no more than a short one.
fn lines_end(text: &str, mut start: usize, count: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    for _ in 0..count {
        let stop = (start + 4 * LINE_CHARS + 1).min(bytes.len());
        let next = match bytes[start..stop].iter().position(|&b| b == b'\n') {
            Some(i) => start + i + 1,
            None if stop < bytes.len() => return None,
            None => bytes.len(),
        };
        if next - start > 4 * LINE_CHARS {
            return None;
        }
        start = next;
    }
    Some(start)
}

/// The nearest character boundary at or before `at`.
fn floor(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The offset `n` characters before `at` (or the start).
fn back_chars(text: &str, at: usize, n: usize) -> usize {
    text[..at]
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i)
}

/// The offset `n` characters after `at` (or the end).
fn fwd_chars(text: &str, at: usize, n: usize) -> usize {
    text[at..]
        .char_indices()
        .nth(n)
        .map_or(text.len(), |(i, _)| at + i)
}

/// Text from the input made safe for a terminal: control characters (escape sequences) and
/// bidirectional overrides become visible replacements.
pub fn clean(s: &str) -> String {
    clean_keep_len(s)
}

/// A file name made safe as [`clean`] makes text, and on one line: a newline or tab in a name
/// would start a forged line of the report.
pub fn clean_name(s: &str) -> String {
    clean(s).replace(['\n', '\t'], "?")
}

/// As [`clean`], each replacement as long in bytes as what it replaces, so offsets still hold.
fn clean_keep_len(s: &str) -> String {
    if !has_unsafe(s) {
        return s.to_string();
    }
    s.chars()
        .map(|c| match c {
            c if !unsafe_char(c) => c.to_string(),
            '\r' => " ".into(),
            c => match c.len_utf8() {
                1 => "?".into(),
                2 => "¿".into(),
                _ => "\u{FFFD}".into(),
            },
        })
        .collect()
}

/// Whether `s` holds a character [`unsafe_char`] replaces. Only bytes that can start one are
/// decoded: ASCII controls, and the lead bytes of C1 controls (0xC2) and of the bidirectional
/// overrides (0xE2), so that a long report is scanned byte by byte.
fn has_unsafe(s: &str) -> bool {
    s.bytes().enumerate().any(|(i, b)| {
        matches!(b, 0..=0x1f | 0x7f | 0xc2 | 0xe2) && s[i..].chars().next().is_some_and(unsafe_char)
    })
}

/// Whether the reports replace or encode `c`: a control character (but a newline or tab) or a
/// bidirectional override.
pub fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The printed report. `color` selects ANSI colours (a terminal) or plain text. Findings and
/// launches are rendered on up to `jobs` threads; the text does not depend on `jobs`.
pub fn render(outcome: &Outcome, findings: &[Rendered], color: bool, jobs: usize) -> String {
    let mut out = render_findings(outcome, findings, color, jobs);
    out.push_str(&launch_lines(outcome, findings, jobs));
    if let Some(none) = super::nothing_found(outcome) {
        out.push_str(&format!("{none}\n"));
    }
    out.push_str(&format!(
        "{}: {}",
        super::checked_line(outcome),
        summary(findings, outcome.suppressed.len())
    ));
    out
}

/// Each finding as a code frame, alone (`--quiet`), rendered on up to `jobs` threads.
pub fn render_findings(
    outcome: &Outcome,
    findings: &[Rendered],
    color: bool,
    jobs: usize,
) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(width())
        .with_links(false);
    super::concat(findings, jobs, |out, r| {
        let _ = handler.render_report(out, &diag(r, outcome));
        out.push('\n');
    })
}

/// Columns to wrap at: `$COLUMNS`, else the terminal's width, else 100 (files and pipes).
fn width() -> usize {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok());
    let terminal =
        || terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0));
    columns
        .or_else(terminal)
        .filter(|w| *w >= 20)
        .unwrap_or(100)
}

/// A term's value as a reader wants it: bytes as whole bytes and GiB, counts as integers,
/// fractions as written (`5168431104 bytes (4.81 GiB)`, `0.886`), never float noise.
fn quantity(term: &str, v: f64) -> String {
    if term.contains("bytes") {
        let b = v.round().max(0.0) as u64;
        format!(
            "{} bytes ({:.2} GiB)",
            thousands(b),
            b as f64 / crate::units::GIB
        )
    } else if v.abs() >= 1.0 && (v - v.round()).abs() < 1e-6 {
        let n = v.round();
        let sign = if n < 0.0 { "-" } else { "" };
        format!("{sign}{}", thousands(n.abs() as u64))
    } else {
        format!("{}", (v * 1e6).round() / 1e6)
    }
}

/// One line per launch: what runs where, the pool against the context, and the verdict; made safe
/// for a terminal.
fn launch_lines(outcome: &Outcome, findings: &[Rendered], jobs: usize) -> String {
    let verdicts = super::verdicts(outcome, findings);
    let launches: Vec<(&LaunchOutcome, String)> = outcome.launches.iter().zip(verdicts).collect();
    super::concat(&launches, jobs, |out, (lo, verdict)| {
        let line = outcome.sources.line(lo.launch.command);
        let file = clean_name(&outcome.sources.get(lo.file).name);
        let from = super::gpu_source_text(outcome, lo)
            .map_or_else(String::new, |s| format!(", GPU from {s}"));
        let what = match &lo.plan {
            Some(p) => format!(
                "{} {} {} {} on {}×{} (TP {}{from}): pool {} tokens (band {}–{}) for a context of {}",
                p.engine.name(),
                p.engine_version,
                p.role.name(),
                p.model,
                p.gpu_count,
                p.gpu,
                p.tp,
                thousands(p.usable_tokens),
                thousands(p.usable_tokens_low),
                thousands(p.usable_tokens_high),
                thousands(p.context_length),
            ),
            None => {
                let role = crate::deployment::role_of(&lo.launch, &lo.args);
                let model = crate::deployment::model_text(&lo.args)
                    .filter(|_| {
                        let dest = crate::deployment::model_dest(lo.args.engine);
                        lo.args.get(dest).is_some_and(|s| s.usable())
                    })
                    .map_or_else(String::new, |m| format!(" {m}"));
                let gpu = lo.gpu.as_ref().map_or_else(String::new, |g| {
                    format!(" on {} ({})", g.name, from.trim_start_matches(", "))
                });
                format!(
                    "{} {} {}{model}{gpu}: no plan (see findings)",
                    lo.launch.engine.name(),
                    lo.args.version,
                    role.name()
                )
            }
        };
        // `--model-config` on a launch naming another model: said where the verdict is read.
        let note = lo.model.as_ref().and_then(|m| m.model_source.as_ref());
        let note = note
            .filter(|s| s.kind == "model-config")
            .and_then(|s| s.note.as_ref())
            .map_or(String::new(), |n| format!(" ({n})"));
        out.push_str(&clean(&format!("{file}:{line}: {what}: {verdict}{note}\n")));
    })
}

/// `1 error, 2 warnings`, plus `, 1 suppressed` when suppressions hid findings.
pub fn summary(findings: &[Rendered], suppressed: usize) -> String {
    let count = |l: Level| findings.iter().filter(|f| f.level == l).count();
    let (e, w) = (count(Level::Deny), count(Level::Warn));
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let hidden = if suppressed > 0 {
        format!(", {suppressed} suppressed")
    } else {
        String::new()
    };
    format!("{}, {}{hidden}\n", plural(e, "error"), plural(w, "warning"))
}

/// `kvlint capacity` in human form: the plan, its terms and assumptions, then any findings.
pub fn capacity(outcome: &Outcome, findings: &[Rendered], color: bool) -> String {
    let gib = |b: f64| format!("{:.2} GiB", b / crate::units::GIB);
    let mut out = String::new();
    for lo in &outcome.launches {
        let Some(p) = &lo.plan else { continue };
        let from = super::gpu_source_text(outcome, lo)
            .map_or_else(String::new, |s| format!(", GPU from {s}"));
        out.push_str(&format!(
            "{} {} · {} · {} on {}×{} (TP {}, PP {}, DP {}{from})\n",
            p.engine.name(),
            p.engine_version,
            p.role.name(),
            p.model,
            p.gpu_count,
            p.gpu,
            p.tp,
            p.pp,
            p.dp
        ));
        if let Some(m) = lo.model.as_ref().and_then(|m| m.model_source.as_ref()) {
            let rev = m
                .revision
                .as_ref()
                .map_or(String::new(), |r| format!(" @ {r}"));
            let note = m.note.as_ref().map_or(String::new(), |n| format!(" ({n})"));
            out.push_str(&format!(
                "model from {}: {}{rev}{note}\n",
                m.kind, m.location
            ));
        }
        let rows = [
            (
                "KV pool",
                format!(
                    "{} tokens (band {} – {})",
                    thousands(p.pool_tokens),
                    thousands(p.pool_tokens_low),
                    thousands(p.pool_tokens_high)
                ),
            ),
            (
                "one request fits",
                format!(
                    "{} tokens (band {} – {})",
                    thousands(p.usable_tokens),
                    thousands(p.usable_tokens_low),
                    thousands(p.usable_tokens_high)
                ),
            ),
            (
                "context",
                format!(
                    "{} tokens (model allows {})",
                    thousands(p.context_length),
                    thousands(p.model_max_context)
                ),
            ),
            (
                "KV bytes per token",
                format!(
                    "{} per GPU ({}, page {})",
                    thousands(p.kv_bytes_per_token),
                    p.kv_cache_dtype,
                    p.page_size
                ),
            ),
            ("KV budget per GPU", gib(p.budget_bytes as f64)),
            ("weights per GPU", gib(p.weights_bytes as f64)),
            ("memory fraction", crate::rules::eval::fraction_said(p)),
        ];
        for (k, v) in rows {
            out.push_str(&format!("  {k:<20} {v}\n"));
        }
        out.push_str("  assumptions:\n");
        for a in &p.assumptions {
            let q = |v: f64| quantity(&a.term, v);
            let band = match (a.low, a.high) {
                (Some(l), Some(h)) => format!(" [{} – {}]", q(l), q(h)),
                _ => String::new(),
            };
            out.push_str(&format!(
                "    - {} = {}{band}: {}\n",
                a.term,
                q(a.value),
                a.source
            ));
        }
    }
    if !findings.is_empty() {
        out.push('\n');
        out.push_str(&render_findings(outcome, findings, color, 1));
    }
    for i in 0..outcome.launches.len() {
        out.push_str(&format!(
            "verdict: {}\n",
            super::verdict(outcome, findings, i)
        ));
    }
    out.push_str(&summary(findings, outcome.suppressed.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_scan_finds_exactly_the_unsafe_characters() {
        for c in (0..0x3000).filter_map(char::from_u32) {
            let text = format!("a×{c}–b");
            assert_eq!(has_unsafe(&text), unsafe_char(c), "U+{:04X}", c as u32);
        }
    }
}

//! GitHub Actions workflow commands (`--format github`): one `::error` or `::warning` annotation
//! per finding, worst first, since GitHub shows only ten annotations of a kind per step.

use super::Rendered;
use crate::pipeline::Outcome;
use crate::rules::Level;

/// Escapes a command's message (GitHub's `escapeData`), control characters other than line
/// breaks made visible first as in the terminal report: the runner's log would act on an ESC.
fn data(s: &str) -> String {
    super::human::clean(
        &s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A"),
    )
}

/// Escapes a command property (GitHub's `escapeProperty`).
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One annotation line.
fn annotation(r: &Rendered) -> String {
    let command = match r.level {
        Level::Deny => "error",
        Level::Warn | Level::Allow => "warning",
    };
    let mut props = Vec::new();
    if let (Some(file), Some(line), Some(col)) = (&r.file, r.line, r.column) {
        props.push(format!("file={}", property(file.trim_start_matches("./"))));
        props.push(format!("line={line}"));
        props.push(format!("col={col}"));
        if let (Some(el), Some(ec)) = (r.end_line, r.end_column) {
            props.push(format!("endLine={el}"));
            props.push(format!("endColumn={ec}"));
        }
    }
    props.push(format!(
        "title={}",
        property(&format!("{} {}", r.rule, r.name))
    ));
    format!(
        "::{command} {}::{}\n",
        props.join(","),
        data(&format!("{}\nhelp: {}", r.message, r.help))
    )
}

/// Annotations of findings that no input file's launches produced (`verify`, `canary`).
pub fn render_findings(findings: &[Rendered]) -> String {
    findings.iter().map(annotation).collect()
}

/// The annotations of a run, in the order given (worst first) and made on up to `jobs` threads
/// (the text does not depend on `jobs`), then a warning when no launch was found and a notice with
/// the run's summary line.
pub fn render(outcome: &Outcome, findings: &[Rendered], jobs: usize) -> String {
    let mut out = super::concat(findings, jobs, |out, r| out.push_str(&annotation(r)));
    if let Some(none) = super::nothing_found(outcome) {
        out.push_str(&format!("::warning title=kvlint::{}\n", data(&none)));
    }
    out.push_str(&format!(
        "::notice title=kvlint::{}\n",
        data(&super::checked_line(outcome))
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_workflow_command_rules() {
        assert_eq!(data("50% of\r\nit: a, b"), "50%25 of%0D%0Ait: a, b");
        assert_eq!(property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        assert_eq!(data("\u{1b}[2J\u{7}"), "?[2J?");
    }
}

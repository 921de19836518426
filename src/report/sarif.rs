//! SARIF 2.1.0 (`--format sarif`), for GitHub code scanning and other SARIF viewers: one run,
//! every rule with its docs, one result per finding (suppressed ones carry `suppressions`).

use super::{pretty, Rendered};
use crate::launch::Engine;
use crate::launch::ObjectRef;
use crate::outcome::LaunchOutcome;
use crate::pipeline::Outcome;
use crate::rules::{self, Level, Rule};
use serde::Serialize;
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

#[derive(Serialize)]
pub struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    invocations: Vec<Invocation>,
    column_kind: &'static str,
    results: Vec<SarifResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<RunProperties>,
}

/// `filesChecked`, `summary` and one entry per launch.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunProperties {
    files_checked: usize,
    summary: String,
    launches: Vec<LaunchEntry>,
}

/// A launch: where it is, its engine, its GPU and where that came from, its verdict.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LaunchEntry {
    uri: Option<String>,
    line: usize,
    engine: Engine,
    gpu: Option<String>,
    gpu_source: Option<GpuSourceAt>,
    verdict: &'static str,
}

/// The GPU of a launch whose GPU is known, and where it came from.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LaunchGpu {
    gpu: String,
    gpu_source: GpuSourceAt,
}

#[derive(Serialize)]
struct GpuSourceAt {
    kind: &'static str,
    location: Option<At>,
}

#[derive(Serialize)]
struct At {
    uri: Option<String>,
    line: usize,
}

/// The run itself: nothing found is said as a tool notification, which viewers show.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_execution_notifications: Vec<Notification>,
}

#[derive(Serialize)]
struct Notification {
    level: &'static str,
    message: Text,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    information_uri: &'static str,
    rules: Vec<ReportingDescriptor>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportingDescriptor {
    id: String,
    name: String,
    short_description: Text,
    full_description: Text,
    help: Markdown,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Markdown {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    category: String,
    tags: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Text,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<Location>,
    partial_fingerprints: Fingerprints,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suppressions: Vec<Suppression>,
    /// The GPU of the finding's launch and where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<LaunchGpu>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    physical_location: Option<PhysicalLocation>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    logical_locations: Vec<LogicalLocation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation {
    name: String,
    fully_qualified_name: String,
    kind: &'static str,
}

#[derive(Serialize)]
struct Fingerprints {
    #[serde(rename = "kvlint/v1")]
    kvlint: String,
}

#[derive(Serialize)]
struct Suppression {
    kind: &'static str,
    justification: String,
}

/// SARIF level of a kvlint level.
fn level(l: Level) -> &'static str {
    match l {
        Level::Deny => "error",
        Level::Warn => "warning",
        Level::Allow => "none",
    }
}

/// The first sentence of a rule's `what`, on one line.
fn first_sentence(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let first = flat.split(". ").next().unwrap_or("").trim_end_matches('.');
    format!("{first}.")
}

fn descriptor(r: &Rule) -> ReportingDescriptor {
    let docs = rules::explain(r);
    ReportingDescriptor {
        id: r.id.clone(),
        name: r.name.clone(),
        short_description: Text {
            text: first_sentence(&r.docs.what),
        },
        full_description: Text {
            text: r.docs.what.split_whitespace().collect::<Vec<_>>().join(" "),
        },
        help: Markdown {
            text: docs.clone(),
            markdown: docs,
        },
        default_configuration: Configuration {
            level: level(r.level),
        },
        properties: RuleProperties {
            category: r.category.clone(),
            tags: vec![r.category.clone()],
        },
    }
}

/// A file name as a URI reference relative to the repository root: forward slashes, no `./`,
/// reserved characters escaped. Names that are not files (`<stdin>`) get none.
fn uri(name: &str) -> Option<String> {
    if name.starts_with('<') {
        return None;
    }
    let path = Path::new(name);
    let rel = match std::env::current_dir() {
        Ok(cwd) if path.is_absolute() => path.strip_prefix(&cwd).unwrap_or(path),
        _ => path,
    };
    let text = rel.to_string_lossy().replace('\\', "/");
    let text = text.trim_start_matches("./");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            // RFC 3986 §2.1: what a URI may not hold, control characters and bidirectional
            // overrides too, percent-encoded byte by byte.
            '%' | ' ' | '#' | '?' | '[' | ']' | '"' | '<' | '>' | '^' | '`' | '{' | '|' | '}' => {
                out.push_str(&format!("%{:02X}", c as u32))
            }
            c if c.is_control() || super::human::unsafe_char(c) => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            _ => out.push(c),
        }
    }
    Some(if rel.is_absolute() {
        format!("file://{out}")
    } else {
        out
    })
}

fn logical(o: &ObjectRef) -> LogicalLocation {
    let mut fq = format!(
        "{}/{}/{}",
        o.kind,
        o.namespace.as_deref().unwrap_or("default"),
        o.name
    );
    if let Some(c) = &o.container {
        fq.push('/');
        fq.push_str(c);
    }
    LogicalLocation {
        name: o.name.clone(),
        fully_qualified_name: fq,
        kind: "resource",
    }
}

/// Each file name's URI, worked out once per log (`uri` asks for the working directory).
type Uris<'a> = HashMap<&'a str, Option<String>>;

fn uris<'a>(outcome: &'a Outcome, rendered: &[&'a [Rendered]]) -> Uris<'a> {
    let files = outcome.sources.iter().map(|(_, f)| f.name.as_str());
    let named = rendered
        .iter()
        .flat_map(|r| r.iter())
        .filter_map(|r| r.file.as_deref());
    let mut out = Uris::new();
    for name in files.chain(named) {
        out.entry(name).or_insert_with(|| uri(name));
    }
    out
}

fn result(r: &Rendered, outcome: &Outcome, uris: &Uris) -> SarifResult {
    let physical = match (&r.file, r.line, r.column, r.end_line, r.end_column) {
        (Some(f), Some(l), Some(c), Some(el), Some(ec)) => {
            uris[f.as_str()].clone().map(|uri| PhysicalLocation {
                artifact_location: ArtifactLocation { uri },
                region: Region {
                    start_line: l,
                    start_column: c,
                    end_line: el,
                    end_column: if el == l { ec.max(c) } else { ec },
                },
            })
        }
        _ => None,
    };
    let logical: Vec<LogicalLocation> = r.object.iter().map(logical).collect();
    let locations = if physical.is_none() && logical.is_empty() {
        Vec::new()
    } else {
        vec![Location {
            physical_location: physical,
            logical_locations: logical,
        }]
    };
    SarifResult {
        rule_id: r.rule.clone(),
        rule_index: rules::all()
            .iter()
            .position(|x| x.id == r.rule)
            .unwrap_or(0),
        level: level(r.level),
        message: Text {
            text: format!("{}\nhelp: {}", r.message, r.help),
        },
        locations,
        partial_fingerprints: Fingerprints {
            kvlint: r.fingerprint.clone(),
        },
        suppressions: r
            .suppression
            .iter()
            .map(|why| Suppression {
                kind: "inSource",
                justification: why.clone(),
            })
            .collect(),
        properties: r
            .finding
            .launch
            .and_then(|i| outcome.launches.get(i))
            .and_then(|lo| launch_gpu(lo, outcome, uris)),
    }
}

/// `{"gpu", "gpuSource": {"kind", "location"}}` of a launch whose GPU is known.
fn launch_gpu(lo: &LaunchOutcome, outcome: &Outcome, uris: &Uris) -> Option<LaunchGpu> {
    let (gpu, src) = (lo.gpu.as_ref()?, lo.gpu_source?);
    let at = src.loc().map(|l| At {
        uri: uris[outcome.sources.get(l.file).name.as_str()].clone(),
        line: outcome.sources.line(l),
    });
    Some(LaunchGpu {
        gpu: gpu.name.clone(),
        gpu_source: GpuSourceAt {
            kind: src.kind(),
            location: at,
        },
    })
}

/// The SARIF log of a run: reported findings, then the suppressed ones. The run's properties
/// list the launches with their GPU, where that GPU came from, and their verdict.
pub fn log(outcome: &Outcome, findings: &[Rendered], suppressed: &[Rendered]) -> Log {
    let uris = uris(outcome, &[findings, suppressed]);
    Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: tool(),
            invocations: invocations(outcome),
            column_kind: COLUMN_KIND,
            results: findings
                .iter()
                .chain(suppressed)
                .map(|r| result(r, outcome, &uris))
                .collect(),
            properties: Some(run_properties(outcome, findings, &uris)),
        }],
    }
}

const COLUMN_KIND: &str = "unicodeCodePoints";

fn tool() -> Tool {
    Tool {
        driver: Driver {
            name: "kvlint",
            version: env!("CARGO_PKG_VERSION"),
            semantic_version: env!("CARGO_PKG_VERSION"),
            information_uri: env!("CARGO_PKG_HOMEPAGE"),
            rules: rules::all().iter().map(descriptor).collect(),
        },
    }
}

/// The run itself: nothing found is said as a tool notification, which viewers show.
fn invocations(outcome: &Outcome) -> Vec<Invocation> {
    let notifications = super::nothing_found(outcome)
        .map(|text| Notification {
            level: "warning",
            message: Text { text },
        })
        .into_iter()
        .collect();
    vec![Invocation {
        execution_successful: true,
        tool_execution_notifications: notifications,
    }]
}

/// `filesChecked`, `summary` and one entry per launch.
fn run_properties(outcome: &Outcome, findings: &[Rendered], uris: &Uris) -> RunProperties {
    let verdicts = super::verdict_words(outcome.launches.len(), findings);
    let launches = outcome
        .launches
        .iter()
        .zip(verdicts)
        .map(|(lo, verdict)| launch_entry(lo, verdict, outcome, uris))
        .collect();
    RunProperties {
        files_checked: outcome.files_checked,
        summary: super::checked_line(outcome),
        launches,
    }
}

fn launch_entry(
    lo: &LaunchOutcome,
    verdict: &'static str,
    outcome: &Outcome,
    uris: &Uris,
) -> LaunchEntry {
    let gpu = launch_gpu(lo, outcome, uris);
    LaunchEntry {
        uri: uris[outcome.sources.get(lo.file).name.as_str()].clone(),
        line: outcome.sources.line(lo.launch.command),
        engine: lo.launch.engine,
        gpu: gpu.as_ref().map(|g| g.gpu.clone()),
        gpu_source: gpu.map(|g| g.gpu_source),
        verdict,
    }
}

/// [`log`] written in pieces, its fields in the order of the structs: the results and the
/// launches are serialized in chunks on up to `jobs` threads, so the text is the same for any
/// `jobs` (a test compares it with [`log`] serialized whole).
fn write_log<W: Write>(
    w: &mut W,
    outcome: &Outcome,
    findings: &[Rendered],
    suppressed: &[Rendered],
    jobs: usize,
) -> io::Result<()> {
    let uris = uris(outcome, &[findings, suppressed]);
    let results: Vec<&Rendered> = findings.iter().chain(suppressed).collect();
    let verdicts = super::verdict_words(outcome.launches.len(), findings);
    let launches: Vec<(&LaunchOutcome, &'static str)> =
        outcome.launches.iter().zip(verdicts).collect();
    let mut doc = pretty::Object::new(w, 0)?;
    doc.field("$schema", SCHEMA)?;
    doc.field("version", "2.1.0")?;
    doc.field_with("runs", |w, d| {
        pretty::single(w, d, |w, d| {
            let mut run = pretty::Object::new(w, d)?;
            run.field("tool", &tool())?;
            run.field("invocations", &invocations(outcome))?;
            run.field("columnKind", COLUMN_KIND)?;
            run.field_with("results", |w, d| {
                pretty::array(w, d, &results, jobs, |r| result(r, outcome, &uris))
            })?;
            run.field_with("properties", |w, d| {
                let mut p = pretty::Object::new(w, d)?;
                p.field("filesChecked", &outcome.files_checked)?;
                p.field("summary", &super::checked_line(outcome))?;
                p.field_with("launches", |w, d| {
                    pretty::array(w, d, &launches, jobs, |&(lo, v)| {
                        launch_entry(lo, v, outcome, &uris)
                    })
                })?;
                p.end()
            })?;
            run.end()
        })
    })?;
    doc.end()
}

/// SARIF of findings that no input file's launches produced (`verify`, `canary`): the results
/// alone, without the launch list and the nothing-found notice of `check`.
pub fn render_findings(findings: &[Rendered]) -> String {
    let mut log = log(&Outcome::default(), findings, &[]);
    for run in &mut log.runs {
        run.properties = None;
        for inv in &mut run.invocations {
            inv.tool_execution_notifications.clear();
        }
    }
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

/// The SARIF document of a run as text, written on up to `jobs` threads.
pub fn render(
    outcome: &Outcome,
    findings: &[Rendered],
    suppressed: &[Rendered],
    jobs: usize,
) -> String {
    let mut out = Vec::new();
    // Writing to a Vec fails only if a value does not serialize; every value here is JSON.
    let _ = write_log(&mut out, outcome, findings, suppressed, jobs);
    let mut text = String::from_utf8(out).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_with_forward_slashes_and_escapes() {
        assert_eq!(uri("./deploy/run.sh").as_deref(), Some("deploy/run.sh"));
        assert_eq!(
            uri("deploy/my file#1.sh").as_deref(),
            Some("deploy/my%20file%231.sh")
        );
        assert_eq!(uri("<stdin>"), None);
    }
}

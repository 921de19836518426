//! `kvlint check`: reading the inputs, pairing `--format` with `--output`, and writing each report.

use super::{options, CheckArgs, FailOn, Format, Run, Target, UsageError};
use crate::config::{self, Config};
use crate::gpu;
use crate::input::Input;
use crate::pipeline::{Options, Outcome};
use crate::report::{self, github, human, json, sarif, summary, Rendered};
use crate::rules::select::Selection;
use clap::ArgMatches;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Pairs outputs with formats: an `--output` writes the report of the nearest `--format` before
/// it; one `--format` and one `--output` pair in any order; at most one report goes to stdout.
pub(super) fn targets(m: &ArgMatches) -> Result<Vec<Target>, UsageError> {
    let indexed =
        |id: &str| -> Vec<usize> { m.indices_of(id).map(Iterator::collect).unwrap_or_default() };
    let formats: Vec<Format> = m
        .get_many::<Format>("format")
        .map(|v| v.copied().collect())
        .unwrap_or_default();
    let outputs: Vec<PathBuf> = m
        .get_many::<PathBuf>("output")
        .map(|v| v.cloned().collect())
        .unwrap_or_default();
    pair(
        &indexed("format")
            .into_iter()
            .zip(formats)
            .collect::<Vec<_>>(),
        &indexed("output")
            .into_iter()
            .zip(outputs)
            .collect::<Vec<_>>(),
    )
}

pub(super) fn pair(
    formats: &[(usize, Format)],
    outputs: &[(usize, PathBuf)],
) -> Result<Vec<Target>, UsageError> {
    let mut out: Vec<Target> = formats
        .iter()
        .map(|(_, f)| Target {
            format: *f,
            output: None,
        })
        .collect();
    if out.is_empty() {
        out.push(Target {
            format: Format::Human,
            output: None,
        });
    }
    if out.len() == 1 && outputs.len() <= 1 {
        out[0].output = outputs.first().map(|(_, p)| p.clone());
        return Ok(out);
    }
    for (at, path) in outputs {
        let slot = formats
            .iter()
            .rposition(|(i, _)| i < at)
            .filter(|&k| out[k].output.is_none());
        let k = slot.ok_or_else(|| {
            UsageError(format!(
                "--output {} must follow the --format it writes, one --output per --format",
                path.display()
            ))
        })?;
        out[k].output = Some(path.clone());
    }
    if out.iter().filter(|t| t.output.is_none()).count() > 1 {
        return Err(UsageError(
            "only one --format can write to stdout; give the others --output FILE".into(),
        ));
    }
    Ok(out)
}

/// The configuration of a check: `--config FILE`, else the nearest kvlint.toml, else defaults.
fn load_config(a: &CheckArgs) -> Result<Config, UsageError> {
    let path = match &a.config {
        Some(p) => Some(p.clone()),
        None => {
            let first = a
                .paths
                .iter()
                .find(|p| *p != "-")
                .map_or_else(|| PathBuf::from("."), PathBuf::from);
            config::discover(&first)
        }
    };
    path.map_or_else(
        || Ok(Config::default()),
        |p| config::load(&p).map_err(|e| UsageError(e.to_string())),
    )
}

pub(super) fn check(mut a: CheckArgs, color: bool) -> Run {
    let cfg = std::sync::Arc::new(load_config(&a)?);
    gpu::catalog::add_local(cfg.gpus.clone());
    crate::platform::set_site(cfg.platforms.clone());
    let selection = Selection {
        select: a.select.take(),
        extend_select: std::mem::take(&mut a.extend_select),
        ignore: std::mem::take(&mut a.ignore),
    };
    selection
        .validate()
        .map_err(|e| UsageError(e.to_string()))?;
    let h = &mut a.hardware;
    h.engine_version = h
        .engine_version
        .take()
        .or_else(|| cfg.engine_version.clone());
    let mut opts = Options {
        rules: cfg.rule_settings(&selection),
        ..options(h, cfg.gpu.as_ref())?
    };
    opts.models.table = cfg.models.clone();
    opts.jobs = a.jobs.filter(|&n| n > 0).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    // Detached: it only fills process-wide tables, and the process may exit before it ends.
    if opts.jobs > 1 {
        std::thread::spawn(crate::pipeline::warm_up);
    }
    let mut outcome = Outcome::default();
    for input in &a.paths {
        for Input { name, text, base } in read_input(input, &a, &cfg)? {
            let file = outcome.sources.add(name, text);
            outcome.check_file(file, &opts, base.as_deref());
        }
    }
    check_beside(&mut outcome, &a, &cfg, &opts)?;
    outcome.finish(opts.jobs);
    if !a.no_ignore {
        outcome.apply_suppressions(&opts.rules);
    }
    let findings = report::render_with(&outcome, &opts.rules, opts.jobs);
    let targets = if a.targets.is_empty() {
        pair(&[], &[])?
    } else {
        a.targets.clone()
    };
    for t in &targets {
        let text = match t.format {
            Format::Json => {
                // Written as it is serialized: the text of a large render is never held whole.
                write_with(t.output.as_deref(), |w| {
                    json::write_check(w, &outcome, &findings, opts.jobs)
                })?;
                continue;
            }
            Format::Human if a.statistics => report::statistics(&findings),
            Format::Human if a.quiet => {
                human::render_findings(&outcome, &findings, t.output.is_none() && color, opts.jobs)
            }
            Format::Human => {
                human::render(&outcome, &findings, t.output.is_none() && color, opts.jobs)
            }
            Format::Sarif => {
                let hidden = report::render_suppressed(&outcome, &opts.rules);
                sarif::render(&outcome, &findings, &hidden, opts.jobs)
            }
            Format::Github => github::render(&outcome, &findings, opts.jobs),
        };
        write_report(t.output.as_deref(), &text)?;
    }
    write_summary(&a, &targets, &outcome, &findings)?;
    let fail_on = a.fail_on.or(cfg.fail_on).unwrap_or(FailOn::Deny);
    let code = report::exit_code(&findings, fail_on.level());
    // The process exits next: freeing a large run's launches, findings and texts one allocation
    // at a time costs more than writing its report did; the system takes the memory back at once.
    std::mem::forget((outcome, findings));
    Ok(code)
}

/// `--jobs N`: at least 1. Empty (`KVLINT_JOBS=`, as a CI input left blank) gives 0: the default.
pub(super) fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.trim() {
        "" => Ok(0),
        n => match n.parse::<usize>() {
            Ok(0) => Err("must be at least 1".into()),
            Ok(n) => Ok(n),
            Err(e) => Err(e.to_string()),
        },
    }
}

/// `--summary FILE` (overwritten), else `$GITHUB_STEP_SUMMARY` (appended) with `--format github`.
fn write_summary(
    a: &CheckArgs,
    targets: &[Target],
    outcome: &Outcome,
    findings: &[Rendered],
) -> Result<(), UsageError> {
    let github = targets.iter().any(|t| t.format == Format::Github);
    let (path, append) = match &a.summary {
        Some(p) => (p.clone(), false),
        None => match std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| github && !v.is_empty()) {
            Some(p) => (PathBuf::from(p), true),
            None => return Ok(()),
        },
    };
    let text = summary::render(outcome, findings);
    let written = if append {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
    } else {
        std::fs::write(&path, text)
    };
    written.map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))
}

fn write_report(path: Option<&Path>, text: &str) -> Result<(), UsageError> {
    write_with(path, |w| w.write_all(text.as_bytes()))
}

/// Runs `write` on the file at `path` (buffered), else on stdout, and flushes.
fn write_with(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), UsageError> {
    match path {
        Some(p) => std::fs::File::create(p)
            .and_then(|f| {
                let mut w = std::io::BufWriter::new(f);
                write(&mut w)?;
                w.flush()
            })
            .map_err(|e| UsageError(format!("cannot write {}: {e}", p.display()))),
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            match write(&mut out).and_then(|()| out.flush()) {
                // The reader went away (`| head`): stop writing, as other tools do.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(UsageError(format!(
                    "cannot write the report to stdout: {e}"
                ))),
                Ok(()) => Ok(()),
            }
        }
    }
}

/// Files an input names: itself, every checkable file below a directory, or stdin.
/// A document whose launch a platform keeps in a file beside it (a Triton `config.pbtxt`, its
/// `1/model.json`) that the run was not given: that file is read and checked too, once.
fn check_beside(
    outcome: &mut Outcome,
    a: &CheckArgs,
    cfg: &std::sync::Arc<Config>,
    opts: &Options,
) -> Result<(), UsageError> {
    let mut beside: Vec<PathBuf> = outcome
        .findings
        .iter()
        .flat_map(crate::extract::by_platform::beside)
        .collect();
    beside.dedup();
    for path in beside {
        let name = path.to_string_lossy().into_owned();
        let known = |n: &str| std::path::Path::new(n) == path.as_path();
        if outcome.sources.iter().any(|(_, s)| known(&s.name)) {
            continue;
        }
        for Input { name, text, base } in read_input(&name, a, cfg)? {
            let file = outcome.sources.add(name, text);
            outcome.check_file(file, opts, base.as_deref());
        }
    }
    Ok(())
}

fn read_input(
    input: &str,
    a: &CheckArgs,
    cfg: &std::sync::Arc<Config>,
) -> Result<Vec<Input>, UsageError> {
    let limits = crate::input::Limits {
        max_size: a.max_input_size,
        vcs_ignores: !a.no_ignore_vcs,
        stdin_name: a.stdin_filename.clone(),
    };
    let cfg = cfg.clone();
    crate::input::read(input, &limits, move |p| cfg.excluded(p))
        .map_err(|e| UsageError(e.to_string()))
}

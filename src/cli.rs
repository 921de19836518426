//! Command line: clap arguments, subcommands and exit codes (DESIGN.md "CLI contract").

use crate::config::{self, Config};
use crate::extract;
use crate::gpu;
use crate::pipeline::{Options, Outcome};
use crate::probe;
use crate::report::{self, github, human, json, sarif, summary, Rendered};
use crate::rules;
use crate::version::Version;
use clap::{
    ArgAction, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum,
};
use std::ffi::OsString;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

/// Exit codes of the contract.
pub mod exit {
    pub const CLEAN: i32 = 0;
    pub const FINDINGS: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const INTERNAL: i32 = 3;
    pub const NO_HARDWARE: i32 = 4;
}

#[derive(Debug, Parser)]
#[command(
    name = "kvlint",
    version,
    about = "Refuse LLM serving deploys whose KV-cache pool is smaller than the context they advertise",
    long_about = "kvlint reads SGLang and vLLM launches (shell scripts, commands, engine config files), \
computes how many tokens each engine's KV-cache pool will hold on the GPUs it runs on, the way that \
engine version sizes it, and refuses deploys whose pool is smaller than the advertised context.\n\n\
Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage or input error, 3 internal error, \
4 a preflight that needs hardware could not run."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check launches in files, directories or stdin (`-`) and report findings.
    Check(CheckArgs),
    /// Compute the KV pool of one launch given after `--`.
    Capacity(CapacityArgs),
    /// List this node's GPUs as NVML reports them (exit 4 without an NVIDIA driver).
    Gpus {
        #[arg(long, value_enum, default_value_t = ListFormat::Human)]
        format: ListFormat,
    },
    /// Prove the plan on this node with a CUDA microprobe: allocate every rank's KV pool, write
    /// and verify every page, release it (exit 1 when a pool does not fit or verify, 4 without a GPU).
    Probe(CapacityArgs),
    /// Print a rule's documentation (by id or name, e.g. KV001 or pool-below-context).
    Explain {
        /// Rule id or name.
        rule: String,
    },
    /// List every rule.
    Rules {
        #[arg(long, value_enum, default_value_t = ListFormat::Human)]
        format: ListFormat,
    },
    /// Serve a Kubernetes validating admission webhook (HTTPS, POST /validate).
    Webhook(WebhookArgs),
    /// Diagnostic for tools/differential.py: JSON argv lines on stdin → parsed settings as JSON lines.
    #[command(hide = true)]
    ParseArgs {
        #[arg(long, value_name = "V")]
        engine_version: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct WebhookArgs {
    /// Address to listen on, e.g. 0.0.0.0:8443.
    #[arg(long, value_name = "ADDR")]
    pub listen: std::net::SocketAddr,
    /// PEM certificate chain; reloaded when the file changes.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: PathBuf,
    /// PEM private key; reloaded when the file changes.
    #[arg(long, value_name = "FILE")]
    pub tls_key: PathBuf,
    #[command(flatten)]
    pub hardware: Hardware,
    /// What to do when a launch's pool cannot be computed (unknown model or GPU, a value only
    /// known at run time: INP002, INP003, INP004): allow with a warning, or deny.
    #[arg(long, value_enum, default_value_t = UnknownPolicy::Warn)]
    pub unknown: UnknownPolicy,
    /// A kvlint.toml: rule levels and parameters, default GPU and engine version.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UnknownPolicy {
    Warn,
    Deny,
}

/// Inputs shared by `check` and `capacity`.
#[derive(Debug, Args)]
pub struct Hardware {
    /// GPU the launches run on: a catalog name or alias (`h200`, `H100-80GB`, `A100-40GB`,
    /// `NVIDIA-H100-80GB-HBM3`), optionally with a count (`h200x8`), or `auto` for this node's GPUs
    /// as NVML measures them. Overrides what inputs say. Without it, inputs' node labels are used,
    /// then this node's GPUs when NVML answers.
    #[arg(long, value_name = "SPEC", env = "KVLINT_GPU")]
    pub gpu: Option<String>,
    /// The model's config.json, or a model directory (config.json plus
    /// model.safetensors.index.json). Overrides the embedded catalog.
    #[arg(long, value_name = "PATH")]
    pub model_config: Option<PathBuf>,
    /// Engine version the launches run, per engine (`sglang=0.5.20,vllm=0.19.0`), or one bare
    /// release (`0.5.20`) applied to the engine that has it. Default: the image tag.
    #[arg(long, value_name = "V")]
    pub engine_version: Option<String>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or directories to check; `-` reads stdin.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<String>,
    #[command(flatten)]
    pub hardware: Hardware,
    /// Report format; repeat with `--output` to write several reports in one run
    /// (`--format sarif --output k.sarif --format github`). Default: human.
    #[arg(long, value_enum, action = ArgAction::Append)]
    pub format: Vec<Format>,
    /// Write the report of the `--format` before it to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE", action = ArgAction::Append)]
    pub output: Vec<PathBuf>,
    /// Lowest level that makes the run fail (exit 1). Default: kvlint.toml's `fail-on`, else deny.
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// The configuration file. Default: the nearest kvlint.toml from the first input upward.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Write a Markdown summary (launches, pool vs context, findings) to FILE. With
    /// `--format github` it defaults to `$GITHUB_STEP_SUMMARY` (appended) when that is set.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Ignore every `kvlint: ignore[...]` comment and `kvlint.io/ignore` annotation.
    #[arg(long)]
    pub no_ignore: bool,
    /// Where each report goes, from the order of `--format` and `--output` (set by [`run_from`]).
    #[arg(skip)]
    pub targets: Vec<Target>,
}

/// One report of a run: its format and file (`None`: stdout).
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub format: Format,
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub hardware: Hardware,
    #[arg(long, value_enum, default_value_t = ListFormat::Human)]
    pub format: ListFormat,
    /// The launch: `python3 -m sglang.launch_server ...` or `vllm serve MODEL ...`.
    #[arg(last = true, required = true, value_name = "LAUNCH")]
    pub launch: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub Actions annotations (workflow commands).
    Github,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Human,
    Json,
}

pub use crate::config::FailOn;

/// A whole-run failure: one line on stderr, exit code 2 (usage or input) or 4 (no hardware).
#[derive(Debug)]
pub struct UsageError(pub String);

/// A preflight that needs GPU hardware could not run (exit code 4).
#[derive(Debug)]
pub struct NoHardware(pub String);

#[derive(Debug)]
pub enum Failure {
    Usage(UsageError),
    Hardware(NoHardware),
}

impl From<UsageError> for Failure {
    fn from(e: UsageError) -> Self {
        Failure::Usage(e)
    }
}

impl From<NoHardware> for Failure {
    fn from(e: NoHardware) -> Self {
        Failure::Hardware(e)
    }
}

type Run = Result<i32, Failure>;

/// Parses the process arguments, runs them and returns the exit code. Unlike [`run`] it also
/// pairs each `--output` with the `--format` before it, which needs the arguments' order.
pub fn run_from(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> i32 {
    let matches = Cli::command()
        .try_get_matches_from(args)
        .unwrap_or_else(|e| e.exit());
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    if let (Command::Check(a), Some(("check", m))) = (&mut cli.command, matches.subcommand()) {
        match targets(m) {
            Ok(t) => a.targets = t,
            Err(UsageError(msg)) => {
                eprintln!("kvlint: {msg}");
                return exit::USAGE;
            }
        }
    }
    run(cli)
}

/// Pairs outputs with formats: an `--output` writes the report of the nearest `--format` before
/// it; one `--format` and one `--output` pair in any order; at most one report goes to stdout.
fn targets(m: &ArgMatches) -> Result<Vec<Target>, UsageError> {
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

fn pair(
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

/// Runs the parsed command line and returns the exit code.
pub fn run(cli: Cli) -> i32 {
    let result = match cli.command {
        Command::Check(a) => check(a),
        Command::Capacity(a) => capacity(a),
        Command::Gpus { format } => gpus(format),
        Command::Probe(a) => probe(a),
        Command::Explain { rule } => explain(&rule),
        Command::Rules { format } => list_rules(format),
        Command::Webhook(a) => webhook(a),
        Command::ParseArgs { engine_version } => parse_args(engine_version.as_deref()),
    };
    result.unwrap_or_else(|failure| match failure {
        Failure::Usage(UsageError(msg)) => {
            eprintln!("kvlint: {msg}");
            exit::USAGE
        }
        Failure::Hardware(NoHardware(msg)) => {
            eprintln!("kvlint: {msg}");
            exit::NO_HARDWARE
        }
    })
}

fn options(h: &Hardware) -> Result<Options, Failure> {
    let gpu = match h.gpu.as_deref() {
        Some(spec) if spec.eq_ignore_ascii_case("auto") => Some(node_gpus()?),
        Some(spec) => Some(gpu::parse_spec(spec).map_err(|e| UsageError(e.to_string()))?),
        None => None,
    };
    let engine_version = match &h.engine_version {
        Some(v) => Some(
            crate::version::EngineVersions::parse(v)
                .map_err(|e| UsageError(format!("--engine-version: {e}")))?,
        ),
        None => None,
    };
    if let Some(p) = &h.model_config {
        if !p.exists() {
            return Err(UsageError(format!(
                "--model-config {}: no such file or directory",
                p.display()
            ))
            .into());
        }
    }
    // Without --gpu, a node where NVML answers plans with its own GPUs (after the input's labels).
    let node_gpu = if gpu.is_none() {
        node_gpus().ok()
    } else {
        None
    };
    Ok(Options {
        gpu,
        node_gpu,
        model_config: h.model_config.clone(),
        engine_version,
        ..Options::default()
    })
}

/// The GPUs of this node that CUDA will show the engine (`CUDA_VISIBLE_DEVICES`), measured by NVML.
fn node_gpus() -> Result<gpu::GpuSelection, NoHardware> {
    let inventory = gpu::nvml::inventory().map_err(|e| NoHardware(e.to_string()))?;
    let visible = inventory.visible(std::env::var("CUDA_VISIBLE_DEVICES").ok().as_deref());
    let first = visible
        .first()
        .ok_or_else(|| NoHardware("NVML lists no visible GPU on this node".into()))?;
    let spec = first
        .measured_spec()
        .ok_or_else(|| NoHardware(format!("NVML gives no memory figures for {}", first.name)))?;
    Ok(gpu::GpuSelection {
        spec,
        count: u32::try_from(visible.len()).ok(),
    })
}

fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
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

fn check(mut a: CheckArgs) -> Run {
    let cfg = load_config(&a)?;
    let h = &mut a.hardware;
    h.gpu = h.gpu.take().or_else(|| cfg.gpu.clone());
    h.engine_version = h
        .engine_version
        .take()
        .or_else(|| cfg.engine_version.clone());
    let opts = Options {
        rules: cfg.rules.clone(),
        ..options(h)?
    };
    let mut outcome = Outcome::default();
    for input in &a.paths {
        for (name, text, base) in read_input(input, &cfg)? {
            let file = outcome.sources.add(name, text);
            outcome.check_file(file, &opts, base.as_deref());
        }
    }
    outcome.finish();
    if !a.no_ignore {
        outcome.apply_suppressions(&opts.rules);
    }
    let findings = report::render_with(&outcome, &opts.rules);
    let targets = if a.targets.is_empty() {
        pair(&[], &[])?
    } else {
        a.targets.clone()
    };
    for t in &targets {
        let text = match t.format {
            Format::Human => human::render(&outcome, &findings, t.output.is_none() && color()),
            Format::Json => format!("{:#}\n", json::check(&outcome, &findings)),
            Format::Sarif => {
                sarif::render(&findings, &report::render_suppressed(&outcome, &opts.rules))
            }
            Format::Github => github::render(&findings),
        };
        write_report(t.output.as_deref(), &text)?;
    }
    write_summary(&a, &targets, &outcome, &findings)?;
    let fail_on = a.fail_on.or(cfg.fail_on).unwrap_or(FailOn::Deny);
    Ok(report::exit_code(&findings, fail_on.level()))
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
    match path {
        Some(p) => std::fs::write(p, text)
            .map_err(|e| UsageError(format!("cannot write {}: {e}", p.display()))),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// Files an input names: itself, every checkable file below a directory, or stdin.
fn read_input(
    input: &str,
    cfg: &Config,
) -> Result<Vec<(String, String, Option<PathBuf>)>, UsageError> {
    if input == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| UsageError(format!("cannot read stdin: {e}")))?;
        return Ok(vec![("<stdin>".into(), text, std::env::current_dir().ok())]);
    }
    let path = Path::new(input);
    let files = if path.is_dir() {
        walk(path, cfg)?
    } else {
        vec![path.to_path_buf()]
    };
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f)
                .map_err(|e| UsageError(format!("cannot read {}: {e}", f.display())))?;
            let base = f.parent().map(Path::to_path_buf);
            Ok((f.display().to_string(), text, base))
        })
        .collect()
}

/// Checkable files below a directory, sorted, skipping hidden and build directories and what
/// kvlint.toml excludes.
fn walk(dir: &Path, cfg: &Config) -> Result<Vec<PathBuf>, UsageError> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", dir.display())))?;
    for entry in entries {
        let path = entry
            .map_err(|e| UsageError(format!("cannot read {}: {e}", dir.display())))?
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.')
            || name == "target"
            || name == "node_modules"
            || cfg.excluded(&path)
        {
            continue;
        }
        if path.is_dir() {
            out.extend(walk(&path, cfg)?);
        } else if checkable(name) {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

fn checkable(name: &str) -> bool {
    let ext = name.rsplit_once('.').map(|(_, e)| e);
    matches!(ext, Some("sh" | "bash" | "yaml" | "yml" | "json")) || name.starts_with("Dockerfile")
}

/// Plans the one launch given after `--`, or says in one line why it cannot be planned.
fn plan_launch(a: &CapacityArgs) -> Result<(Outcome, Vec<report::Rendered>), Failure> {
    let opts = options(&a.hardware)?;
    let mut outcome = Outcome::default();
    let file = outcome
        .sources
        .add("<command line>", extract::quote_argv(&a.launch));
    let found = extract::parse_command_line(file, &outcome.sources);
    let Some(launch) = found.launches.into_iter().next() else {
        return Err(UsageError(
            "the command after `--` is not an SGLang or vLLM launch (python3 -m sglang.launch_server ..., vllm serve MODEL ...)".into(),
        )
        .into());
    };
    outcome.check_launch(launch, file, &opts, std::env::current_dir().ok().as_deref());
    let findings = report::render_all(&outcome);
    for rule in ["INP002", "INP003", "INP004"] {
        if let Some(f) = findings.iter().find(|f| f.rule == rule) {
            let hint = if rule == "INP002" {
                " (pass --model-config)"
            } else {
                ""
            };
            return Err(UsageError(format!("{}{hint}", f.message)).into());
        }
    }
    Ok((outcome, findings))
}

fn capacity(a: CapacityArgs) -> Run {
    let (outcome, findings) = plan_launch(&a)?;
    match a.format {
        ListFormat::Json => println!("{:#}", json::capacity(&outcome)),
        ListFormat::Human => print!("{}", human::capacity(&outcome, &findings, color())),
    }
    Ok(exit::CLEAN)
}

fn gpus(format: ListFormat) -> Run {
    let inventory = gpu::nvml::inventory().map_err(|e| NoHardware(e.to_string()))?;
    match format {
        ListFormat::Json => println!("{}", inventory.to_json()),
        ListFormat::Human => print!("{}", inventory.render_table()),
    }
    Ok(exit::CLEAN)
}

/// Proves the plan on this node: every GPU rank of the launch that this node holds allocates,
/// writes and verifies its pool.
fn probe(mut a: CapacityArgs) -> Run {
    if a.hardware.gpu.is_none() {
        a.hardware.gpu = Some("auto".into());
    }
    let node = node_gpus()?;
    let (outcome, _) = plan_launch(&a)?;
    let plan = outcome
        .launches
        .first()
        .and_then(|l| l.plan.as_ref())
        .ok_or_else(|| UsageError("no plan for this launch".into()))?;
    let ranks_needed = plan.tp * plan.pp * plan.dp;
    let here = node.count.unwrap_or(1).min(ranks_needed);
    if here < ranks_needed {
        eprintln!("kvlint: this node shows {here} of the {ranks_needed} GPUs the launch uses; probing those {here}");
    }
    let per_rank_tokens = plan.pool_tokens;
    let ranks = (0..here)
        .map(|i| probe::RankPlan {
            gpu_index: i,
            weights_bytes: plan.weights_bytes,
            pool_bytes: per_rank_tokens * plan.kv_bytes_per_token,
            page_bytes: u64::from(plan.page_size) * plan.kv_bytes_per_token,
            pool_tokens: per_rank_tokens,
            context_tokens: plan.context_length,
        })
        .collect();
    let request = probe::ProbeRequest {
        ranks,
        corrupt_page: None,
    };
    let report =
        probe::run(&request, std::io::stderr().is_terminal()).map_err(|e| match e.exit_code() {
            exit::NO_HARDWARE => Failure::Hardware(NoHardware(e.to_string())),
            _ => Failure::Usage(UsageError(e.to_string())),
        })?;
    match a.format {
        ListFormat::Json => println!("{:#}", serde_json::to_value(&report).unwrap_or_default()),
        ListFormat::Human => print!("{}", report.render_text()),
    }
    Ok(report.exit_code())
}

fn webhook(mut a: WebhookArgs) -> Run {
    use crate::webhook::{Policy, Settings, Unknown, Webhook};
    let cfg = match &a.config {
        Some(p) => config::load(p).map_err(|e| UsageError(e.to_string()))?,
        None => Config::default(),
    };
    a.hardware.gpu = a.hardware.gpu.take().or_else(|| cfg.gpu.clone());
    a.hardware.engine_version = a
        .hardware
        .engine_version
        .take()
        .or_else(|| cfg.engine_version.clone());
    let mut settings = Settings::new(a.listen, a.tls_cert, a.tls_key);
    settings.policy = Policy {
        options: Options {
            rules: cfg.rules.clone(),
            ..options(&a.hardware)?
        },
        unknown: match a.unknown {
            UnknownPolicy::Warn => Unknown::Warn,
            UnknownPolicy::Deny => Unknown::Deny,
        },
    };
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| UsageError(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async {
        let hook = Webhook::bind(settings)
            .await
            .map_err(|e| UsageError(e.to_string()))?;
        if let Some(addr) = hook.local_addr() {
            eprintln!("kvlint webhook: listening on https://{addr}");
        }
        hook.serve(terminated())
            .await
            .map_err(|e| UsageError(e.to_string()))
    })?;
    Ok(exit::CLEAN)
}

/// SIGTERM (what the kubelet sends) or Ctrl-C.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

fn parse_args(version: Option<&str>) -> Run {
    let version = version.map(|v| {
        Version::parse(v)
            .ok_or_else(|| UsageError(format!("--engine-version {v:?} is not a version")))
    });
    let version = version.transpose()?;
    let base = std::env::current_dir().unwrap_or_default();
    for line in std::io::stdin().lines().map_while(Result::ok) {
        println!(
            "{}",
            crate::engine::dump::line(&line, version.as_ref(), &base)
        );
    }
    Ok(exit::CLEAN)
}

fn explain(key: &str) -> Run {
    let rule = rules::find(key)
        .ok_or_else(|| UsageError(format!("no rule {key:?}; `kvlint rules` lists them")))?;
    print!("{}", rules::explain(rule));
    Ok(exit::CLEAN)
}

fn list_rules(format: ListFormat) -> Run {
    match format {
        ListFormat::Json => println!(
            "{:#}",
            serde_json::to_value(rules::all()).unwrap_or_default()
        ),
        ListFormat::Human => {
            for r in rules::all() {
                println!(
                    "{:<7} {:<30} {:<5} {}",
                    r.id,
                    r.name,
                    r.level.name(),
                    r.docs
                        .what
                        .lines()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("")
                        .trim()
                );
            }
        }
    }
    Ok(exit::CLEAN)
}

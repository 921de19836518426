//! Command line: clap arguments, subcommands and exit codes (DESIGN.md "CLI contract").

use crate::extract;
use crate::gpu;
use crate::pipeline::{Options, Outcome};
use crate::report::{self, human, json};
use crate::rules::{self, Level};
use crate::version::Version;
use clap::{Args, Parser, Subcommand, ValueEnum};
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
    /// `NVIDIA-H100-80GB-HBM3`), optionally with a count (`h200x8`). Overrides what inputs say.
    #[arg(long, value_name = "SPEC", env = "KVLINT_GPU")]
    pub gpu: Option<String>,
    /// The model's config.json, or a model directory (config.json plus
    /// model.safetensors.index.json). Overrides the embedded catalog.
    #[arg(long, value_name = "PATH")]
    pub model_config: Option<PathBuf>,
    /// Engine version the launches run (e.g. 0.5.20 for SGLang, 0.11.0 for vLLM).
    /// Default: the latest version kvlint models.
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
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the report to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Lowest level that makes the run fail (exit 1).
    #[arg(long, value_enum, default_value_t = FailOn::Deny)]
    pub fail_on: FailOn,
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Warn,
    Deny,
}

/// A whole-run failure: one line on stderr and exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

type Run = Result<i32, UsageError>;

/// Runs the parsed command line and returns the exit code.
pub fn run(cli: Cli) -> i32 {
    let result = match cli.command {
        Command::Check(a) => check(a),
        Command::Capacity(a) => capacity(a),
        Command::Explain { rule } => explain(&rule),
        Command::Rules { format } => list_rules(format),
        Command::Webhook(a) => webhook(a),
    };
    result.unwrap_or_else(|UsageError(msg)| {
        eprintln!("kvlint: {msg}");
        exit::USAGE
    })
}

fn options(h: &Hardware) -> Result<Options, UsageError> {
    let gpu = h
        .gpu
        .as_deref()
        .map(gpu::parse_spec)
        .transpose()
        .map_err(|e| UsageError(e.to_string()))?;
    let engine_version = match &h.engine_version {
        Some(v) => Some(Version::parse(v).ok_or_else(|| {
            UsageError(format!(
                "--engine-version {v:?} is not a version like 0.5.20"
            ))
        })?),
        None => None,
    };
    if let Some(p) = &h.model_config {
        if !p.exists() {
            return Err(UsageError(format!(
                "--model-config {}: no such file or directory",
                p.display()
            )));
        }
    }
    Ok(Options {
        gpu,
        model_config: h.model_config.clone(),
        engine_version,
    })
}

fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn check(a: CheckArgs) -> Run {
    let opts = options(&a.hardware)?;
    let mut outcome = Outcome::default();
    for input in &a.paths {
        for (name, text, base) in read_input(input)? {
            let file = outcome.sources.add(name, text);
            outcome.check_file(file, &opts, base.as_deref());
        }
    }
    let findings = report::render_all(&outcome);
    let text = match a.format {
        Format::Human => human::render(&outcome, &findings, a.output.is_none() && color()),
        Format::Json => format!("{:#}\n", json::check(&outcome, &findings)),
    };
    write_report(a.output.as_deref(), &text)?;
    let fail_on = match a.fail_on {
        FailOn::Warn => Level::Warn,
        FailOn::Deny => Level::Deny,
    };
    Ok(report::exit_code(&findings, fail_on))
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
fn read_input(input: &str) -> Result<Vec<(String, String, Option<PathBuf>)>, UsageError> {
    if input == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| UsageError(format!("cannot read stdin: {e}")))?;
        return Ok(vec![("<stdin>".into(), text, std::env::current_dir().ok())]);
    }
    let path = Path::new(input);
    let files = if path.is_dir() {
        walk(path)?
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

/// Checkable files below a directory, sorted, skipping hidden and build directories.
fn walk(dir: &Path) -> Result<Vec<PathBuf>, UsageError> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", dir.display())))?;
    for entry in entries {
        let path = entry
            .map_err(|e| UsageError(format!("cannot read {}: {e}", dir.display())))?
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        if path.is_dir() {
            out.extend(walk(&path)?);
        } else if checkable(name) {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

fn checkable(name: &str) -> bool {
    let ext = name.rsplit_once('.').map(|(_, e)| e);
    matches!(ext, Some("sh" | "bash" | "yaml" | "yml")) || name.starts_with("Dockerfile")
}

fn capacity(a: CapacityArgs) -> Run {
    let opts = options(&a.hardware)?;
    let mut outcome = Outcome::default();
    let file = outcome
        .sources
        .add("<command line>", extract::quote_argv(&a.launch));
    let found = extract::parse_command_line(file, &outcome.sources);
    let Some(launch) = found.launches.into_iter().next() else {
        return Err(UsageError("the command after `--` is not an SGLang or vLLM launch (python3 -m sglang.launch_server ..., vllm serve MODEL ...)".into()));
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
            return Err(UsageError(format!("{}{hint}", f.message)));
        }
    }
    match a.format {
        ListFormat::Json => println!("{:#}", json::capacity(&outcome)),
        ListFormat::Human => print!("{}", human::capacity(&outcome, &findings, color())),
    }
    Ok(exit::CLEAN)
}

fn webhook(a: WebhookArgs) -> Run {
    use crate::webhook::{Policy, Settings, Unknown, Webhook};
    let mut settings = Settings::new(a.listen, a.tls_cert, a.tls_key);
    settings.policy = Policy {
        options: options(&a.hardware)?,
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

//! Command line: clap arguments, subcommands and exit codes (DESIGN.md "CLI contract").

use crate::extract;
use crate::gpu;
use crate::pipeline::{Options, Outcome};
use crate::probe;
use crate::report::{self, human, json};
use crate::version::Version;
use clap::{ArgAction, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;

mod argv_dump;
mod catalogs;
mod check;
mod docs;
mod examples;
mod plan;
mod platforms;
mod serve;

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
    long_about = "kvlint reads SGLang, vLLM and TensorRT-LLM launches (shell scripts, commands, Dockerfiles, \
compose files, Kubernetes manifests and CRDs, engine config files), \
computes how many tokens each engine's KV-cache pool will hold on the GPUs it runs on, the way that \
engine version sizes it, and refuses deploys whose pool is smaller than the advertised context.\n\n\
Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage or input error, 3 internal error, \
4 a preflight that needs hardware could not run."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to color the output: auto (a terminal, unless NO_COLOR is set; CLICOLOR_FORCE forces
    /// it), always or never.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// Whether output to stdout is colored (https://no-color.org, CLICOLOR_FORCE).
    pub fn enabled(self) -> bool {
        let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty() && v != "0");
        match self {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto if set("CLICOLOR_FORCE") => true,
            ColorWhen::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check launches in files, directories or stdin (`-`) and report findings.
    Check(CheckArgs),
    /// Compute the KV pool of one launch given after `--` (exit 1 when the launch is refused).
    Capacity(CapacityArgs),
    /// List the layouts that hold a context (TP, PP, DP attention, KV dtype, memory fraction),
    /// each planned as `check` plans it and ranked, with its launch line (exit 1 when none fits).
    Plan(plan::PlanArgs),
    /// List this node's GPUs as NVML reports them (exit 4 without an NVIDIA driver), or with
    /// `--catalog` the GPUs kvlint knows.
    Gpus {
        #[arg(long, value_enum, default_value_t = ListFormat::Human)]
        format: ListFormat,
        /// List the embedded GPU catalog, with kvlint.toml `[gpus]` additions, instead of this node.
        #[arg(long)]
        catalog: bool,
        /// The kvlint.toml whose `[gpus]` to include (default: the nearest one from here upward).
        #[arg(long, value_name = "FILE", requires = "catalog")]
        config: Option<PathBuf>,
    },
    /// List or search the embedded model catalog (id, architecture, layers, KV bytes per token,
    /// max context, source).
    Models(catalogs::ModelsArgs),
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
    /// List the platforms kvlint reads (Ray Serve, chart values, CRDs, ...) with where each keeps
    /// its engine settings, or print one platform's docs.
    Platforms {
        /// Platform name (from the list).
        name: Option<String>,
        #[arg(long, value_enum, default_value_t = ListFormat::Human)]
        format: ListFormat,
        /// The kvlint.toml whose `[[platform]]` tables to include (default: the nearest one).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Serve a Kubernetes validating admission webhook (HTTPS, POST /validate).
    Webhook(WebhookArgs),
    /// Diagnostic for tools/differential.py: JSON argv lines on stdin → parsed settings as JSON lines.
    #[command(hide = true)]
    ParseArgs {
        #[arg(long, value_name = "V")]
        engine_version: Option<String>,
    },
    /// Read the KV pool a running server (--url) or its startup log (--log) reports and check it
    /// with the rules `check` uses (exit 1 refused, 0 fine, 2 cannot read).
    Verify(VerifyCommand),
    /// Test a running OpenAI-compatible server: an over-length prompt must be refused, and
    /// concurrent answers must never hold another request's text (exit 1 on either).
    Canary(crate::canary::CanaryArgs),
    /// Print a shell completion script, e.g. `kvlint completions bash > /etc/bash_completion.d/kvlint`.
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff), e.g. `kvlint man > /usr/local/share/man/man1/kvlint.1`.
    Man,
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
    /// Ask the Hugging Face Hub for models that the cache and the catalog lack (off by default:
    /// an admission decision should not wait on, or leak names to, a network service).
    #[arg(long)]
    pub hub: bool,
    /// A user name trusted as a pod controller besides the built-in ones (the
    /// kube-controller-manager's service accounts, the LeaderWorkerSet controller), e.g.
    /// `system:serviceaccount:kserve:kserve-controller-manager`; repeatable. A deny on an object
    /// it writes with a controller ownerReference is only warned about.
    #[arg(long, value_name = "USER")]
    pub trusted_controller: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UnknownPolicy {
    Warn,
    Deny,
}

/// Inputs shared by `check` and `capacity`.
#[derive(Debug, Args)]
pub struct Hardware {
    /// Default GPU for launches whose input names none (node selector or affinity, accelerator
    /// label, resource name) when NVML on this node answers nothing: a catalog name or alias
    /// (`h200`, `H100-80GB`, `A100-40GB`, `NVIDIA-H100-80GB-HBM3`), optionally with a count
    /// (`h200x8`), or `auto` for this node's GPUs as NVML measures them. Never replaces the
    /// input's own GPU. Default: $KVLINT_GPU, then kvlint.toml's `gpu`.
    #[arg(long, value_name = "SPEC")]
    pub gpu: Option<String>,
    /// Where `--gpu` was given: the command line, or the webhook's.
    #[arg(skip)]
    pub gpu_source: gpu::GpuSource,
    /// The model's config.json, or a model directory (config.json plus
    /// model.safetensors.index.json). Overrides the embedded catalog.
    #[arg(long, value_name = "PATH")]
    pub model_config: Option<PathBuf>,
    /// Engine version the launches run, per engine (`sglang=0.5.20,vllm=0.19.0`), or one bare
    /// release (`0.5.20`) applied to the engine that has it. Default: the image tag.
    #[arg(long, value_name = "V")]
    pub engine_version: Option<String>,
    /// Never ask the Hugging Face Hub for a model's config.json (as `HF_HUB_OFFLINE=1`); the
    /// local Hugging Face cache and the embedded catalog are still read.
    #[arg(long)]
    pub offline: bool,
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
    /// The name standard input (`-`) is reported under; its extension picks how it is read
    /// (`deploy.yaml`, `run.sh`, `Dockerfile`). Without it the content decides.
    #[arg(long, value_name = "NAME")]
    pub stdin_filename: Option<String>,
    /// Report only these rules: ids (KV001), names, categories (correctness), id prefixes (KV)
    /// or ALL, comma-separated. Replaces kvlint.toml's `select`.
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    pub select: Option<Vec<String>>,
    /// Report these rules as well as the selected ones.
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    pub extend_select: Vec<String>,
    /// Never report these rules (level allow), whatever selects them.
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Human output: the findings only, without the launch lines and the summary line.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print how many findings each rule gave instead of the findings.
    #[arg(long)]
    pub statistics: bool,
    /// Also check files that `.gitignore`, `.git/info/exclude` and `.ignore` exclude in directories.
    #[arg(long)]
    pub no_ignore_vcs: bool,
    /// Largest input read, in bytes (suffixes K, M, G); a larger file or stdin is an error.
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = crate::input::parse_size)]
    pub max_input_size: u64,
    /// Threads that parse the documents of a large YAML file (a Helm render). Default (also an
    /// empty `$KVLINT_JOBS`): one per CPU; 1 reads on one thread. The report is the same for any count.
    #[arg(long, short = 'j', value_name = "N", env = "KVLINT_JOBS", value_parser = check::parse_jobs)]
    pub jobs: Option<usize>,
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

/// `kvlint verify`: what to measure, and the GPU, model and release of the launch to predict.
#[derive(Debug, Args)]
pub struct VerifyCommand {
    #[command(flatten)]
    pub verify: crate::verify::VerifyArgs,
    #[command(flatten)]
    pub hardware: Hardware,
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
pub enum ListFormat {
    Human,
    Json,
}

pub use crate::config::FailOn;
pub use crate::report::Format;

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
/// kvlint's command line as clap describes it, each help page ending with its examples.
pub fn command() -> clap::Command {
    examples::add(Cli::command())
}

pub fn run_from(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> i32 {
    let matches = command()
        .try_get_matches_from(args)
        .unwrap_or_else(|e| e.exit());
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    if let (Command::Check(a), Some(("check", m))) = (&mut cli.command, matches.subcommand()) {
        match check::targets(m) {
            Ok(t) => a.targets = t,
            Err(UsageError(msg)) => {
                eprintln!("kvlint: {msg}");
                return exit::USAGE;
            }
        }
    }
    run(cli)
}

/// Runs the parsed command line and returns the exit code.
pub fn run(cli: Cli) -> i32 {
    let color = cli.color.enabled();
    let result = match cli.command {
        Command::Check(a) => check::check(a, color),
        Command::Capacity(a) => capacity(a, color),
        Command::Plan(a) => plan::run(a),
        Command::Gpus {
            format,
            catalog,
            config,
        } => match catalog {
            true => catalogs::gpus(format, config.as_deref()),
            false => gpus(format),
        },
        Command::Models(a) => catalogs::models(&a),
        Command::Probe(a) => probe(a),
        Command::Explain { rule } => docs::explain(&rule),
        Command::Rules { format } => docs::list_rules(format),
        Command::Platforms {
            name,
            format,
            config,
        } => platforms::run(name.as_deref(), format, config.as_deref()),
        Command::Webhook(a) => serve::webhook(a),
        Command::ParseArgs { engine_version } => parse_args(engine_version.as_deref()),
        Command::Verify(a) => verify(a),
        Command::Canary(a) => crate::canary::run(&a).map_err(|e| UsageError(e).into()),
        Command::Completions { shell } => docs::completions(shell),
        Command::Man => docs::man(),
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

impl Hardware {
    /// The default GPU and where it was given: `--gpu`, else `$KVLINT_GPU`, else kvlint.toml.
    fn gpu_default(&self, config: Option<&String>) -> Option<(String, gpu::GpuSource)> {
        let env = std::env::var("KVLINT_GPU").ok();
        let env = env.filter(|v| !v.trim().is_empty());
        self.gpu
            .clone()
            .map(|g| (g, self.gpu_source))
            .or_else(|| env.map(|g| (g, gpu::GpuSource::Env)))
            .or_else(|| config.map(|g| (g.clone(), gpu::GpuSource::Config)))
    }
}

/// The run's options; `config_gpu` is kvlint.toml's `gpu`.
pub(super) fn options(h: &Hardware, config_gpu: Option<&String>) -> Result<Options, Failure> {
    // `auto` names this node's GPUs: NVML must answer (exit 4 when it cannot).
    let (gpu, gpu_source, node_gpu) = match h.gpu_default(config_gpu) {
        Some((spec, _)) if spec.eq_ignore_ascii_case("auto") => {
            (None, gpu::GpuSource::Nvml, Some(node_gpus()?))
        }
        Some((spec, from)) => (
            Some(gpu::parse_spec(&spec).map_err(|e| UsageError(e.to_string()))?),
            from,
            node_gpus().ok(),
        ),
        None => (None, gpu::GpuSource::Flag, node_gpus().ok()),
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
    Ok(Options {
        gpu,
        gpu_source,
        node_gpu,
        models: catalogs::resolver(h),
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

/// Plans the one launch given after `--`, or says in one line why it cannot be planned.
fn plan_launch(a: &CapacityArgs) -> Result<(Outcome, Vec<report::Rendered>), Failure> {
    let opts = options(&a.hardware, None)?;
    let mut outcome = Outcome::default();
    let file = outcome
        .sources
        .add("<command line>", extract::quote_argv(&a.launch));
    let found = extract::parse_command_line(file, &outcome.sources);
    let Some(launch) = found.launches.into_iter().next() else {
        return Err(UsageError(
            "the command after `--` is not an SGLang, vLLM or TensorRT-LLM launch (python3 -m sglang.launch_server ..., vllm serve MODEL ..., trtllm-serve MODEL ...)".into(),
        )
        .into());
    };
    outcome.check_launch(launch, file, &opts, std::env::current_dir().ok().as_deref());
    let findings = report::render_all(&outcome);
    for rule in ["INP002", "INP003", "INP004", "INP008"] {
        if let Some(f) = findings.iter().find(|f| f.rule == rule) {
            let hint = match rule {
                "INP002" | "INP008" => format!("; {}", f.help),
                _ => String::new(),
            };
            return Err(UsageError(format!("{}{hint}", f.message)).into());
        }
    }
    Ok((outcome, findings))
}

fn capacity(a: CapacityArgs, color: bool) -> Run {
    let (outcome, findings) = plan_launch(&a)?;
    match a.format {
        ListFormat::Json => println!("{:#}", json::capacity(&outcome, &findings)),
        ListFormat::Human => print!("{}", human::capacity(&outcome, &findings, color)),
    }
    // A refused launch fails, as in `check`.
    Ok(report::exit_code(&findings, crate::rules::Level::Deny))
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

fn parse_args(version: Option<&str>) -> Run {
    let version = version.map(|v| {
        Version::parse(v)
            .ok_or_else(|| UsageError(format!("--engine-version {v:?} is not a version")))
    });
    let version = version.transpose()?;
    let base = std::env::current_dir().unwrap_or_default();
    for line in std::io::stdin().lines().map_while(Result::ok) {
        println!("{}", argv_dump::line(&line, version.as_ref(), &base));
    }
    Ok(exit::CLEAN)
}

fn verify(a: VerifyCommand) -> Run {
    let opts = if a.verify.predicts() {
        Some(options(&a.hardware, None)?)
    } else {
        None
    };
    crate::verify::run(&a.verify, opts).map_err(|e| UsageError(e).into())
}

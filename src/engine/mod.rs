//! Engine command lines → typed settings, with each engine's own argparse behaviour per version.
//! One file per engine holds its flag table, aliases, removed flags and value types.

use crate::finding::Finding;
use crate::launch::{Engine, Launch};
use crate::source::{Loc, Sources};
use crate::version::Version;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A parsed value, typed as the engine's argparse `type=` would type it.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingValue {
    /// store_true / store_false / BooleanOptionalAction result.
    Flag(bool),
    Int(i64),
    Float(f64),
    /// `auto` or `-1` where the engine accepts it (vLLM `--max-model-len auto`).
    Auto,
    Text(String),
    List(Vec<String>),
}

/// The value an option ends up with, and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// argparse dest, e.g. `tp_size`, `max_model_len`.
    pub dest: String,
    pub value: SettingValue,
    /// The option as written (`--tp`), or the config-file key.
    pub flag_loc: Loc,
    /// The value token (equals `flag_loc` for flags without a value).
    pub value_loc: Loc,
    /// Variables left in the value (`$CTX`): the value is not known.
    pub unresolved: Vec<String>,
    /// The value is the default the caller may override ([`crate::launch::Arg::defaulted`]):
    /// typed and planned with, while `unresolved` still names who decides.
    pub defaulted: bool,
}

impl Setting {
    /// The value is known, or is a caller's default that the plan may use.
    pub fn usable(&self) -> bool {
        self.unresolved.is_empty() || self.defaulted
    }

    /// From the option to the end of its value.
    pub fn loc(&self) -> Loc {
        self.flag_loc.join(self.value_loc)
    }
}

/// Settings of one launch after argparse, `--config` merging and last-one-wins.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineArgs {
    pub engine: Engine,
    pub version: Version,
    pub settings: BTreeMap<String, Setting>,
    /// When the release is unknown: every modelled release the launch could run, oldest first
    /// (`version` is the newest); the plan's band covers them. Empty when the release is known.
    pub could_run: Vec<Version>,
}

impl EngineArgs {
    pub fn get(&self, dest: &str) -> Option<&Setting> {
        self.settings.get(dest)
    }
    pub fn flag(&self, dest: &str) -> bool {
        matches!(
            self.get(dest).map(|s| &s.value),
            Some(SettingValue::Flag(true))
        )
    }
    pub fn int(&self, dest: &str) -> Option<i64> {
        match self.get(dest)?.value {
            SettingValue::Int(i) => Some(i),
            _ => None,
        }
    }
    pub fn float(&self, dest: &str) -> Option<f64> {
        match self.get(dest)?.value {
            SettingValue::Float(f) => Some(f),
            SettingValue::Int(i) => Some(i as f64),
            _ => None,
        }
    }
    pub fn text(&self, dest: &str) -> Option<&str> {
        match &self.get(dest)?.value {
            SettingValue::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// What `parse` needs besides the launch.
pub struct ParseContext<'a> {
    /// `--config FILE` is loaded here so its keys get spans.
    pub sources: &'a mut Sources,
    /// Directory relative `--config` paths are resolved against.
    pub base_dir: Option<PathBuf>,
}

/// Result of parsing one launch.
#[derive(Debug)]
pub struct Parsed {
    pub args: EngineArgs,
    /// CFG001 unknown flag, CFG002 removed flag, invalid values, unreadable `--config`.
    pub findings: Vec<Finding>,
}

pub mod argparse;
pub mod config_file;
pub mod dynamo;
pub mod kwargs;
pub mod pynum;
pub mod releases;
pub mod sglang;
pub mod startup;
pub mod trtllm;
pub mod vllm;

/// Releases kvlint models, oldest first. Flag tables come from the inspected ones among them;
/// the others use the nearest earlier inspected table. A table may also hold older releases
/// (vLLM 0.10): only to say which releases accept an option (VER003), never to plan a pool.
const SGLANG_VERSIONS: &[Version] = &[
    Version::new(0, 4, 6),
    Version::new(0, 4, 7),
    Version::new(0, 4, 8),
    Version::new(0, 4, 9),
    Version::new(0, 4, 10),
    Version::new(0, 5, 0),
    Version::new(0, 5, 1),
    Version::new(0, 5, 2),
    Version::new(0, 5, 3),
    Version::new(0, 5, 4),
    Version::new(0, 5, 5),
    Version::new(0, 5, 6),
    Version::new(0, 5, 7),
    Version::new(0, 5, 8),
    Version::new(0, 5, 9),
    Version::new(0, 5, 10),
    Version::new(0, 5, 11),
    Version::new(0, 5, 12),
    Version::new(0, 5, 13),
    Version::new(0, 5, 14),
    Version::new(0, 5, 15),
    Version::new(0, 5, 16),
    Version::new(0, 5, 17),
    Version::new(0, 5, 18),
    Version::new(0, 5, 19),
    Version::new(0, 5, 20),
    Version::new(0, 5, 21),
    Version::new(0, 5, 22),
    Version::new(0, 5, 23),
];

const VLLM_VERSIONS: &[Version] = &[
    Version::new(0, 11, 0),
    Version::new(0, 12, 0),
    Version::new(0, 13, 0),
    Version::new(0, 14, 0),
    Version::new(0, 15, 0),
    Version::new(0, 16, 0),
    Version::new(0, 17, 0),
    Version::new(0, 18, 0),
    Version::new(0, 19, 0),
    Version::new(0, 20, 0),
    Version::new(0, 21, 0),
    Version::new(0, 22, 0),
    Version::new(0, 23, 0),
    Version::new(0, 24, 0),
    Version::new(0, 25, 0),
    Version::new(0, 26, 0),
    Version::new(0, 27, 0),
    Version::new(0, 28, 0),
    Version::new(0, 29, 0),
    Version::new(0, 30, 0),
    Version::new(0, 31, 0),
    Version::new(0, 32, 0),
    Version::new(0, 33, 0),
];

/// TensorRT-LLM has no per-version table: its math follows the sources of
/// vllm-trtllm-capacity.md (2026 commits), and the release named here is only what a launch
/// without a version is reported as.
const TRTLLM_VERSIONS: &[Version] = &[Version::new(1, 0, 0)];

pub fn known_versions(engine: Engine) -> &'static [Version] {
    match engine {
        Engine::Sglang => SGLANG_VERSIONS,
        Engine::Vllm => VLLM_VERSIONS,
        Engine::Trtllm => TRTLLM_VERSIONS,
    }
}

/// `(oldest, latest)` supported release.
pub fn supported(engine: Engine) -> (Version, Version) {
    let v = known_versions(engine);
    let oldest = v.first().cloned().unwrap_or(Version::new(0, 0, 0));
    let latest = v.last().cloned().unwrap_or(Version::new(0, 0, 0));
    (oldest, latest)
}

/// Parses a launch with its engine's argparse semantics. `version` None: the release is unknown,
/// so the launch is parsed with the latest release's options and `releases::unknown` works out
/// which releases it could run.
pub fn parse(launch: &Launch, version: Option<&Version>, cx: &mut ParseContext) -> Parsed {
    let unwrapped = dynamo::engine_launch(launch, cx.sources);
    let launch = unwrapped.as_ref().unwrap_or(launch);
    let release = version
        .cloned()
        .unwrap_or_else(|| supported(launch.engine).1);
    // Keyword arguments are checked as the dataclass checks them, then read as options.
    let (with_kwargs, kwarg_findings) = kwargs::apply(launch, &release).unzip();
    let launch = with_kwargs.as_ref().unwrap_or(launch);
    let mut parsed = match launch.engine {
        Engine::Sglang => sglang::parse(launch, release, cx),
        Engine::Vllm => vllm::parse(launch, release, cx),
        Engine::Trtllm => trtllm::parse(launch, release, version.is_some(), cx),
    };
    read_env(launch, &mut parsed.args);
    if version.is_none() {
        releases::unknown(launch.engine, &mut parsed);
    }
    parsed
        .findings
        .splice(0..0, kwarg_findings.unwrap_or_default());
    parsed
}

/// Environment variables that change how an engine sizes its memory, read from the launch's
/// environment (`KEY=value` prefixes, container env) as settings named `env:KEY`, so a plan
/// reads them, and an unresolved one is INP004, as options are.
const MEMORY_ENV: &[(Engine, &str)] = &[(Engine::Vllm, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")];

fn read_env(launch: &Launch, args: &mut EngineArgs) {
    for (key, arg) in &launch.env {
        if !MEMORY_ENV.contains(&(launch.engine, key.as_str())) {
            continue;
        }
        let dest = format!("env:{key}");
        let setting = Setting {
            dest: dest.clone(),
            value: SettingValue::Text(arg.text.clone()),
            flag_loc: arg.loc,
            value_loc: arg.loc,
            unresolved: arg.unresolved.clone(),
            defaulted: arg.defaulted,
        };
        // The last assignment wins, as in a shell or a container's env list.
        args.settings.insert(dest, setting);
    }
}

/// Whether `flag` (`--max-model-len`; vLLM also takes `--max_model_len`) is an exact option of
/// the engine's newest modelled release.
pub fn is_option(engine: Engine, flag: &str) -> bool {
    option_dest(engine, flag).is_some()
}

/// The destination of `flag` among the engine's options in its newest modelled release
/// (`model_path` for SGLang's `--model` and `--model-path`): spellings with one destination set
/// one setting.
pub fn option_dest(engine: Engine, flag: &str) -> Option<&'static str> {
    let spec = flag_spec(engine, supported(engine).1)?;
    let name = if spec.underscores {
        flag.replace('_', "-")
    } else {
        flag.to_string()
    };
    spec.exact(&name).map(|(def, _)| def.dest.as_str())
}

/// The engines whose server takes the long option `flag` on its command line: SGLang and vLLM
/// as their parsers take it (exactly, or as an abbreviation argparse expands or refuses as
/// ambiguous) in any release their flag tables hold, older ones included; TensorRT-LLM as
/// `trtllm-serve` names its options. A flag several take (`--port`, `--model`,
/// `--tensor-parallel-size`) tells no engine apart.
pub fn engines_taking(flag: &str) -> Vec<Engine> {
    let argparse = |engine: Engine, table: &argparse::Table| {
        table
            .inspected()
            .into_iter()
            .filter_map(|v| flag_spec(engine, v))
            .any(|spec| argparse::takes(&spec, flag))
    };
    let mut out = Vec::new();
    if argparse(Engine::Sglang, sglang::table()) {
        out.push(Engine::Sglang);
    }
    if argparse(Engine::Vllm, vllm::table()) {
        out.push(Engine::Vllm);
    }
    if trtllm::serve_takes(flag) {
        out.push(Engine::Trtllm);
    }
    out
}

/// Whether `flag` is one of `engine`'s options that takes no value (`--trust-remote-code`) in
/// its newest modelled release.
pub fn is_switch(engine: Engine, flag: &str) -> bool {
    let Some(spec) = flag_spec(engine, supported(engine).1) else {
        return false;
    };
    let name = if spec.underscores {
        flag.replace('_', "-")
    } else {
        flag.to_string()
    };
    spec.exact(&name)
        .is_some_and(|(f, _)| !matches!(f.kind.as_str(), "value" | "nargs" | "append"))
}

/// The option table of `engine` at `version`, if it has one.
fn flag_spec(engine: Engine, version: Version) -> Option<argparse::Spec<'static>> {
    match engine {
        Engine::Sglang => sglang::spec(version),
        Engine::Vllm => vllm::spec(version),
        Engine::Trtllm => None,
    }
}

/// The command words that select the engine (`vllm serve`, `python3 -m sglang.launch_server`).
fn command_text(launch: &Launch, cx: &ParseContext) -> String {
    let file = cx.sources.get(launch.command.file);
    let words = file.text.get(launch.command.range()).unwrap_or_default();
    words.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A value as the command line would write it.
pub fn value_text(v: &SettingValue) -> String {
    match v {
        SettingValue::Flag(b) => b.to_string(),
        SettingValue::Int(i) => i.to_string(),
        SettingValue::Float(f) => f.to_string(),
        SettingValue::Auto => "auto".into(),
        SettingValue::Text(t) => t.clone(),
        SettingValue::List(l) => l.join(" "),
    }
}

/// A bare engine config file (flat YAML mapping) as argv tokens, the way the latest release
/// merges `--config`; every token keeps the span of its key or value.
pub fn config_file_args(
    engine: Engine,
    root: &crate::yaml::Node,
) -> Result<Vec<crate::launch::Arg>, String> {
    let latest = supported(engine).1;
    let (spec, style) = match engine {
        Engine::Sglang => (sglang::spec(latest), argparse::BoolStyle::Sglang),
        Engine::Vllm => (vllm::spec(latest), argparse::BoolStyle::Vllm),
        Engine::Trtllm => return Err("TensorRT-LLM engine YAML is read through a launch".into()),
    };
    let spec = spec.ok_or("no flag table")?;
    argparse::config_args(&spec, style, root, None)
}

/// The text of a file a launch names: the copy its input carries (a mounted ConfigMap key), or
/// why the input cannot provide it; else the file beside the input. Returns `(name, text)`.
pub fn named_file(
    files: &[crate::launch::LaunchFile],
    name: &str,
    cx: &ParseContext,
) -> Result<(String, String), String> {
    if let Some(f) = files.iter().find(|f| f.path == name) {
        return f.content.clone();
    }
    let full = cx
        .base_dir
        .as_ref()
        .map_or_else(|| PathBuf::from(name), |b| b.join(name));
    crate::input::read_regular(&full)
        .map(|t| (name.to_string(), t))
        .map_err(|e| e.to_string())
}

/// Parses `argv`, the launch's arguments as the engine's own front end leaves them.
fn run_engine(
    spec: Option<argparse::Spec>,
    style: argparse::BoolStyle,
    launch: &Launch,
    argv: &[crate::launch::Arg],
    version: Version,
    cx: &mut ParseContext,
) -> Parsed {
    let out = spec
        .map(|s| argparse::run(&s, style, argv, &launch.files, cx))
        .unwrap_or_default();
    let args = EngineArgs {
        engine: launch.engine,
        version,
        settings: out.settings,
        could_run: Vec::new(),
    };
    let mut findings = out.findings;
    if out.duplicates.is_empty() {
        return Parsed { args, findings };
    }
    // One CFG003 per option however often it repeats, from its first place to its last:
    // 60,000 repetitions made 60,000 findings.
    let mut repeated: Vec<(String, Loc, Loc)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (dest, first, second) in out.duplicates {
        match index.get(&dest) {
            Some(&i) => repeated[i].2 = second,
            None => {
                index.insert(dest.clone(), repeated.len());
                repeated.push((dest, first, second));
            }
        }
    }
    // Each finding's token, found by its start in one map (a search per repetition made 60,000
    // repeated flags quadratic) that holds only those: a map of every argument took 13 MB on a
    // padded argv.
    let wanted: std::collections::HashSet<_> = repeated
        .iter()
        .map(|(_, _, second)| (second.file, second.start))
        .collect();
    let mut tokens = std::collections::HashMap::new();
    for a in argv {
        let at = (a.loc.file, a.loc.start);
        if wanted.contains(&at) {
            tokens.entry(at).or_insert(a.text.as_str());
        }
    }
    findings.extend(
        repeated
            .into_iter()
            .map(|(dest, first, second)| duplicate_finding(&tokens, &args, &dest, first, second)),
    );
    Parsed { args, findings }
}

/// CFG003: an option given twice; the engine keeps the value written last.
fn duplicate_finding(
    tokens: &std::collections::HashMap<(crate::source::FileId, usize), &str>,
    args: &EngineArgs,
    dest: &str,
    first: Loc,
    second: Loc,
) -> Finding {
    let written = tokens
        .get(&(second.file, second.start))
        .and_then(|t| t.split('=').next())
        .unwrap_or(dest);
    let value = args
        .get(dest)
        .map_or(String::new(), |s| value_text(&s.value));
    Finding::new("CFG003", Some(second))
        .var("flag", written)
        .var("which", "the last value")
        .var("value", value)
        .label("given again here; this one wins")
        .also(first, "first given here")
}

//! SGLang `python -m sglang.launch_server` / `sglang serve`: plain `argparse.ArgumentParser`
//! (sglang/srt/server_args.py::prepare_server_args), so `_` is not `-` in option names and
//! unique prefixes (`--tp` → `--tp-size`) are accepted.

use super::argparse::{BoolStyle, HumanInt, Spec, Table};
use super::{ParseContext, Parsed};
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch};
use crate::version::Version;
use std::sync::OnceLock;

/// Removed flags and what replaced them.
const REPLACEMENTS: &[(&str, &str)] = &[
    // Deprecated alias of the -decode flag in 0.5.14–0.5.19 (server_args.py), gone in 0.5.20.
    ("--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"),
];

/// Deprecated store-true flags (sglang/srt/arg_groups/argparse_actions.py::
/// DeprecatedStoreTrueAction) and the first release where they are.
const DEPRECATED_STORE_TRUE: &[(&str, Version)] = &[
    ("--disable-cuda-graph", Version::new(0, 5, 20)),
    ("--enable-dp-attention", Version::new(0, 5, 22)),
];

/// Since 0.5.20, sglang/srt/utils/server_args_config_parser.py::ConfigArgumentMerger raises
/// "Unsupported config option" for a `--config` key whose action is neither a plain
/// store_true nor a one-value action: BooleanOptionalAction, store_false, store_const and the
/// deprecated store-true actions. Keys match with `-` read as `_`.
fn config_refuses(spec: &Spec, key: &str) -> Option<String> {
    if spec.version.release() < Version::new(0, 5, 20) {
        return None;
    }
    let opt = format!("--{}", key.trim_start_matches('-').replace('_', "-"));
    let (f, _) = spec.exact(&opt)?;
    let deprecated = DEPRECATED_STORE_TRUE
        .iter()
        .any(|(o, since)| f.opts.iter().any(|x| x == o) && spec.version.release() >= *since);
    let refused = deprecated
        || matches!(
            f.kind.as_str(),
            "store_false" | "store_const" | "bool_optional"
        );
    refused.then(|| {
        format!(
            "SGLang {} refuses the key {key} in a config file (\"Unsupported config option\"): give {opt} on the command line",
            spec.version
        )
    })
}

pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| Table::parse(include_str!(concat!(env!("OUT_DIR"), "/sglang_flags.json"))))
}

pub fn spec(version: Version) -> Option<Spec<'static>> {
    let mut s = Spec::new(Engine::Sglang, table(), version)?;
    s.human = HumanInt::Sglang;
    s.replacements = REPLACEMENTS;
    s.config_refuses = Some(config_refuses);
    Some(s)
}

pub fn parse(launch: &Launch, version: Version, cx: &mut ParseContext) -> Parsed {
    let serve = super::command_text(launch, cx).ends_with(" serve");
    let mut findings = Vec::new();
    let selected;
    let launch = match serve && version.release() >= MODEL_TYPE_SINCE {
        true => match model_type(launch, &version, &mut findings) {
            Some(copy) => {
                selected = copy;
                &selected
            }
            None => launch,
        },
        false => launch,
    };
    // `sglang serve MODEL ...`: sglang/cli/serve.py::_normalize_positional_model_path turns a
    // leading positional into `--model-path MODEL`. Copied only then: a padded argv is large.
    let normalized;
    let launch = match launch
        .args
        .first()
        .filter(|a| serve && !a.text.starts_with('-'))
    {
        Some(first) => {
            let mut copy = launch.clone();
            copy.args.insert(0, Arg::new("--model-path", first.loc));
            normalized = copy;
            &normalized
        }
        None => launch,
    };
    let mut parsed = super::run_engine(
        spec(version.clone()),
        BoolStyle::Sglang,
        launch,
        &launch.args,
        version,
        cx,
    );
    parsed.findings.splice(0..0, findings);
    parsed
}

/// `sglang serve --model-type` appeared in 0.5.10 (absent from the 0.5.9 wheel).
const MODEL_TYPE_SINCE: Version = Version::new(0, 5, 10);

/// sglang/cli/serve.py::_extract_model_type_override: every exact `--model-type V` or
/// `--model-type=V` is taken out before the server's own parser runs (no prefixes, the last
/// wins). `auto` and `llm` serve the LLM server kvlint plans; 0.5.10–0.5.19 refuse anything but
/// `auto`, `llm` and `diffusion`; from 0.5.20 ServeBackendRegistry.get also accepts installed
/// plugin backends, which kvlint cannot see, so another name is refused as a plain install
/// refuses it. `diffusion` is not the LLM server and has no KV pool to plan: INP006.
/// `None`: the launch has no `--model-type`.
fn model_type(launch: &Launch, version: &Version, findings: &mut Vec<Finding>) -> Option<Launch> {
    let is_option = |a: &Arg| a.text == "--model-type" || a.text.starts_with("--model-type=");
    launch.args.iter().position(is_option)?;
    let mut copy = launch.clone();
    copy.args.clear();
    let mut chosen: Option<(String, crate::source::Loc)> = None;
    let mut args = launch.args.iter();
    while let Some(a) = args.next() {
        if a.text == "--model-type" {
            let Some(v) = args.next() else {
                findings.push(
                    Finding::new("CFG004", Some(a.loc))
                        .var("flag", "--model-type")
                        .var("value", "")
                        .var(
                            "expected",
                            "a value (sglang serve: \"--model-type requires a value\")",
                        ),
                );
                return Some(copy);
            };
            chosen = Some((v.text.clone(), a.loc.join(v.loc)));
        } else if let Some(v) = a.text.strip_prefix("--model-type=") {
            chosen = Some((v.to_string(), a.loc));
        } else {
            copy.args.push(a.clone());
        }
    }
    let (value, loc) = chosen?;
    let registry = version.release() >= Version::new(0, 5, 20);
    match value.as_str() {
        "auto" | "llm" => {}
        "diffusion" => findings.push(
            Finding::new("INP006", Some(loc))
                .var("engine", "SGLang")
                .var(
                    "reason",
                    "--model-type diffusion serves a diffusion pipeline, which has no KV pool",
                )
                .var("help", "plan the LLM server: --model-type llm or auto"),
        ),
        _ => findings.push(
            Finding::new("CFG004", Some(loc))
                .var("flag", "--model-type")
                .var("value", &value)
                .var(
                    "expected",
                    if registry {
                        "one of auto, llm, diffusion (or a backend an installed plugin registers)"
                    } else {
                        "one of auto, llm, diffusion"
                    },
                ),
        ),
    }
    Some(copy)
}

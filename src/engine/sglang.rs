//! SGLang `python -m sglang.launch_server` / `sglang serve`: plain `argparse.ArgumentParser`
//! (sglang/srt/server_args.py::prepare_server_args), so `_` is not `-` in option names and
//! unique prefixes (`--tp` → `--tp-size`) are accepted.

use super::argparse::{BoolStyle, HumanInt, Spec, Table};
use super::{ParseContext, Parsed};
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
    // `sglang serve MODEL ...`: sglang/cli/serve.py::_normalize_positional_model_path turns a
    // leading positional into `--model-path MODEL`. Copied only then: a padded argv is large.
    let serve = super::command_text(launch, cx).ends_with(" serve");
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
    super::run_engine(
        spec(version.clone()),
        BoolStyle::Sglang,
        launch,
        &launch.args,
        version,
        cx,
    )
}

//! SGLang `python -m sglang.launch_server` / `sglang serve`: plain `argparse.ArgumentParser`
//! (sglang/srt/server_args.py::prepare_server_args), so `_` is not `-` in option names and
//! unique prefixes (`--tp` → `--tp-size`) are accepted.

use super::argparse::{BoolStyle, HumanInt, Spec, Table};
use super::{ParseContext, Parsed};
use crate::launch::{Engine, Launch};
use crate::version::Version;
use std::sync::OnceLock;

/// Removed flags and what replaced them.
const REPLACEMENTS: &[(&str, &str)] = &[
    // Deprecated alias of the -decode flag in 0.5.14–0.5.19 (server_args.py), gone in 0.5.20.
    ("--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"),
];

pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| Table::parse(include_str!("sglang_flags.toml")))
}

pub fn spec(version: Version) -> Option<Spec<'static>> {
    let mut s = Spec::new(Engine::Sglang, table(), version)?;
    s.human = HumanInt::Sglang;
    s.replacements = REPLACEMENTS;
    Some(s)
}

pub fn parse(launch: &Launch, version: Version, cx: &mut ParseContext) -> Parsed {
    super::run_engine(
        spec(version.clone()),
        BoolStyle::Sglang,
        launch,
        version,
        cx,
    )
}

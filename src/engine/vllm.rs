//! vLLM `vllm serve [MODEL]`: `FlexibleArgumentParser` (vllm/utils/argparse_utils.py), which
//! turns `_` into `-` in option names and pulls `--config FILE` in after the model.

use super::argparse::{BoolStyle, HumanInt, Spec, Table};
use super::{ParseContext, Parsed};
use crate::launch::{Engine, Launch};
use crate::version::Version;
use std::sync::OnceLock;

const REPLACEMENTS: &[(&str, &str)] = &[];

/// The serve positional is `model_tag` (entrypoints/openai/cli_args.py::make_arg_parser); the
/// engine copies it to `model`.
const DEST_RENAMES: &[(&str, &str)] = &[("model_tag", "model")];

pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| Table::parse(include_str!("vllm_flags.toml")))
}

pub fn spec(version: Version) -> Option<Spec<'static>> {
    let mut s = Spec::new(Engine::Vllm, table(), version)?;
    s.underscores = true;
    s.human = HumanInt::Vllm;
    s.replacements = REPLACEMENTS;
    s.dest_renames = DEST_RENAMES;
    Some(s)
}

pub fn parse(launch: &Launch, version: Version, cx: &mut ParseContext) -> Parsed {
    super::run_engine(spec(version.clone()), BoolStyle::Vllm, launch, version, cx)
}

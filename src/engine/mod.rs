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
}

impl Setting {
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
}

impl EngineArgs {
    pub fn get(&self, dest: &str) -> Option<&Setting> {
        self.settings.get(dest)
    }
    pub fn flag(&self, dest: &str) -> bool {
        matches!(self.get(dest).map(|s| &s.value), Some(SettingValue::Flag(true)))
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

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
// TEMP-SHIM
pub fn supported(e: Engine) -> (Version, Version) {
    match e {
        Engine::Sglang => (Version::new(0, 4, 6), Version::new(0, 5, 23)),
        Engine::Vllm => (Version::new(0, 11, 0), Version::new(0, 33, 0)),
    }
}
pub fn parse(launch: &Launch, version: Option<&Version>, _cx: &mut ParseContext) -> Parsed {
    let mut settings = BTreeMap::new();
    let mut i = 0;
    let a = &launch.args;
    if launch.engine == Engine::Vllm && !a.is_empty() && !a[0].text.starts_with("--") {
        settings.insert(
            "model".into(),
            Setting {
                dest: "model".into(),
                value: SettingValue::Text(a[0].text.clone()),
                flag_loc: a[0].loc,
                value_loc: a[0].loc,
                unresolved: a[0].unresolved.clone(),
            },
        );
        i = 1;
    }
    while i < a.len() {
        let t = &a[i].text;
        if let Some(name) = t.strip_prefix("--") {
            let dest = name.replace('-', "_");
            let dest = match dest.as_str() {
                "tp" => "tp_size".to_string(),
                _ => dest,
            };
            if i + 1 < a.len() && !a[i + 1].text.starts_with("--") {
                let v = &a[i + 1];
                let val = if let Ok(n) = v.text.parse::<i64>() {
                    SettingValue::Int(n)
                } else if let Ok(f) = v.text.parse::<f64>() {
                    SettingValue::Float(f)
                } else {
                    SettingValue::Text(v.text.clone())
                };
                settings.insert(
                    dest.clone(),
                    Setting {
                        dest,
                        value: val,
                        flag_loc: a[i].loc,
                        value_loc: v.loc,
                        unresolved: v.unresolved.clone(),
                    },
                );
                i += 2;
            } else {
                let (dest, b) = match dest.strip_prefix("no_") {
                    Some(d) => (d.to_string(), false),
                    None => (dest, true),
                };
                settings.insert(
                    dest.clone(),
                    Setting {
                        dest,
                        value: SettingValue::Flag(b),
                        flag_loc: a[i].loc,
                        value_loc: a[i].loc,
                        unresolved: vec![],
                    },
                );
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    let version = version
        .cloned()
        .unwrap_or_else(|| supported(launch.engine).1);
    Parsed {
        args: EngineArgs {
            engine: launch.engine,
            version,
            settings,
        },
        findings: vec![],
    }
}

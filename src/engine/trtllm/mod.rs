//! TensorRT-LLM launches: `trtllm-serve [serve] MODEL` (a click command,
//! tensorrt_llm/commands/serve.py::serve) and NVIDIA Dynamo's `python3 -m dynamo.trtllm` (argparse,
//! ai-dynamo/dynamo components/src/dynamo/trtllm/utils/trtllm_utils.py::cmd_line_args). Both build
//! LLM-API arguments, whose `TorchLlmArgs` field names are the setting dests here (nested fields
//! as `kv_cache_config.free_gpu_memory_fraction`), then merge an engine YAML over them with
//! tensorrt_llm/llmapi/llm_args.py::update_llm_args_with_extra_dict: `llm_args | yaml`, a
//! top-level replace. A YAML `kv_cache_config:` block therefore drops every kv-cache value the
//! command line set (vllm-trtllm-capacity.md §8.1).
//!
//! click matches option names exactly: unlike argparse it does not accept unique prefixes, and it
//! takes the token after a value option as its value even when that token starts with `-`.
//! Dynamo's argparse parser does accept unique prefixes.

mod extra_options;
mod fields;
mod fraction;
mod options;
#[cfg(test)]
mod tests;

use super::argparse::{py_float, py_int};
use super::{EngineArgs, ParseContext, Parsed, Setting, SettingValue};
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch};
use crate::version::Version;
use options::{Opt, Ty, DYNAMO, SERVE};
use std::collections::BTreeMap;

/// `KvCacheConfig.free_gpu_memory_fraction`, set by `--kv_cache_free_gpu_memory_fraction`.
pub const FRACTION: &str = "kv_cache_config.free_gpu_memory_fraction";
/// The engine YAML option (`--extra_llm_api_options`, `--config`, Dynamo `--extra-engine-args`).
pub const CONFIG: &str = "extra_llm_api_options";
/// Dynamo `--override-engine-args`: a JSON object merged key by key over the arguments.
const OVERRIDE: &str = "override_engine_args";
/// Which command line built the arguments: `trtllm-serve` or `dynamo.trtllm` (not an option).
pub const FRONTEND: &str = "frontend";
/// `KvCacheConfig.free_gpu_memory_fraction` when nobody sets it.
pub const DEFAULT_FRACTION: f64 = 0.9;

/// Which command line the launch is.
#[derive(Clone, Copy, PartialEq)]
enum Front {
    Serve,
    Dynamo,
}

impl Front {
    fn opts(self) -> &'static [Opt] {
        match self {
            Front::Serve => SERVE,
            Front::Dynamo => DYNAMO,
        }
    }
}

/// `release_known`: the release comes from the input or `--engine-version`; when it does not, the
/// engine YAML's merge follows every 1.x release at once (see `fraction`).
pub fn parse(
    launch: &Launch,
    version: Version,
    release_known: bool,
    cx: &mut ParseContext,
) -> Parsed {
    let front = if cx.sources.text(launch.command).contains("dynamo") {
        Front::Dynamo
    } else {
        Front::Serve
    };
    let mut p = Parser {
        front,
        version: version.clone(),
        release_known,
        settings: BTreeMap::new(),
        findings: Vec::new(),
        unseen: Vec::new(),
    };
    let front_name = match front {
        Front::Serve => "trtllm-serve",
        Front::Dynamo => "dynamo.trtllm",
    };
    let cmd = Arg::new(front_name, launch.command);
    p.set(FRONTEND, SettingValue::Text(front_name.into()), &cmd, &cmd);
    p.command_line(&launch.args);
    if let Some(path) = p.settings.get(CONFIG).cloned() {
        p.engine_yaml(launch, &path, cx);
    }
    if let Some(o) = p.settings.remove(OVERRIDE) {
        p.override_json(&o);
    }
    Parsed {
        args: EngineArgs {
            engine: Engine::Trtllm,
            version,
            settings: p.settings,
            could_run: Vec::new(),
        },
        findings: p.findings,
    }
}

/// Whether `trtllm-serve` takes `flag` (click: exact names only, `--tp_size=4` included).
pub fn serve_takes(flag: &str) -> bool {
    let name = flag.split_once('=').map_or(flag, |(k, _)| k);
    SERVE.iter().any(|o| o.names.contains(&name))
}

struct Parser {
    front: Front,
    version: Version,
    release_known: bool,
    settings: BTreeMap<String, Setting>,
    findings: Vec<Finding>,
    /// Values of the engine YAML that its input does not fix, by place (`ReadMapping`).
    unseen: Vec<Arg>,
}

impl Parser {
    fn command_line(&mut self, args: &[Arg]) {
        let mut i = 0;
        while i < args.len() {
            let tok = &args[i];
            i += 1;
            if !is_option(&tok.text) {
                if self.front == Front::Serve && !self.settings.contains_key("model") {
                    self.set("model", SettingValue::Text(tok.text.clone()), tok, tok);
                }
                continue;
            }
            let (name, explicit) = match tok.text.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (tok.text.as_str(), None),
            };
            let Some(opt) = self.lookup(name) else {
                self.unknown(name, tok);
                // click stops at the unknown option; skipping its value keeps the rest readable.
                i += usize::from(
                    explicit.is_none() && args.get(i).is_some_and(|n| !is_option(&n.text)),
                );
                continue;
            };
            i = self.take(opt, tok, explicit, args, i);
        }
    }

    /// Exact names; Dynamo's argparse also takes a unique prefix.
    fn lookup(&self, name: &str) -> Option<&'static Opt> {
        let opts = self.front.opts();
        if let Some(o) = opts.iter().find(|o| o.names.contains(&name)) {
            return Some(o);
        }
        if self.front == Front::Serve || name.len() < 3 {
            return None;
        }
        let mut hits = opts
            .iter()
            .filter(|o| o.names.iter().any(|n| n.starts_with(name)));
        match (hits.next(), hits.next()) {
            (Some(o), None) => Some(o),
            _ => None,
        }
    }

    /// click rejects unknown options ("No such option"). Dynamo's option list is not modelled in
    /// full, so its unknown options are left alone rather than reported.
    fn unknown(&mut self, name: &str, tok: &Arg) {
        if self.front == Front::Dynamo {
            return;
        }
        // click suggests close names (difflib); a name it would have taken as an abbreviation
        // under argparse is the likeliest meaning.
        let names = || SERVE.iter().flat_map(|o| o.names.iter().copied());
        let suggestion = names()
            .find(|n| n.starts_with(name))
            .or_else(|| {
                names()
                    .map(|n| (strsim::damerau_levenshtein(name, n), n))
                    .filter(|(d, n)| *d <= 2.max(n.len() / 6))
                    .min_by_key(|(d, _)| *d)
                    .map(|(_, n)| n)
            })
            .unwrap_or("");
        self.findings.push(
            Finding::new("CFG001", Some(tok.loc))
                .var("flag", name)
                .var("engine", "trtllm-serve")
                .var("version", &self.version)
                .var("suggestion", suggestion),
        );
    }

    fn take(
        &mut self,
        opt: &Opt,
        tok: &Arg,
        explicit: Option<&str>,
        args: &[Arg],
        mut i: usize,
    ) -> usize {
        if matches!(opt.ty, Ty::Flag) {
            match explicit {
                Some(v) => self.invalid(tok, v, "no value"),
                None => self.set(opt.dest, SettingValue::Flag(true), tok, tok),
            }
            return i;
        }
        let value = match explicit {
            Some(v) => Arg {
                text: v.to_string(),
                ..tok.clone()
            },
            None => match args.get(i) {
                // click takes any next token; argparse only one that is not an option.
                Some(n) if self.front == Front::Serve || !is_option(&n.text) => {
                    i += 1;
                    n.clone()
                }
                _ => {
                    self.invalid(tok, "", "a value");
                    return i;
                }
            },
        };
        if !value.unresolved.is_empty() && !value.defaulted {
            let s = Setting {
                dest: opt.dest.to_string(),
                value: SettingValue::Text(value.text.clone()),
                flag_loc: tok.loc,
                value_loc: value.loc,
                unresolved: value.unresolved.clone(),
                defaulted: false,
            };
            self.settings.insert(opt.dest.to_string(), s);
            return i;
        }
        match convert(opt.ty, &value.text) {
            Ok(v) => self.set(opt.dest, v, tok, &value),
            Err(expected) => self.invalid(tok, &value.text, &expected),
        }
        i
    }

    fn set(&mut self, dest: &str, value: SettingValue, flag: &Arg, value_tok: &Arg) {
        let s = Setting {
            dest: dest.to_string(),
            value,
            flag_loc: flag.loc,
            value_loc: value_tok.loc,
            unresolved: value_tok.unresolved.clone(),
            defaulted: value_tok.defaulted,
        };
        self.settings.insert(dest.to_string(), s); // last one wins, in click and argparse
    }

    fn invalid(&mut self, tok: &Arg, value: &str, expected: &str) {
        let flag = tok.text.split('=').next().unwrap_or(&tok.text);
        self.findings.push(
            Finding::new("CFG004", Some(tok.loc))
                .var("flag", flag)
                .var("value", value)
                .var("expected", expected),
        );
    }
}

/// click and argparse treat `-x`/`--x` as options; a negative number is a value.
fn is_option(s: &str) -> bool {
    s.starts_with('-') && s.len() > 1 && s.parse::<f64>().is_err()
}

/// click INT / FLOAT / Choice conversion (Python `int()` / `float()` rules).
fn convert(ty: Ty, raw: &str) -> Result<SettingValue, String> {
    match ty {
        Ty::Int => py_int(raw)
            .map(SettingValue::Int)
            .ok_or_else(|| "an integer".into()),
        Ty::Float => py_float(raw)
            .map(SettingValue::Float)
            .ok_or_else(|| "a number".into()),
        Ty::Choice(c) if !c.contains(&raw) => Err(format!("one of {}", c.join(", "))),
        _ => Ok(SettingValue::Text(raw.to_string())),
    }
}

fn float_of(v: &SettingValue) -> Option<f64> {
    match v {
        SettingValue::Float(f) => Some(*f),
        SettingValue::Int(i) => Some(*i as f64),
        _ => None,
    }
}

fn text_of(v: &SettingValue) -> String {
    match v {
        SettingValue::Text(t) => t.clone(),
        _ => String::new(),
    }
}

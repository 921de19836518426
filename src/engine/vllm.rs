//! vLLM `vllm serve [MODEL]` and `python3 -m vllm.entrypoints.openai.api_server`:
//! `FlexibleArgumentParser` (vllm/utils/argparse_utils.py), which turns `_` into `-` in option
//! names, pulls `--config FILE` in after the model, expands `-O3` and dotted JSON keys.

use super::argparse::{BoolStyle, HumanInt, Spec, Table};
use super::{ParseContext, Parsed, Setting, SettingValue};
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch};
use crate::version::Version;
use std::sync::OnceLock;

const REPLACEMENTS: &[(&str, &str)] = &[];

/// The serve positional is `model_tag` (entrypoints/common/cli_args.py::make_arg_parser);
/// `vllm serve` copies it to `model` (entrypoints/cli/serve.py::ServeSubcommand.cmd).
const DEST_RENAMES: &[(&str, &str)] = &[("model_tag", "model")];

/// Fields kvlint reads whose argparse type is `optional_type(...)` (vllm/engine/arg_utils.py):
/// `""` and `"None"` leave them unset (vllm/config/cache.py `int | None`).
const OPTIONAL: &[&str] = &["kv_cache_memory_bytes", "num_gpu_blocks_override"];

pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| Table::parse(include_str!(concat!(env!("OUT_DIR"), "/vllm_flags.json"))))
}

pub fn spec(version: Version) -> Option<Spec<'static>> {
    let mut s = Spec::new(Engine::Vllm, table(), version)?;
    s.underscores = true;
    s.human = HumanInt::Vllm;
    s.replacements = REPLACEMENTS;
    s.dest_renames = DEST_RENAMES;
    s.rewrite = Some(rewrite);
    s.optional = OPTIONAL;
    // vllm/engine/arg_utils.py: `--kv-transfer-config` is `KVTransferConfig` parsed from JSON.
    s.json_objects = &["kv_transfer_config"];
    Some(s)
}

pub fn parse(launch: &Launch, version: Version, cx: &mut ParseContext) -> Parsed {
    let words = super::command_text(launch, cx);
    let (serve, api) = (words.ends_with(" serve"), words.ends_with("api_server"));
    let Some(mut s) = spec(version.clone()) else {
        return super::run_engine(None, BoolStyle::Vllm, launch, &launch.args, version, cx);
    };
    let mut findings = Vec::new();
    // The launch's own args unless `--model` moves: a render's launches are not copied.
    let moved = serve
        .then(|| model_first(&launch.args, &mut findings))
        .flatten();
    if api {
        // api_server.py's entry (launchers/api_server/entry.py::main) never copies
        // `model_tag` to `model`: a positional model is parsed and ignored.
        s.dest_renames = &[];
    }
    let args = moved.as_deref().unwrap_or(&launch.args);
    let mut parsed = super::run_engine(Some(s), BoolStyle::Vllm, launch, args, version, cx);
    // A word that is a whole unknown expansion (`$EXTRA`, `${REV:+--revision $REV}`) may be no
    // word or any flags: the reader says so (INP004), it is no positional model.
    let expansion = |t: &Setting| {
        !t.unresolved.is_empty()
            && matches!(&t.value, SettingValue::Text(v) if v.starts_with('$') || v.starts_with('`'))
    };
    if let Some(tag) = parsed
        .args
        .settings
        .remove("model_tag")
        .filter(|t| !expansion(t))
    {
        parsed.findings.push(
            Finding::new("CFG004", Some(tag.value_loc))
                .var("flag", "python3 -m vllm.entrypoints.openai.api_server")
                .var("value", format!("the positional model {}", super::value_text(&tag.value)))
                .var(
                    "expected",
                    "--model MODEL: this entry point ignores a positional model and serves vLLM's default model",
                )
                .label("ignored by vLLM"),
        );
    }
    if let Some(f) = optimization_level(&parsed.args) {
        parsed.findings.push(f);
    }
    parsed.findings.splice(0..0, findings);
    parsed
}

/// `--optimization-level` (and `-O`) is a plain string to argparse; VllmConfig, a pydantic
/// dataclass, then validates it as `OptimizationLevel` (vllm/config/vllm.py, an IntEnum of
/// 0–3) in lax mode: an integer string, spaces and a sign allowed, ASCII digits only, and a
/// float string with no fraction (`-O4`, `-Odecode`, `-O３` are refused). Read in the 0.33.0
/// wheel; earlier releases were not checked and are left as argparse leaves them.
fn optimization_level(args: &super::EngineArgs) -> Option<Finding> {
    if args.version.release() < Version::new(0, 33, 0) {
        return None;
    }
    let s = args.get("optimization_level")?;
    let super::SettingValue::Text(text) = &s.value else {
        return None;
    };
    let t = text.trim();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    let ascii = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let level = ascii
        .then(|| t.parse::<f64>().ok())
        .flatten()
        .filter(|v| v.fract() == 0.0 && (0.0..=3.0).contains(v));
    if level.is_some() || !s.unresolved.is_empty() {
        return None;
    }
    Some(
        Finding::new("CFG004", Some(s.loc()))
            .var("flag", "--optimization-level (-O)")
            .var("value", text)
            .var(
                "expected",
                "0, 1, 2 or 3 (VllmConfig refuses any other OptimizationLevel)",
            ),
    )
}

/// `vllm serve`: the first `--model X` / `--model=X` becomes the positional model
/// (FlexibleArgumentParser.parse_args), so with two `--model` options the first one is served.
/// `None`: the args stay as they are.
fn model_first(args: &[Arg], findings: &mut Vec<Finding>) -> Option<Vec<Arg>> {
    let is_model =
        |a: &Arg| a.text == "--model" || a.text.starts_with("--model=") && a.text.len() > 8;
    let i = args.iter().position(is_model)?;
    let (model, used) = if args[i].text == "--model" {
        match args.get(i + 1) {
            Some(v) => (v.clone(), 2),
            None => {
                findings.push(
                    Finding::new("CFG004", Some(args[i].loc))
                        .var("flag", "--model")
                        .var("value", "")
                        .var("expected", "a value"),
                );
                return None;
            }
        }
    } else {
        let mut v = args[i].clone();
        v.text = v.text["--model=".len()..].to_string();
        (v, 1)
    };
    if let Some(again) = args[i + used..].iter().find(|a| is_model(a)) {
        findings.push(
            Finding::new("CFG003", Some(again.loc))
                .var("flag", "--model")
                .var("which", "the first value")
                .var("value", &model.text)
                .label("given again here; ignored")
                .also(
                    args[i].loc.join(model.loc),
                    "first given here; this one is served",
                ),
        );
    }
    let mut out = vec![model];
    out.extend(args[..i].iter().cloned());
    out.extend(args[i + used..].iter().cloned());
    Some(out)
}

/// FlexibleArgumentParser.parse_args after `--config`: `-O3`/`-O=3`/`-Odecode`/`-O 3` →
/// `--optimization-level` (up to 0.11, which has none: `-O.level=3`, a dotted key), then dotted keys (`--kv-transfer-config.kv_role kv_producer`)
/// gathered into one JSON value per option, appended at the end.
fn rewrite(spec: &Spec, tokens: Vec<Arg>) -> (Vec<Arg>, Vec<Finding>) {
    let level = spec.exact("--optimization-level").is_some();
    let mut out: Vec<Arg> = Vec::with_capacity(tokens.len());
    let mut tokens = tokens.into_iter().peekable();
    while let Some(t) = tokens.next() {
        let text = t.text.as_str();
        let next_is_level = tokens
            .peek()
            .is_some_and(|n| matches!(n.text.as_str(), "0" | "1" | "2" | "3"));
        let short = text.starts_with("-O") && text != "-O" && !text.starts_with("-O.");
        if short && !text.starts_with("--") {
            let value = text.strip_prefix("-O=").unwrap_or(&text[2..]);
            if level {
                out.push(Arg::new("--optimization-level", t.loc));
                out.push(Arg::new(value, t.loc));
            } else {
                // Up to 0.11 (`-O` is `--compilation-config`): `-O.level=<value>`.
                out.push(Arg::new(format!("-O.level={value}"), t.loc));
            }
        } else if text == "-O" && next_is_level {
            out.push(Arg::new(
                if level {
                    "--optimization-level"
                } else {
                    "-O.level"
                },
                t.loc,
            ));
        } else {
            out.push(t);
        }
    }
    dotted(out)
}

fn dotted(tokens: Vec<Arg>) -> (Vec<Arg>, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut dicts: Vec<(String, serde_json::Value, crate::source::Loc)> = Vec::new();
    let mut out = Vec::with_capacity(tokens.len());
    let mut tokens = tokens.into_iter();
    while let Some(t) = tokens.next() {
        // Tested before anything is copied: most tokens are not dotted.
        let key = t.text.split_once('=').map_or(t.text.as_str(), |(k, _)| k);
        if !(key.starts_with('-') && key.contains('.') && t.unresolved.is_empty()) {
            out.push(t);
            continue;
        }
        let (name, value) = match t.text.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (t.text.clone(), None),
        };
        let value = match value {
            Some(v) => v,
            None => match tokens.next() {
                Some(v) => v.text,
                None => {
                    // `processed_args[i + 1]`: IndexError, the engine does not start.
                    findings.push(
                        Finding::new("CFG004", Some(t.loc))
                            .var("flag", &t.text)
                            .var("value", "")
                            .var("expected", "a value: vLLM reads a word with a dot after a dash as a dotted JSON option and takes the next word as its value"),
                    );
                    continue;
                }
            },
        };
        let (name, value) = match name.strip_suffix('+') {
            Some(n) => (
                n.to_string(),
                serde_json::json!(value.split(',').collect::<Vec<_>>()),
            ),
            None => (name, json_value(&value)),
        };
        let mut keys = name.split('.');
        let option = keys.next().unwrap_or_default().replace('_', "-");
        let nested = keys
            .rev()
            .fold(value, |acc, k| serde_json::json!({ k: acc }));
        match dicts.iter_mut().find(|(o, _, _)| *o == option) {
            Some((_, d, _)) => merge(d, nested),
            None => dicts.push((option, nested, t.loc)),
        }
    }
    for (option, value, loc) in dicts {
        out.push(Arg::new(option, loc));
        out.push(Arg::new(value.to_string(), loc));
    }
    (out, findings)
}

/// `json.loads`, else `human_readable_int`, else the string.
fn json_value(raw: &str) -> serde_json::Value {
    serde_json::from_str(raw).unwrap_or_else(|_| {
        super::argparse::human_int(HumanInt::Vllm, raw)
            .map_or_else(|| serde_json::json!(raw), |n| serde_json::json!(n))
    })
}

/// argparse_utils.py `recursive_dict_update`: nested dicts merge, lists extend, values replace.
fn merge(into: &mut serde_json::Value, from: serde_json::Value) {
    use serde_json::Value;
    let (Value::Object(a), Value::Object(b)) = (into, from) else {
        return;
    };
    for (k, v) in b {
        match (a.get_mut(&k), v) {
            (Some(old @ Value::Object(_)), v @ Value::Object(_)) => merge(old, v),
            (Some(Value::Array(old)), Value::Array(v)) => old.extend(v),
            (_, v) => {
                a.insert(k, v);
            }
        }
    }
}

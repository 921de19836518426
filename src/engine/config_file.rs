//! Engine `--config` YAML files → argv tokens, as each engine's merger builds them from what
//! PyYAML (`yaml.safe_load`, YAML 1.1) reads: `1e4` stays a string, `yes`/`on` are booleans,
//! a duplicate key's last value wins, `key:` with no value is `None`.

use super::argparse::Spec;
use crate::launch::Arg;

/// How a config-file boolean becomes command-line tokens.
#[derive(Debug, Clone, Copy)]
pub enum BoolStyle {
    /// sglang/srt/utils/server_args_config_parser.py::ConfigArgumentMerger: store_true flags
    /// get the bare flag for `true` and nothing for `false`; other options get `true`/`false`.
    Sglang,
    /// vllm/utils/argparse_utils.py::FlexibleArgumentParser._pull_args_from_config: `true` →
    /// bare `--key`, `false` → `--no-key` when that option exists, else dropped.
    Vllm,
}

/// A flat YAML mapping → argv tokens, each keeping the span of its key or value in the file.
/// `text` is the file's text (scalars are read the way PyYAML reads them); without it the
/// YAML 1.2 types are used.
pub fn config_args(
    spec: &Spec,
    style: BoolStyle,
    root: &crate::yaml::Node,
    text: Option<&str>,
) -> Result<Vec<Arg>, String> {
    use crate::yaml::Value;
    let Value::Map(entries) = &root.value else {
        return Err("the file must hold a mapping of option names to values".into());
    };
    // PyYAML builds a dict: a repeated key keeps its first place and its last value.
    let mut unique: Vec<(&crate::yaml::Node, &crate::yaml::Node)> = Vec::new();
    for (k, v) in entries {
        match unique
            .iter_mut()
            .find(|(u, _)| u.scalar_text() == k.scalar_text())
        {
            Some(slot) => slot.1 = v,
            None => unique.push((k, v)),
        }
    }
    let mut args = Vec::new();
    for (k, v) in unique {
        let Some(key) = k.scalar_text() else {
            return Err("a key is not a plain name".into());
        };
        if let Some(why) = spec.config_refuses.and_then(|f| f(spec, &key)) {
            return Err(why);
        }
        let flag = format!("--{}", key.trim_start_matches('-'));
        let flag_arg = Arg::new(flag.clone(), k.loc);
        match (&v.value, text.and_then(|t| pyyaml_scalar(t, v))) {
            (_, Some(PyScalar::Bool(b))) | (&Value::Bool(b), None) => {
                bool_args(spec, style, flag_arg, b, v, &mut args)
            }
            (_, Some(PyScalar::Text(t))) => {
                args.push(flag_arg);
                args.push(Arg::new(t, v.loc));
            }
            (Value::Seq(items), _) => {
                // Both mergers skip an empty list.
                if !items.is_empty() {
                    args.push(flag_arg);
                }
                for item in items {
                    let text = item
                        .scalar_text()
                        .unwrap_or_else(|| item.to_json().to_string());
                    args.push(Arg::new(text, item.loc));
                }
            }
            (Value::Map(_), _) => {
                args.push(flag_arg);
                args.push(Arg::new(v.to_json().to_string(), v.loc));
            }
            // `key:` is Python None, passed on as `str(None)`.
            (Value::Null, _) => {
                args.push(flag_arg);
                args.push(Arg::new("None", v.loc));
            }
            _ => {
                args.push(flag_arg);
                args.push(Arg::new(v.scalar_text().unwrap_or_default(), v.loc));
            }
        }
    }
    Ok(args)
}

/// A plain scalar as PyYAML's resolver (yaml/resolver.py, YAML 1.1) types it, then as the
/// engines pass it on (`str(value)`).
enum PyScalar {
    Bool(bool),
    Text(String),
}

fn pyyaml_scalar(text: &str, v: &crate::yaml::Node) -> Option<PyScalar> {
    use crate::yaml::Value;
    if !matches!(
        v.value,
        Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_)
    ) {
        return None;
    }
    let raw = text.get(v.loc.range())?.trim();
    if raw.starts_with(['"', '\'']) {
        return match &v.value {
            Value::Str(s) => Some(PyScalar::Text(s.clone())),
            _ => None,
        };
    }
    const TRUE: &[&str] = &[
        "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
    ];
    const FALSE: &[&str] = &[
        "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
    ];
    if TRUE.contains(&raw) || FALSE.contains(&raw) {
        return Some(PyScalar::Bool(TRUE.contains(&raw)));
    }
    let digits = raw.trim_start_matches(['+', '-']);
    let int = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
        && (digits == "0" || !digits.starts_with('0'));
    if int {
        let n: i128 = raw.replace('_', "").parse().ok()?;
        return Some(PyScalar::Text(n.to_string()));
    }
    if pyyaml_float(raw) {
        let f: f64 = raw.replace('_', "").parse().ok()?;
        return Some(PyScalar::Text(python_repr(f)));
    }
    Some(PyScalar::Text(raw.to_string()))
}

/// PyYAML's float: a dot is required, an exponent needs its sign (`1e4` and `1.0e4` are strings).
fn pyyaml_float(raw: &str) -> bool {
    let s = raw.strip_prefix(['+', '-']).unwrap_or(raw);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let Some((whole, frac)) = mantissa.split_once('.') else {
        return false;
    };
    let digits_ok = |t: &str| t.chars().all(|c| c.is_ascii_digit() || c == '_');
    let mantissa_ok = digits_ok(whole)
        && digits_ok(frac)
        && !(whole.is_empty() && frac.is_empty())
        && !whole.starts_with('_');
    let exp_ok = exp.is_none_or(|e| {
        e.len() > 1 && e.starts_with(['+', '-']) && e[1..].chars().all(|c| c.is_ascii_digit())
    });
    mantissa_ok && exp_ok
}

/// Python `repr(float)` for the values config files hold (`0.8`, `10000.0`).
fn python_repr(f: f64) -> String {
    format!("{f:?}")
}

fn bool_args(
    spec: &Spec,
    style: BoolStyle,
    flag: Arg,
    b: bool,
    v: &crate::yaml::Node,
    args: &mut Vec<Arg>,
) {
    let name = if spec.underscores {
        flag.text.replace('_', "-")
    } else {
        flag.text.clone()
    };
    let zero_arg = spec
        .exact(&name)
        .is_some_and(|(f, _)| !matches!(f.kind.as_str(), "value" | "nargs" | "append"));
    match style {
        BoolStyle::Sglang if zero_arg => {
            if b {
                args.push(flag);
            }
        }
        BoolStyle::Vllm if b => args.push(flag),
        // `f"--no-{key}" in self._option_string_actions`: the key as written, not normalized.
        BoolStyle::Vllm => {
            let no = format!("--no-{}", flag.text.trim_start_matches("--"));
            if spec.exact(&no).is_some() {
                args.push(Arg::new(no, flag.loc));
            }
        }
        BoolStyle::Sglang => {
            args.push(flag);
            args.push(Arg::new(b.to_string(), v.loc));
        }
    }
}

pub fn load(
    spec: &Spec,
    style: &BoolStyle,
    path: &Arg,
    cx: &mut super::ParseContext,
) -> Result<Vec<Arg>, String> {
    let name = path.text.as_str();
    if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
        return Err("only .yaml and .yml config files are supported".into());
    }
    let full = match &cx.base_dir {
        Some(base) => base.join(name),
        None => std::path::PathBuf::from(name),
    };
    let text = std::fs::read_to_string(&full)
        .map_err(|e| format!("cannot read {}: {e}", full.display()))?;
    let file = cx.sources.add(name, text);
    let root = crate::yaml::parse_document_last_key_wins(file, cx.sources.get(file))
        .map_err(|e| e.message)?;
    config_args(spec, *style, &root, Some(&cx.sources.get(file).text))
}

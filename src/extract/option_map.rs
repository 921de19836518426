//! Option maps: a mapping of engine option names to values (Ray Serve `engine_kwargs`, a chart's
//! `vllmConfig`, a Runpod worker config), read by the convention a platform names
//! (`platform::Keys`); and mappings anywhere in a file recognized as one engine's options by their
//! keys alone, so that no option map goes unread.

use super::k8s::scalar;
use super::shell;
use crate::launch::{Arg, Engine, Kwarg};
use crate::platform::Keys;
use crate::source::{FileId, SourceFile};
use crate::yaml::{Node, Value};
use std::collections::HashMap;

/// What an option map gives a launch: option tokens, and keyword arguments checked per release.
#[derive(Debug, Default)]
pub struct Read {
    pub args: Vec<Arg>,
    pub kwargs: Vec<Kwarg>,
}

/// Reads `map` with the key convention `keys`; with `flag_names`, only those keys, each to its flag.
pub fn read(
    engine: Engine,
    map: &Node,
    keys: Keys,
    flag_names: &HashMap<String, String>,
) -> Result<Read, String> {
    let Value::Map(entries) = &map.value else {
        return Err("the options are not a mapping of names to values".into());
    };
    let mut out = Read::default();
    match keys {
        Keys::Kwargs if flag_names.is_empty() => {
            out.kwargs = unique(entries)
                .into_iter()
                .filter_map(|(k, v)| crate::engine::kwargs::tokens(engine, k, v))
                .collect();
        }
        Keys::Flags if flag_names.is_empty() => {
            out.args = crate::engine::config_file_args(engine, map)?;
        }
        _ => {
            for (k, v) in unique(entries) {
                let Some(key) = k.as_str() else { continue };
                let flag = match flag_names.get(key) {
                    Some(f) => f.clone(),
                    None if flag_names.is_empty() => format!("--{}", kebab(key)),
                    None => continue,
                };
                rendered(Arg::new(flag, k.loc), v, &mut out.args);
            }
        }
    }
    Ok(out)
}

/// A key a chart renders as `--flag value`: `true` the bare flag, `false` and empty nothing.
fn rendered(flag: Arg, v: &Node, args: &mut Vec<Arg>) {
    match &v.value {
        Value::Bool(true) => args.push(flag),
        Value::Bool(false) | Value::Null => {}
        Value::Seq(items) => {
            args.push(flag);
            args.extend(items.iter().map(|i| {
                Arg::new(
                    i.scalar_text().unwrap_or_else(|| i.to_json().to_string()),
                    i.loc,
                )
            }));
        }
        Value::Map(_) => {
            args.push(flag);
            args.push(Arg::new(v.to_json().to_string(), v.loc));
        }
        _ => {
            args.push(flag);
            args.push(Arg::new(v.scalar_text().unwrap_or_default(), v.loc));
        }
    }
}

/// A mapping's entries as a dict holds them: a repeated key keeps its first place, last value.
fn unique(entries: &[(Node, Node)]) -> Vec<(&Node, &Node)> {
    let mut out: Vec<(&Node, &Node)> = Vec::new();
    for (k, v) in entries {
        match out
            .iter_mut()
            .find(|(u, _)| u.scalar_text() == k.scalar_text())
        {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    out
}

/// `maxModelLen` → `max-model-len`.
pub fn kebab(key: &str) -> String {
    let mut out = String::new();
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('-');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// An argv list, or a string split as a shell splits it.
pub fn argv(file: FileId, src: &SourceFile, list: &Node) -> Vec<Arg> {
    let arg = |w: &shell::MappedWord| Arg::new(w.chars.as_str(), w.loc);
    match &list.value {
        Value::Seq(items) => items
            .iter()
            .filter_map(|n| scalar::word(src, n))
            .map(|w| arg(&w))
            .collect(),
        _ => scalar::word(src, list)
            .map(|w| shell::split_words(file, &w).iter().map(arg).collect())
            .unwrap_or_default(),
    }
}

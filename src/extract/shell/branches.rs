//! What a variable holds after a compound (`if`, `case`, a loop, a `&&` list) whose paths set it
//! differently: the caller's default, the value on each path, or unknown.
//!
//! Which path runs is decided at run time, so no one value is assumed. Where every path's value
//! is written in the script (`if [ "$BIG" ]; then TP=8; else TP=1; fi`), a command using the
//! variable is read once per path ([`paths`]), so each path's launch is checked on its own; the
//! branches of one compound stay together (`TP=8` goes with the `CTX=131072` of its branch).

use super::expand::{Alt, Field, Scope, Value, Var};
use super::lex::{ParamOp, Part, Word};
use std::rc::Rc;

/// The most paths a variable keeps, and the most times one command is read: past either, the
/// variable is unknown there (`INP004` where the pool needs it), as it is when a path's value is.
const MAX_PATHS: usize = 8;

/// The value after a compound whose paths ended with `values` (one per path, in order; `None`
/// where the variable is unset), and the value on each path where every one is known.
/// `branches`: the paths are the compound's branches (not a loop's repeated body).
pub(super) fn merge(
    name: &str,
    values: &[Option<Var>],
    compound: u32,
    branches: bool,
) -> Option<(Value, Option<Rc<[Alt]>>)> {
    let first = values[0].as_ref();
    let same = |v: &Option<Var>| match (v.as_ref(), first) {
        (Some(a), Some(b)) => same_value(&a.value, &b.value) && a.alts == b.alts,
        (a, b) => a.is_none() && b.is_none(),
    };
    if values.iter().all(same) {
        return first.map(|v| (v.value.clone(), v.alts.clone()));
    }
    let refs: Vec<Option<&Var>> = values.iter().map(Option::as_ref).collect();
    if let Some(default) = caller_default(name, &refs) {
        return Some((default, None));
    }
    let unknown = Value::Unknown(differing(name, &refs));
    let alts = branches.then(|| per_path(compound, &refs)).flatten();
    Some((unknown, alts))
}

/// Every path's value, the branch it took in `compound` first; `None` where one is not known.
fn per_path(compound: u32, values: &[Option<&Var>]) -> Option<Rc<[Alt]>> {
    let mut alts = Vec::new();
    for (branch, v) in values.iter().enumerate() {
        let v = (*v)?;
        match (&v.alts, &v.value) {
            (Some(inner), _) => alts.extend(inner.iter().map(|a| {
                Alt {
                    path: [(compound, branch)]
                        .into_iter()
                        .chain(a.path.iter().copied())
                        .collect(),
                    value: a.value.clone(),
                }
            })),
            (None, Value::Unknown(_)) => return None,
            (None, value) => alts.push(Alt {
                path: vec![(compound, branch)],
                value: value.clone(),
            }),
        }
        if alts.len() > MAX_PATHS {
            return None;
        }
    }
    Some(alts.into())
}

/// The variables a command uses that hold a value per path ([`Var::alts`]): in its words, in
/// `$( ... )` inside them, and in an unquoted heredoc's body, which this shell expands.
pub(super) fn used<'v>(vars: &'v [Var], words: &[Word], heredoc: Option<&str>) -> Vec<&'v Var> {
    let mut names: Vec<String> = Vec::new();
    for w in words {
        names_in(&w.parts, &mut names);
    }
    if let Some(body) = heredoc {
        names_in_text(body, &mut names);
    }
    let mut used: Vec<&Var> = Vec::new();
    for name in names {
        let var = vars.iter().rev().find(|v| v.name == name);
        if let Some(v) = var.filter(|v| v.alts.is_some()) {
            if !used.iter().any(|u| u.name == v.name) {
                used.push(v);
            }
        }
    }
    used
}

fn names_in(parts: &[Part], names: &mut Vec<String>) {
    for part in parts {
        match part {
            Part::Param { name, op, .. } => {
                names.push(name.clone());
                if let ParamOp::Default { word, .. } = op {
                    names_in(word, names);
                }
            }
            Part::Subst { raw } => {
                let text: String = raw.iter().map(|c| c.c).collect();
                names_in_text(&text, names);
            }
            Part::Array(words) => words.iter().for_each(|w| names_in(&w.parts, names)),
            Part::Lit(_) => {}
        }
    }
}

/// `$NAME` and `${NAME...}` in text the lexer has not split (a `$( ... )`, a heredoc's body).
/// Taking a name in single quotes too only reads a command once more than needed.
fn names_in_text(text: &str, names: &mut Vec<String>) {
    for (i, _) in text.match_indices('$') {
        let rest = text[i + 1..].trim_start_matches('{');
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end > 0 {
            names.push(rest[..end].to_string());
        }
    }
}

/// The paths a command using `vars` is read on: one branch of each compound they name, every
/// combination; `None` past [`MAX_PATHS`] (the variables stay unknown there).
pub(super) fn paths(vars: &[&Var]) -> Option<Vec<Vec<(u32, usize)>>> {
    let mut compounds: Vec<(u32, usize)> = Vec::new();
    for alt in vars
        .iter()
        .flat_map(|v| v.alts.iter().flat_map(|a| a.iter()))
    {
        for &(id, branch) in &alt.path {
            match compounds.iter_mut().find(|(c, _)| *c == id) {
                Some((_, n)) => *n = (*n).max(branch + 1),
                None => compounds.push((id, branch + 1)),
            }
        }
    }
    let mut paths: Vec<Vec<(u32, usize)>> = vec![Vec::new()];
    for (id, n) in compounds {
        if paths.len() * n > MAX_PATHS {
            return None;
        }
        paths = paths
            .into_iter()
            .flat_map(|p| {
                (0..n).map(move |b| {
                    let mut p = p.clone();
                    p.push((id, b));
                    p
                })
            })
            .collect();
    }
    Some(paths)
}

/// The value `var` holds on `path`: that of the first of its paths that agrees with it.
pub(super) fn on_path<'v>(var: &'v Var, path: &[(u32, usize)]) -> Option<&'v Value> {
    let agrees = |alt: &&Alt| {
        alt.path
            .iter()
            .all(|step| path.iter().all(|p| p.0 != step.0 || p == step))
    };
    var.alts.as_ref()?.iter().find(agrees).map(|a| &a.value)
}

/// The variables a command assigned, read on each of `paths` (`after[i]`: what path `i` ended
/// with): one value where all agree, else the value on each path.
pub(super) fn assigned(
    name: &str,
    paths: &[Vec<(u32, usize)>],
    after: &[Option<Var>],
) -> Option<(Value, Option<Rc<[Alt]>>)> {
    let refs: Vec<Option<&Var>> = after.iter().map(Option::as_ref).collect();
    let first = refs[0].map(|v| &v.value);
    let all_same = refs.iter().all(|v| match (v.map(|v| &v.value), first) {
        (Some(a), Some(b)) => same_value(a, b),
        (a, b) => a.is_none() && b.is_none(),
    });
    if all_same {
        return first.map(|v| (v.clone(), None));
    }
    let mut alts = Vec::new();
    for (path, v) in paths.iter().zip(&refs) {
        match v.map(|v| &v.value) {
            Some(Value::Unknown(_)) | None => {
                return Some((Value::Unknown(differing(name, &refs)), None));
            }
            Some(value) => alts.push(Alt {
                path: path.clone(),
                value: value.clone(),
            }),
        }
    }
    Some((Value::Unknown(differing(name, &refs)), Some(alts.into())))
}

/// Each name the paths' `ends` assigned, with its value at the end of every path in order (where a
/// path left it alone, the value the scope holds now, before them).
pub(super) fn by_name(
    scope: &Scope,
    ends: &[Vec<(String, Option<Var>)>],
) -> Vec<(String, Vec<Option<Var>>)> {
    let mut names: Vec<&String> = Vec::new();
    for (name, _) in ends.iter().flatten() {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let before = scope.var(name);
            let values = ends
                .iter()
                .map(|end| match end.iter().find(|(n, _)| n == name) {
                    Some((_, v)) => v.clone(),
                    None => before.cloned(),
                })
                .collect();
            (name.clone(), values)
        })
        .collect()
}

/// Drops the items from `from` on that repeat an earlier one of them.
pub(super) fn dedup_from<T: PartialEq>(items: &mut Vec<T>, from: usize) {
    let added = items.split_off(from.min(items.len()));
    let mut kept: Vec<T> = Vec::with_capacity(added.len());
    for item in added {
        if !kept.contains(&item) {
            kept.push(item);
        }
    }
    items.extend(kept);
}

/// The same text (and the same unknowns) wherever it was written.
pub(super) fn same_value(a: &Value, b: &Value) -> bool {
    let text = |f: &Field| (f.text(), f.unresolved());
    match (a, b) {
        (Value::Scalar(x), Value::Scalar(y)) => text(x) == text(y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| text(x) == text(y))
        }
        (Value::Unknown(x), Value::Unknown(y)) => x == y,
        _ => false,
    }
}

/// `M=x; while getopts m: o; do case $o in m) M=$OPTARG;; esac; done` (or `M="$2"` in a
/// `while [[ $# -gt 0 ]]` loop): one value the script writes, and otherwise only what its caller
/// passes in. That value is the caller's default, as `${M:-x}` is ([`Field::defaulted`]).
fn caller_default(name: &str, values: &[Option<&Var>]) -> Option<Value> {
    let mut written: Option<&Field> = None;
    let mut passed: Vec<&str> = Vec::new();
    // The same default from a nested compound (`case` in the `while`) keeps its words.
    let mut nested: Option<&Field> = None;
    for v in values {
        let f = match v.map(|v| &v.value)? {
            Value::Scalar(f) if f.names.is_empty() => f,
            Value::Scalar(f) if f.defaulted() && f.names.len() == 1 => {
                nested = Some(f);
                f
            }
            Value::Scalar(f) => {
                passed.push(from_caller(f)?);
                continue;
            }
            _ => return None,
        };
        match written {
            Some(w) if w.as_str() != f.as_str() => return None,
            _ => written = Some(f),
        }
    }
    let written = written.filter(|w| !w.chars.is_empty())?;
    if let (Some(nested), true) = (nested, passed.is_empty()) {
        return Some(Value::Scalar(nested.clone()));
    }
    if passed.is_empty() {
        return None;
    }
    passed.dedup();
    let why = format!(
        "{name} (\"{}\" unless the caller passes another through ${})",
        written.as_str(),
        passed.join(" or $")
    );
    Some(Value::Scalar(Field {
        chars: written.chars.clone(),
        loc: written.loc,
        names: vec![(0, why)],
        splat: None,
        defaults: vec![0],
    }))
}

/// The variable a field that is one whole reference to the caller's input names: a positional
/// parameter (`$2`) or `OPTARG`, never a command's output or a variable the script sets.
fn from_caller(f: &Field) -> Option<&str> {
    let [(0, name)] = f.names.as_slice() else {
        return None;
    };
    let whole = f.as_str().trim_start_matches("${").trim_start_matches('$');
    let whole = whole.trim_end_matches('}');
    let caller = name == "OPTARG" || name.chars().all(|c| c.is_ascii_digit());
    (caller && whole == name).then_some(name.as_str())
}

/// `CTX (8192 or 131072, set in different branches)`.
fn differing(name: &str, values: &[Option<&Var>]) -> String {
    const BRANCHES: &str = ", set in different branches)";
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        let texts = match v.map(|v| &v.value) {
            Some(Value::Scalar(f)) if f.chars.is_empty() => vec!["\"\"".to_string()],
            Some(Value::Scalar(f)) if f.names.is_empty() => vec![f.text()],
            Some(Value::Array(items)) => vec![format!(
                "({})",
                items.iter().map(Field::text).collect::<Vec<_>>().join(" ")
            )],
            // A nested compound's alternatives are this one's too.
            Some(Value::Unknown(why)) => {
                match why.strip_suffix(BRANCHES).and_then(|w| w.split_once(" (")) {
                    Some((_, alts)) => alts.split(" or ").map(str::to_string).collect(),
                    // A command's output (`$(cat /etc/ctx)`) says what it is, if briefly.
                    None if why.len() <= 48 => vec![why.clone()],
                    None => vec!["unknown".to_string()],
                }
            }
            Some(_) => vec!["unknown".to_string()],
            None => vec!["unset".to_string()],
        };
        for text in texts {
            if !seen.contains(&text) {
                seen.push(text);
            }
        }
    }
    format!("{name} ({}{BRANCHES}", seen.join(" or "))
}

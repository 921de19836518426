//! Python strings → words: literals (plain, raw, f-strings whose fields are known), their
//! escapes, `+` and `SEP.join(...)` of them, with every character mapped to where it is written.

use super::eval::{named, Eval, Val};
use crate::extract::shell::{Chars, MappedWord};
use crate::source::Loc;
use tree_sitter::Node as Ts;

impl<'a> Eval<'a> {
    /// A string literal: plain, raw, or an f-string whose fields are known.
    pub(super) fn string(&self, n: Ts<'a>, d: usize) -> Val {
        let raw = self.text(n);
        let prefix: String = raw
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect::<String>()
            .to_ascii_lowercase();
        if prefix.contains('b') {
            return self.unknown(n);
        }
        let mut parts = Vec::new();
        for c in named(n) {
            match c.kind() {
                "string_content" if !prefix.contains('r') && self.text(c).contains('\\') => {
                    let text = unescape(self.text(c));
                    parts.push(Val::Str(MappedWord {
                        chars: mapped(&text, self.loc(c)),
                        loc: self.loc(c),
                        unresolved: Vec::new(),
                        defaulted: false,
                    }))
                }
                "string_content" => parts.push(Val::Str(MappedWord {
                    chars: Chars::verbatim(self.text(c), c.start_byte()),
                    loc: self.loc(c),
                    unresolved: Vec::new(),
                    defaulted: false,
                })),
                "escape_sequence" => {
                    let text = unescape(self.text(c));
                    parts.push(Val::Str(MappedWord {
                        chars: mapped(&text, self.loc(c)),
                        loc: self.loc(c),
                        unresolved: Vec::new(),
                        defaulted: false,
                    }))
                }
                "interpolation" => {
                    let plain = c.named_child_count() == 1;
                    match c.named_child(0).map(|e| self.at(e, d)) {
                        Some(v @ (Val::Str(_) | Val::Scalar(_) | Val::Defaulted(_))) if plain => {
                            parts.push(v)
                        }
                        _ => parts.push(self.unknown(c)),
                    }
                }
                _ => {}
            }
        }
        if parts.is_empty() {
            return Val::Str(MappedWord {
                chars: Chars::default(),
                loc: self.loc(n),
                unresolved: Vec::new(),
                defaulted: false,
            });
        }
        match concat_strings(&parts, self.loc(n)) {
            Some(Val::Str(w)) => Val::Str(MappedWord {
                loc: self.loc(n),
                ..w
            }),
            Some(v @ Val::Defaulted(_)) => v,
            _ => self.unknown(n),
        }
    }
}

/// An interpreter the file does not fix (`VLLM_PYTHON_BINARY -m vllm.entrypoints...`) runs
/// the module all the same: it is read as `python`, at its place.
pub fn interpreter_head(items: &mut [Val]) {
    let module_flag = matches!(items.get(1), Some(Val::Str(w)) if w.chars.as_str() == "-m");
    let unknown_head = match items.first() {
        Some(Val::Unknown(..)) => true,
        Some(Val::Str(w)) => !w.unresolved.is_empty(),
        _ => false,
    };
    if module_flag && unknown_head {
        let loc = items[0].loc();
        items[0] = Val::Str(MappedWord {
            chars: mapped("python", loc),
            loc,
            unresolved: Vec::new(),
            defaulted: false,
        });
    }
}

/// An expression as a finding shows it: one line, at most 60 characters.
pub fn shown(expr: &str) -> String {
    let one: String = expr.split_whitespace().collect::<Vec<_>>().join(" ");
    match one.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one,
    }
}

/// Every character of `text` mapped to all of `at` (text that is not written verbatim).
pub(super) fn mapped(text: &str, at: Loc) -> Chars {
    text.chars().map(|c| (c, at.start, at.end)).collect()
}

/// A name a shell reads as one variable for what the file does not fix (`self.model` →
/// `self_model`).
pub fn shell_name(expr: &str) -> String {
    let mut out = String::new();
    for c in expr.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if !(c == '_' && (out.is_empty() || out.ends_with('_'))) {
            out.push(c);
        }
    }
    let out: String = out.trim_end_matches('_').chars().take(40).collect();
    match out.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => out.to_string(),
        _ => format!("py_{out}"),
    }
}

/// Strings joined end to end; an unknown part becomes `${NAME}` (unresolved) in the result.
pub(super) fn concat_strings(parts: &[Val], loc: Loc) -> Option<Val> {
    if parts.iter().any(|p| matches!(p, Val::Defaulted(_))) {
        return super::defaults::concat(parts, loc, concat_strings);
    }
    let mut chars = Chars::default();
    let mut unresolved = Vec::new();
    for p in parts {
        match p {
            Val::Str(w) => {
                for (i, name) in &w.unresolved {
                    unresolved.push((chars.len() + i, name.clone()));
                }
                w.chars.iter().for_each(|c| chars.push(c));
            }
            Val::Scalar(s) => {
                let text = s.scalar_text()?;
                text.chars()
                    .for_each(|c| chars.push((c, s.loc.start, s.loc.end)));
            }
            Val::Unknown(expr, at) => {
                let name = shell_name(expr);
                unresolved.push((chars.len(), name.clone()));
                format!("${{{name}}}")
                    .chars()
                    .for_each(|c| chars.push((c, at.start, at.end)));
            }
            _ => return None,
        }
    }
    Some(Val::Str(MappedWord {
        chars,
        loc,
        unresolved,
        defaulted: false,
    }))
}

/// The items that are not `*splats` of unknown lists, and those splats (any number of words,
/// flags among them: they are `INP004` on the launch, not words an engine parser would take
/// for positionals).
pub fn without_splats(items: Vec<Val>) -> (Vec<Val>, Vec<(String, Loc)>) {
    let (splats, kept): (Vec<Val>, Vec<Val>) =
        items.into_iter().partition(|v| matches!(v, Val::Splat(..)));
    let splats = splats
        .into_iter()
        .filter_map(|v| match v {
            Val::Splat(expr, at) => Some((expr, at)),
            _ => None,
        })
        .collect();
    (kept, splats)
}

/// `SEP.join(items)`.
pub(super) fn join(sep: &MappedWord, items: &[Val], loc: Loc) -> Option<Val> {
    let mut items = items.to_vec();
    interpreter_head(&mut items);
    let mut parts = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            parts.push(Val::Str(sep.clone()));
        }
        parts.push(item.clone());
    }
    concat_strings(&parts, loc)
}

/// Python's common escapes (`\n`, `\t`, `\\`, quotes); others stay as written.
pub(super) fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(q @ ('\\' | '\'' | '"')) => out.push(q),
            Some('\n') => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

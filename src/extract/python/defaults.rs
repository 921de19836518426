//! Caller defaults: `os.environ.get("CTX", 32768)` where the environment does not fix `CTX`, or
//! an argparse option's `default=` (`cli`). The default is what runs when the caller sets
//! nothing, so it is listed and planned with, as `${CTX:-32768}` in a script is
//! (`extract::shell`); the launch's argument keeps a name that says who decides
//! ([`crate::launch::Arg::defaulted`]), and INP004 still refuses the launch.
//!
//! A default survives what the reader computes from known values (`int(...)`, `str(...)`,
//! f-strings, `+` and other arithmetic, `" ".join(...)`); joined with a value the file does not
//! fix, it is unknown as that value is.

use super::eval::{Eval, Val};
use super::strings::shell_name;
use crate::extract::shell::{Chars, MappedWord};
use crate::source::Loc;
use crate::yaml::{Node, Value};

/// A value the file fixes only as a default the caller may override.
#[derive(Debug, Clone)]
pub struct CallerDefault {
    /// What runs when the caller sets nothing: a string or a number the file fixes.
    pub value: Val,
    /// Who decides, one name each (`CTX ("32768" unless set by the caller)`).
    pub why: Vec<String>,
    /// The value as a shell reads a caller's default (`${CTX:-32768}`), for a command line run
    /// by a shell (`os.system(f"... {CTX}")`): the shell reader marks it as its own default.
    pub shell: Chars,
}

impl<'a> Eval<'a> {
    /// `value`, the default of the variable or option `name`, said as `why`, standing at `at`;
    /// `None` when the value is not one the file fixes (a `None` default is no value to run
    /// with).
    pub(super) fn caller_default(
        &self,
        value: Val,
        name: &str,
        why: impl FnOnce(&str) -> String,
        at: Loc,
    ) -> Option<Val> {
        let (value, mut inner, _) = split(value);
        let text = text(&value)?;
        let why = why(&text);
        let value = relocated(value, at);
        let mut whys = vec![why];
        whys.append(&mut inner);
        self.defaults.borrow_mut().extend(whys.iter().cloned());
        Some(Val::Defaulted(Box::new(CallerDefault {
            shell: shell_form(name, &text, at),
            value,
            why: whys,
        })))
    }

    /// Whether every name in `names` is a caller's default's.
    pub(super) fn all_defaults(&self, names: &[String]) -> bool {
        let known = self.defaults.borrow();
        !names.is_empty() && names.iter().all(|n| known.contains(n))
    }
}

/// A value and the defaults it holds: the value as written when the caller sets nothing, the
/// names, and its shell form.
pub(super) fn split(v: Val) -> (Val, Vec<String>, Option<Chars>) {
    match v {
        Val::Defaulted(d) => (d.value, d.why, Some(d.shell)),
        v => (v, Vec::new(), None),
    }
}

/// `f` applied to the defaults' values: a known result keeps their names; anything else is what
/// `f` gives (unknown).
pub(super) fn lift(args: Vec<Val>, f: impl FnOnce(Vec<Val>) -> Val) -> Val {
    let mut whys = Vec::new();
    let plain = args
        .into_iter()
        .map(|a| {
            let (v, mut w, _) = split(a);
            whys.append(&mut w);
            v
        })
        .collect();
    let out = f(plain);
    wrap(out, whys)
}

/// `v` marked as holding the caller's defaults named by `whys`, when it is known.
fn wrap(v: Val, whys: Vec<String>) -> Val {
    if whys.is_empty() {
        return v;
    }
    let Some(text) = text(&v) else {
        return v;
    };
    let name = whys
        .first()
        .and_then(|w| w.split_whitespace().next())
        .map(shell_name)
        .unwrap_or_default();
    let at = v.loc();
    Val::Defaulted(Box::new(CallerDefault {
        shell: shell_form(&name, &text, at),
        value: v,
        why: whys,
    }))
}

/// Strings joined end to end (`join` of the defaults' values): known with the defaults' names
/// where every other part is known. Else unknown as the other parts are, written with the
/// defaults' shell forms (a shell that runs it reads `${CTX:-32768}`, never a bare 32768).
pub(super) fn concat(
    parts: &[Val],
    loc: Loc,
    join: impl Fn(&[Val], Loc) -> Option<Val>,
) -> Option<Val> {
    let mut whys = Vec::new();
    let (mut plain, mut shell) = (Vec::new(), Vec::new());
    for p in parts {
        let (v, mut w, form) = split(p.clone());
        whys.append(&mut w);
        shell.push(match form {
            Some(chars) => Val::Str(MappedWord {
                chars,
                loc: v.loc(),
                unresolved: Vec::new(),
                defaulted: false,
            }),
            None => v.clone(),
        });
        plain.push(v);
    }
    let out = join(&plain, loc)?;
    let Some(Val::Str(shell)) = join(&shell, loc) else {
        return Some(wrap(out, whys));
    };
    if text(&out).is_none() {
        return Some(Val::Str(shell));
    }
    Some(Val::Defaulted(Box::new(CallerDefault {
        value: out,
        why: whys,
        shell: shell.chars,
    })))
}

/// Whether `v` is a string, known, unknown or a caller's default.
pub(super) fn is_text(v: &Val) -> bool {
    match v {
        Val::Str(_) | Val::Unknown(..) => true,
        Val::Defaulted(c) => matches!(c.value, Val::Str(_)),
        _ => false,
    }
}

/// The text of a string or number the file fixes (not `None`).
pub(super) fn text(v: &Val) -> Option<String> {
    match v {
        Val::Str(w) if w.unresolved.is_empty() => Some(w.chars.as_str().to_string()),
        Val::Scalar(n) if n.value != Value::Null => n.scalar_text(),
        _ => None,
    }
}

fn relocated(v: Val, at: Loc) -> Val {
    match v {
        Val::Str(w) => Val::Str(MappedWord { loc: at, ..w }),
        Val::Scalar(n) => Val::Scalar(Node { loc: at, ..n }),
        v => v,
    }
}

/// `${NAME:-text}` where a shell reads the text back as written, else `${NAME}` (unknown to the
/// shell as to the reader); every character at `at`.
fn shell_form(name: &str, text: &str, at: Loc) -> Chars {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-/:@+=,".contains(c))
        && !text.is_empty();
    let name = shell_name(name);
    let form = if plain {
        format!("${{{name}:-{text}}}")
    } else {
        format!("${{{name}}}")
    };
    form.chars().map(|c| (c, at.start, at.end)).collect()
}

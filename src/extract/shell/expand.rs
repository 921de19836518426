//! Expansion: words → argv fields, with the script's variables substituted, quotes removed and
//! unquoted expansions split, every character still mapped to the bytes it was written at.

use super::budget::Budget;
use super::chars::Chars;
use super::lex::{Ch, ParamOp, Part, Word, MAX_DEPTH};
use super::textpipe::{self, Output};
use crate::launch::Arg;
use crate::source::{FileId, Loc};
use std::borrow::Cow;
use std::rc::Rc;

/// One argv word after expansion: its characters (mapped to the file), its span as written and
/// the variables it still contains.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub chars: Chars,
    pub loc: Loc,
    /// Unresolved variables, by the index of the character where their reference starts.
    pub names: Vec<(usize, String)>,
    /// The whole word was an unknown expansion, which may hold any flag: `Many` for `"$@"`-like
    /// expansions (any number of words), `Words` for an unknown `$EXTRA_ARGS` or `"$ARGS"`
    /// (words, or one flag's value when it follows an option). Boxed: most fields have none, and
    /// a padded argv holds 100,000s of fields.
    pub splat: Option<Box<(String, Splat)>>,
    /// The names (by character index) that are a variable with a default the caller may override
    /// (`${CTX:-32768}`): their characters are what runs when the caller sets none.
    pub defaults: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Splat {
    Many,
    Words,
}

impl Field {
    pub fn text(&self) -> String {
        self.chars.as_str().to_string()
    }

    pub fn as_str(&self) -> &str {
        self.chars.as_str()
    }

    pub fn from_chars(chars: &[Ch], loc: Loc) -> Self {
        Field {
            chars: chars.iter().map(|ch| (ch.c, ch.start, ch.end)).collect(),
            loc,
            names: Vec::new(),
            splat: None,
            defaults: Vec::new(),
        }
    }

    /// The characters as lexer input (a string a shell reads again).
    pub fn lexer_chars(&self) -> Vec<Ch> {
        self.chars
            .iter()
            .map(|(c, start, end)| Ch {
                c,
                start,
                end,
                quoted: false,
            })
            .collect()
    }

    /// The names left in the field, each once, in order (a set, not a search per name: a doubled
    /// variable may leave 100,000s of them).
    pub fn unresolved(&self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        self.names
            .iter()
            .filter(|(_, name)| seen.insert(name.as_str()))
            .map(|(_, name)| name.clone())
            .collect()
    }

    /// The characters from `skip` on (the value of `NAME=value`).
    pub fn tail(&self, skip: usize) -> Field {
        let names = self
            .names
            .iter()
            .filter(|(i, _)| *i >= skip)
            .map(|(i, n)| (i - skip, n.clone()))
            .collect::<Vec<_>>();
        Field {
            chars: self.chars.tail(skip),
            loc: self.loc,
            defaults: self
                .defaults
                .iter()
                .filter(|i| **i >= skip)
                .map(|i| i - skip)
                .collect(),
            names,
            splat: None,
        }
    }

    /// Every name left is a caller's default ([`Arg::defaulted`]).
    pub fn defaulted(&self) -> bool {
        !self.names.is_empty() && self.names.iter().all(|(i, _)| self.is_default(*i))
    }

    /// The name at character `i` is a caller's default.
    pub fn is_default(&self, i: usize) -> bool {
        self.defaults.contains(&i)
    }

    /// [`Field::arg`], the text moved rather than copied.
    pub fn into_arg(self) -> Arg {
        Arg {
            unresolved: self.unresolved(),
            defaulted: self.defaulted(),
            text: self.chars.into_string(),
            loc: self.loc,
        }
    }

    pub fn arg(&self) -> Arg {
        Arg {
            text: self.text(),
            loc: self.loc,
            unresolved: self.unresolved(),
            defaulted: self.defaulted(),
        }
    }
}

/// What a variable holds at some point of the script.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Scalar(Field),
    Array(Vec<Field>),
    /// Not known here; the text says why (`CTX (8192 or 131072, set in different branches)`).
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    pub name: String,
    pub value: Value,
    pub exported: bool,
    /// Set differently on the paths through `if`/`case` compounds, every path's value known:
    /// `value` is then `Unknown`, and a command using the variable is read once per path.
    pub alts: Option<Rc<[Alt]>>,
}

/// The value a variable holds on one path: the branch each compound took (by the compound's id
/// and the branch's index), and the value at its end.
#[derive(Debug, Clone, PartialEq)]
pub struct Alt {
    pub path: Vec<(u32, usize)>,
    pub value: Value,
}

/// The variables of one shell, and whether variables it does not set may come from outside
/// (a script run by someone: yes; a container whose whole env is written down: no).
#[derive(Debug, Clone)]
pub struct Scope {
    pub file: FileId,
    pub vars: Vec<Var>,
    pub open_env: bool,
    /// Every assignment's previous value, so a branch's assignments can be undone.
    journal: Vec<(String, Option<Var>)>,
    /// What this read may still spend; shared with the shells it starts.
    pub budget: Budget,
}

/// A character of an expanded word; `split` marks text from an unquoted expansion (field
/// splitting), `brk` a boundary between the elements of `"$@"`-like expansions.
#[derive(Clone)]
struct Piece {
    ch: (char, usize, usize),
    split: bool,
    brk: bool,
    unresolved: Option<String>,
    /// `unresolved` names a variable whose default follows (`${CTX:-32768}`).
    default: bool,
}

/// The characters a word expands to, and whether any of it was quoted (`""` is an empty word).
#[derive(Default)]
struct Expansion {
    pieces: Vec<Piece>,
    quoted: bool,
    /// An expansion of unknown length (`$@`, an unset `$ARGS` unquoted), by its name.
    splat: Option<(String, Splat)>,
    /// Some text came from a literal or a known value.
    fixed: bool,
    /// `"${A[@]}"` of an empty array: no field at all, even though quoted.
    vanish: bool,
}

impl Scope {
    pub fn loc(&self, (start, end): (usize, usize)) -> Loc {
        Loc::new(self.file, start..end)
    }

    pub fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().rev().find(|v| v.name == name)
    }

    pub fn new(file: FileId, open_env: bool) -> Self {
        Scope {
            file,
            vars: Vec::new(),
            open_env,
            journal: Vec::new(),
            budget: Budget::for_input(0),
        }
    }

    pub fn set(&mut self, name: &str, value: Value, export: bool) {
        self.set_alts(name, value, export, None);
    }

    /// [`Scope::set`], with the values the variable holds on each path ([`Var::alts`]).
    pub fn set_alts(&mut self, name: &str, value: Value, export: bool, alts: Option<Rc<[Alt]>>) {
        let at = self.vars.iter().rposition(|v| v.name == name);
        let old = at.map(|i| self.vars.remove(i));
        let exported = export || old.as_ref().is_some_and(|v| v.exported);
        self.journal.push((name.to_string(), old));
        self.vars.push(Var {
            name: name.to_string(),
            value,
            exported,
            alts,
        });
    }

    /// A point to undo assignments back to.
    pub fn mark(&self) -> usize {
        self.journal.len()
    }

    /// Undoes the assignments since `mark`; returns the names they set, with the values they had
    /// just before the undo (the end of a branch).
    pub fn undo(&mut self, mark: usize) -> Vec<(String, Option<Var>)> {
        let mut ends: Vec<(String, Option<Var>)> = Vec::new();
        while self.journal.len() > mark {
            let Some((name, old)) = self.journal.pop() else {
                break;
            };
            if !ends.iter().any(|(n, _)| *n == name) {
                ends.push((name.clone(), self.var(&name).cloned()));
            }
            self.vars.retain(|v| v.name != name);
            self.vars.extend(old);
        }
        ends
    }

    /// `$1`..`$9` of a shell given its arguments (`sh -c SCRIPT NAME ARGS...`).
    fn positional(&self, name: &str) -> Option<Field> {
        let n: usize = name.parse().ok().filter(|&n| n > 0)?;
        match &self.var("@")?.value {
            Value::Array(items) => items.get(n - 1).cloned(),
            _ => None,
        }
    }

    /// `NAME=value` or `NAME=(a b)` with an unquoted name: the name and the expanded value.
    pub fn assignment(&mut self, w: &Word) -> Option<(String, Value)> {
        let Some(Part::Lit(chs)) = w.parts.first() else {
            return None;
        };
        let eq = chs.iter().position(|ch| ch.c == '=' && !ch.quoted)?;
        let name: String = chs[..eq].iter().map(|ch| ch.c).collect();
        if !is_identifier(&name) || chs[..eq].iter().any(|ch| ch.quoted) {
            return None;
        }
        if let [_, Part::Array(items)] = w.parts.as_slice() {
            let fields = items.iter().flat_map(|i| self.expand(i, true)).collect();
            return Some((name, Value::Array(fields)));
        }
        let mut parts = w.parts.clone();
        parts[0] = Part::Lit(chs[eq + 1..].to_vec());
        let value = Word { parts, loc: w.loc };
        let field = self
            .expand(&value, false)
            .into_iter()
            .next()
            .unwrap_or_else(|| Field::from_chars(&[], self.loc(w.loc)));
        // `W=$(nvidia-smi -L | wc -l)`: the value is only known when the script runs, so `$W`
        // unquoted is unknown words, never the words of the substitution's own text.
        if let [(0, why)] = field.names.as_slice() {
            if field.as_str() == why && is_substitution(why) {
                return Some((name, Value::Unknown(why.clone())));
            }
        }
        Some((name, Value::Scalar(field)))
    }

    /// Word expansion: parameters substituted, quotes removed, unquoted expansions field-split.
    pub fn expand(&mut self, w: &Word, split: bool) -> Vec<Field> {
        let mut exp = Expansion::default();
        self.expand_parts(&w.parts, split, &mut exp, 0);
        let loc = self.loc(w.loc);
        let mut fields = Vec::new();
        let mut cur: Vec<Piece> = Vec::new();
        for p in exp.pieces {
            if p.brk {
                fields.push(field_of(std::mem::take(&mut cur), loc));
            } else if p.split && p.ch.0.is_whitespace() {
                if !cur.is_empty() {
                    fields.push(field_of(std::mem::take(&mut cur), loc));
                }
            } else {
                cur.push(p);
            }
        }
        let empty_word = fields.is_empty() && exp.quoted && !exp.vanish && exp.splat.is_none();
        if !cur.is_empty() || empty_word {
            fields.push(field_of(cur, loc));
        }
        if let (Some(name), false) = (exp.splat, exp.fixed) {
            if fields.is_empty() {
                fields.push(field_of(Vec::new(), loc));
            }
            for f in &mut fields {
                f.splat = Some(Box::new(name.clone()));
            }
        }
        fields
    }

    fn expand_parts(&mut self, parts: &[Part], split: bool, exp: &mut Expansion, depth: usize) {
        for part in parts {
            if !self.budget.step(part_span(part)) {
                return;
            }
            match part {
                Part::Lit(chs) => {
                    if !self.budget.bytes(chs.len(), part_span(part)) {
                        return;
                    }
                    exp.quoted |= chs.is_empty() || chs.iter().any(|ch| ch.quoted);
                    exp.fixed |= !chs.is_empty();
                    exp.pieces.extend(chs.iter().map(|ch| Piece {
                        ch: (ch.c, ch.start, ch.end),
                        split: false,
                        brk: false,
                        unresolved: None,
                        default: false,
                    }));
                }
                Part::Param {
                    name,
                    op,
                    raw,
                    quoted: q,
                } => {
                    exp.quoted |= *q;
                    self.expand_param(name, op, raw, split && !q, exp, depth);
                }
                Part::Subst { raw } => {
                    let output = match self.arithmetic(raw) {
                        Some(n) => Some(Output {
                            text: n.to_string(),
                            default: None,
                        }),
                        None => textpipe::output(self, raw, split),
                    };
                    match output {
                        Some(output) => push_output(exp, output, part_span(part)),
                        None => push_unresolved(
                            &mut exp.pieces,
                            raw,
                            raw.iter().map(|ch| ch.c).collect(),
                        ),
                    }
                }
                // An array literal outside an assignment (`f=(a b)` as an argument) is no argv text.
                Part::Array(_) => {}
            }
        }
    }

    /// `$((EXPR))` whose variables the script fixes to integers: its value.
    fn arithmetic(&self, raw: &[Ch]) -> Option<i64> {
        let text: String = raw.iter().map(|ch| ch.c).collect();
        let expr = text.strip_prefix("$((")?.strip_suffix("))")?;
        let var = |name: &str| match &self.var(name)?.value {
            Value::Scalar(f) if f.names.is_empty() => f.as_str().trim().parse().ok(),
            _ => None,
        };
        super::arith::eval(expr, &var)
    }

    /// `$NAME` and `${NAME...}`: the known value, the default word, or the reference as written.
    fn expand_param(
        &mut self,
        name: &str,
        op: &ParamOp,
        raw: &[Ch],
        split: bool,
        exp: &mut Expansion,
        depth: usize,
    ) {
        let span = (
            raw.first().map_or(0, |c| c.start),
            raw.last().map_or(0, |c| c.end),
        );
        // Charged before the copy: a doubled variable is refused before it is cloned.
        let size = self.var(name).map_or(0, |v| value_len(&v.value));
        if !self.budget.bytes(size, span) {
            return push_unresolved(&mut exp.pieces, raw, name.to_string());
        }
        let known = self.var(name).map(|v| v.value.clone());
        match (op, known) {
            (ParamOp::All, Some(Value::Array(items))) => {
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        exp.pieces.push(brk());
                    }
                    exp.fixed = true;
                    push_value(&mut exp.pieces, item, span, split);
                }
                exp.vanish |= items.is_empty();
            }
            (ParamOp::All, known) => {
                let label = match known {
                    Some(Value::Unknown(why)) => why,
                    _ if name == "@" || name == "*" => {
                        "the script's own arguments ($@)".to_string()
                    }
                    _ => format!("{name}[@]"),
                };
                exp.splat = Some((label.clone(), Splat::Many));
                push_unresolved(&mut exp.pieces, raw, label);
            }
            (ParamOp::Other, _) => match self.positional(name) {
                Some(value) => {
                    exp.fixed = true;
                    push_value(&mut exp.pieces, &value, span, split)
                }
                None => {
                    // `${REV:+--revision "$REV"}` unquoted is no word or several, never one
                    // positional argument.
                    if split && is_alternate(raw) {
                        exp.splat = Some((name.to_string(), Splat::Words));
                    }
                    push_unresolved(&mut exp.pieces, raw, name.to_string())
                }
            },
            (
                ParamOp::Default {
                    colon,
                    assign,
                    word,
                },
                value,
            ) if depth < MAX_DEPTH && value.as_ref().is_none_or(|v| *colon && is_empty(v)) => {
                let from = exp.pieces.len();
                self.expand_parts(word, split, exp, depth + 1);
                // Said in a message: the first 80 characters are enough to recognise it.
                let mut default: String =
                    exp.pieces[from..].iter().take(80).map(|p| p.ch.0).collect();
                if exp.pieces.len() - from > 80 {
                    default.push('…');
                }
                if value.is_none() && self.open_env {
                    // The caller may set it: the default is only what runs when nobody does.
                    let why = format!("{name} (\"{default}\" unless set by the caller)");
                    if let Some(first) = exp.pieces.get_mut(from) {
                        // `${CTX:-$FALLBACK}`: a default that is itself unknown is none.
                        first.default = first.unresolved.is_none();
                        first.unresolved = Some(why.clone());
                    } else {
                        push_unresolved(&mut exp.pieces, raw, why.clone());
                    }
                    if *assign {
                        let value = field_of(exp.pieces[from..].to_vec(), self.loc(span));
                        self.set(name, Value::Scalar(value), false);
                    }
                } else if *assign {
                    let chars: Vec<Ch> = exp.pieces[from..]
                        .iter()
                        .map(|p| Ch {
                            c: p.ch.0,
                            start: p.ch.1,
                            end: p.ch.2,
                            quoted: false,
                        })
                        .collect();
                    let field = Field::from_chars(&chars, self.loc(span));
                    self.set(name, Value::Scalar(field), false);
                }
            }
            (_, Some(Value::Scalar(value))) => {
                exp.fixed = true;
                push_value(&mut exp.pieces, &value, span, split)
            }
            (_, Some(Value::Array(items))) => {
                // `$A` is the first element of an array.
                exp.fixed = true;
                if let Some(first) = items.first() {
                    push_value(&mut exp.pieces, first, span, split);
                }
            }
            (_, Some(Value::Unknown(why))) => {
                exp.splat = Some((why.clone(), Splat::Words));
                push_unresolved(&mut exp.pieces, raw, why)
            }
            (_, None) => {
                exp.splat = Some((name.to_string(), Splat::Words));
                push_unresolved(&mut exp.pieces, raw, name.to_string())
            }
        }
    }
}

/// What a value costs to copy, in characters: its text, and for an array a field's worth per
/// element (a doubled array of one-character elements grows by fields, not characters).
pub fn value_len(v: &Value) -> usize {
    const FIELD: usize = 64;
    // The unresolved names' texts are copied with the characters.
    let len =
        |f: &Field| f.chars.as_str().len() + f.names.iter().map(|(_, n)| n.len()).sum::<usize>();
    match v {
        Value::Scalar(f) => len(f),
        Value::Array(items) => items.iter().map(|f| len(f) + FIELD).sum(),
        Value::Unknown(why) => why.len(),
    }
}

/// The file bytes a part of a word was written at.
fn part_span(part: &Part) -> (usize, usize) {
    let chs: &[Ch] = match part {
        Part::Lit(chs) | Part::Param { raw: chs, .. } | Part::Subst { raw: chs } => chs,
        Part::Array(words) => return words.first().map_or((0, 0), |w| w.loc),
    };
    (
        chs.first().map_or(0, |c| c.start),
        chs.last().map_or(0, |c| c.end),
    )
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Scalar(f) => f.chars.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Unknown(_) => false,
    }
}

fn brk() -> Piece {
    Piece {
        ch: (' ', 0, 0),
        split: false,
        brk: true,
        unresolved: None,
        default: false,
    }
}

/// A known value, each character pointing at the reference that brought it in.
fn push_value(out: &mut Vec<Piece>, value: &Field, (start, end): (usize, usize), split: bool) {
    // The names are in character order: walked alongside, not searched per character.
    let mut sorted = Cow::Borrowed(&value.names[..]);
    if !sorted.is_sorted_by_key(|(at, _)| *at) {
        sorted.to_mut().sort_by_key(|(at, _)| *at);
    }
    let mut names = sorted.iter().peekable();
    for (i, ch) in value.chars.iter().enumerate() {
        while names.next_if(|(at, _)| *at < i).is_some() {}
        let unresolved = names.next_if(|(at, _)| *at == i).map(|(_, n)| n.clone());
        out.push(Piece {
            ch: (ch.0, start, end),
            split,
            brk: false,
            default: unresolved.is_some() && value.is_default(i),
            unresolved,
        });
    }
}

/// A substitution's known output (`$((2 * 4))`, `$(echo 0,1 | wc -l)`), each character pointing
/// at the substitution; the caller's default it came from, if any, named on the first.
fn push_output(exp: &mut Expansion, output: Output, (start, end): (usize, usize)) {
    exp.fixed = true;
    let mut default = output.default;
    exp.pieces.extend(output.text.chars().map(|c| {
        let unresolved = default.take();
        Piece {
            ch: (c, start, end),
            split: false,
            brk: false,
            default: unresolved.is_some(),
            unresolved,
        }
    }));
}

fn push_unresolved(out: &mut Vec<Piece>, raw: &[Ch], name: String) {
    let mut name = Some(name);
    out.extend(raw.iter().map(|ch| Piece {
        ch: (ch.c, ch.start, ch.end),
        split: false,
        brk: false,
        unresolved: name.take(),
        default: false,
    }));
}

fn field_of(pieces: Vec<Piece>, loc: Loc) -> Field {
    let names = pieces
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p.unresolved.clone()?)))
        .collect::<Vec<_>>();
    let defaults = pieces
        .iter()
        .enumerate()
        .filter_map(|(i, p)| (p.unresolved.is_some() && p.default).then_some(i))
        .collect();
    Field {
        chars: pieces.into_iter().map(|p| p.ch).collect(),
        loc,
        names,
        splat: None,
        defaults,
    }
}

/// `$(...)`, `$((...))` or a backquoted command, as written: its value is only known when the
/// script runs (an arithmetic one the script fixes was evaluated already).
fn is_substitution(text: &str) -> bool {
    (text.starts_with("$(") && text.ends_with(')'))
        || (text.len() > 1 && text.starts_with('`') && text.ends_with('`'))
}

/// `${NAME:+word}` / `${NAME+word}`: the word when NAME is set, else nothing (bash
/// "Parameter Expansion", `${parameter:+word}`).
fn is_alternate(raw: &[Ch]) -> bool {
    let text: String = raw.iter().take(MAX_NAME + 4).map(|ch| ch.c).collect();
    let Some(rest) = text.strip_prefix("${") else {
        return false;
    };
    let name_len = rest
        .find(|c: char| !super::lex::is_name_char(c))
        .unwrap_or(rest.len());
    let op = &rest[name_len..];
    name_len > 0 && (op.starts_with(":+") || op.starts_with('+'))
}

/// Longest variable name looked at when telling an alternate expansion from the others.
const MAX_NAME: usize = 256;

pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(super::lex::is_name_start) && chars.all(super::lex::is_name_char)
}

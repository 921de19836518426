//! Python expressions → values, following only what the file itself fixes: literals, names
//! assigned once in the enclosing function or at module level, `dict(...)`, `str(...)`,
//! `" ".join([...])`, `+` of strings and lists, f-strings and `*list` splats of such lists,
//! arithmetic and `int(...)` of numbers (`numbers`), a config object built by its class from
//! keywords as their mapping (`objects`), `self.attr` of a class attribute, env reads
//! of what the service's platform sets and the calls a platform names (`runtime`), a parameter
//! of a function called once in the file (`params`). A caller's default (an env read's or an
//! argparse option's) is [`Val::Defaulted`] (`defaults`). Anything else (an env read of the
//! caller's environment without a default, a value from another module) is [`Val::Unknown`] at
//! its span, never a guess.

use super::defaults::CallerDefault;
use super::runtime::Env;
use super::strings::{concat_strings, join, mapped, without_splats};
use crate::extract::shell::MappedWord;
use crate::source::{FileId, Loc, SourceFile};
use crate::yaml::{Node, Value};
use std::collections::HashMap;
use tree_sitter::Node as Ts;

/// How deep names and nested expressions are followed: past it a value is unknown (no
/// unbounded recursion on `a = b`, `b = a` or a 10,000-deep nested list).
const DEPTH: usize = 48;

/// A value as far as the file fixes it.
#[derive(Debug, Clone)]
pub enum Val {
    /// A string, each character mapped to the file bytes it was written at.
    Str(MappedWord),
    /// A number, `True`/`False` or `None`.
    Scalar(Node),
    List(Vec<Val>, Loc),
    Dict(Vec<(String, Loc, Val)>, Loc),
    /// What the file does not fix: the expression as written, and where.
    Unknown(String, Loc),
    /// `*expr` of an unknown list inside a list: any number of items.
    Splat(String, Loc),
    /// A string or number that runs when the caller sets nothing (`os.getenv("CTX", 4096)`).
    Defaulted(Box<CallerDefault>),
}

impl Val {
    pub fn loc(&self) -> Loc {
        match self {
            Val::Str(w) => w.loc,
            Val::Scalar(n) => n.loc,
            Val::List(_, l) | Val::Dict(_, l) | Val::Unknown(_, l) | Val::Splat(_, l) => *l,
            Val::Defaulted(c) => c.value.loc(),
        }
    }
}

/// The source and tree a value is read from.
pub struct Eval<'a> {
    pub file: FileId,
    pub src: &'a SourceFile,
    pub root: Ts<'a>,
    /// `*splats` of unknown lists left out of joined command lines, for `INP004` on the launch.
    pub dropped: std::cell::RefCell<Vec<(String, Loc)>>,
    /// Local names of imported modules and objects → their dotted path (`sgl` → `sglang`).
    pub imports: HashMap<String, String>,
    /// The environment the code being read runs with.
    pub env: std::cell::RefCell<Env>,
    /// The names of the caller's defaults read so far (`CTX ("32768" unless set by the caller)`).
    pub defaults: std::cell::RefCell<Vec<String>>,
}

impl<'a> Eval<'a> {
    pub fn text(&self, n: Ts) -> &'a str {
        self.src.text.get(n.byte_range()).unwrap_or("")
    }

    pub fn loc(&self, n: Ts) -> Loc {
        Loc::new(self.file, n.byte_range())
    }

    pub(super) fn unknown(&self, n: Ts) -> Val {
        Val::Unknown(self.text(n).to_string(), self.loc(n))
    }

    /// The value of expression `n`.
    pub fn value(&self, n: Ts<'a>) -> Val {
        self.at(n, 0)
    }

    pub(super) fn at(&self, n: Ts<'a>, depth: usize) -> Val {
        if depth > DEPTH {
            return self.unknown(n);
        }
        let d = depth + 1;
        let scalar = |v: Value| {
            Val::Scalar(Node {
                value: v,
                loc: self.loc(n),
            })
        };
        match n.kind() {
            "string" => self.string(n, d),
            "concatenated_string" => {
                let parts: Vec<Val> = named(n).map(|c| self.at(c, d)).collect();
                concat_strings(&parts, self.loc(n)).unwrap_or_else(|| self.unknown(n))
            }
            "integer" => self
                .text(n)
                .replace('_', "")
                .parse()
                .map_or_else(|_| self.unknown(n), |i| scalar(Value::Int(i))),
            "float" => self
                .text(n)
                .replace('_', "")
                .parse()
                .map_or_else(|_| self.unknown(n), |f| scalar(Value::Float(f))),
            "true" => scalar(Value::Bool(true)),
            "false" => scalar(Value::Bool(false)),
            "none" => scalar(Value::Null),
            "unary_operator" => self.negative(n, d),
            "parenthesized_expression" => match n.named_child(0) {
                Some(inner) => self.at(inner, d),
                None => self.unknown(n),
            },
            "list" | "tuple" => Val::List(self.items(n, d), self.loc(n)),
            "dictionary" => self.dictionary(n, d),
            "identifier" => self.name(n, d),
            "binary_operator" => self.plus(n, d),
            "call" => self.call(n, d),
            "attribute" => self.attribute(n, d),
            "subscript" => self.subscript(n, d),
            "conditional_expression" => self.conditional(n, d),
            _ => self.unknown(n),
        }
    }

    fn negative(&self, n: Ts<'a>, d: usize) -> Val {
        let op = n.child_by_field_name("operator").map(|o| self.text(o));
        let arg = n.child_by_field_name("argument").map(|a| self.at(a, d));
        match (op, arg) {
            (
                Some("-"),
                Some(Val::Scalar(Node {
                    value: Value::Int(i),
                    ..
                })),
            ) => Val::Scalar(Node {
                value: Value::Int(-i),
                loc: self.loc(n),
            }),
            (
                Some("-"),
                Some(Val::Scalar(Node {
                    value: Value::Float(f),
                    ..
                })),
            ) => Val::Scalar(Node {
                value: Value::Float(-f),
                loc: self.loc(n),
            }),
            _ => self.unknown(n),
        }
    }

    /// `a if c else b` whose condition the file fixes (`FAST_BOOT = False`): that branch.
    fn conditional(&self, n: Ts<'a>, d: usize) -> Val {
        let parts: Vec<Ts> = named(n).filter(|c| c.kind() != "comment").collect();
        let [then, cond, other] = parts[..] else {
            return self.unknown(n);
        };
        match truth(&self.at(cond, d)) {
            Some(true) => self.at(then, d),
            Some(false) => self.at(other, d),
            None => self.unknown(n),
        }
    }

    /// Items of a list or tuple; `*xs` of a known list adds its items.
    fn items(&self, n: Ts<'a>, d: usize) -> Vec<Val> {
        let mut out = Vec::new();
        for c in named(n).filter(|c| c.kind() != "comment") {
            if c.kind() == "list_splat" {
                match c.named_child(0).map(|x| self.at(x, d)) {
                    Some(Val::List(items, _)) => out.extend(items),
                    _ => out.push(Val::Splat(self.text(c).to_string(), self.loc(c))),
                }
            } else {
                out.push(self.at(c, d));
            }
        }
        out
    }

    fn dictionary(&self, n: Ts<'a>, d: usize) -> Val {
        let mut out = Vec::new();
        for pair in named(n) {
            let (Some(k), Some(v)) = (
                pair.child_by_field_name("key"),
                pair.child_by_field_name("value"),
            ) else {
                if pair.kind() == "dictionary_splat" {
                    return self.unknown(n);
                }
                continue;
            };
            match self.at(k, d) {
                Val::Str(key) => out.push((key.chars.into_string(), self.loc(k), self.at(v, d))),
                _ => return self.unknown(n),
            }
        }
        Val::Dict(out, self.loc(n))
    }

    /// A name bound once in the function that encloses `n` or at module level; a parameter, a
    /// name bound twice or not at all in this file is unknown.
    /// A class body's own names are seen in that body only, not in its methods.
    fn name(&self, n: Ts<'a>, d: usize) -> Val {
        let name = self.text(n);
        let mut scope = n.parent();
        let mut in_function = false;
        while let Some(s) = scope {
            let class = s.kind() == "class_definition" && !in_function;
            if s.kind() == "function_definition" || class {
                if let Some(v) = self.bound_in(s, name, n, d) {
                    return v;
                }
            }
            in_function |= s.kind() == "function_definition";
            scope = s.parent();
        }
        self.bound_in(self.root, name, n, d)
            .unwrap_or_else(|| self.unknown(n))
    }

    /// The value `name` is given in `scope` (a function or the module), not looking into nested
    /// functions or classes; `None` when the scope does not bind it. A list grown after its one
    /// binding (`x = x + more`, `x += more`, `x.extend(more)`) is that list and then any items.
    pub(super) fn bound_in(&self, scope: Ts<'a>, name: &str, at: Ts<'a>, d: usize) -> Option<Val> {
        if scope.kind() == "function_definition" {
            let params = scope.child_by_field_name("parameters")?;
            if binds_param(self, params, name) {
                return Some(self.parameter(scope, name, at, d));
            }
        }
        let (mut values, mut grown, mut items) = (Vec::new(), Vec::new(), Vec::new());
        let body = scope.child_by_field_name("body").unwrap_or(scope);
        let mut stack = vec![body];
        while let Some(s) = stack.pop() {
            for c in named(s) {
                match c.kind() {
                    "function_definition" | "class_definition" | "decorated_definition" => {}
                    "assignment" | "augmented_assignment" => {
                        let left = c.child_by_field_name("left").map(|l| self.text(l));
                        let right = c.child_by_field_name("right");
                        // `X = int(os.environ.get("X"))` names `X` in a string only.
                        let mentions = right.is_some_and(|r| {
                            super::nodes(r)
                                .any(|i| i.kind() == "identifier" && self.text(i) == name)
                        });
                        if left == Some(name) && (mentions || c.kind() != "assignment") {
                            grown.push(c);
                        } else if left.is_some_and(|l| item_of(l, name)) {
                            items.push(c);
                        } else if left == Some(name) {
                            values.push(right);
                        } else if left.is_some_and(|l| has_word(l, name)) {
                            values.push(self.unpacked(c, name));
                        }
                    }
                    "for_statement" | "with_statement"
                        if c.child_by_field_name("left")
                            .is_some_and(|l| has_word(self.text(l), name)) =>
                    {
                        values.push(None)
                    }
                    "call" if grows(self.text(c), name) => grown.push(c),
                    _ if stack.len() < DEPTH => stack.push(c),
                    _ => {}
                }
            }
        }
        let value = match values.as_slice() {
            [] => return None,
            [Some(v)] => self.at(*v, d),
            _ => return Some(self.unknown(at)),
        };
        let value = match value {
            Val::Dict(entries, loc) if !items.is_empty() => self.set_items(entries, loc, &items, d),
            v => v,
        };
        grown.sort_by_key(|g| g.start_byte());
        match (value, grown.first()) {
            (v, None) => Some(v),
            (Val::List(mut items, loc), Some(_)) => {
                // Growth the body always runs, with items the file fixes, is those items; the
                // first other (under an `if`, or unknown) may add any.
                for g in grown {
                    if self.never_runs(g, body, d) {
                        continue;
                    }
                    match self.growth(g, body, d) {
                        Some(more) => items.extend(more),
                        None => {
                            items.push(Val::Splat(self.text(g).to_string(), self.loc(g)));
                            break;
                        }
                    }
                }
                Some(Val::List(items, loc))
            }
            _ => Some(self.unknown(at)),
        }
    }

    /// Whether growth `g` never runs: it sits under an `if` of `body` whose condition the file
    /// fixes false (`MODEL_REVISION = None` … `if MODEL_REVISION: cmd.extend([...])`).
    fn never_runs(&self, g: Ts<'a>, body: Ts<'a>, d: usize) -> bool {
        let statement = g.parent().filter(|p| p.kind() == "expression_statement");
        statement.is_some_and(|s| self.fixed_branch(s, body, d) == Some(false))
    }

    /// Whether `statement`, in the first branch of an `if` that is a statement of `body`, runs:
    /// the condition's truth when the file fixes it, else `None`.
    fn fixed_branch(&self, statement: Ts<'a>, body: Ts<'a>, d: usize) -> Option<bool> {
        let block = statement.parent().filter(|b| b.kind() == "block")?;
        let branch = block.parent().filter(|i| i.kind() == "if_statement")?;
        if branch.child_by_field_name("consequence") != Some(block) || branch.parent() != Some(body)
        {
            return None;
        }
        truth(&self.at(branch.child_by_field_name("condition")?, d))
    }

    /// The items `x += [...]`, `x.extend([...])` or `x.append(v)` adds when it is a statement of
    /// `body` itself (not under an `if` or a loop) and the file fixes them.
    fn growth(&self, g: Ts<'a>, body: Ts<'a>, d: usize) -> Option<Vec<Val>> {
        let statement = g.parent().filter(|p| p.kind() == "expression_statement")?;
        if statement.parent() != Some(body) && self.fixed_branch(statement, body, d) != Some(true) {
            return None;
        }
        let (more, append) = match g.kind() {
            "augmented_assignment" => {
                let op = g.child_by_field_name("operator").map(|o| self.text(o));
                (op == Some("+=")).then_some(())?;
                (g.child_by_field_name("right")?, false)
            }
            "call" => {
                let f = self.text(g.child_by_field_name("function")?);
                let args = g.child_by_field_name("arguments")?;
                let [arg] = named(args).collect::<Vec<_>>()[..] else {
                    return None;
                };
                (arg, f.ends_with(".append"))
            }
            _ => return None,
        };
        match (self.at(more, d), append) {
            (v, true) if !matches!(v, Val::Unknown(..) | Val::Splat(..)) => Some(vec![v]),
            (Val::List(items, _), false) if !items.iter().any(|i| matches!(i, Val::Splat(..))) => {
                Some(items)
            }
            _ => None,
        }
    }

    /// A dict bound once and then given keys (`kw["load_format"] = fmt`, under an `if` too): each
    /// key set is in it with its value (the last one written); a key the file does not fix makes
    /// the whole dict unknown.
    fn set_items(
        &self,
        mut entries: Vec<(String, Loc, Val)>,
        loc: Loc,
        items: &[Ts<'a>],
        d: usize,
    ) -> Val {
        let mut items = items.to_vec();
        items.sort_by_key(|c| c.start_byte());
        for c in items {
            let (Some(left), Some(right)) = (
                c.child_by_field_name("left"),
                c.child_by_field_name("right"),
            ) else {
                continue;
            };
            let key = left.child_by_field_name("subscript").map(|k| self.at(k, d));
            let Some(Val::Str(key)) = key else {
                return Val::Unknown(self.text(left).to_string(), self.loc(left));
            };
            let key = key.chars.into_string();
            entries.retain(|(k, _, _)| *k != key);
            entries.push((key, self.loc(left), self.at(right, d)));
        }
        Val::Dict(entries, loc)
    }

    /// The value `name` takes in `a, b = x, y` (as many names as values, no `*rest`); any other
    /// unpacking is not followed.
    fn unpacked(&self, assignment: Ts<'a>, name: &str) -> Option<Ts<'a>> {
        let left = assignment.child_by_field_name("left")?;
        let right = assignment.child_by_field_name("right")?;
        let targets: Vec<Ts> = named(left).collect();
        let values: Vec<Ts> = named(right).collect();
        let plain = matches!(left.kind(), "pattern_list" | "tuple_pattern")
            && matches!(right.kind(), "expression_list" | "tuple")
            && targets.len() == values.len()
            && targets.iter().all(|t| t.kind() == "identifier");
        let i = targets.iter().position(|t| self.text(*t) == name)?;
        plain.then(|| values[i])
    }

    /// `a + b` of two strings, two lists or two numbers; other arithmetic of numbers.
    fn plus(&self, n: Ts<'a>, d: usize) -> Val {
        let op = n.child_by_field_name("operator").map(|o| self.text(o));
        let (Some(op), Some(l), Some(r)) = (
            op,
            n.child_by_field_name("left"),
            n.child_by_field_name("right"),
        ) else {
            return self.unknown(n);
        };
        let (a, b) = (self.at(l, d), self.at(r, d));
        if [&a, &b].iter().any(|v| matches!(v, Val::Defaulted(_))) {
            // Strings joined keep each default's place (a shell reads `${CTX:-32768}`).
            if op == "+" && [&a, &b].iter().all(|v| super::defaults::is_text(v)) {
                return concat_strings(&[a, b], self.loc(n)).unwrap_or_else(|| self.unknown(n));
            }
            return super::defaults::lift(vec![a, b], |v| match <[Val; 2]>::try_from(v) {
                Ok([a, b]) => self.combine(n, op, a, b),
                Err(_) => self.unknown(n),
            });
        }
        self.combine(n, op, a, b)
    }

    /// `a OP b` of two values the file fixes.
    fn combine(&self, n: Ts<'a>, op: &str, a: Val, b: Val) -> Val {
        if op != "+" {
            return super::numbers::arith(op, &a, &b, self.loc(n))
                .unwrap_or_else(|| self.unknown(n));
        }
        match (a, b) {
            (a @ Val::Scalar(_), b @ Val::Scalar(_)) => {
                super::numbers::arith("+", &a, &b, self.loc(n)).unwrap_or_else(|| self.unknown(n))
            }
            (Val::List(mut a, _), Val::List(b, _)) => {
                a.extend(b);
                Val::List(a, self.loc(n))
            }
            (a @ (Val::Str(_) | Val::Unknown(..)), b @ (Val::Str(_) | Val::Unknown(..))) => {
                concat_strings(&[a, b], self.loc(n)).unwrap_or_else(|| self.unknown(n))
            }
            _ => self.unknown(n),
        }
    }

    /// `dict(k=v)`, `dict(d, k=v)`, `int(x)`, `str(x)`, `SEP.join(list)`, `shlex.split(s)`, and
    /// what `runtime` reads (env reads, the calls a platform names); any other call is unknown.
    fn call(&self, n: Ts<'a>, d: usize) -> Val {
        let (Some(f), Some(args)) = (
            n.child_by_field_name("function"),
            n.child_by_field_name("arguments"),
        ) else {
            return self.unknown(n);
        };
        let positional: Vec<Ts> = named(args)
            .filter(|a| !matches!(a.kind(), "keyword_argument" | "comment"))
            .collect();
        if let Some(v) = self.runtime_call(n, f, args, &positional, d) {
            return v;
        }
        match (f.kind(), self.text(f)) {
            ("identifier", "dict") if positional.len() <= 1 => {
                let base = match positional.first().map(|p| self.at(*p, d)) {
                    None => Some(Vec::new()),
                    Some(Val::Dict(entries, _)) => Some(entries),
                    Some(_) => None,
                };
                let (entries, complete) = self.keywords(args, d);
                match base {
                    Some(mut base) if complete => {
                        base.retain(|(k, _, _)| !entries.iter().any(|(e, _, _)| e == k));
                        base.extend(entries);
                        Val::Dict(base, self.loc(n))
                    }
                    _ => self.unknown(n),
                }
            }
            ("identifier", conv @ ("int" | "str" | "list" | "tuple")) if positional.len() == 1 => {
                super::defaults::lift(vec![self.at(positional[0], d)], |v| {
                    let v = v.into_iter().next();
                    let done = match (conv, v) {
                        ("int", v) => v.and_then(super::numbers::int),
                        (_, Some(Val::Scalar(s))) => Some(Val::Str(MappedWord {
                            chars: mapped(&s.scalar_text().unwrap_or_default(), s.loc),
                            loc: s.loc,
                            unresolved: Vec::new(),
                            defaulted: false,
                        })),
                        (_, v) => v.filter(|v| matches!(v, Val::Str(_) | Val::List(..))),
                    };
                    done.unwrap_or_else(|| self.unknown(n))
                })
            }
            ("attribute", text) if text.ends_with(".join") && positional.len() == 1 => {
                let sep = f.child_by_field_name("object").map(|o| self.at(o, d));
                match (sep, self.at(positional[0], d)) {
                    (Some(Val::Str(sep)), Val::List(items, _)) => {
                        let (kept, dropped) = without_splats(items);
                        self.dropped.borrow_mut().extend(dropped);
                        join(&sep, &kept, self.loc(n)).unwrap_or_else(|| self.unknown(n))
                    }
                    _ => self.unknown(n),
                }
            }
            ("attribute", "shlex.split") if positional.len() == 1 => {
                match self.at(positional[0], d) {
                    Val::Str(w) if w.unresolved.is_empty() => Val::List(
                        crate::extract::shell::split_words(self.file, &w)
                            .into_iter()
                            .map(Val::Str)
                            .collect(),
                        self.loc(n),
                    ),
                    _ => self.unknown(n),
                }
            }
            (_, callee) if super::objects::is_class(callee) => {
                self.object(n, args, d).unwrap_or_else(|| self.unknown(n))
            }
            _ => self.unknown(n),
        }
    }

    /// A call's keyword arguments by name (`**d` of a known dict adds its entries), and whether
    /// every one is known by name (a `**kw` of an unknown mapping may add any).
    pub fn keywords(&self, args: Ts<'a>, d: usize) -> (Vec<(String, Loc, Val)>, bool) {
        let mut out = Vec::new();
        let mut complete = true;
        for a in named(args) {
            match a.kind() {
                "keyword_argument" => {
                    let (Some(k), Some(v)) = (
                        a.child_by_field_name("name"),
                        a.child_by_field_name("value"),
                    ) else {
                        continue;
                    };
                    out.push((self.text(k).to_string(), self.loc(k), self.at(v, d)));
                }
                "dictionary_splat" => match a.named_child(0).map(|x| self.at(x, d)) {
                    Some(Val::Dict(entries, _)) => out.extend(entries),
                    _ => complete = false,
                },
                _ => {}
            }
        }
        (out, complete)
    }
}

/// Whether `text` holds `name` as a whole word.
fn has_word(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        let before = text[..i].chars().next_back().is_none_or(|c| !ident(c));
        let after = text[i + name.len()..]
            .chars()
            .next()
            .is_none_or(|c| !ident(c));
        before && after
    })
}

/// Whether an assignment's left side is an item of `name` (`name["key"]`).
fn item_of(left: &str, name: &str) -> bool {
    left.strip_prefix(name)
        .is_some_and(|rest| rest.starts_with('[') && rest.ends_with(']'))
}

/// Python's truth of a value the file fixes; `None` where it does not.
fn truth(v: &Val) -> Option<bool> {
    match v {
        Val::Str(w) if w.unresolved.is_empty() => Some(!w.chars.as_str().is_empty()),
        Val::Scalar(n) => match &n.value {
            Value::Bool(b) => Some(*b),
            Value::Int(i) => Some(*i != 0),
            Value::Float(f) => Some(*f != 0.0),
            Value::Null => Some(false),
            _ => None,
        },
        Val::List(items, _) if items.iter().all(|i| !matches!(i, Val::Splat(..))) => {
            Some(!items.is_empty())
        }
        Val::Dict(entries, _) => Some(!entries.is_empty()),
        _ => None,
    }
}

/// `name.extend(...)`, `name.append(...)`, `name.insert(...)`.
fn grows(call: &str, name: &str) -> bool {
    [".extend(", ".append(", ".insert(", ".__iadd__("]
        .iter()
        .any(|m| call.starts_with(&format!("{name}{m}")))
}

fn binds_param(e: &Eval, params: Ts, name: &str) -> bool {
    named(params).any(|p| {
        let id = if p.kind() == "identifier" {
            Some(p)
        } else {
            p.child_by_field_name("name").or_else(|| p.named_child(0))
        };
        id.is_some_and(|i| e.text(i) == name)
    })
}

/// Named children of `n`, in order.
pub fn named(n: Ts) -> impl Iterator<Item = Ts> {
    (0..n.named_child_count()).filter_map(move |i| n.named_child(i as u32))
}

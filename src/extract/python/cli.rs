//! The file's own command line: `parser = argparse.ArgumentParser()`, its `add_argument` calls
//! and `args = parser.parse_args()` (or `known, rest = parser.parse_known_args()`). An option
//! read as `args.model` is its `default=` as a caller's default (`defaults`): what runs when the
//! caller passes no `--model`. An option with no default, or `required=True`, is unknown.

use super::eval::{named, Eval, Val};
use super::{nodes, qualified};
use tree_sitter::Node as Ts;

/// The calls that parse the command line, and whether they return `(namespace, rest)`.
const PARSE: &[(&str, bool)] = &[("parse_args", false), ("parse_known_args", true)];

impl<'a> Eval<'a> {
    /// `parser.parse_args()` of an `argparse.ArgumentParser` the file builds: the options with a
    /// default, by dest (`parse_known_args()`: that and the rest, unknown); `None` for other
    /// calls.
    pub(super) fn parsed_args(
        &self,
        call: Ts<'a>,
        f: Ts<'a>,
        positional: &[Ts<'a>],
        d: usize,
    ) -> Option<Val> {
        let method = self.text(f.child_by_field_name("attribute")?);
        let (_, pair) = PARSE.iter().find(|(m, _)| *m == method)?;
        let parser = f.child_by_field_name("object")?;
        let args = call.child_by_field_name("arguments")?;
        // `parse_args(["--model", "x"])` parses that list, not the caller's command line.
        if !positional.is_empty() || named(args).next().is_some() || parser.kind() != "identifier" {
            return None;
        }
        let options = self.options(self.text(parser), d)?;
        let namespace = Val::Dict(options, self.loc(call));
        Some(match pair {
            true => Val::List(vec![namespace, self.unknown(call)], self.loc(call)),
            false => namespace,
        })
    }

    /// `args.name` of a namespace `parse_args` gives; `None` where `obj` is no such namespace.
    pub(super) fn option(&self, n: Ts<'a>, obj: Ts<'a>, attr: Ts<'a>, d: usize) -> Option<Val> {
        let name = self.text(attr);
        let options = match self.namespace_call(obj) {
            Some(call) => match self.at(call, d) {
                Val::List(mut items, _) if !items.is_empty() => items.swap_remove(0),
                v => v,
            },
            None if obj.kind() == "identifier" => self.at(obj, d),
            None => return None,
        };
        let Val::Dict(entries, at) = options else {
            return None;
        };
        let from_parse = super::place::node_at(self, at)
            .filter(|c| c.kind() == "call")
            .and_then(|c| c.child_by_field_name("function"))
            .and_then(|f| f.child_by_field_name("attribute"))
            .is_some_and(|m| PARSE.iter().any(|(p, _)| *p == self.text(m)));
        if !from_parse {
            return None;
        }
        // `args.model = ...` anywhere sets what the option said.
        let set = format!("{}.{name}", self.text(obj));
        let reset = nodes(self.root)
            .filter(|a| matches!(a.kind(), "assignment" | "augmented_assignment"))
            .filter_map(|a| a.child_by_field_name("left"))
            .any(|l| self.text(l) == set);
        let value = entries
            .into_iter()
            .rev()
            .find(|(k, _, _)| k == name)
            .map(|(_, _, v)| v);
        Some(match value {
            Some(v) if !reset => v,
            _ => self.unknown(n),
        })
    }

    /// The `parse_known_args()` call whose namespace `obj` names, bound once as the first of
    /// `known, rest = parser.parse_known_args()` in the function that reads it or at module
    /// level (what `eval` does not unpack).
    fn namespace_call(&self, obj: Ts<'a>) -> Option<Ts<'a>> {
        if obj.kind() != "identifier" {
            return None;
        }
        let name = self.text(obj);
        let mut scope = obj.parent();
        while let Some(s) = scope.filter(|s| s.kind() != "function_definition") {
            scope = s.parent();
        }
        let scope = scope.unwrap_or(self.root);
        let binds: Vec<Ts> = nodes(scope)
            .filter(|a| a.kind() == "assignment")
            .filter(|a| {
                a.child_by_field_name("left").is_some_and(|l| {
                    self.text(l) == name
                        || (matches!(l.kind(), "pattern_list" | "tuple_pattern")
                            && named(l).any(|t| self.text(t) == name))
                })
            })
            .collect();
        let [one] = binds[..] else { return None };
        let left = one.child_by_field_name("left")?;
        let right = one.child_by_field_name("right")?;
        let first = named(left).next().map(|t| self.text(t));
        let method = right
            .child_by_field_name("function")
            .and_then(|f| f.child_by_field_name("attribute"))
            .map(|m| self.text(m));
        (right.kind() == "call" && method == Some("parse_known_args") && first == Some(name))
            .then_some(right)
    }

    /// The options of the parser bound once to `argparse.ArgumentParser(...)` as `parser`, with
    /// their defaults: `(dest, where, default)`, those without a default left out.
    fn options(&self, parser: &str, d: usize) -> Option<Vec<(String, crate::source::Loc, Val)>> {
        let assigned = |a: &Ts, to: &str| {
            a.kind() == "assignment"
                && a.child_by_field_name("left")
                    .is_some_and(|l| self.text(l) == to)
        };
        let callee = |a: &Ts| {
            a.child_by_field_name("right")
                .filter(|r| r.kind() == "call")
                .and_then(|r| r.child_by_field_name("function"))
                .map(|f| qualified(&self.imports, self.text(f)))
        };
        let made: Vec<Ts> = nodes(self.root).filter(|a| assigned(a, parser)).collect();
        let [made] = made[..] else { return None };
        if callee(&made).as_deref() != Some("argparse.ArgumentParser") {
            return None;
        }
        // Groups add options to the parser (`group = parser.add_argument_group(...)`).
        let mut holders = vec![parser.to_string()];
        for a in nodes(self.root).filter(|a| a.kind() == "assignment") {
            let group = callee(&a).is_some_and(|c| {
                [".add_argument_group", ".add_mutually_exclusive_group"]
                    .iter()
                    .any(|m| c == format!("{parser}{m}"))
            });
            if let Some(l) = a.child_by_field_name("left").filter(|_| group) {
                holders.push(self.text(l).to_string());
            }
        }
        let mut out = Vec::new();
        let mut reset = Vec::new();
        for call in nodes(self.root).filter(|c| c.kind() == "call") {
            let Some(f) = call.child_by_field_name("function") else {
                continue;
            };
            let Some((holder, method)) = self.text(f).rsplit_once('.') else {
                continue;
            };
            if !holders.iter().any(|h| h == holder) {
                continue;
            }
            let Some(args) = call.child_by_field_name("arguments") else {
                continue;
            };
            match method {
                "add_argument" => out.extend(self.option_default(args, d)),
                "set_defaults" => reset.extend(self.keywords(args, d).0.into_iter().map(|k| k.0)),
                _ => {}
            }
        }
        // `set_defaults(model=...)` decides over `default=`: not followed.
        out.retain(|(dest, _, _)| !reset.contains(dest));
        Some(out)
    }

    /// One `add_argument(...)` call's dest and default, where it has a default the file fixes.
    fn option_default(&self, args: Ts<'a>, d: usize) -> Option<(String, crate::source::Loc, Val)> {
        let flags: Vec<String> = named(args)
            .filter(|a| a.kind() == "string")
            .filter_map(|a| super::defaults::text(&self.at(a, d)))
            .collect();
        let long = flags
            .iter()
            .find(|f| f.starts_with("--"))
            .or_else(|| flags.first())?;
        if !long.starts_with('-') {
            return None; // a positional: given on every command line
        }
        // A required option is on every command line that runs.
        if self
            .keyword_text(args, "required")
            .is_some_and(|r| r != "False")
        {
            return None;
        }
        let (keywords, _) = self.keywords(args, d);
        let kw = |k: &str| keywords.iter().find(|(n, _, _)| n == k).map(|(_, _, v)| v);
        let dest = match kw("dest").and_then(super::defaults::text) {
            Some(dest) => dest,
            None => long.trim_start_matches('-').replace('-', "_"),
        };
        let typed = match kw("default")?.clone() {
            // argparse applies `type` to a string default.
            v @ Val::Str(_) if self.keyword_text(args, "type") == Some("int") => {
                super::numbers::int(v.clone()).unwrap_or(v)
            }
            v => v,
        };
        let why = |text: &str| format!("{long} (\"{text}\" unless the caller passes {long})");
        let at = typed.loc();
        let value = self.caller_default(typed, &dest, why, at)?;
        Some((dest, at, value))
    }

    /// A keyword argument's value as written.
    fn keyword_text(&self, args: Ts<'a>, name: &str) -> Option<&'a str> {
        named(args)
            .filter(|a| a.kind() == "keyword_argument")
            .find(|a| {
                a.child_by_field_name("name")
                    .is_some_and(|k| self.text(k) == name)
            })
            .and_then(|a| a.child_by_field_name("value"))
            .map(|v| self.text(v))
    }
}

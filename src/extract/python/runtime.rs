//! What a value is where the service runs: env reads of the variables its platform sets, class
//! attributes read through `self`, and the platform calls whose value is one of their arguments
//! (`value_of` in a `python` platform file: BentoML's `HuggingFaceModel(model_id)`).
//!
//! Which environment: the code of a service runs with what its platform sets for it (a
//! `[[launch]]` site's `env`, BentoML's `envs=[{"name": ..., "value": ...}]`). A variable set with
//! a value is that value; one the platform lists with none is given at deploy time, and any other
//! is the caller's. A read of such a variable is unknown, or, where the read names a default
//! (`os.environ.get("X", d)`, `os.getenv("X", d)`, `setdefault`), that default as a caller's
//! default (`defaults`): listed and planned with, while INP004 says the caller may set the
//! variable, as with `${VAR:-default}` in a script someone runs (`extract::shell`). The
//! decorator's own arguments, read where the service is built, see only the builder's
//! environment: no variable is known there.

use super::eval::{named, Eval, Val};
use super::qualified;
use crate::platform::path::Path;
use crate::platform::{registry, Reader};
use crate::source::Loc;
use crate::yaml::Value;
use tree_sitter::Node as Ts;

/// Variables a platform sets for the code being read, each with its value, or `None` where it
/// is given at deploy time.
pub type Env = Vec<(String, Option<Val>)>;

/// An env entry whose name the file does not fix: it may set any variable.
const ANY: &str = "*";

/// Calls that read the environment by a name (`os.environ.get("X", d)`, `os.getenv("X")`).
const ENV_READS: &[&str] = &["os.environ.get", "os.getenv", "os.environ.setdefault"];

impl<'a> Eval<'a> {
    /// An env read, or a call a platform's `value_of` names; `None` for other calls.
    pub(super) fn runtime_call(
        &self,
        n: Ts<'a>,
        f: Ts<'a>,
        args: Ts<'a>,
        positional: &[Ts<'a>],
        d: usize,
    ) -> Option<Val> {
        let name = qualified(&self.imports, self.text(f));
        if ENV_READS.contains(&name.as_str()) {
            let default = positional.get(1).copied().or_else(|| {
                named(args)
                    .filter(|a| a.kind() == "keyword_argument")
                    .find(|a| {
                        a.child_by_field_name("name")
                            .is_some_and(|k| self.text(k) == "default")
                    })
                    .and_then(|a| a.child_by_field_name("value"))
            });
            return Some(self.env_read(positional.first().copied(), default, n, d));
        }
        if let Some(v) = self.parsed_args(n, f, positional, d) {
            return Some(v);
        }
        let paths = registry()
            .plain()
            .filter(|p| p.reader == Some(Reader::Python))
            .flat_map(|p| p.values.iter())
            .find(|v| v.call == name)
            .map(|v| &v.value)?;
        let call = self.call_val(n, args, positional, d);
        Some(
            at_path(&call, paths)
                .cloned()
                .unwrap_or_else(|| self.unknown(n)),
        )
    }

    /// A call as `{args: [...], kwargs: {...}}`, as platform paths read it.
    fn call_val(&self, n: Ts<'a>, args: Ts<'a>, positional: &[Ts<'a>], d: usize) -> Val {
        let (keywords, _) = self.keywords(args, d);
        let items = positional.iter().map(|a| self.at(*a, d)).collect();
        let (args_at, call_at) = (self.loc(args), self.loc(n));
        Val::Dict(
            vec![
                ("args".into(), call_at, Val::List(items, args_at)),
                ("kwargs".into(), call_at, Val::Dict(keywords, args_at)),
            ],
            call_at,
        )
    }

    /// The value of variable `key` in the environment being read; where that environment does
    /// not fix it, the read `whole` is its `default` as a caller's default, or unknown.
    fn env_read(
        &self,
        key: Option<Ts<'a>>,
        default: Option<Ts<'a>>,
        whole: Ts<'a>,
        d: usize,
    ) -> Val {
        let Some(Val::Str(key)) = key.map(|k| self.at(k, d)) else {
            return self.unknown(whole);
        };
        if !key.unresolved.is_empty() {
            return self.unknown(whole);
        }
        let env = self.env.borrow();
        let name = key.chars.as_str();
        if let Some((_, Some(v))) = env.iter().rev().find(|(k, _)| k == name || k == ANY) {
            return v.clone();
        }
        drop(env);
        default
            .and_then(|x| {
                let why = |text: &str| format!("{name} (\"{text}\" unless set by the caller)");
                self.caller_default(self.at(x, d), name, why, self.loc(whole))
            })
            .unwrap_or_else(|| self.unknown(whole))
    }

    /// `self.name` in a method: the class attribute `name = value` the class binds once, unless
    /// the class sets an attribute of that name on an instance or the class (or `setattr`s one on
    /// them).
    pub(super) fn attribute(&self, n: Ts<'a>, d: usize) -> Val {
        let (Some(obj), Some(attr)) = (
            n.child_by_field_name("object"),
            n.child_by_field_name("attribute"),
        ) else {
            return self.unknown(n);
        };
        if let Some(v) = self.option(n, obj, attr, d) {
            return v;
        }
        let Some(class) = self.class_of_method(n, obj) else {
            return self.unknown(n);
        };
        let name = self.text(attr);
        let class_name = class.child_by_field_name("name").map(|c| self.text(c));
        // `self.name = ...` or `Class.name = ...` anywhere in the class (another object's
        // `args.name = ...` sets nothing here).
        let sets = |t: Ts| {
            let object = t.child_by_field_name("object").map(|o| self.text(o));
            t.kind() == "attribute"
                && t.child_by_field_name("attribute").map(|x| self.text(x)) == Some(name)
                && (object == Some(self.text(obj)) || object == class_name)
        };
        let set_elsewhere = super::nodes(class).any(|a| match a.kind() {
            "assignment" | "augmented_assignment" => a
                .child_by_field_name("left")
                .into_iter()
                .flat_map(|l| std::iter::once(l).chain(named(l)))
                .any(sets),
            "call" => {
                let first = a
                    .child_by_field_name("arguments")
                    .and_then(|x| named(x).next())
                    .map(|x| self.text(x));
                a.child_by_field_name("function")
                    .is_some_and(|f| self.text(f) == "setattr")
                    && (first == Some(self.text(obj)) || first == class_name)
            }
            _ => false,
        });
        if set_elsewhere {
            return self.unknown(n);
        }
        self.bound_in(class, name, n, d)
            .unwrap_or_else(|| self.unknown(n))
    }

    /// The class whose method `at` is in, where `obj` is that method's first parameter (`self`).
    fn class_of_method(&self, at: Ts<'a>, obj: Ts<'a>) -> Option<Ts<'a>> {
        if obj.kind() != "identifier" {
            return None;
        }
        let mut s = at.parent();
        while let Some(p) = s.filter(|p| p.kind() != "function_definition") {
            s = p.parent();
        }
        let method = s?;
        let first = method
            .child_by_field_name("parameters")
            .and_then(|ps| named(ps).next())?;
        let first = match first.kind() {
            "identifier" => first,
            _ => first.child_by_field_name("name")?,
        };
        if self.text(first) != self.text(obj) {
            return None;
        }
        let mut up = method.parent();
        while let Some(p) = up.filter(|p| matches!(p.kind(), "decorated_definition" | "block")) {
            up = p.parent();
        }
        up.filter(|c| c.kind() == "class_definition")
    }

    /// `d["key"]` of a dict the file fixes, `xs[i]` of such a list, `os.environ["X"]`.
    pub(super) fn subscript(&self, n: Ts<'a>, d: usize) -> Val {
        let (Some(obj), Some(key)) = (
            n.child_by_field_name("value"),
            n.child_by_field_name("subscript"),
        ) else {
            return self.unknown(n);
        };
        if qualified(&self.imports, self.text(obj)) == "os.environ" {
            return self.env_read(Some(key), None, n, d);
        }
        let item = match (self.at(obj, d), self.at(key, d)) {
            (Val::Dict(entries, _), Val::Str(k)) if k.unresolved.is_empty() => entries
                .into_iter()
                .rev()
                .find(|(e, _, _)| e == k.chars.as_str())
                .map(|(_, _, v)| v),
            (Val::List(items, _), Val::Scalar(i)) => match i.value {
                Value::Int(i) if !items.iter().any(|v| matches!(v, Val::Splat(..))) => {
                    let at = if i < 0 { items.len() as i64 + i } else { i };
                    usize::try_from(at)
                        .ok()
                        .and_then(|at| items.into_iter().nth(at))
                }
                _ => None,
            },
            _ => None,
        };
        item.unwrap_or_else(|| self.unknown(n))
    }

    /// The variables each service of a `python` platform runs with, by the span of the class or
    /// function its decorator defines: the site's `env`, read where the service is built (no
    /// variable known there). An entry whose name the file does not fix may set any variable:
    /// what the entries before it set is unknown.
    pub(super) fn service_envs(&self, decorators: &[(String, Ts<'a>, Ts<'a>)]) -> Vec<(Loc, Env)> {
        let mut out = Vec::new();
        for (key, call, decorator) in decorators {
            let sites = registry()
                .plain()
                .filter(|p| p.reader == Some(Reader::Python))
                .flat_map(|p| p.launches.iter())
                .filter(|s| s.at.strip_suffix("[]") == Some(key.as_str()) && !s.env.is_empty());
            let Some(def) = decorator
                .parent()
                .filter(|p| p.kind() == "decorated_definition")
            else {
                continue;
            };
            let Some(args) = call.child_by_field_name("arguments") else {
                continue;
            };
            let positional: Vec<Ts> = named(args)
                .filter(|a| !matches!(a.kind(), "keyword_argument" | "comment"))
                .collect();
            let value = self.call_val(*call, args, &positional, 0);
            for site in sites {
                if let Some(list) = at_path(&value, &site.env) {
                    out.push((self.loc(def), env_entries(list)));
                }
            }
        }
        out
    }
}

/// The `{"name": ..., "value": ...}` entries of an env list (a mapping of names to values too);
/// an entry with no fixed name, or a list the file does not fix, is [`ANY`].
fn env_entries(v: &Val) -> Env {
    let unknown = || vec![(ANY.to_string(), None)];
    let text = |v: &Val| match v {
        Val::Str(w) if w.unresolved.is_empty() => Some(w.chars.as_str().to_string()),
        _ => None,
    };
    match v {
        Val::List(items, _) => items
            .iter()
            .flat_map(|item| match item {
                Val::Dict(entries, _) => {
                    let get = |k: &str| entries.iter().rev().find(|(e, _, _)| e == k);
                    match get("name").and_then(|(_, _, n)| text(n)) {
                        Some(name) => vec![(name, get("value").map(|(_, _, v)| as_text(v)))],
                        None => unknown(),
                    }
                }
                _ => unknown(),
            })
            .collect(),
        Val::Dict(entries, _) => entries
            .iter()
            .map(|(k, _, v)| (k.clone(), Some(as_text(v))))
            .collect(),
        _ => unknown(),
    }
}

/// An env value as the process sees it: a string (`1` written as a number is `"1"`).
fn as_text(v: &Val) -> Val {
    match v {
        Val::Scalar(n) => match n.scalar_text() {
            Some(t) => Val::Str(crate::extract::shell::MappedWord {
                chars: t.chars().map(|c| (c, n.loc.start, n.loc.end)).collect(),
                loc: n.loc,
                unresolved: Vec::new(),
                defaulted: false,
            }),
            None => v.clone(),
        },
        _ => v.clone(),
    }
}

/// The value at the first of `paths` (platform paths) that `v` holds.
fn at_path<'v>(v: &'v Val, paths: &[String]) -> Option<&'v Val> {
    let node = super::node::to_node(v, &mut Vec::new());
    let found = paths
        .iter()
        .filter_map(|p| Path::parse(p.trim()).ok())
        .find_map(|p| p.all(&node, &node).first().map(|n| n.loc))?;
    with_loc(v, found)
}

/// The value inside `v` that stands at `loc` (a node read from `v` by a path has its value's
/// place).
fn with_loc(v: &Val, loc: Loc) -> Option<&Val> {
    if v.loc() == loc && !matches!(v, Val::Dict(..) | Val::List(..)) {
        return Some(v);
    }
    let inner: Box<dyn Iterator<Item = &Val>> = match v {
        Val::List(items, _) => Box::new(items.iter()),
        Val::Dict(entries, _) => Box::new(entries.iter().map(|(_, _, v)| v)),
        _ => Box::new(std::iter::empty()),
    };
    let found = inner.into_iter().find_map(|i| with_loc(i, loc));
    found.or_else(|| (v.loc() == loc).then_some(v))
}

#[cfg(test)]
mod tests {
    use super::super::{imports, nodes, parse};
    use super::*;
    use crate::source::{FileId, SourceFile};

    /// The reader of `src`'s parsed `tree`, its imports read, in `env`.
    fn reader<'a>(src: &'a SourceFile, tree: &'a tree_sitter::Tree, env: Env) -> Eval<'a> {
        let mut e = Eval {
            file: FileId(0),
            src,
            root: tree.root_node(),
            dropped: Default::default(),
            imports: Default::default(),
            env: std::cell::RefCell::new(env),
            defaults: Default::default(),
        };
        e.imports = imports(&e, e.root);
        e
    }

    /// The value of the first expression written `target` in `text`, read in `env`; a string or
    /// number as its text, anything else as `?expr`.
    fn value(text: &str, target: &str, env: Env) -> String {
        let src = SourceFile::new("service.py", text);
        let tree = parse(&src.text).unwrap();
        let e = reader(&src, &tree, env);
        let n = nodes(e.root)
            .find(|n| n.is_named() && e.text(*n) == target)
            .unwrap();
        match e.value(n) {
            Val::Str(w) if w.unresolved.is_empty() => w.chars.as_str().to_string(),
            Val::Str(w) => format!("?{}", w.chars.as_str()),
            Val::Scalar(s) => s.scalar_text().unwrap_or_default(),
            Val::Unknown(expr, _) => format!("?{expr}"),
            Val::Defaulted(c) => format!(
                "{} unless {}",
                super::super::defaults::text(&c.value).unwrap_or_default(),
                c.why.join(" / ")
            ),
            other => format!("{other:?}"),
        }
    }

    fn set(name: &str, value: Option<&str>) -> (String, Option<Val>) {
        let v = value.map(|t| {
            Val::Str(crate::extract::shell::MappedWord {
                chars: crate::extract::shell::Chars::verbatim(t, 0),
                loc: Loc::new(FileId(0), 0..0),
                unresolved: Vec::new(),
                defaulted: false,
            })
        });
        (name.to_string(), v)
    }

    const SERVICE: &str = r#"
import os
import bentoml
CTX = int(os.environ.get("CTX", 4 * 1024))
CONF = {"model": "org/a", "len": 2048}
@bentoml.service(envs=[{"name": "CTX", "value": f"{8 * 1024}"}, {"name": "TOKEN"}, {"name": NAME}])
class S:
    model_id = CONF["model"]
    hf = bentoml.models.HuggingFaceModel(model_id, exclude=["*.pt"])
    other = bentoml.models.HuggingFaceModel("org/b")
    def __init__(self):
        args.hf = "elsewhere"
        self.other = "local/path"
        a = self.hf
        b = self.other
        c = model_id
        d = str(CTX)
        f = os.environ["TOKEN"]
        g = f"{CTX}:{os.environ.get('TOKEN', 't')}"
        h = os.environ.get("TOKEN", "t") + os.environ["OTHER"]
"#;

    /// What the service sets wins; where the environment does not fix a variable (the caller's,
    /// or one the platform lists with no value) a read's default is the caller's default.
    #[test]
    fn env_reads_are_what_the_service_sets_else_their_default_as_the_callers() {
        let env = vec![set("CTX", Some("8192")), set("TOKEN", None)];
        assert_eq!(value(SERVICE, "str(CTX)", env.clone()), "8192");
        let ctx = "4096 unless CTX (\"4096\" unless set by the caller)";
        assert_eq!(value(SERVICE, "str(CTX)", Vec::new()), ctx);
        assert_eq!(
            value(
                SERVICE,
                "int(os.environ.get(\"CTX\", 4 * 1024))",
                Vec::new()
            ),
            ctx
        );
        assert_eq!(
            value(SERVICE, "os.environ[\"TOKEN\"]", env.clone()),
            "?os.environ[\"TOKEN\"]"
        );
        // An f-string of two defaults keeps both names.
        let g = "f\"{CTX}:{os.environ.get('TOKEN', 't')}\"";
        assert_eq!(
            value(SERVICE, g, env.clone()),
            "8192:t unless TOKEN (\"t\" unless set by the caller)"
        );
        // Joined with a value nobody fixes, a default is unknown, written as a shell's default.
        let h = "os.environ.get(\"TOKEN\", \"t\") + os.environ[\"OTHER\"]";
        assert_eq!(value(SERVICE, h, env), "?${TOKEN:-t}${os_environ_OTHER}");
    }

    #[test]
    fn self_attributes_are_class_attributes_the_class_never_sets_again() {
        assert_eq!(value(SERVICE, "self.hf", Vec::new()), "org/a");
        assert_eq!(value(SERVICE, "self.other", Vec::new()), "?self.other");
        // The class body sees its own names; a method does not.
        assert_eq!(value(SERVICE, "model_id", Vec::new()), "org/a");
        let in_method = SERVICE.replacen("c = model_id", "c = model_id + \"\"", 1);
        assert_eq!(
            value(&in_method, "model_id + \"\"", Vec::new()),
            "?${model_id}"
        );
    }

    #[test]
    fn a_service_envs_lists_values_deploy_time_names_and_unknown_names() {
        let src = SourceFile::new("service.py", SERVICE);
        let tree = parse(&src.text).unwrap();
        let e = reader(&src, &tree, Env::default());
        let decorators: Vec<(String, Ts, Ts)> = nodes(e.root)
            .filter(|n| n.kind() == "decorator")
            .map(|d| ("bentoml:service".to_string(), d.named_child(0).unwrap(), d))
            .collect();
        let envs = e.service_envs(&decorators);
        let [(_, env)] = &envs[..] else {
            panic!("{envs:?}")
        };
        let shown: Vec<(String, Option<String>)> = env
            .iter()
            .map(|(k, v)| {
                let v = v.as_ref().map(|v| match v {
                    Val::Str(w) => w.chars.as_str().to_string(),
                    other => format!("{other:?}"),
                });
                (k.clone(), v)
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                ("CTX".to_string(), Some("8192".to_string())),
                ("TOKEN".to_string(), None),
                (ANY.to_string(), None),
            ]
        );
    }
}

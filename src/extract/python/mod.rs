//! Python launchers → engine launches: argv lists handed to `subprocess` or `os.system` (or
//! returned, as BentoML's `__command__` does), and the engines' constructors (`vllm.LLM(...)`,
//! `EngineArgs`, `sglang.Engine`, `ServerArgs`, TensorRT-LLM's `LLM`, Ray Serve `LLMConfig`)
//! read as the Python platforms in `platforms/*.toml` say.
//!
//! Parser: tree-sitter with tree-sitter-python (weighed December 2026). It is the
//! tree-sitter project's own grammar, released with the runtime (0.25, 2025), gives every node
//! its byte span, recovers from errors (a syntax error is an ERROR node with a place, never a
//! panic) and parses iteratively. rustpython-parser's last release is 0.4.0 (2024) and its
//! repository was archived when RustPython moved to ruff's parser; ruff's parser
//! (`ruff_python_parser`) is not published on crates.io. tree-sitter builds its C runtime with
//! the `cc` crate, which ring already needs here.
//!
//! Only what the file fixes is read (`eval`): a name assigned once in the enclosing function, the
//! class body or at module level is followed, a class attribute read through `self`, and a
//! parameter of a function the file calls once (`params`); an env read of a variable the
//! service's platform does not set (`runtime`) or another module's value is unknown, `INP004`
//! where the pool needs it (the engine step sees it as unresolved). Such a read's default, and
//! an argparse option's (`cli`), is a caller's default (`defaults`): listed and planned with,
//! and still `INP004`.

mod cli;
mod defaults;
mod eval;
mod node;
mod numbers;
mod objects;
mod params;
mod place;
mod runtime;
mod strings;

use super::{by_platform, Extracted};
use crate::finding::Finding;
use crate::launch::{Arg, ObjectRef};
use crate::platform::{registry, Platform};
use crate::source::{FileId, Loc, SourceFile};
use crate::yaml::{Node, Value};
use eval::{named, Eval, Val};
use node::to_node;
use std::collections::HashMap;
use tree_sitter::{Node as Ts, Parser, Tree};

/// The largest Python file read: launcher modules are kilobytes, and the tree holds tens of
/// bytes per input byte.
const PYTHON_MAX: usize = 4 << 20;

/// What `object.kind` says for a launch read from an argv (the constructors' launches carry
/// their platform's title).
const ARGV_KIND: &str = "Python launcher";

/// Calls that run their first argument as a command: a list is an argv, a string a shell line.
const RUNS: &[&str] = &[
    "subprocess.run",
    "subprocess.Popen",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "os.system",
];

/// SGLang's helpers for its docs and notebooks that start a server from one command string
/// (`launch_server_cmd("python3 -m sglang.launch_server --model-path ...")`). sglang/utils.py
/// `execute_shell_command` joins continued lines and splits the string on whitespace, which is a
/// shell's reading of such a line where it holds no quotes or operators; `launch_server_cmd` adds
/// only `--port`. Read as a shell line, as `os.system`'s.
const SHELL_LINES: &[&str] = &[
    "sglang.utils.launch_server_cmd",
    "sglang.test.doc_patch.launch_server_cmd",
    "sglang.utils.execute_shell_command",
];

/// Whether a file is Python by its name (any case).
pub fn is_python(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with(".py")
}

/// Whether Python text names an engine or a launcher kvlint reads: only such files are parsed.
pub fn mentions_launcher(text: &str) -> bool {
    ["vllm", "sglang", "LLMConfig", "tensorrt_llm", "trtllm"]
        .iter()
        .any(|w| memchr::memmem::find(text.as_bytes(), w.as_bytes()).is_some())
}

/// The launches in a Python file, and what could not be read in it.
pub fn read(file: FileId, src: &SourceFile) -> Extracted {
    let mut out = Extracted::default();
    if !mentions_launcher(&src.text) {
        return out;
    }
    if src.text.len() > PYTHON_MAX {
        let reason = format!(
            "a Python file of {} MiB is larger than the {} MiB kvlint reads",
            src.text.len() >> 20,
            PYTHON_MAX >> 20
        );
        out.findings.push(invalid(Loc::new(file, 0..0), reason));
        return out;
    }
    let Some(tree) = parse(&src.text) else {
        let reason = "the Python parser gave up on this file".to_string();
        out.findings.push(invalid(Loc::new(file, 0..0), reason));
        return out;
    };
    let root = tree.root_node();
    if let Some(bad) = first_error(root) {
        let (line, _) = src.line_col(bad.start_byte());
        let reason = format!("invalid Python syntax at line {line}");
        out.findings
            .push(invalid(Loc::new(file, bad.byte_range()), reason));
        return out;
    }
    let mut e = Eval {
        file,
        src,
        root,
        dropped: Default::default(),
        imports: HashMap::new(),
        env: Default::default(),
        defaults: Default::default(),
    };
    e.imports = imports(&e, root);
    let imports = &e.imports;
    let made = launch_objects(&e, imports);
    let decorators: Vec<(String, Ts, Ts)> = nodes(root)
        .filter(|n| n.kind() == "decorator")
        .filter_map(|d| {
            let call = d.named_child(0).filter(|c| c.kind() == "call")?;
            let f = call.child_by_field_name("function")?;
            Some((key(&qualified(imports, e.text(f)))?, call, d))
        })
        .collect();
    let services = e.service_envs(&decorators);
    let mut doc = Vec::<(String, Vec<Node>)>::new();
    let mut unknowns = Vec::new();
    let mut open_kwargs = Vec::new();
    for n in nodes(root) {
        if matches!(n.kind(), "call" | "return_statement") {
            *e.env.borrow_mut() = env_at(&e, &services, n);
        }
        match n.kind() {
            "call" => {
                let Some(f) = n.child_by_field_name("function") else {
                    continue;
                };
                let name = qualified(imports, e.text(f));
                if RUNS.contains(&name.as_str()) || SHELL_LINES.contains(&name.as_str()) {
                    argv_launch(&e, n, &name, &mut out);
                } else if let Some(key) = key(&name).filter(|_| !takes_launch(&e, n, &made)) {
                    let (node, complete) = match n.parent().filter(|p| p.kind() == "decorator") {
                        Some(d) => (place::decorator_node(&e, n, d, &mut unknowns), true),
                        None => call_node(&e, n, &mut unknowns),
                    };
                    if !complete {
                        open_kwargs.push(e.loc(n));
                    }
                    match doc.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, calls)) => calls.push(node),
                        None => doc.push((key, vec![node])),
                    }
                }
            }
            "return_statement" => {
                if let Some(Val::List(items, _)) = n.named_child(0).map(|v| e.value(v)) {
                    exec(&e, &items, &mut out);
                }
            }
            _ => {}
        }
    }
    let doc = document(&e, doc);
    for p in python_platforms(src, &doc) {
        let mut read = by_platform::read(p, file, src, &doc, None);
        out.findings.append(&mut read.findings);
        out.launches.append(&mut read.launches);
    }
    if out.launches.is_empty() {
        by_keys(&e, &services, &mut unknowns, &mut out);
    }
    finish(&e, &mut out, &unknowns, &open_kwargs);
    place::place_by_platforms(&e, &doc, &unknowns, &mut out);
    out
}

fn parse(text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    parser.parse(text, None)
}

fn invalid(at: Loc, reason: String) -> Finding {
    Finding::new("INP001", Some(at)).var("reason", reason)
}

/// Every node of the tree, parents before children, without recursion.
pub(super) fn nodes(root: Ts) -> impl Iterator<Item = Ts> {
    let mut stack = vec![root];
    std::iter::from_fn(move || {
        let n = stack.pop()?;
        let children: Vec<Ts> = named(n).collect();
        stack.extend(children.into_iter().rev());
        Some(n)
    })
}

/// The first ERROR or MISSING node, where the syntax breaks.
fn first_error(root: Ts) -> Option<Ts> {
    if !root.has_error() {
        return None;
    }
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            return Some(n);
        }
        let mut c = n.walk();
        let kids: Vec<Ts> = n.children(&mut c).filter(|k| k.has_error()).collect();
        stack.extend(kids.into_iter().rev());
    }
    Some(root)
}

/// Local names of imported modules and objects → their dotted path (`sgl` → `sglang`,
/// `LLM` → `vllm.LLM`), from imports anywhere in the file.
fn imports(e: &Eval, root: Ts) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for n in nodes(root) {
        let from = match n.kind() {
            "import_statement" => None,
            "import_from_statement" => n.child_by_field_name("module_name").map(|m| e.text(m)),
            _ => continue,
        };
        let mut c = n.walk();
        for name in n.children_by_field_name("name", &mut c) {
            let (path, alias) = match name.kind() {
                "aliased_import" => (
                    name.child_by_field_name("name").map(|x| e.text(x)),
                    name.child_by_field_name("alias").map(|x| e.text(x)),
                ),
                _ => (Some(e.text(name)), None),
            };
            let Some(path) = path else { continue };
            let full = from.map_or(path.to_string(), |m| format!("{m}.{path}"));
            let local = alias.unwrap_or_else(|| path.split('.').next().unwrap_or(path));
            let full = if alias.is_none() && from.is_none() {
                local.to_string() // `import a.b` binds `a`
            } else {
                full
            };
            out.insert(local.to_string(), full);
        }
    }
    made_by_imports(e, root, &mut out);
    out
}

/// Module-level names bound once to a call or attribute of an imported name (`app =
/// modal.App("x")` → `modal.App`, `service = bentoml.service`), so that `@app.function(...)`
/// reads as `modal.App.function`. A name bound twice, or also imported, is left alone.
fn made_by_imports(e: &Eval, root: Ts, names: &mut HashMap<String, String>) {
    let mut bound: HashMap<String, Option<String>> = HashMap::new();
    for stmt in named(root).filter(|s| s.kind() == "expression_statement") {
        let Some(a) = stmt.named_child(0).filter(|a| a.kind() == "assignment") else {
            continue;
        };
        let (Some(left), Some(right)) = (
            a.child_by_field_name("left"),
            a.child_by_field_name("right"),
        ) else {
            continue;
        };
        if left.kind() != "identifier" || names.contains_key(e.text(left)) {
            continue;
        }
        let callee = match right.kind() {
            "call" => right.child_by_field_name("function"),
            "attribute" => Some(right),
            _ => None,
        };
        let made = callee
            .map(|c| qualified(names, e.text(c)))
            .filter(|q| q.contains('.'));
        bound
            .entry(e.text(left).to_string())
            .and_modify(|v| *v = None)
            .or_insert(made);
    }
    names.extend(bound.into_iter().filter_map(|(k, v)| Some((k, v?))));
}

/// A callee's dotted name with its first part as imported (`sgl.Engine` → `sglang.Engine`).
fn qualified(imports: &HashMap<String, String>, callee: &str) -> String {
    let (head, rest) = callee.split_once('.').unwrap_or((callee, ""));
    let head = imports.get(head).map_or(head, String::as_str);
    if rest.is_empty() {
        head.to_string()
    } else {
        format!("{head}.{rest}")
    }
}

/// The document key of a call a platform may name: top package and the callee's last name
/// (`vllm:LLM`, `ray:LLMConfig`); a name imported from nowhere has none.
fn key(qualified: &str) -> Option<String> {
    let (top, _) = qualified.split_once('.')?;
    let last = qualified.rsplit('.').next()?;
    Some(format!("{top}:{last}"))
}

/// A call as `{args: [...], kwargs: {...}}`, and whether every keyword is known by name.
pub(super) fn call_node(e: &Eval, call: Ts, unknowns: &mut Vec<(Loc, String)>) -> (Node, bool) {
    let loc = e.loc(call);
    let Some(args) = call.child_by_field_name("arguments") else {
        return (
            Node {
                value: Value::Null,
                loc,
            },
            true,
        );
    };
    let positional: Vec<Node> = named(args)
        .filter(|a| {
            !matches!(
                a.kind(),
                "keyword_argument" | "dictionary_splat" | "comment"
            )
        })
        .map(|a| to_node(&e.value(a), unknowns))
        .collect();
    let (keywords, complete) = e.keywords(args, 0);
    let kwargs = to_node(&Val::Dict(keywords, e.loc(args)), unknowns);
    let str_key = |k: &str| Node {
        value: Value::Str(k.into()),
        loc,
    };
    let map = vec![
        (
            str_key("args"),
            Node {
                value: Value::Seq(positional),
                loc: e.loc(args),
            },
        ),
        (str_key("kwargs"), kwargs),
    ];
    (
        Node {
            value: Value::Map(map),
            loc,
        },
        complete,
    )
}

/// The calls a platform reads as launches (`ServerArgs(...)`, `AsyncEngineArgs(...)`), by where
/// they start, and the names assigned one.
struct Made {
    calls: Vec<usize>,
    names: Vec<String>,
}

fn launch_objects(e: &Eval, imports: &HashMap<String, String>) -> Made {
    let keys: Vec<&str> = registry()
        .plain()
        .flat_map(|p| p.launches.iter())
        .filter_map(|s| s.at.strip_suffix("[]"))
        .filter(|k| k.contains(':'))
        .collect();
    let calls: Vec<usize> = nodes(e.root)
        .filter(|c| c.kind() == "call")
        .filter(|c| {
            c.child_by_field_name("function")
                .and_then(|f| key(&qualified(imports, e.text(f))))
                .is_some_and(|k| keys.contains(&k.as_str()))
        })
        .map(|c| c.start_byte())
        .collect();
    let names = nodes(e.root)
        .filter(|a| a.kind() == "assignment")
        .filter(|a| {
            a.child_by_field_name("right")
                .is_some_and(|r| calls.contains(&r.start_byte()))
        })
        .filter_map(|a| a.child_by_field_name("left"))
        .filter(|l| l.kind() == "identifier")
        .map(|l| e.text(l).to_string())
        .collect();
    Made { calls, names }
}

/// A call given another launch's arguments object (`sgl.Engine(server_args=server_args)`,
/// `AsyncLLMEngine(ServerArgs(...))`) starts that launch: it is no launch of its own.
fn takes_launch(e: &Eval, call: Ts, made: &Made) -> bool {
    let Some(args) = call.child_by_field_name("arguments") else {
        return false;
    };
    named(args)
        .filter_map(|a| match a.kind() {
            "keyword_argument" => a.child_by_field_name("value"),
            _ => Some(a),
        })
        .any(|v| match v.kind() {
            "identifier" => made.names.iter().any(|n| n == e.text(v)),
            "call" => made.calls.contains(&v.start_byte()),
            _ => false,
        })
}

/// The file's calls by key, each key's calls in a list.
fn document(e: &Eval, calls: Vec<(String, Vec<Node>)>) -> Node {
    let loc = e.loc(e.root);
    let entries = calls
        .into_iter()
        .map(|(k, v)| {
            (
                Node {
                    value: Value::Str(k),
                    loc,
                },
                Node {
                    value: Value::Seq(v),
                    loc,
                },
            )
        })
        .collect();
    Node {
        value: Value::Map(entries),
        loc,
    }
}

/// A file that gave no launch otherwise: each outermost dict literal whose keys are mostly one
/// engine's options is that engine's settings (`build_app({"model": ..., "tensor-parallel-size":
/// ...})`, handed to the engine's argument parser), as a YAML mapping would be.
fn by_keys(
    e: &Eval,
    services: &[(Loc, runtime::Env)],
    unknowns: &mut Vec<(Loc, String)>,
    out: &mut Extracted,
) {
    let mut done: Vec<std::ops::Range<usize>> = Vec::new();
    for n in nodes(e.root).filter(|n| n.kind() == "dictionary") {
        if done.iter().any(|r| r.contains(&n.start_byte())) {
            continue;
        }
        done.push(n.byte_range());
        *e.env.borrow_mut() = env_at(e, services, n);
        let Val::Dict(..) = e.value(n) else {
            continue;
        };
        let node = to_node(&e.value(n), unknowns);
        let mut found = super::option_map::by_shape(e.file, e.src, &node);
        out.launches.append(&mut found.launches);
    }
}

/// The environment the code at `n` runs with: that of the innermost service whose class or
/// function holds it, none in a decorator (its arguments are read where the service is built)
/// or outside any service.
fn env_at(e: &Eval, services: &[(Loc, runtime::Env)], n: Ts) -> runtime::Env {
    let mut up = Some(n);
    while let Some(p) = up {
        if p.kind() == "decorator" {
            return Vec::new();
        }
        up = p.parent();
    }
    let at = e.loc(n);
    services
        .iter()
        .filter(|(span, _)| span.start <= at.start && at.end <= span.end)
        .min_by_key(|(span, _)| span.end - span.start)
        .map(|(_, env)| env.clone())
        .unwrap_or_default()
}

/// Platforms that read Python files and recognize this one.
fn python_platforms<'r>(src: &'r SourceFile, doc: &'r Node) -> Vec<&'r Platform> {
    registry()
        .plain()
        .filter(|p| p.recognize.files.iter().any(|g| g.ends_with(".py")))
        .filter(|p| by_platform::recognizes(p, src, doc))
        .collect()
}

/// `subprocess.run([...])`, `Popen("...", shell=True)`, `os.system("...")`.
fn argv_launch(e: &Eval, call: Ts, name: &str, out: &mut Extracted) {
    let Some(args) = call.child_by_field_name("arguments") else {
        return;
    };
    let first = named(args).find(|a| !matches!(a.kind(), "keyword_argument" | "comment"));
    let first = first.or_else(|| {
        named(args)
            .filter(|a| a.kind() == "keyword_argument")
            .find(|a| {
                a.child_by_field_name("name")
                    .is_some_and(|k| e.text(k) == "args")
            })
            .and_then(|a| a.child_by_field_name("value"))
    });
    let Some(first) = first else { return };
    e.dropped.borrow_mut().clear();
    let before = out.launches.len();
    run_command(e, args, first, name, out);
    let env = env_of(e, args);
    for l in &mut out.launches[before..] {
        l.env.extend(env.iter().cloned());
        place::visible_gpus(l);
    }
}

/// The entries of a `subprocess` call's `env={...}` that the file fixes (`**os.environ` and other
/// splats add what the environment has, which is not read).
fn env_of(e: &Eval, args: Ts) -> Vec<(String, Arg)> {
    let dict = named(args)
        .filter(|a| a.kind() == "keyword_argument")
        .find(|a| {
            a.child_by_field_name("name")
                .is_some_and(|k| e.text(k) == "env")
        })
        .and_then(|a| a.child_by_field_name("value"))
        .filter(|v| v.kind() == "dictionary");
    let pairs = dict
        .into_iter()
        .flat_map(named)
        .filter(|p| p.kind() == "pair");
    pairs
        .filter_map(|p| {
            let key = match e.value(p.child_by_field_name("key")?) {
                Val::Str(k) if k.unresolved.is_empty() => k.chars.as_str().to_string(),
                _ => return None,
            };
            let value = p.child_by_field_name("value")?;
            let arg = match e.value(value) {
                Val::Str(w) if w.unresolved.is_empty() => Arg::new(w.chars.as_str(), w.loc),
                Val::Scalar(n) => Arg::new(n.scalar_text()?, n.loc),
                Val::Defaulted(c) => Arg {
                    text: defaults::text(&c.value)?,
                    loc: c.value.loc(),
                    unresolved: c.why.clone(),
                    defaulted: true,
                },
                _ => Arg {
                    text: e.text(value).to_string(),
                    loc: e.loc(value),
                    unresolved: vec![strings::shown(e.text(value))],
                    defaulted: false,
                },
            };
            Some((key, arg))
        })
        .collect()
}

/// The command of a `subprocess`/`os.system` call: an argv list, or a shell line.
fn run_command(e: &Eval, args: Ts, first: Ts, name: &str, out: &mut Extracted) {
    let value = match e.value(first) {
        // A shell reads a caller's default as its own (`${CTX:-32768}`).
        Val::Defaulted(c) if matches!(c.value, Val::Str(_)) => {
            Val::Str(crate::extract::shell::MappedWord {
                loc: c.value.loc(),
                chars: c.shell,
                unresolved: Vec::new(),
                defaulted: false,
            })
        }
        v => v,
    };
    match value {
        Val::List(items, _) => exec(e, &items, out),
        Val::Str(line)
            if name == "os.system" || SHELL_LINES.contains(&name) || shell_true(e, args) =>
        {
            let word = |t: &str| crate::extract::shell::MappedWord {
                chars: t
                    .chars()
                    .map(|c| (c, line.loc.start, line.loc.start))
                    .collect(),
                loc: Loc::new(e.file, line.loc.start..line.loc.start),
                unresolved: Vec::new(),
                defaulted: false,
            };
            let argv = vec![word("sh"), word("-c"), line];
            let pod = crate::extract::shell::PodEnv {
                unknown: Vec::new(),
                any_name: true,
            };
            let mut got = crate::extract::shell::container_launches(e.file, argv, &[], &pod);
            if !got.launches.is_empty() {
                let dropped = std::mem::take(&mut *e.dropped.borrow_mut());
                out.findings
                    .extend(dropped.iter().map(|(x, at)| any_words(x, *at)));
            }
            out.launches.append(&mut got.launches);
            out.findings.append(&mut got.findings);
        }
        _ => {}
    }
}

fn shell_true(e: &Eval, args: Ts) -> bool {
    named(args)
        .filter(|a| a.kind() == "keyword_argument")
        .any(|a| {
            a.child_by_field_name("name")
                .is_some_and(|k| e.text(k) == "shell")
                && a.child_by_field_name("value")
                    .is_some_and(|v| e.text(v) == "True")
        })
}

/// An argv list run without a shell: its launches, if its words form an engine command.
fn exec(e: &Eval, items: &[Val], out: &mut Extracted) {
    let (mut items, splats) = strings::without_splats(items.to_vec());
    strings::interpreter_head(&mut items);
    let words = items.iter().map(|v| word(e, v)).collect::<Vec<_>>();
    let mut got = crate::extract::shell::exec_launches(e.file, words, &[]);
    for l in &got.launches {
        // A `*splat` of a list the file does not fix may add any words; a single unknown item
        // may be a flag where no flag expects a value.
        let after = splats.iter().filter(|(_, at)| at.start >= l.command.start);
        out.findings
            .extend(after.map(|(x, at)| any_words(x, *at).anchored(l.command)));
        let said: Vec<Loc> = out.findings.iter().filter_map(|f| f.primary).collect();
        let more = crate::extract::compose::any_flag(l);
        out.findings.extend(
            more.into_iter()
                .filter(|f| !f.primary.is_some_and(|p| said.contains(&p))),
        );
    }
    out.launches.append(&mut got.launches);
    out.findings.append(&mut got.findings);
}

/// `INP004` for a `*splat` the file does not fix: any engine flag may come from it.
fn any_words(expr: &str, at: Loc) -> Finding {
    let expr = strings::shown(expr);
    Finding::new("INP004", Some(at))
        .var("flag", format!("what `{expr}` adds to the command line"))
        .var("vars", expr)
        .label("any engine flag may come from here")
}

/// One argv item as a word; what the file does not fix is `$(expr)`, unresolved.
fn word(e: &Eval, v: &Val) -> crate::extract::shell::MappedWord {
    let loc = v.loc();
    let unknown = |expr: &str| {
        let name = strings::shown(expr);
        crate::extract::shell::MappedWord {
            chars: format!("$({name})")
                .chars()
                .map(|c| (c, loc.start, loc.end))
                .collect(),
            loc,
            unresolved: vec![(0, name)],
            defaulted: false,
        }
    };
    match v {
        Val::Str(w) if w.unresolved.is_empty() => w.clone(),
        Val::Str(w) => unknown(w.chars.as_str()),
        Val::Scalar(n) => crate::extract::shell::MappedWord {
            chars: n
                .scalar_text()
                .unwrap_or_default()
                .chars()
                .map(|c| (c, loc.start, loc.end))
                .collect(),
            loc,
            unresolved: Vec::new(),
            defaulted: false,
        },
        Val::Unknown(expr, _) | Val::Splat(expr, _) => unknown(expr),
        Val::List(..) | Val::Dict(..) => unknown(e.src.text.get(loc.range()).unwrap_or("")),
        // What runs when the caller sets nothing, named as the caller's (`finish` marks it).
        Val::Defaulted(c) => crate::extract::shell::MappedWord {
            unresolved: c.why.iter().map(|w| (0, w.clone())).collect(),
            ..word(e, &c.value)
        },
    }
}

/// Unknown values marked unresolved, `**kwargs` of unknown mappings, each launch once and named
/// by the function or class it is written in.
fn finish(e: &Eval, out: &mut Extracted, unknowns: &[(Loc, String)], open: &[Loc]) {
    out.launches.sort_by_key(|l| l.command.start);
    out.launches.dedup_by_key(|l| l.command);
    for l in &mut out.launches {
        let tokens = l
            .args
            .iter_mut()
            .chain(l.kwargs.iter_mut().flat_map(|k| k.tokens.iter_mut()));
        for a in tokens {
            unresolved(e, unknowns, a);
        }
        for m in l.files.iter_mut().filter_map(|f| f.mapping.as_mut()) {
            m.unresolved = unresolved_in(e, unknowns, &m.node);
        }
        if open.contains(&l.command) {
            out.findings.push(
                Finding::new("INP004", Some(l.command))
                    .var("flag", "what `**kwargs` adds to the engine's arguments")
                    .var("vars", "**kwargs")
                    .label("any engine option may come from here"),
            );
        }
        if l.object.is_none() {
            l.object = Some(ObjectRef {
                kind: ARGV_KIND.into(),
                namespace: None,
                name: enclosing_name(e, l.command).unwrap_or_default(),
                container: None,
            });
            l.role_hint = l
                .role_hint
                .take()
                .or_else(|| place::role_named_in(e, l.command));
        }
    }
}

/// Marks a token whose place holds values the file does not fix as unresolved (or, when each is
/// a caller's default, as defaulted).
fn unresolved(e: &Eval, unknowns: &[(Loc, String)], a: &mut Arg) {
    let mut said: Vec<String> = Vec::new();
    // A value read by two paths (a call's node and a platform's) is said once.
    for (_, x) in unknowns.iter().filter(|(at, _)| *at == a.loc) {
        if !said.contains(x) {
            said.push(x.clone());
        }
    }
    if e.all_defaults(&said) {
        a.unresolved = said;
        a.defaulted = true;
    } else if let Some(expr) = said.first() {
        a.unresolved = vec![strings::shown(expr)];
    }
    // An argv word holding only caller's defaults (`word`).
    if !a.defaulted && e.all_defaults(&a.unresolved) {
        a.defaulted = true;
    }
}

/// The values of an option mapping the file does not fix, each as the token [`unresolved`]
/// marks at its place.
fn unresolved_in(e: &Eval, unknowns: &[(Loc, String)], map: &Node) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut stack = vec![map];
    while let Some(n) = stack.pop() {
        match &n.value {
            Value::Map(entries) => stack.extend(entries.iter().map(|(_, v)| v)),
            Value::Seq(items) => stack.extend(items.iter()),
            _ => {
                let mut a = Arg::new(n.scalar_text().unwrap_or_default(), n.loc);
                unresolved(e, unknowns, &mut a);
                if !a.unresolved.is_empty() {
                    out.push(a);
                }
            }
        }
    }
    out
}

/// The function or class a launch is written in (`Decoder.__command__`).
fn enclosing_name(e: &Eval, at: Loc) -> Option<String> {
    let mut names = Vec::new();
    let mut n = place::node_at(e, at);
    while let Some(s) = n {
        if matches!(s.kind(), "function_definition" | "class_definition") {
            names.extend(s.child_by_field_name("name").map(|x| e.text(x).to_string()));
        }
        n = s.parent();
    }
    names.reverse();
    (!names.is_empty()).then(|| names.join("."))
}

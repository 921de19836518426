//! Where the Python reader's launches run and what they play: the decorators a `python`
//! platform (`platforms/modal.toml`, `platforms/bentoml.toml`) names, `CUDA_VISIBLE_DEVICES` in a
//! `subprocess` env, and the role the names around a launch give it. A launch in a module-level
//! function runs where the decorated functions that call it run (a bounded walk up the calls).

use super::eval::{named, Eval};
use super::{call_node, nodes, Extracted};
use crate::extract::by_platform;
use crate::launch::Launch;
use crate::platform::path::Path;
use crate::platform::{registry, Reader};
use crate::source::Loc;
use crate::yaml::{Node, Value};
use tree_sitter::Node as Ts;

/// A decorator's call as [`call_node`] gives it, with `defines` (the name of the function or class
/// it decorates, spanning that whole definition: the launches in it are the ones it places) and
/// each keyword whose value is a call as that call, its callee's last name under `function`
/// (`gpu=modal.gpu.H100(count=8)` → `{function: H100, kwargs: {count: 8}}`).
pub(super) fn decorator_node(
    e: &Eval,
    call: Ts,
    decorator: Ts,
    unknowns: &mut Vec<(Loc, String)>,
) -> Node {
    let (mut node, _) = call_node(e, call, unknowns);
    let Value::Map(entries) = &mut node.value else {
        return node;
    };
    let str_node = |text: &str, loc: Loc| Node {
        value: Value::Str(text.into()),
        loc,
    };
    let keywords = call
        .child_by_field_name("arguments")
        .into_iter()
        .flat_map(named)
        .filter(|a| a.kind() == "keyword_argument");
    for a in keywords {
        let (Some(k), Some(v)) = (
            a.child_by_field_name("name"),
            a.child_by_field_name("value"),
        ) else {
            continue;
        };
        let Some(f) = v
            .child_by_field_name("function")
            .filter(|_| v.kind() == "call")
        else {
            continue;
        };
        let (mut inner, _) = call_node(e, v, &mut Vec::new());
        if let Value::Map(inner_entries) = &mut inner.value {
            let last = e.text(f).rsplit('.').next().unwrap_or_default();
            inner_entries.push((str_node("function", e.loc(f)), str_node(last, e.loc(f))));
        }
        let kwargs = entries
            .iter_mut()
            .find(|(key, _)| key.as_str() == Some("kwargs"));
        if let Some((
            _,
            Node {
                value: Value::Map(kw),
                ..
            },
        )) = kwargs
        {
            if let Some((_, value)) = kw
                .iter_mut()
                .find(|(key, _)| key.as_str() == Some(e.text(k)))
            {
                *value = inner;
            }
        }
    }
    if let Some(def) = decorator
        .parent()
        .filter(|p| p.kind() == "decorated_definition")
    {
        let name = def
            .child_by_field_name("definition")
            .and_then(|d| d.child_by_field_name("name"))
            .map_or("", |n| e.text(n));
        entries.push((str_node("defines", e.loc(def)), str_node(name, e.loc(def))));
    }
    node
}

/// A launch whose env pins `CUDA_VISIBLE_DEVICES` to GPUs the file names sees only those: two
/// engines sharing a container's two GPUs each have one.
pub(super) fn visible_gpus(l: &mut Launch) {
    let Some((_, v)) = l
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "CUDA_VISIBLE_DEVICES")
    else {
        return;
    };
    let ids = v.text.split(',').filter(|g| !g.trim().is_empty()).count();
    if v.unresolved.is_empty() && ids > 0 {
        l.placement.gpus_per_pod = u32::try_from(ids).ok();
    }
}

/// The role the names in a launch's statement give it, where they name exactly one
/// (`subprocess.Popen(..., str(PREFILL_PORT)], env={"CUDA_VISIBLE_DEVICES": prefill_devices})`),
/// as a container's name does in a pod: names of variables, not the words of strings.
pub(super) fn role_named_in(e: &Eval, at: Loc) -> Option<String> {
    let mut n = node_at(e, at);
    while let Some(s) =
        n.filter(|s| !matches!(s.kind(), "expression_statement" | "return_statement"))
    {
        n = s.parent();
    }
    let mut roles: Vec<&str> = nodes(n?)
        .filter(|i| i.kind() == "identifier")
        .filter_map(|i| crate::extract::roles::named(e.text(i)))
        .collect();
    roles.sort_unstable();
    roles.dedup();
    match roles[..] {
        [one] => Some(one.to_string()),
        _ => None,
    }
}

/// How many module-level functions beyond its own a launch is followed back through to the
/// decorated function or class that runs it: `enter()` calls `serve()`, which calls `launch()`,
/// which holds the launch.
const CALL_DEPTH: usize = 1;

/// The launches each decorator of a `python` platform (`reader = "python"`) encloses, placed as
/// its site says: Modal's `@app.function(gpu="H100:8")`, BentoML's `@bentoml.service(resources=...)`.
/// A launch in a module-level function that no decorator encloses runs where its callers in the
/// file run ([`callers`]): it is placed as the caller on the least-memory GPU is, and a caller that
/// no decorator places (or that names no GPU) leaves it unplaced. A GPU value the file does not fix
/// is left unset (INP003 says so, or `--gpu` stands in).
pub(super) fn place_by_platforms(
    e: &Eval,
    doc: &Node,
    unknowns: &[(Loc, String)],
    out: &mut Extracted,
) {
    let mut sites = Vec::new();
    let placing = registry()
        .plain()
        .filter(|p| p.reader == Some(Reader::Python))
        .filter(|p| by_platform::recognizes(p, e.src, doc));
    for p in placing {
        for site in &p.launches {
            let Ok(at) = Path::parse(&site.at) else {
                continue;
            };
            for node in at.all(doc, doc) {
                if let Some(span) = node.get("defines").map(|d| d.loc) {
                    sites.push((p, site, node, span));
                }
            }
        }
    }
    if sites.is_empty() {
        return;
    }
    let encloses =
        |span: &Loc, at: Loc| at.file == span.file && span.start <= at.start && at.end <= span.end;
    let place_at = |l: &mut Launch, at: Loc| {
        for (p, site, node, _) in sites.iter().filter(|s| encloses(&s.3, at)) {
            by_platform::place_found(p, site, doc, node, l);
            visible_gpus(l);
            let unknown = |at: &Loc| unknowns.iter().any(|(u, _)| u == at);
            if l.placement.gpu.as_ref().is_some_and(|(_, at)| unknown(at)) {
                l.placement.gpu = None;
            }
        }
    };
    let placed = |at: Loc| sites.iter().any(|s| encloses(&s.3, at));
    for l in &mut out.launches {
        if placed(l.command) {
            place_at(l, l.command);
            continue;
        }
        let anchors = callers(e, l.command, &placed, CALL_DEPTH);
        let worst = anchors
            .into_iter()
            .map(|at| {
                let mut as_called = l.clone();
                place_at(&mut as_called, at);
                as_called
            })
            .min_by_key(|c| {
                let gpu = c.placement.gpu.as_ref().map(|(g, _)| g.as_str());
                (by_platform::memory_rank(gpu), c.placement.gpus_per_pod)
            });
        if let Some(w) = worst {
            *l = w;
        }
    }
}

/// Where the launch at `at` runs when a module-level function holds it: each call of that
/// function in the file (or use of it as an argument, `Thread(target=serve)`), followed through
/// further module-level functions up to `depth` calls while no decorator `placed` encloses it.
/// None when the launch is not in a module-level function, the function is bound more than once
/// at module level (which one a call reaches is not fixed) or the file never calls it.
fn callers(e: &Eval, at: Loc, placed: &dyn Fn(Loc) -> bool, depth: usize) -> Vec<Loc> {
    let Some(def) = module_function(e, at) else {
        return Vec::new();
    };
    let Some(name) = def.child_by_field_name("name").map(|n| e.text(n)) else {
        return Vec::new();
    };
    if named(e.root).filter(|s| binds(e, *s, name)).count() != 1 {
        return Vec::new();
    }
    let inside_def = |n: Ts| def.start_byte() <= n.start_byte() && n.end_byte() <= def.end_byte();
    let mut out = Vec::new();
    for used in nodes(e.root).filter(|n| n.kind() == "identifier" && e.text(*n) == name) {
        if inside_def(used) || !runs(used) {
            continue;
        }
        let call = e.loc(used);
        let further = match depth {
            0 => Vec::new(),
            _ if placed(call) => Vec::new(),
            _ => callers(e, call, placed, depth - 1),
        };
        if further.is_empty() {
            out.push(call);
        } else {
            out.extend(further);
        }
    }
    out
}

/// The module-level function (`def`, decorated or not, `async` too) that holds `at`.
fn module_function<'a>(e: &Eval<'a>, at: Loc) -> Option<Ts<'a>> {
    let mut n = node_at(e, at)?;
    while let Some(p) = n.parent().filter(|p| p.kind() != "module") {
        n = p;
    }
    let def = match n.kind() {
        "decorated_definition" => n.child_by_field_name("definition")?,
        _ => n,
    };
    (def.kind() == "function_definition").then_some(def)
}

/// Whether a module-level statement binds `name`: a `def`, a `class` or an assignment to it.
pub(super) fn binds(e: &Eval, statement: Ts, name: &str) -> bool {
    let statement = match statement.kind() {
        "decorated_definition" => statement.child_by_field_name("definition"),
        "expression_statement" => statement.named_child(0),
        _ => Some(statement),
    };
    let Some(s) = statement else {
        return false;
    };
    let bound = match s.kind() {
        "function_definition" | "class_definition" => s.child_by_field_name("name"),
        "assignment" => s.child_by_field_name("left"),
        _ => None,
    };
    bound.is_some_and(|b| e.text(b) == name)
}

/// Whether an identifier runs the function it names: it is called (`serve()`) or handed to a
/// call as an argument (`Thread(target=serve)`, `executor.submit(serve)`).
fn runs(used: Ts) -> bool {
    let Some(parent) = used.parent() else {
        return false;
    };
    let is = |field: &str| parent.child_by_field_name(field) == Some(used);
    match parent.kind() {
        "call" => is("function"),
        "argument_list" => true,
        "keyword_argument" => is("value"),
        _ => false,
    }
}

/// The node that holds `at`.
pub(super) fn node_at<'a>(e: &Eval<'a>, at: Loc) -> Option<Ts<'a>> {
    e.root
        .descendant_for_byte_range(at.start, at.end.max(at.start))
}

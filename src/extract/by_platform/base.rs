//! A workload template held as YAML text in another object of the input (llm-d's BaseConfig
//! ConfigMap: `data.decodeDeployment`), rendered and merged as the platform's controller does it
//! (`crate::platform::Base`): Go-template actions filled from the document, then the site's
//! section merged over the template. Every node keeps its place: the template's in the object
//! that holds it, the section's in the document.
//!
//! Mirrors llm-d/llm-d-model-service internal/controller: `InterpolateBaseConfigMap` renders the
//! whole text before it is parsed (child_resources.go), `interpolateContainerArgs` renders each of
//! the section's args, `mergePDDeployment` merges with `containerSliceTransformer`
//! (merge_transformers.go: containers by name, a given `command` replaces, args through
//! `stringSlicePrependTransformer`, env by name) and adds `AcceleratorTypesToNodeAffinity`.

use crate::finding::Finding;
use crate::platform::path::{first_of, Path};
use crate::platform::{ArgsOrder, Base};
use crate::source::{FileId, Loc, SourceFile, Sources};
use crate::yaml::{Node, Value};
use std::collections::HashMap;

/// The values a document gives its template's variables and lookup functions.
#[derive(Debug, Default)]
pub struct Values {
    /// Each variable's value and the place it was derived from.
    vars: HashMap<String, (String, Loc)>,
    lookups: HashMap<String, HashMap<String, String>>,
}

/// What reading a site's template gives.
pub enum Template {
    /// The pod template as the controller renders it, and the place of the template's text.
    Merged { pod: Node, held: Loc },
    /// The object the site names is not in this file: where it is named, and its name.
    Missing { at: Loc, name: String },
    /// The template is there but kvlint does not render it: where, and why.
    Unread { at: Loc, why: String },
    /// Neither the object holds a template for the site nor does the site have its section: the
    /// controller renders nothing for it.
    Absent,
}

/// The variables and lookups of `base`, as the document fills them. A variable no derivation
/// gives is left out: its actions stay as written, values kvlint cannot see.
pub fn values(base: &Base, doc: &Node, site: &Node) -> Values {
    let text = |path: &str| {
        let n = first_of(&[path.to_string()], doc, site)?;
        Some((n.scalar_text().filter(|t| !t.is_empty())?, n.loc))
    };
    let mut out = Values::default();
    for (name, derivations) in &base.vars {
        let derived = derivations.iter().find_map(|d| {
            let (raw, at) = text(&d.path)?;
            let rest = match &d.strip {
                Some(prefix) => raw.strip_prefix(prefix.as_str())?.to_string(),
                None => raw,
            };
            if let Some(v) = &d.value {
                return Some((v.clone(), at));
            }
            let kept: Vec<&str> = rest.split('/').skip(d.skip).collect();
            let kept = kept.join("/");
            (!kept.is_empty()).then(|| (format!("{}{kept}", d.before), at))
        });
        if let Some(v) = derived {
            out.vars.insert(name.clone(), v);
        }
    }
    for (name, l) in &base.lookups {
        let list = first_of(std::slice::from_ref(&l.list), doc, site);
        let items = super::super::k8s::placement::items(list);
        let table = items
            .filter_map(|i| {
                Some((
                    i.get(&l.key)?.scalar_text()?,
                    i.get(&l.value)?.scalar_text()?,
                ))
            })
            .collect();
        out.lookups.insert(name.clone(), table);
    }
    out
}

impl Values {
    /// The first of `names` the document gives, with where.
    pub fn first(&self, names: &[String]) -> Option<(&str, Loc)> {
        names
            .iter()
            .find_map(|n| self.vars.get(n).map(|(v, at)| (v.as_str(), *at)))
    }
}

/// The byte ranges of the `{{ ... }}` actions in `text`.
fn actions(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|i| from + i) {
        let Some(close) = text[open + 2..].find("}}").map(|i| open + 2 + i + 2) else {
            // Never closed: up to its line's end, for `render` to say so.
            let end = text[open..].find('\n').map_or(text.len(), |i| open + i);
            out.push(open..end);
            break;
        };
        out.push(open..close);
        from = close;
    }
    out
}

/// Why an action is not one kvlint renders (control flow, a trim marker, a variable), if so.
fn control(inner: &str) -> Option<String> {
    const WORDS: [&str; 10] = [
        "if", "else", "end", "range", "with", "define", "template", "block", "break", "continue",
    ];
    let trimmed = inner.trim();
    let first = trimmed.split_whitespace().next().unwrap_or_default();
    let unread = inner.starts_with('-')
        || inner.ends_with('-')
        || trimmed.starts_with("/*")
        || trimmed.starts_with('$')
        || WORDS.contains(&first);
    unread.then(|| {
        format!("`{{{{{inner}}}}}` is Go-template control flow, which kvlint does not render")
    })
}

/// The value of one action (`.HFModelName`, `"app_port" | getPort`, `getPort "app_port"`), when
/// the document gives it.
fn action_value(inner: &str, v: &Values) -> Option<String> {
    let inner = inner.trim();
    if let Some(field) = inner.strip_prefix('.') {
        return v.vars.get(field).map(|(value, _)| value.clone());
    }
    let quoted = |s: &str| {
        let s = s.trim();
        s.strip_prefix('"')?.strip_suffix('"').map(str::to_string)
    };
    let (arg, func) = match inner.split_once('|') {
        Some((arg, func)) => (quoted(arg)?, func.trim()),
        None => {
            let (func, arg) = inner.split_once(char::is_whitespace)?;
            (quoted(arg)?, func)
        }
    };
    v.lookups.get(func)?.get(&arg).cloned()
}

/// `text` with each action the document gives replaced by its value; the others stay as
/// written, so that the launch says which value it could not see.
pub fn fill(text: &str, v: &Values) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for r in actions(text) {
        out.push_str(&text[last..r.start]);
        let inner = &text[r.start + 2..r.end - 2];
        match action_value(inner, v) {
            Some(value) => out.push_str(&value),
            None => out.push_str(&text[r.clone()]),
        }
        last = r.end;
    }
    out.push_str(&text[last..]);
    out
}

/// The site's template, rendered, with its section merged over it.
pub fn template(
    base: &Base,
    file: FileId,
    src: &SourceFile,
    doc: &Node,
    site: &Node,
    v: &Values,
) -> Template {
    let section = first_of(std::slice::from_ref(&base.section), doc, site);
    let named = first_of(std::slice::from_ref(&base.name), doc, site);
    let Some((name_node, name)) = named.and_then(|n| Some((n, n.scalar_text()?))) else {
        return match section {
            // No template named: the controller merges the section over an empty Deployment.
            Some(s) => Template::Merged {
                pod: merge(base, None, Some(s), v),
                held: Loc::new(s.loc.file, 0..0),
            },
            None => Template::Absent,
        };
    };
    let namespace = doc
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .and_then(Node::scalar_text);
    let is_it = |d: &Node| {
        let meta = d.get("metadata");
        let text = |k: &str| meta.and_then(|m| m.get(k)).and_then(Node::scalar_text);
        d.get("kind").and_then(Node::as_str) == Some(base.kind.as_str())
            && text("name").as_deref() == Some(name.as_str())
            && (namespace.is_none()
                || text("namespace").is_none()
                || text("namespace") == namespace)
    };
    // `kubectl get configmap,modelservice -o yaml` prints a `List` whose items are the objects.
    let objects = crate::yaml::documents(file, src).flatten().flat_map(|d| {
        match d.get("kind").and_then(Node::as_str) {
            Some("List") => super::super::k8s::placement::items(d.get("items"))
                .cloned()
                .collect(),
            _ => vec![d],
        }
    });
    let Some(object) = objects.into_iter().find(is_it) else {
        return Template::Missing {
            at: name_node.loc,
            name,
        };
    };
    let (held, at) = match held_text(base, file, src, &object, v) {
        Ok(Some((t, at))) => (Some(t), at),
        Ok(None) if section.is_none() => return Template::Absent,
        Ok(None) => (None, Loc::new(file, 0..0)),
        Err((at, why)) => return Template::Unread { at, why },
    };
    let pod = held.as_ref().and_then(|t| {
        Path::parse(&base.pod_template)
            .ok()
            .and_then(|p| p.first(t, t).cloned())
    });
    Template::Merged {
        pod: merge(base, pod, section, v),
        held: at,
    }
}

/// The template text at `base.text` of `object`, rendered and parsed, with the place of the
/// string; `None` when the object has no such key.
fn held_text(
    base: &Base,
    file: FileId,
    src: &SourceFile,
    object: &Node,
    v: &Values,
) -> Result<Option<(Node, Loc)>, (Loc, String)> {
    let Some((last, keys)) = base.text.split_last() else {
        return Ok(None);
    };
    let parent = keys.iter().try_fold(object, |n, k| n.get(k));
    let Some(Value::Map(entries)) = parent.map(|p| &p.value) else {
        return Ok(None);
    };
    let Some((key, value)) = entries.iter().find(|(k, _)| k.as_str() == Some(last)) else {
        return Ok(None);
    };
    // The block indicator stands between the key and the string's first line.
    let raw = src.text.get(key.loc.end..value.loc.end).unwrap_or_default();
    let block = raw.trim_start_matches([':', ' ']).starts_with(['|', '>']);
    // A block string is read in place, so that its nodes point into the input; another string
    // (JSON input) is read on its own, every node then at the string.
    let text = match block {
        true => crate::extract::k8s::mounts::block_of(&src.text, key.loc),
        false => value.as_str().unwrap_or_default().to_string(),
    };
    let (rendered, tokens) = render(&text, v).map_err(|(at, why)| match block {
        true => (Loc::new(file, at), why),
        false => (value.loc, why),
    })?;
    let held = SourceFile::new(src.name.clone(), rendered);
    // sigs.k8s.io/yaml `Unmarshal` (not its `UnmarshalStrict`): a repeated key is no error, the
    // last one wins.
    let mut node = crate::yaml::parse_document_last_key_wins(file, &held)
        .map_err(|e| (value.loc, format!("its template is no YAML: {}", e.message)))?;
    substitute(&mut node, &tokens, (!block).then_some(value.loc));
    Ok(Some((node, value.loc)))
}

/// Where and why a template is not rendered.
type Unrendered = (std::ops::Range<usize>, String);

/// `text` with each action replaced by a placeholder word of the same length (so that the text
/// parses as YAML, as the controller's rendered text does, and keeps its places), and each
/// placeholder with what stands there once rendered: the value, or the action as written.
fn render(text: &str, v: &Values) -> Result<(String, Vec<(String, String)>), Unrendered> {
    let mut out = text.to_string();
    let mut tokens = Vec::new();
    for (i, r) in actions(text).into_iter().enumerate() {
        let action = &text[r.clone()];
        // text/template's lexer: an action ends at its own `}}`; one that runs into the next
        // line's action (`{{ "app_port" | getPort }"`) does not parse, and nothing is rendered.
        let inner = action
            .get(2..action.len().saturating_sub(2))
            .unwrap_or_default();
        if !action.ends_with("}}") || r.len() < 4 || inner.contains("{{") || inner.contains('\n') {
            let line = text[r.clone()].lines().next().unwrap_or_default().trim();
            let why = format!(
                "`{line}` opens a Go-template action that is not closed on its line, so the \
                 controller cannot parse the template"
            );
            return Err((r.start..r.start + line.len(), why));
        }
        if let Some(why) = control(inner) {
            return Err((r, why));
        }
        let word = [format!("KVLT{i}Q"), format!("K{i}")]
            .into_iter()
            .find(|w| w.len() <= r.len())
            .ok_or_else(|| {
                (
                    r.clone(),
                    format!("`{}` is too short an action to read", &text[r.clone()]),
                )
            })?;
        let word = format!("{word:Q<width$}", width = r.len());
        let value = action_value(inner, v).unwrap_or_else(|| text[r.clone()].to_string());
        out.replace_range(r, &word);
        tokens.push((word, value));
    }
    Ok((out, tokens))
}

/// Every string of the tree with its placeholders replaced; every place moved to `at` when given.
fn substitute(node: &mut Node, tokens: &[(String, String)], at: Option<Loc>) {
    if let Some(at) = at {
        node.loc = at;
    }
    match &mut node.value {
        Value::Str(s) => {
            for (word, value) in tokens {
                if s.contains(word.as_str()) {
                    *s = s.replace(word.as_str(), value);
                }
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|n| substitute(n, tokens, at)),
        Value::Map(entries) => {
            for (k, val) in entries.iter_mut() {
                substitute(k, tokens, at);
                substitute(val, tokens, at);
            }
            let mut seen = std::collections::HashSet::new();
            let mut keep: Vec<bool> = entries
                .iter()
                .rev()
                .map(|(k, _)| k.as_str().is_none_or(|k| seen.insert(k.to_string())))
                .collect();
            keep.reverse();
            let mut keep = keep.into_iter();
            entries.retain(|_| keep.next().unwrap_or(true));
        }
        _ => {}
    }
}

fn node(value: Value, loc: Loc) -> Node {
    Node { value, loc }
}

/// Sets `key` of a mapping node, in place of an entry of that key.
fn set(map: &mut Node, key: &str, value: Node) {
    let loc = map.loc;
    if !matches!(map.value, Value::Map(_)) {
        map.value = Value::Map(Vec::new());
    }
    if let Value::Map(entries) = &mut map.value {
        match entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
            Some((_, v)) => *v = value,
            None => entries.push((node(Value::Str(key.into()), loc), value)),
        }
    }
}

/// The mapping at `key` of `map`, made when missing.
fn child<'n>(map: &'n mut Node, key: &str) -> &'n mut Node {
    if map
        .get(key)
        .is_none_or(|c| !matches!(c.value, Value::Map(_)))
    {
        let loc = map.loc;
        set(map, key, node(Value::Map(Vec::new()), loc));
    }
    let Value::Map(entries) = &mut map.value else {
        unreachable!("`set` made it a mapping")
    };
    let at = entries.iter().position(|(k, _)| k.as_str() == Some(key));
    &mut entries[at.unwrap_or_default()].1
}

fn seq(n: Option<&Node>) -> Vec<Node> {
    super::super::k8s::placement::items(n).cloned().collect()
}

/// The pod template the controller renders: the template's (else an empty one), the section's
/// containers and init containers merged over it by name, its node affinity term added.
pub fn merge(base: &Base, pod: Option<Node>, section: Option<&Node>, v: &Values) -> Node {
    let at = section.map_or_else(|| Loc::new(FileId(0), 0..0), |s| s.loc);
    let mut pod = pod.unwrap_or_else(|| node(Value::Map(Vec::new()), at));
    let Some(section) = section else { return pod };
    let order = base.args.first().copied().unwrap_or(ArgsOrder::Prepend);
    let spec = child(&mut pod, "spec");
    let own = |path: &str| first_of(&[path.to_string()], section, section);
    let lists = [
        ("containers", own(&base.containers)),
        ("initContainers", section.get("initContainers")),
    ];
    for (key, theirs) in lists {
        let mut merged = seq(spec.get(key));
        for c in seq(theirs) {
            let c = filled(&c, v);
            let name = c.get("name").and_then(Node::scalar_text);
            let same = merged
                .iter()
                .position(|m| m.get("name").and_then(Node::scalar_text) == name);
            match same {
                Some(i) => merged[i] = container(&merged[i], &c, order),
                None => merged.push(c),
            }
        }
        if !merged.is_empty() {
            let loc = spec.get(key).or(theirs).map_or(at, |n| n.loc);
            set(spec, key, node(Value::Seq(merged), loc));
        }
    }
    if let Some(term) = base
        .node_affinity
        .as_deref()
        .and_then(|p| affinity(own(p)?))
    {
        let required = child(
            child(child(spec, "affinity"), "nodeAffinity"),
            "requiredDuringSchedulingIgnoredDuringExecution",
        );
        let mut terms = seq(required.get("nodeSelectorTerms"));
        let loc = term.loc;
        terms.push(term);
        set(required, "nodeSelectorTerms", node(Value::Seq(terms), loc));
    }
    pod
}

/// A section's container with its args rendered, one string at a time (the controller's
/// `interpolateContainerArgs`).
fn filled(c: &Node, v: &Values) -> Node {
    let mut c = c.clone();
    if let Some(args) = c.get("args") {
        let mut args = args.clone();
        if let Value::Seq(items) = &mut args.value {
            for a in items.iter_mut() {
                if let Value::Str(s) = &mut a.value {
                    *s = fill(s, v);
                }
            }
        }
        set(&mut c, "args", args);
    }
    c
}

/// The template's container `b` with the section's `c` merged over it.
fn container(b: &Node, c: &Node, order: ArgsOrder) -> Node {
    let mut out = b.clone();
    let given = |k: &str| c.get(k).filter(|n| !matches!(&n.value, Value::Null));
    if let Some(command) = given("command").filter(|n| !seq(Some(n)).is_empty()) {
        set(&mut out, "command", command.clone());
    }
    if let Some(image) = given("image") {
        set(&mut out, "image", image.clone());
    }
    if let Some(theirs) = given("args").filter(|n| !seq(Some(n)).is_empty()) {
        let ours = seq(b.get("args"));
        let (first, then) = match order {
            ArgsOrder::Prepend => (seq(Some(theirs)), ours),
            ArgsOrder::Append => (ours, seq(Some(theirs))),
        };
        let loc = b.get("args").map_or(theirs.loc, |a| a.loc);
        set(
            &mut out,
            "args",
            node(Value::Seq([first, then].concat()), loc),
        );
    }
    if let Some(env) = given("env") {
        let mut merged = seq(b.get("env"));
        for e in seq(Some(env)) {
            let name = e.get("name").and_then(Node::scalar_text);
            match merged
                .iter()
                .position(|m| m.get("name").and_then(Node::scalar_text) == name)
            {
                Some(i) => merged[i] = e,
                None => merged.push(e),
            }
        }
        set(&mut out, "env", node(Value::Seq(merged), env.loc));
    }
    if let Some(resources) = given("resources") {
        let mut merged = b
            .get("resources")
            .cloned()
            .unwrap_or_else(|| resources.clone());
        for part in ["limits", "requests"] {
            let Some(Value::Map(entries)) = resources.get(part).map(|p| &p.value) else {
                continue;
            };
            let target = child(&mut merged, part);
            for (k, val) in entries {
                if let Some(k) = k.as_str() {
                    set(target, k, val.clone());
                }
            }
        }
        set(&mut out, "resources", merged);
    }
    out
}

/// `{labelKey, labelValues}` as the required node-selector term the controller writes.
fn affinity(types: &Node) -> Option<Node> {
    let key = types.get("labelKey")?.clone();
    let values = types.get("labelValues")?.clone();
    let loc = types.loc;
    let mut req = node(Value::Map(Vec::new()), loc);
    set(&mut req, "key", key);
    set(&mut req, "operator", node(Value::Str("In".into()), loc));
    set(&mut req, "values", values);
    let mut term = node(Value::Map(Vec::new()), loc);
    set(
        &mut term,
        "matchExpressions",
        node(Value::Seq(vec![req]), loc),
    );
    Some(term)
}

/// The vars that carry, on a finding that a template's holder is not in its file, the holder's
/// kind and name to [`held_in_run`].
pub const HELD_KIND: &str = "held_kind";
pub const HELD_NAME: &str = "held_name";

/// After every file of a run is read: a template's holder that another file of the run holds is
/// named in the finding's help, with the command that reads them together. kvlint reads a
/// template from the file (or stream) of the object that names it only: each file's launches are
/// checked as the file is read.
pub fn held_in_run(findings: &mut [Finding], sources: &Sources) {
    let wanted: Vec<usize> = (0..findings.len())
        .filter(|&i| findings[i].get(HELD_NAME).is_some())
        .collect();
    if wanted.is_empty() {
        return;
    }
    let mut held: Vec<(String, String, FileId)> = Vec::new();
    for (id, src) in sources.iter() {
        for d in crate::yaml::documents(id, src).flatten() {
            let kind = d.get("kind").and_then(Node::as_str);
            let name = d
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Node::scalar_text);
            if let (Some(kind), Some(name)) = (kind, name) {
                held.push((kind.to_string(), name, id));
            }
        }
    }
    for i in wanted {
        let f = &findings[i];
        let (Some(kind), Some(name), Some(at)) = (f.get(HELD_KIND), f.get(HELD_NAME), f.primary)
        else {
            continue;
        };
        let other = held
            .iter()
            .find(|(k, n, id)| k == kind && n == name && *id != at.file);
        if let Some((_, _, id)) = other {
            let (there, here) = (&sources.get(*id).name, &sources.get(at.file).name);
            let help = format!(
                "the {kind} `{name}` is in {there}, another file of this run; kvlint reads it with \
                 the resource that names it only from one file or stream: `cat {there} {here} | \
                 kvlint check -`"
            );
            findings[i] = findings[i].clone().var("help", help);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(vars: &[(&str, &str)], ports: &[(&str, &str)]) -> Values {
        let s = |(a, b): &(&str, &str)| (a.to_string(), b.to_string());
        let at = Loc::new(FileId(0), 0..0);
        Values {
            vars: vars
                .iter()
                .map(|(a, b)| (a.to_string(), (b.to_string(), at)))
                .collect(),
            lookups: [("getPort".to_string(), ports.iter().map(s).collect())].into(),
        }
    }

    #[test]
    fn actions_are_filled_where_the_document_gives_them() {
        let v = values(
            &[("HFModelName", "facebook/opt-125m")],
            &[("app_port", "8000")],
        );
        assert_eq!(fill("{{ .HFModelName }}", &v), "facebook/opt-125m");
        assert_eq!(
            fill("--port={{ \"app_port\" | getPort }}", &v),
            "--port=8000"
        );
        assert_eq!(fill("{{ getPort \"app_port\" }}", &v), "8000");
        // Not given: kept as written, for the launch to say it.
        assert_eq!(fill("{{ .ModelPath }}", &v), "{{ .ModelPath }}");
        assert_eq!(
            fill("{{ \"other\" | getPort }}", &v),
            "{{ \"other\" | getPort }}"
        );
    }

    #[test]
    fn placeholders_keep_the_places_of_the_text() {
        let v = values(&[], &[("internal_port", "8200")]);
        let text = "args:\n- \"{{ \"internal_port\" | getPort }}\"\n- x\n";
        let (out, tokens) = render(text, &v).unwrap();
        assert_eq!(out.len(), text.len());
        assert_eq!(out.find("- x"), text.find("- x"));
        assert_eq!(tokens[0].1, "8200");
        let (at, why) = render("{{ if .X }}a{{ end }}", &v).unwrap_err();
        assert_eq!((at, why.contains("control flow")), (0..11, true));
        assert!(render("{{- .X }}", &v).is_err());
        // An action left open runs into the next one: the controller cannot parse it.
        let open = "- \"{{ \"app_port\" | getPort }\"\n- {{ .X }}\n";
        let (at, why) = render(open, &v).unwrap_err();
        assert_eq!(&open[at], "{{ \"app_port\" | getPort }\"");
        assert!(why.contains("not closed on its line"), "{why}");
    }
}

//! A site's section merged over the workload template it names, as the platform's controller
//! merges them (`crate::platform::Base`; `super::base` renders the template): containers by name
//! or one container into the template's of a name, pod fields over the template's pod spec, a
//! node affinity term added. See `super::base` for the controllers' source this mirrors.

use super::base::{fill, Values};
use crate::platform::path::first_of;
use crate::platform::{ArgsOrder, Base, Overlay};
use crate::source::{FileId, Loc};
use crate::yaml::{Node, Value};

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
/// containers and init containers merged over it by name (or its one container over the
/// template's of the overlay's name), its pod fields over the template's pod spec, its node
/// affinity term added. `Err` when the template lacks the container the overlay goes into.
pub fn merge(
    base: &Base,
    pod: Option<Node>,
    section: Option<&Node>,
    v: &Values,
) -> Result<Node, String> {
    let at = section.map_or_else(|| Loc::new(FileId(0), 0..0), |s| s.loc);
    let templated = pod.is_some();
    let mut pod = pod.unwrap_or_else(|| node(Value::Map(Vec::new()), at));
    let Some(section) = section else {
        return Ok(pod);
    };
    let order = base.args.first().copied().unwrap_or(ArgsOrder::Prepend);
    let spec = child(&mut pod, "spec");
    let own = |path: &str| first_of(&[path.to_string()], section, section);
    if let Some(fields) = base.pod.as_deref().and_then(own) {
        pod_fields(spec, fields, base);
    }
    let lists = [
        ("containers", base.containers.as_deref().and_then(own)),
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
    if let Some(o) = &base.container {
        overlay(spec, o, section, v, templated, order)?;
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
    Ok(pod)
}

/// The section's pod fields over the template's pod spec, as a strategic merge patch of a
/// `PodSpec` does for the fields that decide placement: mappings key by key, anything else
/// replaced. Containers are merged on their own; the overlay's key is the container, no field.
fn pod_fields(spec: &mut Node, fields: &Node, base: &Base) {
    let Value::Map(entries) = &fields.value else {
        return;
    };
    let overlay_key = base
        .container
        .as_ref()
        .and_then(|o| o.path.split('.').next());
    let skip = |k: &str| {
        ["containers", "initContainers"].contains(&k)
            || base.containers.as_deref() == Some(k)
            || overlay_key == Some(k)
    };
    for (k, val) in entries {
        let Some(key) = k.as_str().filter(|k| !skip(k)) else {
            continue;
        };
        patch(spec, key, val);
    }
}

/// `value` set at `key` of `map`, merged key by key into a mapping already there.
fn patch(map: &mut Node, key: &str, value: &Node) {
    let both = matches!(value.value, Value::Map(_))
        && map
            .get(key)
            .is_some_and(|t| matches!(t.value, Value::Map(_)));
    let Value::Map(entries) = &value.value else {
        return set(map, key, value.clone());
    };
    if !both {
        return set(map, key, value.clone());
    }
    let target = child(map, key);
    for (k, v) in entries {
        if let Some(k) = k.as_str() {
            patch(target, k, v);
        }
    }
}

/// The section's one container merged over the template's container of the overlay's name (put
/// there under that name when there is no template), its image tagged as the section says.
fn overlay(
    spec: &mut Node,
    o: &Overlay,
    section: &Node,
    v: &Values,
    templated: bool,
    order: ArgsOrder,
) -> Result<(), String> {
    let own = |path: &str| first_of(&[path.to_string()], section, section);
    let mut containers = seq(spec.get("containers"));
    let at = containers
        .iter()
        .position(|c| c.get("name").and_then(Node::scalar_text).as_deref() == Some(&o.into));
    let theirs = own(&o.path).map(|c| filled(c, v));
    let merged = match (at, theirs) {
        (Some(i), Some(c)) => container(&containers[i], &c, order),
        (Some(i), None) => containers[i].clone(),
        (None, _) if templated => {
            return Err(format!(
                "the template has no container named `{}`, which the controller merges `{}` \
                 into: it renders no pod",
                o.into, o.path
            ))
        }
        (None, None) => return Ok(()),
        (None, Some(mut c)) => {
            let at = c.loc;
            set(&mut c, "name", node(Value::Str(o.into.clone()), at));
            c
        }
    };
    let merged = tagged(merged, o.image_tag.as_deref().and_then(own));
    let loc = spec.get("containers").map_or(section.loc, |n| n.loc);
    match at {
        Some(i) => containers[i] = merged,
        None => containers.push(merged),
    }
    set(spec, "containers", node(Value::Seq(containers), loc));
    Ok(())
}

/// The container with its image's tag replaced by `tag` (or the tag added), unless the image is
/// pinned by digest: kserve `UpdateImageTag`, whose tag is `:[\w.-]*` at the image's end.
fn tagged(mut c: Node, tag: Option<&Node>) -> Node {
    let (Some(tag), Some(image)) = (tag, c.get("image").and_then(Node::as_str)) else {
        return c;
    };
    let Some(t) = tag.scalar_text().filter(|_| !image.contains("@sha256:")) else {
        return c;
    };
    let word = |ch: char| ch.is_ascii_alphanumeric() || "_.-".contains(ch);
    let repo = match image.rsplit_once(':') {
        Some((repo, old)) if old.chars().all(word) => repo,
        _ => image,
    };
    let image = node(Value::Str(format!("{repo}:{t}")), tag.loc);
    set(&mut c, "image", image);
    c
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

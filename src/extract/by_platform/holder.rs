//! The object of the input that holds a site's workload template (`crate::platform::Base`): the
//! one the site names, of the first of `kinds` that has it, or the one `select` picks where the
//! site names none.
//!
//! Mirrors KServe's runtime lookup: kserve pkg/controller/v1beta1/inferenceservice/utils/utils.go
//! `GetServingRuntime` (the namespace's ServingRuntime of that name, else the
//! ClusterServingRuntime), components/predictor.go `reconcileModel` (a named runtime that is
//! disabled or does not support the model's format renders no pod), pkg/apis/serving/v1beta1/
//! predictor_model.go `GetSupportingRuntimes` (namespace runtimes before cluster ones, each sorted
//! by `sortSupportedRuntimeByPriority`) and `RuntimeSupportsModel` /
//! `getServingRuntimeSupportedModelFormatLabelSet` (`mt:NAME` or `mt:NAME:VERSION`, exact; an
//! unnamed runtime only through `autoSelect` formats).

use crate::extract::k8s::placement::items;
use crate::platform::path::first_of;
use crate::platform::{Base, Select};
use crate::source::{FileId, Loc, SourceFile};
use crate::yaml::{Node, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

/// What the input holds for a site's template.
pub enum Holder<'o> {
    Found(&'o Node),
    /// The site names no object and nothing picks one.
    Unnamed,
    /// No object of the input is it: where the site names (or asks for) it, what it is in words,
    /// and its name when the site gives one.
    Missing {
        at: Loc,
        what: String,
        name: Option<String>,
    },
    /// The controller renders no pod from what the input holds: where, and why.
    Refused {
        at: Loc,
        why: String,
    },
}

/// The input's objects, the items of a `kind: List` (what `kubectl get -o yaml` prints) too,
/// and which of them a site of another object renders (filled on first use).
pub struct Objects {
    pub all: Vec<Node>,
    claimed: OnceLock<HashSet<Loc>>,
}

/// What a file being read (`extract::read_each`) holds once parsed, by file and text: every
/// site whose template another object holds looks it up, and parsing the input again for each
/// made a render of 3,000 InferenceServices and runtimes take minutes.
type Key = (FileId, usize, usize);
type Slots = Mutex<HashMap<Key, Arc<OnceLock<Arc<Objects>>>>>;
static READING: LazyLock<Slots> = LazyLock::new(Default::default);

/// While it lives, the objects of `src` are parsed once for every lookup, on any thread; a
/// lookup outside it parses them itself.
pub struct Reading(Option<Key>);

/// Opens [`Reading`] for a file.
pub fn reading(file: FileId, src: &SourceFile) -> Reading {
    if src.text.is_empty() {
        return Reading(None);
    }
    let key = key(file, src);
    slots().insert(key, Arc::default());
    Reading(Some(key))
}

impl Drop for Reading {
    fn drop(&mut self) {
        if let Some(key) = self.0 {
            slots().remove(&key);
        }
    }
}

fn key(file: FileId, src: &SourceFile) -> Key {
    (file, src.text.as_ptr() as usize, src.text.len())
}

fn slots() -> std::sync::MutexGuard<'static, HashMap<Key, Arc<OnceLock<Arc<Objects>>>>> {
    READING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The input's objects: parsed once while the file is being read, else now.
pub fn objects(file: FileId, src: &SourceFile) -> Arc<Objects> {
    let parse = || {
        let all = crate::yaml::documents(file, src)
            .flatten()
            .flat_map(|d| match d.get("kind").and_then(Node::as_str) {
                Some("List") => items(d.get("items")).cloned().collect(),
                _ => vec![d],
            })
            .collect();
        Arc::new(Objects {
            all,
            claimed: OnceLock::new(),
        })
    };
    let slot = slots().get(&key(file, src)).cloned();
    match slot {
        Some(slot) => slot.get_or_init(parse).clone(),
        None => parse(),
    }
}

/// `kinds` in words: `ServingRuntime or ClusterServingRuntime`.
pub fn kinds(base: &Base) -> String {
    base.kinds.join(" or ")
}

fn text(object: &Node, key: &str) -> Option<String> {
    object.get("metadata")?.get(key)?.scalar_text()
}

/// Whether `object` is of `kind` and may serve a site in `namespace`: an object without a
/// namespace (cluster-scoped, or written without one) may.
fn of_kind(object: &Node, kind: &str, namespace: Option<&str>) -> bool {
    let theirs = text(object, "namespace");
    object.get("kind").and_then(Node::as_str) == Some(kind)
        && (namespace.is_none() || theirs.is_none() || theirs.as_deref() == namespace)
}

/// The site's holder among `objects`.
pub fn find<'o>(base: &Base, objects: &'o [Node], doc: &Node, site: &Node) -> Holder<'o> {
    let namespace = text(doc, "namespace");
    let ns = namespace.as_deref();
    let named = first_of(std::slice::from_ref(&base.name), doc, site);
    if let Some((at, name)) = named.and_then(|n| Some((n.loc, n.scalar_text()?))) {
        let is = |o: &&Node, k: &String| of_kind(o, k, ns) && text(o, "name") == Some(name.clone());
        let found = base
            .kinds
            .iter()
            .find_map(|k| objects.iter().find(|o| is(o, k)));
        return match (found, &base.select) {
            (None, _) => Holder::Missing {
                at,
                what: format!("{} `{name}`", kinds(base)),
                name: Some(name),
            },
            (Some(o), Some(s)) => match refusal(s, o, doc, site) {
                Some(why) => Holder::Refused { at, why },
                None => Holder::Found(o),
            },
            (Some(o), None) => Holder::Found(o),
        };
    }
    let Some(s) = &base.select else {
        return Holder::Unnamed;
    };
    let Some((value, version)) = wanted(s, doc, site) else {
        return Holder::Unnamed;
    };
    let at = value.loc;
    let value = value.scalar_text().unwrap_or_default();
    for kind in &base.kinds {
        let ranked: Vec<(&Node, Option<i64>)> = objects
            .iter()
            .filter(|o| of_kind(o, kind, ns) && !disabled(s, o))
            .filter_map(|o| Some((o, supports(s, o, &value, version.as_deref(), true)?)))
            .collect();
        let Some(best) = ranked.iter().map(|(_, p)| *p).max() else {
            continue;
        };
        let top: Vec<&Node> = ranked
            .iter()
            .filter(|(_, p)| *p == best)
            .map(|(o, _)| *o)
            .collect();
        if let [one] = top[..] {
            return Holder::Found(one);
        }
        let names: Vec<String> = top
            .iter()
            .map(|o| format!("`{}`", text(o, "name").unwrap_or_default()))
            .collect();
        let why = format!(
            "the {kind}s {} all support `{value}` with `{}` at the same priority: the \
             controller picks the one created last, which the input does not say",
            names.join(", "),
            s.auto
        );
        return Holder::Refused { at, why };
    }
    Holder::Missing {
        at,
        what: format!("{} that supports `{value}` with `{}`", kinds(base), s.auto),
        name: None,
    }
}

/// The value (and version) the site asks its holder to support.
fn wanted<'d>(s: &Select, doc: &'d Node, site: &'d Node) -> Option<(&'d Node, Option<String>)> {
    let value = first_of(std::slice::from_ref(&s.value), doc, site)?;
    let version = s
        .version
        .as_ref()
        .and_then(|v| first_of(std::slice::from_ref(v), doc, site))
        .and_then(Node::scalar_text);
    Some((value, version))
}

fn is_true(n: &Node) -> bool {
    matches!(n.value, Value::Bool(true))
}

fn disabled(s: &Select, o: &Node) -> bool {
    s.disabled
        .as_ref()
        .and_then(|d| first_of(std::slice::from_ref(d), o, o))
        .is_some_and(is_true)
}

/// The priority (`None` below any given one) of the first item of `object`'s list that supports
/// `value` (and `version`: an item of another version does not, one without a version does only
/// when no version is asked for), when one does; `auto`: only items that may be picked unnamed.
fn supports(
    s: &Select,
    object: &Node,
    value: &str,
    version: Option<&str>,
    auto: bool,
) -> Option<Option<i64>> {
    let list = first_of(std::slice::from_ref(&s.list), object, object);
    let mut matching = items(list).filter(|i| {
        let theirs = i.get(&s.version_key).and_then(Node::scalar_text);
        i.get(&s.key).and_then(Node::scalar_text).as_deref() == Some(value)
            && (version.is_none() || theirs.as_deref() == version)
            && (!auto || i.get(&s.auto).is_some_and(is_true))
    });
    let item = matching.next()?;
    // `GetPriority` takes the first item of that name, whatever its version.
    let first =
        items(list).find(|i| i.get(&s.key).and_then(Node::scalar_text).as_deref() == Some(value));
    let priority = first
        .unwrap_or(item)
        .get(&s.priority)
        .and_then(Node::scalar_text)
        .and_then(|p| p.parse().ok());
    Some(priority)
}

/// Why the controller renders no pod from the object the site names, if it does not.
fn refusal(s: &Select, o: &Node, doc: &Node, site: &Node) -> Option<String> {
    let name = text(o, "name").unwrap_or_default();
    if disabled(s, o) {
        return Some(format!("`{name}` is disabled"));
    }
    let (value, version) = wanted(s, doc, site)?;
    let value = value.scalar_text().unwrap_or_default();
    if supports(s, o, &value, version.as_deref(), false).is_some() {
        return None;
    }
    let what = match &version {
        Some(v) => format!("`{value}` version `{v}`"),
        None => format!("`{value}`"),
    };
    Some(format!(
        "`{name}` does not support {what} (its `{}` does not list it), so the controller \
         refuses it",
        s.list
    ))
}

/// Whether `object` is the template a site of another object of the same input renders in its
/// own pods (a ServingRuntime an InferenceService is served by): it is read there, merged with
/// that object, never alone. Only objects held as YAML (not as text) are read as workloads.
pub fn claimed(file: FileId, src: &SourceFile, object: &Node) -> bool {
    let Some(kind) = object.get("kind").and_then(Node::as_str) else {
        return false;
    };
    let registry = crate::platform::registry();
    let structured = |b: &Base| b.text.is_empty() && b.kinds.iter().any(|k| k == kind);
    let holds = registry
        .all()
        .flat_map(|p| &p.launches)
        .any(|s| s.base.as_ref().is_some_and(structured));
    if !holds {
        return false;
    }
    let objects = objects(file, src);
    let claimed = objects.claimed.get_or_init(|| {
        let all = &objects.all;
        let mut held = HashSet::new();
        for d in all {
            let Some(k) = d.get("kind").and_then(Node::as_str) else {
                continue;
            };
            let Some(p) = super::find(registry.for_kind(k), src, d) else {
                continue;
            };
            for s in &p.launches {
                let Some(b) = s.base.as_ref().filter(|b| structured(b)) else {
                    continue;
                };
                let sites = crate::platform::path::Path::parse(&s.at).map(|at| at.all(d, d));
                for site in sites.unwrap_or_default() {
                    if let Holder::Found(o) = find(b, all, d, site) {
                        held.insert(o.loc);
                    }
                }
            }
        }
        held
    });
    claimed.contains(&object.loc)
}

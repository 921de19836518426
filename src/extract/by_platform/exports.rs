//! What a site's command or script sees besides its own env: the variables the platform sets
//! (`exports`), filled from what the site holds.

use super::{env_map, place, scalar, synthetic_words, MappedWord};
use crate::launch::{Engine, Launch};
use crate::platform::path::first_of;
use crate::platform::Site;
use crate::source::{Loc, SourceFile};
use crate::yaml::{Node, Value};

/// An export's value and where it was read, and the export names whose value the platform
/// computes from what the site does not hold: (name, why).
type Exported = (Vec<(String, MappedWord)>, Vec<(String, String)>);

/// The variables a site's command or script sees: its `env` mapping, then what the platform
/// `exports` (`{gpus}` and `{pods}` as read for the site, `{all_gpus}` their product, `${path}` / `${path:-default}` the
/// site's value at `path`), each at the place it comes from. An export whose path the site does
/// not hold (and that gives no default) is set to a value kvlint does not know.
pub(super) fn environment(
    site: &Site,
    src: &SourceFile,
    doc: &Node,
    node: &Node,
    outer: Option<&Node>,
) -> Exported {
    let mut env = Vec::new();
    let mut unknown = Vec::new();
    if let Some(Value::Map(entries)) = first_of(&site.env, doc, node).map(|e| env_map(e).value) {
        for (k, v) in &entries {
            let Some(name) = k.as_str() else { continue };
            match (scalar::word(src, v), super::computed_why(v)) {
                (Some(w), _) => env.push((name.to_string(), w)),
                // Set, to a value the platform computes: unknown, never unset.
                (None, Some(why)) => unknown.push((name.to_string(), why)),
                (None, None) => {}
            }
        }
    }
    if site.exports.is_empty() {
        return (env, unknown);
    }
    let mut probe = Launch::new(Engine::Vllm, node.loc, Vec::new());
    place(&mut probe, site, doc, node, outer);
    let p = &probe.placement;
    let count = |n: Option<u32>| n.map_or_else(String::new, |n| n.to_string());
    let at = p.gpu.as_ref().map_or(node.loc, |g| g.1);
    let all_gpus = p.gpus_per_pod.map(|g| g * p.pods.unwrap_or(1));
    for (name, value) in &site.exports {
        let gpus = value.contains("{gpus}") || value.contains("{all_gpus}");
        if gpus && p.gpus_per_pod.is_none() {
            continue;
        }
        let text = value
            .replace("{gpus}", &count(p.gpus_per_pod))
            .replace("{all_gpus}", &count(all_gpus))
            .replace("{pods}", &count(p.pods));
        let (text, read_at) = match fill_paths(&text, doc, node) {
            Ok(filled) => filled,
            Err(path) => {
                let why = format!("`{path}` of the site, which is not here");
                unknown.push((name.clone(), why));
                continue;
            }
        };
        let loc = match (gpus, read_at) {
            (true, _) => at,
            (false, Some(read)) => read,
            (false, None) => node.loc,
        };
        env.extend(
            synthetic_words(&[&text], loc)
                .into_iter()
                .map(|w| (name.clone(), w)),
        );
    }
    (env, unknown)
}

/// An export's `${path}` and `${path:-default}` references filled with the site's scalars at
/// those paths (the llm-d chart's `TP_SIZE` from `parallelism.tensor`, 1 when absent), and where
/// the last one was read; `Err(path)` for a path the site does not hold and no default.
fn fill_paths(text: &str, doc: &Node, node: &Node) -> Result<(String, Option<Loc>), String> {
    let mut out = String::with_capacity(text.len());
    let mut read_at = None;
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let inner = &rest[start + 2..start + len];
        let (path, default) = match inner.split_once(":-") {
            Some((p, d)) => (p, Some(d)),
            None => (inner, None),
        };
        let found =
            first_of(&[path.to_string()], doc, node).and_then(|n| Some((n.scalar_text()?, n.loc)));
        match (found, default) {
            (Some((value, loc)), _) => {
                out.push_str(&value);
                read_at = Some(loc);
            }
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(path.to_string()),
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    Ok((out, read_at))
}

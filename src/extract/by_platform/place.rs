//! Where a platform's launch runs: the GPU type and count its site names (`H100:8`, an instance
//! type, a MIG resource, node-selector terms), its image and its role.

use super::{first_of, Launch, Loc, Node, ObjectRef, Path, Platform, Site, Value};
use crate::extract::k8s::{instances, placement};

/// GPU type and count, pods, image and the release its tag names.
pub(super) fn place(l: &mut Launch, site: &Site, doc: &Node, node: &Node, outer: Option<&Node>) {
    let resources = first_of(&site.resources, doc, node)
        .or_else(|| first_of(&site.runs_in, doc, node)?.get("resources"));
    let (resource_gpus, mig) = placement::gpus(resources);
    // `H100:8` (Truss `resources.accelerator`, Modal `gpu=`): the type and its count.
    let (named, named_count) = named_gpu(least(site, outer.unwrap_or(doc), node));
    let named = named
        .map(|(text, at)| (without_marks(&text, &site.gpu_marks), at))
        .and_then(|g| unprefixed(site, g));
    let (instance, instance_count) = instance_gpus(site, doc, node);
    let mig = mig.or_else(|| mig_resource(site, doc, node));
    l.placement.gpu = mig.or(named).or(instance).or_else(|| {
        let root = outer.unwrap_or(doc);
        let at = if outer.is_some() { root } else { node };
        pod_gpu(&site.pod, root, at)
            .or_else(|| terms_gpu(site, doc, node))
            .or_else(|| label_gpu(site, doc, node))
    });
    l.placement.gpus_per_pod = site
        .gpu_count
        .iter()
        .find_map(|alt| product(alt, doc, node))
        .or(named_count)
        .or(resource_gpus)
        .or(instance_count)
        .or(site.gpu_count_default);
    l.placement.pods = site
        .pods
        .iter()
        .find_map(|e| product(e, doc, node))
        .or(site.pods_default)
        .or(Some(1));
    let container = first_of(&site.runs_in, doc, node);
    let image = first_of(&site.image, doc, node).or_else(|| container?.get("image"));
    let tag = first_of(&site.image_tag, doc, node);
    l.placement.image = match (image.and_then(Node::scalar_text), tag) {
        (Some(repo), Some(t)) => t
            .scalar_text()
            .map(|text| (format!("{repo}:{text}"), t.loc)),
        (Some(i), None) => image.map(|n| (i, n.loc)),
        _ => None,
    };
    l.engine_version = l
        .placement
        .image
        .as_ref()
        .and_then(|(i, at)| Some((placement::image_version(i, l.engine.name())?, *at)));
}

/// Places a launch another reader found (an argv list in a Python function) as a placing site
/// says (its decorator's GPU type and count, image, role): what the site finds is set, what it
/// does not find is left as it was, so nested decorators each add theirs. The launch takes the
/// platform's title, and the site's name where it gives one.
pub fn place_found(p: &Platform, site: &Site, doc: &Node, node: &Node, l: &mut Launch) {
    let mut found = Launch::new(l.engine, l.command, Vec::new());
    place(&mut found, site, doc, node, None);
    let (got, have) = (found.placement, &mut l.placement);
    if got.gpu.is_some()
        || site
            .gpu_count
            .iter()
            .any(|g| product(g, doc, node).is_some())
    {
        have.gpu = got.gpu.or(have.gpu.take());
        have.gpus_per_pod = got.gpus_per_pod.or(have.gpus_per_pod);
    }
    if got.image.is_some() {
        have.image = got.image;
        l.engine_version = found.engine_version;
    }
    if l.role_hint.is_none() {
        l.role_hint = site.role.clone();
    }
    let named = first_of(&site.name, doc, node).and_then(Node::scalar_text);
    let object = l.object.get_or_insert_with(|| ObjectRef {
        kind: String::new(),
        namespace: None,
        name: String::new(),
        container: None,
    });
    object.kind = p.title.clone();
    if let Some(n) = named {
        object.name = n;
    }
}

/// Of the nodes the first of the site's `gpu_type` paths that reaches any reaches, the one naming
/// the least-memory GPU (its marks dropped: `H100!` ranks as an H100); one the catalog does not
/// know wins outright, so it is reported rather than assumed larger. Worker groups
/// (`worker_nodes[].required_labels."ray.io/accelerator-type"`) that name different GPUs may each
/// run the engine, as ORed node-selector terms may (`k8s::placement::node_gpu`), and so may each
/// GPU of a fallback list (Modal's `gpu=["H100", "A100-40GB:2"]`). Of equal GPUs, the fewest.
fn least<'n>(site: &Site, root: &'n Node, node: &'n Node) -> Option<&'n Node> {
    reached(&site.gpu_type, root, node)?
        .into_iter()
        .min_by_key(|n| {
            let (name, count) = named_gpu(Some(n));
            let name = name.map(|(g, _)| without_marks(&g, &site.gpu_marks));
            (memory_rank(name.as_deref()), count.unwrap_or(0))
        })
}

/// Every node the first of `paths` that reaches any reaches.
fn reached<'n>(paths: &[String], root: &'n Node, site: &'n Node) -> Option<Vec<&'n Node>> {
    paths
        .iter()
        .filter_map(|p| Path::parse(p.trim()).ok())
        .map(|p| p.all(root, site))
        .find(|all| !all.is_empty())
}

/// Orders GPUs by memory, a name the catalog does not know (or none) first.
pub(crate) fn memory_rank(name: Option<&str>) -> (u8, u64) {
    name.and_then(crate::gpu::lookup)
        .map_or((0, 0), |g| (1, g.cuda_total_bytes))
}

/// The GPU the pods of the first of `paths` that reaches any pin, the least-memory one when they
/// differ: worker groups (`workerGroupSpecs[].template.spec`) that select different nodes may
/// each run the engine, so the plan takes the one that holds least, as for ORed node-selector
/// terms (`k8s::placement::node_gpu`); a GPU the catalog does not know wins outright. A pod that
/// asks for no GPU (a CPU worker group) is passed over; one that asks for GPUs but pins none may
/// land on any GPU node, so then the pods name no GPU kvlint can plan on.
fn pod_gpu(paths: &[String], root: &Node, site: &Node) -> Option<(String, Loc)> {
    let mut named = Vec::new();
    for pod in reached(paths, root, site)? {
        match placement::gpu_type(pod) {
            Some(gpu) => named.push(gpu),
            None if asks_for_gpus(pod) => return None,
            None => {}
        }
    }
    named
        .into_iter()
        .min_by_key(|(name, _)| memory_rank(Some(name)))
}

/// Whether a pod spec's containers request GPUs.
fn asks_for_gpus(pod: &Node) -> bool {
    placement::items(pod.get("containers"))
        .any(|c| placement::gpus(c.get("resources")).0.is_some_and(|n| n > 0))
}

/// `H100!:2` → `H100:2`: the platform's marks dropped from the name, the count kept.
fn without_marks(text: &str, marks: &[String]) -> String {
    let (name, count) = match text.rsplit_once(':') {
        Some((n, c)) => (n, Some(c)),
        None => (text, None),
    };
    let name = marks
        .iter()
        .fold(name, |n, m| n.strip_suffix(m.as_str()).unwrap_or(n));
    match count {
        Some(c) => format!("{name}:{c}"),
        None => name.to_string(),
    }
}

/// A GPU type as named, and the count named with it: `H100:8`, `{H100: 8}`, or `{H100: 8, A100:
/// 8}` (any of them, so only the count, when they agree).
fn named_gpu(node: Option<&Node>) -> (Option<(String, Loc)>, Option<u32>) {
    let Some(node) = node else {
        return (None, None);
    };
    if let Value::Map(entries) = &node.value {
        let counts: Vec<Option<u32>> = entries
            .iter()
            .map(|(_, v)| placement::count_of(v))
            .collect();
        let count = counts.first().copied().flatten();
        let agree = counts.iter().all(|c| *c == count);
        let gpu = match &entries[..] {
            [(k, _)] => k.scalar_text().map(|g| (g, node.loc)),
            _ => None,
        };
        return (gpu, count.filter(|_| agree));
    }
    let Some(text) = node.scalar_text() else {
        return (None, None);
    };
    match text.rsplit_once(':') {
        Some((kind, n)) if n.parse::<u32>().is_ok() => {
            (Some((kind.to_string(), node.loc)), n.parse().ok())
        }
        _ => (Some((text, node.loc)), None),
    }
}

/// A model URL's path (`hf://Qwen/Qwen3-8B` → `Qwen/Qwen3-8B`) when the site's models are URLs.
/// The GPU's name without the platform's prefix (`nvidia-gpu-h100` → `h100`); none when the site
/// lists prefixes and the name has none of them.
fn unprefixed(site: &Site, (name, at): (String, Loc)) -> Option<(String, Loc)> {
    if site.gpu_type_prefix.is_empty() {
        return Some((name, at));
    }
    let prefix = site
        .gpu_type_prefix
        .iter()
        .find(|p| name.starts_with(p.as_str()))?;
    Some((name[prefix.len()..].to_string(), at))
}

/// The MIG slice a `gpu_resource` names (`nvidia.com/mig-3g.40gb` → `MIG-3g.40gb`).
fn mig_resource(site: &Site, doc: &Node, node: &Node) -> Option<(String, Loc)> {
    let at = first_of(&site.gpu_resource, doc, node)?;
    let slice = at.as_str()?.strip_prefix("nvidia.com/mig-")?;
    Some((format!("MIG-{slice}"), at.loc))
}

/// The GPU that `node_selector_terms` pin, read as a pod's required node affinity.
fn terms_gpu(site: &Site, doc: &Node, node: &Node) -> Option<(String, Loc)> {
    pinned(first_of(&site.node_selector_terms, doc, node)?)
}

/// The GPU a `node_label` pair pins: `labelKey In labelValues`, the required term llm-d
/// modelservice's `_helpers.tpl` (`llm-d-modelservice.acceleratorTypes`) renders from it.
fn label_gpu(site: &Site, doc: &Node, node: &Node) -> Option<(String, Loc)> {
    let pair = first_of(&site.node_label, doc, node)?;
    let (key, values) = (pair.get("labelKey")?, pair.get("labelValues")?);
    let at = pair.loc;
    let str_node = |s: &str| Node {
        value: Value::Str(s.into()),
        loc: at,
    };
    let expression = Node {
        value: Value::Map(vec![
            (str_node("key"), key.clone()),
            (str_node("operator"), str_node("In")),
            (str_node("values"), values.clone()),
        ]),
        loc: at,
    };
    let term = Node {
        value: Value::Map(vec![(
            str_node("matchExpressions"),
            Node {
                value: Value::Seq(vec![expression]),
                loc: at,
            },
        )]),
        loc: at,
    };
    pinned(&Node {
        value: Value::Seq(vec![term]),
        loc: at,
    })
}

/// The GPU that required node-selector terms pin, read as a pod's.
fn pinned(terms: &Node) -> Option<(String, Loc)> {
    let map = |k: &str, v: Node| Node {
        value: Value::Map(vec![(
            Node {
                value: Value::Str(k.into()),
                loc: terms.loc,
            },
            v,
        )]),
        loc: terms.loc,
    };
    let pod = map(
        "affinity",
        map(
            "nodeAffinity",
            map(
                "requiredDuringSchedulingIgnoredDuringExecution",
                map("nodeSelectorTerms", terms.clone()),
            ),
        ),
    );
    placement::gpu_type(&pod)
}

/// The GPU and GPU count of the site's cloud instance type, from kvlint's instance table; a GPU
/// instance type it does not map is named as written, so that INP003 reports it.
fn instance_gpus(site: &Site, doc: &Node, node: &Node) -> (Option<(String, Loc)>, Option<u32>) {
    let Some(at) = first_of(&site.instance_type, doc, node) else {
        return (None, None);
    };
    match at.as_str().and_then(instances::node_gpu) {
        Some((gpu, n)) => (Some((gpu, at.loc)), n),
        None => (None, None),
    }
}

/// `a * b`: the product of the counts the paths reach, a missing factor 1; `a + 1`: a sum of such
/// products and numbers (a leader and `worker.size` workers). A product whose paths all start at
/// the same list (`groups[].replicas * groups[].hosts`) is taken per item and summed. `None` when
/// no path is there.
pub fn product(expr: &str, doc: &Node, node: &Node) -> Option<u32> {
    let mut found = false;
    let mut sum = 0u32;
    for term in expr.split('+') {
        let factors: Vec<&str> = term.split('*').map(str::trim).collect();
        let n = match per_item(&factors) {
            Some((list, rest)) => {
                let items = crate::platform::path::Path::parse(list)
                    .map(|p| p.all(doc, node))
                    .unwrap_or_default();
                found |= !items.is_empty();
                items
                    .into_iter()
                    .map(|item| factors_product(&rest, doc, item, &mut found))
                    .fold(0u32, u32::saturating_add)
            }
            None => factors_product(&factors, doc, node, &mut found),
        };
        sum = sum.saturating_add(n);
    }
    found.then_some(sum)
}

/// The list every path factor of a product starts at (`groups[]`), and the factors from its items.
fn per_item<'a>(factors: &[&'a str]) -> Option<(&'a str, Vec<&'a str>)> {
    let paths: Vec<&str> = factors
        .iter()
        .copied()
        .filter(|f| f.parse::<u32>().is_err())
        .collect();
    let list = paths.first()?.split_once("[].").map(|(l, _)| l)?;
    let rest: Option<Vec<&str>> = factors
        .iter()
        .map(|f| match f.parse::<u32>() {
            Ok(_) => Some(*f),
            Err(_) => f.strip_prefix(list)?.strip_prefix("[]."),
        })
        .collect();
    let list_end = list.len() + 2;
    rest.map(|r| (&paths[0][..list_end], r))
}

/// The product of the factors' counts from `node`, a missing one 1; `found` when one is there.
fn factors_product(factors: &[&str], doc: &Node, node: &Node, found: &mut bool) -> u32 {
    factors.iter().fold(1u32, |prod, factor| {
        let n = factor.parse::<u32>().ok().or_else(|| {
            let n = first_of(&[factor.to_string()], doc, node).and_then(placement::count_of);
            *found |= n.is_some();
            Some(n.unwrap_or(1))
        });
        prod.saturating_mul(n.unwrap_or(1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    #[test]
    fn counts_are_products_sums_and_sums_over_list_items() {
        let mut s = Sources::default();
        let f = s.add(
            "c.yaml",
            "worker: {size: 3}\ngroups:\n  - {replicas: 2, hosts: 4}\n  - {replicas: 3}\n  - {}\n",
        );
        let doc = crate::yaml::parse_document(f, s.get(f)).expect("valid YAML");
        let count = |e: &str| product(e, &doc, &doc);
        assert_eq!(count("worker.size + 1"), Some(4));
        assert_eq!(count("leader.size + 1"), None);
        assert_eq!(count("worker.size * groups[0].hosts"), Some(12));
        // 1 + (2 × 4) + (3 × 1) + (1 × 1): a missing factor is 1, as KubeRay defaults them.
        assert_eq!(count("1 + groups[].replicas * groups[].hosts"), Some(13));
        assert_eq!(count("1 + none[].replicas"), None);
    }
}

//! Launches read as a platform file says (`platforms/*.toml`, `crate::platform`): the data names
//! where each launch site is, its option map and how its keys map to options, its argv, model,
//! GPUs, role and image; this reader knows no platform by name.

use super::k8s::{instances, placement, scalar, synthetic_words};
use super::shell::{self, MappedWord};
use super::{option_map, Extracted};
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch, LaunchFile, ObjectRef};
use crate::platform::path::{first_of, Path};
use crate::platform::{Platform, Render, Site};
use crate::source::{FileId, Loc, SourceFile};
use crate::yaml::{Node, Value};

/// Whether `doc` is `p`'s, by its recognition tests (the file name, paths that must and must not
/// exist; a Kubernetes kind is matched by the caller).
pub fn recognizes(p: &Platform, src: &SourceFile, doc: &Node) -> bool {
    let r = &p.recognize;
    let name = src.name.rsplit(['/', '\\']).next().unwrap_or(&src.name);
    let file_ok = r.files.is_empty()
        || r.files
            .iter()
            .any(|g| globset::Glob::new(g).is_ok_and(|g| g.compile_matcher().is_match(name)));
    let api = doc.get("apiVersion").and_then(Node::as_str);
    let api_ok = r.api_versions.is_empty()
        || api.is_some_and(|a| r.api_versions.iter().any(|v| a.starts_with(v.as_str())));
    let has = |p: &String| Path::parse(p).is_ok_and(|p| p.first(doc, doc).is_some());
    file_ok && api_ok && r.paths.iter().all(has) && !r.absent.iter().any(has) && equals(p, doc)
}

/// Whether each `equals` path holds one of its listed values.
fn equals(p: &Platform, doc: &Node) -> bool {
    p.recognize.equals.iter().all(|(path, values)| {
        first_of(std::slice::from_ref(path), doc, doc)
            .and_then(Node::scalar_text)
            .is_some_and(|v| values.contains(&v))
    })
}

/// The first platform of `candidates` that recognizes the document.
pub fn find<'p>(
    mut candidates: impl Iterator<Item = &'p Platform>,
    src: &SourceFile,
    doc: &Node,
) -> Option<&'p Platform> {
    candidates.find(|p| recognizes(p, src, doc))
}

/// The launches of `doc` as platform `p` lays them out. `outer` is the Kubernetes object that
/// holds `doc` in a string (RayService), for `/`-paths of `pod`.
pub fn read(
    p: &Platform,
    file: FileId,
    src: &SourceFile,
    doc: &Node,
    outer: Option<&Node>,
) -> Extracted {
    if p.reader.is_some() {
        return super::shell::platform_reader(p, file, src, doc);
    }
    let mut out = Extracted::default();
    // Pod templates are read by the Kubernetes reader (`k8s::Cx::pod_sites`).
    for site in p.launches.iter().filter(|s| !s.reads_pods()) {
        let at = match Path::parse(&site.at) {
            Ok(path) => path.all(doc, doc),
            Err(_) => continue,
        };
        for node in at {
            if !site.command.is_empty() || !site.script.is_empty() {
                let found = command(p, site, file, src, doc, node, outer);
                out.launches.extend(found.launches);
                out.findings.extend(found.findings);
                continue;
            }
            match launch(p, site, file, src, doc, node, outer) {
                Ok(l) => out.launches.push(l),
                Err(f) => out.findings.push(*f),
            }
        }
    }
    out
}

/// The launches of a site's command line, read as a container's command is, each placed and
/// named as the site says.
fn command(
    p: &Platform,
    site: &Site,
    file: FileId,
    src: &SourceFile,
    doc: &Node,
    node: &Node,
    outer: Option<&Node>,
) -> Extracted {
    let script = first_of(&site.script, doc, node).and_then(|s| Some((s, scalar::word(src, s)?)));
    let words: Vec<MappedWord> = match (script, first_of(&site.command, doc, node)) {
        (Some((at, script)), _) => {
            let mut argv = synthetic_words(&["bash", "-c"], at.loc);
            argv.push(script);
            argv
        }
        (None, Some(line)) => match &line.value {
            Value::Seq(items) => items.iter().filter_map(|n| scalar::word(src, n)).collect(),
            _ => scalar::word(src, line)
                .map(|w| shell::split_words(file, &w))
                .unwrap_or_default(),
        },
        (None, None) => return Extracted::default(),
    };
    let env = environment(site, src, doc, node, outer);
    let mut found = shell::exec_launches(file, words, &env);
    for l in &mut found.launches {
        l.role_hint = site.role.clone();
        place(l, site, doc, node, outer);
        name(l, p, site, doc, node);
    }
    found
}

/// The variables a site's command or script sees: its `env` mapping, then what the platform
/// `exports` (`{gpus}` and `{pods}` as read for the site), each at the place it comes from.
fn environment(
    site: &Site,
    src: &SourceFile,
    doc: &Node,
    node: &Node,
    outer: Option<&Node>,
) -> Vec<(String, MappedWord)> {
    let mut env = Vec::new();
    if let Some(Value::Map(entries)) = first_of(&site.env, doc, node).map(|e| env_map(e).value) {
        for (k, v) in &entries {
            if let (Some(name), Some(w)) = (k.as_str(), scalar::word(src, v)) {
                env.push((name.to_string(), w));
            }
        }
    }
    if site.exports.is_empty() {
        return env;
    }
    let mut probe = Launch::new(Engine::Vllm, node.loc, Vec::new());
    place(&mut probe, site, doc, node, outer);
    let p = &probe.placement;
    let count = |n: Option<u32>| n.map_or_else(String::new, |n| n.to_string());
    let at = p.gpu.as_ref().map_or(node.loc, |g| g.1);
    for (name, value) in &site.exports {
        let gpus = value.contains("{gpus}");
        if gpus && p.gpus_per_pod.is_none() {
            continue;
        }
        let text = value
            .replace("{gpus}", &count(p.gpus_per_pod))
            .replace("{pods}", &count(p.pods));
        let loc = if gpus { at } else { node.loc };
        env.extend(
            synthetic_words(&[&text], loc)
                .into_iter()
                .map(|w| (name.clone(), w)),
        );
    }
    env
}

/// The launch's `object` and `group`: the platform's title and the site's name.
fn name(l: &mut Launch, p: &Platform, site: &Site, doc: &Node, node: &Node) {
    let name = first_of(&site.name, doc, node)
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    l.object = Some(ObjectRef {
        kind: p.title.clone(),
        namespace: None,
        name: name.clone(),
        container: None,
    });
    l.group = Some(format!("{}/{name}", p.name));
}

fn launch(
    p: &Platform,
    site: &Site,
    file: FileId,
    src: &SourceFile,
    doc: &Node,
    node: &Node,
    outer: Option<&Node>,
) -> Result<Launch, Box<Finding>> {
    let engine = engine(p, doc, node)?;
    let word = |n: &Node| scalar::word(src, n).map(|w| Arg::new(w.chars.as_str(), w.loc));
    let mut args = Vec::new();
    // An empty value (`name:` left for install time) names no model.
    let named =
        first_of(&site.model, doc, node).filter(|m| m.scalar_text().is_some_and(|t| !t.is_empty()));
    if let Some(m) = named {
        match engine {
            Engine::Sglang => args.push(Arg::new("--model-path", m.loc)),
            Engine::Vllm => args.push(Arg::new("--model", m.loc)),
            Engine::Trtllm => {}
        }
        args.extend(word(m).map(|a| without_scheme(site, a)));
    }
    let mut kwargs = Vec::new();
    if let Some(map) = site
        .options
        .as_deref()
        .and_then(|o| first_of(&[o.into()], doc, node))
    {
        let map = &options(site, doc, node, map);
        let read = option_map::read(engine, map, site).map_err(|why| not_read(p, map, &why))?;
        args.extend(read.args);
        kwargs = read.kwargs;
        for kw in &mut kwargs {
            kw.frontend = site.frontend_fields;
        }
    }
    for path in &site.argv {
        if let Some(list) = first_of(std::slice::from_ref(path), doc, node) {
            args.extend(option_map::argv(file, src, list));
        }
    }
    for r in &site.render {
        args.extend(rendered(r, doc, node));
    }
    let api = site
        .llm_api_options
        .as_deref()
        .and_then(|o| first_of(&[o.into()], doc, node));
    let mut l = Launch::new(engine, node.loc, args);
    if let Some(map) = api.filter(|_| engine == Engine::Trtllm) {
        let at = Loc {
            end: map.loc.start,
            ..map.loc
        };
        l.args.push(Arg::new("--extra_llm_api_options", at));
        l.args.push(Arg::new(src.name.clone(), at));
        l.files.push(LaunchFile {
            path: src.name.clone(),
            content: Ok((src.name.clone(), only(&src.text, map, &site.drop))),
        });
    }
    for a in &mut l.args {
        if a.unresolved.is_empty() {
            a.unresolved = placeholders(&a.text);
        }
    }
    l.kwargs = kwargs;
    l.role_hint = site.role.clone().or_else(|| {
        let from = site.role_from.as_ref()?;
        let value = first_of(std::slice::from_ref(&from.path), doc, node)?.scalar_text()?;
        from.values.get(&value).cloned()
    });
    l.role_hint = l.role_hint.take().or_else(|| role_name(site, doc, node));
    place(&mut l, site, doc, node, outer);
    name(&mut l, p, site, doc, node);
    Ok(l)
}

/// A render's words with their `${path}` values put in, each at the value it took (else at the
/// first value the render took, else at its `when`); none when the render is left out.
fn rendered(r: &Render, doc: &Node, node: &Node) -> Vec<Arg> {
    let at = |path: &str| first_of(&[path.to_string()], doc, node);
    let when: Option<Vec<&Node>> = r.when.iter().map(|w| at(w).filter(|n| truthy(n))).collect();
    let Some(when) = when else {
        return Vec::new();
    };
    let mut words = Vec::new();
    for w in &r.words {
        let mut text = w.clone();
        let mut loc = None;
        for path in Render::placeholders(w) {
            let Some(value) = at(path) else {
                return Vec::new();
            };
            text = text.replace(
                &format!("${{{path}}}"),
                &value.scalar_text().unwrap_or_default(),
            );
            loc = loc.or(Some(value.loc));
        }
        words.push((text, loc));
    }
    let first = words.iter().find_map(|(_, l)| *l);
    let fallback = first.or(when.first().map(|n| n.loc)).unwrap_or(node.loc);
    words
        .into_iter()
        .map(|(text, loc)| Arg::new(text, loc.unwrap_or(fallback)))
        .collect()
}

/// True as a Go template's `if` takes it: not false, 0, null, or an empty string, list or map.
fn truthy(n: &Node) -> bool {
    match &n.value {
        Value::Bool(b) => *b,
        Value::Null | Value::Int(0) => false,
        Value::Str(s) => !s.is_empty(),
        Value::Seq(items) => !items.is_empty(),
        Value::Map(e) => !e.is_empty(),
        _ => true,
    }
}

/// The role as the site's file writes it (`roles[].name`).
pub fn role_name(site: &Site, doc: &Node, node: &Node) -> Option<String> {
    first_of(&site.role_name, doc, node).and_then(Node::scalar_text)
}

/// The names of the `${NAME}` and `$NAME` placeholders a value still holds: a template the
/// platform fills before it starts (Triton's fill_template.py, DJL's job variables) left unfilled.
fn placeholders(text: &str) -> Vec<String> {
    let word = |s: &str| {
        let n = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        let w = &s[..n];
        w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            .then(|| w.to_string())
    };
    text.match_indices('$')
        .filter_map(|(i, _)| {
            let rest = &text[i + 1..];
            match rest.strip_prefix('{') {
                Some(inner) => word(inner).filter(|w| inner[w.len()..].starts_with('}')),
                None => word(rest),
            }
        })
        .collect()
}

/// The text with every character outside `map`, and inside its `drop` entries, made a blank
/// (line breaks kept), so that the mapping alone parses and keeps its places in the input.
fn only(text: &str, map: &Node, drop: &[String]) -> String {
    let mut keep = vec![false; text.len()];
    let Value::Map(entries) = &map.value else {
        return text.to_string();
    };
    // A block mapping's own span may be its start only: its entries tell where it ends.
    let end = entries.iter().map(|(k, v)| k.loc.end.max(v.loc.end)).max();
    let whole = map.loc.start..end.unwrap_or(map.loc.end).max(map.loc.end);
    keep[whole].iter_mut().for_each(|k| *k = true);
    let dropped = entries
        .iter()
        .filter(|(k, _)| k.as_str().is_some_and(|k| drop.iter().any(|d| d == k)));
    for (k, v) in dropped {
        let end = v.loc.end.max(k.loc.end);
        keep[k.loc.start..end].iter_mut().for_each(|k| *k = false);
    }
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if keep[i] || c == '\n' {
            out.push(c);
        } else {
            // A blank per byte, so that the places after it stay where they were.
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        }
    }
    out
}

/// The option map as the site's data shapes it: the shared mapping's entries where the map lacks
/// the key, each value unwrapped by `option_value`, and nested mappings flattened to dotted keys
/// when `flag_names` picks keys.
fn options(site: &Site, doc: &Node, node: &Node, map: &Node) -> Node {
    let map = &env_map(map);
    let Value::Map(own) = &map.value else {
        return map.clone();
    };
    let mut entries = own.clone();
    let shared = site
        .shared_options
        .as_deref()
        .and_then(|s| first_of(&[s.into()], doc, node));
    if let Some(Value::Map(more)) = shared.map(|n| env_map(n).value) {
        let has = |k: &Node| {
            own.iter()
                .any(|(o, _)| o.as_str().is_some() && o.as_str() == k.as_str())
        };
        entries.extend(more.iter().filter(|(k, _)| !has(k)).cloned());
    }
    if let Some(path) = site
        .option_value
        .as_deref()
        .and_then(|p| Path::parse(p).ok())
    {
        entries = entries
            .into_iter()
            .filter_map(|(k, v)| Some((k, path.first(&v, &v)?.clone())))
            .collect();
    }
    if !site.flag_names.is_empty() {
        entries = entries
            .into_iter()
            .flat_map(|(k, v)| dotted(k, v))
            .collect();
    }
    Node {
        value: Value::Map(entries),
        loc: map.loc,
    }
}

/// A Kubernetes env list (`- name: K` / `value: V`) as the mapping of names to values it sets;
/// any other node as it is. An item whose value comes from elsewhere (`valueFrom`) sets nothing
/// kvlint can see and is left out.
fn env_map(node: &Node) -> Node {
    let Value::Seq(items) = &node.value else {
        return node.clone();
    };
    let pair = |item: &Node| Some((item.get("name")?.clone(), item.get("value")?.clone()));
    let entries: Option<Vec<(Node, Node)>> = items
        .iter()
        .filter(|i| i.get("valueFrom").is_none())
        .map(pair)
        .collect();
    match entries {
        Some(entries) => Node {
            value: Value::Map(entries),
            loc: node.loc,
        },
        None => node.clone(),
    }
}

/// A nested mapping's leaves under dotted keys (`kv_cache_config.dtype`); other entries as they are.
fn dotted(key: Node, value: Node) -> Vec<(Node, Node)> {
    let (Some(prefix), Value::Map(inner)) = (key.as_str(), &value.value) else {
        return vec![(key, value)];
    };
    let mut out = vec![(key.clone(), value.clone())];
    for (k, v) in inner {
        let Some(name) = k.as_str() else { continue };
        let k = Node {
            value: Value::Str(format!("{prefix}.{name}")),
            loc: k.loc,
        };
        out.extend(dotted(k, v.clone()));
    }
    out
}

/// GPU type and count, pods, image and the release its tag names.
fn place(l: &mut Launch, site: &Site, doc: &Node, node: &Node, outer: Option<&Node>) {
    let (resource_gpus, mig) = placement::gpus(first_of(&site.resources, doc, node));
    // `H100:8` (Truss `resources.accelerator`, Modal `gpu=`): the type and its count.
    let (named, named_count) = named_gpu(first_of(&site.gpu_type, doc, node));
    let named = named.and_then(|g| unprefixed(site, g));
    let (instance, instance_count) = instance_gpus(site, doc, node);
    let mig = mig.or_else(|| mig_resource(site, doc, node));
    l.placement.gpu = mig.or(named).or(instance).or_else(|| {
        let root = outer.unwrap_or(doc);
        first_of(&site.pod, root, root)
            .and_then(placement::gpu_type)
            .or_else(|| terms_gpu(site, doc, node))
    });
    l.placement.gpus_per_pod = site
        .gpu_count
        .iter()
        .find_map(|alt| product(alt, doc, node))
        .or(named_count)
        .or(resource_gpus)
        .or(instance_count)
        .or(site.gpu_count_default);
    l.placement.pods = first_of(&site.pods, doc, node)
        .and_then(placement::count_of)
        .or(Some(1));
    let image = first_of(&site.image, doc, node);
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
fn without_scheme(site: &Site, mut a: Arg) -> Arg {
    if let Some(i) = a.text.find("://").filter(|_| site.model_url) {
        a.text = a.text[i + 3..].to_string();
    }
    a
}

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
    let terms = first_of(&site.node_selector_terms, doc, node)?;
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

/// `a * b`: the product of the counts the paths reach, a missing factor 1; `None` when none is there.
fn product(expr: &str, doc: &Node, node: &Node) -> Option<u32> {
    let counts: Vec<Option<u32>> = expr
        .split('*')
        .map(|p| first_of(&[p.trim().to_string()], doc, node).and_then(placement::count_of))
        .collect();
    counts
        .iter()
        .any(Option::is_some)
        .then(|| counts.iter().map(|c| c.unwrap_or(1)).product())
}

/// The platform's engine, fixed or named in the file.
fn engine(p: &Platform, doc: &Node, node: &Node) -> Result<Engine, Box<Finding>> {
    if let Some(e) = p.engine {
        return Ok(e.into());
    }
    let Some(from) = &p.engine_from else {
        return Err(not_read(p, node, "the platform names no engine"));
    };
    let at = first_of(std::slice::from_ref(&from.path), doc, node)
        .ok_or_else(|| not_read(p, node, &format!("`{}` is not set", from.path)))?;
    let value = at.scalar_text().unwrap_or_default();
    let vars = placeholders(&value);
    if !vars.is_empty() {
        return Err(Box::new(
            Finding::new("INP004", Some(at.loc))
                .var("flag", format!("the engine (`{}`)", from.path))
                .var("vars", vars.join(", ")),
        ));
    }
    from.values.get(&value).map(|e| (*e).into()).ok_or_else(|| {
        let why = format!("kvlint models the vLLM, SGLang and TensorRT-LLM engines, not {value}");
        not_read(p, at, &why)
    })
}

/// INP006 at `at`: the platform's launch could not be read.
fn not_read(p: &Platform, at: &Node, reason: &str) -> Box<Finding> {
    Box::new(
        Finding::new("INP006", Some(at.loc))
            .var("engine", &p.title)
            .var("reason", reason)
            .var(
                "help",
                format!(
                    "see `kvlint platforms {}` for where kvlint reads its settings",
                    p.name
                ),
            ),
    )
}

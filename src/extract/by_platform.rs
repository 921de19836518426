//! Launches read as a platform file says (`platforms/*.toml`, `crate::platform`): the data names
//! where each launch site is, its option map and how its keys map to options, its argv, model,
//! GPUs, role and image; this reader knows no platform by name.

pub(crate) mod base;
mod computed;
mod container;
mod elsewhere;
mod engines;
mod exports;
pub(crate) mod holder;
pub mod launcher;
mod link;
pub(crate) mod merge;
mod place;

pub(crate) use computed::computed_why;
pub(crate) use computed::placeholders;
use computed::{entrypoint_and_command, image_entrypoint, script_word, words_of};
pub use container::container;
pub use elsewhere::{beside, held_by};
use engines::engine;
use exports::environment;
pub(crate) use place::memory_rank;
use place::place;
pub use place::{place_found, product};

use super::k8s::{scalar, synthetic_words};
use super::shell::{self, MappedWord};
use super::{option_map, Extracted};
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch, LaunchFile, ObjectRef, ReadMapping};
use crate::platform::path::{first_of, Path};
use crate::platform::{Platform, Render, Site};
use crate::source::{FileId, Loc, SourceFile};
use crate::yaml::{Node, Value};

/// Whether `doc` is `p`'s, by its recognition tests (the file name, paths that must and must not
/// exist; a Kubernetes kind is matched by the caller).
pub fn recognizes(p: &Platform, src: &SourceFile, doc: &Node) -> bool {
    let r = &p.recognize;
    let name = src.name.rsplit(['/', '\\']).next().unwrap_or(&src.name);
    let file_ok = r.file_matches(name);
    let api = doc.get("apiVersion").and_then(Node::as_str);
    let api_ok = r.api_versions.is_empty()
        || api.is_some_and(|a| r.api_versions.iter().any(|v| a.starts_with(v.as_str())));
    let has = |p: &String| Path::parse(p).is_ok_and(|p| p.first(doc, doc).is_some());
    let holds = |(path, values): (&String, &Vec<String>)| {
        let at = Path::parse(path).ok().and_then(|p| p.first(doc, doc));
        let text = at.and_then(Node::scalar_text).unwrap_or_default();
        values.iter().any(|v| value_matches(v, &text))
    };
    file_ok
        && api_ok
        && r.paths.iter().all(has)
        && !r.absent.iter().any(has)
        && r.values.iter().all(holds)
        && !r.not_values.iter().any(holds)
}

/// A recognition value against the text at its path, ASCII case ignored; a value ending in `*`
/// matches texts that start with the rest (`nvidia-nim-*`).
fn value_matches(want: &str, text: &str) -> bool {
    match want.strip_suffix('*') {
        Some(prefix) => text
            .get(..prefix.len())
            .is_some_and(|t| t.eq_ignore_ascii_case(prefix)),
        None => want.eq_ignore_ascii_case(text),
    }
}

/// The site with its `env` list (Kubernetes `- name:`/`value:`, compose `- K=V`) as a mapping of
/// names to values, so that paths reach a variable by its name (`env.HF_MODEL_ID`).
fn with_env_map(c: &Node) -> Node {
    let Value::Map(entries) = &c.value else {
        return c.clone();
    };
    if !entries.iter().any(|(k, _)| k.as_str() == Some("env")) {
        return c.clone();
    }
    let entries = entries
        .iter()
        .map(|(k, v)| match k.as_str() {
            Some("env") => (k.clone(), env_map(v)),
            _ => (k.clone(), v.clone()),
        })
        .collect();
    Node {
        value: Value::Map(entries),
        loc: c.loc,
    }
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
            let node = &with_env_map(node);
            let (linked, missing) = match &site.link {
                Some(l) => match link::linked(l, file, src, doc, node) {
                    Ok(n) => (Some(n), None),
                    Err(link::Missing::Object(why)) if l.required => {
                        out.findings.push(*not_read(p, node.loc, &why));
                        continue;
                    }
                    Err(link::Missing::Object(why) | link::Missing::Name(why)) => (None, Some(why)),
                },
                None => (None, None),
            };
            let node = linked.as_ref().unwrap_or(node);
            if !site.command.is_empty() || !site.entrypoint.is_empty() || !site.script.is_empty() {
                let found = command(p, site, file, src, doc, node, outer);
                out.launches.extend(found.launches);
                out.findings.extend(found.findings);
                continue;
            }
            match (
                launches(p, site, file, src, doc, node, outer, missing.as_deref()),
                missing,
            ) {
                (Ok(found), _) => {
                    out.launches.extend(found.launches);
                    out.findings.extend(found.findings);
                }
                // What the platform needed from the linked object is not here: say which.
                (Err(f), Some(why)) if f.rule == "INP006" => {
                    out.findings.push(*not_read(p, node.loc, &why))
                }
                (Err(f), _) => out.findings.push(*f),
            }
        }
    }
    out
}

/// [`read`] of a document the platform recognized on its own (not a Python file's calls, which
/// every Python platform is tried on): one that gave nothing is still said, INP006 saying where
/// its launch is. Pod templates are the Kubernetes reader's, which says what it finds there.
pub fn read_said(
    p: &Platform,
    file: FileId,
    src: &SourceFile,
    doc: &Node,
    outer: Option<&Node>,
) -> Extracted {
    let mut out = read(p, file, src, doc, outer);
    let pods = p.launches.iter().any(Site::reads_pods);
    if out.launches.is_empty() && out.findings.is_empty() && p.reader.is_none() && !pods {
        // None of the platform's sites is here: an engine's option map or argv elsewhere in the
        // document (a Ray Serve app's own `args` of vLLM flags) is still read by its shape.
        let found = super::option_map::by_shape(file, src, doc);
        if !found.launches.is_empty() {
            return found;
        }
        out.findings
            .push(elsewhere::finding(p, file, &src.name, doc));
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
    let script = first_of(&site.script, doc, node).and_then(|s| Some((s, script_word(src, s)?)));
    let line = first_of(&site.command, doc, node);
    let argv: Vec<MappedWord> = site
        .argv
        .iter()
        .filter_map(|path| first_of(std::slice::from_ref(path), doc, node))
        .flat_map(|l| words_of(file, src, l))
        .collect();
    let words: Vec<MappedWord> = match (script, line) {
        (Some((at, script)), _) => {
            let mut argv = synthetic_words(&["bash", "-c"], at.loc);
            argv.push(script);
            argv
        }
        (None, _) if !site.entrypoint.is_empty() => {
            entrypoint_and_command(site, file, src, doc, node)
        }
        (None, Some(line)) => words_of(file, src, line),
        // No command: the image's entrypoint runs, as in a Kubernetes container.
        (None, None) => {
            match first_of(&site.image, doc, node).and_then(|i| image_entrypoint(i, argv.first())) {
                Some(entry) => entry,
                None => return Extracted::default(),
            }
        }
    };
    let mut words = words;
    words.extend(argv);
    let (env, unknown) = environment(site, src, doc, node, outer);
    let pod = shell::PodEnv {
        unknown,
        any_name: false,
    };
    let mut found = shell::container_launches(file, words, &env, &pod);
    for l in &mut found.launches {
        for a in l.args.iter_mut().filter(|a| a.unresolved.is_empty()) {
            a.unresolved = placeholders(&a.text);
        }
        l.role_hint = site.role.clone();
        place(l, site, doc, node, outer);
        name(l, p, site, doc, node);
    }
    found
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

/// The site's launch: on the engine the file names, else on each engine the platform may pick
/// at startup, each with INP004 at the launch saying the engine is that pick (`missing`: the
/// linked object that would have named it is not in the input).
#[allow(clippy::too_many_arguments)]
fn launches(
    p: &Platform,
    site: &Site,
    file: FileId,
    src: &SourceFile,
    doc: &Node,
    node: &Node,
    outer: Option<&Node>,
    missing: Option<&str>,
) -> Result<Extracted, Box<Finding>> {
    let mut argv = Vec::new();
    for path in &site.argv {
        if let Some(list) = first_of(std::slice::from_ref(path), doc, node) {
            argv.extend(option_map::argv(file, src, list));
        }
    }
    let engines = engine(p, doc, node, &argv)?;
    let argv = renamed(argv, &site.argv_names);
    let mut out = Extracted::default();
    for e in &engines.list {
        let l = launch(p, site, *e, argv.clone(), src, doc, node, outer)?;
        if let Some(why) = &engines.open {
            let why = match missing {
                Some(m) => format!("{why} (also: {m})"),
                None => why.clone(),
            };
            out.findings.push(
                Finding::new("INP004", Some(l.command))
                    .var(
                        "flag",
                        format!(
                            "the engine ({}, planned here on {})",
                            engines.named,
                            e.name()
                        ),
                    )
                    .var("vars", why),
            );
        }
        out.launches.push(l);
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn launch(
    p: &Platform,
    site: &Site,
    engine: Engine,
    argv: Vec<Arg>,
    src: &SourceFile,
    doc: &Node,
    node: &Node,
    outer: Option<&Node>,
) -> Result<Launch, Box<Finding>> {
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
        args.extend(word(m).map(|a| untagged(site, without_scheme(site, a))));
    }
    let mut kwargs = Vec::new();
    // Without its own options, a site still takes the shared ones (a NIMService with no `env`
    // still has its NIMCache's profile).
    let empty = Node {
        value: Value::Map(Vec::new()),
        loc: node.loc,
    };
    let shared = site.shared_options.is_some().then_some(&empty);
    let own = site
        .options
        .as_deref()
        .and_then(|o| first_of(&[o.into()], doc, node));
    if let Some(map) = own.or(shared).filter(|_| site.options.is_some()) {
        let map = &options(site, doc, node, map);
        let read = option_map::read(engine, map, site).map_err(|why| not_read(p, map.loc, &why))?;
        args.extend(read.args);
        kwargs = read.kwargs;
        for kw in &mut kwargs {
            kw.frontend = site.frontend_fields;
        }
    }
    for r in site.render.iter().filter(|r| r.before_argv) {
        args.extend(rendered(r, doc, node));
    }
    args.extend(argv);
    for (flag, why) in &site.unknown {
        args.push(Arg::new(flag.clone(), node.loc));
        args.push(launcher::unknown(node.loc, why));
    }
    for r in site.render.iter().filter(|r| !r.before_argv) {
        args.extend(rendered(r, doc, node));
    }
    let api = site
        .llm_api_options
        .as_deref()
        .and_then(|o| first_of(&[o.into()], doc, node));
    // A launch its controller runs in a container is pointed at that container.
    let at = first_of(&site.runs_in, doc, node).map_or(node.loc, |c| c.loc);
    let mut l = Launch::new(engine, at, args);
    if let Some(map) = api.filter(|_| engine == Engine::Trtllm) {
        let at = Loc {
            end: map.loc.start,
            ..map.loc
        };
        l.args.push(Arg::new("--extra_llm_api_options", at));
        l.args.push(Arg::new(src.name.clone(), at));
        // The mapping as this input's reader read it, whatever its syntax (a Python call's
        // keyword arguments are no YAML), with its places in the input.
        l.files.push(LaunchFile {
            path: src.name.clone(),
            content: Ok((src.name.clone(), src.text.clone())),
            mapping: Some(ReadMapping {
                node: without(map, &site.drop),
                unresolved: Vec::new(),
            }),
        });
    }
    // Argv words and option values alike: a `$NAME` left in one is a value kvlint does not see.
    for a in &mut l.args {
        if a.unresolved.is_empty() {
            a.unresolved = placeholders(&a.text);
        }
    }
    l.kwargs = kwargs;
    l.role_hint = role(site, doc, node);
    place(&mut l, site, doc, node, outer);
    every_gpu(&mut l, &site.max_gpus);
    name(&mut l, p, site, doc, node);
    Ok(l)
}

/// `--flag max` for a flag of `max_gpus`: the GPUs the launch is given, else a value kvlint
/// cannot see.
fn every_gpu(l: &mut Launch, flags: &[String]) {
    let gpus = l.placement.gpus_per_pod;
    let mut after_flag = false;
    for a in &mut l.args {
        if after_flag && a.text == "max" {
            match gpus {
                Some(n) => a.text = n.to_string(),
                None => a.unresolved = vec!["max (every GPU of the host)".into()],
            }
        }
        after_flag = flags.contains(&a.text);
    }
}

/// An argv with the platform's own flags (`--model_id`, `--model_id=x`) renamed to the engine's
/// flags they set, and those renamed to `""` dropped with their value.
fn renamed(argv: Vec<Arg>, names: &std::collections::HashMap<String, String>) -> Vec<Arg> {
    if names.is_empty() {
        return argv;
    }
    let mut out = Vec::with_capacity(argv.len());
    let mut words = argv.into_iter().peekable();
    while let Some(mut a) = words.next() {
        let (flag, inline) = match a.text.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (a.text.clone(), None),
        };
        let Some(to) = names.get(&flag) else {
            out.push(a);
            continue;
        };
        let value = match inline {
            Some(v) => Some(Arg {
                text: v,
                ..a.clone()
            }),
            None if words.peek().is_some_and(|n| !n.text.starts_with("--")) => words.next(),
            None => None,
        };
        if to.is_empty() {
            continue;
        }
        a.text = to.clone();
        out.push(a);
        out.extend(value);
    }
    out
}

/// The value the argv gives `flag` (`--backend=vllm`, `--backend vllm`), the last one winning.
fn flag_value<'a>(argv: &'a [Arg], flag: &str) -> Option<&'a Arg> {
    let mut found = None;
    for (i, a) in argv.iter().enumerate() {
        if a.text == flag {
            found = argv.get(i + 1);
        } else if a
            .text
            .strip_prefix(flag)
            .is_some_and(|r| r.starts_with('='))
        {
            found = Some(a);
        }
    }
    found
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
        for (inner, path, default) in Render::references(w) {
            let value = match (at(path), default) {
                (Some(value), _) => {
                    loc = loc.or(Some(value.loc));
                    value.scalar_text().unwrap_or_default()
                }
                (None, Some(d)) => d.to_string(),
                (None, None) => return Vec::new(),
            };
            text = text.replace(&format!("${{{inner}}}"), &value);
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

/// The site's role: as the data gives it, as a value names it (`role_from`; a `*` entry takes any
/// value there, a mapping too), or as the file writes it (`roles[].name`).
pub fn role(site: &Site, doc: &Node, node: &Node) -> Option<String> {
    site.role
        .clone()
        .or_else(|| {
            let from = site.role_from.as_ref()?;
            let at = first_of(std::slice::from_ref(&from.path), doc, node)?;
            let listed = at.scalar_text().and_then(|v| from.values.get(&v));
            listed.or_else(|| from.values.get("*")).cloned()
        })
        .or_else(|| first_of(&site.role_name, doc, node).and_then(Node::scalar_text))
}

/// The mapping without its `drop` entries (the platform's own keys, or keys given as flags).
fn without(map: &Node, drop: &[String]) -> Node {
    let Value::Map(entries) = &map.value else {
        return map.clone();
    };
    let kept = entries
        .iter()
        .filter(|(k, _)| !k.as_str().is_some_and(|k| drop.iter().any(|d| d == k)))
        .cloned()
        .collect();
    Node {
        value: Value::Map(kept),
        loc: map.loc,
    }
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
        // The shared entries first: where two keys set one flag, the site's own comes later and
        // wins (a NIMService's NIM_TENSOR_PARALLEL_SIZE over its cache's profile).
        let mut first: Vec<(Node, Node)> = more.iter().filter(|(k, _)| !has(k)).cloned().collect();
        first.append(&mut entries);
        entries = first;
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

/// A Kubernetes env list (`- name: K` / `value: V`) or a compose `environment` list
/// (`- K=V`) as the mapping of names to values it sets; any other node as it is. An item whose
/// value comes from elsewhere (`valueFrom`, a bare compose `- K`) sets nothing kvlint can see and
/// is left out.
fn env_map(node: &Node) -> Node {
    // One `env { name = "A" value = "1" }` block of an HCL file is a mapping, not a list of one.
    let one = node.get("name").is_some() && node.get("value").is_some();
    if let (true, Value::Map(entries)) = (one, &node.value) {
        if entries.len() == 2 {
            let list = Node {
                value: Value::Seq(vec![node.clone()]),
                loc: node.loc,
            };
            return env_map(&list);
        }
    }
    let Value::Seq(items) = &node.value else {
        return node.clone();
    };
    let pair = |item: &Node| match &item.value {
        Value::Str(text) => {
            let (k, v) = text.split_once('=')?;
            let at = |t: &str| Node {
                value: Value::Str(t.to_string()),
                loc: item.loc,
            };
            Some((at(k), at(v)))
        }
        // CloudFormation spells ECS's `{name, value}` entries `{Name, Value}`.
        _ => {
            let name = item.get("name").or_else(|| item.get("Name"))?;
            let value = item.get("value").or_else(|| item.get("Value"))?;
            Some((name.clone(), value.clone()))
        }
    };
    let bare = |i: &&Node| matches!(&i.value, Value::Str(t) if !t.contains('='));
    let entries: Option<Vec<(Node, Node)>> = items
        .iter()
        .filter(|i| i.get("valueFrom").is_none() && i.get("value_from").is_none() && !bare(i))
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

/// An image's name without its tag or digest (`nvcr.io/nim/meta/llama3-8b-instruct:1.0.3`), when
/// the site's model is an image's.
fn untagged(site: &Site, mut a: Arg) -> Arg {
    if site.model_untagged {
        let repo = a.text.split('@').next().unwrap_or_default();
        let cut = match repo.rsplit_once(':') {
            Some((r, tag)) if !tag.contains('/') => r.len(),
            _ => repo.len(),
        };
        a.text.truncate(cut);
    }
    a
}

fn without_scheme(site: &Site, mut a: Arg) -> Arg {
    if let Some(i) = a.text.find("://").filter(|_| site.model_url) {
        a.text = a.text[i + 3..].to_string();
    }
    a
}

/// INP006 at `at`: the platform's launch could not be read.
fn not_read(p: &Platform, at: Loc, reason: &str) -> Box<Finding> {
    Box::new(
        Finding::new("INP006", Some(at))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Arg> {
        let at = Loc::new(FileId(0), 0..0);
        words.iter().map(|w| Arg::new(*w, at)).collect()
    }

    fn texts(args: &[Arg]) -> Vec<&str> {
        args.iter().map(|a| a.text.as_str()).collect()
    }

    #[test]
    fn platform_flags_are_renamed_or_dropped_with_their_value() {
        let names = [
            ("--model_id", "--model"),
            ("--model_name", ""),
            ("--disable_lower_case", ""),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let argv = args(&[
            "--model_name",
            "chat",
            "--model_id=Qwen/Qwen3-8B",
            "--disable_lower_case",
            "--enforce-eager",
        ]);
        assert_eq!(
            texts(&renamed(argv, &names)),
            ["--model", "Qwen/Qwen3-8B", "--enforce-eager"]
        );
    }

    #[test]
    fn an_image_named_model_drops_its_tag_or_digest() {
        let site: Site = toml::from_str("model_untagged = true").unwrap();
        let at = Loc::new(FileId(0), 0..0);
        let cut = |t: &str| untagged(&site, Arg::new(t, at)).text;
        assert_eq!(
            cut("nvcr.io/nim/meta/llama3-8b-instruct:1.0.3"),
            "nvcr.io/nim/meta/llama3-8b-instruct"
        );
        assert_eq!(cut("registry:5000/nim/m@sha256:abc"), "registry:5000/nim/m");
        assert_eq!(cut("registry:5000/nim/m"), "registry:5000/nim/m");
        let kept: Site = toml::from_str("").unwrap();
        assert_eq!(untagged(&kept, Arg::new("m:1", at)).text, "m:1");
    }

    #[test]
    fn the_last_value_of_a_flag_names_the_engine() {
        let argv = args(&["--backend", "huggingface", "--backend=vllm"]);
        assert_eq!(
            flag_value(&argv, "--backend").unwrap().text,
            "--backend=vllm"
        );
        let argv = args(&["--backend=vllm", "--backend", "huggingface"]);
        assert_eq!(flag_value(&argv, "--backend").unwrap().text, "huggingface");
        assert!(flag_value(&args(&["--backendx=1"]), "--backend").is_none());
    }
}

//! Launches read as a platform file says (`platforms/*.toml`, `crate::platform`): the data names
//! where each launch site is, its option map and how its keys map to options, its argv, model,
//! GPUs, role and image; this reader knows no platform by name.

use super::k8s::{placement, scalar};
use super::{option_map, Extracted};
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch, ObjectRef};
use crate::platform::path::{first_of, Path};
use crate::platform::{Platform, Site};
use crate::source::{FileId, SourceFile};
use crate::yaml::Node;

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
    file_ok && api_ok && r.paths.iter().all(has) && !r.absent.iter().any(has)
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
    if let Some(reader) = p.reader {
        return super::shell::platform_reader(reader, file, src, doc);
    }
    let mut out = Extracted::default();
    for site in &p.launches {
        let at = match Path::parse(&site.at) {
            Ok(path) => path.all(doc, doc),
            Err(_) => continue,
        };
        for node in at {
            match launch(p, site, file, src, doc, node, outer) {
                Ok(l) => out.launches.push(l),
                Err(f) => out.findings.push(*f),
            }
        }
    }
    out
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
        args.extend(word(m));
    }
    let mut kwargs = Vec::new();
    if let Some(map) = site
        .options
        .as_deref()
        .and_then(|o| first_of(&[o.into()], doc, node))
    {
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
    let mut l = Launch::new(engine, node.loc, args);
    l.kwargs = kwargs;
    l.role_hint = site.role.clone().or_else(|| {
        let from = site.role_from.as_ref()?;
        let value = first_of(std::slice::from_ref(&from.path), doc, node)?.scalar_text()?;
        from.values.get(&value).cloned()
    });
    place(&mut l, site, doc, node, outer);
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
    Ok(l)
}

/// GPU type and count, pods, image and the release its tag names.
fn place(l: &mut Launch, site: &Site, doc: &Node, node: &Node, outer: Option<&Node>) {
    let (resource_gpus, mig) = placement::gpus(first_of(&site.resources, doc, node));
    l.placement.gpu = mig
        .or_else(|| {
            first_of(&site.gpu_type, doc, node).and_then(|g| Some((g.scalar_text()?, g.loc)))
        })
        .or_else(|| {
            let root = outer.unwrap_or(doc);
            first_of(&site.pod, root, root).and_then(placement::gpu_type)
        });
    l.placement.gpus_per_pod = site
        .gpu_count
        .iter()
        .find_map(|alt| product(alt, doc, node))
        .or(resource_gpus)
        .or(site.gpu_count_default);
    l.placement.pods = Some(1);
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

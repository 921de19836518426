//! Option maps: a mapping of engine option names to values (Ray Serve `engine_kwargs`, a chart's
//! `vllmConfig`, a Runpod worker config), read by the convention a platform names
//! (`platform::Keys`); and mappings anywhere in a file recognized as one engine's options by their
//! keys alone, and argv found by its shape ([`super::argv_shape`]), so that no option map goes
//! unread.

mod named;

use super::argv_shape;
use super::k8s::scalar;
use super::shell;
use crate::launch::{Arg, Engine, Kwarg, Launch};
use crate::platform::{Keys, Site};
use crate::source::{FileId, SourceFile};
use crate::yaml::{Node, Value};

/// What an option map gives a launch: option tokens, and keyword arguments checked per release.
#[derive(Debug, Default)]
pub struct Read {
    pub args: Vec<Arg>,
    pub kwargs: Vec<Kwarg>,
}

/// Reads `map` with the key convention `keys`; with `flag_names`, only those keys, each to its flag.
pub fn read(engine: Engine, map: &Node, site: &Site) -> Result<Read, String> {
    let (keys, flag_names) = (site.keys, &site.flag_names);
    let Value::Map(entries) = &map.value else {
        return Err("the options are not a mapping of names to values".into());
    };
    let mut out = Read::default();
    match keys {
        Keys::Kwargs if flag_names.is_empty() => {
            out.kwargs = unique(entries)
                .into_iter()
                .filter_map(|(k, v)| crate::engine::kwargs::tokens(engine, k, v))
                .collect();
            for kw in &mut out.kwargs {
                unresolved_placeholders(engine, &mut kw.tokens);
            }
        }
        Keys::Flags if flag_names.is_empty() => {
            let own = |k: &Node| {
                let key = k.scalar_text().unwrap_or_default();
                crate::engine::is_option(engine, &format!("--{key}"))
            };
            let kept = Node {
                value: Value::Map(
                    entries
                        .iter()
                        .filter(|(k, _)| !site.only_options || own(k))
                        .cloned()
                        .collect(),
                ),
                loc: map.loc,
            };
            out.args = crate::engine::config_file_args(engine, &kept)?;
            unresolved_placeholders(engine, &mut out.args);
        }
        _ => {
            for (k, v) in unique(entries) {
                let Some(key) = k.as_str() else { continue };
                let flag = match flag_names.get(key) {
                    Some(f) => spelled(engine, f),
                    None if flag_names.is_empty() => format!("--{}", kebab(key)),
                    None => continue,
                };
                if site.switches.iter().any(|s| s == key) {
                    let on = v.scalar_text().unwrap_or_default().to_ascii_lowercase();
                    if matches!(on.as_str(), "true" | "1" | "yes") {
                        out.args.push(Arg::new(flag, k.loc));
                    }
                    continue;
                }
                let mut tokens = Vec::new();
                rendered(Arg::new(flag, k.loc), v, &mut tokens);
                unresolved_placeholders(engine, &mut tokens);
                out.args.extend(tokens);
            }
        }
    }
    Ok(out)
}

/// Marks each `$NAME` or `${NAME}` left in `args` (a template's placeholder, a script's unquoted
/// heredoc) a value kvlint does not see. A switch given one (`trust_remote_code: $TRUST`, a bool
/// the filler writes) keeps no value token, which argparse would read as a positional (vLLM's
/// model): the switch itself is then unknown.
pub(crate) fn unresolved_placeholders(engine: Engine, args: &mut Vec<Arg>) {
    let mut out: Vec<Arg> = Vec::with_capacity(args.len());
    for mut a in args.drain(..) {
        let names = super::by_platform::placeholders(&a.text);
        if names.is_empty() || !a.unresolved.is_empty() {
            out.push(a);
            continue;
        }
        match out.last_mut() {
            Some(flag) if crate::engine::is_switch(engine, &flag.text) => flag.unresolved = names,
            _ => {
                a.unresolved = names;
                out.push(a);
            }
        }
    }
    *args = out;
}

/// A flag a platform names in vLLM's spelling, as the engine that runs spells the same setting:
/// a platform that runs any of them by its profile (NIM) passes one setting to whichever runs.
/// TensorRT-LLM: tensorrt_llm/commands/serve.py; SGLang: sglang/srt/server_args.py.
fn spelled(engine: Engine, flag: &str) -> String {
    let other = match (engine, flag) {
        (Engine::Trtllm, "--tensor-parallel-size") => "--tp_size",
        (Engine::Trtllm, "--pipeline-parallel-size") => "--pp_size",
        (Engine::Trtllm, "--max-model-len") => "--max_seq_len",
        (Engine::Trtllm, "--max-num-seqs") => "--max_batch_size",
        (Engine::Sglang, "--max-model-len") => "--context-length",
        (Engine::Sglang, "--max-num-seqs") => "--max-running-requests",
        _ => flag,
    };
    other.to_string()
}

/// A key a chart renders as `--flag value` inside `{{ if .Values.key }}`: `true` the bare flag;
/// what Go templates take as false (`false`, null, `0`, `""`, an empty list or map) nothing.
fn rendered(flag: Arg, v: &Node, args: &mut Vec<Arg>) {
    match &v.value {
        Value::Bool(true) => args.push(flag),
        Value::Bool(false) | Value::Null | Value::Int(0) => {}
        Value::Str(s) if s.is_empty() => {}
        Value::Seq(items) if items.is_empty() => {}
        Value::Map(e) if e.is_empty() => {}
        Value::Seq(items) => {
            args.push(flag);
            args.extend(items.iter().map(|i| {
                Arg::new(
                    i.scalar_text().unwrap_or_else(|| i.to_json().to_string()),
                    i.loc,
                )
            }));
        }
        Value::Map(_) => {
            args.push(flag);
            args.push(Arg::new(v.to_json().to_string(), v.loc));
        }
        _ => {
            args.push(flag);
            args.push(Arg::new(v.scalar_text().unwrap_or_default(), v.loc));
        }
    }
}

/// A mapping's entries as a dict holds them: a repeated key keeps its first place, last value.
fn unique(entries: &[(Node, Node)]) -> Vec<(&Node, &Node)> {
    let mut out: Vec<(&Node, &Node)> = Vec::new();
    for (k, v) in entries {
        match out
            .iter_mut()
            .find(|(u, _)| u.scalar_text() == k.scalar_text())
        {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    out
}

/// `maxModelLen` → `max-model-len`.
pub fn kebab(key: &str) -> String {
    let mut out = String::new();
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('-');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// An argv list, a string split as a shell splits it, or a mapping of flag names to values.
pub fn argv(file: FileId, src: &SourceFile, list: &Node) -> Vec<Arg> {
    let arg = |w: &shell::MappedWord| Arg::new(w.chars.as_str(), w.loc);
    match &list.value {
        Value::Map(entries) => flag_map(src, entries),
        Value::Seq(items) => items
            .iter()
            .filter_map(|n| scalar::word(src, n))
            .map(|w| arg(&w))
            .collect(),
        _ => scalar::word(src, list)
            .map(|w| shell::split_words(file, &w).iter().map(arg).collect())
            .unwrap_or_default(),
    }
}

/// A mapping of flag names to values rendered as a Go program or template renders one (AI
/// Runway's `buildEngineArgs`, a chart's `range $k, $v := .Values.extraArgs`): keys in sorted
/// order, each `--name value`, an empty value the bare `--name`.
fn flag_map(src: &SourceFile, entries: &[(Node, Node)]) -> Vec<Arg> {
    let mut sorted: Vec<&(Node, Node)> = entries.iter().collect();
    sorted.sort_by_key(|(k, _)| k.scalar_text().unwrap_or_default());
    let mut args = Vec::new();
    for (k, v) in sorted {
        let Some(name) = k.scalar_text() else {
            continue;
        };
        args.push(Arg::new(
            format!("--{}", name.trim_start_matches('-')),
            k.loc,
        ));
        let value = scalar::word(src, v).filter(|w| !w.chars.as_str().is_empty());
        args.extend(value.map(|w| Arg::new(w.chars.as_str(), w.loc)));
    }
    args
}

/// What an option map or argv found by its shape is called in `object.kind`.
const BY_KEYS: &str = "engine options (recognized by their keys)";
const BY_FLAGS: &str = "engine arguments (recognized by their flags)";

/// A document no reader took, searched for what still names an engine: a mapping whose keys are
/// mostly one engine's options is that engine's settings (a launch, named by its path); a list of
/// words that starts with an engine command is an argv, and so is a mapping's `command` and
/// `args` that together start one. A mapping with an engine's option keys
/// that cannot be read that way is INP006 at it, so that the file is never silently skipped.
pub fn by_shape(file: FileId, src: &SourceFile, doc: &Node) -> super::Extracted {
    let mut out = super::Extracted::default();
    let mut unread: Option<(&Node, String, Engine)> = None;
    // Each node seen, with its parent's index, so that an option map can look outward for the
    // model its file names beside it.
    let mut seen: Vec<(&Node, Option<usize>)> = Vec::new();
    let mut todo: Vec<(&Node, String, Option<usize>)> = vec![(doc, String::new(), None)];
    while let Some((node, path, parent)) = todo.pop() {
        let at = seen.len();
        seen.push((node, parent));
        match &node.value {
            Value::Map(entries) => {
                let found = argv_shape::command_args(file, src, node).unwrap_or_default();
                if !found.launches.is_empty() {
                    let shape = argv_shape::BY_SHAPE;
                    let launches = found.launches.into_iter().map(|l| named(l, shape, &path));
                    out.launches.extend(launches);
                    out.findings.extend(found.findings);
                    continue;
                }
                // A mapping that names its engine is read as that engine's settings, its
                // flag strings included, before any guess from its keys alone.
                if let Some(l) = named::launch(file, src, node, &path, || beside(&seen, at)) {
                    out.launches.push(l);
                    continue;
                }
                let camel = camel_options(node);
                let options = camel.as_ref().map_or(node, |(n, _)| n);
                let engine = camel
                    .as_ref()
                    .map(|(_, e)| *e)
                    .or_else(|| super::engine_config::detect(node));
                if let Some(engine) = engine {
                    let model = beside(&seen, at);
                    match options_launch(engine, options, &path, model) {
                        Some(l) => {
                            out.launches.push(l);
                            continue;
                        }
                        None if unread.is_none() => unread = Some((node, path.clone(), engine)),
                        None => {}
                    }
                }
                for (k, v) in entries.iter().rev() {
                    let key = k.scalar_text().unwrap_or_default();
                    let sub = if path.is_empty() {
                        key
                    } else {
                        format!("{path}.{key}")
                    };
                    todo.push((v, sub, Some(at)));
                }
            }
            Value::Seq(items) => {
                if let Some(l) = flags_launch(file, src, node, &path) {
                    out.launches.push(l);
                    continue;
                }
                let found = argv_shape::list(file, src, items);
                if !found.launches.is_empty() {
                    let head = argv_shape::BY_HEAD;
                    let launches = found.launches.into_iter().map(|l| named(l, head, &path));
                    out.launches.extend(launches);
                    out.findings.extend(found.findings);
                    continue;
                }
                for (i, v) in items.iter().enumerate().rev() {
                    todo.push((v, format!("{path}[{i}]"), Some(at)));
                }
            }
            _ => {}
        }
    }
    if let Some((name, count, loc)) = instance_gpu(doc).filter(|_| !out.launches.is_empty()) {
        for l in out
            .launches
            .iter_mut()
            .filter(|l| l.placement.gpu.is_none())
        {
            l.placement.gpu = Some((name.to_string(), loc));
            l.placement.gpus_per_node = Some(count);
        }
    }
    if let (true, Some((node, path, engine))) = (out.launches.is_empty(), unread) {
        // Keys alone may fit several engines (`contextLength`); the image the file names says.
        let engine = image_engine(doc).unwrap_or(engine);
        out.findings.push(
            crate::finding::Finding::new("INP006", Some(node.loc))
                .var("engine", format!("{} options at `{path}`", engine_title(engine)))
                .var(
                    "reason",
                    "the mapping holds the engine's option names, but no launch could be built from it",
                )
                .var(
                    "help",
                    "add a platform for this file in kvlint.toml (`[[platform]]`, see `kvlint platforms`), or check the rendered engine command",
                ),
        );
    }
    out
}

/// The engine of the first engine image the document names (`image: vllm/vllm-openai`, or
/// `image: {repository: ...}` / `{name: ...}` in chart values).
fn image_engine(doc: &Node) -> Option<Engine> {
    let mut todo = vec![(doc, false)];
    while let Some((node, in_image)) = todo.pop() {
        let Value::Map(entries) = &node.value else {
            if let Value::Seq(items) = &node.value {
                todo.extend(items.iter().map(|i| (i, false)));
            }
            continue;
        };
        for (k, v) in entries {
            let key = k.as_str().unwrap_or_default();
            let names = key == "image" || (in_image && ["repository", "name"].contains(&key));
            match v.as_str().filter(|_| names) {
                Some(image) => {
                    if let Some(kind) = super::images::engine_image(image) {
                        return Some(kind.engine());
                    }
                }
                None => todo.push((v, key == "image")),
            }
        }
    }
    None
}

/// The GPU of the one cloud instance type the document names (`instance: {type:
/// ml.p5e.48xlarge}` in a benchmark recipe), and how many each node has. Two instance types
/// with different GPUs leave it unknown: which one runs the launch is not said.
fn instance_gpu(doc: &Node) -> Option<(&'static str, u32, crate::source::Loc)> {
    let mut found: Option<(&'static str, u32, crate::source::Loc)> = None;
    let mut todo = vec![doc];
    while let Some(node) = todo.pop() {
        match &node.value {
            Value::Str(s) => {
                if let Some((spec, count)) = crate::gpu::instance::gpus(s) {
                    match found {
                        Some((name, ..)) if name != spec.name => return None,
                        Some(_) => {}
                        None => found = Some((spec.name.as_str(), count, node.loc)),
                    }
                }
            }
            Value::Seq(items) => todo.extend(items),
            Value::Map(entries) => todo.extend(entries.iter().map(|(_, v)| v)),
            _ => {}
        }
    }
    found
}

/// A mapping whose keys are an engine's options in camelCase (`maxModelLen`,
/// `gpuMemoryUtilization`: the spelling of an operator's custom resource or a chart's values,
/// which render them as flags), with its keys spelled as flags and the entries a template
/// leaves out (an empty string, null) dropped; and the engine. `None` for a mapping already
/// spelled as flags, which [`super::engine_config::detect`] reads as it is.
fn camel_options(node: &Node) -> Option<(Node, Engine)> {
    let Value::Map(entries) = &node.value else {
        return None;
    };
    let camel = |k: &Node| {
        k.as_str()
            .is_some_and(|k| k.chars().any(|c| c.is_ascii_uppercase()))
    };
    if !entries.iter().any(|(k, _)| camel(k)) {
        return None;
    }
    let keys: Vec<String> = entries
        .iter()
        .filter_map(|(k, _)| k.as_str())
        .map(kebab)
        .collect();
    let engine = super::engine_config::detect_keys(&keys)?;
    let left_out = |v: &Node| match &v.value {
        Value::Null => true,
        Value::Str(s) => s.is_empty(),
        _ => false,
    };
    // Only the options' values are copied: the other keys count, empty, for "mostly".
    let entries = entries
        .iter()
        .filter(|(_, v)| !left_out(v))
        .map(|(k, v)| {
            let flag = k.as_str().map(kebab).unwrap_or_default();
            let value = if crate::engine::is_option(engine, &format!("--{flag}")) {
                v.clone()
            } else {
                Node {
                    value: Value::Null,
                    loc: v.loc,
                }
            };
            let key = Node {
                value: Value::Str(flag),
                loc: k.loc,
            };
            (key, value)
        })
        .collect();
    Some((
        Node {
            value: Value::Map(entries),
            loc: node.loc,
        },
        engine,
    ))
}

/// Keys that name the model a file's engine options are for, when the options do not: a
/// benchmark recipe's `deployment.model.id` beside its `vllm:` section, a project config's
/// `model: {id: ...}` beside `sglang:`.
const MODEL_KEYS: &[&str] = &[
    "model",
    "model_id",
    "modelId",
    "model_name",
    "modelName",
    "model_path",
    "modelPath",
];
/// Inside a `model:` mapping, the keys that hold its name or path.
const MODEL_NAME_KEYS: &[&str] = &["id", "model_id", "repo_id", "path", "name"];

/// The model named nearest the option map `seen[at]` (its own mapping's siblings first, then
/// each enclosing mapping's), when the map names none itself. The value keeps its own span, so
/// a finding on the model points at the line that names it.
fn beside<'a>(seen: &[(&'a Node, Option<usize>)], at: usize) -> Option<&'a Node> {
    let own = seen[at].0;
    let named_here = |key: &str| own.get(key).is_some();
    if named_here("model") || named_here("model_path") || named_here("model-path") {
        return None;
    }
    // The options' own mapping, then each enclosing one without the branch just left.
    let (mut map, mut left, mut up): (&Node, Option<&Node>, _) = (own, None, seen[at].1);
    loop {
        if let Value::Map(entries) = &map.value {
            let found = entries
                .iter()
                .filter(|(_, v)| left.is_none_or(|l| !std::ptr::eq(v, l)))
                .filter(|(k, _)| k.as_str().is_some_and(|k| MODEL_KEYS.contains(&k)))
                .find_map(|(_, v)| model_value(v));
            if found.is_some() {
                return found;
            }
        }
        let (parent, next) = seen[up?];
        (map, left, up) = (parent, Some(map), next);
    }
}

/// A model key's value: a name or path, or a mapping that holds one.
fn model_value(v: &Node) -> Option<&Node> {
    match &v.value {
        Value::Str(s) if !s.trim().is_empty() => Some(v),
        Value::Map(_) => MODEL_NAME_KEYS
            .iter()
            .filter_map(|k| v.get(k))
            .find(|n| n.as_str().is_some_and(|s| !s.trim().is_empty())),
        _ => None,
    }
}

fn engine_title(engine: Engine) -> &'static str {
    engine.title()
}

/// A mapping whose keys are mostly the engine's options (at least two, and at least half of
/// its keys; or any number under a key that names the engine, `sglang: {tp-size: 8}`), read as
/// the engine reads its config file; the other keys are left out. `model` is the model its file
/// names beside it ([`beside`]), given as the engine's model option.
/// TensorRT-LLM's options are no launch of their own (their server takes them as a file).
fn options_launch(engine: Engine, map: &Node, path: &str, model: Option<&Node>) -> Option<Launch> {
    let Value::Map(entries) = &map.value else {
        return None;
    };
    let own = |k: &Node| {
        let key = k.scalar_text().unwrap_or_default().replace('_', "-");
        crate::engine::is_option(engine, &format!("--{key}"))
    };
    let kept: Vec<(Node, Node)> = entries.iter().filter(|(k, _)| own(k)).cloned().collect();
    let under_name = path.rsplit('.').next() == Some(engine.name()) && kept.len() == entries.len();
    let mostly = kept.len() >= 2 && kept.len() * 2 >= entries.len();
    if engine == Engine::Trtllm || kept.is_empty() || !(mostly || under_name) {
        return None;
    }
    settings_launch(engine, kept, map.loc, path, model, Vec::new())
}

/// The launch of an engine's settings found by their keys at `path`: `options` (each spelled as
/// its flag without dashes) read as the engine reads its config file, `model` given as the
/// engine's model option, then `flags` (the words a settings value holds for the command line).
fn settings_launch(
    engine: Engine,
    mut options: Vec<(Node, Node)>,
    at: crate::source::Loc,
    path: &str,
    model: Option<&Node>,
    flags: Vec<Arg>,
) -> Option<Launch> {
    let key = match engine {
        Engine::Sglang => "model-path",
        _ => "model",
    };
    // The settings' own model option (`modelPath`, spelled `model-path`) is theirs to give.
    let dest = |k: &str| crate::engine::option_dest(engine, &format!("--{k}"));
    let own = |(k, _): &(Node, Node)| k.as_str().is_some_and(|k| dest(k) == dest(key));
    if let Some(m) = model.filter(|_| !options.iter().any(own)) {
        let key = Node {
            value: Value::Str(key.into()),
            loc: m.loc,
        };
        options.push((key, m.clone()));
    }
    let options = Node {
        value: Value::Map(options),
        loc: at,
    };
    let mut args = crate::engine::config_file_args(engine, &options).ok()?;
    args.extend(flags);
    unresolved_placeholders(engine, &mut args);
    let at = crate::source::Loc {
        end: at.start,
        ..at
    };
    Some(named(Launch::new(engine, at, args), BY_KEYS, path))
}

/// How many of `words`' flags are the engine's options, when the words start with a flag and
/// at least half of their flags are (`--name=value` counted by its name).
fn known_flags(engine: Engine, words: &[String]) -> Option<usize> {
    if !words.first()?.starts_with("--") {
        return None;
    }
    let flags: Vec<&str> = words
        .iter()
        .filter(|w| w.starts_with("--"))
        .map(|w| w.split('=').next().unwrap_or(w))
        .collect();
    let known = flags
        .iter()
        .filter(|f| crate::engine::is_option(engine, f))
        .count();
    (known * 2 >= flags.len()).then_some(known)
}

/// A list of words that starts with a flag, under a key that names the engine (`vllm: {args:
/// [--model, m, ...]}` in a chart's values), whose flags are mostly that engine's options (at
/// least two): the arguments the engine's image is given.
fn flags_launch(file: FileId, src: &SourceFile, list: &Node, path: &str) -> Option<Launch> {
    let Value::Seq(items) = &list.value else {
        return None;
    };
    let engine =
        path.split(['.', '['])
            .find_map(|seg| match seg.to_ascii_lowercase().as_str() {
                "vllm" => Some(Engine::Vllm),
                "sglang" => Some(Engine::Sglang),
                _ => None,
            })?;
    let words: Option<Vec<String>> = items.iter().map(Node::scalar_text).collect();
    if known_flags(engine, &words?)? < 2 {
        return None;
    }
    let at = crate::source::Loc {
        end: list.loc.start,
        ..list.loc
    };
    let launch = Launch::new(engine, at, argv(file, src, list));
    Some(named(launch, BY_FLAGS, path))
}

fn named(mut l: Launch, kind: &str, path: &str) -> Launch {
    l.object = Some(crate::launch::ObjectRef {
        kind: kind.into(),
        namespace: None,
        name: path.to_string(),
        container: None,
    });
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_env(engine: Engine, site: &str, env: &str) -> Vec<String> {
        let site: Site = toml::from_str(site).unwrap();
        let mut sources = crate::source::Sources::default();
        let file = sources.add("env.yaml", env);
        let map = crate::yaml::parse_document(file, sources.get(file)).unwrap();
        let read = super::read(engine, &map, &site).unwrap();
        read.args.into_iter().map(|a| a.text).collect()
    }

    /// A placeholder on a valued option is its unresolved value; on a switch it is dropped (it
    /// would read as a positional, vLLM's model) and the switch itself is unknown.
    #[test]
    fn placeholders_are_unresolved_and_never_positional() {
        let at = crate::source::Loc::new(crate::source::FileId(0), 0..1);
        let mut args: Vec<Arg> = ["--max-model-len", "$CTX", "--trust-remote-code", "${TRUST}"]
            .iter()
            .map(|t| Arg::new(*t, at))
            .collect();
        unresolved_placeholders(Engine::Vllm, &mut args);
        let got: Vec<(&str, Vec<String>)> = args
            .iter()
            .map(|a| (a.text.as_str(), a.unresolved.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("--max-model-len", vec![]),
                ("$CTX", vec!["CTX".to_string()]),
                ("--trust-remote-code", vec!["TRUST".to_string()]),
            ]
        );
    }

    /// Runpod's worker: a switch set to true, 1 or yes is the bare flag; anything else nothing.
    #[test]
    fn switches_give_a_bare_flag_or_nothing() {
        let site = r#"
keys = "flags"
flag_names = { TRUST_REMOTE_CODE = "--trust-remote-code", DISABLE_CUDA_GRAPH = "--disable-cuda-graph", CONTEXT_LENGTH = "--context-length" }
switches = ["TRUST_REMOTE_CODE", "DISABLE_CUDA_GRAPH"]
"#;
        let on = "TRUST_REMOTE_CODE: 'YES'\nDISABLE_CUDA_GRAPH: 'false'\nCONTEXT_LENGTH: '4096'\n";
        assert_eq!(
            read_env(Engine::Sglang, site, on),
            ["--trust-remote-code", "--context-length", "4096"]
        );
    }

    /// One setting in vLLM's spelling reaches each engine under its own flag name.
    #[test]
    fn vllm_spelled_settings_reach_each_engine_by_its_name() {
        let site = r#"
keys = "flags"
flag_names = { NIM_MAX_MODEL_LEN = "--max-model-len", NIM_TENSOR_PARALLEL_SIZE = "--tensor-parallel-size" }
"#;
        let env = "NIM_MAX_MODEL_LEN: '8192'\nNIM_TENSOR_PARALLEL_SIZE: '2'\n";
        let want: [(Engine, [&str; 4]); 3] = [
            (
                Engine::Vllm,
                ["--max-model-len", "8192", "--tensor-parallel-size", "2"],
            ),
            (
                Engine::Sglang,
                ["--context-length", "8192", "--tensor-parallel-size", "2"],
            ),
            (Engine::Trtllm, ["--max_seq_len", "8192", "--tp_size", "2"]),
        ];
        for (engine, flags) in want {
            assert_eq!(read_env(engine, site, env), flags, "{engine:?}");
        }
    }

    /// A mapping given as an argv renders as a Go program ranges over it: keys sorted, each
    /// `--key value`, an empty value the bare flag (AI Runway's `engine.args`).
    #[test]
    fn an_argv_mapping_is_flags_in_key_order() {
        let mut sources = crate::source::Sources::default();
        let text = "tensor-parallel-size: \"2\"\nenable-chunked-prefill: \"\"\ngpu-memory-utilization: \"0.9\"\n";
        let file = sources.add("args.yaml", text);
        let map = crate::yaml::parse_document(file, sources.get(file)).unwrap();
        let args: Vec<String> = argv(file, sources.get(file), &map)
            .into_iter()
            .map(|a| a.text)
            .collect();
        assert_eq!(
            args,
            [
                "--enable-chunked-prefill",
                "--gpu-memory-utilization",
                "0.9",
                "--tensor-parallel-size",
                "2"
            ]
        );
    }
}

//! Option maps: a mapping of engine option names to values (Ray Serve `engine_kwargs`, a chart's
//! `vllmConfig`, a Runpod worker config), read by the convention a platform names
//! (`platform::Keys`); and mappings anywhere in a file recognized as one engine's options by their
//! keys alone, and argv lists by their first words, so that no option map goes unread.

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

/// An argv list, or a string split as a shell splits it.
pub fn argv(file: FileId, src: &SourceFile, list: &Node) -> Vec<Arg> {
    let arg = |w: &shell::MappedWord| Arg::new(w.chars.as_str(), w.loc);
    match &list.value {
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

/// What an option map or argv found by its shape is called in `object.kind`.
const BY_KEYS: &str = "engine options (recognized by their keys)";
const BY_HEAD: &str = "engine argv (recognized by its command)";

/// A document no reader took, searched for what still names an engine: a mapping whose keys are
/// mostly one engine's options is that engine's settings (a launch, named by its path); a list of
/// words that starts with an engine command is an argv. A mapping with an engine's option keys
/// that cannot be read that way is INP006 at it, so that the file is never silently skipped.
pub fn by_shape(file: FileId, src: &SourceFile, doc: &Node) -> super::Extracted {
    let mut out = super::Extracted::default();
    let mut unread: Option<(&Node, String, Engine)> = None;
    let mut todo: Vec<(&Node, String)> = vec![(doc, String::new())];
    while let Some((node, path)) = todo.pop() {
        match &node.value {
            Value::Map(entries) => {
                if let Some(engine) = super::engine_config::detect(node) {
                    match options_launch(engine, node, &path) {
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
                    todo.push((v, sub));
                }
            }
            Value::Seq(items) => {
                let found = argv_launches(file, src, items);
                if !found.is_empty() {
                    out.launches
                        .extend(found.into_iter().map(|l| named(l, BY_HEAD, &path)));
                    continue;
                }
                for (i, v) in items.iter().enumerate().rev() {
                    todo.push((v, format!("{path}[{i}]")));
                }
            }
            _ => {}
        }
    }
    if let (true, Some((node, path, engine))) = (out.launches.is_empty(), unread) {
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

fn engine_title(engine: Engine) -> &'static str {
    match engine {
        Engine::Sglang => "SGLang",
        Engine::Vllm => "vLLM",
        Engine::Trtllm => "TensorRT-LLM",
    }
}

/// A mapping whose keys are mostly the engine's options (at least two, and at least half of
/// its keys), read as the engine reads its config file; the other keys are left out.
/// TensorRT-LLM's options are no launch of their own (their server takes them as a file).
fn options_launch(engine: Engine, map: &Node, path: &str) -> Option<Launch> {
    let Value::Map(entries) = &map.value else {
        return None;
    };
    let own = |k: &Node| {
        let key = k.scalar_text().unwrap_or_default().replace('_', "-");
        crate::engine::is_option(engine, &format!("--{key}"))
    };
    let kept: Vec<(Node, Node)> = entries.iter().filter(|(k, _)| own(k)).cloned().collect();
    if engine == Engine::Trtllm || kept.len() < 2 || kept.len() * 2 < entries.len() {
        return None;
    }
    let options = Node {
        value: Value::Map(kept),
        loc: map.loc,
    };
    let mut args = crate::engine::config_file_args(engine, &options).ok()?;
    unresolved_placeholders(engine, &mut args);
    let at = crate::source::Loc {
        end: map.loc.start,
        ..map.loc
    };
    Some(named(Launch::new(engine, at, args), BY_KEYS, path))
}

/// The launches of a list of words that starts with an engine command (`[vllm, serve, ...]`,
/// `[python3, -m, sglang.launch_server, ...]`).
fn argv_launches(file: FileId, src: &SourceFile, items: &[Node]) -> Vec<Launch> {
    let head = items.first().and_then(Node::as_str).unwrap_or_default();
    let base = head.rsplit('/').next().unwrap_or(head);
    let engine_head = matches!(base, "vllm" | "sglang" | "trtllm-serve")
        || (base.starts_with("python") && items.iter().take(3).any(|i| i.as_str() == Some("-m")));
    if !engine_head || !items.iter().all(|i| i.scalar_text().is_some()) {
        return Vec::new();
    }
    let words = items.iter().filter_map(|n| scalar::word(src, n));
    shell::exec_launches(file, words, &[]).launches
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
}

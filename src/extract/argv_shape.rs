//! Argv found by its shape in a document no reader took (a custom chart's values, a job spec):
//! a list of words whose first ones start an engine command, and a mapping that holds a
//! container's `command` and `args` (each a list of words or one string), which together start
//! one, directly or through a shell's `-c` script that the shell reader walks. The platform the
//! document belongs to is not known; the shape alone says where the launch is.

use super::k8s::{placement, scalar};
use super::shell::{self, MappedWord};
use super::Extracted;
use crate::launch::Launch;
use crate::source::{FileId, SourceFile};
use crate::yaml::{Node, Value};

/// What a list found by its first words is called in `object.kind`.
pub(super) const BY_HEAD: &str = "engine argv (recognized by its command)";
/// What a `command` + `args` mapping found by its shape is called in `object.kind`.
pub(super) const BY_SHAPE: &str = "engine command and args (recognized by their shape)";

/// The launches of a list of words that starts an engine command (`[vllm, serve, ...]`,
/// `[python3, -m, sglang.launch_server, ...]`, `[/bin/sh, -c, "vllm serve ..."]`).
pub(super) fn list(file: FileId, src: &SourceFile, items: &[Node]) -> Extracted {
    // The head first: most lists in a document are no argv, and some are long.
    let head: Vec<String> = items.iter().take(4).filter_map(Node::scalar_text).collect();
    if !starts_launch(&head.iter().map(String::as_str).collect::<Vec<_>>()) {
        return Extracted::default();
    }
    let words: Option<Vec<MappedWord>> = items.iter().map(|n| scalar::word(src, n)).collect();
    launches(file, words.unwrap_or_default())
}

/// The launches of a mapping that holds `command` and/or `args` as a container does, joined
/// into one argv (`{command: [/bin/sh, -c], args: ["vllm serve m ..."]}` in a chart's values).
/// `None` when the mapping has neither, or one of them is not words.
pub(super) fn command_args(file: FileId, src: &SourceFile, map: &Node) -> Option<Extracted> {
    let (command, args) = (map.get("command"), map.get("args"));
    if command.is_none() && args.is_none() {
        return None;
    }
    let mut words = Vec::new();
    for part in [command, args].into_iter().flatten() {
        words.extend(argv_words(file, src, part)?);
    }
    let mut found = launches(file, words);
    for l in &mut found.launches {
        placed(l, map);
    }
    Some(found)
}

/// What the mapping holds beside its `command` (or its engine's settings) as a container does:
/// the `image` that runs it (the release its tag names) and the GPUs its `resources` ask for.
pub(super) fn placed(l: &mut Launch, map: &Node) {
    if let Some(image) = map.get("image").filter(|i| i.as_str().is_some()) {
        let name = image.as_str().unwrap_or_default();
        l.engine_version = placement::image_version(name, l.engine.name()).map(|v| (v, image.loc));
        l.placement.image = Some((name.to_string(), image.loc));
    }
    let (gpus, mig) = placement::gpus(map.get("resources"));
    l.placement.gpus_per_pod = gpus.or(l.placement.gpus_per_pod);
    if mig.is_some() {
        l.placement.gpu = mig;
    }
}

/// A list of scalars as its words, or a string split as a shell splits it; `None` for
/// anything else (a list of mappings is no argv).
fn argv_words(file: FileId, src: &SourceFile, node: &Node) -> Option<Vec<MappedWord>> {
    match &node.value {
        Value::Seq(items) => items.iter().map(|n| scalar::word(src, n)).collect(),
        Value::Str(_) => Some(shell::split_words(file, &scalar::word(src, node)?)),
        _ => None,
    }
}

/// The launches `words` start, read as a container's exec-form argv, when their first words
/// are an engine command or a shell's `-c` script; none otherwise (a list of names or tags).
fn launches(file: FileId, words: Vec<MappedWord>) -> Extracted {
    let texts: Vec<&str> = words.iter().take(4).map(|w| w.chars.as_str()).collect();
    if !starts_launch(&texts) {
        return Extracted::default();
    }
    shell::exec_launches(file, words, &[])
}

/// `vllm`, `sglang`, `trtllm-serve` (any path), a Python interpreter with `-m` among its first
/// words, or a shell given a `-c` script.
fn starts_launch(texts: &[&str]) -> bool {
    let head = texts.first().copied().unwrap_or_default();
    let base = head.rsplit('/').next().unwrap_or(head);
    matches!(base, "vllm" | "sglang" | "trtllm-serve")
        || (base.starts_with("python") && texts.iter().take(3).any(|t| *t == "-m"))
        || shell::runs_script(texts)
}

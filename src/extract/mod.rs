//! Finding engine launches in inputs. One submodule per input kind; `extract` picks by content.

mod argv_shape;
pub mod by_platform;
pub mod compose;
pub mod engine_config;
mod engine_named;
pub mod hcl;
pub mod images;
pub mod k8s;
pub mod option_map;
pub mod pbtxt;
pub mod properties;
pub mod python;
mod roles;
pub mod shell;
pub mod toml_input;
mod unread;

use crate::finding::Finding;
use crate::launch::{Arg, Launch};
use crate::parallel;
use crate::source::{FileId, SourceFile, Sources};
use crate::yaml;

/// Launches found in one file, and the problems met on the way (invalid YAML, ...).
#[derive(Debug, Default)]
pub struct Extracted {
    pub launches: Vec<Launch>,
    pub findings: Vec<Finding>,
}

/// Finds the launches in one input file, choosing the reader by name and then by content: YAML
/// and JSON (manifests, Helm output, `kubectl get -o yaml`), Dockerfiles, engine configs, and shell
/// scripts for everything else. Standard input is named `<stdin>` (or by `--stdin-filename`).
pub fn extract(file: FileId, sources: &Sources) -> Extracted {
    extract_with(file, sources, 1)
}

/// [`extract`] with the documents of a large YAML file read on up to `jobs` threads (`--jobs`);
/// the result is the same for any `jobs`, and 0 or 1 reads on this thread only.
pub fn extract_with(file: FileId, sources: &Sources, jobs: usize) -> Extracted {
    let mut launches = Vec::new();
    let findings = read_each(file, sources.get(file), jobs, |l| launches.push(l));
    roles::fill(&mut launches, sources);
    Extracted { launches, findings }
}

/// Reads one input file as [`extract_with`] does, handing each launch to `each` on this thread,
/// in the file's order, as soon as it and every launch before it are read, while other threads
/// read on; returns the findings of the reading, after the last launch. The caller fills in
/// each launch's role ([`fill_role`]).
pub fn read_each(
    file: FileId,
    src: &SourceFile,
    jobs: usize,
    mut each: impl FnMut(Launch),
) -> Vec<Finding> {
    if let Some(out) = unread::helm_template(file, src).or_else(|| unread::kustomization(file, src))
    {
        out.launches.into_iter().for_each(each);
        return out.findings;
    }
    let _reading = by_platform::holder::reading(file, src);
    // What `unread::note` reads of a launch: where its command is.
    let mut commands = Vec::new();
    let template = env_template(&src.name);
    let mut seen = |mut l: Launch| {
        if template {
            unfilled(&mut l);
        }
        // Its first and last args: the documents they are in are the launch's too.
        let ends = [l.args.first(), l.args.last()].map(|a| a.map(|a| a.loc));
        commands.push((l.engine, l.command, ends));
        each(l);
    };
    let mut read = || by_kind(file, src, jobs, &mut seen);
    let (findings, scan) = if jobs > 1 && src.text.len() >= PARALLEL_MIN_BYTES {
        parallel::join(read, || unread::scan(src))
    } else {
        (read(), unread::scan(src))
    };
    // Stand-ins for the launches handed on, each with its command's place.
    let launches = commands
        .into_iter()
        .map(|(engine, command, ends)| {
            let args = ends.into_iter().flatten().map(|at| Arg::new("", at));
            Launch::new(engine, command, args.collect())
        })
        .collect();
    let mut out = Extracted { launches, findings };
    unread::note(file, src, scan, &mut out);
    out.findings
}

/// A file named as a template that `envsubst`, a deploy script's `sed` or a generator's
/// `str.format` fills before it is applied (`deploy.yaml.tpl`, `vllm.yaml.template`): its
/// `${NAME}` and `{name}` are placeholders, not text the engine would be given. (A Helm chart
/// template, which holds `{{ }}` directives, was recognized before.)
fn env_template(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [".tpl", ".tmpl", ".template"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// A template's launch: every argument still holding a `${NAME}` / `$NAME` / `{name}`
/// placeholder is not known (INP004 where the pool needs it), never a value the engine refuses.
fn unfilled(l: &mut Launch) {
    for a in l.args.iter_mut().filter(|a| a.unresolved.is_empty()) {
        a.unresolved = by_platform::placeholders(&a.text);
        a.unresolved.extend(format_fields(&a.text));
    }
}

/// The `{name}` replacement fields of a `str.format` template (`--max-model-len {max_len}`),
/// as `{name}`: a name only, so JSON (`{"kv_role": ...}`) and `{{ }}` are not fields.
fn format_fields(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let named = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        if named && after[name_len..].starts_with('}') && !rest[..open].ends_with('{') {
            out.push(format!("{{{name}}}"));
        }
        rest = after;
    }
    out
}

/// The role an input gives a launch outside the engine's settings (a wrapper flag, a name).
pub fn fill_role(launch: &mut Launch, sources: &Sources) {
    roles::fill(std::slice::from_mut(launch), sources);
}

/// The launches of `out` handed to `each`, and its findings.
fn hand_on(out: Extracted, each: &mut dyn FnMut(Launch)) -> Vec<Finding> {
    out.launches.into_iter().for_each(each);
    out.findings
}

fn by_kind(
    file: FileId,
    src: &SourceFile,
    jobs: usize,
    each: &mut dyn FnMut(Launch),
) -> Vec<Finding> {
    match kind(&src.name, &src.text) {
        Kind::Yaml | Kind::Json => yaml_input(file, src, jobs, each),
        Kind::Dockerfile => hand_on(shell::dockerfile(file, &src.text), each),
        Kind::Apptainer => hand_on(shell::apptainer::read(file, &src.text), each),
        Kind::Shell => hand_on(shell::script(file, &src.text), each),
        Kind::Makefile => hand_on(shell::makefile(file, &src.text), each),
        Kind::Pbtxt => {
            let tree = pbtxt::parse(file, &src.text).map_err(|e| (e.loc, e.message));
            hand_on(tree_input(file, src, tree), each)
        }
        Kind::Hcl => {
            let tree = hcl::parse(file, &src.text).map_err(|e| (e.loc, e.message));
            hand_on(tree_input(file, src, tree), each)
        }
        Kind::Properties => {
            // A DJL job file holds its properties in one section, its variables in another.
            let job = properties::job(&src.text);
            let range = job
                .as_ref()
                .map_or(0..src.text.len(), |j| j.properties.clone());
            let mut tree =
                properties::parse(file, &src.text, range).map_err(|e| (e.loc, e.message));
            if let (Ok(tree), Some(job)) = (tree.as_mut(), &job) {
                properties::fill(tree, &job.vars);
            }
            hand_on(tree_input(file, src, tree), each)
        }
        Kind::Toml => {
            let tree = toml_input::parse(file, &src.text).map_err(|e| (e.loc, e.message));
            hand_on(tree_input(file, src, tree), each)
        }
        Kind::Python => hand_on(python::read(file, src), each),
        Kind::Unknown if looks_like_yaml(file, src) => yaml_input(file, src, jobs, each),
        Kind::Unknown => hand_on(shell::script(file, &src.text), each),
    }
}

/// A file a shell script writes (`cat > /tmp/model.json <<EOF`) read as an input of its name's
/// kind (YAML or JSON, protobuf text, properties); `text` is the script's own, blanked outside the
/// written blocks, so spans point into the script (`file`). Other kinds give nothing.
pub(crate) fn written_file(file: FileId, name: &str, text: String) -> Extracted {
    let src = SourceFile::new(name, text);
    let mut launches = Vec::new();
    let mut findings = Vec::new();
    if matches!(
        kind(name, &src.text),
        Kind::Yaml | Kind::Json | Kind::Pbtxt | Kind::Properties | Kind::Toml
    ) {
        findings = by_kind(file, &src, 1, &mut |l| launches.push(l));
    }
    Extracted { launches, findings }
}

/// What an input is, by its name first (extensions in any case), then by its first lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Yaml,
    /// A JSON document (`kubectl get -o json`, an AdmissionReview); read as YAML.
    Json,
    Dockerfile,
    /// An Apptainer/Singularity definition file.
    Apptainer,
    Shell,
    /// A Makefile: its recipes are shell commands after Make's variables are expanded.
    Makefile,
    /// Protocol Buffers text format (`config.pbtxt`, `*.textproto`).
    Pbtxt,
    /// Java properties (`serving.properties`, a DJL job file's `[serving_properties]`).
    Properties,
    /// HashiCorp HCL: Nomad job files (`*.nomad`, `*.nomad.hcl`), Terraform (`*.tf`), `*.hcl`.
    Hcl,
    /// A TOML file a platform names (`fly.toml`); other TOML files are not inputs.
    Toml,
    Python,
    /// Neither name nor first line tells: YAML if it parses as a mapping or list, else shell.
    Unknown,
}

pub fn kind(name: &str, text: &str) -> Kind {
    if is_yaml_name(name) {
        Kind::Yaml
    } else if has_extension(name, &[".pbtxt", ".textproto", ".txtpb"]) {
        Kind::Pbtxt
    } else if has_extension(name, &[".properties"]) {
        Kind::Properties
    } else if has_extension(name, HCL_EXTENSIONS) {
        Kind::Hcl
    } else if toml_input::is_deployment_name(name) {
        Kind::Toml
    } else if python::is_python(name) {
        // Before the Dockerfile test: `from x import y` reads as a `FROM` line.
        Kind::Python
    } else if shell::is_dockerfile(name, text) {
        Kind::Dockerfile
    } else if shell::apptainer::is_definition(name, text) {
        Kind::Apptainer
    } else if shell::make::is_makefile(name) {
        Kind::Makefile
    } else if is_shell_name(name) || shebang_shell(text) {
        Kind::Shell
    } else if properties::job(text).is_some() {
        // A DJL benchmark job file (`*.txt`): its `[serving_properties]` section.
        Kind::Properties
    } else if serde_json::from_str::<serde_json::Value>(text)
        .is_ok_and(|v| v.is_object() || v.is_array())
    {
        Kind::Json
    } else {
        Kind::Unknown
    }
}

/// Whether a file met while walking a directory is an input: by extension (any case), a
/// Dockerfile by name, or a script without extension that starts with a shell's `#!` line.
pub fn is_input_file(path: &std::path::Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let tree = has_extension(name, &[".pbtxt", ".textproto", ".txtpb", ".properties"])
        || has_extension(name, HCL_EXTENSIONS)
        || toml_input::is_deployment_name(name);
    if is_yaml_name(name) || is_shell_name(name) || tree || shell::is_dockerfile(name, "") {
        return true;
    }
    if python::is_python(name) {
        // Read only when it names an engine or a launcher: most Python files in a tree do not.
        return std::fs::read_to_string(path).is_ok_and(|t| python::mentions_launcher(&t));
    }
    let definition = name.to_ascii_lowercase().ends_with(".def");
    if name.contains('.') && !definition {
        return false;
    }
    let mut head = [0u8; 128];
    let read = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let head = String::from_utf8_lossy(&head[..read]);
    if definition {
        return shell::apptainer::is_definition("", &head);
    }
    shebang_shell(&head)
}

/// `#!/bin/bash`, `#!/usr/bin/env -S bash -e`, `#!/bin/sh`.
fn shebang_shell(text: &str) -> bool {
    let Some(line) = text.strip_prefix("#!") else {
        return false;
    };
    let line = line.lines().next().unwrap_or("");
    line.split_whitespace()
        .filter(|w| !w.starts_with('-'))
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .find(|w| *w != "env")
        .is_some_and(|w| matches!(w, "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash"))
}

/// A command given on kvlint's own command line (after `--`), as written by [`quote_argv`].
pub fn parse_command_line(file: FileId, sources: &Sources) -> Extracted {
    launches(shell::script_launches(file, &sources.get(file).text))
}

/// Joins an argv into one shell line that [`parse_command_line`] splits back into the same words.
pub fn quote_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|a| quote_word(a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./:,+@%=".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

fn launches(launches: Vec<Launch>) -> Extracted {
    Extracted {
        launches,
        findings: Vec::new(),
    }
}

/// YAML, and JSON (a YAML subset here: AdmissionReviews, `kubectl get -o json`).
fn is_yaml_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".yaml") || lower.ends_with(".yml") || lower.ends_with(".json")
}

/// HCL files by name: `.nomad.hcl` ends in `.hcl`. (`.tf.json` is JSON, read as such.)
const HCL_EXTENSIONS: &[&str] = &[".tf", ".hcl", ".nomad"];

fn has_extension(name: &str, extensions: &[&str]) -> bool {
    let lower = name.to_ascii_lowercase();
    extensions.iter().any(|ext| lower.ends_with(ext))
}

/// A protobuf text-format, properties or HCL file, read into the tree YAML gives: by the platform that
/// recognizes it, else by the shape of its option maps. Text its format refuses is INP001.
fn tree_input(
    file: FileId,
    src: &SourceFile,
    tree: Result<yaml::Node, (crate::source::Loc, String)>,
) -> Extracted {
    let node = match tree {
        Ok(node) => node,
        Err((at, reason)) => {
            let finding = Finding::new("INP001", Some(at)).var("reason", reason);
            return Extracted {
                launches: Vec::new(),
                findings: vec![finding],
            };
        }
    };
    match by_platform::find(crate::platform::registry().plain(), src, &node) {
        Some(p) => by_platform::read_said(p, file, src, &node, None),
        None => option_map::by_shape(file, src, &node),
    }
}

fn is_shell_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".sh", ".bash", ".zsh", ".ksh", ".slurm", ".sbatch"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// Text with no telling name or first line (stdin, an extensionless file) is YAML when one of
/// its documents is a mapping that kvlint reads (a manifest, `kubectl` or `helm template`
/// output, an engine config); a shell command parses as a plain string at most. One document at a
/// time, as the reading itself goes.
fn looks_like_yaml(file: FileId, src: &SourceFile) -> bool {
    yaml::documents(file, src).flatten().any(|n| {
        matches!(n.value, yaml::Value::Map(_) | yaml::Value::Seq(_))
            && (k8s::is_object(&n)
                || compose::is_compose(&n)
                || engine_config::detect(&n).is_some()
                || by_platform::find(crate::platform::registry().plain(), src, &n).is_some()
                || n.get("kind").is_some())
    })
}

/// Below this size a YAML file is read on the calling thread: starting threads costs more than
/// they save on a few small documents (the common case: one manifest, one values file).
const PARALLEL_MIN_BYTES: usize = 64 * 1024;
const PARALLEL_MIN_DOCUMENTS: usize = 4;
/// Documents read on threads past the next one whose launches are checked: results waiting for
/// their turn stay this many at most.
const PARALLEL_WINDOW: usize = 512;

/// A YAML file: each document is a Kubernetes object, Helm values, a compose file or an engine
/// config; a broken document is an `INP001` finding and the others are still read. A large file's
/// documents are parsed and read on up to `jobs` threads, each dropping a document's tree before
/// taking the next; each document's launches go to `each` in document order, so the output is
/// the same for any `jobs`.
fn yaml_input(
    file: FileId,
    src: &SourceFile,
    jobs: usize,
    each: &mut dyn FnMut(Launch),
) -> Vec<Finding> {
    let ranges = yaml::document_ranges(src);
    let mut findings = Vec::new();
    let read = |range: &std::ops::Range<usize>| {
        document(file, src, yaml::parse_range(file, src, range.clone()))
    };
    let take = |one: Extracted| findings.extend(hand_on(one, each));
    let small = src.text.len() < PARALLEL_MIN_BYTES || ranges.len() < PARALLEL_MIN_DOCUMENTS;
    let jobs = if small { 1 } else { jobs };
    parallel::for_each_ordered(&ranges, jobs, PARALLEL_WINDOW, read, take);
    findings
}

/// The launches and findings of one parsed (or broken) document, taken as its reader gives them.
fn document(file: FileId, src: &SourceFile, doc: Result<yaml::Node, yaml::YamlError>) -> Extracted {
    let both = |(launches, findings)| Extracted { launches, findings };
    let invalid = |at, reason: String| Extracted {
        launches: Vec::new(),
        findings: vec![Finding::new("INP001", Some(at)).var("reason", reason)],
    };
    let node = match doc {
        Ok(node) if k8s::is_object(&node) => return both(k8s::read(file, src, &node)),
        Ok(node) => node,
        Err(e) => return invalid(e.loc, e.message),
    };
    // A platform file (platforms/*.toml, kvlint.toml) first, then the hand-written readers.
    if let Some(p) = by_platform::find(crate::platform::registry().plain(), src, &node) {
        return by_platform::read_said(p, file, src, &node, None);
    }
    match node {
        _ if compose::is_compose(&node) => compose::launches(file, src, &node),
        _ => match engine_config::launch(src, &node) {
            Some(Ok(launch)) => launches(vec![launch]),
            Some(Err(reason)) => invalid(node.loc, reason),
            None => option_map::by_shape(file, src, &node),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::format_fields;

    #[test]
    fn format_fields_are_names_in_single_braces() {
        assert_eq!(format_fields("/models/{cache}/x"), ["{cache}"]);
        assert_eq!(format_fields("{a} {b_2}"), ["{a}", "{b_2}"]);
        for text in [
            "{\"kv_role\":\"kv_both\"}",
            "{{ .Values.x }}",
            "{}",
            "{1}",
            "plain",
        ] {
            assert!(format_fields(text).is_empty(), "{text}");
        }
    }
}

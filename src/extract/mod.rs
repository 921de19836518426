//! Finding engine launches in inputs. One submodule per input kind; `extract` picks by content.

pub mod compose;
pub mod engine_config;
pub mod helm_values;
pub mod k8s;
pub mod shell;

use crate::finding::Finding;
use crate::launch::Launch;
use crate::source::{FileId, Sources};
use crate::yaml;

/// Launches found in one file, and the problems met on the way (invalid YAML, ...).
#[derive(Debug, Default)]
pub struct Extracted {
    pub launches: Vec<Launch>,
    pub findings: Vec<Finding>,
}

/// Finds the launches in one input file, choosing the reader by name and content: YAML engine
/// configs, Dockerfiles, and shell scripts for everything else.
pub fn extract(file: FileId, sources: &Sources) -> Extracted {
    let src = sources.get(file);
    if is_yaml_name(&src.name) {
        return yaml_input(file, sources);
    }
    if shell::is_dockerfile(&src.name, &src.text) {
        return launches(shell::dockerfile_launches(file, &src.text));
    }
    if !is_shell_name(&src.name) && looks_like_engine_config(file, sources) {
        return yaml_input(file, sources);
    }
    launches(shell::script_launches(file, &src.text))
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

fn is_shell_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".sh", ".bash", ".zsh", ".ksh"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// Stdin or a file without a YAML extension whose text is an engine-config mapping.
fn looks_like_engine_config(file: FileId, sources: &Sources) -> bool {
    yaml::parse_document(file, sources.get(file))
        .is_ok_and(|node| engine_config::detect(&node).is_some())
}

/// A YAML file: each document is a Kubernetes object, Helm values, a compose file or an engine
/// config; a broken document is an `INP001` finding and the others are still read.
fn yaml_input(file: FileId, sources: &Sources) -> Extracted {
    let mut out = Extracted::default();
    let src = sources.get(file);
    for doc in yaml::documents(file, src) {
        match doc {
            Ok(node) if k8s::is_object(&node) => {
                out.launches.extend(k8s::launches(file, src, &node))
            }
            Ok(node) if helm_values::is_values(&node) => {
                out.launches.extend(helm_values::launches(src, &node))
            }
            Ok(node) if compose::is_compose(&node) => {
                out.launches.extend(compose::launches(file, src, &node))
            }
            Ok(node) => match engine_config::launch(&node) {
                Some(Ok(launch)) => out.launches.push(launch),
                Some(Err(reason)) => out
                    .findings
                    .push(Finding::new("INP001", Some(node.loc)).var("reason", reason)),
                None => {}
            },
            Err(e) => out
                .findings
                .push(Finding::new("INP001", Some(e.loc)).var("reason", e.message)),
        }
    }
    out
}

//! Apptainer/Singularity definition files (`*.def`): a header (`Bootstrap: docker`, `From:
//! IMAGE`) and `%section` scriptlets. `%environment` is sourced before the container's scripts;
//! `%runscript` runs on `apptainer run IMAGE ARGS` (its `"$@"` are those ARGS, unknown here) and
//! `%startscript` on `apptainer instance start`; `%apprun NAME` on `--app NAME`
//! (apptainer.org/docs/user/latest/definition_files.html). `%post`, `%files`, `%test` and the
//! rest build or check the image and start no server.

use super::lex;
use super::walk::Walker;
use super::{extracted, Budget};
use crate::extract::k8s::placement;
use crate::extract::Extracted;
use crate::platform::Reader;
use crate::source::FileId;

/// Whether a file is a definition file: named `*.def`, or its first line that is not a comment
/// is a `Bootstrap:` header.
pub fn is_definition(name: &str, text: &str) -> bool {
    let header = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.to_ascii_lowercase().starts_with("bootstrap:"));
    header || (name.to_ascii_lowercase().ends_with(".def") && text.contains("\n%"))
}

/// Sections whose scriptlet starts a process someone serves from.
const SERVING: &[&str] = &["%runscript", "%startscript", "%apprun"];

/// The launches in the serving sections, each with `%environment` sourced first and the image
/// `From:` names.
pub fn read(file: FileId, text: &str) -> Extracted {
    let sections = sections(text);
    let from = header(text, "from");
    let environment = sections.iter().find(|(name, _)| *name == "%environment");
    let mut launches = Vec::new();
    let mut findings = Vec::new();
    for (name, body) in &sections {
        if !SERVING.contains(name) {
            continue;
        }
        let mut walker = Walker::new(file, true);
        walker.scope.budget = Budget::for_input(text.len());
        if let Some((_, env)) = environment {
            walker.script(lex::chars_of(&text[env.clone()], env.start));
            // Sourced, so its assignments are the scripts' environment.
            for v in &mut walker.scope.vars {
                v.exported = true;
            }
            walker.findings.clear();
        }
        walker.script(lex::chars_of(&text[body.clone()], body.start));
        let mut out = extracted(walker);
        super::titled(
            super::reader_title(Reader::Apptainer),
            &mut out.launches,
            name,
            None,
        );
        launches.extend(out.launches);
        for f in out.findings {
            if !findings.contains(&f) {
                findings.push(f);
            }
        }
    }
    if let Some((image, at)) = from {
        let loc = crate::source::Loc::new(file, at);
        for l in &mut launches {
            l.engine_version = placement::image_version(image, l.engine.name()).map(|v| (v, loc));
            l.placement.image = Some((image.to_string(), loc));
        }
    }
    Extracted { launches, findings }
}

/// Each `%name` section with the byte range of its body (the lines after its header line up to
/// the next section). The header line may carry arguments (`%apprun serve`).
fn sections(text: &str) -> Vec<(&str, std::ops::Range<usize>)> {
    let mut out: Vec<(&str, std::ops::Range<usize>)> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        if !line.starts_with('%') {
            continue;
        }
        if let Some(last) = out.last_mut() {
            last.1.end = start;
        }
        let name = line.split_whitespace().next().unwrap_or("%");
        out.push((name, at..text.len()));
    }
    out
}

/// A header keyword's value (`From: vllm/vllm-openai:v0.9.0`) and its byte range, before the
/// first section.
fn header<'a>(text: &'a str, key: &str) -> Option<(&'a str, std::ops::Range<usize>)> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        if line.starts_with('%') {
            return None;
        }
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        if k.trim().eq_ignore_ascii_case(key) {
            let value = v.trim();
            let offset = start + k.len() + 1 + (v.len() - v.trim_start().len());
            return Some((value, offset..offset + value.len()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_and_header() {
        let text = "Bootstrap: docker\nFrom: vllm/vllm-openai:v0.9.0\n\n%post\n  pip x\n\
                    %runscript\n  exec vllm serve \"$@\"\n";
        assert!(is_definition("x.txt", text));
        let names: Vec<&str> = sections(text).iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["%post", "%runscript"]);
        let (_, body) = &sections(text)[1];
        assert_eq!(&text[body.clone()], "  exec vllm serve \"$@\"\n");
        let (image, at) = header(text, "from").expect("From:");
        assert_eq!(
            (image, &text[at]),
            ("vllm/vllm-openai:v0.9.0", "vllm/vllm-openai:v0.9.0")
        );
        assert!(!is_definition("a.def", "EXPORTS\n  f\n"));
    }
}

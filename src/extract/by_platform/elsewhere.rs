//! A document a platform file recognizes that holds no launch and gave no finding: INP006 there,
//! saying where the platform keeps its launch (`[elsewhere]`), unless a file that holds it is
//! checked in the same run (a Triton `config.pbtxt` with its `1/model.json`).

use super::Path;
use crate::finding::Finding;
use crate::platform::Platform;
use crate::source::{FileId, Loc};
use crate::yaml::Node;

/// The vars that carry `[elsewhere] files` (one glob a line) and the document's file name to
/// [`held_by`].
const FILES: &str = "elsewhere";
const FROM: &str = "elsewhere_from";

/// INP006 at the place that made the document `name` the platform's (a value, an image, a path),
/// else at the document.
pub fn finding(p: &Platform, file: FileId, name: &str, doc: &Node) -> Finding {
    let r = &p.recognize;
    let at = |path: &String| Path::parse(path).ok().and_then(|p| p.first(doc, doc));
    let images = (!r.images.is_empty()).then(|| doc.get("image")).flatten();
    let site = r
        .values
        .keys()
        .find_map(at)
        .or(images)
        .or_else(|| r.paths.iter().find_map(at));
    let loc = site.map_or(doc.loc, |n| n.loc);
    let loc = Loc { file, ..loc };
    let default_help = format!(
        "see `kvlint platforms {}` for where kvlint reads its settings",
        p.name
    );
    let (reason, help, files) = match &p.elsewhere {
        Some(e) => (
            format!("its launch is not in this file: {}", e.what),
            e.help.clone().unwrap_or(default_help),
            e.files.join("\n"),
        ),
        None => (
            "no launch site the platform describes is in this document".to_string(),
            default_help,
            String::new(),
        ),
    };
    let f = Finding::new("INP006", Some(loc))
        .var("engine", &p.title)
        .var("reason", reason)
        .var("help", help);
    if files.is_empty() {
        f
    } else {
        f.var(FILES, files).var(FROM, name)
    }
}

/// Whether `f` is such a finding whose launch is in another of the files `names` (the run's
/// inputs, or the files a script writes): the document is then only part of what was checked,
/// and the launch was read there. `by_name`: a file of the glob's last name is enough, wherever
/// it is (a script writes both to `/tmp` and copies them into the repository).
pub fn held_by(f: &Finding, names: &[&str], by_name: bool) -> bool {
    let (Some(globs), Some(from)) = (f.get(FILES), f.get(FROM)) else {
        return false;
    };
    let dir = from.rsplit_once(['/', '\\']).map_or("", |(d, _)| d);
    let last = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
    let globs: Vec<String> = match by_name {
        true => globs.lines().map(last).collect(),
        false => globs.lines().map(str::to_string).collect(),
    };
    let matchers: Vec<globset::GlobMatcher> = globs
        .iter()
        .filter_map(|g| {
            let glob = globset::GlobBuilder::new(g).literal_separator(true).build();
            glob.ok().map(|g| g.compile_matcher())
        })
        .collect();
    let relative = |name: &'_ str| -> Option<String> {
        match dir {
            "" => Some(name.to_string()),
            d => name
                .strip_prefix(d)
                .and_then(|r| r.strip_prefix(['/', '\\']))
                .map(str::to_string),
        }
    };
    names.iter().filter(|n| **n != from).any(|name| {
        let rel = match by_name {
            true => Some(last(name)),
            false => relative(name),
        };
        matchers
            .iter()
            .any(|m| rel.as_deref().is_some_and(|r| m.is_match(r)) || m.is_match(name))
    })
}

/// The most files [`beside`] reads for one document.
const MAX_BESIDE: usize = 8;

/// Files on disk beside the file of such a finding that hold its launch (a Triton `config.pbtxt`
/// checked alone, its `1/model.json` there): what the platform reads with it, so the check reads
/// them too. Only globs of a fixed depth are looked for (`*/model.json`, never `**`), and only
/// beside a file that is on disk.
pub fn beside(f: &Finding) -> Vec<std::path::PathBuf> {
    let (Some(globs), Some(from)) = (f.get(FILES), f.get(FROM)) else {
        return Vec::new();
    };
    let from = std::path::Path::new(from);
    let Some(dir) = from.parent().filter(|_| from.is_file()) else {
        return Vec::new();
    };
    // A file in the working folder: paths found stay relative, as the file's own name is.
    let here = dir.as_os_str().is_empty();
    let dir = if here { std::path::Path::new(".") } else { dir };
    let mut found = Vec::new();
    for glob in globs.lines().filter(|g| !g.contains("**")) {
        let Ok(m) = globset::GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
        else {
            continue;
        };
        let m = m.compile_matcher();
        let depth = glob.split('/').count();
        let walk = ignore::WalkBuilder::new(dir)
            .max_depth(Some(depth))
            .standard_filters(false)
            .build();
        for entry in walk
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        {
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            if m.is_match(rel) && found.len() < MAX_BESIDE {
                found.push(if here {
                    rel.to_path_buf()
                } else {
                    entry.path().to_path_buf()
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(from: &str, globs: &str) -> Finding {
        Finding::new("INP006", None)
            .var(FILES, globs)
            .var(FROM, from)
    }

    #[test]
    fn the_file_beside_the_document_holds_its_launch() {
        let f = said("repo/vllm_model/config.pbtxt", "*/model.json");
        assert!(held_by(&f, &["repo/vllm_model/1/model.json"], false));
        // Another model's model.json, or one two folders down, is not this model's.
        assert!(!held_by(&f, &["repo/other_model/1/model.json"], false));
        assert!(!held_by(&f, &["repo/vllm_model/1/x/model.json"], false));
        assert!(!held_by(&f, &["repo/vllm_model/config.pbtxt"], false));
    }

    #[test]
    fn a_file_anywhere_in_the_run_or_written_by_the_same_script() {
        let f = said("deploy/triton.yaml", "**/model.json");
        assert!(held_by(&f, &["models/llama/1/model.json"], false));
        let f = said("/tmp/config.pbtxt", "*/model.json");
        assert!(!held_by(&f, &["/tmp/model.json"], false));
        assert!(held_by(&f, &["/tmp/model.json"], true));
        assert!(!held_by(&f, &["/tmp/model.yaml"], true));
    }

    #[test]
    fn a_finding_without_files_is_never_dropped() {
        let f = Finding::new("INP006", None);
        assert!(!held_by(&f, &["repo/vllm_model/1/model.json"], false));
    }
}

//! A document a platform file recognizes that holds no launch and gave no finding: INP006 there,
//! saying where the platform keeps its launch (`[elsewhere]`), unless a file that holds it is
//! checked in the same run (a Triton `config.pbtxt` with its `1/model.json`).

use super::Path;
use crate::finding::Finding;
use crate::platform::Platform;
use crate::source::{FileId, Loc, Sources};
use crate::yaml::Node;

/// The var that carries `[elsewhere] files` (one glob a line) to [`checked_elsewhere`].
const FILES: &str = "elsewhere";

/// INP006 at the place that made the document the platform's (a value, an image, a path), else
/// at the document.
pub fn finding(p: &Platform, file: FileId, doc: &Node) -> Finding {
    let r = &p.recognize;
    let at = |path: &String| Path::parse(path).ok().and_then(|p| p.first(doc, doc));
    let images = (!r.images.is_empty()).then(|| doc.get("image")).flatten();
    let site = r.values.keys().find_map(at).or(images).or_else(|| r.paths.iter().find_map(at));
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
        f.var(FILES, files)
    }
}

/// Whether `f` is such a finding whose launch is in another file of the run: the document is
/// then only part of what was checked, and the launch was read there.
pub fn checked_elsewhere(f: &Finding, sources: &Sources) -> bool {
    let (Some(globs), Some(at)) = (f.get(FILES), f.primary) else {
        return false;
    };
    let name = &sources.get(at.file).name;
    let dir = name.rsplit_once(['/', '\\']).map_or("", |(d, _)| d);
    let matchers: Vec<globset::GlobMatcher> = globs
        .lines()
        .filter_map(|g| {
            let glob = globset::GlobBuilder::new(g).literal_separator(true).build();
            glob.ok().map(|g| g.compile_matcher())
        })
        .collect();
    sources.iter().any(|(id, other)| {
        let rel = match dir {
            "" => Some(other.name.as_str()),
            d => other
                .name
                .strip_prefix(d)
                .and_then(|r| r.strip_prefix(['/', '\\'])),
        };
        id != at.file
            && matchers
                .iter()
                .any(|m| rel.is_some_and(|r| m.is_match(r)) || m.is_match(&other.name))
    })
}

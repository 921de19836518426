//! The book (`docs/`, mdBook). Its rule pages, the rule table and the rules' entries in
//! `SUMMARY.md` are generated here from `rules/*.toml` and `fixtures/<ID>/`; a plain run fails
//! when one is stale (regenerate with `KVLINT_UPDATE_BOOK=1 cargo test --test book`). The link
//! check runs offline: every internal link names a page of the book and every `#anchor` a
//! heading of that page, with the ids mdBook gives headings.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const RULES_START: &str = "<!-- rules:start (generated from rules/*.toml by tests/book.rs) -->";
const RULES_END: &str = "<!-- rules:end -->";

fn src() -> PathBuf {
    common::root().join("docs/src")
}

/// The table of every rule, each id linking to its page.
fn rule_table() -> String {
    let mut t = String::from("| id | name | level | what it checks |\n|---|---|---|---|\n");
    for r in kvlint::rules::all() {
        // The whole description: a table cell cut at the first ". " broke sentences at "e.g. ".
        let what = kvlint::rules::description(r).replace('|', "\\|");
        t.push_str(&format!(
            "| [{id}](rules/{id}.md) | `{}` | {} | {what} |\n",
            r.name,
            r.level.name(),
            id = r.id,
        ));
    }
    t
}

/// The rules' entries in SUMMARY.md.
fn summary_entries() -> String {
    kvlint::rules::all()
        .iter()
        .map(|r| format!("  - [{} {}](rules/{}.md)\n", r.id, r.name, r.id))
        .collect()
}

/// A code fence longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

fn language(file: &str) -> &'static str {
    match file.rsplit_once('.').map(|(_, e)| e) {
        Some("sh" | "bash") => "sh",
        Some("yaml" | "yml") => "yaml",
        Some("json") => "json",
        Some("toml") => "toml",
        _ if file.contains("Dockerfile") => "dockerfile",
        _ => "text",
    }
}

/// A rule's page: `kvlint explain`'s text, then its fixtures as examples.
fn rule_page(r: &kvlint::rules::Rule) -> String {
    let mut page = kvlint::rules::explain(r);
    let dir = common::root().join("fixtures").join(&r.id);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.map(|e| e.expect("fixture entry").path()).collect())
        .unwrap_or_default();
    files.sort();
    page.push_str("\n## Fixtures\n\n");
    if files.is_empty() {
        assert_eq!(r.check, "canary", "{} has no fixtures/{}/", r.id, r.id);
        page.push_str(
            "This rule is tested against a running server by `kvlint canary`, not on files: \
             `tests/canary.rs` runs it on loopback servers that answer as the engines do.\n",
        );
        return page;
    }
    page.push_str(&format!(
        "From `fixtures/{}/`: `kvlint check` must report {} on every `fire-` file and must not on any \
         `pass-` file (`tests/rules.rs`).\n",
        r.id, r.id
    ));
    for (name, path) in files.iter().flat_map(|p| fixture_files(p)) {
        let text = std::fs::read_to_string(&path).expect("fixture text");
        let verdict = if name.starts_with("fire") {
            "fires"
        } else {
            "passes"
        };
        let f = fence(&text);
        page.push_str(&format!(
            "\n### `{name}` ({verdict})\n\n{f}{}\n{}{}{f}\n",
            language(&name),
            text,
            if text.ends_with('\n') { "" } else { "\n" }
        ));
    }
    page
}

/// A fixture's files with the names the page shows: a fixture directory (a compose project with
/// its `.env`, say) shows each file inside it as `dir/file`.
fn fixture_files(path: &Path) -> Vec<(String, PathBuf)> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    if !path.is_dir() {
        return vec![(name, path.to_path_buf())];
    }
    let mut inner: Vec<PathBuf> = std::fs::read_dir(path)
        .expect("fixture directory")
        .map(|e| e.expect("fixture entry").path())
        .collect();
    inner.sort();
    inner
        .into_iter()
        .map(|p| {
            (
                format!("{name}/{}", p.file_name().unwrap().to_string_lossy()),
                p,
            )
        })
        .collect()
}

/// `text` with the part between `start` and `end` replaced by `body`.
fn between(text: &str, start: &str, end: &str, body: &str, file: &str) -> String {
    let (head, rest) = text
        .split_once(start)
        .unwrap_or_else(|| panic!("{file} has no {start}"));
    let (_, tail) = rest
        .split_once(end)
        .unwrap_or_else(|| panic!("{file} has no {end}"));
    format!("{head}{start}\n{body}{end}{tail}")
}

/// Every generated file of the book with what it should hold.
fn generated() -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    for r in kvlint::rules::all() {
        out.insert(src().join(format!("rules/{}.md", r.id)), rule_page(r));
    }
    for (file, body) in [
        ("rules.md", rule_table()),
        ("SUMMARY.md", summary_entries()),
    ] {
        let path = src().join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        out.insert(path, between(&text, RULES_START, RULES_END, &body, file));
    }
    out
}

#[test]
fn generated_pages_are_fresh() {
    let update = std::env::var_os("KVLINT_UPDATE_BOOK").is_some();
    let pages = generated();
    let mut stale = Vec::new();
    for (path, fresh) in &pages {
        if std::fs::read_to_string(path).ok().as_ref() == Some(fresh) {
            continue;
        }
        if update {
            std::fs::write(path, fresh).expect("page written");
        } else {
            stale.push(path.display().to_string());
        }
    }
    // A page of a rule that no longer exists.
    for entry in std::fs::read_dir(src().join("rules")).expect("docs/src/rules") {
        let path = entry.expect("entry").path();
        if !pages.contains_key(&path) {
            if update {
                std::fs::remove_file(&path).expect("old page removed");
            } else {
                stale.push(format!("{} (no such rule)", path.display()));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated pages, run KVLINT_UPDATE_BOOK=1 cargo test --test book:\n{}",
        stale.join("\n")
    );
}

/// Markdown text outside fenced code blocks and inline code spans, line by line.
fn prose(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let t = line.trim_start();
        let ticks: String = t.chars().take_while(|&c| c == '`').collect();
        match &fence {
            Some(f) if ticks.len() >= f.len() && t.trim() == ticks => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => out.push(strip_code_spans(line)),
        }
    }
    out
}

fn strip_code_spans(line: &str) -> String {
    line.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join("")
}

/// The ids mdBook gives a page's headings: the heading's text, lowercased, whitespace as `-`,
/// only alphanumerics, `_` and `-` kept; a repeated id gets `-1`, `-2`, ...
fn heading_ids(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        let Some(title) = line.strip_prefix('#').filter(|_| !fence) else {
            continue;
        };
        let title = title.trim_start_matches('#').trim();
        let plain = regex_lite::Regex::new(r"\[([^\]]*)\]\([^)]*\)")
            .unwrap()
            .replace_all(title, "$1")
            .replace(['`', '*'], "");
        let id: String = plain
            .chars()
            .filter_map(|c| {
                if c.is_alphanumeric() || c == '_' || c == '-' {
                    Some(c.to_ascii_lowercase())
                } else if c.is_whitespace() {
                    Some('-')
                } else {
                    None
                }
            })
            .collect();
        let n = seen.entry(id.clone()).or_insert(0);
        ids.insert(if *n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
        *n += 1;
    }
    ids
}

fn pages() -> Vec<PathBuf> {
    let mut todo = vec![src()];
    let mut out = Vec::new();
    while let Some(p) = todo.pop() {
        if p.is_dir() {
            todo.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Pages the book renders: those SUMMARY.md lists.
fn listed() -> BTreeSet<PathBuf> {
    let summary = std::fs::read_to_string(src().join("SUMMARY.md")).expect("SUMMARY.md");
    links(&summary)
        .into_iter()
        .map(|l| src().join(l.split('#').next().unwrap_or_default()))
        .collect()
}

fn links(text: &str) -> Vec<String> {
    let re = regex_lite::Regex::new(r#"\]\(([^)\s]+)(?:\s+"[^"]*")?\)"#).unwrap();
    prose(text)
        .iter()
        .flat_map(|l| {
            re.captures_iter(l)
                .map(|c| c[1].to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            p => out.push(p),
        }
    }
    out
}

#[test]
fn every_internal_link_and_anchor_resolves() {
    let listed = listed();
    let mut dead = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let rel = page.strip_prefix(src()).unwrap().display().to_string();
        if rel != "SUMMARY.md" && !listed.contains(&page) {
            dead.push(format!("{rel}: not in SUMMARY.md, so never rendered"));
        }
        let text = std::fs::read_to_string(&page).unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                normalize(&page.parent().unwrap().join(file))
            };
            if !listed.contains(&target) {
                dead.push(format!("{rel}: {link}: no such page in SUMMARY.md"));
                continue;
            }
            if !anchor.is_empty() {
                let ids = heading_ids(&std::fs::read_to_string(&target).unwrap_or_default());
                if !ids.contains(anchor) {
                    dead.push(format!("{rel}: {link}: no heading #{anchor} there"));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} internal links");
    assert!(
        dead.is_empty(),
        "dead links in the book:\n{}",
        dead.join("\n")
    );
}

#[test]
fn mdbook_heading_ids() {
    let ids = heading_ids(
        "# Which GPU: the input's own, then this node's\n## `kvlint check`\n## Uninstall\n## Uninstall\n```\n# not a heading\n```\n",
    );
    let want = [
        "kvlint-check",
        "uninstall",
        "uninstall-1",
        "which-gpu-the-inputs-own-then-this-nodes",
    ];
    assert_eq!(ids, want.iter().map(|s| s.to_string()).collect());
}

#[test]
fn a_dead_link_is_found() {
    let text = "see [x](nowhere.md) and `[y](code.md)`\n```\n[z](fenced.md)\n```\n";
    assert_eq!(links(text), ["nowhere.md"]);
}

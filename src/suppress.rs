//! Suppressions with a recorded reason:
//!
//! - a comment `# kvlint: ignore[KV003] reason` at the end of the finding's line, or on its own
//!   line above the statement the finding is in (a shell command with its `\` continuations);
//! - a Kubernetes annotation `kvlint.io/ignore: "KV003=reason; KV001=other reason"` on the object
//!   or its pod template.
//!
//! A suppression without a reason suppresses nothing and is itself a finding (SUP001); one that
//! matches no finding is SUP002.

use crate::finding::Finding;
use crate::launch::ObjectRef;
use crate::rules;
use crate::source::{FileId, Loc, SourceFile, Sources};
use crate::yaml::{self, Node};
use regex_lite::Regex;
use std::sync::OnceLock;

/// The annotation key on Kubernetes objects and pod templates.
pub const ANNOTATION: &str = "kvlint.io/ignore";

/// What a suppression covers.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// Lines `first..=last` (1-based) of a file.
    Lines {
        file: FileId,
        first: usize,
        last: usize,
    },
    /// Findings about one Kubernetes object (namespace compared only when both sides have one).
    Object {
        file: FileId,
        kind: String,
        namespace: Option<String>,
        name: String,
    },
}

/// One suppression as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Suppression {
    /// Rule ids, or the key as written when no rule has that id or name.
    pub rules: Vec<String>,
    pub reason: Option<String>,
    /// The comment or annotation value.
    pub at: Loc,
    pub scope: Scope,
}

/// A finding a suppression hid, with the reason given.
#[derive(Debug, Clone, PartialEq)]
pub struct Suppressed {
    pub finding: Finding,
    pub reason: String,
}

/// Findings after suppressions: what is reported (including SUP findings) and what was hidden.
#[derive(Debug, Default)]
pub struct Applied {
    pub kept: Vec<Finding>,
    pub suppressed: Vec<Suppressed>,
}

fn comment_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?:^|\s)(#\s*kvlint:\s*ignore\[([^\]]*)\](.*))$").expect("valid regex")
    })
}

/// Every suppression in the loaded files: comments, and annotations in YAML manifests.
pub fn collect(sources: &Sources) -> Vec<Suppression> {
    sources
        .iter()
        .flat_map(|(id, src)| [comments(id, src), manifest_annotations(id, src)].concat())
        .collect()
}

/// `# kvlint: ignore[...] reason` comments of one file.
pub fn comments(file: FileId, src: &SourceFile) -> Vec<Suppression> {
    let text = src.text.as_str();
    // Only lines that name kvlint are read (a Helm render has a `# Source:` comment per object);
    // the line list is split only when a standalone comment needs the statement after it.
    let mut lines: Option<Vec<&str>> = None;
    let mut out = Vec::new();
    // The start of the line the search is in, and that line's 0-based number.
    let (mut offset, mut i) = (0, 0);
    // memchr's SIMD search: core's `find` (Two-Way) cost about 4 instructions a byte of a render.
    let finder = memchr::memmem::Finder::new("kvlint:");
    while let Some(hit) = finder.find(&text.as_bytes()[offset..]).map(|k| offset + k) {
        let start = text[offset..hit]
            .rfind('\n')
            .map_or(offset, |nl| offset + nl + 1);
        i += text.as_bytes()[offset..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        let end = text[hit..].find('\n').map_or(text.len(), |nl| hit + nl);
        let line = &text[start..end];
        if let Some(at) = comment_start(line).filter(|&at| line[at..].contains("kvlint:")) {
            let lines = lines.get_or_insert_with(|| text.split('\n').collect());
            out.extend(comment(file, lines, i, start, at));
        }
        if end == text.len() {
            break;
        }
        (offset, i) = (end + 1, i + 1);
    }
    out
}

/// The suppression a comment at byte `at` of line `i` (which starts at file offset `offset`)
/// writes, if it is one.
fn comment(
    file: FileId,
    lines: &[&str],
    i: usize,
    offset: usize,
    at: usize,
) -> Option<Suppression> {
    let line = lines[i];
    let c = comment_re().captures(&line[at..])?;
    let (all, keys, rest) = (c.get(1)?, c.get(2)?, c.get(3)?);
    let (start, end) = (at + all.start(), at + all.end());
    let standalone = line[..start].trim().is_empty();
    let (first, last) = if standalone {
        statement_after(lines, i)
    } else {
        (i + 1, i + 1)
    };
    Some(Suppression {
        rules: rule_ids(keys.as_str().split(',')),
        reason: reason(rest.as_str()),
        at: Loc::new(file, offset + start..offset + end),
        scope: Scope::Lines { file, first, last },
    })
}

/// Where the comment of a line starts: the first `#` at the start of the line or after a blank
/// that is not inside quotes (`--served-model-name "x # y"` holds no comment). Quotes follow
/// shell and YAML alike: `'...'` literal, `"..."` with backslash escapes.
fn comment_start(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('"') | None, '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if prev.is_whitespace() => return Some(i),
            (None, _) => {}
        }
        prev = c;
    }
    None
}

/// The 1-based lines of the statement after a standalone comment at 0-based `i`: the next line
/// that is not a comment, with its `\` continuations. Empty (first > last) at a blank line.
fn statement_after(lines: &[&str], i: usize) -> (usize, usize) {
    let mut j = i + 1;
    while lines
        .get(j)
        .is_some_and(|l| l.trim_start().starts_with('#'))
    {
        j += 1;
    }
    if lines.get(j).is_none_or(|l| l.trim().is_empty()) {
        return (j + 1, j);
    }
    let mut last = j;
    while lines
        .get(last)
        .is_some_and(|l| l.trim_end().ends_with('\\'))
        && last + 1 < lines.len()
    {
        last += 1;
    }
    (j + 1, last + 1)
}

fn rule_ids<'a>(keys: impl Iterator<Item = &'a str>) -> Vec<String> {
    keys.map(str::trim)
        .filter(|k| !k.is_empty())
        .map(|k| rules::find(k).map_or_else(|| k.to_string(), |r| r.id.clone()))
        .collect()
}

/// The reason after the rule list; one without a letter or digit (blank, zero-width, dashes)
/// is no reason.
fn reason(text: &str) -> Option<String> {
    let r = text.trim().trim_start_matches([':', '-', '—', ' ']).trim();
    r.chars().any(char::is_alphanumeric).then(|| r.to_string())
}

/// Suppressions from an annotation value (`KV003=reason; KV001,KV004=reason`) on an object.
/// The Kubernetes extractor can call this with the objects it reads; [`collect`] also finds the
/// annotations of plain manifests itself.
pub fn annotation(object: &ObjectRef, value: &str, at: Loc) -> Vec<Suppression> {
    value
        .split([';', '\n'])
        .filter(|item| !item.trim().is_empty())
        .map(|item| {
            let (keys, why) = item.split_once('=').unwrap_or((item, ""));
            Suppression {
                rules: rule_ids(keys.split(',')),
                reason: reason(why),
                at,
                scope: Scope::Object {
                    file: at.file,
                    kind: object.kind.clone(),
                    namespace: object.namespace.clone(),
                    name: object.name.clone(),
                },
            }
        })
        .collect()
}

/// Annotations of the Kubernetes objects in a YAML file: on the object and on its pod template.
pub fn manifest_annotations(file: FileId, src: &SourceFile) -> Vec<Suppression> {
    if !src.text.contains(ANNOTATION) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for doc in yaml::documents(file, src).flatten() {
        let (Some(kind), Some(name)) =
            (str_at(&doc, &["kind"]), str_at(&doc, &["metadata", "name"]))
        else {
            continue;
        };
        let object = ObjectRef {
            kind: kind.to_string(),
            namespace: str_at(&doc, &["metadata", "namespace"]).map(str::to_string),
            name: name.to_string(),
            container: None,
        };
        for (value, at) in annotations(&doc) {
            out.extend(annotation(&object, value, at));
        }
    }
    out
}

/// Every `metadata.annotations["kvlint.io/ignore"]` in an object: its own and those of the pod
/// templates nested anywhere in its spec (Deployment, LeaderWorkerSet, CRDs).
fn annotations(node: &Node) -> Vec<(&str, Loc)> {
    let mut out = Vec::new();
    if let Some(v) = node_at(node, &["metadata", "annotations", ANNOTATION]) {
        out.push((v.as_str().unwrap_or(""), v.loc));
    }
    let children: Vec<&Node> = match &node.value {
        yaml::Value::Map(entries) => entries
            .iter()
            .filter(|(k, _)| k.as_str() != Some("metadata"))
            .map(|(_, v)| v)
            .collect(),
        yaml::Value::Seq(items) => items.iter().collect(),
        _ => Vec::new(),
    };
    out.extend(children.into_iter().flat_map(annotations));
    out
}

fn node_at<'a>(node: &'a Node, path: &[&str]) -> Option<&'a Node> {
    path.iter().try_fold(node, |n, k| n.get(k))
}

fn str_at<'a>(node: &'a Node, path: &[&str]) -> Option<&'a str> {
    node_at(node, path).and_then(Node::as_str)
}

impl Suppression {
    fn covers(&self, f: &Finding, sources: &Sources) -> bool {
        if !self.rules.iter().any(|r| r.as_str() == f.rule) {
            return false;
        }
        match &self.scope {
            Scope::Lines { file, first, last } => f.primary.is_some_and(|l| {
                let line = sources.position(l).line;
                l.file == *file && (*first..=*last).contains(&line)
            }),
            Scope::Object {
                file,
                kind,
                namespace,
                name,
            } => f.object.as_ref().is_some_and(|o| {
                let same_ns = match (&o.namespace, namespace) {
                    (Some(a), Some(b)) => a == b,
                    _ => true,
                };
                o.kind == *kind
                    && o.name == *name
                    && same_ns
                    && f.primary.is_none_or(|l| l.file == *file)
            }),
        }
    }
}

/// Applies suppressions to findings. `visible` says whether a finding is reported at all (a rule
/// configured to `allow` is not, so it neither uses nor needs a suppression).
pub fn apply(
    findings: Vec<Finding>,
    suppressions: &[Suppression],
    sources: &Sources,
    visible: impl Fn(&Finding) -> bool,
) -> Applied {
    let mut used = vec![false; suppressions.len()];
    let mut out = Applied::default();
    // Suppressions with a reason by rule id, in order: a finding meets only its rule's.
    let mut by_rule: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, s) in suppressions.iter().enumerate() {
        if s.reason.is_some() {
            for r in &s.rules {
                by_rule.entry(r.as_str()).or_default().push(i);
            }
        }
    }
    for f in findings {
        let candidates = by_rule.get(f.rule).map_or(&[][..], Vec::as_slice);
        let hit = visible(&f)
            .then(|| {
                candidates
                    .iter()
                    .copied()
                    .find(|&i| suppressions[i].covers(&f, sources))
            })
            .flatten();
        match hit {
            Some(i) => {
                used[i] = true;
                let reason = suppressions[i].reason.clone().unwrap_or_default();
                out.suppressed.push(Suppressed { finding: f, reason });
            }
            None => out.kept.push(f),
        }
    }
    for (s, used) in suppressions.iter().zip(used) {
        let listed = s.rules.join(",");
        if s.reason.is_none() {
            out.kept.push(
                Finding::new("SUP001", Some(s.at))
                    .var("rules", listed)
                    .label("no reason given"),
            );
        } else if !used {
            let unknown: Vec<&str> = s
                .rules
                .iter()
                .filter(|r| rules::find(r).is_none())
                .map(String::as_str)
                .collect();
            let detail = if unknown.is_empty() {
                String::new()
            } else {
                format!(" (no rule is called {})", unknown.join(", "))
            };
            out.kept.push(
                Finding::new("SUP002", Some(s.at))
                    .var("rules", listed)
                    .var("detail", detail)
                    .label("suppresses nothing"),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(text: &str) -> Sources {
        let mut s = Sources::default();
        s.add("x.sh", text);
        s
    }

    #[test]
    fn a_standalone_comment_covers_the_whole_continued_command() {
        let s = sources(
            "# kvlint: ignore[KV003] measured at 2.1x\nsglang \\\n  --a 1 \\\n  --b 2\necho\n",
        );
        let sup = comments(FileId(0), s.get(FileId(0)));
        assert_eq!(sup.len(), 1);
        assert_eq!(sup[0].rules, ["KV003"]);
        assert_eq!(sup[0].reason.as_deref(), Some("measured at 2.1x"));
        assert_eq!(
            sup[0].scope,
            Scope::Lines {
                file: FileId(0),
                first: 2,
                last: 4
            }
        );
    }

    #[test]
    fn a_trailing_comment_covers_its_line_and_names_resolve_to_ids() {
        let s = sources(
            "  - --context-length=8192  # kvlint: ignore[pool-below-context, KV004] -- ok\n",
        );
        let sup = comments(FileId(0), s.get(FileId(0)));
        assert_eq!(sup[0].rules, ["KV001", "KV004"]);
        assert_eq!(sup[0].reason.as_deref(), Some("ok"));
        assert_eq!(
            sup[0].scope,
            Scope::Lines {
                file: FileId(0),
                first: 1,
                last: 1
            }
        );
    }

    #[test]
    fn comments_are_found_on_any_line_and_only_outside_quotes() {
        let text = "a: 1\nb: \"x # kvlint: ignore[KV001] quoted\"\n\n\
                    # kvlint: ignore[KV003] kvlint: twice\nsglang --tp 2\n\
                    c: 3 # kvlint: ignore[KV004] last";
        let s = sources(text);
        let sup = comments(FileId(0), s.get(FileId(0)));
        let found: Vec<(&str, &[String], Scope)> = sup
            .iter()
            .map(|x| (s.text(x.at), x.rules.as_slice(), x.scope.clone()))
            .collect();
        let lines = |first, last| Scope::Lines {
            file: FileId(0),
            first,
            last,
        };
        assert_eq!(
            found,
            [
                (
                    "# kvlint: ignore[KV003] kvlint: twice",
                    &["KV003".to_string()][..],
                    lines(5, 5)
                ),
                (
                    "# kvlint: ignore[KV004] last",
                    &["KV004".to_string()][..],
                    lines(6, 6)
                ),
            ]
        );
    }

    #[test]
    fn no_reason_is_sup001_and_an_unused_one_is_sup002() {
        let s = sources("x # kvlint: ignore[KV001]\ny # kvlint: ignore[KV003] because\n");
        let sup = comments(FileId(0), s.get(FileId(0)));
        let finding = Finding::new("KV001", Some(Loc::new(FileId(0), 0..1)));
        let applied = apply(vec![finding], &sup, &s, |_| true);
        let ids: Vec<&str> = applied.kept.iter().map(|f| f.rule).collect();
        assert_eq!(ids, ["KV001", "SUP001", "SUP002"]);
        assert!(applied.suppressed.is_empty());
    }

    #[test]
    fn annotations_match_the_object() {
        let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: prefill\n  annotations:\n    kvlint.io/ignore: \"KV003=measured; KV004\"\n";
        let s = sources(yaml);
        let sup = manifest_annotations(FileId(0), s.get(FileId(0)));
        assert_eq!(sup.len(), 2);
        assert_eq!(sup[1].reason, None);
        let mut f = Finding::new("KV003", Some(Loc::new(FileId(0), 0..1)));
        f.object = Some(ObjectRef {
            kind: "Deployment".into(),
            namespace: Some("ml".into()),
            name: "prefill".into(),
            container: None,
        });
        let applied = apply(vec![f], &sup, &s, |_| true);
        assert_eq!(applied.suppressed.len(), 1);
        assert_eq!(applied.suppressed[0].reason, "measured");
        assert_eq!(
            applied.kept.iter().map(|f| f.rule).collect::<Vec<_>>(),
            ["SUP001"]
        );
    }
}

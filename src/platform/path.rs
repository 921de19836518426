//! Key paths in platform files: `applications[].args.llm_configs[]`, `engine_kwargs.max_model_len`,
//! `/resources.accelerators`. Steps are separated by `.`; `key[]` is each item of the list at
//! `key`, `key[2]` one item, `key[name=main]` each item whose `name` is `main`, `*` each value of a
//! mapping; a leading `/` starts at the document instead of the launch site. A key that holds `.`,
//! `[`, `*` or `/` is written in double quotes (`required_labels."ray.io/accelerator-type"`), with
//! `\"` and `\\` for a quote and a backslash in it.

use crate::yaml::{Node, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    pub from_root: bool,
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Each,
    Item(usize),
    /// Items whose key holds the value (`containers[name=main]`).
    Where(String, String),
    Values,
}

/// One `.`-separated step as written: its key, whether it was quoted, and what its `[...]` holds.
struct Part {
    key: String,
    quoted: bool,
    index: Option<String>,
}

impl Path {
    pub fn parse(text: &str) -> Result<Path, String> {
        let (from_root, rest) = match text.strip_prefix('/') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let mut steps = Vec::new();
        for part in parts(rest)? {
            if !part.quoted && part.key == "*" && part.index.is_none() {
                steps.push(Step::Values);
                continue;
            }
            let plain_ok = part.quoted || !part.key.contains([']', '*', ' ']);
            if part.key.is_empty() || !plain_ok {
                return Err(format!("`{}` is not a key", part.key));
            }
            steps.push(Step::Key(part.key));
            match part.index.as_deref() {
                None => {}
                Some("") => steps.push(Step::Each),
                Some(w) if w.contains('=') => {
                    let (k, v) = w.split_once('=').unwrap_or_default();
                    steps.push(Step::Where(k.to_string(), v.to_string()))
                }
                Some(n) => steps.push(Step::Item(n.parse().map_err(|_| "index is not a number")?)),
            }
        }
        Ok(Path { from_root, steps })
    }

    /// Every node the path reaches from `site` (or `root` when it starts with `/`), in order.
    pub fn all<'n>(&self, root: &'n Node, site: &'n Node) -> Vec<&'n Node> {
        let mut at = vec![if self.from_root { root } else { site }];
        for step in &self.steps {
            at = at
                .into_iter()
                .flat_map(|n| -> Vec<&'n Node> {
                    match (step, &n.value) {
                        (Step::Key(k), _) => n.get(k).into_iter().collect(),
                        (Step::Each, Value::Seq(items)) => items.iter().collect(),
                        (Step::Item(i), Value::Seq(items)) => items.get(*i).into_iter().collect(),
                        (Step::Where(k, v), Value::Seq(items)) => items
                            .iter()
                            .filter(|i| i.get(k).and_then(Node::scalar_text).as_deref() == Some(v))
                            .collect(),
                        (Step::Values, Value::Map(e)) => e.iter().map(|(_, v)| v).collect(),
                        _ => Vec::new(),
                    }
                })
                .collect();
        }
        at
    }

    /// Every node the path reaches, each with its key when the last step is `*` (a map of named
    /// services).
    pub fn all_keyed<'n>(
        &self,
        root: &'n Node,
        site: &'n Node,
    ) -> Vec<(Option<&'n Node>, &'n Node)> {
        let Some((Step::Values, head)) = self.steps.split_last() else {
            return self
                .all(root, site)
                .into_iter()
                .map(|n| (None, n))
                .collect();
        };
        let parent = Path {
            from_root: self.from_root,
            steps: head.to_vec(),
        };
        let maps = parent.all(root, site).into_iter();
        maps.flat_map(|n| match &n.value {
            Value::Map(e) => e.iter().map(|(k, v)| (Some(k), v)).collect(),
            _ => Vec::new(),
        })
        .collect()
    }

    /// The first node the path reaches.
    pub fn first<'n>(&self, root: &'n Node, site: &'n Node) -> Option<&'n Node> {
        self.all(root, site).into_iter().next()
    }
}

/// The first node any of `paths` reaches (paths that do not parse reach nothing: the platform
/// tests refuse them).
pub fn first_of<'n>(paths: &[String], root: &'n Node, site: &'n Node) -> Option<&'n Node> {
    paths
        .iter()
        .filter_map(|p| Path::parse(p.trim()).ok())
        .find_map(|p| p.first(root, site))
}

/// The steps of a path as written, split at each `.` outside quotes; empty steps (`a..b`, a
/// trailing `.`) are dropped, as they always were.
fn parts(text: &str) -> Result<Vec<Part>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while chars.peek().is_some() {
        let quoted = chars.next_if_eq(&'"').is_some();
        let key = match quoted {
            true => quoted_key(&mut chars)?,
            false => {
                let mut key = String::new();
                while let Some(c) = chars.next_if(|c| !matches!(c, '.' | '[')) {
                    if c == '"' {
                        return Err(
                            "a quote inside a key; quote the whole key (`a.\"b.c\"`)".into()
                        );
                    }
                    key.push(c);
                }
                key
            }
        };
        let index = match chars.next_if_eq(&'[') {
            Some(_) => {
                let mut inner = String::new();
                let closed = chars.by_ref().any(|c| {
                    c == ']' || {
                        inner.push(c);
                        false
                    }
                });
                if !closed {
                    return Err("`[` without `]`".into());
                }
                Some(inner)
            }
            None => None,
        };
        match chars.next() {
            None | Some('.') => {}
            Some(c) => return Err(format!("`{c}` after a step; steps are separated by `.`")),
        }
        if quoted || !key.is_empty() || index.is_some() {
            out.push(Part { key, quoted, index });
        }
    }
    Ok(out)
}

/// A quoted key's text, after its opening quote, up to and without its closing quote.
fn quoted_key(chars: &mut std::iter::Peekable<std::str::Chars>) -> Result<String, String> {
    let mut key = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' if key.is_empty() => return Err("an empty quoted key".into()),
            '"' => return Ok(key),
            '\\' => match chars.next() {
                Some(e @ ('"' | '\\')) => key.push(e),
                _ => return Err("`\\` in a quoted key escapes only `\"` and `\\`".into()),
            },
            c => key.push(c),
        }
    }
    Err("a quoted key is not closed".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    #[test]
    fn paths_reach_items_values_and_the_root() {
        let mut s = Sources::default();
        let f = s.add(
            "c.yaml",
            "apps:\n  - args: {cfgs: [{m: a}, {m: b}]}\n  - args: {cfgs: [{m: c}]}\nroles: {p: {size: 1}, d: {size: 2}}\n",
        );
        let doc = crate::yaml::parse_document(f, s.get(f)).expect("valid YAML");
        let texts = |p: &str, site: &Node| -> Vec<String> {
            let path = Path::parse(p).expect("path");
            path.all(&doc, site)
                .iter()
                .filter_map(|n| n.scalar_text())
                .collect()
        };
        assert_eq!(texts("apps[].args.cfgs[].m", &doc), ["a", "b", "c"]);
        assert_eq!(texts("apps[1].args.cfgs[0].m", &doc), ["c"]);
        assert_eq!(texts("roles.*.size", &doc), ["1", "2"]);
        assert_eq!(texts("apps[].args.cfgs[m=b].m", &doc), ["b"]);
        let keyed = Path::parse("roles.*").expect("path").all_keyed(&doc, &doc);
        let keys: Vec<_> = keyed
            .iter()
            .filter_map(|(k, _)| (*k)?.scalar_text())
            .collect();
        assert_eq!(keys, ["p", "d"]);
        let site = doc.get("roles").expect("roles");
        assert_eq!(texts("/apps[0].args.cfgs[1].m", site), ["b"]);
        assert!(Path::parse("a[x]").is_err());
        assert!(Path::parse("a[").is_err());
    }

    #[test]
    fn a_quoted_key_holds_dots_and_slashes() {
        let mut s = Sources::default();
        let f = s.add(
            "c.yaml",
            "workers:\n  - labels: {ray.io/accelerator-type: H100, ray: {io/accelerator-type: nested}}\n\
             \x20 - labels: {ray.io/accelerator-type: A100}\nodd: {'a\"b': 1, 'c\\d': 2, '*': 3}\n",
        );
        let doc = crate::yaml::parse_document(f, s.get(f)).expect("valid YAML");
        let texts = |p: &str| -> Vec<String> {
            let path = Path::parse(p).unwrap_or_else(|e| panic!("{p}: {e}"));
            path.all(&doc, &doc)
                .iter()
                .filter_map(|n| n.scalar_text())
                .collect()
        };
        assert_eq!(
            texts(r#"workers[].labels."ray.io/accelerator-type""#),
            ["H100", "A100"]
        );
        assert_eq!(
            texts(r#"/workers[1]."labels"."ray.io/accelerator-type""#),
            ["A100"]
        );
        // Unquoted, the dots are steps: another key.
        assert_eq!(
            texts("workers[].labels.ray.io/accelerator-type"),
            ["nested"]
        );
        assert_eq!(texts(r#"odd."a\"b""#), ["1"]);
        assert_eq!(texts(r#"odd."c\\d""#), ["2"]);
        // A quoted `*` is the key `*`, not each value.
        assert_eq!(texts(r#"odd."*""#), ["3"]);
        assert_eq!(texts("odd.*").len(), 3);
    }

    #[test]
    fn a_malformed_quote_is_a_clear_error() {
        let err = |p: &str| Path::parse(p).expect_err(p);
        assert!(err(r#"labels."ray.io/accelerator-type"#).contains("not closed"));
        assert!(err(r#"labels.ray"io""#).contains("quote the whole key"));
        assert!(err(r#"labels."ray.io"x"#).contains("`x` after a step"));
        assert!(err(r#"labels."""#).contains("empty quoted key"));
        assert!(err(r#"labels."a\nb""#).contains("escapes only"));
        assert!(err(r#"labels."a\"#).contains("escapes only"));
        assert!(err(r#"labels."ray.io"[0"#).contains("without `]`"));
        assert!(err(r#"a[0]b"#).contains("`b` after a step"));
        assert!(err(r#"""#).contains("not closed"));
    }
}

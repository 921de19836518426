//! Key paths in platform files: `applications[].args.llm_configs[]`, `engine_kwargs.max_model_len`,
//! `/resources.accelerators`. Steps are separated by `.`; `key[]` is each item of the list at
//! `key`, `key[2]` one item, `key[name=main]` each item whose `name` is `main`, `*` each value of a
//! mapping; a leading `/` starts at the document instead of the launch site.

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

impl Path {
    pub fn parse(text: &str) -> Result<Path, String> {
        let (from_root, rest) = match text.strip_prefix('/') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let mut steps = Vec::new();
        for part in rest.split('.').filter(|p| !p.is_empty()) {
            if part == "*" {
                steps.push(Step::Values);
                continue;
            }
            let (key, index) = match part.split_once('[') {
                Some((k, i)) => (k, Some(i.strip_suffix(']').ok_or("`[` without `]`")?)),
                None => (part, None),
            };
            if key.is_empty() || key.contains([']', '*', ' ']) {
                return Err(format!("`{part}` is not a key"));
            }
            steps.push(Step::Key(key.to_string()));
            match index {
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
}

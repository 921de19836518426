//! A command whose `key=value` words are mostly one engine's options (`serve run app:build
//! model=M tensor-parallel-size=2`: an application that hands its arguments to the engine's own
//! parser): read as that engine's settings, recognized by their keys, as an option map found in
//! any other file is (`option_map::by_shape`).

use super::expand::Field;
use super::walk::Walker;
use crate::source::{Loc, SourceFile};
use crate::yaml::{Node, Value};

impl Walker {
    /// The launch the `key=value` words of a command that is no launch itself stand for, if
    /// their keys say which engine they configure.
    pub(super) fn options_by_keys(&mut self, fields: &[Field]) {
        let node = |t: &str, loc: Loc| Node {
            value: Value::Str(t.to_string()),
            loc,
        };
        // Each value with the variables left in it, by where it is written.
        let mut unknown: Vec<(Loc, Vec<String>)> = Vec::new();
        let pairs: Vec<(Node, Node)> = fields
            .iter()
            .filter_map(|f| {
                let (k, v) = f.as_str().split_once('=')?;
                let name =
                    |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_".contains(c);
                if k.is_empty() || k.starts_with('-') || !k.chars().all(name) {
                    return None;
                }
                // The key's span and the value's, split at the first `=` of the written word.
                let cut = (f.loc.start + k.len() + 1).min(f.loc.end);
                let key_at = Loc { end: cut, ..f.loc };
                let value_at = Loc {
                    start: cut,
                    ..f.loc
                };
                if !f.names.is_empty() {
                    unknown.push((value_at, f.names.iter().map(|(_, n)| n.clone()).collect()));
                }
                Some((node(k, key_at), node(v, value_at)))
            })
            .collect();
        let (Some(first), Some(last)) = (pairs.first(), pairs.last()) else {
            return;
        };
        if pairs.len() < 2 {
            return;
        }
        let doc = Node {
            loc: first.0.loc.join(last.1.loc),
            value: Value::Map(pairs),
        };
        // No file text stands behind these nodes: their words are read from the values.
        let src = SourceFile::new("", "");
        let mut out = crate::extract::option_map::by_shape(self.scope.file, &src, &doc);
        for a in out.launches.iter_mut().flat_map(|l| l.args.iter_mut()) {
            if let Some((_, names)) = unknown.iter().find(|(at, _)| *at == a.loc) {
                a.unresolved.clone_from(names);
            }
        }
        self.launches.extend(out.launches);
    }
}

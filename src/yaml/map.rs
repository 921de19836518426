//! A map being built: its entries, the identities of its keys (serde-saphyr's
//! `KeyFingerprint`, `de/key_nodes.rs`) and its merge keys (`<<`, merged when it ends).

use super::budget::Failure;
use super::{Node, Value};
use crate::source::Loc;
use std::collections::HashSet;

/// Maps with more keys than this find repeated keys through a hash set.
const LINEAR_KEY_SEARCH: usize = 16;

#[derive(Default)]
pub(super) struct MapState {
    entries: Vec<(Node, Node)>,
    /// The key read, waiting for its value, and whether it is a merge key (`<<`).
    pub key: Option<(Node, bool)>,
    /// Values of `<<` keys with where they are used (an alias copy keeps its own locations
    /// until it is merged, so that its keys keep their written text).
    merges: Vec<(Node, Loc)>,
    /// Identities of the keys, once the map has more than `LINEAR_KEY_SEARCH` of them.
    index: Option<HashSet<Owned>>,
}

/// What makes two keys the same one: an integer by its value; a string, or a plain boolean
/// or float by its text, as a string (plain `true` and quoted `"true"` are one key); a null by
/// its text (`~` and `null` are two). Sequence and map keys have none: they are never compared
/// (kvlint reads none).
#[derive(PartialEq, Eq, Hash)]
pub(super) enum Ident<'a> {
    Int(i64),
    Str(&'a str),
    Null(&'a str),
}

/// `Ident` owned, for the index of a large map.
#[derive(PartialEq, Eq, Hash)]
enum Owned {
    Int(i64),
    Str(String),
    Null(String),
}

impl Ident<'_> {
    fn owned(&self) -> Owned {
        match self {
            Ident::Int(i) => Owned::Int(*i),
            Ident::Str(s) => Owned::Str(s.to_string()),
            Ident::Null(s) => Owned::Null(s.to_string()),
        }
    }
}

/// The identity of a key of the document `text` that starts at `base`: what is written at its
/// location, for a plain scalar, is the scalar as written.
pub(super) fn ident<'a>(key: &'a Node, text: &'a str, base: usize) -> Option<Ident<'a>> {
    let written = || {
        key.loc
            .start
            .checked_sub(base)
            .and_then(|s| text.get(s..key.loc.end - base))
            .unwrap_or("")
    };
    Some(match &key.value {
        Value::Int(i) => Ident::Int(*i),
        Value::Str(s) => Ident::Str(s),
        Value::Null => Ident::Null(written()),
        Value::Bool(_) | Value::Float(_) => Ident::Str(written()),
        Value::Seq(_) | Value::Map(_) => return None,
    })
}

impl MapState {
    /// Whether the map has a key with this identity.
    pub(super) fn has(&self, id: &Ident, text: &str, base: usize) -> bool {
        match &self.index {
            Some(index) => index.contains(&id.owned()),
            None => self
                .entries
                .iter()
                .any(|(k, _)| ident(k, text, base).as_ref() == Some(id)),
        }
    }

    /// The value for the key waiting for it.
    pub(super) fn value(&mut self, value: Node, text: &str, base: usize) {
        match self.key.take() {
            Some((_, true)) => {
                let loc = value.loc;
                self.merges.push((value, loc));
            }
            Some((key, false)) => self.add(key, value, text, base),
            None => {}
        }
    }

    /// A merge key's value copied through an alias: its entries will point at `used_at`.
    pub(super) fn merge_copy(&mut self, value: Node, used_at: Loc) {
        self.key = None;
        self.merges.push((value, used_at));
    }

    fn add(&mut self, key: Node, value: Node, text: &str, base: usize) {
        if self.index.is_none() && self.entries.len() >= LINEAR_KEY_SEARCH {
            let index = self
                .entries
                .iter()
                .filter_map(|(k, _)| Some(ident(k, text, base)?.owned()))
                .collect();
            self.index = Some(index);
        }
        if let Some(index) = &mut self.index {
            if let Some(id) = ident(&key, text, base) {
                index.insert(id.owned());
            }
        }
        self.entries.push((key, value));
    }

    /// The entries of the map: its own, then the merged ones whose keys it lacks, each
    /// pointing at where the map it comes from is used (serde-saphyr's reference location).
    pub(super) fn finish(mut self, text: &str, base: usize) -> Result<Vec<(Node, Node)>, Failure> {
        for (merged, used_at) in std::mem::take(&mut self.merges) {
            let refused = || {
                let message = "YAML merge value must be mapping or sequence of mappings";
                Failure::new(message, used_at.start - base)
            };
            let sources = match merged.value {
                Value::Map(entries) => vec![(entries, used_at)],
                Value::Seq(items) => items
                    .into_iter()
                    .map(|item| match item.value {
                        Value::Map(entries) => Ok((entries, item.loc)),
                        _ => Err(refused()),
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(refused()),
            };
            for (entries, loc) in sources {
                for (mut key, mut value) in entries {
                    let known = ident(&key, text, base).is_some_and(|id| self.has(&id, text, base));
                    if !known {
                        relocate(&mut key, loc);
                        relocate(&mut value, loc);
                        self.add(key, value, text, base);
                    }
                }
            }
        }
        Ok(fit(self.entries))
    }
}

/// Points a copied node and all it holds at `loc`.
pub(super) fn relocate(node: &mut Node, loc: Loc) {
    let mut todo = vec![node];
    while let Some(n) = todo.pop() {
        n.loc = loc;
        match &mut n.value {
            Value::Seq(items) => todo.extend(items.iter_mut()),
            Value::Map(entries) => {
                for (k, v) in entries.iter_mut() {
                    todo.push(k);
                    todo.push(v);
                }
            }
            _ => {}
        }
    }
}

/// The items without spare room when that is large; small lists keep it, as trimming each of
/// them leaves the heap in holes.
pub(super) fn fit<T>(mut v: Vec<T>) -> Vec<T> {
    if (v.capacity() - v.len()) * std::mem::size_of::<T>() > 64 * 1024 {
        v.shrink_to_fit();
    }
    v
}

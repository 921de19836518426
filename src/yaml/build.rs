//! The tree built straight from granit-parser's events, with an explicit stack (no recursion,
//! so nesting cannot overflow the thread's stack) and serde-saphyr 2.2's default budget
//! (`de/budget.rs` `Budget::default`, `de/options.rs` `AliasLimits::default`), which kvlint
//! read YAML through before: aliases expand to copies, bounded in total.

use super::scalar::{self, Kind};
use super::{Node, Value};
use crate::source::{FileId, Loc};
use granit_parser::{ErrorKind, Event, Options, Parser, ScalarStyle, ScanError, Span, Tag};
use std::collections::HashMap;

/// Deepest nesting of sequences and maps (`Budget::max_depth`).
const MAX_DEPTH: usize = 64;
/// Parser events per document (`Budget::max_events`).
const MAX_EVENTS: usize = 1_000_000;
/// Scalars, sequences and maps per document, not counting alias copies (`Budget::max_nodes`).
const MAX_NODES: usize = 250_000;
/// Alias references (`Budget::max_aliases`) and anchors (`Budget::max_anchors`) per document.
const MAX_ALIASES: usize = 50_000;
const MAX_ANCHORS: usize = 50_000;
/// Events copied through aliases, nested copies included (`AliasLimits::max_total_replayed_events`):
/// this is what refuses an alias bomb before it is expanded.
const MAX_REPLAYED_EVENTS: usize = 1_000_000;
/// Bytes of scalar text per document (`Budget::max_total_scalar_bytes`).
const MAX_SCALAR_BYTES: usize = 64 * 1024 * 1024;
/// Merge keys per document (`Budget::max_merge_keys`).
const MAX_MERGE_KEYS: usize = 10_000;
/// From this many aliases on, a document needs an anchor for every ten of them
/// (`Budget::alias_anchor_min_aliases`, `alias_anchor_ratio_multiplier`).
const RATIO_MIN_ALIASES: usize = 100;
const RATIO_MULTIPLIER: usize = 10;
/// Maps with more keys than this find repeated keys through a hash map.
const LINEAR_KEY_SEARCH: usize = 16;

/// Where and why a document could not be read; `at` is a byte offset in the document.
pub(super) struct Failure {
    pub message: String,
    pub at: usize,
}

impl Failure {
    fn new(message: impl Into<String>, at: usize) -> Failure {
        Failure {
            message: message.into(),
            at,
        }
    }
    /// serde-saphyr's text for a budget breach (`budget breached: {BudgetBreach:?}`).
    fn budget(breach: String, at: usize) -> Failure {
        Failure::new(format!("budget breached: {breach}"), at)
    }
}

/// How a repeated key is treated.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Duplicates {
    Error,
    /// PyYAML's reading of engine `--config` files: the last value wins, in its own place.
    LastWins,
}

/// The tree of the one document in `text`; locations are `base` + offsets in `text`.
pub(super) fn build(
    file: FileId,
    text: &str,
    base: usize,
    duplicates: Duplicates,
) -> Result<Node, Failure> {
    let mut options = Options::default();
    options.emit_comments = false;
    let mut b = Builder {
        file,
        text,
        base,
        duplicates,
        stack: Vec::new(),
        anchors: Vec::new(),
        root: None,
        produced: 0,
        documents: 0,
        count: Counts::default(),
        last_at: 0,
    };
    let mut parser = Parser::new_from_str_with_options(text, options);
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(scan_failure)?;
        b.event(event, span)?;
    }
    b.finish()
}

fn scan_failure(e: ScanError) -> Failure {
    let at = e.marker().byte_offset().unwrap_or(0);
    match e.kind() {
        // serde-saphyr's own words for it (`Error::UnknownAnchor`).
        ErrorKind::UnknownAnchor => Failure::new("alias references unknown anchor", at),
        _ => Failure::new(e.info(), at),
    }
}

/// A tag on the wrong kind of node (`Error::UnsupportedTag`).
fn check_tag(
    tag: Option<&Tag>,
    kind: Kind,
    collection: Option<Kind>,
    at: usize,
) -> Result<(), Failure> {
    if kind.fits(collection) {
        return Ok(());
    }
    let (handle, suffix) = tag.map_or(("", ""), Tag::original_parts);
    Err(Failure::new(
        format!("unsupported tag `{handle}{suffix}`"),
        at,
    ))
}

/// A finished anchored node, with what a copy of it through an alias costs.
struct Anchored {
    node: Node,
    /// Events a replay of it counts (a scalar 1, a collection 2 plus its children's).
    events: usize,
    /// Nesting it adds (a scalar 0, a map of scalars 1).
    height: usize,
    /// Scalars, sequences and maps in it.
    nodes: usize,
}

enum Open {
    Seq(Vec<Node>),
    Map(MapState),
}

struct Frame {
    open: Open,
    loc: Loc,
    anchor: usize,
    /// `Builder::produced` and the node count when it opened, for the anchor's replay cost.
    produced_at_start: usize,
    nodes_at_start: usize,
    /// Nesting of its deepest child.
    height: usize,
}

#[derive(Default)]
struct MapState {
    entries: Vec<(Node, Node)>,
    ids: Vec<KeyId>,
    /// The key read, waiting for its value, and whether it is a merge key (`<<`).
    key: Option<(Node, KeyId, bool)>,
    /// Values of `<<` keys, merged when the map ends, with where they are used (an alias copy
    /// keeps its own locations until then, so that its keys keep their written text).
    merges: Vec<(Node, Loc)>,
    /// Key identities to entry positions, once the map has more than `LINEAR_KEY_SEARCH` keys.
    index: Option<HashMap<Hashed, usize>>,
}

/// serde-saphyr's per-document budget counters.
#[derive(Default)]
struct Counts {
    events: usize,
    nodes: usize,
    aliases: usize,
    anchors: usize,
    replayed: usize,
    scalar_bytes: usize,
    merge_keys: usize,
}

struct Builder<'a> {
    file: FileId,
    text: &'a str,
    base: usize,
    duplicates: Duplicates,
    stack: Vec<Frame>,
    anchors: Vec<Option<Anchored>>,
    root: Option<Node>,
    /// Nodes' events produced so far, alias copies included.
    produced: usize,
    /// Documents begun: the text holds one.
    documents: usize,
    count: Counts,
    /// Offset of the last event, where a failure found at the end points.
    last_at: usize,
}

impl Builder<'_> {
    fn event(&mut self, event: Event, span: Span) -> Result<(), Failure> {
        let range = span.byte_range().unwrap_or_default();
        let at = range.start.min(self.text.len());
        let len = range.end.saturating_sub(range.start);
        self.last_at = at;
        self.count_event(at)?;
        let node_event = matches!(
            event,
            Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_)
        );
        if node_event && self.documents > 1 {
            // Found at the second document's first node, as serde-saphyr found it.
            let message = "multiple YAML documents detected; use from_str_multiple or from_str_multiple_with_options";
            return Err(Failure::new(message, at));
        }
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                self.scalar(&text, style, anchor, tag.as_deref(), at, len)
            }
            Event::SequenceStart(_, anchor, tag) => {
                check_tag(
                    tag.as_deref(),
                    Kind::of(tag.as_deref()),
                    Some(Kind::Seq),
                    at,
                )?;
                self.open(Open::Seq(Vec::new()), anchor, tag.as_deref(), at, len)
            }
            Event::MappingStart(_, anchor, tag) => {
                check_tag(
                    tag.as_deref(),
                    Kind::of(tag.as_deref()),
                    Some(Kind::Map),
                    at,
                )?;
                let map = MapState::default();
                self.open(Open::Map(map), anchor, tag.as_deref(), at, len)
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(at),
            Event::Alias(id) => self.alias(id, at, len),
            Event::DocumentStart(..) => {
                self.documents += 1;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Every parser event counts, as serde-saphyr's budget observed them.
    fn count_event(&mut self, at: usize) -> Result<(), Failure> {
        self.count.events += 1;
        if self.count.events > MAX_EVENTS {
            let events = self.count.events;
            return Err(Failure::budget(
                format!("Events {{ events: {events} }}"),
                at,
            ));
        }
        Ok(())
    }

    fn count_node(&mut self, anchor: usize, tag: Option<&Tag>, at: usize) -> Result<(), Failure> {
        self.count.nodes += 1;
        if self.count.nodes > MAX_NODES {
            let nodes = self.count.nodes;
            return Err(Failure::budget(format!("Nodes {{ nodes: {nodes} }}"), at));
        }
        self.count_scalar_bytes(tag_len(tag), at)?;
        if anchor != 0 {
            self.count.anchors += 1;
            if self.count.anchors > MAX_ANCHORS {
                let anchors = self.count.anchors;
                return Err(Failure::budget(
                    format!("Anchors {{ anchors: {anchors} }}"),
                    at,
                ));
            }
        }
        Ok(())
    }

    fn count_scalar_bytes(&mut self, bytes: usize, at: usize) -> Result<(), Failure> {
        self.count.scalar_bytes = self.count.scalar_bytes.saturating_add(bytes);
        if self.count.scalar_bytes > MAX_SCALAR_BYTES {
            let total = self.count.scalar_bytes;
            return Err(Failure::budget(
                format!("ScalarBytes {{ total_scalar_bytes: {total} }}"),
                at,
            ));
        }
        Ok(())
    }

    fn loc(&self, at: usize, len: usize) -> Loc {
        let end = super::scalar_end(self.text, at, len);
        Loc {
            file: self.file,
            start: self.base + at,
            end: self.base + end,
        }
    }

    /// The document's text at `loc`.
    fn written(&self, loc: Loc) -> &str {
        self.text
            .get(loc.start - self.base..loc.end - self.base)
            .unwrap_or("")
    }

    fn expecting_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame { open: Open::Map(m), .. }) if m.key.is_none())
    }

    fn scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        at: usize,
        len: usize,
    ) -> Result<(), Failure> {
        self.count_node(anchor, tag, at)?;
        self.count_scalar_bytes(text.len(), at)?;
        let kind = Kind::of(tag);
        check_tag(tag, kind, None, at)?;
        let value =
            scalar::resolve(text, style, kind).map_err(|e| Failure::new(e.message(text), at))?;
        let node = Node {
            value,
            loc: self.loc(at, len),
        };
        self.produced += 1;
        if anchor != 0 {
            self.remember(anchor, node.clone(), 1, 0, 1);
        }
        if self.expecting_key() {
            let merge = text == "<<"
                && (kind == Kind::Merge || tag.is_none() && style == ScalarStyle::Plain);
            if merge {
                self.count.merge_keys += 1;
                if self.count.merge_keys > MAX_MERGE_KEYS {
                    let n = self.count.merge_keys;
                    return Err(Failure::budget(
                        format!("MergeKeys {{ merge_keys: {n} }}"),
                        at,
                    ));
                }
            }
            let id = KeyId::of_scalar(text, style, kind, &node.value);
            return self.set_key(node, id, merge, text);
        }
        self.push(node, 0)
    }

    fn open(
        &mut self,
        open: Open,
        anchor: usize,
        tag: Option<&Tag>,
        at: usize,
        len: usize,
    ) -> Result<(), Failure> {
        self.count_node(anchor, tag, at)?;
        let depth = self.stack.len() + 1;
        if depth > MAX_DEPTH {
            return Err(Failure::budget(format!("Depth {{ depth: {depth} }}"), at));
        }
        self.stack.push(Frame {
            open,
            loc: self.loc(at, len),
            anchor,
            produced_at_start: self.produced,
            nodes_at_start: self.count.nodes - 1,
            height: 0,
        });
        Ok(())
    }

    fn close(&mut self, at: usize) -> Result<(), Failure> {
        let Some(frame) = self.stack.pop() else {
            return Err(Failure::new("list or mapping end with no start", at));
        };
        self.produced += 2;
        let value = match frame.open {
            Open::Seq(items) => Value::Seq(items),
            Open::Map(map) => Value::Map(self.finish_map(map)?),
        };
        let node = Node {
            value,
            loc: frame.loc,
        };
        let height = frame.height + 1;
        if frame.anchor != 0 {
            let events = self.produced - frame.produced_at_start;
            let nodes = self.count.nodes - frame.nodes_at_start;
            self.remember(frame.anchor, node.clone(), events, height, nodes);
        }
        if self.expecting_key() {
            return self.set_key(node, KeyId::Unique, false, "");
        }
        self.push(node, height)
    }

    fn alias(&mut self, id: usize, at: usize, len: usize) -> Result<(), Failure> {
        self.count.aliases += 1;
        if self.count.aliases > MAX_ALIASES {
            let aliases = self.count.aliases;
            return Err(Failure::budget(
                format!("Aliases {{ aliases: {aliases} }}"),
                at,
            ));
        }
        let Some(Some(anchored)) = self.anchors.get(id) else {
            // Defined but not finished: the alias sits inside its own anchor.
            let message = "recursive references require weak recursion types";
            return Err(Failure::new(message, at));
        };
        // Nodes copied count against the node budget too, as serde-saphyr's replayed events did.
        self.count.nodes += anchored.nodes;
        if self.count.nodes > MAX_NODES {
            let nodes = MAX_NODES + 1;
            return Err(Failure::budget(format!("Nodes {{ nodes: {nodes} }}"), at));
        }
        self.count.replayed += anchored.events;
        if self.count.replayed > MAX_REPLAYED_EVENTS {
            let over = MAX_REPLAYED_EVENTS + 1;
            return Err(Failure::new(
                format!("alias replay limit exceeded: total_replayed_events={over} > {MAX_REPLAYED_EVENTS}"),
                at,
            ));
        }
        if self.stack.len() + anchored.height > MAX_DEPTH {
            let depth = MAX_DEPTH + 1;
            return Err(Failure::budget(format!("Depth {{ depth: {depth} }}"), at));
        }
        let (height, events) = (anchored.height, anchored.events);
        let mut node = anchored.node.clone();
        let used_at = self.loc(at, len);
        self.produced += events;
        if let Some(frame) = self.stack.last_mut() {
            if let Open::Map(map) = &mut frame.open {
                if matches!(map.key, Some((_, _, true))) {
                    frame.height = frame.height.max(height);
                    map.key = None;
                    map.merges.push((node, used_at));
                    return Ok(());
                }
            }
        }
        // Every node of the copy points at the alias, where it is used.
        relocate(&mut node, used_at);
        if self.expecting_key() {
            let id = KeyId::of_value(&node.value, self.written(node.loc));
            let text = node.scalar_text().unwrap_or_default();
            return self.set_key(node, id, false, &text);
        }
        self.push(node, height)
    }

    fn remember(&mut self, anchor: usize, node: Node, events: usize, height: usize, nodes: usize) {
        if self.anchors.len() <= anchor {
            self.anchors.resize_with(anchor + 1, || None);
        }
        self.anchors[anchor] = Some(Anchored {
            node,
            events,
            height,
            nodes,
        });
    }

    /// Holds a key until its value comes; a key the map already has is refused, unless the
    /// last one wins (then the consumer keeps the last: serde-saphyr handed all of them over).
    fn set_key(&mut self, node: Node, id: KeyId, merge: bool, raw: &str) -> Result<(), Failure> {
        let duplicates = self.duplicates;
        let base = self.base;
        if let Some(Frame {
            open: Open::Map(map),
            ..
        }) = self.stack.last_mut()
        {
            if duplicates == Duplicates::Error && !merge && map.find(&node, &id).is_some() {
                let key = if id == KeyId::Unique { None } else { Some(raw) };
                return Err(duplicate(key, node.loc.start - base));
            }
            map.key = Some((node, id, merge));
        }
        Ok(())
    }

    /// Adds a finished node to the open collection, or makes it the root.
    fn push(&mut self, node: Node, height: usize) -> Result<(), Failure> {
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        frame.height = frame.height.max(height);
        match &mut frame.open {
            Open::Seq(items) => items.push(node),
            Open::Map(map) => {
                let Some((key, id, merge)) = map.key.take() else {
                    return Ok(());
                };
                if merge {
                    let loc = node.loc;
                    map.merges.push((node, loc));
                } else {
                    map.add(key, id, node);
                }
            }
        }
        Ok(())
    }

    /// The entries of a map that ends: its own, then the merged ones whose keys it lacks, each
    /// pointing at the map it was merged from (serde-saphyr's reference location).
    fn finish_map(&mut self, mut map: MapState) -> Result<Vec<(Node, Node)>, Failure> {
        for (merged, used_at) in std::mem::take(&mut map.merges) {
            let merge_at = used_at.start - self.base;
            let sources = match merged.value {
                Value::Map(entries) => vec![(entries, used_at)],
                Value::Seq(items) => items
                    .into_iter()
                    .map(|item| match item.value {
                        Value::Map(entries) => Ok((entries, item.loc)),
                        _ => Err(()),
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|()| merge_failure(merge_at))?,
                _ => return Err(merge_failure(merge_at)),
            };
            let entries = sources
                .into_iter()
                .flat_map(|(entries, loc)| entries.into_iter().map(move |e| (e, loc)));
            for ((mut key, mut value), loc) in entries {
                let id = KeyId::of_value(&key.value, self.written(key.loc));
                relocate(&mut key, loc);
                relocate(&mut value, loc);
                if map.find(&key, &id).is_none() {
                    map.add(key, id, value);
                }
            }
        }
        Ok(fit(map.entries))
    }

    fn finish(mut self) -> Result<Node, Failure> {
        let at = self.last_at;
        if self.count.aliases >= RATIO_MIN_ALIASES
            && (self.count.anchors == 0
                || self.count.aliases > RATIO_MULTIPLIER * self.count.anchors)
        {
            let (aliases, anchors) = (self.count.aliases, self.count.anchors);
            return Err(Failure::budget(
                format!("AliasAnchorRatio {{ aliases: {aliases}, anchors: {anchors} }}"),
                at,
            ));
        }
        Ok(self.root.take().unwrap_or(Node {
            value: Value::Null,
            loc: self.loc(at, 0),
        }))
    }
}

fn merge_failure(at: usize) -> Failure {
    Failure::new(
        "YAML merge value must be mapping or sequence of mappings",
        at,
    )
}

fn duplicate(key: Option<&str>, at: usize) -> Failure {
    let message = match key {
        Some(k) => {
            format!("duplicate mapping key: {k}, set DuplicateKeyPolicy in Options if acceptable")
        }
        None => {
            "duplicate mapping key, set DuplicateKeyPolicy in Options if acceptable".to_string()
        }
    };
    Failure::new(message, at)
}

fn tag_len(tag: Option<&Tag>) -> usize {
    tag.map_or(0, |t| {
        let (handle, suffix) = t.parts();
        handle.len() + suffix.len()
    })
}

/// Points a copied node and all it holds at `loc`.
fn relocate(node: &mut Node, loc: Loc) {
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
fn fit<T>(mut v: Vec<T>) -> Vec<T> {
    if (v.capacity() - v.len()) * std::mem::size_of::<T>() > 64 * 1024 {
        v.shrink_to_fit();
    }
    v
}

/// What makes two keys the same one (serde-saphyr's `KeyFingerprint`): a plain integer by its
/// value; any other scalar by its text and whether it is null, a string (plain `true` and
/// quoted `"true"` are one key) or explicitly typed.
#[derive(Clone, PartialEq, Eq, Hash)]
enum KeyId {
    Int(i128),
    /// A string-like key whose text is its node's `Value::Str`.
    Str,
    /// Any other scalar: its class and text.
    Text(Class, Box<str>),
    /// A sequence or map key: never compared (kvlint reads none).
    Unique,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Class {
    Str,
    Null,
    Typed(u8),
}

impl KeyId {
    fn of_scalar(text: &str, style: ScalarStyle, kind: Kind, value: &Value) -> KeyId {
        let plain_untagged = style == ScalarStyle::Plain && kind == Kind::Untagged;
        match (value, kind) {
            (Value::Int(i), Kind::Untagged | Kind::Int) if plain_untagged || kind == Kind::Int => {
                KeyId::Int(i128::from(*i))
            }
            (Value::Str(_), _) => KeyId::Str,
            (Value::Null, Kind::Untagged) => KeyId::Text(Class::Null, text.into()),
            (_, Kind::Untagged | Kind::Merge | Kind::NonSpecific | Kind::Str) => {
                KeyId::Text(Class::Str, text.into())
            }
            (_, kind) => KeyId::Text(Class::Typed(kind as u8), text.into()),
        }
    }

    /// The identity of a key known only by its node (an alias or a merged entry); `written` is
    /// the text at its location, which for a plain scalar is the scalar as written.
    fn of_value(value: &Value, written: &str) -> KeyId {
        match value {
            Value::Int(i) => KeyId::Int(i128::from(*i)),
            Value::Str(_) => KeyId::Str,
            Value::Null => KeyId::Text(Class::Null, written.into()),
            Value::Seq(_) | Value::Map(_) => KeyId::Unique,
            Value::Bool(_) | Value::Float(_) => KeyId::Text(Class::Str, written.into()),
        }
    }

    /// Class and text for comparing string-like keys, whatever their `KeyId` variant.
    fn text<'a>(&'a self, node: &'a Node) -> Option<(Class, &'a str)> {
        match (self, &node.value) {
            (KeyId::Str, Value::Str(s)) => Some((Class::Str, s)),
            (KeyId::Text(class, t), _) => Some((*class, t)),
            _ => None,
        }
    }
}

impl MapState {
    /// The entry whose key is the same as `key`.
    fn find(&self, key: &Node, id: &KeyId) -> Option<usize> {
        if *id == KeyId::Unique {
            return None;
        }
        if let Some(index) = &self.index {
            return index.get(&Self::hashed(key, id)).copied();
        }
        let wanted = id.text(key);
        self.ids
            .iter()
            .zip(&self.entries)
            .position(|(other, (k, _))| match wanted {
                Some(w) => other.text(k) == Some(w),
                None => other == id,
            })
    }

    fn add(&mut self, key: Node, id: KeyId, value: Node) {
        if self.index.is_none() && self.entries.len() >= LINEAR_KEY_SEARCH {
            let mut index = HashMap::with_capacity(self.entries.len() * 2);
            for (i, (id, (k, _))) in self.ids.iter().zip(&self.entries).enumerate() {
                if *id != KeyId::Unique {
                    index.entry(Self::hashed(k, id)).or_insert(i);
                }
            }
            self.index = Some(index);
        }
        if let Some(index) = &mut self.index {
            if id != KeyId::Unique {
                index
                    .entry(Self::hashed(&key, &id))
                    .or_insert(self.entries.len());
            }
        }
        self.ids.push(id);
        self.entries.push((key, value));
    }

    /// A key's identity as an owned value, for maps large enough to index.
    fn hashed(key: &Node, id: &KeyId) -> Hashed {
        match id.text(key) {
            Some((class, text)) => Hashed::Text(class, text.to_string()),
            None => Hashed::Id(id.clone()),
        }
    }
}

#[derive(PartialEq, Eq, Hash)]
enum Hashed {
    Text(Class, String),
    Id(KeyId),
}

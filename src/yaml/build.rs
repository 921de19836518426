//! The tree built straight from granit-parser's events, with an explicit stack (no recursion,
//! so nesting cannot overflow the thread's stack) and serde-saphyr 2.2's default budget
//! (`de/budget.rs` `Budget::default`, `de/options.rs` `AliasLimits::default`), which kvlint
//! read YAML through before: aliases expand to copies, bounded in total.

use super::scalar::{self, Kind};
use super::{Node, Value};
use crate::source::{FileId, Loc};
use granit_parser::{ErrorKind, Event, Options, Parser, ScalarStyle, ScanError, Span, Tag};
use std::collections::HashSet;

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
    /// The key read, waiting for its value, and whether it is a merge key (`<<`).
    key: Option<(Node, bool)>,
    /// Values of `<<` keys, merged when the map ends, with where they are used (an alias copy
    /// keeps its own locations until then, so that its keys keep their written text).
    merges: Vec<(Node, Loc)>,
    /// Key identities to entry positions, once the map has more than `LINEAR_KEY_SEARCH` keys.
    index: Option<HashSet<Owned>>,
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
            return self.set_key(node, merge, text);
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
            return self.set_key(node, false, "");
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
                if matches!(map.key, Some((_, true))) {
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
            let text = node.scalar_text().unwrap_or_default();
            return self.set_key(node, false, &text);
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
    fn set_key(&mut self, node: Node, merge: bool, raw: &str) -> Result<(), Failure> {
        let duplicates = self.duplicates;
        let base = self.base;
        if let Some(Frame {
            open: Open::Map(map),
            ..
        }) = self.stack.last_mut()
        {
            if duplicates == Duplicates::Error && !merge {
                if let Some(id) = ident(&node, self.text, base) {
                    if map.has(&id, self.text, base) {
                        return Err(duplicate(raw, node.loc.start - base));
                    }
                }
            }
            map.key = Some((node, merge));
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
                let Some((key, merge)) = map.key.take() else {
                    return Ok(());
                };
                if merge {
                    let loc = node.loc;
                    map.merges.push((node, loc));
                } else {
                    map.add(key, node, self.text, self.base);
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
                let known = ident(&key, self.text, self.base)
                    .is_some_and(|id| map.has(&id, self.text, self.base));
                relocate(&mut key, loc);
                relocate(&mut value, loc);
                if !known {
                    map.add(key, value, self.text, self.base);
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

fn duplicate(key: &str, at: usize) -> Failure {
    Failure::new(
        format!("duplicate mapping key: {key}, set DuplicateKeyPolicy in Options if acceptable"),
        at,
    )
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

/// What makes two keys the same one (serde-saphyr's `KeyFingerprint`): an integer by its value;
/// a string, or a plain boolean or float by its text, as a string (plain `true` and quoted
/// `"true"` are one key); a null by its text (`~` and `null` are two). Sequence and map keys
/// have none: they are never compared (kvlint reads none).
#[derive(PartialEq, Eq, Hash)]
enum Ident<'a> {
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
fn ident<'a>(key: &'a Node, text: &'a str, base: usize) -> Option<Ident<'a>> {
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
    fn has(&self, id: &Ident, text: &str, base: usize) -> bool {
        match &self.index {
            Some(index) => index.contains(&id.owned()),
            None => self
                .entries
                .iter()
                .any(|(k, _)| ident(k, text, base).as_ref() == Some(id)),
        }
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
}

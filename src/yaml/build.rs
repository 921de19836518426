//! The tree built straight from granit-parser's events, with an explicit stack (no recursion,
//! so nesting cannot overflow the thread's stack), within serde-saphyr's budget (`budget`):
//! aliases expand to copies that point at the alias, bounded in total.

use super::budget::{Counts, Failure, MAX_DEPTH};
use super::map::{fit, ident, relocate, MapState};
use super::scalar::{self, Kind};
use super::{Node, Value};
use crate::source::{FileId, Loc};
use granit_parser::{ErrorKind, Event, Options, Parser, ScalarStyle, ScanError, Span, Tag};

/// How a repeated key is treated.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Duplicates {
    Error,
    /// Every entry is kept; the reader keeps the last (PyYAML's reading of engine `--config`
    /// files), as serde-saphyr handed all of them over.
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
        // Room for the nesting of common manifests, so the stack of large frames is not regrown.
        stack: Vec::with_capacity(16),
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

/// A tag on the wrong kind of node (`Error::UnsupportedTag`); `collection` as in `Kind::fits`.
fn check_tag(tag: Option<&Tag>, collection: Option<Kind>, at: usize) -> Result<Kind, Failure> {
    let kind = Kind::of(tag);
    if kind.fits(collection) {
        return Ok(kind);
    }
    let (handle, suffix) = tag.map_or(("", ""), Tag::original_parts);
    Err(Failure::new(
        format!("unsupported tag `{handle}{suffix}`"),
        at,
    ))
}

/// The CloudFormation intrinsic function a short-form tag names (`!Ref X`, `!Sub "${X}"`,
/// `!GetAtt`; AWS CloudFormation User Guide, "Intrinsic function reference"): a value the stack
/// computes when it is deployed. The tag alone would be dropped and `!Ref ModelId` read as the
/// text `ModelId`, so the node is read in its long form instead (`{"Ref": "ModelId"}`, as JSON
/// templates write it): a mapping where a scalar belongs, which no reader takes as a literal.
fn intrinsic(tag: Option<&Tag>) -> Option<&'static str> {
    const FUNCTIONS: &[(&str, &str)] = &[
        ("Ref", "Ref"),
        ("Condition", "Condition"),
        ("Sub", "Fn::Sub"),
        ("GetAtt", "Fn::GetAtt"),
        ("Join", "Fn::Join"),
        ("Select", "Fn::Select"),
        ("Split", "Fn::Split"),
        ("If", "Fn::If"),
        ("Equals", "Fn::Equals"),
        ("And", "Fn::And"),
        ("Or", "Fn::Or"),
        ("Not", "Fn::Not"),
        ("FindInMap", "Fn::FindInMap"),
        ("ImportValue", "Fn::ImportValue"),
        ("Base64", "Fn::Base64"),
        ("Cidr", "Fn::Cidr"),
        ("GetAZs", "Fn::GetAZs"),
        ("Transform", "Fn::Transform"),
        ("ToJsonString", "Fn::ToJsonString"),
        ("Length", "Fn::Length"),
    ];
    let (handle, suffix) = tag?.original_parts();
    if handle != "!" {
        return None;
    }
    FUNCTIONS
        .iter()
        .find(|(short, _)| *short == suffix)
        .map(|(_, long)| *long)
}

/// `node` as the one value of a mapping keyed by `function`, both at the node's place.
fn long_form(function: Option<&'static str>, node: Node) -> Node {
    let Some(function) = function else {
        return node;
    };
    let key = Node {
        value: Value::Str(function.to_string()),
        loc: node.loc,
    };
    Node {
        loc: node.loc,
        value: Value::Map(vec![(key, node)]),
    }
}

fn tag_len(tag: Option<&Tag>) -> usize {
    tag.map_or(0, |t| {
        let (handle, suffix) = t.parts();
        handle.len() + suffix.len()
    })
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
    /// The CloudFormation function its tag names (`!Join [...]`), see [`intrinsic`].
    function: Option<&'static str>,
}

struct Builder<'a> {
    file: FileId,
    text: &'a str,
    base: usize,
    duplicates: Duplicates,
    stack: Vec<Frame>,
    /// Finished anchored nodes by anchor id (granit numbers them from 1).
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
        self.count.event(at)?;
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
                check_tag(tag.as_deref(), Some(Kind::Seq), at)?;
                self.open(Open::Seq(Vec::new()), anchor, tag.as_deref(), at, len)
            }
            Event::MappingStart(_, anchor, tag) => {
                check_tag(tag.as_deref(), Some(Kind::Map), at)?;
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

    fn loc(&self, at: usize, len: usize) -> Loc {
        let end = super::scalar_end(self.text, at, len);
        Loc {
            file: self.file,
            start: self.base + at,
            end: self.base + end,
        }
    }

    /// The map waiting for a key, if that is where the next node goes.
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
        self.count.node(anchor != 0, tag_len(tag), at)?;
        self.count.scalar_bytes(text.len(), at)?;
        let kind = check_tag(tag, None, at)?;
        let value =
            scalar::resolve(text, style, kind).map_err(|e| Failure::new(e.message(text), at))?;
        let node = Node {
            value,
            loc: self.loc(at, len),
        };
        // A key stays a key: only a value is a function's result.
        let function = intrinsic(tag).filter(|_| !self.expecting_key());
        let node = long_form(function, node);
        self.produced += 1;
        if anchor != 0 {
            self.remember(anchor, node.clone(), 1, 0, 1);
        }
        if self.expecting_key() {
            let merge = text == "<<"
                && (kind == Kind::Merge || tag.is_none() && style == ScalarStyle::Plain);
            if merge {
                self.count.merge_key(at)?;
            }
            return self.set_key(node, merge, text);
        }
        self.push(node, 0);
        Ok(())
    }

    fn open(
        &mut self,
        open: Open,
        anchor: usize,
        tag: Option<&Tag>,
        at: usize,
        len: usize,
    ) -> Result<(), Failure> {
        self.count.node(anchor != 0, tag_len(tag), at)?;
        Counts::depth(self.stack.len() + 1, at)?;
        self.stack.push(Frame {
            open,
            loc: self.loc(at, len),
            anchor,
            produced_at_start: self.produced,
            nodes_at_start: self.count.nodes - 1,
            height: 0,
            function: intrinsic(tag),
        });
        Ok(())
    }

    fn close(&mut self, at: usize) -> Result<(), Failure> {
        let Some(frame) = self.stack.pop() else {
            return Err(Failure::new("list or mapping end with no start", at));
        };
        self.produced += 2;
        let value = match frame.open {
            Open::Seq(items) => Value::Seq(fit(items)),
            Open::Map(map) => Value::Map(map.finish(self.text, self.base)?),
        };
        let node = long_form(
            frame.function,
            Node {
                value,
                loc: frame.loc,
            },
        );
        let height = frame.height + 1;
        if frame.anchor != 0 {
            let events = self.produced - frame.produced_at_start;
            let nodes = self.count.nodes - frame.nodes_at_start;
            self.remember(frame.anchor, node.clone(), events, height, nodes);
        }
        if self.expecting_key() {
            return self.set_key(node, false, "");
        }
        self.push(node, height);
        Ok(())
    }

    fn alias(&mut self, id: usize, at: usize, len: usize) -> Result<(), Failure> {
        let Some(Some(anchored)) = self.anchors.get(id) else {
            // The parser knows the anchor (it refuses unknown ones), so it is not finished:
            // the alias sits inside its own anchor.
            let message = "recursive references require weak recursion types";
            return Err(Failure::new(message, at));
        };
        let (height, events) = (anchored.height, anchored.events);
        self.count.alias(anchored.nodes, events, at)?;
        if self.stack.len() + height > MAX_DEPTH {
            Counts::depth(MAX_DEPTH + 1, at)?;
        }
        let mut node = anchored.node.clone();
        let used_at = self.loc(at, len);
        self.produced += events;
        if let Some(frame) = self.stack.last_mut() {
            if let Open::Map(map) = &mut frame.open {
                if matches!(map.key, Some((_, true))) {
                    frame.height = frame.height.max(height);
                    map.merge_copy(node, used_at);
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
        self.push(node, height);
        Ok(())
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

    /// Holds a key until its value comes; a key the map already has is refused (serde-saphyr's
    /// `DuplicateMappingKey`, at the repeated key), unless the last one wins.
    fn set_key(&mut self, node: Node, merge: bool, raw: &str) -> Result<(), Failure> {
        let (text, base) = (self.text, self.base);
        let check = self.duplicates == Duplicates::Error && !merge;
        if let Some(Frame {
            open: Open::Map(map),
            ..
        }) = self.stack.last_mut()
        {
            if check && ident(&node, text, base).is_some_and(|id| map.has(&id, text, base)) {
                return Err(Failure::new(
                    format!("duplicate mapping key: {raw}, set DuplicateKeyPolicy in Options if acceptable"),
                    node.loc.start - base,
                ));
            }
            map.key = Some((node, merge));
        }
        Ok(())
    }

    /// Adds a finished node to the open collection, or makes it the root.
    fn push(&mut self, node: Node, height: usize) {
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(node);
            return;
        };
        frame.height = frame.height.max(height);
        match &mut frame.open {
            Open::Seq(items) => items.push(node),
            Open::Map(map) => map.value(node, self.text, self.base),
        }
    }

    fn finish(mut self) -> Result<Node, Failure> {
        let at = self.last_at;
        self.count.ratio(at)?;
        Ok(self.root.take().unwrap_or(Node {
            value: Value::Null,
            loc: self.loc(at, 0),
        }))
    }
}

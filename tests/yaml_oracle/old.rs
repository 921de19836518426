//! serde-saphyr's reading, as src/yaml.rs had it before the tree was built from events.

use kvlint::source::{FileId, Loc, SourceFile};
use kvlint::yaml::{Node, Value, YamlError};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// Parses every document of a YAML file, split where kvlint splits them (the split is not what
/// changed), each with serde-saphyr.
pub fn parse_documents(file: FileId, src: &SourceFile) -> Vec<Result<Node, YamlError>> {
    kvlint::yaml::document_ranges(src)
        .into_iter()
        .map(|range| parse_at(file, src, range.start, range.end))
        .collect()
}

/// Parses a single-document YAML file where a repeated key keeps its last value, as PyYAML
/// reads engine `--config` files.
pub fn parse_document_last_key_wins(file: FileId, src: &SourceFile) -> Result<Node, YamlError> {
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
    };
    parse_with(file, src, 0, src.text.len(), options)
}

fn parse_at(file: FileId, src: &SourceFile, start: usize, end: usize) -> Result<Node, YamlError> {
    parse_with(file, src, start, end, serde_saphyr::Options::default())
}

fn parse_with(
    file: FileId,
    src: &SourceFile,
    start: usize,
    end: usize,
    mut options: serde_saphyr::Options,
) -> Result<Node, YamlError> {
    // No node keeps a comment: the parser still checks them, without copying their text.
    options.emit_comments = false;
    let text = &src.text[start..end];
    match serde_saphyr::from_str_with_options::<Spanned<RawNode>>(text, options) {
        Ok(root) => Ok(root_node(file, text, start, root)),
        Err(e) => {
            let offset = error_offset(&e, text).map_or(start, |o| start + o);
            let message = first_line(&e.to_string());
            Err(YamlError {
                message,
                loc: Loc {
                    file,
                    start: offset,
                    end: offset,
                },
            })
        }
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or(s).trim().to_string()
}

fn error_offset(e: &serde_saphyr::Error, text: &str) -> Option<usize> {
    let loc = e.location()?;
    let line = usize::try_from(loc.line()).ok()?;
    let col = usize::try_from(loc.column()).ok()?;
    Some(SourceFile::new("", text).offset_of(line, col))
}

/// The tree as serde-saphyr hands it over: children carry their own locations.
#[derive(Debug)]
enum RawValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<RawNode>>),
    Map(Vec<(Spanned<RawNode>, Spanned<RawNode>)>),
}

#[derive(Debug)]
struct RawNode(RawValue);

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor).map(RawNode)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<RawValue, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawValue, E> {
        Ok(RawValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawValue, E> {
        Ok(RawValue::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawValue, E> {
        Ok(i64::try_from(v).map_or(RawValue::Float(v as f64), RawValue::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawValue, E> {
        Ok(RawValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawValue, E> {
        Ok(RawValue::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<RawValue, E> {
        Ok(RawValue::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<RawNode>>()? {
            items.push(item);
        }
        Ok(RawValue::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawValue, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<Spanned<RawNode>, Spanned<RawNode>>()? {
            entries.push((k, v));
        }
        Ok(RawValue::Map(entries))
    }
}

/// Converts saphyr locations (1-based line/column within the document) to byte ranges of the file.
struct Locator<'a> {
    file: FileId,
    /// The document's text.
    text: &'a str,
    /// The document as a source, built only when the parser gives a line and column without a
    /// byte offset: a copy of the document is not made for every parse.
    doc: std::cell::OnceCell<SourceFile>,
    base: usize,
}

impl Locator<'_> {
    fn loc(&self, l: &serde_saphyr::Location) -> Loc {
        let start = match l.span().byte_offset() {
            Some(b) => usize::try_from(b).unwrap_or(0),
            None => self
                .doc
                .get_or_init(|| SourceFile::new("", self.text))
                .offset_of(
                    usize::try_from(l.line()).unwrap_or(1),
                    usize::try_from(l.column()).unwrap_or(1),
                ),
        };
        let len = l
            .span()
            .byte_len()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0);
        let start = start.min(self.text.len());
        let end = scalar_end(self.text, start, len);
        Loc {
            file: self.file,
            start: self.base + start,
            end: self.base + end,
        }
    }

    fn node(&self, n: Spanned<RawNode>) -> Node {
        let loc = self.loc(&n.referenced);
        let value = match n.value.0 {
            RawValue::Null => Value::Null,
            RawValue::Bool(b) => Value::Bool(b),
            RawValue::Int(i) => Value::Int(i),
            RawValue::Float(f) => Value::Float(f),
            RawValue::Str(s) => Value::Str(s),
            RawValue::Seq(items) => Value::Seq(fit(items.into_iter().map(|i| self.node(i)))),
            RawValue::Map(entries) => Value::Map(fit(entries
                .into_iter()
                .map(|(k, v)| (self.node(k), self.node(v))))),
        };
        Node { value, loc }
    }
}

/// The items collected without spare room when that is large: collected in place, a list of
/// nodes keeps the size of the parser's larger items (about 1.7 times its own). Small lists keep
/// it, as trimming each of them leaves the heap in holes.
fn fit<T>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = items.collect();
    if (v.capacity() - v.len()) * std::mem::size_of::<T>() > 64 * 1024 {
        v.shrink_to_fit();
    }
    v
}

/// End of a scalar: the parser's length when it gave one, else the rest of the token on that line.
fn scalar_end(text: &str, start: usize, len: usize) -> usize {
    if len > 0 {
        return (start + len).min(text.len());
    }
    let rest = &text[start..];
    let line = rest.split('\n').next().unwrap_or("");
    let token = line.split(" #").next().unwrap_or(line).trim_end();
    start + token.len()
}

fn root_node(file: FileId, text: &str, base: usize, root: Spanned<RawNode>) -> Node {
    let locator = Locator {
        file,
        text,
        doc: std::cell::OnceCell::new(),
        base,
    };
    locator.node(root)
}

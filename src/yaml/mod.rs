//! YAML with a span on every node, for engine `--config` files and manifests: the tree is built
//! straight from granit-parser's events (`build`), scalars typed as YAML core with YAML 1.1
//! booleans (`scalar`).

mod budget;
mod build;
mod map;
mod scalar;

use crate::source::{FileId, Loc, SourceFile};
use budget::Failure;
use build::Duplicates;

/// A YAML value; every child keeps the byte range it was read from.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

/// A value and where it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub loc: Loc,
}

impl Node {
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    /// The scalar as the text a command line would carry (`true`, `8`, `0.9`).
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Null => None,
            Value::Bool(b) => Some(b.to_string()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Str(s) => Some(s.clone()),
            Value::Seq(_) | Value::Map(_) => None,
        }
    }
    /// The value as JSON (for dict-valued flags that engines pass JSON-encoded).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.scalar_text().unwrap_or_default(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// A YAML error with the place it happened.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct YamlError {
    pub message: String,
    pub loc: Loc,
}

/// Parses every document of a YAML file. Each document is parsed on its own so that one broken
/// document does not hide the others.
pub fn parse_documents(file: FileId, src: &SourceFile) -> Vec<Result<Node, YamlError>> {
    documents(file, src).collect()
}

/// The documents of a YAML file one at a time, so that a large render never holds more than
/// one document's tree.
pub fn documents(
    file: FileId,
    src: &SourceFile,
) -> impl Iterator<Item = Result<Node, YamlError>> + '_ {
    document_ranges(src)
        .into_iter()
        .map(move |range| parse_range(file, src, range))
}

/// Byte ranges of the documents of a YAML file that hold anything but comments, in order: each
/// can be parsed on its own (`parse_range`), on any thread.
pub fn document_ranges(src: &SourceFile) -> Vec<std::ops::Range<usize>> {
    split_documents(&src.text)
        .into_iter()
        .filter(|(start, end)| !is_blank_document(&src.text[*start..*end]))
        .map(|(start, end)| start..end)
        .collect()
}

/// Parses the document at `range` (one of `document_ranges`); locations are the file's.
pub fn parse_range(
    file: FileId,
    src: &SourceFile,
    range: std::ops::Range<usize>,
) -> Result<Node, YamlError> {
    parse_at(file, src, range.start, range.end)
}

/// Parses a single-document YAML file.
pub fn parse_document(file: FileId, src: &SourceFile) -> Result<Node, YamlError> {
    parse_at(file, src, 0, src.text.len())
}

/// Parses a single-document YAML file where a repeated key is no error: every entry stays, in
/// order, for the reader to keep the last one, as PyYAML reads engine `--config` files.
pub fn parse_document_last_key_wins(file: FileId, src: &SourceFile) -> Result<Node, YamlError> {
    parse_with(file, src, 0, src.text.len(), Duplicates::LastWins)
}

fn parse_at(file: FileId, src: &SourceFile, start: usize, end: usize) -> Result<Node, YamlError> {
    parse_with(file, src, start, end, Duplicates::Error)
}

fn parse_with(
    file: FileId,
    src: &SourceFile,
    start: usize,
    end: usize,
    duplicates: Duplicates,
) -> Result<Node, YamlError> {
    let text = &src.text[start..end];
    build::build(file, text, start, duplicates).map_err(|Failure { message, at }| {
        let mut at = at.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        // Line and column within the document, as the message has always given them.
        let before = &text[..at];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        YamlError {
            message: format!(
                "error: line {line} column {column}: {}",
                first_line(&message)
            ),
            loc: Loc {
                file,
                start: start + at,
                end: start + at,
            },
        }
    })
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s).trim()
}

fn is_blank_document(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t == "---" || t == "..."
    })
}

/// Byte ranges of the documents, split at `---` lines at column 0 (found with memchr's SIMD
/// search for `\n---`: walking every line cost more than a tenth of reading the trees).
fn split_documents(text: &str) -> Vec<(usize, usize)> {
    let mut docs = Vec::new();
    let mut start = 0;
    for newline in memchr::memmem::find_iter(text.as_bytes(), b"\n---") {
        let line_start = newline + 1;
        let rest = &text[line_start..];
        let line = &rest[..memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len())];
        let bare = line.trim_end();
        if bare == "---" || bare.starts_with("--- ") {
            docs.push((start, line_start));
            start = line_start;
        }
    }
    docs.push((start, text.len()));
    docs
}

/// End of a scalar: the parser's length when it gave one, else the rest of the token on that line
/// (up to a ` #` comment). A plain byte loop: these lines are short, and a `str` pattern search
/// costs hundreds of instructions to set up for each.
fn scalar_end(text: &str, start: usize, len: usize) -> usize {
    if len > 0 {
        return (start + len).min(text.len());
    }
    let rest = &text.as_bytes()[start..];
    let cut = (0..rest.len())
        .find(|&i| rest[i] == b'\n' || (rest[i] == b' ' && rest.get(i + 1) == Some(&b'#')))
        .unwrap_or(rest.len());
    // The cut is at an ASCII byte, so at a character boundary.
    start + text[start..start + cut].trim_end().len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    #[test]
    fn every_value_keeps_its_line_and_column() {
        let mut s = Sources::default();
        let id = s.add(
            "c.yaml",
            "model-path: zai-org/GLM-5\ntp-size: 8\nlist:\n  - a\n  - 'b c'\n",
        );
        let doc = parse_document(id, s.get(id)).unwrap();
        let tp = doc.get("tp-size").unwrap();
        assert_eq!(tp.value, Value::Int(8));
        assert_eq!(s.text(tp.loc), "8");
        assert_eq!(
            (s.position(tp.loc).line, s.position(tp.loc).column),
            (2, 10)
        );
        let Value::Seq(items) = &doc.get("list").unwrap().value else {
            panic!("not a list")
        };
        assert_eq!(s.position(items[1].loc).line, 5);
    }

    #[test]
    fn a_broken_document_does_not_hide_the_next() {
        let mut s = Sources::default();
        let id = s.add("m.yaml", "a: 1\n---\nb: [unclosed\n---\nc: 3\n");
        let docs = parse_documents(id, s.get(id));
        assert_eq!(docs.len(), 3);
        assert!(docs[0].is_ok() && docs[2].is_ok());
        let err = docs[1].as_ref().unwrap_err();
        assert_eq!(s.position(err.loc).line, 3);
        let c = docs[2].as_ref().unwrap().get("c").unwrap();
        assert_eq!(s.position(c.loc).line, 5);
    }

    #[test]
    fn documents_split_at_column_zero_markers_only() {
        let text = "---\na: 1\n--- # c\n  ---\nb: '---'\n---\r\n--- x\n---y\n---";
        let starts: Vec<usize> = split_documents(text).iter().map(|d| d.0).collect();
        // At offset 0 nothing splits; `  ---` is indented and `---y` is no marker.
        assert_eq!(starts, [0, 9, 32, 37, 48]);
        assert_eq!(split_documents("").as_slice(), [(0, 0)]);
    }

    #[test]
    fn an_unmeasured_token_ends_before_a_comment_or_the_line_end() {
        let text = "key: value  # note\nx:#y \r\nlast";
        assert_eq!(scalar_end(text, 0, 0), 10);
        assert_eq!(scalar_end(text, 19, 0), 23);
        assert_eq!(scalar_end(text, 26, 0), 30);
        assert_eq!(scalar_end(text, 0, 3), 3);
    }

    fn read(text: &str) -> Result<Node, YamlError> {
        parse_document(FileId(0), &SourceFile::new("t.yaml", text))
    }

    #[test]
    fn a_repeated_key_is_refused_where_it_repeats() {
        let err = read("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(
            err.message,
            "error: line 3 column 1: duplicate mapping key: a, set DuplicateKeyPolicy in Options if acceptable"
        );
        assert_eq!(err.loc.start, 10);
        // Plain `true` and quoted "true" are one key; `1` and "1" are two.
        assert!(read("true: x\n\"true\": y\n").is_err());
        assert!(read("1: x\n\"1\": y\n").is_ok());
        // With the last key winning, every entry is handed over; the reader keeps the last.
        let src = SourceFile::new("c.yaml", "a: 1\na: 2\n");
        let doc = parse_document_last_key_wins(FileId(0), &src).unwrap();
        let Value::Map(entries) = &doc.value else {
            panic!("not a map")
        };
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn an_alias_bomb_is_refused_before_it_is_expanded() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for (prev, name) in "abcdefgh".chars().zip("bcdefghi".chars()) {
            let refs = vec![format!("*{prev}"); 9].join(", ");
            text += &format!("{name}: &{name} [{refs}]\n");
        }
        let started = std::time::Instant::now();
        let err = read(&text).unwrap_err();
        assert!(
            started.elapsed().as_secs_f64() < 2.0,
            "{:?}",
            started.elapsed()
        );
        assert!(
            err.message.contains("budget breached: Nodes"),
            "{}",
            err.message
        );
        // A few copies are fine, and each points at the alias that made it.
        let doc = read("a: &x [1, 2]\nb: *x\n").unwrap();
        let b = doc.get("b").unwrap();
        assert_eq!(b.to_json(), serde_json::json!([1, 2]));
        let Value::Seq(items) = &b.value else {
            panic!("not a list")
        };
        assert_eq!((items[0].loc.start, items[0].loc.end), (16, 18));
    }

    #[test]
    fn deep_nesting_is_refused_without_exhausting_the_stack() {
        let flow = format!("{}x{}", "[".repeat(10_000), "]".repeat(10_000));
        let mut block = String::new();
        for depth in 0..10_000 {
            block += &format!("{}k:\n", " ".repeat(depth));
        }
        for text in [flow, block] {
            let err = read(&text).unwrap_err();
            assert!(!err.message.is_empty());
        }
        let at_limit = format!("{}x{}", "[".repeat(64), "]".repeat(64));
        assert!(read(&at_limit).is_ok());
        let over = format!("{}x{}", "[".repeat(65), "]".repeat(65));
        assert!(read(&over)
            .unwrap_err()
            .message
            .ends_with("budget breached: Depth { depth: 65 }"));
    }
}

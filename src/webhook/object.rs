//! The object under review as the extractor's YAML tree, read straight from its JSON text as the
//! API server sent it, so every node points at its own bytes and no other copy of the object is
//! made. serde_json has already checked the text (the envelope reads `request.object` as a raw
//! value, [`super::request`]); this walk only finds where each value starts and ends, and leaves
//! decoding escaped strings and numbers to serde_json. Going through the YAML reader instead would
//! apply its node and depth budgets to fields kvlint never reads, and build a second tree.

use crate::source::{FileId, Loc};
use crate::yaml::{Node, Value};
use std::collections::HashMap;

/// Deepest nesting walked. [`super::prune`] cuts bodies to fewer levels before they are parsed;
/// this bound keeps the recursion safe for any caller.
const MAX_NESTING: usize = 128;

/// The text is not one JSON value, or nests deeper than the walk goes.
#[derive(Debug, PartialEq, Eq)]
pub struct Unreadable;

/// The tree of the JSON value `text`, each node located in `text` (strings with their quotes).
/// A repeated key keeps its last value at its first place, as serde_json and the API server's
/// decoder read it.
pub fn to_tree(file: FileId, text: &str) -> Result<Node, Unreadable> {
    let mut walk = Walk {
        text,
        bytes: text.as_bytes(),
        at: 0,
        file,
    };
    let node = walk.value(0)?;
    walk.skip_space();
    if walk.at == walk.bytes.len() {
        Ok(node)
    } else {
        Err(Unreadable)
    }
}

struct Walk<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    file: FileId,
}

impl Walk<'_> {
    fn skip_space(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    /// Steps over `b` after optional whitespace.
    fn eat(&mut self, b: u8) -> bool {
        self.skip_space();
        let found = self.bytes.get(self.at) == Some(&b);
        if found {
            self.at += 1;
        }
        found
    }

    fn value(&mut self, depth: usize) -> Result<Node, Unreadable> {
        self.skip_space();
        let start = self.at;
        let value = match self.bytes.get(self.at).ok_or(Unreadable)? {
            b'{' | b'[' if depth >= MAX_NESTING => return Err(Unreadable),
            b'{' => self.map(depth + 1)?,
            b'[' => self.seq(depth + 1)?,
            b'"' => Value::Str(self.string()?),
            b't' => self.word("true", Value::Bool(true))?,
            b'f' => self.word("false", Value::Bool(false))?,
            b'n' => self.word("null", Value::Null)?,
            _ => self.number()?,
        };
        Ok(Node {
            value,
            loc: Loc::new(self.file, start..self.at),
        })
    }

    fn word(&mut self, word: &str, value: Value) -> Result<Value, Unreadable> {
        if !self.text[self.at..].starts_with(word) {
            return Err(Unreadable);
        }
        self.at += word.len();
        Ok(value)
    }

    fn number(&mut self) -> Result<Value, Unreadable> {
        let start = self.at;
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
        {
            self.at += 1;
        }
        let n: serde_json::Number =
            serde_json::from_str(&self.text[start..self.at]).map_err(|_| Unreadable)?;
        Ok(match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        })
    }

    /// A string at `"`; escapes are decoded by serde_json, plain strings copied as they are.
    fn string(&mut self) -> Result<String, Unreadable> {
        let start = self.at;
        self.at += 1;
        let mut escaped = false;
        loop {
            match self.bytes.get(self.at).ok_or(Unreadable)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    self.at += 2;
                }
                b if *b < 0x20 => return Err(Unreadable),
                _ => self.at += 1,
            }
        }
        self.at += 1;
        let quoted = self.text.get(start..self.at).ok_or(Unreadable)?;
        if escaped {
            serde_json::from_str(quoted).map_err(|_| Unreadable)
        } else {
            Ok(quoted[1..quoted.len() - 1].to_string())
        }
    }

    fn seq(&mut self, depth: usize) -> Result<Value, Unreadable> {
        self.at += 1;
        let mut items = Vec::new();
        if self.eat(b']') {
            return Ok(Value::Seq(items));
        }
        loop {
            items.push(self.value(depth)?);
            if self.eat(b']') {
                return Ok(Value::Seq(items));
            }
            if !self.eat(b',') {
                return Err(Unreadable);
            }
        }
    }

    fn map(&mut self, depth: usize) -> Result<Value, Unreadable> {
        self.at += 1;
        let mut entries: Vec<(Node, Node)> = Vec::new();
        if self.eat(b'}') {
            return Ok(Value::Map(entries));
        }
        loop {
            self.skip_space();
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(Unreadable);
            }
            let key = self.value(depth)?;
            if !self.eat(b':') {
                return Err(Unreadable);
            }
            entries.push((key, self.value(depth)?));
            if self.eat(b'}') {
                return Ok(Value::Map(last_wins(entries)));
            }
            if !self.eat(b',') {
                return Err(Unreadable);
            }
        }
    }
}

/// Entries with each repeated key's last value at the key's first place; linear in the entries.
fn last_wins(entries: Vec<(Node, Node)>) -> Vec<(Node, Node)> {
    let Some(last) = last_of_each(&entries) else {
        return entries;
    };
    let mut done = vec![false; entries.len()];
    let (keys, mut values): (Vec<Node>, Vec<Option<Node>>) =
        entries.into_iter().map(|(k, v)| (k, Some(v))).unzip();
    let mut out = Vec::with_capacity(keys.len());
    for (key, j) in keys.into_iter().zip(last) {
        if !std::mem::replace(&mut done[j], true) {
            if let Some(value) = values[j].take() {
                out.push((key, value));
            }
        }
    }
    out
}

/// For each entry, the index of the last entry with its key; `None` when no key repeats.
fn last_of_each(entries: &[(Node, Node)]) -> Option<Vec<usize>> {
    let key = |i: usize| entries[i].0.as_str().unwrap_or("");
    let n = entries.len();
    let repeats = if n <= 8 {
        (0..n).any(|i| (i + 1..n).any(|j| key(i) == key(j)))
    } else {
        let mut seen = std::collections::HashSet::with_capacity(n);
        (0..n).any(|i| !seen.insert(key(i)))
    };
    if !repeats {
        return None;
    }
    let mut last: HashMap<&str, usize> = HashMap::with_capacity(n);
    for i in 0..n {
        last.insert(key(i), i);
    }
    Some((0..n).map(|i| last[key(i)]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;
    use serde_json::Value as Json;

    fn tree(text: &str) -> Node {
        to_tree(FileId(0), text).expect("readable")
    }

    #[test]
    fn every_value_points_at_its_own_text() {
        let text =
            r#"{"kind": "Pod", "spec": {"args": ["--tp", "8", "é \"q\""], "n": 1.5, "b": true}}"#;
        let mut sources = Sources::default();
        sources.add("x.json", text);
        let node = tree(text);
        let args = node.get("spec").and_then(|s| s.get("args")).expect("args");
        let Value::Seq(items) = &args.value else {
            panic!("not a list")
        };
        assert_eq!(sources.text(items[1].loc), "\"8\"");
        assert_eq!(sources.text(items[2].loc), r#""é \"q\"""#);
        assert_eq!(items[2].as_str(), Some("é \"q\""));
        assert_eq!(sources.text(node.get("kind").expect("kind").loc), "\"Pod\"");
        assert_eq!(sources.text(args.loc), r#"["--tp", "8", "é \"q\""]"#);
        assert_eq!(sources.text(node.loc), text);
    }

    /// The tree holds what serde_json reads from the same text, repeated keys included.
    #[test]
    fn values_are_what_serde_json_reads() {
        for text in [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            r#" { "s" : "\u00e9\ud83d\ude00\n\t\"\\\/" , "e" : "" } "#,
            r#"{"neg":-12,"f":-1.5e-3,"i":9223372036854775807,"e":1E2}"#,
            r#"{"k":1,"x":2,"k":3}"#,
            r#"{"a":0,"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8,"a":9,"j":{"a":1,"a":[2]}}"#,
            r#"[[],{},[[{}]],"x"]"#,
        ] {
            let expected: Json = serde_json::from_str(text).expect("JSON");
            assert_eq!(tree(text).to_json(), expected, "{text}");
        }
        // The tree has no unsigned integers: past i64, a number is a float, as in the YAML reader.
        let big = tree("18446744073709551615").value;
        assert_eq!(big, Value::Float(18446744073709551615.0));
        let Value::Map(entries) = tree(r#"{"k":1,"x":2,"k":3}"#).value else {
            panic!("not a map")
        };
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].1.value, Value::Int(3), "last value, first place");
    }

    #[test]
    fn text_that_is_not_one_json_value_is_unreadable() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        for text in [
            "",
            "{",
            r#"{"a":1}x"#,
            r#"{"a" 1}"#,
            "[1,]",
            "tru",
            "\"a\nb\"",
            &deep,
        ] {
            assert_eq!(to_tree(FileId(0), text), Err(Unreadable), "{text:?}");
        }
        let ok = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        assert!(to_tree(FileId(0), &ok).is_ok());
    }
}

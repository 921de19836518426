//! Protocol Buffers text format (Triton's `config.pbtxt`) read without its schema, into the same
//! spanned tree YAML gives (`yaml::Node`), so platform paths reach into it as into YAML.
//! Grammar: <https://protobuf.dev/reference/protobuf/textformat-spec/>.
//!
//! Without the schema a repeated field is known only by how it is written: a field named more
//! than once, or given a `[ ... ]` list, is a sequence; named once it is a single value. A map field
//! (`map<string, ModelParameter> parameters` in Triton's model_config.proto) is written as entries
//! with `key` and `value` fields; such entries become a mapping from each key to its value, the
//! last entry of a key winning as protobuf's parser merges map entries. Crates that parse text
//! format (`protobuf`, `prost-reflect`) need the message descriptor, and keep no spans.

use crate::source::{FileId, Loc};
use crate::yaml::{Node, Value};
use std::collections::HashMap;

/// Deepest nesting of messages and lists, as the YAML reader's budget.
const MAX_DEPTH: usize = 64;

/// Text that is not protobuf text format, with where reading stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct PbtxtError {
    pub message: String,
    pub loc: Loc,
}

/// Reads a whole text-format message; its root is a mapping spanning the text.
pub fn parse(file: FileId, text: &str) -> Result<Node, PbtxtError> {
    let mut p = Parser {
        file,
        text,
        pos: 0,
        depth: 0,
    };
    let fields = p.fields(None)?;
    Ok(Node {
        value: Value::Map(fields),
        loc: Loc::new(file, 0..text.len()),
    })
}

struct Parser<'t> {
    file: FileId,
    text: &'t str,
    pos: usize,
    depth: usize,
}

/// One occurrence of a field: its name node and its value, or the items of a `[...]` list.
struct Occurrence {
    name: Node,
    values: Vec<Node>,
    list: bool,
}

impl Parser<'_> {
    fn err<T>(&self, message: impl Into<String>, at: usize) -> Result<T, PbtxtError> {
        let end = self.text[at..]
            .chars()
            .next()
            .map_or(at, |c| at + c.len_utf8());
        Err(PbtxtError {
            message: message.into(),
            loc: Loc::new(self.file, at..end),
        })
    }

    fn loc(&self, range: std::ops::Range<usize>) -> Loc {
        Loc::new(self.file, range)
    }

    /// Skips whitespace and `#` comments; returns the next character without taking it.
    fn peek(&mut self) -> Option<char> {
        loop {
            let rest = &self.text[self.pos..];
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with('#') {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
                continue;
            }
            return trimmed.chars().next();
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            return true;
        }
        false
    }

    /// Fields up to `close` (or the end of the text), grouped by name in first-seen order.
    fn fields(&mut self, close: Option<char>) -> Result<Vec<(Node, Node)>, PbtxtError> {
        let mut seen: Vec<Occurrence> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        loop {
            match (self.peek(), close) {
                (None, None) => break,
                (None, Some(c)) => return self.err(format!("missing `{c}`"), self.pos),
                (Some(c), Some(want)) if c == want => {
                    self.pos += 1;
                    break;
                }
                _ => {}
            }
            let one = self.field()?;
            let name = one.name.as_str().unwrap_or_default().to_string();
            match index.get(&name) {
                Some(&i) => {
                    seen[i].values.extend(one.values);
                    seen[i].list = true;
                }
                None => {
                    index.insert(name, seen.len());
                    seen.push(one);
                }
            }
        }
        Ok(seen.into_iter().map(group).collect())
    }

    fn field(&mut self) -> Result<Occurrence, PbtxtError> {
        let start = self.pos;
        let name = if self.eat('[') {
            // An extension or `Any` type URL: `[type.googleapis.com/pkg.Msg]`.
            let end = self.text[self.pos..].find(']').map(|i| self.pos + i);
            let Some(end) = end else {
                return self.err("`[` of a field name without `]`", start);
            };
            self.pos = end + 1;
            self.text[start..self.pos].to_string()
        } else {
            match self.ident() {
                Some(name) => name,
                None => return self.err("expected a field name", start),
            }
        };
        let name = Node {
            value: Value::Str(name),
            loc: self.loc(start..self.pos),
        };
        let colon = self.eat(':');
        let (values, list) = match self.peek() {
            Some('[') => (self.list()?, true),
            Some('{' | '<') => (vec![self.message()?], false),
            _ if colon => (vec![self.scalar()?], false),
            _ => return self.err("expected `:` after the field name", self.pos),
        };
        if !self.eat(';') {
            self.eat(',');
        }
        Ok(Occurrence { name, values, list })
    }

    fn ident(&mut self) -> Option<String> {
        self.peek();
        let rest = &self.text[self.pos..];
        let first = rest.chars().next()?;
        if !(first.is_ascii_alphabetic() || first == '_') {
            return None;
        }
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        self.pos += len;
        Some(rest[..len].to_string())
    }

    fn nested<T>(
        &mut self,
        at: usize,
        read: impl FnOnce(&mut Self) -> Result<T, PbtxtError>,
    ) -> Result<T, PbtxtError> {
        if self.depth >= MAX_DEPTH {
            return self.err(format!("nested deeper than {MAX_DEPTH} levels"), at);
        }
        self.depth += 1;
        let out = read(self);
        self.depth -= 1;
        out
    }

    /// `{ fields }` or `< fields >`.
    fn message(&mut self) -> Result<Node, PbtxtError> {
        let start = self.pos;
        let close = if self.eat('{') { '}' } else { '>' };
        if close == '>' {
            self.pos += 1;
        }
        let fields = self.nested(start, |p| p.fields(Some(close)))?;
        Ok(Node {
            value: Value::Map(fields),
            loc: self.loc(start..self.pos),
        })
    }

    /// `[ value, value ]`: messages or scalars, possibly none.
    fn list(&mut self) -> Result<Vec<Node>, PbtxtError> {
        let start = self.pos;
        self.pos += 1;
        self.nested(start, |p| {
            let mut items = Vec::new();
            if p.eat(']') {
                return Ok(items);
            }
            loop {
                items.push(match p.peek() {
                    Some('{' | '<') => p.message()?,
                    _ => p.scalar()?,
                });
                if p.eat(']') {
                    return Ok(items);
                }
                if !p.eat(',') {
                    return p.err("expected `,` or `]` in a list", p.pos);
                }
            }
        })
    }

    /// A string (adjacent strings join), a number, or an identifier (`true`, an enum value).
    fn scalar(&mut self) -> Result<Node, PbtxtError> {
        let start = match self.peek() {
            Some(_) => self.pos,
            None => return self.err("expected a value", self.pos),
        };
        let (value, end) = match self.text[start..].chars().next() {
            Some('"' | '\'') => {
                let mut bytes = Vec::new();
                let mut end = start;
                while matches!(self.peek(), Some('"' | '\'')) {
                    self.string(&mut bytes)?;
                    end = self.pos;
                }
                match String::from_utf8(bytes) {
                    Ok(s) => (Value::Str(s), end),
                    Err(_) => return self.err("the string is not UTF-8", start),
                }
            }
            _ => (self.number_or_ident(start)?, self.pos),
        };
        Ok(Node {
            value,
            loc: self.loc(start..end),
        })
    }

    fn number_or_ident(&mut self, start: usize) -> Result<Value, PbtxtError> {
        let negative = self.eat('-');
        let at = self.pos;
        let rest = &self.text[at..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-')))
            .unwrap_or(rest.len());
        // `1e-5`: a sign only after an exponent letter.
        let len = rest[..len]
            .char_indices()
            .find(|&(i, c)| matches!(c, '+' | '-') && !(i > 0 && rest[..i].ends_with(['e', 'E'])))
            .map_or(len, |(i, _)| i);
        let word = &rest[..len];
        if word.is_empty() && rest.starts_with('$') {
            let why =
                "a `$` template placeholder stands where a value must: check the filled-in file";
            return self.err(why, start);
        }
        if word.is_empty() {
            return self.err("expected a value", start);
        }
        self.pos = at + len;
        let sign = if negative { -1.0 } else { 1.0 };
        let lower = word.to_ascii_lowercase();
        if matches!(lower.as_str(), "inf" | "infinity") {
            return Ok(Value::Float(sign * f64::INFINITY));
        }
        if lower == "nan" {
            return Ok(Value::Float(f64::NAN));
        }
        if word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            if negative {
                return self.err(format!("`-{word}` is not a number"), start);
            }
            return Ok(match word {
                "true" | "True" | "t" => Value::Bool(true),
                "false" | "False" | "f" => Value::Bool(false),
                _ => Value::Str(word.to_string()),
            });
        }
        number(word, negative)
            .ok_or(())
            .or_else(|()| self.err(format!("`{word}` is not a number"), start))
    }

    /// One quoted string, its escapes decoded into `out`.
    fn string(&mut self, out: &mut Vec<u8>) -> Result<(), PbtxtError> {
        let start = self.pos;
        let quote = self.text.as_bytes()[start];
        let bytes = self.text.as_bytes();
        let mut i = start + 1;
        loop {
            match bytes.get(i) {
                None | Some(b'\n') => return self.err("string without its closing quote", start),
                Some(&b) if b == quote => break,
                Some(b'\\') => i = self.escape(i, out)?,
                Some(&b) => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        self.pos = i + 1;
        Ok(())
    }

    /// The escape at `at` (a backslash) into `out`; returns where the text goes on.
    fn escape(&self, at: usize, out: &mut Vec<u8>) -> Result<usize, PbtxtError> {
        let bytes = self.text.as_bytes();
        let Some(&c) = bytes.get(at + 1) else {
            return self.err("a string ends in `\\`", at);
        };
        let simple = match c {
            b'a' => Some(7),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(11),
            b'\\' | b'\'' | b'"' | b'?' => Some(c),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            return Ok(at + 2);
        }
        let digits = |from: usize, max: usize, ok: fn(&u8) -> bool| {
            bytes[from..].iter().take(max).take_while(|b| ok(b)).count()
        };
        let (from, len, radix) = match c {
            b'0'..=b'7' => (at + 1, digits(at + 1, 3, |b| (b'0'..=b'7').contains(b)), 8),
            b'x' | b'X' => (at + 2, digits(at + 2, 2, u8::is_ascii_hexdigit), 16),
            b'u' => (at + 2, digits(at + 2, 4, u8::is_ascii_hexdigit), 16),
            b'U' => (at + 2, digits(at + 2, 8, u8::is_ascii_hexdigit), 16),
            _ => return self.err(format!("unknown escape `\\{}`", c as char), at),
        };
        let code = u32::from_str_radix(&self.text[from..from + len], radix).ok();
        let Some(code) = code.filter(|_| len > 0) else {
            return self.err("an escape without its digits", at);
        };
        if matches!(c, b'u' | b'U') {
            let Some(ch) = char::from_u32(code) else {
                return self.err("an escape that is not a Unicode character", at);
            };
            out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
        } else {
            // Octal above `\377` overflows a byte: protobuf refuses it too.
            let Ok(byte) = u8::try_from(code) else {
                return self.err("an octal escape above \\377", at);
            };
            out.push(byte);
        }
        Ok(from + len)
    }
}

/// A decimal, hex (`0x1F`) or octal (`017`) integer, or a float (`1.5`, `1e3`, `2.5f`).
fn number(word: &str, negative: bool) -> Option<Value> {
    let sign = if negative { -1 } else { 1 };
    let int = if let Some(hex) = word.strip_prefix("0x").or(word.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()
    } else if word.len() > 1 && word.starts_with('0') && word.bytes().all(|b| b.is_ascii_digit()) {
        i64::from_str_radix(&word[1..], 8).ok()
    } else {
        word.parse::<i64>().ok()
    };
    if let Some(i) = int {
        return Some(Value::Int(sign * i));
    }
    let float = word.trim_end_matches(['f', 'F']);
    let ok = float.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    let f: f64 = float.parse().ok().filter(|_| ok)?;
    Some(Value::Float(if negative { -f } else { f }))
}

/// A field's occurrences as one entry: a single value, a sequence, or a map field's entries as a
/// mapping from each entry's key.
fn group(o: Occurrence) -> (Node, Node) {
    if let Some(map) = map_entries(&o.values) {
        return (o.name, map);
    }
    if !o.list && o.values.len() == 1 {
        let mut values = o.values;
        if let Some(value) = values.pop() {
            return (o.name, value);
        }
        return (
            o.name.clone(),
            Node {
                value: Value::Null,
                loc: o.name.loc,
            },
        );
    }
    let loc = o
        .values
        .iter()
        .map(|v| v.loc)
        .reduce(Loc::join)
        .unwrap_or(o.name.loc);
    let value = Node {
        value: Value::Seq(o.values),
        loc,
    };
    (o.name, value)
}

/// Map entries: every value a message of a scalar `key` and at most a `value` besides.
fn map_entries(values: &[Node]) -> Option<Node> {
    let mut out: Vec<(Node, Node)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for v in values {
        let Value::Map(fields) = &v.value else {
            return None;
        };
        let names = fields.iter().filter_map(|(k, _)| k.as_str());
        if names.clone().any(|n| n != "key" && n != "value") {
            return None;
        }
        let key = v.get("key")?;
        let text = key.scalar_text()?;
        let value = v.get("value").cloned().unwrap_or(Node {
            value: Value::Null,
            loc: key.loc,
        });
        let key = Node {
            value: Value::Str(text.clone()),
            loc: key.loc,
        };
        match index.get(&text) {
            Some(&i) => out[i] = (key, value),
            None => {
                index.insert(text, out.len());
                out.push((key, value));
            }
        }
    }
    let loc = values.iter().map(|v| v.loc).reduce(Loc::join)?;
    Some(Node {
        value: Value::Map(out),
        loc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    fn read(text: &str) -> (Sources, Result<Node, PbtxtError>) {
        let mut s = Sources::default();
        let f = s.add("config.pbtxt", text);
        let out = parse(f, text);
        (s, out)
    }

    fn at<'n>(node: &'n Node, path: &[&str]) -> &'n Node {
        path.iter().fold(node, |n, k| n.get(k).expect(k))
    }

    #[test]
    fn triton_config_reads_as_a_tree_with_spans() {
        let text = r#"name: "tensorrt_llm" # the model
backend: "tensorrtllm"
max_batch_size: 64
model_transaction_policy { decoupled: True }
input [
  { name: "input_ids" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "input_lengths", dims: [ 1 ] reshape: { shape: [ ] } }
]
instance_group [ { count: 1 kind : KIND_CPU } ]
parameters {
  key: "kv_cache_free_gpu_mem_fraction"
  value: { string_value: "0.85" }
}
parameters: {
  key: "gpt_model_path"
  value: < string_value: '${engine_dir}' >
}
"#;
        let (_s, doc) = read(text);
        let doc = doc.expect("valid");
        assert_eq!(
            doc.get("backend").and_then(Node::as_str),
            Some("tensorrtllm")
        );
        assert_eq!(
            doc.get("max_batch_size").map(|n| &n.value),
            Some(&Value::Int(64))
        );
        let policy = at(&doc, &["model_transaction_policy", "decoupled"]);
        assert_eq!(policy.value, Value::Bool(true));
        let Value::Seq(inputs) = &doc.get("input").expect("input").value else {
            panic!("input is a list");
        };
        assert_eq!(inputs.len(), 2);
        let dims = at(&inputs[0], &["dims"]);
        assert!(
            matches!(&dims.value, Value::Seq(d) if d.len() == 1 && d[0].value == Value::Int(-1))
        );
        assert_eq!(&text[dims.loc.range()], "-1");
        assert_eq!(at(&inputs[0], &["data_type"]).as_str(), Some("TYPE_INT32"));
        assert!(
            matches!(&doc.get("instance_group").expect("group").value, Value::Seq(g) if g.len() == 1)
        );
        // The map field: keyed by each entry's key, the value message under it.
        let fraction = at(
            &doc,
            &[
                "parameters",
                "kv_cache_free_gpu_mem_fraction",
                "string_value",
            ],
        );
        assert_eq!(fraction.as_str(), Some("0.85"));
        assert_eq!(&text[fraction.loc.range()], "\"0.85\"");
        let path = at(&doc, &["parameters", "gpt_model_path", "string_value"]);
        assert_eq!(path.as_str(), Some("${engine_dir}"));
        assert_eq!(&text[path.loc.range()], "'${engine_dir}'");
        let Value::Map(params) = &doc.get("parameters").expect("parameters").value else {
            panic!("parameters is a mapping");
        };
        let key = &params[1].0;
        assert_eq!(&text[key.loc.range()], "\"gpt_model_path\"");
    }

    #[test]
    fn scalars_take_protobuf_forms() {
        let (_s, doc) = read(
            "a: 0x10 b: 017 c: -2.5e-1 d: 1.5f e: -inf f: \"x\" 'y' \"\\n\\x41\\101\\u00e9\" g: t h: 9223372036854775807",
        );
        let doc = doc.expect("valid");
        let v = |k: &str| doc.get(k).map(|n| n.value.clone());
        assert_eq!(v("a"), Some(Value::Int(16)));
        assert_eq!(v("b"), Some(Value::Int(15)));
        assert_eq!(v("c"), Some(Value::Float(-0.25)));
        assert_eq!(v("d"), Some(Value::Float(1.5)));
        assert_eq!(v("e"), Some(Value::Float(f64::NEG_INFINITY)));
        assert_eq!(v("f"), Some(Value::Str("xy\nAAé".into())));
        assert_eq!(v("g"), Some(Value::Bool(true)));
        assert_eq!(v("h"), Some(Value::Int(i64::MAX)));
    }

    #[test]
    fn a_field_named_twice_is_a_list_and_a_map_key_named_twice_keeps_the_last() {
        let (_s, doc) = read(
            "dims: 1 dims: 2\nparameters { key: \"k\" value { string_value: \"1\" } }\nparameters { key: \"k\" value { string_value: \"2\" } }",
        );
        let doc = doc.expect("valid");
        assert!(matches!(&doc.get("dims").expect("dims").value, Value::Seq(d) if d.len() == 2));
        let Value::Map(params) = &doc.get("parameters").expect("p").value else {
            panic!("a mapping");
        };
        assert_eq!(params.len(), 1);
        assert_eq!(at(&params[0].1, &["string_value"]).as_str(), Some("2"));
    }

    #[test]
    fn broken_text_is_an_error_at_its_place() {
        let cases = [
            ("name \"x\"", "expected `:` after the field name", 5),
            ("a { b: 1", "missing `}`", 8),
            ("a: \"open\nb: 1", "string without its closing quote", 3),
            ("a: [1 2]", "expected `,` or `]` in a list", 6),
            ("a: 12abc", "`12abc` is not a number", 3),
            ("a: \"\\q\"", "unknown escape `\\q`", 4),
            ("a: \"\\777\"", "an octal escape above \\377", 4),
            ("a: -foo", "`-foo` is not a number", 3),
            ("}", "expected a field name", 0),
            ("a:", "expected a value", 2),
            (
                "max_batch_size: ${n}",
                "a `$` template placeholder stands where a value must: check the filled-in file",
                16,
            ),
        ];
        for (text, message, start) in cases {
            let (_s, out) = read(text);
            let e = out.expect_err(text);
            assert_eq!(
                (e.message.as_str(), e.loc.start),
                (message, start),
                "{text}"
            );
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}{}", "a {".repeat(200), "}".repeat(200));
        let (_s, out) = read(&deep);
        let e = out.expect_err("too deep");
        assert_eq!(e.message, "nested deeper than 64 levels");
        let ok = format!("{}{}", "a {".repeat(60), "}".repeat(60));
        assert!(read(&ok).1.is_ok());
    }
}

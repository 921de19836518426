//! The object under review as the extractor's YAML tree, written straight from the parsed JSON:
//! compact JSON text for spans, and a node for every value pointing at its place in that text.
//! Going through the YAML reader instead would apply its node and depth budgets to fields kvlint
//! never reads, and cost a second parse.

use crate::source::{FileId, Loc};
use crate::yaml::{Node, Value};
use serde_json::Value as Json;

/// Writes `value` as compact JSON and returns the text with its tree. Recursion follows the
/// value's nesting, which [`super::prune`] bounds before the body is parsed.
pub fn to_tree(file: FileId, value: &Json) -> (String, Node) {
    let mut text = String::new();
    let node = write(file, value, &mut text);
    (text, node)
}

fn write(file: FileId, value: &Json, out: &mut String) -> Node {
    let start = out.len();
    let value = match value {
        Json::Null => {
            out.push_str("null");
            Value::Null
        }
        Json::Bool(b) => {
            out.push_str(if *b { "true" } else { "false" });
            Value::Bool(*b)
        }
        Json::Number(n) => {
            out.push_str(&n.to_string());
            match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            }
        }
        Json::String(s) => {
            quote(s, out);
            Value::Str(s.clone())
        }
        Json::Array(items) => {
            out.push('[');
            let mut nodes = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                nodes.push(write(file, item, out));
            }
            out.push(']');
            Value::Seq(nodes)
        }
        Json::Object(map) => {
            out.push('{');
            let mut entries = Vec::with_capacity(map.len());
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let key_start = out.len();
                quote(k, out);
                let key = Node {
                    value: Value::Str(k.clone()),
                    loc: Loc::new(file, key_start..out.len()),
                };
                out.push(':');
                entries.push((key, write(file, v, out)));
            }
            out.push('}');
            Value::Map(entries)
        }
    };
    Node {
        value,
        loc: Loc::new(file, start..out.len()),
    }
}

fn quote(s: &str, out: &mut String) {
    // Serializing a string cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    #[test]
    fn every_value_points_at_its_own_text() {
        let v: Json = serde_json::from_str(
            r#"{"kind":"Pod","spec":{"args":["--tp","8","é \"q\""],"n":1.5,"b":true}}"#,
        )
        .expect("json");
        let mut sources = Sources::default();
        let (text, node) = to_tree(FileId(0), &v);
        sources.add("x.json", text.clone());
        assert_eq!(serde_json::from_str::<Json>(&text).expect("valid"), v);
        let args = node.get("spec").and_then(|s| s.get("args")).expect("args");
        let Value::Seq(items) = &args.value else {
            panic!("not a list")
        };
        assert_eq!(sources.text(items[1].loc), "\"8\"");
        assert_eq!(items[2].as_str(), Some("é \"q\""));
        assert_eq!(sources.text(node.get("kind").expect("kind").loc), "\"Pod\"");
    }
}

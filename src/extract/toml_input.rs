//! TOML deployment files (Fly.io's `fly.toml`) read into the same spanned tree YAML gives
//! (`yaml::Node`), so platform paths reach into them as into YAML, as `pbtxt` does for protobuf
//! text. The `toml` crate's `DeTable` keeps a byte span on every key and value.
//!
//! Only the names `kind` gives this reader are read: most TOML files in a repository
//! (`Cargo.toml`, `pyproject.toml`, `kvlint.toml` itself) are no deployment.

use crate::source::{FileId, Loc};
use crate::yaml::{Node, Value};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// Deepest nesting of tables and arrays, as the YAML reader's budget.
const MAX_DEPTH: usize = 64;

/// Text that is not TOML, with where reading stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct TomlError {
    pub message: String,
    pub loc: Loc,
}

/// TOML files that are no deployment, whatever a platform's glob says: kvlint's own
/// configuration and build manifests.
const NEVER: &[&str] = &["kvlint.toml", "cargo.toml", "pyproject.toml"];

/// Whether a file is a TOML deployment: its name is `*.toml` and a platform names it in its
/// `recognize.files` (`fly.toml`); other TOML files are never read as inputs.
pub fn is_deployment_name(name: &str) -> bool {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    if !lower.ends_with(".toml") || NEVER.contains(&lower.as_str()) {
        return false;
    }
    crate::platform::registry().all().any(|p| {
        let r = &p.recognize;
        let names_toml = r
            .files
            .iter()
            .any(|g| g.to_ascii_lowercase().ends_with(".toml"));
        names_toml && r.file_matches(base)
    })
}

/// Reads a whole TOML document; its root is a mapping spanning the text.
pub fn parse(file: FileId, text: &str) -> Result<Node, TomlError> {
    let doc = DeTable::parse(text).map_err(|e| TomlError {
        message: e.message().to_string(),
        loc: Loc::new(file, e.span().unwrap_or(0..0)),
    })?;
    let whole = Loc::new(file, 0..text.len());
    let root = table(file, doc.get_ref(), whole, 0)?;
    Ok(root)
}

/// A table as a mapping, its entries in the order the crate keeps them.
fn table(file: FileId, t: &DeTable, loc: Loc, depth: usize) -> Result<Node, TomlError> {
    if depth > MAX_DEPTH {
        return Err(TomlError {
            message: format!("nested deeper than {MAX_DEPTH} tables and arrays"),
            loc,
        });
    }
    let mut entries = Vec::with_capacity(t.len());
    for (k, v) in t.iter() {
        let key = Node {
            value: Value::Str(k.get_ref().to_string()),
            loc: Loc::new(file, k.span()),
        };
        entries.push((key, value(file, v, depth + 1)?));
    }
    Ok(Node {
        value: Value::Map(entries),
        loc,
    })
}

/// A value at its span. A datetime, which no engine option takes, is its text.
fn value(file: FileId, v: &Spanned<DeValue>, depth: usize) -> Result<Node, TomlError> {
    let loc = Loc::new(file, v.span());
    let value = match v.get_ref() {
        DeValue::String(s) => Value::Str(s.to_string()),
        DeValue::Integer(i) => integer(i.as_str(), i.radix()),
        DeValue::Float(f) => float(f.as_str()),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(d) => Value::Str(d.to_string()),
        DeValue::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                out.push(value(file, item, depth + 1)?);
            }
            Value::Seq(out)
        }
        DeValue::Table(t) => return table(file, t, loc, depth),
    };
    Ok(Node { value, loc })
}

/// An integer as its digits give it; one past `i64` keeps its text.
fn integer(digits: &str, radix: u32) -> Value {
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    i64::from_str_radix(&clean, radix).map_or(Value::Str(clean), Value::Int)
}

fn float(text: &str) -> Value {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    clean
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .map_or(Value::Str(clean), Value::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'t>(text: &'t str, n: &Node) -> &'t str {
        &text[n.loc.range()]
    }

    #[test]
    fn keys_and_values_keep_their_spans() {
        let text = "app = \"x\"\n[[vm]]\n  size = \"a100-40gb\"\n  memory = 8_192\n\
                    [experimental]\ncmd = [\"vllm\", \"serve\"]\n";
        let root = parse(FileId(0), text).unwrap();
        let vm = root.get("vm").unwrap();
        let Value::Seq(vms) = &vm.value else {
            panic!("{vm:?}")
        };
        let size = vms[0].get("size").unwrap();
        assert_eq!(size.as_str(), Some("a100-40gb"));
        assert_eq!(at(text, size), "\"a100-40gb\"");
        assert_eq!(vms[0].get("memory").unwrap().value, Value::Int(8192));
        let cmd = root.get("experimental").and_then(|e| e.get("cmd")).unwrap();
        let Value::Seq(words) = &cmd.value else {
            panic!("{cmd:?}")
        };
        assert_eq!(at(text, &words[1]), "\"serve\"");
        let Value::Map(entries) = &root.value else {
            panic!()
        };
        let key = entries
            .iter()
            .find(|(k, _)| k.as_str() == Some("app"))
            .unwrap();
        assert_eq!(at(text, &key.0), "app");
    }

    #[test]
    fn only_fly_toml_is_a_deployment() {
        assert!(is_deployment_name("deploy/fly.toml"));
        assert!(!is_deployment_name("kvlint.toml"));
        assert!(!is_deployment_name("Cargo.toml"));
        assert!(!is_deployment_name("pyproject.toml"));
    }

    #[test]
    fn broken_toml_says_where() {
        let err = parse(FileId(0), "a = \n").unwrap_err();
        assert!(err.loc.start <= 4, "{err:?}");
    }
}

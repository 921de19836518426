//! Another object of the same input that a site names (a NIMService's NIMCache, a KAITO
//! Workspace's ConfigMap), read as if it were held under a key of the site.

use crate::platform::path::first_of;
use crate::platform::Link;
use crate::source::{FileId, SourceFile};
use crate::yaml::{Node, Value};

/// Why the linked object is not there.
pub enum Missing {
    /// The site names no object.
    Name(String),
    /// The object it names is not in the input, or holds no such text.
    Object(String),
}

/// The site with the object it links to (same input, by kind and name) under the link's key: the
/// object itself, or the YAML document held in its string at `text`.
pub fn linked(
    link: &Link,
    file: FileId,
    src: &SourceFile,
    doc: &Node,
    node: &Node,
) -> Result<Node, Missing> {
    let name = first_of(std::slice::from_ref(&link.name), doc, node).and_then(Node::scalar_text);
    let (kind, path) = (&link.kind, &link.name);
    let Some(name) = name else {
        return Err(Missing::Name(format!(
            "it names no {kind} (`{path}`), and what the launch needs from one is not known here"
        )));
    };
    let is_it = |d: &Node| {
        d.get("kind").and_then(Node::as_str) == Some(kind.as_str())
            && d.get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Node::scalar_text)
                == Some(name.clone())
    };
    let missing = |what: &str| {
        Missing::Object(format!(
            "the {kind} `{name}` it names (`{path}`) is not in this input{what}, and what the \
             launch needs from it is not known here: check both files together"
        ))
    };
    let found = crate::yaml::documents(file, src).flatten().find(is_it);
    let Some(other) = found else {
        return Err(missing(""));
    };
    let other = match link.text.split_last() {
        None => other,
        Some((last, keys)) => held_yaml(file, src, &other, keys, last)
            .ok_or_else(|| missing(&format!(" with YAML at `{}`", link.text.join("` / `"))))?,
    };
    let Value::Map(entries) = &node.value else {
        return Err(missing(""));
    };
    let key = Node {
        value: Value::Str(link.key.clone()),
        loc: node.loc,
    };
    let mut entries = entries.clone();
    entries.push((key, other));
    Ok(Node {
        value: Value::Map(entries),
        loc: node.loc,
    })
}

/// The YAML document of the block string at `keys` then `last` in `obj`, with its places in the
/// input.
fn held_yaml(
    file: FileId,
    src: &SourceFile,
    obj: &Node,
    keys: &[String],
    last: &str,
) -> Option<Node> {
    let parent = keys.iter().try_fold(obj, |n, k| n.get(k))?;
    let Value::Map(entries) = &parent.value else {
        return None;
    };
    let (key, _) = entries.iter().find(|(k, _)| k.as_str() == Some(last))?;
    let text = crate::extract::k8s::mounts::block_of(&src.text, key.loc);
    let held = SourceFile::new(src.name.clone(), text);
    crate::yaml::parse_document(file, &held).ok()
}

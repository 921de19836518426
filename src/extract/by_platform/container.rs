//! Containers a platform file knows by their image (`recognize.images`): a NIM, a DJL LMI or a
//! Runpod worker container whose server reads its settings from env, in any Kubernetes workload
//! or compose service. Reached only for a container that gave no launch of its own.

use super::read_said;
use crate::extract::Extracted;
use crate::platform::Platform;
use crate::source::{FileId, SourceFile};
use crate::yaml::{Node, Value};

/// The launches of a container (a Kubernetes container, a compose service) that gave none of
/// its own, read by the first platform that knows its image; `None` when none does.
pub fn container(
    file: FileId,
    src: &SourceFile,
    c: &Node,
) -> Option<(&'static Platform, Extracted)> {
    let image = c.get("image").and_then(Node::scalar_text)?;
    let registry = crate::platform::registry();
    let p = registry.containers().find(|p| {
        let r = &p.recognize;
        image_matches(&r.images, &image) && !image_matches(&r.not_images, &image) && runs(p, c)
    })?;
    let c = &as_container(c);
    Some((p, read_said(p, file, src, c, None)))
}

/// Whether `image` (`repo:tag`, `repo@digest`) is one the globs name; a glob without a tag
/// matches the repository with any tag.
fn image_matches(globs: &[String], image: &str) -> bool {
    let repo = image.split('@').next().unwrap_or(image);
    let untagged = match repo.rsplit_once(':') {
        Some((r, tag)) if !tag.contains('/') => r,
        _ => repo,
    };
    globs
        .iter()
        .any(|g| wildcard(g, image) || wildcard(g, untagged))
}

/// `*` matches any run of characters (`/` too); everything else itself. Read for each container
/// that gave no launch, so no pattern is compiled.
fn wildcard(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A container runs the platform's server: it gives no command (the image's own runs), or a
/// word of its command is one the platform names.
fn runs(p: &Platform, c: &Node) -> bool {
    let named = &p.recognize.commands;
    let lines: Vec<String> = ["command", "entrypoint", "args"]
        .iter()
        .filter_map(|k| c.get(k))
        .flat_map(|n| match &n.value {
            Value::Seq(items) => items.iter().filter_map(Node::scalar_text).collect(),
            _ => n.scalar_text().into_iter().collect::<Vec<_>>(),
        })
        .collect();
    if c.get("command").is_none() && c.get("entrypoint").is_none() {
        return true;
    }
    lines.iter().any(|l| {
        l.split(|ch: char| ch.is_whitespace() || ch == ';' || ch == '&' || ch == '|')
            .any(|w| {
                named
                    .iter()
                    .any(|n| w.rsplit('/').next() == Some(n.as_str()))
            })
    })
}

/// A compose service as a Kubernetes container is read: its `environment` is its `env`.
fn as_container(c: &Node) -> Node {
    let Value::Map(entries) = &c.value else {
        return c.clone();
    };
    let entries = entries
        .iter()
        .map(|(k, v)| match k.as_str() {
            Some("environment") => {
                let key = Node {
                    value: Value::Str("env".into()),
                    loc: k.loc,
                };
                (key, v.clone())
            }
            _ => (k.clone(), v.clone()),
        })
        .collect();
    Node {
        value: Value::Map(entries),
        loc: c.loc,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_match_with_or_without_their_tag() {
        let nim = ["nvcr.io/nim/*".to_string()];
        assert!(image_matches(
            &nim,
            "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8.4"
        ));
        assert!(!image_matches(&nim, "docker.io/nvcr.io-mirror/nim:1"));
        let djl = ["*djl-inference:*lmi*".to_string()];
        let ecr =
            "763104351884.dkr.ecr.us-west-2.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128";
        assert!(image_matches(&djl, ecr));
        assert!(!image_matches(
            &djl,
            "763104351884.dkr.ecr.aws/djl-inference:0.33.0-neuronx"
        ));
        let runpod = ["runpod/worker-sglang*".to_string()];
        assert!(image_matches(&runpod, "runpod/worker-sglang"));
        assert!(!image_matches(&runpod, "runpod/worker-v1-vllm:v2"));
    }
}

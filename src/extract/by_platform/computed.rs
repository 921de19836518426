//! Command lines as Docker runs them (ENTRYPOINT, then CMD) and values a platform computes when it
//! deploys the file (CloudFormation's `!Ref`, `!Sub`), which kvlint cannot see.

use super::{first_of, scalar, synthetic_words, words_of, MappedWord};
use crate::platform::Site;
use crate::source::{FileId, SourceFile};
use crate::yaml::{Node, Value};

/// The command an engine image starts when the site gives none, with `first` its first argument
/// (`extract::images`: `vllm serve` of a `vllm-openai` image whatever follows; the server of an
/// image named for its engine where only options follow).
pub(super) fn image_entrypoint(
    image: &Node,
    first: Option<&MappedWord>,
) -> Option<Vec<MappedWord>> {
    let first = first.map(|w| w.chars.as_str());
    let engine = crate::extract::images::entrypoint(image.as_str()?, first)?;
    Some(synthetic_words(
        crate::extract::images::server_command(engine),
        image.loc,
    ))
}

/// Docker's ENTRYPOINT then CMD: the site's `entrypoint`, else the image's own (`vllm serve` of
/// a `vllm/vllm-openai` image; an image kvlint does not know runs what kvlint cannot see, so
/// its CMD alone is read, which names the launch when it is an engine's command line).
pub(super) fn entrypoint_and_command(
    site: &Site,
    file: FileId,
    src: &SourceFile,
    doc: &Node,
    node: &Node,
) -> Vec<MappedWord> {
    let command = first_of(&site.command, doc, node)
        .map(|line| words_of(file, src, line))
        .unwrap_or_default();
    let mut words = match first_of(&site.entrypoint, doc, node) {
        Some(e) => words_of(file, src, e),
        None => first_of(&site.image, doc, node)
            .and_then(|i| image_entrypoint(i, command.first()))
            .unwrap_or_default(),
    };
    words.extend(command);
    words
}

/// A one-key mapping where a value belongs (`{"Ref": "ModelId"}`, `!Sub "..."`): a value the
/// platform computes when it deploys the file, as a word kvlint cannot see.
pub(crate) fn computed(src: &SourceFile, node: &Node) -> Option<MappedWord> {
    let why = computed_why(node)?;
    if let Some(w) = substituted(src, node, &why) {
        return Some(w);
    }
    let mut w = synthetic_words(&["?"], node.loc).pop()?;
    w.unresolved = vec![(0, why)];
    Some(w)
}

/// `Fn::Sub` of a string (`!Sub "--max-model-len=${MaxLen}"`): its text, unknown from its first
/// `${...}` on, so that a flag written before the variable stays that flag; without one it is
/// the text itself.
fn substituted(src: &SourceFile, node: &Node, why: &str) -> Option<MappedWord> {
    let inner = node.get("Fn::Sub").filter(|i| i.as_str().is_some())?;
    let mut w = scalar::word(src, inner)?;
    if let Some(at) = w.chars.as_str().find("${") {
        let index = w.chars.as_str()[..at].chars().count();
        w.unresolved = vec![(index, why.to_string())];
    }
    Some(w)
}

/// What [`computed`] says of a value: its function and argument (`Ref ModelId`).
pub(crate) fn computed_why(node: &Node) -> Option<String> {
    let Value::Map(entries) = &node.value else {
        return None;
    };
    let [(k, v)] = entries.as_slice() else {
        return None;
    };
    let function = k.as_str()?;
    let arg = v.scalar_text().unwrap_or_else(|| v.to_json().to_string());
    Some(format!(
        "{function} {arg} (computed when the stack is deployed)"
    ))
}

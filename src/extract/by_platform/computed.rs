//! A site's command line as words: Docker's ENTRYPOINT then CMD, a script's lines, a list or a
//! string split as a shell splits it; and the values in them kvlint cannot see: those a platform
//! computes when it deploys the file (CloudFormation's `!Ref`, `!Sub`) and placeholders it fills.

use super::{first_of, scalar, shell, synthetic_words, MappedWord};
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

/// A script as one word: a string, or a list of command lines the platform runs in sequence
/// (dstack's `commands`, which it joins with ` && `), joined by line breaks: the launches in
/// the lines, and the variables earlier lines set, read the same.
pub(super) fn script_word(src: &SourceFile, node: &Node) -> Option<MappedWord> {
    let Value::Seq(items) = &node.value else {
        return scalar::word(src, node);
    };
    let mut joined = MappedWord {
        chars: Default::default(),
        loc: node.loc,
        unresolved: Vec::new(),
        defaulted: false,
    };
    for w in items.iter().filter_map(|n| scalar::word(src, n)) {
        let at = joined.chars.len();
        joined
            .unresolved
            .extend(w.unresolved.into_iter().map(|(i, name)| (at + i, name)));
        joined.chars.extend(w.chars.iter());
        joined.chars.push(('\n', w.loc.end, w.loc.end));
    }
    Some(joined)
}

/// A list's words, or a string's as a shell splits it.
/// A word that is a mapping (a CloudFormation function, `{"Fn::Sub": ...}`) is a value kvlint
/// cannot see, kept in its place so that the words after it keep theirs.
pub(super) fn words_of(file: FileId, src: &SourceFile, line: &Node) -> Vec<MappedWord> {
    match &line.value {
        Value::Seq(items) => items
            .iter()
            .filter_map(|n| scalar::word(src, n).or_else(|| computed(src, n)))
            .collect(),
        Value::Map(_) => computed(src, line).into_iter().collect(),
        _ => scalar::word(src, line)
            .map(|w| shell::split_words(file, &w))
            .unwrap_or_default(),
    }
}

/// The names of the `${NAME}` and `$NAME` placeholders a value still holds, or its `{{ ... }}`
/// Go-template action: a template the platform fills before it starts (Triton's
/// fill_template.py, DJL's job variables, llmaz's `{{ .ModelPath }}`) left unfilled.
pub(crate) fn placeholders(text: &str) -> Vec<String> {
    // A Go template's action (`{{ .ModelPath }}`), which the platform's controller fills in.
    if let Some((_, rest)) = text.split_once("{{") {
        let inner = rest.split_once("}}").map_or(rest, |(i, _)| i);
        return vec![format!("{{{{{inner}}}}}")];
    }
    let word = |s: &str| {
        let n = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        let w = &s[..n];
        w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            .then(|| w.to_string())
    };
    text.match_indices('$')
        .filter_map(|(i, _)| {
            let rest = &text[i + 1..];
            match rest.strip_prefix('{') {
                Some(inner) => word(inner).and_then(|w| match inner[w.len()..].chars().next() {
                    Some('}') => Some(w),
                    Some('.' | '(' | '[' | ' ') => expression(inner),
                    _ => None,
                }),
                None => word(rest),
            }
        })
        .collect()
}

/// An HCL expression the HCL reader left as `${var.model}` / `${upper("x")}`: its text up to
/// the `}` that closes it. A shell's `${NAME:-x}` never reaches here (no `.`, `(`, `[` or space
/// after the name).
fn expression(inner: &str) -> Option<String> {
    let mut depth = 0usize;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(inner[..i].to_string()),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

//! A YAML string scalar as characters mapped back to the file bytes they were written at, so that
//! words inside `sh -c` strings and `args` strings point at their exact place.
//!
//! The decoders cover the common styles (plain, single- and double-quoted on one line, literal and
//! folded blocks); a decoding is used only when it reproduces the parser's value exactly, else every
//! character maps to the whole scalar, which is coarse but never wrong.

use crate::extract::shell::{Chars, MappedWord};
use crate::source::SourceFile;
use crate::yaml::Node;
use std::borrow::Cow;
use std::ops::Range;

type Mapped = Vec<(char, Range<usize>)>;

/// The scalar's text (`8` for an int) as a mapped word; `None` for null, sequences and mappings.
pub fn word(src: &SourceFile, node: &Node) -> Option<MappedWord> {
    // A string is read in place: one copy fewer per argv word.
    let value: Cow<str> = match node.as_str() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(node.scalar_text()?),
    };
    // A node built from another text (a `docker run -e` word read as a container's env) is not
    // in `src`: each character stands for the node's whole span.
    let Some(raw) = src.text.get(node.loc.range()) else {
        let chars = value.chars().map(|c| (c, node.loc.start, node.loc.end));
        return Some(MappedWord {
            chars: chars.collect(),
            loc: node.loc,
            unresolved: Vec::new(),
            defaulted: false,
        });
    };
    let base = node.loc.start;
    if let Some(chars) = verbatim(raw, base, &value) {
        return Some(MappedWord {
            chars,
            loc: node.loc,
            unresolved: Vec::new(),
            defaulted: false,
        });
    }
    // Decoded one style at a time, until one spells the value.
    let chars = quoted(raw, base)
        .and_then(|m| matches_value(m, &value, node.loc.end))
        .or_else(|| {
            block(&src.text, raw, base, false).and_then(|m| matches_value(m, &value, node.loc.end))
        })
        .or_else(|| {
            block(&src.text, raw, base, true).and_then(|m| matches_value(m, &value, node.loc.end))
        })
        .unwrap_or_else(|| value.chars().map(|c| (c, node.loc.range())).collect());
    Some(MappedWord {
        chars: chars
            .into_iter()
            .map(|(c, r)| (c, r.start, r.end))
            .collect(),
        loc: node.loc,
        unresolved: Vec::new(),
        defaulted: false,
    })
}

/// A one-line scalar written as its value, bare or quoted without escapes (`--tp`, `"2"`): what
/// the decoders below would map character by character, without building the map.
fn verbatim(raw: &str, base: usize, value: &str) -> Option<Chars> {
    if raw.contains('\n') {
        return None;
    }
    let (inner, at) = match raw.as_bytes().first() {
        Some(&q @ (b'"' | b'\'')) if raw.len() >= 2 && raw.ends_with(q as char) => {
            let escape = if q == b'"' { '\\' } else { '\'' };
            let inner = &raw[1..raw.len() - 1];
            (!inner.contains(escape)).then_some((inner, base + 1))?
        }
        Some(b'"' | b'\'') => return None,
        _ => (raw, base),
    };
    (inner == value).then(|| Chars::verbatim(inner, at))
}

/// The decoding if it spells `value`; block scalars may differ by trailing newlines (chomping).
fn matches_value(mut m: Mapped, value: &str, end: usize) -> Option<Mapped> {
    while m.last().is_some_and(|(c, _)| *c == '\n') && m.len() > value.chars().count() {
        m.pop();
    }
    while m.len() < value.chars().count() && value[..].ends_with('\n') {
        m.push(('\n', end..end));
    }
    m.iter().map(|(c, _)| *c).eq(value.chars()).then_some(m)
}

fn chars_at(text: &str, base: usize) -> impl Iterator<Item = (char, Range<usize>)> + '_ {
    text.char_indices()
        .map(move |(i, c)| (c, base + i..base + i + c.len_utf8()))
}

/// A one-line quoted scalar: `'it''s'` or `"a \"b\""`.
fn quoted(raw: &str, base: usize) -> Option<Mapped> {
    if raw.contains('\n') || raw.len() < 2 {
        return None;
    }
    // Check the quote before slicing: a one-character plain scalar such as `é` is two bytes long.
    let quote = raw.chars().next()?;
    if !matches!(quote, '\'' | '"') || !raw.ends_with(quote) {
        return None;
    }
    let inner = &raw[1..raw.len() - 1];
    let mut out = Vec::new();
    let mut it = chars_at(inner, base + 1).peekable();
    while let Some((c, r)) = it.next() {
        let escape = (quote == '\'' && c == '\'') || (quote == '"' && c == '\\');
        match (escape, it.next_if(|_| escape)) {
            (true, Some((e, er))) => out.push((unescape(quote, e)?, r.start..er.end)),
            (true, None) => return None,
            (false, _) => out.push((c, r)),
        }
    }
    Some(out)
}

/// The character a YAML escape stands for; `\u`, `\x` and friends are left to the fallback.
fn unescape(quote: char, e: char) -> Option<char> {
    match (quote, e) {
        ('\'', '\'') => Some('\''),
        ('"', '"' | '\\' | '/' | ' ') => Some(e),
        ('"', 'n') => Some('\n'),
        ('"', 't') => Some('\t'),
        ('"', 'r') => Some('\r'),
        ('"', '0') => Some('\0'),
        _ => None,
    }
}

/// A plain or block scalar whose span starts at its first content character: later lines lose the
/// first line's indentation (all of it when folding); `fold` joins lines with spaces and turns each
/// blank line into a newline (plain, `>`), else newlines stay (`|`).
fn block(text: &str, raw: &str, base: usize, fold: bool) -> Option<Mapped> {
    if raw.starts_with(['"', '\'']) {
        return None;
    }
    let indent = base - text[..base].rfind('\n').map_or(0, |i| i + 1);
    let mut lines: Vec<(Mapped, Range<usize>)> = Vec::new();
    let mut offset = base;
    for (n, line) in raw.split_inclusive('\n').enumerate() {
        let spaces = line.len() - line.trim_start_matches(' ').len();
        let cut = match (n, fold) {
            (0, _) => 0,
            (_, true) => spaces,
            (_, false) => spaces.min(indent),
        };
        let content = line[cut..].trim_end_matches('\n');
        let start = offset + cut;
        let nl = start + content.len();
        lines.push((chars_at(content, start).collect(), nl..nl + 1));
        offset += line.len();
    }
    Some(join_lines(lines, fold))
}

fn join_lines(lines: Vec<(Mapped, Range<usize>)>, fold: bool) -> Mapped {
    let mut out = Vec::new();
    let count = lines.len();
    for (i, (content, nl)) in lines.iter().enumerate() {
        let blank = content.is_empty();
        out.extend(content.iter().cloned());
        let next_blank = lines.get(i + 1).is_some_and(|(c, _)| c.is_empty());
        let last = i + 1 == count;
        match (fold, blank, next_blank || last) {
            (false, _, _) => out.push(('\n', nl.clone())),
            (true, true, _) => out.push(('\n', nl.clone())),
            (true, false, true) => {}
            (true, false, false) => out.push((' ', nl.clone())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scalar_written_as_its_value_maps_as_the_decoders_map_it() {
        // The decoders' answer, as `word` took it before the shortcut.
        let decoded = |raw: &str, value: &str| -> Chars {
            let m = quoted(raw, 0)
                .and_then(|m| matches_value(m, value, raw.len()))
                .or_else(|| {
                    block(raw, raw, 0, false).and_then(|m| matches_value(m, value, raw.len()))
                });
            m.unwrap_or_default()
                .into_iter()
                .map(|(c, r)| (c, r.start, r.end))
                .collect()
        };
        for (raw, value) in [
            ("--tp", "--tp"),
            ("\"2\"", "2"),
            ("'a b'", "a b"),
            ("\"\"", ""),
        ] {
            assert_eq!(verbatim(raw, 0, value), Some(decoded(raw, value)), "{raw}");
        }
        // Escapes, folded lines and a value that is not the text are left to the decoders.
        for (raw, value) in [
            ("\"a\\\"b\"", "a\"b"),
            ("'it''s'", "it's"),
            ("a\n  b", "a b"),
            ("0x1F", "31"),
        ] {
            assert_eq!(verbatim(raw, 0, value), None, "{raw}");
        }
    }
}

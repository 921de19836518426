//! Where engine words are written in a text: each pattern's words on one line outside comments,
//! or as the items of a block-style YAML list, with searchers built once per run.

use super::{BENCHMARKS, ENGINES, MENTIONS, NOT_ENGINES};
use memchr::memmem::Finder;
use std::ops::Range;
use std::sync::OnceLock;

/// A list of patterns with its searchers, built once per run: built per call they were a
/// twentieth of a 10,000-object render, where every workload's text is searched.
pub(super) struct Words {
    patterns: &'static [(&'static str, &'static str)],
    search: OnceLock<Searchers>,
}

struct Searchers {
    /// The first words that no other first word is part of: a line holds every word of a
    /// pattern only if it holds one of these.
    firsts: Vec<Finder<'static>>,
    /// Each pattern's words.
    words: Vec<Vec<Finder<'static>>>,
    comment: Finder<'static>,
}

impl Words {
    const fn new(patterns: &'static [(&'static str, &'static str)]) -> Self {
        Words {
            patterns,
            search: OnceLock::new(),
        }
    }

    fn searchers(&self) -> &Searchers {
        self.search.get_or_init(|| {
            let firsts: Vec<&str> = self
                .patterns
                .iter()
                .filter_map(|(p, _)| p.split(' ').next())
                .collect();
            let lone = |w: &&str| !w.is_empty() && !firsts.iter().any(|o| o != w && w.contains(o));
            let mut kept: Vec<&str> = firsts.iter().copied().filter(lone).collect();
            kept.dedup();
            Searchers {
                firsts: kept.into_iter().map(Finder::new).collect(),
                words: self
                    .patterns
                    .iter()
                    .map(|(p, _)| p.split(' ').map(Finder::new).collect())
                    .collect(),
                comment: Finder::new(" #"),
            }
        })
    }
}

pub(super) static ENGINE_WORDS: Words = Words::new(ENGINES);
pub(super) static ROUTER_WORDS: Words = Words::new(NOT_ENGINES);
pub(super) static BENCHMARK_WORDS: Words = Words::new(BENCHMARKS);

/// Where each pattern occurs outside comments, first occurrence per line.
pub(super) fn mentions(text: &str, list: &Words) -> Vec<(Range<usize>, &'static str)> {
    let mut out = Vec::new();
    let search = list.searchers();
    // Only the lines where a first word occurs are read: one search of the whole text per
    // word, not one per line. memchr's SIMD search: core's `match_indices` (Two-Way) cost 6
    // instructions a byte.
    let mut found: Vec<usize> = search
        .firsts
        .iter()
        .flat_map(|w| w.find_iter(text.as_bytes()))
        .collect();
    found.sort_unstable();
    // Each match's line start, read forward once (a search back from each match would be
    // quadratic on one long line).
    let (mut scanned, mut line_start) = (0, 0);
    let mut starts: Vec<usize> = Vec::new();
    for i in found {
        if let Some(n) = text[scanned..i].rfind('\n') {
            line_start = scanned + n + 1;
        }
        scanned = i;
        if starts.last() != Some(&line_start) {
            starts.push(line_start);
        }
    }
    for start in starts {
        let end =
            memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |n| start + n + 1);
        let line = &text[start..end];
        let code = search
            .comment
            .find(line.as_bytes())
            .map_or(line, |n| &line[..n]);
        // Each word of a pattern is in the line wherever the pattern is: a cheap test first.
        let hit = list
            .patterns
            .iter()
            .zip(&search.words)
            .filter(|(_, ws)| ws.iter().all(|w| w.find(code.as_bytes()).is_some()))
            .filter_map(|((p, what), _)| Some((find_words(code, p)?, *what)))
            .min_by_key(|(r, _)| r.start);
        if let Some((r, what)) = hit.filter(|(r, _)| !quiet(&code[..r.start])) {
            out.push((start + r.start..start + r.end, what));
        } else if let Some(hit) = block_list(text, start..end, list.patterns) {
            out.push(hit);
        }
    }
    out
}

/// A pattern's words as the items of a block-style YAML list, one per line (`- vllm` then
/// `- serve`), starting at the item on `line`.
fn block_list(
    text: &str,
    line: Range<usize>,
    patterns: &[(&str, &'static str)],
) -> Option<(Range<usize>, &'static str)> {
    let item = |r: &Range<usize>| -> Option<Range<usize>> {
        let l = &text[r.clone()];
        let dash = l.find("- ").filter(|&d| l[..d].trim().is_empty())?;
        let rest = &l[dash + 2..];
        let v = rest.trim();
        let unquoted = v.trim_matches(['"', '\'']);
        let lead = rest.len() - rest.trim_start().len();
        let quote = v.len() - v.trim_start_matches(['"', '\'']).len();
        let at = r.start + dash + 2 + lead + quote;
        Some(at..at + unquoted.len())
    };
    let first = item(&line)?;
    let mut lines = vec![first];
    let mut next = line.end;
    patterns.iter().find_map(|(p, what)| {
        let want: Vec<&str> = p.split(' ').collect();
        while lines.len() < want.len() && next < text.len() {
            let end = memchr::memchr(b'\n', &text.as_bytes()[next..])
                .map_or(text.len(), |n| next + n + 1);
            lines.push(item(&(next..end))?);
            next = end;
        }
        let all = want.len() > 1
            && lines.len() >= want.len()
            && lines.iter().zip(&want).all(|(r, w)| {
                text[r.clone()]
                    .strip_suffix(w)
                    .is_some_and(|d| d.is_empty() || d.ends_with('/'))
            });
        all.then(|| (lines[0].start..lines[want.len() - 1].end, *what))
    })
}

/// Where the words of `pattern` follow each other in `line`, however they are quoted or listed
/// (`vllm serve`, `["vllm", "serve"]`, `/usr/bin/vllm serve`); a one-word pattern (a module or
/// image name) may be part of a longer word (`vllm.entrypoints.openai.api_server`).
pub(super) fn find_words(line: &str, pattern: &str) -> Option<Range<usize>> {
    let sep = |c: char| c.is_whitespace() || "\"',[]".contains(c);
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut at = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (sep(c), at) {
            (true, Some(s)) => {
                words.push((s, &line[s..i]));
                at = None;
            }
            (false, None) => at = Some(i),
            _ => {}
        }
    }
    let want: Vec<&str> = pattern.split(' ').collect();
    words.windows(want.len()).find_map(|w| {
        let hit = match want[..] {
            [one] => w[0].1.contains(one),
            _ => w.iter().zip(&want).all(|((_, a), b)| {
                a.strip_suffix(b)
                    .is_some_and(|d| d.is_empty() || d.ends_with('/'))
            }),
        };
        hit.then(|| w[0].0..w[want.len() - 1].0 + w[want.len() - 1].1.len())
    })
}

/// Whether the words before a match make it a comment or an argument of a command that only
/// mentions engines (`echo "vllm serve ..."`): only the last command of the line counts.
fn quiet(before: &str) -> bool {
    if before.trim_start().starts_with('#') {
        return true;
    }
    let command = before
        .rsplit([';', '&', '|', '(', '`'])
        .next()
        .unwrap_or(before);
    MENTIONS.iter().any(|m| command.contains(m))
}

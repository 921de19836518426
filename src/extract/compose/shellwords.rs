//! A compose `command` or `entrypoint` string split into argv words as compose splits it:
//! compose-go `types/command.go` `ShellCommand` takes a string through mattn/go-shellwords
//! `Parse`, with neither variable nor backtick expansion (`ParseEnv`, `ParseBacktick` off). So no
//! shell runs: quotes are removed, a backslash escapes the next character (`\t` and `\n` become a
//! tab and a newline), `$(...)` and backticks stay as written, and an unquoted `;`, `&`, `|`, `<`
//! or `>` ends the command (what follows it is dropped, as compose drops it).
//!
//! A caller's default (`${ARGS:---enforce-eager --max-model-len 4096}`) is split like any text,
//! and each word made of its characters names the variable, as a caller's default: what the
//! words are when the shell that runs compose sets nothing.

use super::interpolation::{Ch, Interpolated, Unknown};
use crate::extract::shell::{Chars, MappedWord};
use crate::source::{FileId, Loc};
use std::collections::HashMap;

#[derive(Default)]
struct Word {
    chars: Vec<Ch>,
    unresolved: Vec<(usize, String)>,
    /// The bytes the word was read from, quotes included.
    span: Option<(usize, usize)>,
    /// A quote was closed: `""` is a word of its own.
    quoted: bool,
}

/// The words of `text`, each with the unknown values it holds; `Err` when go-shellwords refuses
/// the string (an unclosed quote, a stray parenthesis), which makes compose refuse the file.
pub fn split(file: FileId, text: Interpolated) -> Result<Vec<MappedWord>, String> {
    let mut words = Vec::new();
    let mut w = Word::default();
    let (mut escaped, mut single, mut double, mut back, mut dollar) =
        (false, false, false, false, false);
    let (defaults, unknown): (Vec<Unknown>, Vec<Unknown>) =
        text.unknown.into_iter().partition(|u| u.default.is_some());
    let defaults: HashMap<(usize, usize), String> = defaults
        .into_iter()
        .filter_map(|u| Some((u.default?, u.name)))
        .collect();
    let finish = |words: &mut Vec<MappedWord>, w: &mut Word| end_word(file, &defaults, words, w);
    let mut unknown = unknown.into_iter().peekable();
    for (i, ch) in text.chars.iter().copied().enumerate() {
        let c = ch.0;
        let quoted = single || double || back || dollar;
        if !escaped && !quoted && matches!(c, ' ' | '\t' | '\r' | '\n') {
            finish(&mut words, &mut w);
            continue;
        }
        w.span = Some(
            w.span
                .map_or((ch.1, ch.2), |(s, e)| (s.min(ch.1), e.max(ch.2))),
        );
        while let Some(u) = unknown.next_if(|u| u.at == i) {
            w.unresolved.push((w.chars.len(), u.name));
        }
        if escaped {
            escaped = false;
            if back || dollar {
                w.chars.push(('\\', ch.1, ch.2));
                w.chars.push(ch);
            } else {
                let c = match c {
                    't' => '\t',
                    'n' => '\n',
                    c => c,
                };
                w.chars.push((c, ch.1, ch.2));
            }
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            ')' if !single && !double && !back => {
                if !dollar {
                    return Err("a `)` closes no `$(`".into());
                }
                dollar = false;
                w.chars.push(ch);
            }
            '(' if !single && !double && !back => {
                let n = w.chars.len();
                let after_dollar =
                    n > 0 && w.chars[n - 1].0 == '$' && !(n > 1 && w.chars[n - 2].0 == '\\');
                if dollar || !after_dollar {
                    return Err("a `(` opens no `$(`".into());
                }
                dollar = true;
                w.chars.push(ch);
            }
            '"' if !single && !dollar && !back => {
                w.quoted |= double;
                double = !double;
            }
            '\'' if !double && !dollar && !back => {
                w.quoted |= single;
                single = !single;
            }
            ';' | '&' | '|' | '<' | '>' if !quoted => {
                if c == '>' && !w.chars.is_empty() && w.chars.iter().all(|c| c.0.is_ascii_digit()) {
                    w = Word::default(); // `2>`: the descriptor is no word
                }
                break;
            }
            '`' if !single && !double && !dollar => {
                back = !back;
                w.chars.push(ch);
            }
            _ => w.chars.push(ch),
        }
    }
    if escaped || single || double || back || dollar {
        return Err("a quote, `$(` or backtick is not closed".into());
    }
    finish(&mut words, &mut w);
    Ok(words)
}

/// Ends the word; each caller's default any of its characters come from is named where the
/// first of them stands.
fn end_word(
    file: FileId,
    defaults: &HashMap<(usize, usize), String>,
    words: &mut Vec<MappedWord>,
    w: &mut Word,
) {
    let mut word = std::mem::take(w);
    if word.chars.is_empty() && !word.quoted {
        return;
    }
    let known_but_defaults = word.unresolved.is_empty();
    if !defaults.is_empty() {
        let mut named: Vec<(usize, usize)> = Vec::new();
        for (i, c) in word.chars.iter().enumerate() {
            let Some(name) = defaults.get(&(c.1, c.2)) else {
                continue;
            };
            if !named.contains(&(c.1, c.2)) {
                named.push((c.1, c.2));
                word.unresolved.push((i, name.clone()));
            }
        }
        word.unresolved.sort_by_key(|(i, _)| *i);
    }
    let (start, end) = word.span.unwrap_or_default();
    words.push(MappedWord {
        chars: word.chars.into_iter().collect::<Chars>(),
        loc: Loc::new(file, start..end),
        defaulted: known_but_defaults && !word.unresolved.is_empty(),
        unresolved: word.unresolved,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Result<Vec<String>, String> {
        let chars = text
            .char_indices()
            .map(|(i, c)| (c, i, i + c.len_utf8()))
            .collect();
        let out = split(
            FileId(0),
            Interpolated {
                chars,
                unknown: Vec::new(),
            },
        )?;
        Ok(out.iter().map(|w| w.chars.as_str().to_string()).collect())
    }

    #[test]
    fn words_split_as_go_shellwords_splits_them() {
        // mattn/go-shellwords shellwords_test.go cases, with ParseEnv and ParseBacktick off.
        assert_eq!(
            words(r#"a "b c" 'd e' f\ g"#).unwrap(),
            ["a", "b c", "d e", "f g"]
        );
        assert_eq!(words(r#"a "" b"#).unwrap(), ["a", "", "b"]);
        assert_eq!(words(r"a\tb '\t'").unwrap(), ["a\tb", "\\t"]);
        assert_eq!(
            words("echo $(date +%s) `x y` $HOME").unwrap(),
            ["echo", "$(date +%s)", "`x y`", "$HOME"]
        );
        assert_eq!(
            words("vllm serve m; vllm serve n").unwrap(),
            ["vllm", "serve", "m"]
        );
        assert_eq!(words("a 2>/dev/null b").unwrap(), ["a"]);
        for bad in ["a 'b", "a \"b", "a (b)", "a )", "a\\"] {
            assert!(words(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn words_keep_their_spans_and_unknown_values() {
        let chars = "x '$(CTX)'"
            .char_indices()
            .map(|(i, c)| (c, i, i + 1))
            .collect();
        let out = split(
            FileId(0),
            Interpolated {
                chars,
                unknown: vec![Unknown {
                    at: 3,
                    name: "CTX".into(),
                    default: None,
                }],
            },
        )
        .unwrap();
        assert_eq!(out[1].chars.as_str(), "$(CTX)");
        assert_eq!(out[1].unresolved, [(0, "CTX".to_string())]);
        assert_eq!(out[1].loc.range(), 2..10);
    }

    #[test]
    fn each_word_of_a_callers_default_names_it() {
        // `x ${A:---a "b c"}y`, interpolated with A unknown: the default stands at bytes 2..17.
        let mut chars: Vec<Ch> = vec![('x', 0, 1), (' ', 1, 2)];
        chars.extend("--a \"b c\"".chars().map(|c| (c, 2, 17)));
        chars.push(('y', 17, 18));
        let why = "A (\"--a \\\"b c\\\"\" unless set by the shell that runs compose)";
        let out = split(
            FileId(0),
            Interpolated {
                chars,
                unknown: vec![Unknown {
                    at: 2,
                    name: why.into(),
                    default: Some((2, 17)),
                }],
            },
        )
        .unwrap();
        let got: Vec<(&str, usize, bool)> = out
            .iter()
            .map(|w| (w.chars.as_str(), w.unresolved.len(), w.defaulted))
            .collect();
        assert_eq!(got, [("x", 0, false), ("--a", 1, true), ("b cy", 1, true)]);
        assert_eq!(out[2].unresolved, [(0, why.to_string())]);
        assert_eq!(out[1].loc.range(), 2..17);
    }
}

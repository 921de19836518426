//! The output of a command substitution that only pipes text the script fixes through text
//! utilities: `TP=$(echo "$GPUS" | tr ',' '\n' | wc -l)` is `4` where `GPUS=0,1,2,3`.
//!
//! The pipeline starts with `echo`/`printf` or a here-string (`tr ',' '\n' <<< "$GPUS"`), and
//! each command is one [`textutil`] runs. Anything else in it (another command, a redirection, a
//! list, a nested substitution, a word the script does not fix) leaves the output unknown, as
//! every substitution was before. A caller's default (`GPU=${CUDA_VISIBLE_DEVICES:-0}`) in the
//! words makes the output what runs when the caller sets nothing, named by that default so it
//! stays `INP004` with its planned value.

use super::expand::{Field, Scope};
use super::lex::{self, Ch, ParamOp, Part, Tok, Word};
use super::textutil::{self, MAX_TEXT};

/// A substitution's output, trailing newlines removed (as `$( )` removes them), and the
/// caller's default it was worked out from, if any.
pub(super) struct Output {
    pub text: String,
    pub default: Option<String>,
}

/// The commands of a pipeline and the here-string of its first, as written.
struct Pipeline {
    commands: Vec<Vec<Ch>>,
    here: Option<Vec<Ch>>,
}

/// The argv of each command and the here-string's text, every word known.
struct Argvs {
    argvs: Vec<Vec<String>>,
    stdin: Option<String>,
    default: Option<String>,
}

/// What `raw` (`$(...)` or a backquoted command) writes, where its pipeline is one worked out
/// here. `split`: the word is field-split unless the substitution is quoted, which
/// [`Part::Subst`] does not say, so an output that splitting or pathname expansion would change
/// (or an empty one, no word at all unquoted) is left unknown there.
pub(super) fn output(scope: &mut Scope, raw: &[Ch], split: bool) -> Option<Output> {
    let span = (raw.first()?.start, raw.last()?.end);
    let pipeline = pipeline(&lex::substitution_body(raw)?)?;
    let mark = scope.mark();
    let read = read(scope, &pipeline);
    // The subshell's own assignments (`${N:=1}`) end with it.
    scope.undo(mark);
    let Argvs {
        argvs,
        mut stdin,
        default,
    } = read?;
    for argv in &argvs {
        if !scope.budget.step(span) {
            return None;
        }
        let out = textutil::run(argv, stdin.as_deref())?;
        if !scope.budget.bytes(out.len(), span) {
            return None;
        }
        stdin = Some(out);
    }
    let mut text = stdin?;
    text.truncate(text.trim_end_matches('\n').len());
    let changes = |c: char| matches!(c, ' ' | '\t' | '\n' | '*' | '?' | '[');
    if split && (text.is_empty() || text.contains(changes)) {
        return None;
    }
    // An empty output has no character to carry the default's name.
    if default.is_some() && text.is_empty() {
        return None;
    }
    Some(Output { text, default })
}

/// Splits `body` at its pipes; `None` for anything but a plain pipeline: a list, `&&`, a
/// redirection other than the first command's here-string, a subshell, a comment, `$'...'`, or
/// a nested substitution.
fn pipeline(body: &[Ch]) -> Option<Pipeline> {
    let end = body.iter().rposition(|ch| !ch.c.is_whitespace())? + 1;
    let body = &body[..end];
    let mut commands: Vec<Vec<Ch>> = vec![Vec::new()];
    let mut here = None;
    let mut i = 0;
    while let Some(ch) = body.get(i) {
        let first = commands.len() == 1;
        let current = commands.last_mut()?;
        let blank = current.iter().all(|ch| is_blank(ch.c));
        let next = body.get(i + 1).map(|ch| ch.c);
        match ch.c {
            '|' if !blank && !matches!(next, Some('|' | '&')) => {
                commands.push(Vec::new());
                i += 1;
            }
            '<' if first && here.is_none() && starts(body, i, "<<<") => {
                let start = (i + 3..body.len())
                    .find(|&k| !is_blank(body[k].c))
                    .unwrap_or(body.len());
                let end = word_end(body, start)?;
                (end > start).then_some(())?;
                here = Some(body[start..end].to_vec());
                i = end;
            }
            // A pipe may end its line.
            '\n' if blank => i += 1,
            '#' if current.last().is_none_or(|ch| is_blank(ch.c)) => return None,
            c if is_blank(c) => {
                current.push(*ch);
                i += 1;
            }
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' => return None,
            _ => {
                let end = unit_end(body, i)?;
                current.extend_from_slice(&body[i..end]);
                i = end;
            }
        }
    }
    let whole = commands.iter().all(|c| c.iter().any(|ch| !is_blank(ch.c)));
    whole.then_some(Pipeline { commands, here })
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn starts(body: &[Ch], i: usize, text: &str) -> bool {
    let mut chars = body[i..].iter().map(|ch| ch.c);
    text.chars().all(|c| chars.next() == Some(c))
}

/// Where the word from `i` ends: at a blank or an operator outside quotes.
fn word_end(body: &[Ch], mut i: usize) -> Option<usize> {
    while let Some(ch) = body.get(i) {
        if is_blank(ch.c) || matches!(ch.c, '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')') {
            break;
        }
        i = unit_end(body, i)?;
    }
    Some(i)
}

/// The end of the piece of a word that starts at `i`: a quoted string, an escaped character,
/// `${...}`, or one character. `None` for what may run a command (`$(`, a backquote) and for
/// `$'...'`, which the lexer does not read.
fn unit_end(body: &[Ch], i: usize) -> Option<usize> {
    let at = |k: usize| body.get(k).map(|ch| ch.c);
    match at(i)? {
        '\\' => Some((i + 2).min(body.len())),
        '\'' => Some(i + 1 + (i + 1..body.len()).position(|k| at(k) == Some('\''))? + 1),
        '"' => {
            let mut k = i + 1;
            loop {
                match at(k)? {
                    '"' => return Some(k + 1),
                    '\\' => k += 2,
                    '`' => return None,
                    '$' => k = dollar_end(body, k)?,
                    _ => k += 1,
                }
            }
        }
        '`' => None,
        '$' => dollar_end(body, i),
        _ => Some(i + 1),
    }
}

/// After a `$`: past `${...}` (holding no quote, escape or parenthesis, so its end is plain), or
/// past the `$` alone; `None` for `$(`, `$((` and `$'`.
fn dollar_end(body: &[Ch], i: usize) -> Option<usize> {
    match body.get(i + 1).map(|ch| ch.c) {
        Some('(' | '\'') => None,
        Some('{') => {
            let close = (i + 2..body.len()).find(|&k| body[k].c == '}')?;
            let inner = &body[i + 2..close];
            let plain = !inner
                .iter()
                .any(|ch| matches!(ch.c, '\'' | '"' | '`' | '\\' | '(' | '{'));
            plain.then_some(close + 1)
        }
        _ => Some(i + 1),
    }
}

/// The argv of every command and the here-string's text, each word expanded in `scope`; `None`
/// where a word is not known.
fn read(scope: &mut Scope, pipeline: &Pipeline) -> Option<Argvs> {
    let mut default = None;
    let mut argvs = Vec::new();
    for command in &pipeline.commands {
        let mut argv = Vec::new();
        for word in words(command)? {
            let unquoted = has_unquoted(&word.parts)?;
            // Expansion here splits at the default `$IFS`: a script that sets its own splits
            // otherwise (`IFS=,` makes `echo $GPUS` print `0 1`).
            if unquoted && scope.var("IFS").is_some() {
                return None;
            }
            for field in scope.expand(&word, true) {
                let text = known(&field, &mut default)?;
                if unquoted && text.contains(['*', '?', '[']) {
                    return None;
                }
                argv.push(text);
            }
        }
        argvs.push(argv);
    }
    let stdin = match &pipeline.here {
        Some(chars) => {
            let [word] = &words(chars)?[..] else {
                return None;
            };
            has_unquoted(&word.parts)?;
            let field = scope.expand(word, false).into_iter().next()?;
            let mut text = known(&field, &mut default)?;
            // bash ends a here-string with a newline.
            text.push('\n');
            (text.len() <= MAX_TEXT).then_some(text)
        }
        None => None,
    };
    Some(Argvs {
        argvs,
        stdin,
        default,
    })
}

/// The words of one command, where the lexer reads nothing else in it.
fn words(command: &[Ch]) -> Option<Vec<Word>> {
    let lexed = lex::lex(command);
    if !lexed.errors.is_empty() || !lexed.heredocs.is_empty() {
        return None;
    }
    lexed
        .toks
        .into_iter()
        .map(|tok| match tok {
            Tok::Word(w) => Some(w),
            _ => None,
        })
        .collect()
}

/// Whether the word holds an unquoted expansion (whose value pathname expansion would read);
/// `None` where it holds what is not worked out here: a substitution, or an unquoted glob,
/// brace or tilde character.
fn has_unquoted(parts: &[Part]) -> Option<bool> {
    let mut unquoted = false;
    for part in parts {
        match part {
            Part::Lit(chs) => {
                let special = |ch: &Ch| !ch.quoted && matches!(ch.c, '*' | '?' | '[' | '{' | '~');
                if chs.iter().any(special) {
                    return None;
                }
            }
            Part::Param { op, quoted, .. } => {
                unquoted |= !quoted;
                if let ParamOp::Default { word, .. } = op {
                    unquoted |= has_unquoted(word)?;
                }
            }
            Part::Subst { .. } | Part::Array(_) => return None,
        }
    }
    Some(unquoted)
}

/// A field's text where the script fixes it, or where all it still names is one caller's
/// default (kept in `default`); `None` otherwise.
fn known(field: &Field, default: &mut Option<String>) -> Option<String> {
    if field.splat.is_some() {
        return None;
    }
    if !field.names.is_empty() && !field.defaulted() {
        return None;
    }
    for (_, name) in &field.names {
        match default {
            Some(seen) if seen != name => return None,
            _ => *default = Some(name.clone()),
        }
    }
    Some(field.text())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    /// The output of the first substitution in `text` (a script's last line), the script's
    /// lines before it run as assignments.
    fn out(text: &str) -> Option<(String, Option<String>)> {
        let mut scope = Scope::new(FileId(0), true);
        let chars = lex::chars_of(text, 0);
        let mut last = None;
        for tok in lex::lex(&chars).toks {
            let Tok::Word(w) = tok else { continue };
            if let Some((name, value)) = scope.assignment(&w) {
                scope.set(&name, value, false);
            }
            last = Some(w);
        }
        let raw = last?.parts.into_iter().find_map(|p| match p {
            Part::Subst { raw } => Some(raw),
            _ => None,
        })?;
        output(&mut scope, &raw, false).map(|o| (o.text, o.default))
    }

    fn text(script: &str) -> Option<String> {
        out(script).map(|(text, _)| text)
    }

    #[test]
    fn a_pipeline_over_known_text_is_worked_out() {
        // bash: each expected value is what `X=$(...)` held there.
        let g = "GPU=0,1,2,3\n";
        assert_eq!(
            text(&format!("{g}$(echo \"$GPU\" | tr ',' '\\n' | wc -l)")).as_deref(),
            Some("4")
        );
        assert_eq!(
            text(&format!("{g}$(echo $GPU | awk -F, '{{print NF}}')")).as_deref(),
            Some("4")
        );
        assert_eq!(
            text(&format!("{g}`echo $GPU | cut -d, -f2-`")).as_deref(),
            Some("1,2,3")
        );
        assert_eq!(
            text(&format!("{g}$(tr ',' ' ' <<< \"$GPU\" | wc -w)")).as_deref(),
            Some("4")
        );
        assert_eq!(
            text(&format!("{g}$(echo $GPU |\n  tr -d ',' | wc -c)")).as_deref(),
            Some("5")
        );
        assert_eq!(
            text("$(printf '%s\\n' a b a | sort | uniq | wc -l)").as_deref(),
            Some("2")
        );
        assert_eq!(
            text("$(echo 0 | tr ',' '\\n' | wc -l)").as_deref(),
            Some("1")
        );
        assert_eq!(text("$(echo -n 0 | wc -l)").as_deref(), Some("0"));
    }

    #[test]
    fn a_caller_default_makes_the_output_a_default() {
        let script = "GPU=\"${CUDA_VISIBLE_DEVICES:-0}\"\n$(echo \"$GPU\" | tr ',' '\\n' | wc -l)";
        let (text, default) = out(script).unwrap();
        assert_eq!(text, "1");
        assert_eq!(
            default.as_deref(),
            Some("CUDA_VISIBLE_DEVICES (\"0\" unless set by the caller)")
        );
        // Two different defaults are not one default: unknown.
        let two = "A=${X:-0}\nB=${Y:-1}\n$(echo \"$A,$B\" | wc -c)";
        assert_eq!(out(two), None);
    }

    #[test]
    fn anything_else_stays_unknown() {
        for script in [
            "$(echo $UNSET | wc -l)",
            "$(nvidia-smi -L | wc -l)",
            "$(python -c 'print(1)')",
            "$(echo 1 | python -c 'import sys')",
            "$(wc -l < /etc/gpus)",
            "$(wc -l)",
            "$(echo 1; echo 2)",
            "$(echo 1 && echo 2)",
            "$(echo 1 || echo 2)",
            "$(echo 1 | wc -l > f)",
            "$(echo $(echo 1) | wc -l)",
            "$(echo \"$(echo 1)\" | wc -l)",
            "$(echo * | wc -w)",
            "$(echo {a,b} | wc -w)",
            "$(echo ~ | wc -c)",
            "$(tr , $'\\n' <<< 0,1 | wc -l)",
            "$(echo 1 | tr 1 2 <<< 3)",
            "$(echo 1 | (wc -l))",
            "$(echo 1 | wc -l # count)",
            "$(echo 1 |)",
            "$(| wc -l)",
            "$((1 + 2))",
            "$(echo \"$@\" | wc -w)",
            "IFS=,\nG=0,1\n$(echo $G | wc -w)",
        ] {
            assert_eq!(out(script), None, "{script}");
        }
    }

    #[test]
    fn an_output_splitting_would_change_is_unknown_where_the_word_is_split() {
        let mut scope = Scope::new(FileId(0), true);
        let raw = |t: &str| lex::chars_of(t, 0);
        assert!(output(&mut scope, &raw("$(echo a b)"), true).is_none());
        assert!(output(&mut scope, &raw("$(echo -n)"), true).is_none());
        assert!(output(&mut scope, &raw("$(echo 'a*')"), true).is_none());
        assert_eq!(
            output(&mut scope, &raw("$(echo a b)"), false).map(|o| o.text),
            Some("a b".to_string())
        );
        assert_eq!(
            output(&mut scope, &raw("$(echo 4)"), true).map(|o| o.text),
            Some("4".to_string())
        );
    }

    #[test]
    fn the_subshell_s_assignments_end_with_it() {
        let mut scope = Scope::new(FileId(0), false);
        let raw = lex::chars_of("$(echo ${N:=3} | wc -c)", 0);
        let got = output(&mut scope, &raw, false).map(|o| o.text);
        assert_eq!(got.as_deref(), Some("2"));
        assert!(scope.var("N").is_none());
    }
}

//! Dockerfiles: `ENV` sets exported variables, the last `ENTRYPOINT` and `CMD` make the command,
//! joined as Docker joins them, and the final `FROM` image supplies the entrypoint when the file
//! sets none (`vllm/vllm-openai` runs `vllm serve`) and names the engine release in its tag.

use super::commands;
use super::expand::{Field, Scope, Value};
use super::lex::{self, chars_of, literal_text, Ch};
use super::walk::Walker;
use crate::extract::k8s::placement;
use crate::source::{FileId, Loc};

/// A Dockerfile by name (`Dockerfile`, `Dockerfile.x`, `Containerfile`, `x.Dockerfile`) or by a
/// first `FROM` line.
pub fn is_dockerfile(name: &str, text: &str) -> bool {
    let base = commands::basename(name).to_ascii_lowercase();
    if base.starts_with("dockerfile")
        || base.starts_with("containerfile")
        || base.ends_with(".dockerfile")
    {
        return true;
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    first.is_some_and(|l| l.get(..5).is_some_and(|w| w.eq_ignore_ascii_case("from ")))
}

/// How a `CMD` / `ENTRYPOINT` is written.
#[derive(Clone)]
enum Form {
    Exec(Vec<Field>),
    Shell(Vec<Ch>),
}

/// The launches a Dockerfile's image runs when started without arguments.
pub fn walk(file: FileId, text: &str) -> Walker {
    let mut walker = Walker::new(file, true);
    walker.scope.budget = super::budget::Budget::for_input(text.len());
    let (mut entrypoint, mut cmd, mut image) = (None, None, None);
    // Build arguments before the first FROM may name the base image; their defaults are
    // assumed (what builds unless `--build-arg` overrides them). They are not the runtime env.
    let mut build_args = Scope::new(file, false);
    let mut stages: Vec<Stage> = Vec::new();
    for (keyword, rest) in instructions(text) {
        let chars = chars_of(&text[rest.clone()], rest.start);
        match keyword.to_ascii_uppercase().as_str() {
            "ARG" => {
                for w in lex::words(&chars) {
                    if let Some((name, value)) = build_args.assignment(&w) {
                        build_args.set(&name, value, false);
                    }
                }
            }
            "FROM" => {
                let (from, alias) = from_image(&mut build_args, &chars);
                // A stage built on an earlier one inherits its image, entrypoint and command;
                // any other starts from its base image's.
                let parent = from
                    .as_ref()
                    .and_then(|(name, _)| stages.iter().rev().find(|s| s.alias == *name));
                (image, entrypoint, cmd) = match parent {
                    Some(p) => (p.image.clone(), p.entrypoint.clone(), p.cmd.clone()),
                    None => (from, None, None),
                };
                stages.push(Stage {
                    alias,
                    image: image.clone(),
                    entrypoint: None,
                    cmd: None,
                });
            }
            "ENV" => env(&mut walker, &chars),
            "ENTRYPOINT" => {
                entrypoint = Some(form(file, chars));
                // Docker: setting ENTRYPOINT resets a CMD inherited from the base image.
                cmd = None;
            }
            "CMD" => cmd = Some(form(file, chars)),
            _ => {}
        }
        if let Some(stage) = stages.last_mut() {
            (stage.entrypoint, stage.cmd) = (entrypoint.clone(), cmd.clone());
        }
    }
    // The first word CMD hands the base image's entrypoint, where CMD is its arguments.
    let first = match (&entrypoint, &cmd) {
        (None, Some(Form::Exec(args))) => args.first().map(|f| f.as_str().to_string()),
        _ => None,
    };
    let base = image
        .as_ref()
        .and_then(|(name, loc)| Some((commands::image_entrypoint(name, first.as_deref())?, *loc)));
    let before = walker.launches.len();
    let own_command = entrypoint.is_some() || cmd.is_some();
    match (entrypoint, cmd) {
        (Some(Form::Exec(mut ep)), Some(Form::Exec(args))) => {
            ep.extend(args);
            walker.argv(&ep);
        }
        (Some(Form::Exec(argv)), _) => walker.argv(&argv),
        (Some(Form::Shell(script)), _) => walker.script(script),
        (None, cmd) => match (base, cmd) {
            (Some((engine, loc)), Some(Form::Exec(args))) => {
                walker.entrypoint_launch(engine, loc, &args)
            }
            (Some((engine, loc)), None) => walker.entrypoint_launch(engine, loc, &[]),
            (_, Some(Form::Exec(argv))) => walker.argv(&argv),
            (_, Some(Form::Shell(script))) => walker.script(script),
            (None, None) => {}
        },
    }
    // Built on an image whose own server a platform knows (a Runpod or NIM image), configured
    // by the `ENV` lines.
    if let (Some((name, loc)), false) = (&image, own_command || walker.launches.len() > before) {
        let env: Vec<(String, Field)> = walker
            .scope
            .vars
            .iter()
            .filter(|v| v.exported)
            .filter_map(|v| match &v.value {
                Value::Scalar(f) => Some((v.name.clone(), f.clone())),
                _ => None,
            })
            .collect();
        walker.image_platform(name, *loc, &env);
    }
    if let Some((name, loc)) = image {
        for l in &mut walker.launches[before..] {
            l.engine_version = placement::image_version(&name, l.engine.name()).map(|v| (v, loc));
            l.placement.image = Some((name.clone(), loc));
        }
    }
    walker
}

/// A build stage: its `AS` name, base image, and the entrypoint and command it ends with.
struct Stage {
    alias: String,
    image: Option<(String, Loc)>,
    entrypoint: Option<Form>,
    cmd: Option<Form>,
}

/// `FROM [--platform=...] IMAGE [AS name]`: the image (build arguments expanded) and where it is
/// written, and the stage's name.
fn from_image(build_args: &mut Scope, chars: &[Ch]) -> (Option<(String, Loc)>, String) {
    let words = lex::words(chars);
    let mut words = words
        .iter()
        .filter(|w| !literal_text(w).is_some_and(|t| t.starts_with("--")));
    let image = words.next().and_then(|w| {
        let field = build_args.expand(w, false).into_iter().next()?;
        Some((field.text(), field.loc))
    });
    let alias = match (words.next().and_then(literal_text), words.next()) {
        (Some(as_), Some(name)) if as_.eq_ignore_ascii_case("as") => {
            literal_text(name).unwrap_or_default()
        }
        _ => String::new(),
    };
    (image, alias)
}

/// `ENV A=1 B="2 3"`, or the legacy `ENV A value with spaces`.
fn env(walker: &mut Walker, chars: &[Ch]) {
    let words = lex::words(chars);
    let assignments: Vec<_> = words
        .iter()
        .filter_map(|w| walker.scope.assignment(w))
        .collect();
    if !assignments.is_empty() {
        for (name, value) in assignments {
            walker.scope.set(&name, value, true);
        }
        return;
    }
    let (Some(name), Some(first), Some(last)) = (
        words.first().and_then(literal_text),
        words.get(1),
        words.last(),
    ) else {
        return;
    };
    let value: Vec<Ch> = chars
        .iter()
        .copied()
        .filter(|ch| ch.start >= first.loc.0 && ch.end <= last.loc.1)
        .collect();
    let loc = Loc::new(walker.scope.file, first.loc.0..last.loc.1);
    walker.export(&name, Field::from_chars(&value, loc));
}

fn form(file: FileId, chars: Vec<Ch>) -> Form {
    json_array(file, &chars).map_or(Form::Shell(chars), Form::Exec)
}

/// Instructions of a Dockerfile: the keyword and the byte range of the rest, continuation lines included.
fn instructions(text: &str) -> Vec<(&str, std::ops::Range<usize>)> {
    let mut out: Vec<(&str, std::ops::Range<usize>)> = Vec::new();
    let mut offset = 0;
    let mut continued = false;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let was_continued = std::mem::replace(&mut continued, line.trim_end().ends_with('\\'));
        let trimmed = line.trim_start();
        if was_continued || trimmed.is_empty() || trimmed.starts_with('#') {
            if let Some((_, range)) = out.last_mut().filter(|_| was_continued) {
                range.end = offset;
            }
            if trimmed.starts_with('#') && was_continued {
                continued = true;
            }
            continue;
        }
        let indent = line.len() - trimmed.len();
        let keyword = trimmed
            .split(|c: char| c.is_whitespace())
            .next()
            .unwrap_or("");
        out.push((keyword, start + indent + keyword.len()..offset));
    }
    out
}

/// A JSON array of strings (`["python3", "-m", ...]`), each element spanning its quotes.
pub fn json_array(file: FileId, chars: &[Ch]) -> Option<Vec<Field>> {
    let chars: Vec<Ch> = without_comment_lines(chars);
    let chars = chars.as_slice();
    let mut i = skip_json_space(chars, 0);
    if chars.get(i)?.c != '[' {
        return None;
    }
    i = skip_json_space(chars, i + 1);
    let mut out = Vec::new();
    if chars.get(i)?.c == ']' {
        return (skip_json_space(chars, i + 1) == chars.len()).then_some(out);
    }
    loop {
        let (field, next) = json_string(file, chars, i)?;
        out.push(field);
        i = skip_json_space(chars, next);
        match chars.get(i)?.c {
            ',' => i = skip_json_space(chars, i + 1),
            ']' => return (skip_json_space(chars, i + 1) == chars.len()).then_some(out),
            _ => return None,
        }
    }
}

/// Docker drops `#` comment lines inside a continued instruction before parsing it.
fn without_comment_lines(chars: &[Ch]) -> Vec<Ch> {
    let mut out = Vec::with_capacity(chars.len());
    let mut line_start = true;
    let mut skipping = false;
    for &ch in chars {
        if line_start {
            skipping = false;
        }
        if line_start && ch.c == '#' {
            skipping = true;
        }
        line_start = ch.c == '\n' || (line_start && (ch.c == ' ' || ch.c == '\t'));
        if !skipping {
            out.push(ch);
        }
    }
    out
}

fn skip_json_space(chars: &[Ch], mut i: usize) -> usize {
    while let Some(ch) = chars.get(i) {
        match ch.c {
            c if c.is_whitespace() => i += 1,
            '\\' if chars.get(i + 1).is_some_and(|n| n.c == '\n' || n.c == '\r') => i += 2,
            _ => break,
        }
    }
    i
}

/// A JSON string at `i`; every decoded character keeps the bytes of its escape sequence.
fn json_string(file: FileId, chars: &[Ch], i: usize) -> Option<(Field, usize)> {
    let open = chars.get(i).filter(|ch| ch.c == '"')?;
    let mut out = Vec::new();
    let mut k = i + 1;
    loop {
        let ch = *chars.get(k)?;
        match ch.c {
            '"' => {
                let loc = Loc::new(file, open.start..ch.end);
                return Some((Field::from_chars(&out, loc), k + 1));
            }
            '\\' => {
                let esc = chars.get(k + 1)?;
                let (c, len) = match esc.c {
                    'n' => ('\n', 2),
                    't' => ('\t', 2),
                    'r' => ('\r', 2),
                    'b' => ('\u{8}', 2),
                    'f' => ('\u{c}', 2),
                    'u' => {
                        let hex: String = chars.get(k + 2..k + 6)?.iter().map(|c| c.c).collect();
                        (
                            char::from_u32(u32::from_str_radix(&hex, 16).ok()?)
                                .unwrap_or('\u{fffd}'),
                            6,
                        )
                    }
                    c => (c, 2),
                };
                let end = chars.get(k + len - 1)?.end;
                out.push(Ch {
                    c,
                    start: ch.start,
                    end,
                    quoted: true,
                });
                k += len;
            }
            _ => {
                out.push(Ch { quoted: true, ..ch });
                k += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_decode_escapes_and_keep_their_bytes() {
        let text = r#" ["a\"b", "\u00e7", "x\\y"] "#;
        let fields = json_array(FileId(0), &chars_of(text, 0)).expect("an array");
        let got: Vec<(String, &str)> = fields
            .iter()
            .map(|f| (f.text(), &text[f.loc.range()]))
            .collect();
        assert_eq!(
            got,
            [
                ("a\"b".to_string(), r#""a\"b""#),
                ("ç".to_string(), r#""\u00e7""#),
                ("x\\y".to_string(), r#""x\\y""#),
            ]
        );
        assert!(json_array(FileId(0), &chars_of(r#"["a", b]"#, 0)).is_none());
        assert!(json_array(FileId(0), &chars_of(r#"["a"] x"#, 0)).is_none());
        assert!(json_array(FileId(0), &chars_of(r#"["\u12"]"#, 0)).is_none());
    }

    #[test]
    fn dockerfiles_are_known_by_name_or_first_instruction() {
        assert!(is_dockerfile("deploy/Dockerfile", ""));
        assert!(is_dockerfile("Dockerfile.tensorfuse-vllm", ""));
        assert!(is_dockerfile("sglang.Dockerfile", ""));
        assert!(is_dockerfile(
            "<stdin>",
            "# syntax=docker/dockerfile:1\n\nfrom ubuntu\n"
        ));
        assert!(!is_dockerfile("run.sh", "#!/bin/sh\nfrom=1\n"));
    }
}

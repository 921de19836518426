//! Environment files as compose reads them: the project's `.env` (the variables the compose file
//! is interpolated with) and a service's `env_file` (variables of its container). The syntax is
//! compose-go `dotenv/parser.go`'s (docs.docker.com/compose/how-tos/environment-variables/
//! variable-interpolation, "Syntax"): `KEY=value` or `KEY: value`, an optional `export `, `#`
//! comment lines, unquoted values cut at ` #` and trimmed, single quotes taken literally, double
//! quotes with `\n`, `\r`, `\t`, `\\` and `\"` escapes; unquoted and double-quoted values are
//! interpolated with the variables above them (then the lookup); a key alone on its line takes
//! its value from the lookup.

use super::interpolation::{interpolate, Ch, Lookup};
use std::io::Read;
use std::path::Path;

/// Variables in file order; `None` is a value kvlint cannot know (it uses a variable it cannot see).
pub type Vars = Vec<(String, Option<String>)>;

/// Largest environment file read.
const MAX_BYTES: u64 = 1 << 20;

/// The file at `path`: `Ok(None)` when there is none. Only a regular file is opened (a FIFO
/// would block), and at most [`MAX_BYTES`] are read.
pub fn read(path: &Path) -> Result<Option<String>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("it is larger than {MAX_BYTES} bytes"));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "it is not UTF-8 text".into())
}

/// The variables of an environment file; `outer` gives what the file's own lines do not set.
/// `Err` is compose's reason to refuse the file, with its line.
pub fn parse(text: &str, outer: Lookup) -> Result<Vars, String> {
    let mut vars: Vars = Vec::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(vars);
        }
        if rest.starts_with('#') {
            rest = rest.find('\n').map_or("", |n| &rest[n..]);
            continue;
        }
        let at = text.len() - rest.len();
        let err = |why: String| {
            let line = 1 + text[..at].matches('\n').count();
            format!("line {line}: {why}")
        };
        let stmt = rest
            .strip_prefix("export")
            .filter(|r| r.starts_with([' ', '\t']))
            .unwrap_or(rest);
        let stmt = stmt.trim_start_matches([' ', '\t']);
        let end = stmt.find(['=', ':', '\n']).unwrap_or(stmt.len());
        let key = stmt[..end].trim_end();
        if let Some(bad) = key
            .chars()
            .find(|c| !(c.is_alphanumeric() || "_.-[]".contains(*c)))
        {
            return Err(err(format!(
                "unexpected character {bad:?} in variable name {key:?}"
            )));
        }
        let inherited = stmt[end..].starts_with('\n') || end == stmt.len();
        let after = stmt.get(end + 1..).unwrap_or("");
        if inherited {
            set(&mut vars, key, outer(key));
            rest = after;
            continue;
        }
        let after = after.trim_start_matches([' ', '\t']);
        let lookup = |name: &str| match vars.iter().rev().find(|(k, _)| k == name) {
            Some((_, v)) => v.clone(),
            None => outer(name),
        };
        let (value, left) = value(after, &lookup).map_err(err)?;
        set(&mut vars, key, value);
        rest = left;
    }
}

fn set(vars: &mut Vars, key: &str, value: Option<String>) {
    vars.retain(|(k, _)| k != key);
    vars.push((key.to_string(), value));
}

/// A value at the start of `text`, and the text after it.
fn value<'t>(text: &'t str, lookup: Lookup) -> Result<(Option<String>, &'t str), String> {
    let Some(quote) = text.chars().next().filter(|c| *c == '"' || *c == '\'') else {
        let (line, left) = text.split_once('\n').unwrap_or((text, ""));
        let line = line.split(" #").next().unwrap_or(line).trim_end();
        return Ok((expand(line, lookup)?, left));
    };
    // The closing quote: the first one not after a backslash.
    let body = &text[1..];
    let close = body
        .char_indices()
        .find(|&(i, c)| c == quote && !body[..i].ends_with('\\'))
        .map(|(i, _)| i)
        .ok_or_else(|| {
            format!(
                "unterminated quoted value {}",
                text.lines().next().unwrap_or("")
            )
        })?;
    let raw = &body[..close];
    let left = &body[close + 1..];
    if quote == '\'' {
        return Ok((Some(raw.replace("\\'", "'")), left));
    }
    Ok((expand(&unescape(raw), lookup)?, left))
}

/// `\n`, `\r`, `\t` as the characters; `\\`, `\"` and others as what they escape.
fn unescape(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// The value interpolated; `None` when it uses a variable whose value is not known.
fn expand(text: &str, lookup: Lookup) -> Result<Option<String>, String> {
    let chars: Vec<Ch> = text.chars().map(|c| (c, 0, 0)).collect();
    let out = interpolate(&chars, lookup)?;
    Ok(out
        .unknown
        .is_empty()
        .then(|| out.chars.iter().map(|c| c.0).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(text: &str) -> Vars {
        parse(text, &|name: &str| {
            (name == "SHELL_SET").then(|| "s".to_string())
        })
        .expect(text)
    }

    fn known(pairs: &[(&str, Option<&str>)]) -> Vars {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect()
    }

    #[test]
    fn the_syntax_of_the_compose_documentation() {
        // docs.docker.com "Syntax for environment files": each example line and its value.
        let text =
            "# comment\n\nA=VAL\nB=\"VAL\"\nC='VAL'\nD=VAL # comment\nE=VAL# not a comment\n\
                    F=\"VAL # not a comment\"\nG=\"VAL\" # comment\nH='$OTHER'\nI='Let\\'s go!'\n\
                    J=\"{\\\"hello\\\": \\\"json\\\"}\"\nK=\"some\\tvalue\"\nL='some\\tvalue'\n\
                    export M=1\nN: 2\n";
        assert_eq!(
            vars(text),
            known(&[
                ("A", Some("VAL")),
                ("B", Some("VAL")),
                ("C", Some("VAL")),
                ("D", Some("VAL")),
                ("E", Some("VAL# not a comment")),
                ("F", Some("VAL # not a comment")),
                ("G", Some("VAL")),
                ("H", Some("$OTHER")),
                ("I", Some("Let's go!")),
                ("J", Some("{\"hello\": \"json\"}")),
                ("K", Some("some\tvalue")),
                ("L", Some("some\\tvalue")),
                ("M", Some("1")),
                ("N", Some("2")),
            ])
        );
    }

    #[test]
    fn values_use_the_lines_above_and_else_the_lookup() {
        let text = "BASE=8192\nCTX=${BASE}\nX=${NOPE:-1}\nY=$SHELL_SET\nSHELL_SET\nUNSEEN\n";
        assert_eq!(
            vars(text),
            known(&[
                ("BASE", Some("8192")),
                ("CTX", Some("8192")),
                ("X", None),
                ("Y", Some("s")),
                ("SHELL_SET", Some("s")),
                ("UNSEEN", None),
            ])
        );
    }

    #[test]
    fn lines_compose_refuses_are_errors_with_their_line() {
        assert_eq!(
            parse("A=1\nB C=2\n", &|_: &str| None),
            Err("line 2: unexpected character ' ' in variable name \"B C\"".into())
        );
        assert!(parse("A=\"open\n", &|_: &str| None).is_err());
    }
}

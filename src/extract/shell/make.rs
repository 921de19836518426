//! Makefiles (`Makefile`, `GNUmakefile`, `*.mk`): their recipe lines are shell commands, read by
//! the shell reader after Make's own variable expansion. Make substitutes `$(VAR)` / `${VAR}` as
//! text before the shell sees the line (GNU make manual, "How make Reads a Makefile"), so a
//! reference is replaced by the characters of the value it names, each still mapped to where the
//! value is written.
//!
//! - `VAR = v` (recursively expanded) is expanded where it is used, with the values the whole
//!   file gives (a later assignment wins); `VAR := v` / `VAR ::= v` / `VAR :::= v` (simply
//!   expanded) with the values set before it; `VAR += v` appends; `override` and `export` prefixes
//!   are read through.
//! - `VAR ?= v` sets `VAR` only where the caller's environment or `make VAR=x` does not: it is a
//!   default the caller may override, and is read as the shell reader reads `${VAR:-v}` in a
//!   script someone runs (unresolved, the default named).
//! - An assignment inside `ifeq`/`ifdef`/… is set in only some runs: the variable is unknown.
//! - A variable the file does not set comes from the environment or the command line: it stays a
//!   shell reference (`${VAR}`), unresolved like any variable a script does not set. Make
//!   functions (`$(shell …)`, `$(wildcard …)`) are left as written (`$(shell cmd)` reads as the
//!   command substitution it runs).
//! - `$$` is a `$` for the shell; recipe prefixes `@`, `-` and `+` are dropped.

use super::lex::{chars_of, Ch};
use std::collections::HashMap;

/// A Makefile by name: `Makefile`, `makefile`, `GNUmakefile`, `*.mk`, `*.make`.
pub fn is_makefile(name: &str) -> bool {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    matches!(lower.as_str(), "makefile" | "gnumakefile")
        || lower.ends_with(".mk")
        || lower.ends_with(".make")
}

/// How a variable was set.
#[derive(Clone)]
enum Def {
    /// `=`: expanded where it is used.
    Recursive(Vec<Ch>),
    /// `:=`: expanded where it is set.
    Simple(Vec<Ch>),
    /// `?=`: a default the caller may override.
    Default(Vec<Ch>),
    /// Set in a conditional branch: unknown.
    Unknown,
}

/// Deepest chain of recursively expanded variables followed (Make refuses a variable that
/// references itself; this bounds such a file here).
const MAX_DEPTH: usize = 16;

/// The shell script a Makefile's recipes run, each character mapped into the Makefile: recipe
/// lines with Make's variables expanded; every other line blank, so lines keep their numbers.
pub fn recipes(text: &str) -> Vec<Ch> {
    let mut vars: HashMap<String, Def> = HashMap::new();
    let mut conditional = 0usize;
    let mut in_define = false;
    let mut recipe_lines: Vec<Vec<Ch>> = Vec::new();
    let mut out: Vec<Ch> = Vec::new();
    for (line, recipe) in logical_lines(text) {
        if recipe && !in_define {
            recipe_lines.push(strip_recipe_prefix(line));
            continue;
        }
        let code = make_code(&line);
        let words: String = code.iter().map(|c| c.c).collect();
        let head = words.split_whitespace().next().unwrap_or("");
        match head {
            "define" => {
                in_define = true;
                continue;
            }
            "endef" => {
                in_define = false;
                continue;
            }
            _ if in_define => continue,
            "ifeq" | "ifneq" | "ifdef" | "ifndef" => {
                conditional += 1;
                continue;
            }
            "endif" => {
                conditional = conditional.saturating_sub(1);
                continue;
            }
            "else" => continue,
            _ => {}
        }
        if let Some((name, op, value)) = assignment(&code) {
            let def = match (conditional > 0, op) {
                (true, _) | (false, "!=") => Def::Unknown,
                (false, "?=") => match vars.get(&name) {
                    Some(_) => continue,
                    None => Def::Default(value),
                },
                (false, "+=") => match vars.get(&name) {
                    Some(Def::Recursive(old)) => Def::Recursive(appended(old, value)),
                    Some(Def::Simple(old)) => Def::Simple(appended(old, expand(&value, &vars, 0))),
                    Some(Def::Default(old)) => Def::Default(appended(old, value)),
                    Some(Def::Unknown) => Def::Unknown,
                    None => Def::Recursive(value),
                },
                (false, "=") => Def::Recursive(value),
                (false, _) => Def::Simple(expand(&value, &vars, 0)),
            };
            vars.insert(name, def);
        }
    }
    // Recipes run after the whole file is read: recursively expanded variables take the values
    // the file ends with.
    for line in recipe_lines {
        out.extend(expand(&line, &vars, 0));
        let at = out.last().map_or(0, |c| c.end);
        out.push(synthetic('\n', at..at));
    }
    out
}

/// Lines joined over backslash-newlines, each with whether it is a recipe line
/// (starts with a tab). A recipe keeps its backslash-newlines (the shell reads them); the tab
/// that starts each continued line is Make's and is dropped.
fn logical_lines(text: &str) -> Vec<(Vec<Ch>, bool)> {
    let chars = chars_of(text, 0);
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let recipe = chars[i].c == '\t';
        let mut line = Vec::new();
        if recipe {
            i += 1;
        }
        while i < chars.len() && chars[i].c != '\n' {
            let continued = chars[i].c == '\\' && chars.get(i + 1).is_some_and(|c| c.c == '\n');
            if continued && recipe {
                line.push(chars[i]);
                line.push(chars[i + 1]);
                i += 2;
                if chars.get(i).is_some_and(|c| c.c == '\t') {
                    i += 1;
                }
                continue;
            }
            if continued {
                // Make joins the lines with one space.
                line.push(synthetic(' ', chars[i].start..chars[i].end));
                i += 2;
                while chars.get(i).is_some_and(|c| c.c == ' ' || c.c == '\t') {
                    i += 1;
                }
                continue;
            }
            line.push(chars[i]);
            i += 1;
        }
        i += 1;
        out.push((line, recipe));
    }
    out
}

/// A recipe line without Make's `@`, `-` and `+` prefixes.
fn strip_recipe_prefix(line: Vec<Ch>) -> Vec<Ch> {
    let skip = line
        .iter()
        .take_while(|c| matches!(c.c, '@' | '-' | '+' | ' ' | '\t'))
        .count();
    line.into_iter().skip(skip).collect()
}

/// A non-recipe line without its comment (`#`, unless escaped).
fn make_code(line: &[Ch]) -> Vec<Ch> {
    let mut end = line.len();
    for (i, c) in line.iter().enumerate() {
        if c.c == '#' && (i == 0 || line[i - 1].c != '\\') {
            end = i;
            break;
        }
    }
    line[..end].to_vec()
}

/// `NAME op value` with `op` one of `=`, `:=`, `::=`, `:::=`, `?=`, `+=` (`!=` runs a shell
/// command: its value is unknown), after `override` / `export` prefixes.
fn assignment(code: &[Ch]) -> Option<(String, &'static str, Vec<Ch>)> {
    let text: String = code.iter().map(|c| c.c).collect();
    // Char indexes, since `code` holds one `Ch` per char.
    let chars: Vec<char> = text.chars().collect();
    let eq = chars.iter().position(|&c| c == '=')?;
    let mut op_start = eq;
    while op_start > 0 && matches!(chars[op_start - 1], ':' | '?' | '+' | '!') {
        op_start -= 1;
    }
    let op: String = chars[op_start..=eq].iter().collect();
    let op = match op.as_str() {
        "=" => "=",
        ":=" | "::=" | ":::=" => ":=",
        "?=" => "?=",
        "+=" => "+=",
        "!=" => "!=",
        _ => return None,
    };
    let lhs: String = chars[..op_start].iter().collect();
    let mut names = lhs.split_whitespace().collect::<Vec<_>>();
    while names
        .first()
        .is_some_and(|w| matches!(*w, "override" | "export" | "private"))
    {
        names.remove(0);
    }
    let [name] = names[..] else {
        return None;
    };
    // A rule (`target: VAR = v` is a target-specific variable) is not a global assignment.
    if name.is_empty() || name.contains([':', '$', '(', ')', '{', '}']) {
        return None;
    }
    let mut value: Vec<Ch> = code[eq + 1..].to_vec();
    let lead = value.iter().take_while(|c| c.c.is_whitespace()).count();
    value.drain(..lead);
    while value.last().is_some_and(|c| c.c.is_whitespace()) {
        value.pop();
    }
    Some((name.to_string(), op, value))
}

fn appended(old: &[Ch], value: Vec<Ch>) -> Vec<Ch> {
    let mut out = old.to_vec();
    if !out.is_empty() && !value.is_empty() {
        let at = value[0].start;
        out.push(synthetic(' ', at..at));
    }
    out.extend(value);
    out
}

/// `chars` with Make's references replaced: `$(VAR)`, `${VAR}`, `$V`, and `$$` for `$`.
fn expand(chars: &[Ch], vars: &HashMap<String, Def>, depth: usize) -> Vec<Ch> {
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = &chars[i];
        if c.c != '$' || i + 1 >= chars.len() {
            out.push(*c);
            i += 1;
            continue;
        }
        let next = chars[i + 1].c;
        if next == '$' {
            out.push(*c);
            i += 2;
            continue;
        }
        let (name, end) = match next {
            '(' | '{' => {
                let close = if next == '(' { ')' } else { '}' };
                match reference(chars, i + 2, next, close) {
                    Some(end) => (chars[i + 2..end].iter().map(|c| c.c).collect(), end + 1),
                    None => {
                        out.push(*c);
                        i += 1;
                        continue;
                    }
                }
            }
            // `$@`, `$<`, `$^`: automatic variables; `$V`: a one-letter variable.
            v if v.is_ascii_alphanumeric() || v == '_' => (v.to_string(), i + 2),
            _ => {
                out.push(*c);
                i += 1;
                continue;
            }
        };
        let name: String = name;
        let at = chars[i].start..chars[end - 1].end;
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !plain {
            // A function or substitution reference: as written.
            out.extend(chars[i..end].iter().copied());
            i = end;
            continue;
        }
        let too_deep = depth >= MAX_DEPTH;
        match vars.get(&name) {
            Some(Def::Simple(v)) => out.extend(v.iter().copied()),
            Some(Def::Recursive(v)) if !too_deep => out.extend(expand(v, vars, depth + 1)),
            Some(Def::Default(v)) if !too_deep => {
                out.extend(chars_at(&format!("${{{name}:-"), at.clone()));
                out.extend(expand(v, vars, depth + 1));
                out.extend(chars_at("}", at.clone()));
            }
            _ => out.extend(chars_at(&format!("${{{name}}}"), at.clone())),
        }
        i = end;
    }
    out
}

/// The index of the bracket closing a reference opened before `from`, counting nested ones.
fn reference(chars: &[Ch], from: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (k, c) in chars.iter().enumerate().skip(from) {
        if c.c == open {
            depth += 1;
        } else if c.c == close {
            if depth == 0 {
                return Some(k);
            }
            depth -= 1;
        }
    }
    None
}

fn synthetic(c: char, at: std::ops::Range<usize>) -> Ch {
    Ch {
        c,
        start: at.start,
        end: at.end,
        quoted: false,
    }
}

fn chars_at(text: &str, at: std::ops::Range<usize>) -> Vec<Ch> {
    text.chars().map(|c| synthetic(c, at.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(text: &str) -> String {
        recipes(text).iter().map(|c| c.c).collect()
    }

    #[test]
    fn makefiles_by_name() {
        for name in [
            "Makefile",
            "dir/makefile",
            "GNUmakefile",
            "serve.mk",
            "x.make",
        ] {
            assert!(is_makefile(name), "{name}");
        }
        for name in ["Makefile.txt", "make.sh", "mk"] {
            assert!(!is_makefile(name), "{name}");
        }
    }

    #[test]
    fn recipes_with_make_variables_expanded() {
        let text = "\
MODEL := Qwen/Qwen3-8B
TP = $(GPUS)
GPUS = 2
CTX ?= 8192
ARGS = --tp $(TP)
ARGS += --port 8000  # comment
ifdef FAST
MODE := eager
endif
.PHONY: run
run:
\t@echo \"$(MODEL)\"
\t-vllm serve ${MODEL} $(ARGS) \\
\t\t--max-model-len $(CTX) --mode $(MODE) --home $$HOME $(HOST) $(shell nproc)
";
        assert_eq!(
            script(text),
            "echo \"Qwen/Qwen3-8B\"\n\
             vllm serve Qwen/Qwen3-8B --tp 2 --port 8000 \\\n\
             \t--max-model-len ${CTX:-8192} --mode ${MODE} --home $HOME ${HOST} $(shell nproc)\n"
        );
    }

    #[test]
    fn simple_variables_take_the_values_set_before_them() {
        let text =
            "A = 1\nB := $(A)\nA = 2\nC ?= 3\nC = 4\nD = $(D)x\nrun:\n\tcmd $(B) $(A) $(C)\n";
        assert_eq!(script(text), "cmd 1 2 4\n");
        // A default after a file assignment sets nothing.
        assert_eq!(script("E = 5\nE ?= 6\nr:\n\tcmd $(E)\n"), "cmd 5\n");
        // A self-reference stops rather than loops.
        assert!(script("D = $(D)x\nr:\n\tcmd $(D)\n").starts_with("cmd "));
    }

    #[test]
    fn values_keep_where_they_are_written() {
        let text = "TP := 4\nr:\n\tvllm serve m --tp $(TP)\n";
        let chars = recipes(text);
        let four = chars.iter().find(|c| c.c == '4').unwrap();
        assert_eq!(&text[four.start..four.end], "4");
    }
}

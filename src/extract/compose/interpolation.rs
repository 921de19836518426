//! Compose-file interpolation, as the Compose specification defines it
//! (compose-spec/compose-spec 12-interpolation.md; docs.docker.com/reference/compose-file/interpolation):
//! `$VAR` and `${VAR}`; `${VAR:-default}` / `${VAR-default}`; `${VAR:?error}` / `${VAR?error}`;
//! `${VAR:+alternative}` / `${VAR+alternative}`; operands interpolated in turn
//! (`${A:-${B:-x}}`); `$$` a literal `$`; a `$` before anything else is kept. A name is
//! `[_A-Za-z][_A-Za-z0-9]*`; any other braced form (`${VAR/a/b}`) makes compose refuse the file.
//!
//! Values come from the shell that runs compose and from the project's `.env`. kvlint sees only
//! the `.env`: a variable it does not set has an unknown value (the shell may set it). Where the
//! file writes a default for it (`${CTX:-32768}`, `${CTX-32768}`), the default's characters stand
//! at the reference, what runs when nobody sets the variable, and the variable is a caller's
//! default ([`Unknown::default`]): listed and planned with, still the caller's to decide (INP004).
//! A default that is empty or itself holds an unknown value is none: the reference is unknown,
//! as are `$VAR`, `${VAR}`, `${VAR:?error}` and `${VAR:+alt}`.

/// A character with the file bytes it stands for.
pub type Ch = (char, usize, usize);

/// The value of a variable where kvlint can see it (`.env`), or `None`: not known here.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Interpolated characters, and each unknown value among them. An unknown value with no default
/// is written `$(NAME)` at the reference, a form no later reader takes a value for (a shell reads
/// it as a command substitution).
#[derive(Debug, Default, PartialEq)]
pub struct Interpolated {
    pub chars: Vec<Ch>,
    pub unknown: Vec<Unknown>,
}

/// A variable kvlint does not know, where its value stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Unknown {
    /// The index of the value's first character.
    pub at: usize,
    /// The variable's name; for a caller's default, with the default
    /// (`CTX ("32768" unless set by the shell that runs compose)`).
    pub name: String,
    /// A caller's default: the bytes of the reference (`${CTX:-32768}`), which each of the
    /// default's characters stands for (words split from it are found by them).
    pub default: Option<(usize, usize)>,
}

/// Nesting of `${...}` operands beyond which a file is refused rather than followed.
const MAX_NESTING: usize = 32;

/// Interpolates `chars`; `Err` is why compose refuses the value (a required variable that is
/// set empty, a form it does not know).
pub fn interpolate(chars: &[Ch], lookup: Lookup) -> Result<Interpolated, String> {
    interpolate_with(chars, lookup, true)
}

/// [`interpolate`], where `defaults` says whether a caller's default is taken; without, every
/// variable the `.env` does not set is unknown (`$(NAME)`).
pub fn interpolate_with(
    chars: &[Ch],
    lookup: Lookup,
    defaults: bool,
) -> Result<Interpolated, String> {
    let mut p = Parser {
        cs: chars,
        i: 0,
        lookup,
        defaults,
    };
    let mut out = Interpolated::default();
    p.text(0, &mut out)?;
    Ok(out)
}

struct Parser<'a> {
    cs: &'a [Ch],
    i: usize,
    lookup: Lookup<'a>,
    defaults: bool,
}

/// What a braced reference does when the variable is unset (or also when empty, with `:`).
#[derive(Clone, Copy, PartialEq)]
enum Op {
    Default,
    Required,
    Alternative,
}

impl Parser<'_> {
    fn at(&self, i: usize) -> Option<char> {
        self.cs.get(i).map(|c| c.0)
    }

    /// Text up to the end, or (nested) up to the `}` that closes the operand.
    fn text(&mut self, depth: usize, out: &mut Interpolated) -> Result<(), String> {
        while let Some(c) = self.at(self.i) {
            if c == '}' && depth > 0 {
                return Ok(());
            }
            if c != '$' {
                out.chars.push(self.cs[self.i]);
                self.i += 1;
                continue;
            }
            match self.at(self.i + 1) {
                Some('$') => {
                    out.chars
                        .push(('$', self.cs[self.i].1, self.cs[self.i + 1].2));
                    self.i += 2;
                }
                Some('{') => self.braced(depth, out)?,
                Some(n) if n == '_' || n.is_ascii_alphabetic() => {
                    let start = self.i;
                    self.i += 1;
                    let name = self.name();
                    let span = (self.cs[start].1, self.cs[self.i - 1].2);
                    let value = (self.lookup)(&name);
                    resolve(out, &name, value, span);
                }
                _ => {
                    out.chars.push(self.cs[self.i]);
                    self.i += 1;
                }
            }
        }
        match depth {
            0 => Ok(()),
            _ => Err("a `${` is not closed with `}`".into()),
        }
    }

    fn name(&mut self) -> String {
        let mut name = String::new();
        while let Some(c) = self
            .at(self.i)
            .filter(|c| *c == '_' || c.is_ascii_alphanumeric())
        {
            name.push(c);
            self.i += 1;
        }
        name
    }

    /// `${NAME}` or `${NAME<op>operand}` at `self.i`.
    fn braced(&mut self, depth: usize, out: &mut Interpolated) -> Result<(), String> {
        if depth >= MAX_NESTING {
            return Err(format!("references nest deeper than {MAX_NESTING} levels"));
        }
        let start = self.cs[self.i].1;
        self.i += 2;
        let name = self.name();
        let valid = name.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic());
        let colon = self.at(self.i) == Some(':');
        let op = match self.at(self.i + usize::from(colon)) {
            Some('}') if !colon => None,
            Some('-') => Some(Op::Default),
            Some('?') => Some(Op::Required),
            Some('+') => Some(Op::Alternative),
            _ => return Err(format!("invalid interpolation format for `${{{name}`")),
        };
        if !valid {
            return Err(format!("invalid interpolation format for `${{{name}`"));
        }
        let mut operand = Interpolated::default();
        if op.is_some() {
            self.i += 1 + usize::from(colon);
            self.text(depth + 1, &mut operand)?;
        }
        // At the closing brace: `text` stops only there.
        let end = self.cs[self.i].2;
        self.i += 1;
        let span = (start, end);
        let value = (self.lookup)(&name);
        let Some(op) = op else {
            resolve(out, &name, value, span);
            return Ok(());
        };
        let Some(v) = value else {
            // The shell that runs compose may set it: its default runs when nobody does.
            let usable = self.defaults && operand.unknown.is_empty() && !operand.chars.is_empty();
            match op {
                Op::Default if usable => caller_default(out, &name, &operand, span),
                _ => resolve(out, &name, None, span),
            }
            return Ok(());
        };
        let set = !(colon && v.is_empty());
        match op {
            Op::Default if set => resolve(out, &name, Some(v), span),
            Op::Default => append(out, operand),
            Op::Required if set => resolve(out, &name, Some(v), span),
            Op::Required => {
                let why: String = operand.chars.iter().map(|c| c.0).collect();
                return Err(format!(
                    "required variable {name} is missing a value: {why}"
                ));
            }
            Op::Alternative if set => append(out, operand),
            Op::Alternative => {}
        }
        Ok(())
    }
}

/// A reference's value in place of it: its characters all stand for the reference; an unknown
/// one is `$(NAME)`.
fn resolve(
    out: &mut Interpolated,
    name: &str,
    value: Option<String>,
    (start, end): (usize, usize),
) {
    let text = match value {
        Some(v) => v,
        None => {
            out.unknown.push(Unknown {
                at: out.chars.len(),
                name: name.to_string(),
                default: None,
            });
            format!("$({name})")
        }
    };
    out.chars.extend(text.chars().map(|c| (c, start, end)));
}

/// A variable kvlint does not know, whose default (all known) stands at the reference: each of
/// its characters for the whole reference, as a value does.
fn caller_default(
    out: &mut Interpolated,
    name: &str,
    operand: &Interpolated,
    (start, end): (usize, usize),
) {
    // Said in a message: the first 80 characters are enough to recognise it.
    let mut default: String = operand.chars.iter().take(80).map(|c| c.0).collect();
    if operand.chars.len() > 80 {
        default.push('…');
    }
    out.unknown.push(Unknown {
        at: out.chars.len(),
        name: format!("{name} (\"{default}\" unless set by the shell that runs compose)"),
        default: Some((start, end)),
    });
    out.chars
        .extend(operand.chars.iter().map(|c| (c.0, start, end)));
}

fn append(out: &mut Interpolated, operand: Interpolated) {
    let base = out.chars.len();
    out.unknown
        .extend(operand.unknown.into_iter().map(|u| Unknown {
            at: base + u.at,
            ..u
        }));
    out.chars.extend(operand.chars);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Result<(String, Vec<String>), String> {
        let chars: Vec<Ch> = text
            .char_indices()
            .map(|(i, c)| (c, i, i + c.len_utf8()))
            .collect();
        let env = |name: &str| match name {
            "SET" => Some("v".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        let out = interpolate(&chars, &env)?;
        let names = out.unknown.iter().map(|u| u.name.clone()).collect();
        Ok((out.chars.iter().map(|c| c.0).collect(), names))
    }

    fn text(s: &str) -> String {
        run(s).expect(s).0
    }

    #[test]
    fn operators_follow_the_specification_for_set_and_empty_values() {
        // compose-spec 12-interpolation.md, each operator on a set, an empty and an unset value.
        assert_eq!(text("${SET:-d} ${EMPTY:-d} ${EMPTY-d}"), "v d ");
        assert_eq!(text("${SET:+r} ${EMPTY:+r} ${EMPTY+r}"), "r  r");
        assert_eq!(text("${SET:?e} ${EMPTY?e}"), "v ");
        assert_eq!(
            run("x ${EMPTY:?must be set}"),
            Err("required variable EMPTY is missing a value: must be set".into())
        );
        assert_eq!(text("$SET-$$SET-$-${EMPTY:-${SET}}"), "v-$SET-$-v");
    }

    #[test]
    fn a_variable_not_in_the_project_env_is_unknown_unless_the_file_gives_a_default() {
        for reference in [
            "$CTX",
            "${CTX}",
            "${CTX:?e}",
            "${CTX:+x}",
            "${CTX:-}",
            "${CTX-}",
        ] {
            assert_eq!(
                run(&format!("--context-length={reference}")),
                Ok((
                    "--context-length=$(CTX)".to_string(),
                    vec!["CTX".to_string()]
                )),
                "{reference}"
            );
        }
        // What runs when the shell that runs compose sets nothing; it still decides.
        let why = "CTX (\"4096\" unless set by the shell that runs compose)";
        for reference in ["${CTX:-4096}", "${CTX-4096}", "${CTX:-${SET:+4096}}"] {
            assert_eq!(
                run(&format!("--context-length={reference}")),
                Ok(("--context-length=4096".to_string(), vec![why.to_string()])),
                "{reference}"
            );
        }
        // A default that is itself unknown is none; its own unknowns count only when it is taken.
        assert_eq!(
            run("${EMPTY:-${CTX}}"),
            Ok(("$(CTX)".into(), vec!["CTX".into()]))
        );
        assert_eq!(
            run("${A:-${CTX}} ${A:-${B:-1}}"),
            Ok(("$(A) $(A)".into(), vec!["A".into(), "A".into()]))
        );
        assert_eq!(run("${SET:-${CTX}}"), Ok(("v".into(), vec![])));
    }

    #[test]
    fn a_default_stands_for_its_whole_reference() {
        let chars: Vec<Ch> = "x ${CTX:-4 0}"
            .char_indices()
            .map(|(i, c)| (c, i, i + 1))
            .collect();
        let out = interpolate(&chars, &|_: &str| None).unwrap();
        assert_eq!(&out.chars[2..], [('4', 2, 13), (' ', 2, 13), ('0', 2, 13)]);
        assert_eq!(
            (out.unknown[0].at, out.unknown[0].default),
            (2, Some((2, 13)))
        );
    }

    #[test]
    fn forms_compose_refuses_are_errors() {
        for bad in ["${CTX", "${CTX/a/b}", "${}", "${1A}", "${A:-${B}"] {
            assert!(run(bad).is_err(), "{bad}");
        }
        let deep = format!("{}x{}", "${A:-".repeat(40), "}".repeat(40));
        assert!(run(&deep).is_err());
    }

    #[test]
    fn values_stand_at_their_reference() {
        let chars: Vec<Ch> = "a${SET}b"
            .char_indices()
            .map(|(i, c)| (c, i, i + 1))
            .collect();
        let env = |_: &str| Some("xy".to_string());
        let out = interpolate(&chars, &env).unwrap();
        assert_eq!(
            out.chars,
            [('a', 0, 1), ('x', 1, 7), ('y', 1, 7), ('b', 7, 8)]
        );
    }
}

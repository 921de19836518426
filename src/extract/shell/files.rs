//! Files a script writes before a launch reads them: `cat > F <<EOF`, `cat <<EOF > F`,
//! `tee [-a] F <<EOF`, `>>` appends, and `echo`/`printf` of literal text. A launch that names
//! such a file (`--extra_llm_api_options F`, `--config F`) is given the written text, so its
//! values are read and no file beside the script stands in for it.
//!
//! An unquoted heredoc is expanded like a double-quoted word; a variable the script does not set
//! stays as written and is `INP004` on the launch that reads the file. A block appended inside a
//! branch is read as present (the union of what the branches write); a file replaced with other
//! text where that may not run (an `if`, a `case`, `&&`) is unknown. Output of any other command
//! makes the file's content unknown. Unknown content is said as the reason the engine cannot read
//! the file (CFG006), never guessed.

use super::commands;
use super::expand::Field;
use super::lex::{self, Heredoc, Word};
use super::walk::Walker;
use crate::finding::Finding;
use crate::launch::LaunchFile;
use crate::source::Loc;

/// A file as the script leaves it at some point.
#[derive(Debug, Clone)]
pub struct Written {
    /// The path as written, after expansion.
    pub path: String,
    pub content: Result<Body, String>,
    /// `cd`s the script had run when it wrote the file: a relative path read after another
    /// `cd` names another file.
    pub cwd: usize,
    /// The heredoc blocks that make up the file, each character with the script bytes it is
    /// written at; `None` when some of its text is not a heredoc's, or differs between branches.
    pub raw: Option<Vec<Raw>>,
    /// Whether a launch of the script names the file.
    pub read: bool,
}

/// A heredoc's characters, each with the script bytes it is read from.
pub type Raw = Vec<(usize, usize, char)>;

/// Written text, preceded by newlines so each block sits at the line it is written at, and the
/// variables left in it with where they are referenced.
#[derive(Debug, Clone, Default)]
pub struct Body {
    pub text: String,
    pub unknown: Vec<(String, Loc)>,
    /// Newlines in `text`.
    lines: usize,
}

/// Files and unknowns kept per script, so that a hostile script cannot grow them without bound.
const MAX_FILES: usize = 256;
const MAX_UNKNOWN: usize = 64;
/// Heredoc characters kept per file to read it as an input of its own, and files so read per
/// script ([`Walker::written_inputs`]): each read blanks a copy of the whole script.
const MAX_RAW: usize = 1 << 16;
const MAX_WRITTEN_INPUTS: usize = 8;

impl Body {
    /// This text with `b` written after it, at `b`'s own line when that is further down.
    fn with(mut self, b: Block) -> Body {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
            self.lines += 1;
        }
        let pad = b.line.saturating_sub(self.lines);
        self.text.extend(std::iter::repeat_n('\n', pad));
        self.lines += pad + b.text.matches('\n').count();
        self.text += &b.text;
        let room = MAX_UNKNOWN.saturating_sub(self.unknown.len());
        self.unknown.extend(b.unknown.into_iter().take(room));
        self
    }
}

/// The same text, wherever in the script it is written (leading line padding aside).
fn same_text(a: &str, b: &str) -> bool {
    a.trim_start_matches('\n') == b.trim_start_matches('\n')
}

/// What one command writes: the text, the script line its first character is at, the unknowns.
#[derive(Clone)]
struct Block {
    text: String,
    line: usize,
    unknown: Vec<(String, Loc)>,
    /// A heredoc's characters where they are written; empty for `echo` and `printf`.
    raw: Raw,
}

impl Walker {
    /// Records the files a command writes through `> F`, `>> F` or `tee F`.
    pub(super) fn write_files(
        &mut self,
        fields: &[Field],
        outputs: &[(Word, bool)],
        stdin: Option<&Heredoc>,
    ) {
        let texts: Vec<&str> = fields.iter().map(Field::as_str).collect();
        let name = texts.first().map_or("", |t| commands::basename(t));
        if name == "tee" {
            let append = texts[1..].iter().any(|t| *t == "-a" || *t == "--append");
            let content = self.heredoc_block(stdin);
            for (f, t) in fields[1..].iter().zip(&texts[1..]) {
                if !t.starts_with('-') && f.names.is_empty() {
                    self.record(t, content.clone(), append);
                }
            }
        }
        // The last redirection of the standard output is where it goes.
        let Some((target, append)) = outputs.last() else {
            return;
        };
        let path = self.scope.expand(target, false);
        let Some(path) = path.first().filter(|f| f.names.is_empty()).map(Field::text) else {
            return;
        };
        if path.starts_with("/dev/") || fields.is_empty() {
            return;
        }
        let content = match name {
            "cat" if texts.len() == 1 || texts[1..] == ["-"] => self.heredoc_block(stdin),
            "echo" => self.echo_block(fields, &texts),
            "printf" => self.printf_block(fields, &texts),
            _ => Err(format!(
                "{path} is written by `{}`, whose output kvlint does not know",
                texts.join(" ")
            )),
        };
        self.record(&path, content, *append);
    }

    fn record(&mut self, path: &str, block: Result<Block, String>, append: bool) {
        let Some(i) = self.files.iter().position(|w| w.path == path) else {
            if self.files.len() >= MAX_FILES {
                return;
            }
            let raw = match &block {
                Ok(b) if !b.raw.is_empty() => Some(vec![b.raw.clone()]),
                _ => None,
            };
            let content = match (block, append) {
                (Ok(_), true) => Err(format!(
                    "{path} is appended to, and what it held before is not in the script"
                )),
                (block, _) => block.map(|b| Body::default().with(b)),
            };
            self.files.push(Written {
                path: path.to_string(),
                content,
                cwd: self.cwd_changes,
                raw,
                read: false,
            });
            return;
        };
        let branch = self.in_compound();
        let w = &mut self.files[i];
        w.raw = match (w.raw.take(), &block, append) {
            (_, Err(_), _) => None,
            (_, Ok(b), _) if b.raw.is_empty() => None,
            (Some(mut blocks), Ok(b), true) => {
                blocks.push(b.raw.clone());
                Some(blocks)
            }
            (None, Ok(_), true) => None,
            (old, Ok(b), false) => {
                let differs = old
                    .is_some_and(|o| o.concat().iter().map(|r| r.2).ne(b.raw.iter().map(|r| r.2)));
                (!(branch && differs)).then(|| vec![b.raw.clone()])
            }
        };
        if w.raw
            .as_ref()
            .is_some_and(|r| r.iter().map(Vec::len).sum::<usize>() > MAX_RAW)
        {
            w.raw = None;
        }
        let content = &mut self.files[i].content;
        match (content.as_mut(), block, append) {
            (_, Err(why), _) => *content = Err(why),
            // Replaced with other text where it may not run: which text the file holds is
            // decided at run time.
            (Ok(body), Ok(b), false) if branch && !same_text(&body.text, &b.text) => {
                *content = Err(format!(
                    "{path} is written with different texts on different paths of the script"
                ))
            }
            (_, Ok(b), false) => *content = Ok(Body::default().with(b)),
            (Ok(body), Ok(b), true) => {
                let body = std::mem::take(body);
                *content = Ok(body.with(b));
            }
            // Appending to a file whose content is unknown leaves it unknown.
            (Err(_), Ok(_), true) => {}
        }
    }

    /// A heredoc on the standard input: as written when its delimiter is quoted, else expanded.
    fn heredoc_block(&mut self, stdin: Option<&Heredoc>) -> Result<Block, String> {
        let Some(doc) = stdin else {
            return Err("written from a standard input kvlint does not see".to_string());
        };
        let line = doc.body.first().map_or(0, |ch| self.line_of(ch.start));
        if doc.quoted {
            let text = doc.body.iter().map(|ch| ch.c).collect();
            return Ok(Block {
                text,
                line,
                unknown: Vec::new(),
                raw: raw_of(doc),
            });
        }
        let span = match (doc.body.first(), doc.body.last()) {
            (Some(a), Some(b)) => (a.start, b.end),
            _ => (0, 0),
        };
        let word = Word {
            parts: lex::heredoc_parts(&doc.body),
            loc: span,
        };
        let fields = self.scope.expand(&word, false);
        let mut block = self.block_of(&fields, line, "");
        block.raw = raw_of(doc);
        Ok(block)
    }

    /// `echo [-n] WORDS`: the words joined by spaces, and a newline unless `-n`.
    fn echo_block(&self, fields: &[Field], texts: &[&str]) -> Result<Block, String> {
        let newline = texts.get(1).is_none_or(|t| *t != "-n");
        let words = &fields[if newline { 1 } else { 2 }..];
        if words.first().is_some_and(|f| f.text().starts_with('-')) {
            return Err(format!("written by `{}`", texts.join(" ")));
        }
        let line = fields.first().map_or(0, |f| self.line_of(f.loc.start));
        Ok(self.block_of(words, line, if newline { "\n" } else { "" }))
    }

    /// `printf TEXT` with no conversion: TEXT with its backslash escapes.
    fn printf_block(&self, fields: &[Field], texts: &[&str]) -> Result<Block, String> {
        let [_, format] = texts else {
            return Err(format!("written by `{}`", texts.join(" ")));
        };
        if format.replace("%%", "").contains('%') {
            return Err(format!("written by `{}`", texts.join(" ")));
        }
        let mut text = String::new();
        let mut chars = format
            .replace("%%", "%")
            .chars()
            .collect::<Vec<_>>()
            .into_iter();
        while let Some(c) = chars.next() {
            text.push(match (c, c == '\\') {
                (_, true) => match chars.next() {
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some(other) => other,
                    None => '\\',
                },
                (c, false) => c,
            });
        }
        let mut block = self.block_of(&fields[1..2], self.line_of(fields[0].loc.start), "");
        block.text = text;
        Ok(block)
    }

    /// Expanded fields joined by spaces, with the variables left in them.
    fn block_of(&self, fields: &[Field], line: usize, end: &str) -> Block {
        let mut unknown = Vec::new();
        for f in fields.iter().filter(|f| !f.names.is_empty()) {
            // Each character's start, listed once: looked up per name, many names were quadratic.
            let starts: Vec<usize> = f.chars.iter().map(|c| c.1).collect();
            for (i, name) in &f.names {
                let start = starts.get(*i).copied().unwrap_or(f.loc.start);
                let at = self.scope.loc((start, start + name.len() + 1));
                unknown.push((name.clone(), at));
            }
        }
        let text = fields.iter().map(Field::text).collect::<Vec<_>>().join(" ") + end;
        Block {
            text,
            line,
            unknown,
            raw: Raw::new(),
        }
    }

    fn line_of(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset)
    }

    /// The written files a launch's arguments name, and `INP004` for what is unknown in them.
    pub(super) fn files_read(&mut self, args: &[Field]) -> Vec<LaunchFile> {
        let mut out: Vec<LaunchFile> = Vec::new();
        for a in args {
            let text = a.text();
            let value = match text.split_once('=') {
                Some((opt, v)) if opt.starts_with('-') => v,
                _ => text.as_str(),
            };
            let norm = |p: &str| p.trim_start_matches("./").to_string();
            let Some(i) = self.files.iter().position(|w| norm(&w.path) == norm(value)) else {
                continue;
            };
            self.files[i].read = true;
            let w = &self.files[i];
            if out.iter().any(|f| f.path == value) {
                continue;
            }
            let relative = !w.path.starts_with('/') || !value.starts_with('/');
            let content = match w.content.clone() {
                Ok(_) if relative && w.cwd != self.cwd_changes => Err(format!(
                    "{} is a relative path, and the script changes directory (`cd`) between writing and reading it",
                    w.path
                )),
                c => c.map(|b| (format!("{} (written by the script)", w.path), b.text)),
            };
            let unknown = w
                .content
                .as_ref()
                .map(|b| b.unknown.clone())
                .unwrap_or_default();
            for (name, at) in unknown {
                let seen = |f: &Finding| f.rule == "INP004" && f.primary == Some(at);
                if self.findings.iter().any(seen) {
                    continue;
                }
                self.findings.push(
                    Finding::new("INP004", Some(at))
                        .var("flag", format!("what the script writes into {value}"))
                        .var("vars", name)
                        .label("read by the launch from the written file"),
                );
            }
            out.push(LaunchFile {
                path: value.to_string(),
                content,
                mapping: None,
            });
        }
        out
    }
}

/// A heredoc's characters where the script writes them.
fn raw_of(doc: &Heredoc) -> Raw {
    doc.body.iter().map(|ch| (ch.start, ch.end, ch.c)).collect()
}

impl Walker {
    /// Files the script writes from heredocs and no launch of it names (`cat > /tmp/model.json
    /// <<EOF` before the image's own server starts): each with the script's text blanked outside
    /// the file's blocks, newlines kept, so that a reader of the file's own kind reads it with its
    /// spans in the script. Variables in an unquoted heredoc stay as written (`$TP`), values
    /// kvlint does not see; a block whose characters are not the script's own bytes (an escape
    /// inside `sh -c "..."`) leaves the file out.
    pub(super) fn written_inputs(&self, text: &str) -> Vec<(String, String)> {
        let blank = |b: u8| if b == b'\n' { b'\n' } else { b' ' };
        let mut out = Vec::new();
        let readable = |w: &&Written| {
            let kind = crate::extract::kind(&w.path, "");
            use crate::extract::Kind;
            !w.read
                && w.raw.is_some()
                && matches!(
                    kind,
                    Kind::Yaml | Kind::Json | Kind::Pbtxt | Kind::Properties | Kind::Toml
                )
        };
        for w in self.files.iter().filter(readable).take(MAX_WRITTEN_INPUTS) {
            let Some(blocks) = &w.raw else { continue };
            let mut bytes: Vec<u8> = text.bytes().map(blank).collect();
            let mut whole = true;
            for &(start, end, c) in blocks.iter().flatten() {
                let mut buf = [0u8; 4];
                let ch = c.encode_utf8(&mut buf);
                if text.get(start..end) != Some(&*ch) {
                    whole = false;
                    break;
                }
                bytes[start..end].copy_from_slice(ch.as_bytes());
            }
            match String::from_utf8(bytes) {
                Ok(t) if whole && !t.trim().is_empty() => out.push((w.path.clone(), t)),
                _ => {}
            }
        }
        out
    }
}

//! Shell scripts, one-line commands and Dockerfiles → engine launches.
//!
//! A small POSIX-shell lexer that keeps, for every character of every word, the byte range it was
//! read from. That lets `sh -c '...'` strings be lexed again while their words still point into the
//! original file, and lets every argv token carry the span it was written at (quotes included).

use crate::launch::{Arg, Engine, Launch, Placement};
use crate::source::{FileId, Loc};

/// Nesting limit for `sh -c "sh -c ..."` and `${A:-${B:-...}}`, so hostile input cannot blow the stack.
const MAX_DEPTH: usize = 16;

/// One character after unquoting, with the byte range of the source text it came from.
#[derive(Debug, Clone, Copy)]
struct Ch {
    c: char,
    start: usize,
    end: usize,
    quoted: bool,
}

/// The characters of a text, each mapped to its own bytes.
fn chars_of(text: &str, base: usize) -> Vec<Ch> {
    text.char_indices()
        .map(|(i, c)| Ch {
            c,
            start: base + i,
            end: base + i + c.len_utf8(),
            quoted: false,
        })
        .collect()
}

/// A piece of a word as written.
#[derive(Debug, Clone)]
enum Part {
    Lit(Vec<Ch>),
    /// `$NAME`, `${NAME}`, `${NAME:-word}`; `raw` is the reference as written.
    Param {
        name: String,
        op: ParamOp,
        raw: Vec<Ch>,
        quoted: bool,
    },
    /// `$(...)`, backticks, `$((...))`: never known before the script runs.
    Subst {
        raw: Vec<Ch>,
    },
}

#[derive(Debug, Clone)]
enum ParamOp {
    Plain,
    /// `:-` / `-` (and `:=` / `=`, which also assign); `colon` makes an empty value count as unset.
    Default {
        colon: bool,
        assign: bool,
        word: Vec<Part>,
    },
    /// `${#X}`, `${X%y}`, `${X:+y}`, ...: not evaluated.
    Other,
}

/// A word with the byte range it covers in the file.
#[derive(Debug, Clone)]
struct Word {
    parts: Vec<Part>,
    loc: (usize, usize),
}

#[derive(Debug)]
enum Tok {
    Word(Word),
    /// `;`, `&`, `&&`, `||`, `|`, `(`, `)`, newline: the end of a simple command.
    Sep,
}

struct Lexer<'a> {
    src: &'a [Ch],
    i: usize,
    /// Heredocs opened on the current line: (delimiter, strip leading tabs).
    heredocs: Vec<(String, bool)>,
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\r'
}

fn is_meta(c: char) -> bool {
    is_blank(c) || matches!(c, '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>')
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn push_lit(parts: &mut Vec<Part>, ch: Ch) {
    if let Some(Part::Lit(chs)) = parts.last_mut() {
        chs.push(ch);
    } else {
        parts.push(Part::Lit(vec![ch]));
    }
}

impl<'a> Lexer<'a> {
    fn new(src: &'a [Ch]) -> Self {
        Lexer {
            src,
            i: 0,
            heredocs: Vec::new(),
        }
    }

    fn peek(&self, k: usize) -> Option<char> {
        self.src.get(self.i + k).map(|ch| ch.c)
    }

    fn tokens(mut self) -> Vec<Tok> {
        let mut out = Vec::new();
        while let Some(tok) = self.next_tok() {
            out.push(tok);
        }
        out
    }

    fn next_tok(&mut self) -> Option<Tok> {
        loop {
            let c = self.peek(0)?;
            if let Some(len) = self.continuation(self.i) {
                self.i += len;
                continue;
            }
            match c {
                _ if is_blank(c) => self.i += 1,
                '#' => self.skip_line(),
                '\n' => {
                    self.i += 1;
                    self.skip_heredoc_bodies();
                    return Some(Tok::Sep);
                }
                '<' | '>' => self.redirect(),
                '&' if self.peek(1) == Some('>') => self.redirect(),
                ';' | '&' | '|' | '(' | ')' => {
                    self.i += 1;
                    if matches!(
                        (c, self.peek(0)),
                        ('&', Some('&')) | ('|', Some('|' | '&')) | (';', Some(';'))
                    ) {
                        self.i += 1;
                    }
                    return Some(Tok::Sep);
                }
                _ => {
                    let word = self.word();
                    if self.is_io_number(&word) {
                        continue;
                    }
                    return Some(Tok::Word(word));
                }
            }
        }
    }

    /// `2` in `2>&1` is a file descriptor, not an argument.
    fn is_io_number(&self, word: &Word) -> bool {
        let digits = matches!(word.parts.as_slice(), [Part::Lit(chs)]
            if chs.iter().all(|ch| ch.c.is_ascii_digit() && !ch.quoted));
        digits && matches!(self.peek(0), Some('<' | '>'))
    }

    fn skip_line(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.i += 1;
        }
    }

    /// A redirection and its target word are dropped; `<<` also queues a heredoc body to skip.
    fn redirect(&mut self) {
        let heredoc =
            self.peek(0) == Some('<') && self.peek(1) == Some('<') && self.peek(2) != Some('<');
        let strip_tabs = heredoc && self.peek(2) == Some('-');
        while self
            .peek(0)
            .is_some_and(|c| matches!(c, '<' | '>' | '&' | '|' | '-'))
        {
            self.i += 1;
            if !heredoc && self.peek(0) == Some('-') {
                break;
            }
        }
        while self.peek(0).is_some_and(is_blank) {
            self.i += 1;
        }
        if self.peek(0).is_some_and(|c| !is_meta(c)) {
            let target = self.word();
            if heredoc {
                let delim: String = literal_chars(&target.parts).iter().map(|ch| ch.c).collect();
                self.heredocs.push((delim, strip_tabs));
            }
        }
    }

    fn skip_heredoc_bodies(&mut self) {
        for (delim, strip_tabs) in std::mem::take(&mut self.heredocs) {
            while self.i < self.src.len() {
                let start = self.i;
                self.skip_line();
                let line: String = self.src[start..self.i].iter().map(|ch| ch.c).collect();
                self.i = (self.i + 1).min(self.src.len());
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if line.trim_end_matches('\r') == delim {
                    break;
                }
            }
        }
    }

    fn word(&mut self) -> Word {
        let start = self.i;
        let mut parts = Vec::new();
        while let Some(c) = self.peek(0) {
            if is_meta(c) {
                break;
            }
            self.word_char(&mut parts, 0);
        }
        // A continuation right before the blank that ends the word is not part of it.
        let mut end = self.i;
        while let Some(k) =
            (end.saturating_sub(3)..end).find(|&k| self.continuation(k) == Some(end - k))
        {
            end = k;
        }
        Word {
            parts,
            loc: self.span(start, end.max(start)),
        }
    }

    /// Length of a `\`-newline (or `\`-CRLF) line continuation at `at`.
    fn continuation(&self, at: usize) -> Option<usize> {
        let c = |k: usize| self.src.get(at + k).map(|ch| ch.c);
        match (c(0), c(1), c(2)) {
            (Some('\\'), Some('\n'), _) => Some(2),
            (Some('\\'), Some('\r'), Some('\n')) => Some(3),
            _ => None,
        }
    }

    /// Byte range of the source characters `from..to`.
    fn span(&self, from: usize, to: usize) -> (usize, usize) {
        let chars = &self.src[from.min(self.src.len())..to.min(self.src.len())];
        match (chars.first(), chars.last()) {
            (Some(a), Some(b)) => (a.start, b.end.max(a.start)),
            _ => {
                let at = self
                    .src
                    .get(from)
                    .map_or_else(|| self.src.last().map_or(0, |ch| ch.end), |ch| ch.start);
                (at, at)
            }
        }
    }

    /// One unquoted element of a word: a quoted string, an escape, an expansion or a character.
    fn word_char(&mut self, parts: &mut Vec<Part>, depth: usize) {
        let Some(&ch) = self.src.get(self.i) else {
            return;
        };
        match ch.c {
            '\\' => self.escape(parts, |_| true),
            '\'' => self.single_quoted(parts),
            '"' => self.double_quoted(parts, depth),
            '$' => self.dollar(parts, false, depth),
            '`' => self.backtick(parts),
            _ => {
                self.i += 1;
                push_lit(parts, ch);
            }
        }
    }

    /// `\x`: `x` taken literally when `escapes(x)`, else the backslash stays; `\`-newline vanishes.
    fn escape(&mut self, parts: &mut Vec<Part>, escapes: impl Fn(char) -> bool) {
        let bs = self.src[self.i];
        if let Some(len) = self.continuation(self.i) {
            self.i += len;
            return;
        }
        match self.src.get(self.i + 1).copied() {
            Some(next) if escapes(next.c) => {
                self.i += 2;
                push_lit(
                    parts,
                    Ch {
                        c: next.c,
                        start: bs.start,
                        end: next.end,
                        quoted: true,
                    },
                );
            }
            _ => {
                self.i += 1;
                push_lit(parts, Ch { quoted: true, ..bs });
            }
        }
    }

    fn single_quoted(&mut self, parts: &mut Vec<Part>) {
        self.i += 1;
        // An empty '' still makes the word quoted, so it yields an empty argument.
        let mut chs = Vec::new();
        while let Some(&ch) = self.src.get(self.i) {
            self.i += 1;
            if ch.c == '\'' {
                break;
            }
            chs.push(Ch { quoted: true, ..ch });
        }
        parts.push(Part::Lit(chs));
    }

    fn double_quoted(&mut self, parts: &mut Vec<Part>, depth: usize) {
        self.i += 1;
        parts.push(Part::Lit(Vec::new()));
        while let Some(&ch) = self.src.get(self.i) {
            match ch.c {
                '"' => {
                    self.i += 1;
                    return;
                }
                '\\' => self.escape(parts, |c| matches!(c, '$' | '`' | '"' | '\\')),
                '$' => self.dollar(parts, true, depth),
                '`' => self.backtick(parts),
                _ => {
                    self.i += 1;
                    push_lit(parts, Ch { quoted: true, ..ch });
                }
            }
        }
    }

    fn backtick(&mut self, parts: &mut Vec<Part>) {
        let start = self.i;
        self.i += 1;
        while let Some(c) = self.peek(0) {
            self.i += if c == '\\' { 2 } else { 1 };
            if c == '`' {
                break;
            }
        }
        self.i = self.i.min(self.src.len());
        parts.push(Part::Subst {
            raw: self.src[start..self.i].to_vec(),
        });
    }

    fn dollar(&mut self, parts: &mut Vec<Part>, quoted: bool, depth: usize) {
        let start = self.i;
        let dollar = self.src[self.i];
        match self.peek(1) {
            Some('{') if depth < MAX_DEPTH => self.braced(parts, quoted, depth),
            Some('(') => {
                self.i += 1;
                self.skip_parens();
                parts.push(Part::Subst {
                    raw: self.src[start..self.i].to_vec(),
                });
            }
            Some(c) if is_name_start(c) => {
                self.i += 1;
                while self.peek(0).is_some_and(is_name_char) {
                    self.i += 1;
                }
                let name = self.src[start + 1..self.i].iter().map(|ch| ch.c).collect();
                let raw = self.src[start..self.i].to_vec();
                parts.push(Part::Param {
                    name,
                    op: ParamOp::Plain,
                    raw,
                    quoted,
                });
            }
            Some(c)
                if c.is_ascii_digit() || matches!(c, '@' | '*' | '#' | '?' | '$' | '!' | '-') =>
            {
                self.i += 2;
                let raw = self.src[start..self.i].to_vec();
                parts.push(Part::Param {
                    name: c.to_string(),
                    op: ParamOp::Other,
                    raw,
                    quoted,
                });
            }
            _ => {
                self.i += 1;
                push_lit(parts, Ch { quoted, ..dollar });
            }
        }
    }

    /// From an opening `(` to its matching `)`, skipping quoted text.
    fn skip_parens(&mut self) {
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                '\\' => self.i = (self.i + 1).min(self.src.len()),
                '\'' | '"' | '`' => {
                    while let Some(q) = self.peek(0) {
                        self.i += 1;
                        if q == c {
                            break;
                        }
                        if q == '\\' && c != '\'' {
                            self.i = (self.i + 1).min(self.src.len());
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// `${...}` starting at `$`.
    fn braced(&mut self, parts: &mut Vec<Part>, quoted: bool, depth: usize) {
        let start = self.i;
        self.i += 2;
        let name_start = self.i;
        while self.peek(0).is_some_and(is_name_char) {
            self.i += 1;
        }
        let name: String = self.src[name_start..self.i].iter().map(|ch| ch.c).collect();
        let colon = self.peek(0) == Some(':');
        let op_char = if colon { self.peek(1) } else { self.peek(0) };
        let op = match op_char {
            Some('}') if !colon && !name.is_empty() => {
                self.i += 1;
                ParamOp::Plain
            }
            Some(c @ ('-' | '=')) if !name.is_empty() => {
                self.i += if colon { 2 } else { 1 };
                let word = self.default_word(quoted, depth);
                ParamOp::Default {
                    colon,
                    assign: c == '=',
                    word,
                }
            }
            _ => {
                self.skip_braces();
                ParamOp::Other
            }
        };
        let name = if name.is_empty() {
            self.src[start..self.i].iter().map(|ch| ch.c).collect()
        } else {
            name
        };
        parts.push(Part::Param {
            name,
            op,
            raw: self.src[start..self.i].to_vec(),
            quoted,
        });
    }

    /// The `word` of `${X:-word}`, up to the closing brace.
    fn default_word(&mut self, quoted: bool, depth: usize) -> Vec<Part> {
        let mut parts = Vec::new();
        while let Some(&ch) = self.src.get(self.i) {
            match ch.c {
                '}' => {
                    self.i += 1;
                    break;
                }
                '\\' if quoted => {
                    self.escape(&mut parts, |c| matches!(c, '$' | '`' | '"' | '\\' | '}'))
                }
                '$' if quoted => self.dollar(&mut parts, true, depth + 1),
                '"' if quoted => self.i += 1,
                _ if quoted => {
                    self.i += 1;
                    push_lit(&mut parts, Ch { quoted: true, ..ch });
                }
                _ => self.word_char(&mut parts, depth + 1),
            }
        }
        parts
    }

    fn skip_braces(&mut self) {
        let mut depth = 1usize;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                '\\' => self.i = (self.i + 1).min(self.src.len()),
                _ => {}
            }
        }
    }
}

/// The characters of a word if it has no expansions (heredoc delimiters, keywords).
fn literal_chars(parts: &[Part]) -> Vec<Ch> {
    parts
        .iter()
        .flat_map(|p| match p {
            Part::Lit(chs) => chs.clone(),
            Part::Param { raw, .. } | Part::Subst { raw } => raw.clone(),
        })
        .collect()
}

/// A shell variable known at some point of the script.
#[derive(Debug, Clone)]
struct Var {
    name: String,
    value: Field,
    exported: bool,
}

/// One argv word after expansion: its characters (mapped to the file), its span as written and
/// the variables it still contains.
#[derive(Debug, Clone)]
struct Field {
    chars: Vec<Ch>,
    loc: Loc,
    /// Unresolved variables, by the index of the character where their reference starts.
    names: Vec<(usize, String)>,
}

impl Field {
    fn text(&self) -> String {
        self.chars.iter().map(|ch| ch.c).collect()
    }

    fn from_chars(chars: Vec<Ch>, loc: Loc) -> Self {
        Field {
            chars,
            loc,
            names: Vec::new(),
        }
    }

    fn unresolved(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for (_, name) in &self.names {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }

    /// The characters from `skip` on (the value of `NAME=value`).
    fn tail(&self, skip: usize) -> Field {
        let names = self
            .names
            .iter()
            .filter(|(i, _)| *i >= skip)
            .map(|(i, n)| (i - skip, n.clone()))
            .collect();
        Field {
            chars: self.chars.get(skip..).unwrap_or_default().to_vec(),
            loc: self.loc,
            names,
        }
    }

    fn arg(&self) -> Arg {
        Arg {
            text: self.text(),
            loc: self.loc,
            unresolved: self.unresolved(),
        }
    }
}

/// The characters a word expands to, and whether any of it was quoted (`""` is an empty word).
#[derive(Default)]
struct Expansion {
    pieces: Vec<Piece>,
    quoted: bool,
}

/// A character of an expanded word; `split` marks text from an unquoted expansion (field splitting).
#[derive(Clone)]
struct Piece {
    ch: Ch,
    split: bool,
    unresolved: Option<String>,
}

/// Walks a script's commands, tracking variables, and collects launches.
struct Walker {
    file: FileId,
    vars: Vec<Var>,
    launches: Vec<Launch>,
    depth: usize,
}

impl Walker {
    fn new(file: FileId) -> Self {
        Walker {
            file,
            vars: Vec::new(),
            launches: Vec::new(),
            depth: 0,
        }
    }

    /// Lexes and walks a script given as mapped characters.
    fn script(&mut self, src: &[Ch]) {
        let mut words = Vec::new();
        for tok in Lexer::new(src).tokens() {
            match tok {
                Tok::Word(w) => words.push(w),
                Tok::Sep => self.command(std::mem::take(&mut words)),
            }
        }
        self.command(words);
    }

    fn loc(&self, (start, end): (usize, usize)) -> Loc {
        Loc::new(self.file, start..end)
    }

    fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().rev().find(|v| v.name == name)
    }

    fn set_var(&mut self, name: &str, value: Field, export: bool) {
        let exported = export || self.var(name).is_some_and(|v| v.exported);
        self.vars.retain(|v| v.name != name);
        self.vars.push(Var {
            name: name.to_string(),
            value,
            exported,
        });
    }

    /// One simple command: leading assignments, then the words.
    fn command(&mut self, words: Vec<Word>) {
        let mut prefix = Vec::new();
        let mut rest = words.as_slice();
        while let Some((first, tail)) = rest.split_first() {
            let Some(assign) = self.assignment(first) else {
                break;
            };
            prefix.push(assign);
            rest = tail;
        }
        if rest.is_empty() {
            for (name, value) in prefix {
                self.set_var(&name, value, false);
            }
            return;
        }
        let head = self.expand(&rest[0], true);
        if let Some(builtin) = head.first().map(Field::text) {
            if matches!(
                builtin.as_str(),
                "export" | "declare" | "typeset" | "readonly" | "local"
            ) {
                self.declaration(&rest[1..], builtin == "export");
                return;
            }
        }
        let fields: Vec<Field> = head
            .into_iter()
            .chain(rest[1..].iter().flat_map(|w| self.expand(w, true)))
            .collect();
        self.run(&fields, prefix);
    }

    /// `export A=1 B`, `declare -x A=1`: assignments without field splitting.
    fn declaration(&mut self, words: &[Word], export: bool) {
        let export = export || words.iter().any(|w| matches!(literal_text(w).as_deref(), Some(f) if f.starts_with('-') && f.contains('x')));
        for w in words {
            if let Some((name, value)) = self.assignment(w) {
                self.set_var(&name, value, export);
            } else if let Some(name) = literal_text(w).filter(|n| is_identifier(n)) {
                if let Some(v) = self.vars.iter_mut().rev().find(|v| v.name == name) {
                    v.exported |= export;
                }
            }
        }
    }

    /// `NAME=value` with an unquoted name: the name and the expanded value (spanning the whole word).
    fn assignment(&mut self, w: &Word) -> Option<(String, Field)> {
        let Some(Part::Lit(chs)) = w.parts.first() else {
            return None;
        };
        let eq = chs.iter().position(|ch| ch.c == '=' && !ch.quoted)?;
        let name: String = chs[..eq].iter().map(|ch| ch.c).collect();
        if !is_identifier(&name) || chs[..eq].iter().any(|ch| ch.quoted) {
            return None;
        }
        let mut parts = w.parts.clone();
        parts[0] = Part::Lit(chs[eq + 1..].to_vec());
        let value = Word { parts, loc: w.loc };
        let field = self
            .expand(&value, false)
            .into_iter()
            .next()
            .unwrap_or_else(|| Field::from_chars(Vec::new(), self.loc(w.loc)));
        Some((name, field))
    }

    /// Word expansion: parameters substituted, quotes removed, unquoted expansions field-split.
    fn expand(&mut self, w: &Word, split: bool) -> Vec<Field> {
        let mut exp = Expansion::default();
        self.expand_parts(&w.parts, split, &mut exp, 0);
        let (pieces, quoted) = (exp.pieces, exp.quoted);
        let loc = self.loc(w.loc);
        let mut fields = Vec::new();
        let mut cur: Vec<Piece> = Vec::new();
        for p in pieces {
            if p.split && p.ch.c.is_whitespace() {
                if !cur.is_empty() {
                    fields.push(field_of(std::mem::take(&mut cur), loc));
                }
            } else {
                cur.push(p);
            }
        }
        if !cur.is_empty() || (fields.is_empty() && quoted) {
            fields.push(field_of(cur, loc));
        }
        fields
    }

    fn expand_parts(&mut self, parts: &[Part], split: bool, exp: &mut Expansion, depth: usize) {
        for part in parts {
            match part {
                Part::Lit(chs) => {
                    exp.quoted |= chs.is_empty() || chs.iter().any(|ch| ch.quoted);
                    exp.pieces.extend(chs.iter().map(|&ch| Piece {
                        ch,
                        split: false,
                        unresolved: None,
                    }));
                }
                Part::Param {
                    name,
                    op,
                    raw,
                    quoted: q,
                } => {
                    exp.quoted |= *q;
                    self.expand_param(name, op, raw, split && !q, exp, depth);
                }
                Part::Subst { raw } => {
                    push_unresolved(&mut exp.pieces, raw, raw.iter().map(|ch| ch.c).collect())
                }
            }
        }
    }

    /// `$NAME` and `${NAME...}`: the known value, the default word, or the reference as written.
    fn expand_param(
        &mut self,
        name: &str,
        op: &ParamOp,
        raw: &[Ch],
        split: bool,
        exp: &mut Expansion,
        depth: usize,
    ) {
        let out = &mut exp.pieces;
        let known = self.var(name).map(|v| v.value.clone());
        match (op, known) {
            (ParamOp::Other, _) => push_unresolved(out, raw, name.to_string()),
            (
                ParamOp::Default {
                    colon,
                    assign,
                    word,
                },
                value,
            ) if depth < MAX_DEPTH
                && value.as_ref().is_none_or(|v| *colon && v.chars.is_empty()) =>
            {
                let from = out.len();
                self.expand_parts(word, split, exp, depth + 1);
                if *assign {
                    let chars = exp.pieces[from..].iter().map(|p| p.ch).collect();
                    let (s, e) = (
                        raw.first().map_or(0, |c| c.start),
                        raw.last().map_or(0, |c| c.end),
                    );
                    self.set_var(name, Field::from_chars(chars, self.loc((s, e))), false);
                }
            }
            (_, Some(value)) => {
                let (start, end) = (
                    raw.first().map_or(0, |c| c.start),
                    raw.last().map_or(0, |c| c.end),
                );
                for (i, ch) in value.chars.iter().enumerate() {
                    let unresolved = value
                        .names
                        .iter()
                        .find(|(at, _)| *at == i)
                        .map(|(_, n)| n.clone());
                    out.push(Piece {
                        ch: Ch { start, end, ..*ch },
                        split,
                        unresolved,
                    });
                }
            }
            (_, None) => push_unresolved(out, raw, name.to_string()),
        }
    }

    /// A command's expanded words: recurse into `sh -c`, or record an engine launch.
    fn run(&mut self, fields: &[Field], prefix: Vec<(String, Field)>) {
        let texts: Vec<String> = fields.iter().map(Field::text).collect();
        let Some(first) = texts.iter().position(|t| !is_reserved(t)) else {
            return;
        };
        if IGNORED_COMMANDS.contains(&basename(&texts[first])) {
            return;
        }
        for j in first..texts.len() {
            if let Some(script) = shell_script_index(&texts, j) {
                self.sh_c(&fields[first..j], &fields[script], prefix);
                return;
            }
            if let Some((engine, args_from)) = match_launch(&texts, j) {
                self.launch(engine, fields, (first, j, args_from), prefix);
                return;
            }
        }
    }

    /// `sh -c 'script'`: a fresh shell that sees only exported variables and the command's env.
    fn sh_c(&mut self, before: &[Field], script: &Field, prefix: Vec<(String, Field)>) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        let mut inner = Walker {
            file: self.file,
            vars: Vec::new(),
            launches: Vec::new(),
            depth: self.depth + 1,
        };
        for (name, value) in self.env_of(before, prefix) {
            inner.set_var(&name, value, true);
        }
        let src: Vec<Ch> = script
            .chars
            .iter()
            .map(|&ch| Ch {
                quoted: false,
                ..ch
            })
            .collect();
        inner.script(&src);
        self.launches.append(&mut inner.launches);
    }

    /// Exported variables, then `KEY=value` prefixes, then `env KEY=value` words before the command.
    fn env_of(&self, before: &[Field], prefix: Vec<(String, Field)>) -> Vec<(String, Field)> {
        let mut env: Vec<(String, Field)> = self
            .vars
            .iter()
            .filter(|v| v.exported)
            .map(|v| (v.name.clone(), v.value.clone()))
            .collect();
        let words = before.iter().filter_map(|f| {
            let text = f.text();
            let (name, _) = text.split_once('=')?;
            let skip = name.chars().count() + 1;
            is_identifier(name).then(|| (name.to_string(), f.tail(skip)))
        });
        for (name, value) in prefix.into_iter().chain(words) {
            env.retain(|(n, _)| *n != name);
            env.push((name, value));
        }
        env
    }

    fn launch(
        &mut self,
        engine: Engine,
        fields: &[Field],
        (first, cmd, args): (usize, usize, usize),
        prefix: Vec<(String, Field)>,
    ) {
        let Some(command) = fields[cmd..args].iter().map(|f| f.loc).reduce(Loc::join) else {
            return;
        };
        let env = self
            .env_of(&fields[first..cmd], prefix)
            .into_iter()
            .map(|(name, value)| (name, value.arg()))
            .collect();
        self.launches.push(Launch {
            engine,
            command,
            args: fields[args..].iter().map(Field::arg).collect(),
            env,
            object: None,
            placement: Placement::default(),
            role_hint: None,
            group: None,
            engine_version: None,
            files: Vec::new(),
        });
    }

    /// Defines an exported variable (Dockerfile `ENV`).
    fn export(&mut self, name: &str, value: Field) {
        self.set_var(name, value, true);
    }

    /// Walks an exec-form argv (Dockerfile `CMD [...]`): no expansion, no assignments.
    fn argv(&mut self, fields: &[Field]) {
        self.run(fields, Vec::new());
    }
}

fn push_unresolved(out: &mut Vec<Piece>, raw: &[Ch], name: String) {
    let mut name = Some(name);
    out.extend(raw.iter().map(|&ch| Piece {
        ch,
        split: false,
        unresolved: name.take(),
    }));
}

fn field_of(pieces: Vec<Piece>, loc: Loc) -> Field {
    let names = pieces
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p.unresolved.clone()?)))
        .collect();
    Field {
        chars: pieces.into_iter().map(|p| p.ch).collect(),
        loc,
        names,
    }
}

/// The word's text when it has no expansions.
fn literal_text(w: &Word) -> Option<String> {
    w.parts
        .iter()
        .map(|p| match p {
            Part::Lit(chs) => Some(chs.iter().map(|ch| ch.c).collect::<String>()),
            _ => None,
        })
        .collect()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(is_name_start) && chars.all(is_name_char)
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Words that may precede a command without being it (`if`, `then`, `do`, `{`, `!`).
fn is_reserved(word: &str) -> bool {
    matches!(
        word,
        "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "{" | "!" | "time"
    )
}

/// Commands whose arguments mention engines without launching them (`echo vllm serve`).
const IGNORED_COMMANDS: &[&str] = &[
    "echo", "printf", "pip", "pip3", "grep", "egrep", "pgrep", "pkill", "kill", "killall", "cat",
    "which", "type", "logger", "test", "[",
];

/// `sh -c SCRIPT` at `j`: the index of SCRIPT.
fn shell_script_index(texts: &[String], j: usize) -> Option<usize> {
    if !matches!(
        basename(&texts[j]),
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash"
    ) {
        return None;
    }
    let mut k = j + 1;
    while let Some(opt) = texts
        .get(k)
        .filter(|t| t.len() > 1 && (t.starts_with('-') || t.starts_with('+')))
    {
        if opt.starts_with("--") {
            k += 1;
        } else if matches!(&opt[1..], "o" | "O") {
            k += 2;
        } else if opt.starts_with('-') && opt.contains('c') {
            // `bash -c -- SCRIPT`: `--` ends the options; the script is the word after it.
            let script = k + 1 + usize::from(texts.get(k + 1).is_some_and(|t| t == "--"));
            return (script < texts.len()).then_some(script);
        } else {
            k += 1;
        }
    }
    None
}

/// An engine launch starting at word `j`: the engine and the index of its first argument.
fn match_launch(texts: &[String], j: usize) -> Option<(Engine, usize)> {
    let cmd = basename(&texts[j]);
    let next = texts.get(j + 1).map(String::as_str);
    match (cmd, next) {
        ("vllm", Some("serve")) => return Some((Engine::Vllm, j + 2)),
        ("sglang", Some("serve")) => return Some((Engine::Sglang, j + 2)),
        ("trtllm-serve", _) => return trtllm_serve(next, j + 1),
        _ => {}
    }
    if !is_python(cmd) {
        return None;
    }
    let (module, after) = python_module(texts, j + 1)?;
    let engine = match module {
        // Dynamo's workers take the engine's own flags (ai-dynamo/dynamo components/src/dynamo/{sglang,vllm}/args.py).
        "sglang.launch_server" | "dynamo.sglang" => Engine::Sglang,
        "vllm.entrypoints.openai.api_server" | "dynamo.vllm" => Engine::Vllm,
        // Dynamo's TRT-LLM worker has its own flags (components/src/dynamo/trtllm/utils/trtllm_utils.py).
        "dynamo.trtllm" => Engine::Trtllm,
        "tensorrt_llm.commands.serve" => {
            return trtllm_serve(texts.get(after).map(String::as_str), after)
        }
        _ => return None,
    };
    Some((engine, after))
}

/// `trtllm-serve` is a click group whose default command is `serve` (tensorrt_llm/commands/serve.py
/// `main`): `trtllm-serve serve MODEL` and `trtllm-serve MODEL` both serve; the other commands
/// (`disaggregated` routers, MPI workers) are no engine launch.
fn trtllm_serve(first: Option<&str>, at: usize) -> Option<(Engine, usize)> {
    match first {
        Some("serve") => Some((Engine::Trtllm, at + 1)),
        Some(
            "disaggregated" | "disaggregated_mpi_worker" | "mm_embedding_serve" | "--help" | "-h",
        ) => None,
        _ => Some((Engine::Trtllm, at)),
    }
}

/// `python3`, `python3.12`, `python`.
fn is_python(cmd: &str) -> bool {
    cmd.strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The `-m MODULE` after interpreter options (`-u`, `-O`, `-W arg`, `-X opt`), and the index after it.
fn python_module(texts: &[String], mut k: usize) -> Option<(&str, usize)> {
    loop {
        let t = texts.get(k)?.as_str();
        match t {
            "-m" => return texts.get(k + 1).map(|m| (m.as_str(), k + 2)),
            "-W" | "-X" => k += 2,
            "-c" | "-" | "--" => return None,
            _ if t.starts_with("-m") => return Some((&t[2..], k + 1)),
            _ if t.starts_with('-') && !t.starts_with("--") => k += 1,
            _ => return None,
        }
    }
}

/// Launches in a shell script or a one-line command.
pub fn script_launches(file: FileId, text: &str) -> Vec<Launch> {
    let mut walker = Walker::new(file);
    walker.script(&chars_of(text, 0));
    walker.launches
}

/// A word read from a structured input (a YAML scalar) before any shell sees it: each character
/// with the file bytes it came from, its whole span, and the variables left in it by character index.
#[derive(Debug, Clone)]
pub struct MappedWord {
    pub chars: Vec<(char, std::ops::Range<usize>)>,
    pub loc: Loc,
    pub unresolved: Vec<(usize, String)>,
}

impl MappedWord {
    fn field(&self) -> Field {
        let chars = self
            .chars
            .iter()
            .map(|(c, r)| Ch {
                c: *c,
                start: r.start,
                end: r.end,
                quoted: true,
            })
            .collect();
        Field {
            chars,
            loc: self.loc,
            names: self.unresolved.clone(),
        }
    }
}

fn walker_with_env(file: FileId, env: &[(String, MappedWord)]) -> Walker {
    let mut walker = Walker::new(file);
    for (name, value) in env {
        walker.export(name, value.field());
    }
    walker
}

/// Launches in an exec-form argv (a container's `command` + `args`) run with `env` exported;
/// `sh -c` scripts in it are walked as scripts.
pub fn exec_launches(
    file: FileId,
    argv: &[MappedWord],
    env: &[(String, MappedWord)],
) -> Vec<Launch> {
    let mut walker = walker_with_env(file, env);
    let fields: Vec<Field> = argv.iter().map(MappedWord::field).collect();
    walker.argv(&fields);
    walker.launches
}

/// A shell string's words after quote removal and expansion (an env var a launcher splices in with
/// `eval`, a compose `command` string), each still mapped to the bytes it was written at.
pub fn split_words(file: FileId, text: &MappedWord) -> Vec<MappedWord> {
    let mut walker = Walker::new(file);
    let src: Vec<Ch> = text
        .field()
        .chars
        .into_iter()
        .map(|ch| Ch {
            quoted: false,
            ..ch
        })
        .collect();
    Lexer::new(&src)
        .tokens()
        .into_iter()
        .filter_map(|t| match t {
            Tok::Word(w) => Some(w),
            Tok::Sep => None,
        })
        .flat_map(|w| walker.expand(&w, true))
        .map(|f| MappedWord {
            chars: f.chars.iter().map(|ch| (ch.c, ch.start..ch.end)).collect(),
            loc: f.loc,
            unresolved: f.names,
        })
        .collect()
}

/// A Dockerfile by name (`Dockerfile`, `Containerfile`, `x.Dockerfile`) or by a first `FROM` line.
pub fn is_dockerfile(name: &str, text: &str) -> bool {
    let base = basename(name).to_ascii_lowercase();
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
enum Form {
    Exec(Vec<Field>),
    Shell(Vec<Ch>),
}

/// Dockerfile: `ENV` sets exported variables; the last `ENTRYPOINT` and `CMD` make the command.
pub fn dockerfile_launches(file: FileId, text: &str) -> Vec<Launch> {
    let mut walker = Walker::new(file);
    let (mut entrypoint, mut cmd) = (None, None);
    for (keyword, rest) in instructions(text) {
        let chars = chars_of(&text[rest.clone()], rest.start);
        match keyword.to_ascii_uppercase().as_str() {
            "ENV" => dockerfile_env(&mut walker, &chars),
            "ENTRYPOINT" => entrypoint = Some(form(file, chars)),
            "CMD" => cmd = Some(form(file, chars)),
            _ => {}
        }
    }
    match (entrypoint, cmd) {
        (Some(Form::Exec(mut ep)), Some(Form::Exec(args))) => {
            ep.extend(args);
            walker.argv(&ep);
        }
        (Some(Form::Exec(argv)), _) | (None, Some(Form::Exec(argv))) => walker.argv(&argv),
        (Some(Form::Shell(script)), _) | (None, Some(Form::Shell(script))) => {
            walker.script(&script)
        }
        (None, None) => {}
    }
    walker.launches
}

/// `ENV A=1 B="2 3"`, or the legacy `ENV A value with spaces`.
fn dockerfile_env(walker: &mut Walker, chars: &[Ch]) {
    let words: Vec<Word> = Lexer::new(chars)
        .tokens()
        .into_iter()
        .filter_map(|t| match t {
            Tok::Word(w) => Some(w),
            Tok::Sep => None,
        })
        .collect();
    let assignments: Vec<(String, Field)> =
        words.iter().filter_map(|w| walker.assignment(w)).collect();
    if !assignments.is_empty() {
        for (name, value) in assignments {
            walker.export(&name, value);
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
    let loc = Loc::new(walker.file, first.loc.0..last.loc.1);
    walker.export(&name, Field::from_chars(value, loc));
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
fn json_array(file: FileId, chars: &[Ch]) -> Option<Vec<Field>> {
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
                return Some((
                    Field::from_chars(out, Loc::new(file, open.start..ch.end)),
                    k + 1,
                ))
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

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn python_interpreter_options_before_dash_m() {
        let cases = [
            (
                &["python3", "-m", "sglang.launch_server", "--tp", "2"][..],
                Some((Engine::Sglang, 3)),
            ),
            (
                &[
                    "python3.12",
                    "-u",
                    "-O",
                    "-X",
                    "dev",
                    "-m",
                    "sglang.launch_server",
                ][..],
                Some((Engine::Sglang, 7)),
            ),
            (
                &[
                    "python",
                    "-Wignore",
                    "-m",
                    "vllm.entrypoints.openai.api_server",
                ][..],
                Some((Engine::Vllm, 4)),
            ),
            (
                &["sglang", "serve", "--model-path", "x"][..],
                Some((Engine::Sglang, 2)),
            ),
            (&["python3", "-m", "vllm.entrypoints.api_server"][..], None),
            (
                &["python3", "serve.py", "-m", "sglang.launch_server"][..],
                None,
            ),
            (&["pythonista", "-m", "sglang.launch_server"][..], None),
            (&["vllm", "bench"][..], None),
        ];
        for (words, want) in cases {
            assert_eq!(match_launch(&argv(words), 0), want, "{words:?}");
        }
    }

    #[test]
    fn trtllm_serve_with_and_without_its_serve_command() {
        let cases = [
            (
                &["trtllm-serve", "serve", "m", "--tp_size", "2"][..],
                Some((Engine::Trtllm, 2)),
            ),
            (
                &["/usr/local/bin/trtllm-serve", "m"][..],
                Some((Engine::Trtllm, 1)),
            ),
            (
                &["trtllm-serve", "--port", "8000", "m"][..],
                Some((Engine::Trtllm, 1)),
            ),
            (
                &["python3", "-m", "tensorrt_llm.commands.serve", "serve", "m"][..],
                Some((Engine::Trtllm, 4)),
            ),
            (
                &["python3", "-m", "tensorrt_llm.commands.serve", "m"][..],
                Some((Engine::Trtllm, 3)),
            ),
            (
                &["python3", "-m", "dynamo.trtllm", "--model-path", "m"][..],
                Some((Engine::Trtllm, 3)),
            ),
            (&["trtllm-serve", "disaggregated", "-c", "d.yaml"][..], None),
        ];
        for (words, want) in cases {
            assert_eq!(match_launch(&argv(words), 0), want, "{words:?}");
        }
    }

    #[test]
    fn shell_dash_c_takes_the_word_after_the_option_cluster() {
        assert_eq!(
            shell_script_index(&argv(&["bash", "-o", "pipefail", "-ec", "s"]), 0),
            Some(4)
        );
        assert_eq!(
            shell_script_index(&argv(&["/bin/sh", "--login", "-c", "s"]), 0),
            Some(3)
        );
        assert_eq!(shell_script_index(&argv(&["bash", "run.sh"]), 0), None);
        assert_eq!(shell_script_index(&argv(&["bash", "-c"]), 0), None);
    }

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
        assert!(is_dockerfile("sglang.Dockerfile", ""));
        assert!(is_dockerfile(
            "<stdin>",
            "# syntax=docker/dockerfile:1\n\nfrom ubuntu\n"
        ));
        assert!(!is_dockerfile("run.sh", "#!/bin/sh\nfrom=1\n"));
    }

    #[test]
    fn redirections_and_their_targets_are_not_arguments() {
        let launches = script_launches(
            FileId(0),
            "vllm serve m 2>/dev/null >>log <in 3<>f &>all >&2 --x 1\n",
        );
        let texts: Vec<&str> = launches[0].args.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(texts, ["m", "--x", "1"]);
    }

    #[test]
    fn assignment_default_sets_the_variable() {
        let text = ": ${CTX:=4096}\nA=${UNSET-}x\nvllm serve m --max-model-len $CTX --y $A\n";
        let launches = script_launches(FileId(0), text);
        let texts: Vec<&str> = launches[0].args.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(texts, ["m", "--max-model-len", "4096", "--y", "x"]);
    }
}

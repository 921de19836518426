//! Lexing: shell text (as mapped characters) → words, separators and heredoc bodies.
//!
//! Every character keeps the byte range of the file it was read from, so text that is lexed again
//! (`sh -c '...'`, `eval "..."`, a heredoc fed to `bash`) still points into the original file.

/// Nesting limit for `sh -c "sh -c ..."` and `${A:-${B:-...}}`, so hostile input cannot blow the stack.
pub const MAX_DEPTH: usize = 16;

/// One character after unquoting, with the byte range of the source text it came from.
#[derive(Debug, Clone, Copy)]
pub struct Ch {
    pub c: char,
    pub start: usize,
    pub end: usize,
    pub quoted: bool,
}

/// The characters of a text, each mapped to its own bytes.
pub fn chars_of(text: &str, base: usize) -> Vec<Ch> {
    text.char_indices()
        .map(|(i, c)| Ch {
            c,
            start: base + i,
            end: base + i + c.len_utf8(),
            quoted: false,
        })
        .collect()
}

/// Characters of a string a shell will read again (`sh -c`, `eval`): its quotes are plain text now.
pub fn unquoted(chars: &[Ch]) -> Vec<Ch> {
    chars
        .iter()
        .map(|&ch| Ch {
            quoted: false,
            ..ch
        })
        .collect()
}

/// The commands of a command substitution as the subshell reads them: `$(...)` without its
/// parentheses, a backquoted text with `\``, `\\` and `\$` unescaped. `None` for arithmetic
/// (`$((...))`), which runs no command.
pub fn substitution_body(raw: &[Ch]) -> Option<Vec<Ch>> {
    let text = |i: usize| raw.get(i).map(|ch| ch.c);
    if text(0) == Some('$') {
        if text(2) == Some('(') {
            return None;
        }
        let end = raw.len() - usize::from(raw.last().is_some_and(|ch| ch.c == ')'));
        return Some(unquoted(raw.get(2..end.max(2))?));
    }
    let end = raw.len() - usize::from(raw.len() > 1 && text(raw.len() - 1) == Some('`'));
    let inner = raw.get(1..end.max(1))?;
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while let Some(ch) = inner.get(i) {
        let next = inner
            .get(i + 1)
            .filter(|n| ch.c == '\\' && matches!(n.c, '`' | '\\' | '$'));
        match next {
            Some(n) => {
                out.push(Ch {
                    c: n.c,
                    start: ch.start,
                    end: n.end,
                    quoted: false,
                });
                i += 2;
            }
            None => {
                out.push(Ch {
                    quoted: false,
                    ..*ch
                });
                i += 1;
            }
        }
    }
    Some(out)
}

/// A piece of a word as written.
#[derive(Debug, Clone)]
pub enum Part {
    Lit(Vec<Ch>),
    /// `$NAME`, `${NAME}`, `${NAME:-word}`, `$@`; `raw` is the reference as written.
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
    /// The `(a b c)` of a bash array assignment `NAME=(a b c)`.
    Array(Vec<Word>),
}

#[derive(Debug, Clone)]
pub enum ParamOp {
    Plain,
    /// `:-` / `-` (and `:=` / `=`, which also assign); `colon` makes an empty value count as unset.
    Default {
        colon: bool,
        assign: bool,
        word: Vec<Part>,
    },
    /// `${NAME[@]}` / `${NAME[*]}`: every element of an array.
    All,
    /// `${#X}`, `${X%y}`, `${X:+y}`, `$1`, ...: not evaluated.
    Other,
}

/// A word with the byte range it covers in the file.
#[derive(Debug, Clone)]
pub struct Word {
    pub parts: Vec<Part>,
    pub loc: (usize, usize),
}

/// What ends a simple command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sep {
    /// Newline, `;`, `&`: the next command runs regardless.
    List,
    /// `&&`, `||`: the next command may not run.
    AndOr,
    /// `|`, `(`, `)`.
    Other,
    /// `;;` (and `;&`, `;;&`): the end of a `case` branch.
    CaseEnd,
}

#[derive(Debug)]
pub enum Tok {
    Word(Word),
    Sep(Sep),
    /// A `<<` redirection of the current command: the index of its body in [`Lexed::heredocs`].
    Heredoc(usize),
    /// A `>`/`>>` redirection of the command's standard output to a file.
    Output {
        target: Word,
        append: bool,
    },
    /// A write to a file through another descriptor (`2> F`, `exec 3>> F`): what it writes is
    /// not known.
    Clobber(Word),
}

/// A heredoc body; `quoted` when its delimiter was quoted (`<<'EOF'`: no expansion in the body).
#[derive(Debug, Default)]
pub struct Heredoc {
    pub body: Vec<Ch>,
    pub quoted: bool,
}

/// Text the lexer could not read: where, and what was left open.
#[derive(Debug, Clone)]
pub struct LexError {
    pub at: (usize, usize),
    pub what: String,
}

/// A lexed script.
#[derive(Debug, Default)]
pub struct Lexed {
    pub toks: Vec<Tok>,
    pub heredocs: Vec<Heredoc>,
    pub errors: Vec<LexError>,
}

/// Lexes mapped characters.
pub fn lex(src: &[Ch]) -> Lexed {
    let mut lexer = Lexer {
        src,
        i: 0,
        pending: Vec::new(),
        fd: None,
        out: Lexed::default(),
    };
    while let Some(tok) = lexer.next_tok() {
        lexer.out.toks.push(tok);
    }
    for (index, _, _, at) in std::mem::take(&mut lexer.pending) {
        lexer.error(at, "heredoc without its closing delimiter line");
        lexer.out.heredocs[index].body.clear();
    }
    lexer.out
}

/// The parts of an unquoted heredoc body: expanded like a double-quoted string, except that `"`
/// is plain text (bash `<<EOF`: `\` escapes only `$`, `` ` ``, `\` and newline).
pub fn heredoc_parts(body: &[Ch]) -> Vec<Part> {
    let mut lexer = Lexer {
        src: body,
        i: 0,
        pending: Vec::new(),
        fd: None,
        out: Lexed::default(),
    };
    let mut parts = vec![Part::Lit(Vec::new())];
    while let Some(&ch) = body.get(lexer.i) {
        match ch.c {
            '\\' => lexer.escape(&mut parts, |c| matches!(c, '$' | '`' | '\\')),
            '$' => lexer.dollar(&mut parts, true, 0),
            '`' => lexer.backtick(&mut parts),
            _ => {
                lexer.i += 1;
                push_lit(&mut parts, Ch { quoted: true, ..ch });
            }
        }
    }
    parts
}

/// The words of a text, separators dropped (`ENV` lines, strings split like a shell would).
pub fn words(src: &[Ch]) -> Vec<Word> {
    lex(src)
        .toks
        .into_iter()
        .filter_map(|t| match t {
            Tok::Word(w) => Some(w),
            _ => None,
        })
        .collect()
}

struct Lexer<'a> {
    src: &'a [Ch],
    i: usize,
    /// Heredocs opened on the current line: (body index, delimiter, strip leading tabs, `<<` span).
    pending: Vec<(usize, String, bool, (usize, usize))>,
    /// The file descriptor written just before a redirection (`2` in `2>err`).
    fd: Option<char>,
    out: Lexed,
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\r'
}

fn is_meta(c: char) -> bool {
    is_blank(c) || matches!(c, '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>')
}

pub fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

pub fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn push_lit(parts: &mut Vec<Part>, ch: Ch) {
    if let Some(Part::Lit(chs)) = parts.last_mut() {
        chs.push(ch);
    } else {
        parts.push(Part::Lit(vec![ch]));
    }
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.src.get(self.i + k).map(|ch| ch.c)
    }

    fn error(&mut self, (from, to): (usize, usize), what: &str) {
        let at = self.span(from, to);
        self.out.errors.push(LexError {
            at,
            what: what.to_string(),
        });
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
                    self.read_heredoc_bodies();
                    return Some(Tok::Sep(Sep::List));
                }
                '<' | '>' => {
                    if let Some(tok) = self.redirect() {
                        return Some(tok);
                    }
                }
                '&' if self.peek(1) == Some('>') => {
                    self.redirect();
                }
                ';' | '&' | '|' | '(' | ')' => return Some(Tok::Sep(self.separator(c))),
                _ => {
                    let word = self.word();
                    if self.is_io_number(&word) {
                        self.fd = literal_chars(&word.parts).first().map(|ch| ch.c);
                        continue;
                    }
                    return Some(Tok::Word(word));
                }
            }
        }
    }

    fn separator(&mut self, c: char) -> Sep {
        self.i += 1;
        let next = self.peek(0);
        match (c, next) {
            ('&', Some('&')) | ('|', Some('|')) => {
                self.i += 1;
                Sep::AndOr
            }
            (';', Some(';' | '&')) => {
                self.i += 1;
                if self.peek(0) == Some('&') {
                    self.i += 1;
                }
                Sep::CaseEnd
            }
            ('|', Some('&')) => {
                self.i += 1;
                Sep::Other
            }
            (';' | '&', _) => Sep::List,
            _ => Sep::Other,
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

    /// A redirection: `<<` queues a heredoc body and returns its token, `>`/`>>` of the standard
    /// output returns its target; other redirections and their targets are dropped.
    fn redirect(&mut self) -> Option<Tok> {
        let start = self.i;
        let fd = self.fd.take();
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
        let op_end = self.i;
        while self.peek(0).is_some_and(is_blank) {
            self.i += 1;
        }
        if !heredoc || self.peek(0).is_none_or(is_meta) {
            let op: String = self.src[start..op_end].iter().map(|ch| ch.c).collect();
            let stdout = matches!(fd, None | Some('1'));
            let target = self
                .peek(0)
                .is_some_and(|c| !is_meta(c))
                .then(|| self.word());
            let dup = |t: &Word| {
                literal_text(t).is_some_and(|t| t == "-" || t.chars().all(|c| c.is_ascii_digit()))
            };
            return match (target, op.as_str()) {
                (Some(target), ">" | ">|" | ">>" | "&>" | "&>>") if stdout => Some(Tok::Output {
                    append: op.ends_with(">>"),
                    target,
                }),
                (Some(target), op) if op.contains('>') && !dup(&target) => {
                    Some(Tok::Clobber(target))
                }
                _ => None,
            };
        }
        let target = self.word();
        let delim: String = literal_chars(&target.parts).iter().map(|ch| ch.c).collect();
        let quoted = target.parts.iter().any(|p| match p {
            Part::Lit(chs) => chs.is_empty() || chs.iter().any(|ch| ch.quoted),
            _ => false,
        });
        let index = self.out.heredocs.len();
        self.out.heredocs.push(Heredoc {
            body: Vec::new(),
            quoted,
        });
        self.pending
            .push((index, delim, strip_tabs, (start, op_end.max(start + 1))));
        Some(Tok::Heredoc(index))
    }

    /// After a newline: the bodies of the heredocs opened on the line just ended, in order.
    fn read_heredoc_bodies(&mut self) {
        for (index, delim, strip_tabs, at) in std::mem::take(&mut self.pending) {
            let mut body = Vec::new();
            let mut closed = false;
            while self.i < self.src.len() {
                let start = self.i;
                self.skip_line();
                let line: String = self.src[start..self.i].iter().map(|ch| ch.c).collect();
                let end = self.i;
                self.i = (self.i + 1).min(self.src.len());
                let tabs = if strip_tabs {
                    line.len() - line.trim_start_matches('\t').len()
                } else {
                    0
                };
                if line[tabs..].trim_end_matches('\r') == delim {
                    closed = true;
                    break;
                }
                body.extend_from_slice(&self.src[start + tabs..self.i.max(end)]);
            }
            if closed {
                self.out.heredocs[index].body = body;
            } else {
                self.error(at, "heredoc without its closing delimiter line");
            }
        }
    }

    fn word(&mut self) -> Word {
        let start = self.i;
        let mut parts = Vec::new();
        while let Some(c) = self.peek(0) {
            if c == '(' && self.is_array_start(&parts) {
                self.array(&mut parts);
                break;
            }
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
        // Trimmed: grown by pushes, a long argv's words held up to twice their size.
        for part in &mut parts {
            if let Part::Lit(chs) = part {
                chs.shrink_to_fit();
            }
        }
        parts.shrink_to_fit();
        Word {
            parts,
            loc: self.span(start, end.max(start)),
        }
    }

    /// `NAME=(` so far: a bash array assignment.
    fn is_array_start(&self, parts: &[Part]) -> bool {
        let [Part::Lit(chs)] = parts else {
            return false;
        };
        let Some((eq, name)) = chs.split_last() else {
            return false;
        };
        eq.c == '='
            && !eq.quoted
            && name.first().is_some_and(|ch| is_name_start(ch.c))
            && name.iter().all(|ch| is_name_char(ch.c) && !ch.quoted)
    }

    /// The elements of `(a b c)`, comments and newlines between them skipped.
    fn array(&mut self, parts: &mut Vec<Part>) {
        let open = self.i;
        self.i += 1;
        let mut items = Vec::new();
        loop {
            match self.peek(0) {
                None => {
                    self.error((open, open + 1), "array without its closing parenthesis");
                    break;
                }
                Some(')') => {
                    self.i += 1;
                    break;
                }
                Some('#') => self.skip_line(),
                Some(c) if is_blank(c) || c == '\n' => self.i += 1,
                Some(_) if self.continuation(self.i).is_some() => self.i += 2,
                Some(c) if is_meta(c) => self.i += 1,
                Some(_) => items.push(self.word()),
            }
        }
        parts.push(Part::Array(items));
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
        let open = self.i;
        self.i += 1;
        // An empty '' still makes the word quoted, so it yields an empty argument.
        let mut chs = Vec::new();
        let mut closed = false;
        while let Some(&ch) = self.src.get(self.i) {
            self.i += 1;
            if ch.c == '\'' {
                closed = true;
                break;
            }
            chs.push(Ch { quoted: true, ..ch });
        }
        if !closed {
            self.error((open, open + 1), "unterminated single quote");
        }
        parts.push(Part::Lit(chs));
    }

    fn double_quoted(&mut self, parts: &mut Vec<Part>, depth: usize) {
        let open = self.i;
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
        self.error((open, open + 1), "unterminated double quote");
    }

    fn backtick(&mut self, parts: &mut Vec<Part>) {
        let start = self.i;
        self.i += 1;
        let mut closed = false;
        while let Some(c) = self.peek(0) {
            self.i += if c == '\\' { 2 } else { 1 };
            if c == '`' {
                closed = true;
                break;
            }
        }
        self.i = self.i.min(self.src.len());
        if !closed {
            self.error((start, start + 1), "unterminated backquote");
        }
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
                if !self.skip_parens() {
                    self.error((start, start + 2), "unterminated $( command substitution");
                }
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
                let op = if matches!(c, '@' | '*') {
                    ParamOp::All
                } else {
                    ParamOp::Other
                };
                parts.push(Part::Param {
                    name: c.to_string(),
                    op,
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

    /// From an opening `(` to its matching `)`, skipping quoted text; false when never closed.
    fn skip_parens(&mut self) -> bool {
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return true;
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
        false
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
        let all = !name.is_empty()
            && matches!(
                (self.peek(0), self.peek(1), self.peek(2)),
                (Some('['), Some('@' | '*'), Some(']'))
            )
            && self.peek(3) == Some('}');
        let op = match op_char {
            _ if all => {
                self.i += 4;
                ParamOp::All
            }
            Some('}') if !colon && !name.is_empty() => {
                self.i += 1;
                ParamOp::Plain
            }
            Some(c @ ('-' | '=')) if !name.is_empty() => {
                self.i += if colon { 2 } else { 1 };
                let word = self.default_word(quoted, depth, start);
                ParamOp::Default {
                    colon,
                    assign: c == '=',
                    word,
                }
            }
            _ => {
                if !self.skip_braces() {
                    self.error((start, start + 2), "unterminated ${ expansion");
                }
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
    fn default_word(&mut self, quoted: bool, depth: usize, open: usize) -> Vec<Part> {
        let mut parts = Vec::new();
        while let Some(&ch) = self.src.get(self.i) {
            match ch.c {
                '}' => {
                    self.i += 1;
                    return parts;
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
        self.error((open, open + 2), "unterminated ${ expansion");
        parts
    }

    fn skip_braces(&mut self) -> bool {
        let mut depth = 1usize;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return true;
                    }
                }
                '\\' => self.i = (self.i + 1).min(self.src.len()),
                _ => {}
            }
        }
        false
    }
}

/// The characters of a word as written when it has expansions (heredoc delimiters, keywords).
pub fn literal_chars(parts: &[Part]) -> Vec<Ch> {
    parts
        .iter()
        .flat_map(|p| match p {
            Part::Lit(chs) => chs.clone(),
            Part::Param { raw, .. } | Part::Subst { raw } => raw.clone(),
            Part::Array(_) => Vec::new(),
        })
        .collect()
}

/// The word's text when it has no expansions.
pub fn literal_text(w: &Word) -> Option<String> {
    w.parts
        .iter()
        .map(|p| match p {
            Part::Lit(chs) => Some(chs.iter().map(|ch| ch.c).collect::<String>()),
            _ => None,
        })
        .collect()
}

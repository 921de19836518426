//! Text utilities a command substitution pipes known text through (`echo "$GPUS" | tr ',' '\n' |
//! wc -l`), run here as bash's builtins, GNU coreutils, awk and GNU sed run them on Linux. Only
//! the forms whose output depends on nothing but their input and arguments are run; any other
//! (an option not listed, a file operand, a regular expression, an order the locale decides, text
//! a form is not sure to read the same way) is `None`: its output stays unknown.

/// Longest text (bytes) a utility takes or gives here: past it, the output is not worked out.
pub const MAX_TEXT: usize = 1 << 16;

/// What `argv` writes to its standard output given `stdin` (`None`: it reads the script's own).
pub fn run(argv: &[String], stdin: Option<&str>) -> Option<String> {
    let (name, args) = argv.split_first()?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = match name.as_str() {
        "echo" => echo(&args),
        "printf" => printf(&args),
        tool => filter(tool, &args, stdin.filter(|s| s.len() <= MAX_TEXT)?),
    }?;
    (out.len() <= MAX_TEXT).then_some(out)
}

fn filter(tool: &str, args: &[&str], input: &str) -> Option<String> {
    match tool {
        "tr" => tr(args, input),
        "wc" => wc(args, input),
        "cut" => cut(args, input),
        "head" => head(args, input),
        "tail" => tail(args, input),
        "awk" => awk(args, input),
        "sort" => sort(args, input),
        "uniq" => uniq(args, input),
        "xargs" => xargs(args, input),
        "sed" => sed(args, input),
        _ => None,
    }
}

/// bash's `echo`: leading words of `-` and `n`s only are options. `-e`, and a backslash at all
/// (which dash's `echo` reads as an escape), leave the output unknown.
fn echo(args: &[&str]) -> Option<String> {
    let is_option = |a: &&&str| {
        a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
    };
    let options = args.iter().take_while(is_option).count();
    let escapes = args[..options].iter().any(|a| a.contains(['e', 'E']));
    if escapes || args.iter().any(|a| a.contains('\\')) {
        return None;
    }
    let mut out = args[options..].join(" ");
    if options == 0 {
        out.push('\n');
    }
    Some(out)
}

/// One piece of a `printf` format.
enum Format {
    Text(String),
    /// `%s`: the next argument, or nothing once they run out.
    Arg,
}

/// `printf FORMAT ARGS...` with `%s`, `%%`, `\n`, `\t` and `\\` in the format: the format is
/// used again while arguments are left (bash's builtin).
fn printf(args: &[&str]) -> Option<String> {
    let (format, values) = args.split_first()?;
    if format.starts_with('-') {
        return None;
    }
    let pieces = printf_format(format)?;
    let takes_args = pieces.iter().any(|p| matches!(p, Format::Arg));
    if !takes_args && !values.is_empty() {
        return None;
    }
    let mut values = values.iter();
    let mut out = String::new();
    loop {
        for piece in &pieces {
            match piece {
                Format::Text(text) => out.push_str(text),
                Format::Arg => out.push_str(values.next().unwrap_or(&"")),
            }
            if out.len() > MAX_TEXT {
                return None;
            }
        }
        if values.len() == 0 {
            return Some(out);
        }
    }
}

fn printf_format(format: &str) -> Option<Vec<Format>> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        let literal = match (c, c == '%' || c == '\\') {
            (_, false) => c,
            ('%', true) => match chars.next()? {
                '%' => '%',
                's' => {
                    pieces.push(Format::Text(std::mem::take(&mut text)));
                    pieces.push(Format::Arg);
                    continue;
                }
                _ => return None,
            },
            _ => match chars.next()? {
                'n' => '\n',
                't' => '\t',
                '\\' => '\\',
                _ => return None,
            },
        };
        text.push(literal);
    }
    pieces.push(Format::Text(text));
    Some(pieces)
}

/// Short options as GNU getopt reads them, anywhere before `--` (`-ds` is `-d -s`), each one of
/// `allowed`; and the operands. A lone `-` is an operand.
fn options<'a>(args: &[&'a str], allowed: &str) -> Option<(Vec<char>, Vec<&'a str>)> {
    let mut flags = Vec::new();
    let mut operands = Vec::new();
    let mut args = args.iter();
    while let Some(&arg) = args.next() {
        match arg.strip_prefix('-') {
            Some("-") => {
                operands.extend(args.by_ref());
            }
            Some(letters) if !letters.is_empty() => {
                for c in letters.chars() {
                    allowed.contains(c).then(|| flags.push(c))?;
                }
            }
            _ => operands.push(arg),
        }
    }
    Some((flags, operands))
}

/// The lines of a text, without their newlines; a last line without one is a line too.
fn lines(input: &str) -> Vec<&str> {
    input
        .split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
        .collect()
}

/// Lines written out, each ending in a newline (as `cut`, `awk`, `sort` and `uniq` write the
/// last one even when the input's had none).
fn unlines<S: AsRef<str>>(lines: impl IntoIterator<Item = S>) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(line.as_ref());
        out.push('\n');
    }
    out
}

/// GNU `tr [-d] [-s] SET1 [SET2]`. It works on bytes: text that is not ASCII is left unknown.
fn tr(args: &[&str], input: &str) -> Option<String> {
    let (flags, sets) = options(args, "ds")?;
    if !input.is_ascii() {
        return None;
    }
    let (delete, squeeze) = (flags.contains(&'d'), flags.contains(&'s'));
    let (map, squeezed): ([Option<u8>; 128], Vec<u8>) = match (delete, squeeze, &sets[..]) {
        (false, false, [from, to]) => (translation(from, to)?, Vec::new()),
        (false, true, [set]) => (identity(), tr_set(set)?),
        (false, true, [from, to]) => (translation(from, to)?, tr_set(to)?),
        (true, false, [set]) => (deletion(set)?, Vec::new()),
        (true, true, [set, squeeze]) => (deletion(set)?, tr_set(squeeze)?),
        _ => return None,
    };
    let mut squeezes = [false; 128];
    for b in squeezed {
        squeezes[usize::from(b)] = true;
    }
    let mut out: Vec<u8> = Vec::with_capacity(input.len());
    for b in input.bytes() {
        let Some(b) = map[usize::from(b)] else {
            continue;
        };
        if out.last() == Some(&b) && squeezes[usize::from(b)] {
            continue;
        }
        out.push(b);
    }
    String::from_utf8(out).ok()
}

fn identity() -> [Option<u8>; 128] {
    std::array::from_fn(|b| u8::try_from(b).ok())
}

fn deletion(set: &str) -> Option<[Option<u8>; 128]> {
    let mut map = identity();
    for b in tr_set(set)? {
        map[usize::from(b)] = None;
    }
    Some(map)
}

/// SET1 → SET2, SET2 padded with its last byte (GNU); where SET1 repeats a byte, its last
/// mapping holds. Of the classes, SET2 may hold only the whole-set `[:lower:]`/`[:upper:]`
/// swap; any other use is an error to GNU `tr`, or a pairing not worked out here.
fn translation(from: &str, to: &str) -> Option<[Option<u8>; 128]> {
    let cases = ["[:lower:]", "[:upper:]"];
    if to.contains("[:") && !(cases.contains(&from) && cases.contains(&to)) {
        return None;
    }
    let (from, to) = (tr_set(from)?, tr_set(to)?);
    let last = *to.last()?;
    let mut map = identity();
    for (i, b) in from.into_iter().enumerate() {
        map[usize::from(b)] = Some(to.get(i).copied().unwrap_or(last));
    }
    Some(map)
}

/// A `tr` set: characters, `\n`-like and octal escapes, ranges `a-z` and `[:class:]`, as bytes
/// in order. `[` opening anything else (`[a*3]`, `[=a=]`) is not read.
fn tr_set(spec: &str) -> Option<Vec<u8>> {
    if !spec.is_ascii() {
        return None;
    }
    let bytes = spec.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'[' {
            let (class, len) = tr_class(&bytes[i..])?;
            out.extend(class);
            i += len;
            // `[:digit:]-z` is no range, and not read as one here.
            (bytes.get(i) != Some(&b'-') || i + 1 == bytes.len()).then_some(())?;
            continue;
        }
        let (lo, len) = tr_char(&bytes[i..])?;
        i += len;
        match (bytes.get(i), bytes.get(i + 1)) {
            (Some(b'-'), Some(_)) => {
                let (hi, len) = tr_char(&bytes[i + 1..])?;
                i += 1 + len;
                // A range backwards is an error to GNU `tr`.
                (lo <= hi).then_some(())?;
                out.extend(lo..=hi);
            }
            _ => out.push(lo),
        }
    }
    // NUL ends a C string: text that holds one is not what a shell variable holds.
    (!out.contains(&0)).then_some(out)
}

/// One character of a `tr` set and the bytes it took: a plain one or an escape.
fn tr_char(bytes: &[u8]) -> Option<(u8, usize)> {
    match bytes {
        [b'\\', rest @ ..] => {
            let octal = rest
                .iter()
                .take(3)
                .take_while(|b| (b'0'..=b'7').contains(b))
                .count();
            if octal > 0 {
                let digits = std::str::from_utf8(&rest[..octal]).ok()?;
                let value = u8::from_str_radix(digits, 8)
                    .ok()
                    .filter(|v| v.is_ascii())?;
                return Some((value, 1 + octal));
            }
            let c = match rest.first()? {
                b'\\' => b'\\',
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'f' => 0x0c,
                b'v' => 0x0b,
                b'a' => 0x07,
                b'b' => 0x08,
                _ => return None,
            };
            Some((c, 2))
        }
        [b'[', ..] => None,
        [c, ..] => Some((*c, 1)),
        [] => None,
    }
}

/// `[:name:]` at the start of `bytes`: its ASCII members in order, and the bytes it took.
fn tr_class(bytes: &[u8]) -> Option<(Vec<u8>, usize)> {
    let rest = bytes.strip_prefix(b"[:")?;
    let end = rest.windows(2).position(|w| w == b":]")?;
    let test: fn(&u8) -> bool = match &rest[..end] {
        b"alnum" => u8::is_ascii_alphanumeric,
        b"alpha" => u8::is_ascii_alphabetic,
        b"digit" => u8::is_ascii_digit,
        b"lower" => u8::is_ascii_lowercase,
        b"upper" => u8::is_ascii_uppercase,
        b"punct" => u8::is_ascii_punctuation,
        b"xdigit" => u8::is_ascii_hexdigit,
        b"blank" => |b| matches!(b, b' ' | b'\t'),
        b"space" => |b| matches!(b, b' ' | b'\t'..=b'\r'),
        _ => return None,
    };
    Some(((0..128u8).filter(test).collect(), end + 4))
}

/// `wc -l`, `-w` or `-c` on its standard input: the bare number (GNU pads only when it prints
/// more than one count).
fn wc(args: &[&str], input: &str) -> Option<String> {
    let (flags, operands) = options(args, "lwc")?;
    let ([flag], []) = (&flags[..], &operands[..]) else {
        return None;
    };
    let n = match flag {
        'l' => input.matches('\n').count(),
        'c' => input.len(),
        _ => words(input)?.len(),
    };
    Some(format!("{n}\n"))
}

/// The words of a text as `wc -w` and `xargs` split it (white space: space, `\t`..`\r`); text
/// with other control characters or outside ASCII, which the locale may read otherwise, is not
/// split here.
fn words(input: &str) -> Option<Vec<&str>> {
    let space = |c: char| matches!(c, ' ' | '\t'..='\r');
    let plain = |c: char| c.is_ascii() && (space(c) || !c.is_ascii_control());
    input.chars().all(plain).then_some(())?;
    Some(input.split(space).filter(|w| !w.is_empty()).collect())
}

/// `cut [-d C] -f LIST`: a line without the delimiter is written whole (GNU, without `-s`).
fn cut(args: &[&str], input: &str) -> Option<String> {
    let mut delim = None;
    let mut list = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (slot, value) = match arg.get(..2) {
            Some("-d") => (&mut delim, &arg[2..]),
            Some("-f") => (&mut list, &arg[2..]),
            _ => return None,
        };
        let value = if value.is_empty() {
            *args.next()?
        } else {
            value
        };
        slot.replace(value).is_none().then_some(())?;
    }
    let mut delim_chars = delim.unwrap_or("\t").chars();
    let (Some(delim), None) = (delim_chars.next(), delim_chars.next()) else {
        return None;
    };
    // GNU cut's delimiter is one byte.
    delim.is_ascii().then_some(())?;
    let ranges = field_list(list?)?;
    let picked = lines(input).into_iter().map(|line| {
        if !line.contains(delim) {
            return line.to_string();
        }
        let fields = line.split(delim).enumerate();
        let kept = fields.filter(|(i, _)| ranges.iter().any(|(lo, hi)| (lo..=hi).contains(&i)));
        kept.map(|(_, f)| f)
            .collect::<Vec<_>>()
            .join(&delim.to_string())
    });
    Some(unlines(picked))
}

/// `2`, `1,3`, `2-`, `-2`, `1-3`: 0-based inclusive index ranges; a list of more than 64 is
/// not read (each field is looked up in it).
fn field_list(list: &str) -> Option<Vec<(usize, usize)>> {
    const MAX_RANGES: usize = 64;
    if list.split(',').count() > MAX_RANGES {
        return None;
    }
    let number = |s: &str| -> Option<usize> {
        let n: usize = s
            .parse()
            .ok()
            .filter(|_| s.bytes().all(|b| b.is_ascii_digit()))?;
        n.checked_sub(1)
    };
    list.split(',')
        .map(|item| {
            let range = match item.split_once('-') {
                None => (number(item)?, number(item)?),
                Some(("", "")) => return None,
                Some(("", hi)) => (0, number(hi)?),
                Some((lo, "")) => (number(lo)?, usize::MAX),
                Some((lo, hi)) => (number(lo)?, number(hi)?),
            };
            // A decreasing range is an error to GNU cut.
            (range.0 <= range.1).then_some(range)
        })
        .collect()
}

/// How many lines `head`/`tail` take: `-n N`, `-nN`, `-N` or none (10); `+N` (from line N) for
/// `tail -n`.
fn line_count(args: &[&str]) -> Option<(usize, bool)> {
    let value = match args {
        [] => "10",
        ["-n", n] => n,
        [one] => one
            .strip_prefix("-n")
            .filter(|n| !n.is_empty())
            .or(one.strip_prefix('-'))?,
        _ => return None,
    };
    let (from, digits) = match value.strip_prefix('+') {
        Some(digits) => (true, digits),
        None => (false, value),
    };
    let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    Some((all_digits.then(|| digits.parse().ok())??, from))
}

/// `head -n N`: the first N lines as written (a last line without its newline stays so).
fn head(args: &[&str], input: &str) -> Option<String> {
    let (n, false) = line_count(args)? else {
        return None;
    };
    Some(input.split_inclusive('\n').take(n).collect())
}

/// `tail -n N` (the last N lines) or `tail -n +N` (from line N on), as written.
fn tail(args: &[&str], input: &str) -> Option<String> {
    let (n, from) = line_count(args)?;
    if from && args.len() == 1 && !args[0].starts_with("-n") {
        // `tail +N` / `tail -+N`: obsolete forms, not read.
        return None;
    }
    let lines: Vec<&str> = input.split_inclusive('\n').collect();
    let skip = if from {
        n.saturating_sub(1)
    } else {
        lines.len().saturating_sub(n)
    };
    Some(lines[skip.min(lines.len())..].concat())
}

/// What an awk program of the form `{print X}` prints per line.
enum Print {
    Nf,
    Field(usize),
    Last,
}

/// `awk [-F SEP] '{print NF}'` or `'{print $N}'` / `'{print $NF}'`: only these programs. `-F`
/// is one character taken literally, `\t`, or a space (the default: runs of blanks).
fn awk(args: &[&str], input: &str) -> Option<String> {
    let (sep, program) = match args {
        [program] => (" ", program),
        ["-F", sep, program] => (*sep, program),
        [flag, program] => (flag.strip_prefix("-F").filter(|s| !s.is_empty())?, program),
        _ => return None,
    };
    let print = awk_program(program)?;
    let sep = match sep {
        " " => None,
        "\\t" => Some('\t'),
        // `-Ft` is a tab to gawk; a backslash starts an escape.
        "t" | "\\" => return None,
        _ => {
            let mut chars = sep.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return None;
            };
            Some(c)
        }
    };
    let records = lines(input).into_iter().map(|line| {
        let fields: Vec<&str> = match sep {
            None => line.split([' ', '\t']).filter(|f| !f.is_empty()).collect(),
            // An empty record has no fields, whatever the separator.
            Some(_) if line.is_empty() => Vec::new(),
            Some(c) => line.split(c).collect(),
        };
        match print {
            Print::Nf => fields.len().to_string(),
            Print::Field(0) => line.to_string(),
            Print::Field(n) => fields.get(n - 1).copied().unwrap_or("").to_string(),
            Print::Last => fields.last().copied().unwrap_or(line).to_string(),
        }
    });
    Some(unlines(records))
}

fn awk_program(program: &str) -> Option<Print> {
    let body = program.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    let body = body.strip_suffix(';').unwrap_or(body).trim_end();
    let what = body.strip_prefix("print")?;
    let what = what.trim_start_matches([' ', '\t']);
    match what {
        "NF" if what.len() < body.len() - "print".len() => Some(Print::Nf),
        "$NF" => Some(Print::Last),
        _ => {
            let digits = what.strip_prefix('$')?;
            let plain = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
            Some(Print::Field(plain.then(|| digits.parse().ok())??))
        }
    }
}

/// `sort` with `-n`, `-r`, `-u` over lines that sort the same in every locale: letters of one
/// case and digits (collation orders those as bytes do), or integers without leading zeros
/// for `-n`.
fn sort(args: &[&str], input: &str) -> Option<String> {
    let (flags, files) = options(args, "nru")?;
    if !files.is_empty() {
        return None;
    }
    let mut lines = lines(input);
    if flags.contains(&'n') {
        let mut keyed = lines
            .into_iter()
            .map(|l| Some((integer(l)?, l)))
            .collect::<Option<Vec<_>>>()?;
        keyed.sort_by_key(|(n, _)| *n);
        lines = keyed.into_iter().map(|(_, l)| l).collect();
    } else {
        let alnum = lines
            .iter()
            .all(|l| l.bytes().all(|b| b.is_ascii_alphanumeric()));
        let upper = input.bytes().any(|b| b.is_ascii_uppercase());
        let lower = input.bytes().any(|b| b.is_ascii_lowercase());
        (alnum && !(upper && lower)).then_some(())?;
        lines.sort_unstable();
    }
    if flags.contains(&'r') {
        lines.reverse();
    }
    if flags.contains(&'u') {
        lines.dedup();
    }
    Some(unlines(lines))
}

/// An integer as `sort -n` reads it, where no two spellings are equal (`007`, `-0`: no).
fn integer(line: &str) -> Option<i64> {
    let digits = line.strip_prefix('-').unwrap_or(line);
    let canonical = digits == "0" && line == "0" || !digits.starts_with('0');
    let plain =
        !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit());
    (canonical && plain).then(|| line.parse().ok())?
}

/// `uniq`: adjacent equal lines once. ASCII only: another locale's collation is what GNU
/// compares with.
fn uniq(args: &[&str], input: &str) -> Option<String> {
    if !args.is_empty() || !input.is_ascii() {
        return None;
    }
    let mut lines = lines(input);
    lines.dedup();
    Some(unlines(lines))
}

/// `xargs` alone: `echo` of the input's words, once (GNU runs it once even with none). Quotes
/// and backslashes (which xargs reads), and a first word `echo` would take for an option, are
/// not read.
fn xargs(args: &[&str], input: &str) -> Option<String> {
    // xargs splits at blanks and newlines only: `\r`, `\v`, `\f` would be part of a word.
    if !args.is_empty() || input.contains(['\'', '"', '\\', '\r', '\x0b', '\x0c']) {
        return None;
    }
    let words = words(input)?;
    if words.first().is_some_and(|w| w.starts_with('-')) {
        return None;
    }
    Some(unlines([words.join(" ")]))
}

/// `sed 's/FROM/TO/'` or `'s/FROM/TO/g'` (also after `-e`) where FROM has no regular
/// expression character and TO no `&` or backslash: a plain replacement per line. A last line
/// without its newline stays so (GNU sed).
fn sed(args: &[&str], input: &str) -> Option<String> {
    let script = match args {
        ["-e", script] | [script] if !script.starts_with('-') => *script,
        _ => return None,
    };
    let rest = script.strip_prefix('s')?;
    let delim = rest
        .chars()
        .next()
        .filter(|c| !c.is_alphanumeric() && *c != '\\')?;
    let parts: Vec<&str> = rest[delim.len_utf8()..].split(delim).collect();
    let [from, to, flags] = parts[..] else {
        return None;
    };
    let regex = |c: char| matches!(c, '.' | '[' | ']' | '*' | '^' | '$' | '\\' | '\n');
    let plain = !from.is_empty() && !from.contains(regex) && !to.contains(['&', '\\', '\n']);
    let global = match flags {
        "" => false,
        "g" => true,
        _ => return None,
    };
    plain.then_some(())?;
    // What the replacements may add, bounded before any is made.
    if input.matches(from).count().saturating_mul(to.len()) > MAX_TEXT {
        return None;
    }
    let mut out = String::new();
    for line in input.split_inclusive('\n') {
        let (text, newline) = match line.strip_suffix('\n') {
            Some(text) => (text, "\n"),
            None => (line, ""),
        };
        if global {
            out.push_str(&text.replace(from, to));
        } else {
            out.push_str(&text.replacen(from, to, 1));
        }
        out.push_str(newline);
    }
    Some(out)
}

#[cfg(test)]
#[path = "textutil_tests.rs"]
mod tests;

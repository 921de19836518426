//! Java properties files (DJL Serving's `serving.properties`), read as `java.util.Properties.load`
//! reads them, into the spanned tree YAML gives (`yaml::Node`): each dotted key is a path
//! (`option.max_model_len=8192` is `{option: {max_model_len: "8192"}}`), so platform paths reach it
//! as they reach YAML. Values stay strings, as Properties holds them. The `java-properties` crate
//! reads the same syntax but keeps line numbers only, not where a value starts and ends.
//!
//! Syntax (Properties.load(Reader)): a line whose first non-blank character is `#` or `!` is a
//! comment; a line ending in an odd number of `\` continues on the next, whose leading blanks are
//! dropped; the key ends at the first unescaped `=`, `:` or blank, one `=` or `:` may follow
//! blanks, and the rest is the value; `\t \n \r \f \uXXXX` are escapes and `\` before any other
//! character stands for that character. A key given twice keeps its last value.

use crate::source::{FileId, Loc};
use crate::yaml::{Node, Value};
use std::collections::HashMap;
use std::ops::Range;

/// A properties text that `Properties.load` refuses (a malformed `\u` escape), with its place.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct PropertiesError {
    pub message: String,
    pub loc: Loc,
}

/// One key and its value as written, each with its span.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_loc: Loc,
    pub value: String,
    pub value_loc: Loc,
}

/// The entries of the properties text at `range` of a file, in order, a repeated key's last only.
pub fn entries(
    file: FileId,
    text: &str,
    range: Range<usize>,
) -> Result<Vec<Entry>, PropertiesError> {
    let mut all: Vec<Entry> = Vec::new();
    let mut pos = range.start;
    while pos < range.end {
        let (line, next) = logical_line(text, pos, range.end);
        pos = next;
        all.extend(entry(file, text, line)?);
    }
    let mut last: HashMap<&str, usize> = HashMap::new();
    for (i, e) in all.iter().enumerate() {
        last.insert(&e.key, i);
    }
    let keep: Vec<bool> = (0..all.len())
        .map(|i| last.get(all[i].key.as_str()) == Some(&i))
        .collect();
    Ok(all
        .into_iter()
        .zip(keep)
        .filter_map(|(e, k)| k.then_some(e))
        .collect())
}

/// The properties text at `range` as a tree of its dotted keys. A key that is both a value and
/// the prefix of others (`a=1`, `a.b=2`) keeps its whole dotted name in the mapping above.
pub fn parse(file: FileId, text: &str, range: Range<usize>) -> Result<Node, PropertiesError> {
    let mut root = Tree::default();
    for e in entries(file, text, range.clone())? {
        let parts: Vec<&str> = e.key.split('.').collect();
        root.insert(&parts, &e);
    }
    Ok(root.node(Loc::new(file, range)))
}

/// A DJL instant-benchmark job file (djl-serving tests/integration/benchmark): `[name]` section
/// headers, the model's properties under `[serving_properties]`, and `[vars]` lines
/// `NAME={a,b}` whose values the job runs once each, filling `$NAME` in the other sections.
pub struct Job {
    /// The `[serving_properties]` lines.
    pub properties: Range<usize>,
    /// Each `[vars]` name with its values.
    pub vars: Vec<(String, Vec<String>)>,
}

/// The job file's sections, when `text` is one (it has a `[serving_properties]` header line).
pub fn job(text: &str) -> Option<Job> {
    let mut sections: Vec<(&str, Range<usize>)> = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let header = line
            .trim()
            .strip_prefix('[')
            .and_then(|l| l.strip_suffix(']'));
        match header {
            Some(name)
                if !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                sections.push((name, pos + line.len()..pos + line.len()))
            }
            _ => {
                if let Some((_, r)) = sections.last_mut() {
                    r.end = pos + line.len();
                }
            }
        }
        pos += line.len();
    }
    let section = |name: &str| {
        sections
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, r)| r.clone())
    };
    let properties = section("serving_properties")?;
    let vars = section("vars")
        .map(|r| text[r].lines().filter_map(var).collect())
        .unwrap_or_default();
    Some(Job { properties, vars })
}

/// `NAME={a,b}` or `NAME=a`.
fn var(line: &str) -> Option<(String, Vec<String>)> {
    let (name, values) = line.trim().split_once('=')?;
    let values = values.trim();
    let inner = values
        .strip_prefix('{')
        .and_then(|v| v.strip_suffix('}'))
        .unwrap_or(values);
    let list = inner.split(',').map(|v| v.trim().to_string()).collect();
    Some((name.trim().to_string(), list))
}

/// Fills `$NAME` and `${NAME}` in the tree's values with the job's variables that have one value;
/// a variable the job runs with several values stays, one run per value being no one launch.
pub fn fill(node: &mut Node, vars: &[(String, Vec<String>)]) {
    match &mut node.value {
        Value::Map(entries) => entries.iter_mut().for_each(|(_, v)| fill(v, vars)),
        Value::Str(text) => {
            for (name, values) in vars {
                if let [one] = values.as_slice() {
                    *text = text
                        .replace(&format!("${{{name}}}"), one)
                        .replace(&format!("${name}"), one);
                }
            }
        }
        _ => {}
    }
}

/// A mapping being built: entries in first-seen order, each key's place by name.
#[derive(Default)]
struct Tree {
    entries: Vec<(Node, Slot)>,
    index: HashMap<String, usize>,
}

enum Slot {
    Leaf(Node),
    Map(Tree),
}

impl Tree {
    fn insert(&mut self, parts: &[&str], e: &Entry) {
        let key = |text: String| Node {
            value: Value::Str(text),
            loc: e.key_loc,
        };
        let leaf = || {
            Slot::Leaf(Node {
                value: Value::Str(e.value.clone()),
                loc: e.value_loc,
            })
        };
        let (first, rest) = match parts.split_first() {
            Some((f, r)) if !f.is_empty() => (*f, r),
            _ => return self.entries.push((key(parts.join(".")), leaf())),
        };
        let found = self.index.get(first).copied();
        match (found, rest.is_empty()) {
            (None, true) => {
                self.index.insert(first.to_string(), self.entries.len());
                self.entries.push((key(first.to_string()), leaf()));
            }
            (None, false) => {
                self.index.insert(first.to_string(), self.entries.len());
                let mut sub = Tree::default();
                sub.insert(rest, e);
                self.entries.push((key(first.to_string()), Slot::Map(sub)));
            }
            (Some(j), false) if matches!(self.entries[j].1, Slot::Map(_)) => {
                if let Slot::Map(sub) = &mut self.entries[j].1 {
                    sub.insert(rest, e);
                }
            }
            // Both a value and a prefix: the later entry keeps its whole name.
            (Some(_), _) => self.entries.push((key(parts.join(".")), leaf())),
        }
    }

    fn node(self, loc: Loc) -> Node {
        let entries = self
            .entries
            .into_iter()
            .map(|(k, slot)| match slot {
                Slot::Leaf(v) => (k, v),
                Slot::Map(sub) => {
                    let at = k.loc;
                    (k, sub.node(at))
                }
            })
            .collect();
        Node {
            value: Value::Map(entries),
            loc,
        }
    }
}

/// The natural lines from `start` that make one logical line: the byte ranges of each piece
/// (continuation backslashes and the next line's leading blanks left out), and where the next
/// logical line starts.
fn logical_line(text: &str, start: usize, end: usize) -> (Vec<Range<usize>>, usize) {
    let mut pieces = Vec::new();
    let mut pos = start;
    let mut first = true;
    loop {
        let rest = &text[pos..end];
        let len = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let mut line = pos..pos + len;
        let mut next = line.end;
        if text[next..end].starts_with("\r\n") {
            next += 2;
        } else if next < end {
            next += 1;
        }
        if !first {
            let body = &text[line.clone()];
            line.start += body.len() - body.trim_start_matches([' ', '\t', '\x0c']).len();
        }
        let body = &text[line.clone()];
        let comment = first && body.trim_start().starts_with(['#', '!']);
        let slashes = body.len() - body.trim_end_matches('\\').len();
        let continued = !comment && slashes % 2 == 1 && next < end;
        if continued {
            line.end -= 1;
        }
        pieces.push(line);
        first = false;
        pos = next;
        if !continued {
            return (pieces, pos);
        }
    }
}

/// The characters of a logical line with their byte offsets, escapes kept raw.
fn chars(text: &str, pieces: &[Range<usize>]) -> Vec<(usize, char)> {
    pieces
        .iter()
        .flat_map(|r| {
            text[r.clone()]
                .char_indices()
                .map(move |(i, c)| (r.start + i, c))
        })
        .collect()
}

fn entry(
    file: FileId,
    text: &str,
    pieces: Vec<Range<usize>>,
) -> Result<Option<Entry>, PropertiesError> {
    let cs = chars(text, &pieces);
    let blank = |c: char| matches!(c, ' ' | '\t' | '\x0c');
    let mut i = cs.iter().position(|&(_, c)| !blank(c)).unwrap_or(cs.len());
    if i == cs.len() || matches!(cs[i].1, '#' | '!') {
        return Ok(None);
    }
    let key_start = i;
    while i < cs.len() && !matches!(cs[i].1, '=' | ':') && !blank(cs[i].1) {
        i += if cs[i].1 == '\\' { 2 } else { 1 };
    }
    let key_end = i.min(cs.len());
    while i < cs.len() && blank(cs[i].1) {
        i += 1;
    }
    if i < cs.len() && matches!(cs[i].1, '=' | ':') {
        i += 1;
    }
    while i < cs.len() && blank(cs[i].1) {
        i += 1;
    }
    let span = |from: usize, to: usize| {
        let start = cs
            .get(from)
            .map_or(cs.last().map_or(0, |c| c.0 + 1), |c| c.0);
        let end = if to > from {
            cs[to - 1].0 + cs[to - 1].1.len_utf8()
        } else {
            start
        };
        Loc::new(file, start..end)
    };
    let key_loc = span(key_start, key_end);
    let value_loc = span(i, cs.len());
    Ok(Some(Entry {
        key: unescape(&cs[key_start..key_end], file)?,
        key_loc,
        value: unescape(&cs[i..], file)?,
        value_loc,
    }))
}

fn unescape(cs: &[(usize, char)], file: FileId) -> Result<String, PropertiesError> {
    let mut out = String::new();
    let mut i = 0;
    while i < cs.len() {
        let (at, c) = cs[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&(_, e)) = cs.get(i) else {
            break;
        };
        i += 1;
        out.push(match e {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'f' => '\x0c',
            'u' => {
                let hex: String = cs[i..].iter().take(4).map(|&(_, c)| c).collect();
                let ch = (hex.len() == 4)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32);
                let Some(ch) = ch else {
                    return Err(PropertiesError {
                        message: "malformed \\uxxxx encoding".into(),
                        loc: Loc::new(file, at..at + 2),
                    });
                };
                i += 4;
                ch
            }
            other => other,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    fn read(text: &str) -> Vec<(String, String, String, String)> {
        let mut s = Sources::default();
        let f = s.add("serving.properties", text);
        entries(f, text, 0..text.len())
            .expect("valid")
            .into_iter()
            .map(|e| {
                let k = text[e.key_loc.range()].to_string();
                let v = text[e.value_loc.range()].to_string();
                (e.key, e.value, k, v)
            })
            .collect()
    }

    fn kv(list: &[(String, String, String, String)]) -> Vec<(&str, &str)> {
        list.iter().map(|e| (e.0.as_str(), e.1.as_str())).collect()
    }

    #[test]
    fn separators_comments_and_blanks_as_java_reads_them() {
        let text = "# comment\n! also a comment\n\nengine=Python\noption.model_id : TheBloke/x\n  option.tensor_parallel_degree   8\noption.empty=\nkey\\ with\\=sign = v=w\n";
        let got = read(text);
        assert_eq!(
            kv(&got),
            [
                ("engine", "Python"),
                ("option.model_id", "TheBloke/x"),
                ("option.tensor_parallel_degree", "8"),
                ("option.empty", ""),
                ("key with=sign", "v=w"),
            ]
        );
        // Spans: the key and the value as written.
        assert_eq!(
            (got[1].2.as_str(), got[1].3.as_str()),
            ("option.model_id", "TheBloke/x")
        );
        assert_eq!(got[2].3, "8");
        assert_eq!(got[4].2, "key\\ with\\=sign");
    }

    #[test]
    fn continuations_escapes_and_repeats() {
        let text = "option.a=one, \\\n    two\r\noption.b=tab\\there\\u0041\noption.a=last\nodd=\\\\\neven=x\\\\\\\n  y\n";
        let got = read(text);
        assert_eq!(
            kv(&got),
            [
                ("option.b", "tab\there\u{41}"),
                ("option.a", "last"),
                ("odd", "\\"),
                ("even", "x\\y"),
            ]
        );
        let text = "option.a=one, \\\n    two\n";
        let got = read(text);
        assert_eq!(got[0].1, "one, two");
        assert_eq!(got[0].3, "one, \\\n    two");
    }

    #[test]
    fn a_comment_line_does_not_continue() {
        let got = read("# note \\\nengine=MPI\n");
        assert_eq!(kv(&got), [("engine", "MPI")]);
    }

    #[test]
    fn dotted_keys_become_a_tree() {
        let text =
            "engine=Python\noption.rolling_batch=vllm\noption.max_model_len=8192\na=1\na.b=2\n";
        let mut s = Sources::default();
        let f = s.add("serving.properties", text);
        let doc = parse(f, text, 0..text.len()).expect("valid");
        let option = doc.get("option").expect("option");
        let len = option.get("max_model_len").expect("len");
        assert_eq!(len.as_str(), Some("8192"));
        assert_eq!(&text[len.loc.range()], "8192");
        assert_eq!(doc.get("a").and_then(Node::as_str), Some("1"));
        assert_eq!(doc.get("a.b").and_then(Node::as_str), Some("2"));
    }

    #[test]
    fn a_malformed_unicode_escape_is_an_error_at_it() {
        let text = "option.x=ab\\u12G4\n";
        let mut s = Sources::default();
        let f = s.add("serving.properties", text);
        let e = entries(f, text, 0..text.len()).expect_err("malformed");
        assert_eq!(e.message, "malformed \\uxxxx encoding");
        assert_eq!(&text[e.loc.range()], "\\u");
    }

    /// A job file's properties are its `[serving_properties]` lines only; a variable with one
    /// value fills `$NAME`, one with several stays.
    #[test]
    fn a_job_file_gives_its_properties_section_with_its_vars_filled() {
        let text = "[vars]\nENGINE={vllm}\nTP={1, 2}\n[serving_properties]\noption.rolling_batch=$ENGINE\noption.tensor_parallel_degree=${TP}\n[aws_curl]\n./awscurl -c 1\n";
        let job = job(text).expect("a job file");
        assert_eq!(
            &text[job.properties.clone()],
            "option.rolling_batch=$ENGINE\noption.tensor_parallel_degree=${TP}\n"
        );
        assert_eq!(
            job.vars[1],
            ("TP".to_string(), vec!["1".to_string(), "2".to_string()])
        );
        let mut tree = parse(crate::source::FileId(0), text, job.properties).unwrap();
        fill(&mut tree, &job.vars);
        let option = tree.get("option").unwrap();
        let value = |k: &str| option.get(k).and_then(Node::as_str).unwrap().to_string();
        assert_eq!(value("rolling_batch"), "vllm");
        assert_eq!(value("tensor_parallel_degree"), "${TP}");
        assert!(super::job("option.rolling_batch=vllm\n").is_none());
    }
}

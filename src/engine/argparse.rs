//! CPython argparse semantics over a flag table extracted from each engine release
//! (`tools/extract_engine_flags.py`): exact options, `--k=v`, unique-prefix abbreviations,
//! ambiguous prefixes, zero-argument actions, nargs lists, last-one-wins, `type=` conversion.

pub use super::config_file::{config_args, BoolStyle};
pub use super::pynum::{human_int, py_float, py_int, HumanInt};
use super::{Setting, SettingValue};
use crate::finding::Finding;
use crate::launch::{Arg, Engine};
use crate::version::Version;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};

/// One argparse action of one engine release range.
#[derive(Debug, Clone, Deserialize)]
pub struct FlagDef {
    pub opts: Vec<String>,
    /// Option strings that set a BooleanOptionalAction to false (`--no-x`, vLLM `--disable-x`).
    #[serde(default)]
    pub neg: Vec<String>,
    pub dest: String,
    /// `value`, `nargs`, `append`, `store_true`, `store_false`, `store_const`, `bool_optional`.
    pub kind: String,
    /// `int`, `float`, `str`, `json`, `human_int`, `human_int_or_auto`.
    #[serde(rename = "type")]
    pub ty: String,
    pub choices: Option<Vec<String>>,
    /// First and last inspected release that has this action (`until` absent: still present).
    pub since: String,
    pub until: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Table {
    pub versions: Vec<String>,
    pub flag: Vec<FlagDef>,
    /// `versions` parsed, and each action's `since`/`until` parsed: filled by [`Table::parse`],
    /// so that a launch never parses the table again.
    #[serde(skip)]
    inspected: Vec<Version>,
    #[serde(skip)]
    ranges: Vec<(Option<Version>, Option<Version>)>,
    /// Per inspected release (same order as `inspected`), its actions and option strings,
    /// built the first time a launch needs that release.
    #[serde(skip)]
    releases: Vec<OnceLock<Release>>,
}

/// The actions of one inspected release, and each option string's action (index into
/// `flags`) with whether it is a negative form: the first action that has it, as
/// [`Spec::exact`] would find by scanning.
#[derive(Debug, Default)]
struct Release {
    flags: Vec<usize>,
    /// The positional action (index into the table's `flag`), found once.
    positional: Option<usize>,
    exact: HashMap<String, (usize, bool)>,
    /// Long options that are not exact (`--tp`), resolved once per run: the answer depends
    /// only on the release, and a render repeats the same few thousands of times.
    inexact: Mutex<HashMap<String, Inexact>>,
}

/// [`lookup`]'s answer for a long option that is not exact, by index into `Spec::flags`.
#[derive(Debug, Clone)]
enum Inexact {
    Found(usize, bool),
    Ambiguous(Vec<String>),
    Unknown,
}

/// At most this many inexact options (of at most 256 bytes) are remembered per release, so
/// that an input of many distinct unknown options cannot grow the memo without bound.
const INEXACT_MEMO: usize = 1024;

impl Table {
    /// A table from the JSON that build.rs writes of its TOML.
    pub fn parse(json: &str) -> Table {
        // build.rs has read the TOML; an empty table is the safe fallback.
        let mut t: Table = serde_json::from_str(json).unwrap_or(Table {
            versions: Vec::new(),
            flag: Vec::new(),
            inspected: Vec::new(),
            ranges: Vec::new(),
            releases: Vec::new(),
        });
        t.inspected = t
            .versions
            .iter()
            .filter_map(|v| Version::parse(v))
            .collect();
        t.ranges = t
            .flag
            .iter()
            .map(|f| {
                let until = f.until.as_deref().and_then(Version::parse);
                (Version::parse(&f.since), until)
            })
            .collect();
        t.releases = t.inspected.iter().map(|_| OnceLock::new()).collect();
        t
    }

    pub fn inspected(&self) -> Vec<Version> {
        self.inspected.clone()
    }

    /// The inspected release whose table applies to `v`: the nearest one not after it.
    pub fn table_version(&self, v: &Version) -> Option<Version> {
        self.release_index(v).map(|i| self.inspected[i].clone())
    }

    fn release_index(&self, v: &Version) -> Option<usize> {
        let rel = v.release();
        let all = &self.inspected;
        all.iter()
            .rposition(|i| *i <= rel)
            .or((!all.is_empty()).then_some(0))
    }

    /// The actions of inspected release `i`, with their option strings.
    fn release(&self, i: usize) -> &Release {
        self.releases[i].get_or_init(|| {
            let v = &self.inspected[i];
            let flags: Vec<usize> = (0..self.flag.len())
                .filter(|&k| in_parsed_range(&self.ranges[k], v))
                .collect();
            let mut exact = HashMap::new();
            for (n, &k) in flags.iter().enumerate() {
                let f = &self.flag[k];
                let forms = f.opts.iter().map(|o| (o, false));
                for (o, neg) in forms.chain(f.neg.iter().map(|o| (o, true))) {
                    exact.entry(o.clone()).or_insert((n, neg));
                }
            }
            let positional = flags
                .iter()
                .copied()
                .find(|&k| self.flag[k].opts.is_empty());
            Release {
                flags,
                positional,
                exact,
                inexact: Mutex::default(),
            }
        })
    }
}

/// Whether `f` is in the table of inspected release `v`.
pub fn in_range(f: &FlagDef, v: &Version) -> bool {
    let since = Version::parse(&f.since).is_some_and(|s| s <= *v);
    let until = f
        .until
        .as_deref()
        .and_then(Version::parse)
        .is_none_or(|u| *v <= u);
    since && until
}

/// `in_range` over the versions parsed once per table (`Table::ranges`).
fn in_parsed_range((since, until): &(Option<Version>, Option<Version>), v: &Version) -> bool {
    since.as_ref().is_some_and(|s| s <= v) && until.as_ref().is_none_or(|u| v <= u)
}

/// An engine's rewriting of the tokens before argparse, with the errors it raises.
pub type Rewrite = fn(&Spec, Vec<Arg>) -> (Vec<Arg>, Vec<Finding>);

/// Engine conventions the generic parser needs.
pub struct Spec<'t> {
    pub engine: Engine,
    pub version: Version,
    /// This release's actions, by index into `table.flag`: shared by every launch of it.
    flags: &'t [usize],
    positional: Option<&'t FlagDef>,
    /// Option string → index into `flags` and whether it is a negative form.
    exact: &'t HashMap<String, (usize, bool)>,
    inexact: &'t Mutex<HashMap<String, Inexact>>,
    /// Earlier releases' actions, for CFG002.
    pub table: &'t Table,
    pub table_version: Version,
    /// vLLM FlexibleArgumentParser turns `_` into `-` in option names; SGLang does not.
    pub underscores: bool,
    pub human: HumanInt,
    /// Known replacements of removed flags.
    pub replacements: &'static [(&'static str, &'static str)],
    /// dest renames (vLLM positional `model_tag` → `model`).
    pub dest_renames: &'static [(&'static str, &'static str)],
    /// The engine's own token rewriting before argparse (vLLM `-O3`, dotted JSON keys).
    /// Only an exact `--config FILE` is merged (both engines test `"--config" in argv`);
    /// `--config=FILE` is stored by argparse and never read.
    pub rewrite: Option<Rewrite>,
    /// dests whose type accepts `""` and `"None"` as "not set" (vLLM `optional_type`).
    pub optional: &'static [&'static str],
    /// dests whose type builds a config object from a JSON object (vLLM `parse_type` of a
    /// config dataclass): anything but an object fails.
    pub json_objects: &'static [&'static str],
    /// `--config` keys the engine refuses: `(key check, why)`.
    pub config_refuses: Option<fn(&Spec, &str) -> Option<String>>,
}

impl<'t> Spec<'t> {
    pub fn new(engine: Engine, table: &'t Table, version: Version) -> Option<Spec<'t>> {
        let at = table.release_index(&version)?;
        let table_version = table.inspected[at].clone();
        let release = table.release(at);
        Some(Spec {
            flags: &release.flags,
            positional: release.positional.map(|k| &table.flag[k]),
            exact: &release.exact,
            inexact: &release.inexact,
            engine,
            version,
            table,
            table_version,
            underscores: false,
            human: HumanInt::Vllm,
            replacements: &[],
            dest_renames: &[],
            rewrite: None,
            config_refuses: None,
            optional: &[],
            json_objects: &[],
        })
    }

    /// The action an exact option string belongs to, and whether it is a negative form.
    pub fn exact(&self, opt: &str) -> Option<(&'t FlagDef, bool)> {
        let &(n, neg) = self.exact.get(opt)?;
        Some((self.flag(n), neg))
    }

    /// Action `n` of this release.
    fn flag(&self, n: usize) -> &'t FlagDef {
        &self.table.flag[self.flags[n]]
    }

    fn all_opts(&self) -> impl Iterator<Item = &'t str> + '_ {
        let table = self.table;
        self.flags
            .iter()
            .map(move |&k| &table.flag[k])
            .flat_map(|f| f.opts.iter().chain(f.neg.iter()).map(String::as_str))
    }

    fn positional(&self) -> Option<&'t FlagDef> {
        self.positional
    }

    fn dest(&self, f: &FlagDef) -> String {
        let renamed = self.dest_renames.iter().find(|(from, _)| *from == f.dest);
        renamed.map_or_else(|| f.dest.clone(), |(_, to)| (*to).to_string())
    }

    /// `(removed_in, replacement)` when `opt` existed in an earlier inspected release.
    fn removed(&self, opt: &str) -> Option<(String, String)> {
        let last = self
            .table
            .flag
            .iter()
            .filter(|f| f.opts.iter().chain(f.neg.iter()).any(|o| o == opt))
            .filter_map(|f| f.until.as_deref().and_then(Version::parse))
            .filter(|u| *u < self.table_version)
            .max()?;
        let removed_in = self.table.inspected().into_iter().find(|v| *v > last)?;
        let replacement = self.replacements.iter().find(|(o, _)| *o == opt);
        Some((
            removed_in.to_string(),
            replacement.map_or("", |(_, r)| r).to_string(),
        ))
    }
}

/// What an option token resolved to.
enum Lookup<'t> {
    Found(&'t FlagDef, bool),
    Ambiguous(Vec<String>),
    Unknown,
}

/// Mirrors argparse.ArgumentParser._parse_optional / _get_option_tuples: exact match first,
/// then unique prefix among the long options.
fn lookup<'t>(spec: &Spec<'t>, opt: &str) -> Lookup<'t> {
    if let Some((f, neg)) = spec.exact(opt) {
        return Lookup::Found(f, neg);
    }
    let known = spec.inexact.lock().ok().and_then(|m| m.get(opt).cloned());
    let answer = known.unwrap_or_else(|| {
        let a = inexact(spec, opt);
        if let Ok(mut m) = spec.inexact.lock() {
            if m.len() < INEXACT_MEMO && opt.len() <= 256 {
                m.insert(opt.to_string(), a.clone());
            }
        }
        a
    });
    match answer {
        Inexact::Found(n, neg) => Lookup::Found(spec.flag(n), neg),
        Inexact::Ambiguous(c) => Lookup::Ambiguous(c),
        Inexact::Unknown => Lookup::Unknown,
    }
}

/// Whether the parser takes the long option `opt` (`--max-model-len`, `--max_model_len` where
/// the engine turns `_` into `-`): exactly, as a unique prefix, or as a prefix argparse refuses
/// as ambiguous, which is still an option of this engine and of no other one's alone.
pub fn takes(spec: &Spec, opt: &str) -> bool {
    let (name, _) = split_option(spec, opt);
    !matches!(lookup(spec, &name), Lookup::Unknown)
}

/// A long option that is not exact: a unique prefix of one, ambiguous, or unknown.
fn inexact(spec: &Spec, opt: &str) -> Inexact {
    // A removed option that is now a prefix of newer ones (`--cuda-graph-max-bs` in 0.5.20)
    // is reported as removed: that is the cause, argparse's "ambiguous" only the symptom.
    if spec.removed(opt).is_some() {
        return Inexact::Unknown;
    }
    let mut hits: Vec<&str> = spec.all_opts().filter(|o| o.starts_with(opt)).collect();
    hits.dedup();
    match hits.as_slice() {
        [] => Inexact::Unknown,
        [one] => spec
            .exact
            .get(*one)
            .map_or(Inexact::Unknown, |&(n, neg)| Inexact::Found(n, neg)),
        _ => Inexact::Ambiguous(hits.iter().map(|s| s.to_string()).collect()),
    }
}

/// argparse treats `-1` and `-.5` as values when no option looks like a negative number.
fn looks_like_option(s: &str) -> bool {
    s.starts_with('-') && s.len() > 1 && s.parse::<f64>().is_err()
}

/// Result of running the parser over a token list.
#[derive(Default)]
pub struct Outcome {
    pub settings: BTreeMap<String, Setting>,
    pub findings: Vec<Finding>,
    /// Options given more than once (argparse keeps the last): dest, first and second place.
    pub duplicates: Vec<(String, crate::source::Loc, crate::source::Loc)>,
    /// The dest the positional filled: it wins over an option renamed onto it (`vllm serve`
    /// copies `model_tag` over `--model`).
    positional: Option<String>,
}

/// Parses `tokens` the way argparse would, recording every problem argparse would exit on.
pub fn parse_tokens(spec: &Spec, tokens: &[Arg]) -> Outcome {
    let mut out = Outcome::default();
    let mut i = 0;
    // The zero-argument option just before, for `--flag true` (a stray positional).
    let mut after_flag: Option<&Arg> = None;
    while i < tokens.len() {
        let tok = &tokens[i];
        i += 1;
        if !looks_like_option(&tok.text) {
            positional(spec, tok, after_flag.take(), &mut out);
            continue;
        }
        after_flag = None;
        let (name, explicit, found) = resolve(spec, &tok.text);
        if !tok.unresolved.is_empty() && explicit.is_none() {
            continue; // `--$FLAG`: which option is unknown
        }
        match found {
            Lookup::Found(f, neg) => {
                let zero_arg = !matches!(f.kind.as_str(), "value" | "nargs" | "append");
                if zero_arg && explicit.is_none() {
                    after_flag = Some(tok);
                }
                i = take(spec, f, neg, tok, explicit, tokens, i, &mut out)
            }
            Lookup::Ambiguous(c) => {
                out.findings.push(
                    Finding::new("CFG005", Some(tok.loc))
                        .var("flag", &name)
                        .var("candidates", c.join(", ")),
                );
                i = skip_values(tokens, i, explicit.is_some());
            }
            Lookup::Unknown => {
                out.findings.push(unknown(spec, &name, tok));
                i = skip_values(tokens, i, explicit.is_some());
            }
        }
    }
    out
}

/// An option token → `(option, explicit value, action)`. Long options: exact, `--k=v`, unique
/// prefix. Single-dash options as CPython argparse `_parse_optional` / `_get_option_tuples`
/// reads them: exact (`-tp`), `-tp=2`, a one-letter option with its value attached (`-qfp8`),
/// then a unique prefix.
fn resolve<'t>(spec: &Spec<'t>, text: &str) -> (String, Option<String>, Lookup<'t>) {
    if text.starts_with("--") {
        let (name, explicit) = split_option(spec, text);
        let found = lookup(spec, &name);
        return (name, explicit, found);
    }
    if let Some((f, neg)) = spec.exact(text) {
        return (text.to_string(), None, Lookup::Found(f, neg));
    }
    if let Some((k, v)) = text.split_once('=') {
        if let Some((f, neg)) = spec.exact(k) {
            return (k.to_string(), Some(v.to_string()), Lookup::Found(f, neg));
        }
    }
    let short_end = text.char_indices().nth(2).map_or(text.len(), |(i, _)| i);
    let (short, attached) = text.split_at(short_end);
    let mut hits: Vec<&str> = spec
        .all_opts()
        .filter(|o| !o.starts_with("--") && o.starts_with(text))
        .collect();
    let short_hit = (!attached.is_empty()).then(|| spec.exact(short)).flatten();
    if let Some((f, neg)) = short_hit.filter(|_| hits.is_empty()) {
        return (
            short.to_string(),
            Some(attached.to_string()),
            Lookup::Found(f, neg),
        );
    }
    hits.dedup();
    let found = match hits.as_slice() {
        [] => Lookup::Unknown,
        [one] => spec
            .exact(one)
            .map_or(Lookup::Unknown, |(f, neg)| Lookup::Found(f, neg)),
        _ => Lookup::Ambiguous(hits.iter().map(|s| s.to_string()).collect()),
    };
    (text.to_string(), None, found)
}

/// `--k=v` split, and vLLM's underscore conversion of the option name
/// (vllm/utils/argparse_utils.py::FlexibleArgumentParser.parse_args).
fn split_option(spec: &Spec, text: &str) -> (String, Option<String>) {
    let (name, explicit) = match text.split_once('=') {
        Some((k, v)) if text.starts_with("--") => (k, Some(v.to_string())),
        _ => (text, None),
    };
    let name = if spec.underscores && name.starts_with("--") {
        name.replace('_', "-")
    } else {
        name.to_string()
    };
    (name, explicit)
}

/// An unknown option's value, if it has one, is skipped so it is not read as a positional.
fn skip_values(tokens: &[Arg], i: usize, explicit: bool) -> usize {
    match tokens.get(i) {
        Some(next) if !explicit && !looks_like_option(&next.text) => i + 1,
        _ => i,
    }
}

fn unknown(spec: &Spec, name: &str, tok: &Arg) -> Finding {
    if let Some((removed_in, replacement)) = spec.removed(name) {
        return Finding::new("CFG002", Some(tok.loc))
            .var("flag", name)
            .var("engine", spec.engine.name())
            .var("version", &spec.version)
            .var("removed_in", removed_in)
            .var("replacement", replacement);
    }
    Finding::new("CFG001", Some(tok.loc))
        .var("flag", name)
        .var("engine", spec.engine.name())
        .var("version", &spec.version)
        .var("suggestion", suggestion(spec, name))
}

/// The closest option string of this release, if any is close enough to be a typo.
fn suggestion(spec: &Spec, name: &str) -> String {
    spec.all_opts()
        .filter(|o| o.starts_with("--"))
        .map(|o| (strsim::damerau_levenshtein(name, o), o))
        .filter(|(d, o)| *d <= 2.max(o.len() / 6))
        .min_by_key(|(d, _)| *d)
        .map_or_else(String::new, |(_, o)| o.to_string())
}

/// A positional: the engine's positional slot (vLLM `model_tag`, nargs='?'), else argparse's
/// "unrecognized arguments" exit: CFG004 after a zero-argument option (`--enable-x true`),
/// CFG001 otherwise.
fn positional(spec: &Spec, tok: &Arg, after_flag: Option<&Arg>, out: &mut Outcome) {
    let slot = spec.positional().map(|f| spec.dest(f));
    let filled = out.positional.is_some();
    let Some(dest) = slot.filter(|_| !filled) else {
        if !tok.unresolved.is_empty() {
            return; // a `$VAR` that may expand to nothing
        }
        let stray = match after_flag {
            Some(flag) => invalid(flag, &flag.text, &tok.text, "no value (argparse exits with \"unrecognized arguments\")"),
            None => Finding::new("CFG001", Some(tok.loc))
                .var("flag", format!("{:?} (a positional argument: argparse exits with \"unrecognized arguments\")", tok.text))
                .var("engine", spec.engine.name())
                .var("version", &spec.version)
                .var("suggestion", ""),
        };
        out.findings
            .push(stray.also(tok.loc, "unrecognized argument"));
        return;
    };
    let value = SettingValue::Text(tok.text.clone());
    let s = Setting {
        dest: dest.clone(),
        value,
        flag_loc: tok.loc,
        value_loc: tok.loc,
        unresolved: tok.unresolved.clone(),
        defaulted: tok.defaulted,
    };
    out.positional = Some(dest.clone());
    out.settings.insert(dest, s);
}

fn is_positional(s: &Setting) -> bool {
    s.flag_loc == s.value_loc
}

/// Consumes the values of one recognised option; returns the next token index. Repeating an
/// `append` option adds to a list, so it is not a duplicate.
#[allow(clippy::too_many_arguments)]
fn take(
    spec: &Spec,
    f: &FlagDef,
    neg: bool,
    tok: &Arg,
    explicit: Option<String>,
    tokens: &[Arg],
    i: usize,
    out: &mut Outcome,
) -> usize {
    let before = out.duplicates.len();
    let next = take_values(spec, f, neg, tok, explicit, tokens, i, out);
    if f.kind == "append" {
        out.duplicates.truncate(before);
    }
    next
}

#[allow(clippy::too_many_arguments)]
fn take_values(
    spec: &Spec,
    f: &FlagDef,
    neg: bool,
    tok: &Arg,
    explicit: Option<String>,
    tokens: &[Arg],
    mut i: usize,
    out: &mut Outcome,
) -> usize {
    let dest = spec.dest(f);
    let flag_value = match f.kind.as_str() {
        "store_true" | "store_const" => Some(true),
        "store_false" => Some(false),
        "bool_optional" => Some(!neg),
        _ => None,
    };
    if let Some(b) = flag_value {
        if let Some(v) = explicit {
            // argparse: "ignored explicit argument"
            out.findings.push(invalid(tok, &tok.text, &v, "no value"));
            return i;
        }
        insert(out, dest, SettingValue::Flag(b), (tok.loc, tok.loc), None);
        return i;
    }
    let many = f.kind == "nargs";
    let given;
    let mut vals: Vec<&Arg> = Vec::new();
    if let Some(v) = explicit {
        given = Arg {
            text: v,
            ..tok.clone()
        };
        vals.push(&given);
    } else {
        while let Some(next) = tokens.get(i) {
            if looks_like_option(&next.text) {
                break;
            }
            vals.push(next);
            i += 1;
            if !many {
                break;
            }
        }
    }
    let Some(last) = vals.last() else {
        out.findings.push(invalid(tok, &tok.text, "", "a value"));
        return i;
    };
    let value_loc = vals[0].loc.join(last.loc);
    let unresolved: Vec<String> = vals.iter().flat_map(|v| v.unresolved.clone()).collect();
    // A caller's default is typed as written: the plan uses it (INP004 still says who decides).
    let defaulted = vals.iter().all(|v| v.unresolved.is_empty() || v.defaulted);
    let name = tok.text.split('=').next().unwrap_or(&tok.text);
    if !unresolved.is_empty() && !defaulted {
        let raw = vals
            .iter()
            .map(|v| v.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        insert(
            out,
            dest,
            SettingValue::Text(raw),
            (tok.loc, value_loc),
            Some((unresolved, false)),
        );
        return i;
    }
    if !many && spec.optional.contains(&dest.as_str()) && matches!(last.text.as_str(), "" | "None")
    {
        out.settings.remove(&dest);
        return i;
    }
    let typed: Result<Vec<SettingValue>, String> =
        vals.iter().map(|v| convert(spec, f, &v.text)).collect();
    let unknown = (!unresolved.is_empty()).then_some((unresolved, true));
    match typed {
        Ok(mut t) if !many => insert(out, dest, t.remove(0), (tok.loc, value_loc), unknown),
        Ok(_) => {
            let list = SettingValue::List(vals.iter().map(|v| v.text.clone()).collect());
            insert(out, dest, list, (tok.loc, value_loc), unknown);
        }
        Err(expected) => {
            let bad = vals
                .iter()
                .find(|v| convert(spec, f, &v.text).is_err())
                .unwrap_or(last);
            out.findings.push(invalid(tok, name, &bad.text, &expected));
        }
    }
    i
}

/// Records one option's value, written at `(flag, value)`; `unknown` names the variables left
/// in it, and whether each has a caller's default (the value written).
fn insert(
    out: &mut Outcome,
    dest: String,
    value: SettingValue,
    (flag_loc, value_loc): (crate::source::Loc, crate::source::Loc),
    unknown: Option<(Vec<String>, bool)>,
) {
    let (unresolved, defaulted) = unknown.unwrap_or_default();
    if out.positional.as_ref() == Some(&dest) {
        return;
    }
    // Repeated options: argparse keeps the last one. A command-line option overriding a
    // `--config` key (another file) is the documented merge, not a repetition.
    if let Some(prev) = out.settings.get(&dest) {
        if !is_positional(prev) && prev.flag_loc.file == flag_loc.file {
            out.duplicates
                .push((dest.clone(), prev.loc(), flag_loc.join(value_loc)));
        }
    }
    out.settings.insert(
        dest.clone(),
        Setting {
            dest,
            value,
            flag_loc,
            value_loc,
            unresolved,
            defaulted,
        },
    );
}

fn invalid(tok: &Arg, flag: &str, value: &str, expected: &str) -> Finding {
    Finding::new("CFG004", Some(tok.loc))
        .var("flag", flag)
        .var("value", value)
        .var("expected", expected)
}

/// argparse: `type=` conversion, then the `choices` check on the converted value.
fn convert(spec: &Spec, f: &FlagDef, raw: &str) -> Result<SettingValue, String> {
    let object = || serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(raw);
    if spec.json_objects.contains(&f.dest.as_str()) && object().is_err() {
        return Err("a JSON object".into());
    }
    let v = match f.ty.as_str() {
        "int" => py_int(raw).map(SettingValue::Int).ok_or("an integer")?,
        "float" => py_float(raw).map(SettingValue::Float).ok_or("a number")?,
        "human_int" => human_int(spec.human, raw)
            .map(SettingValue::Int)
            .ok_or("an integer such as 32768, 32k or 32K")?,
        "human_int_or_auto" => {
            human_int_or_auto(raw).ok_or("an integer such as 32768, 32k or 32K, or auto")?
        }
        "json" if !is_json(raw) => return Err("JSON".into()),
        "json_object" if !is_json_object(raw) => return Err("a JSON object".into()),
        _ => SettingValue::Text(raw.to_string()),
    };
    if let Some(choices) = &f.choices {
        let text = match &v {
            SettingValue::Int(i) => i.to_string(),
            _ => raw.to_string(),
        };
        if !choices.contains(&text) {
            return Err(format!("one of {}", choices.join(", ")));
        }
    }
    Ok(v)
}

/// vLLM `parse_type(json.loads)` / `optional_type(json.loads)`: a JSON document, or `""` /
/// `None` (optional_type's None).
fn is_json(raw: &str) -> bool {
    matches!(raw, "" | "None") || serde_json::from_str::<serde_json::Value>(raw).is_ok()
}

/// vLLM arg_utils.py `parse_dataclass`: `TypeAdapter(cls).validate_json` of a config dataclass
/// after `_expand_json_human_readable_numbers` (bare `80m` becomes a number), so a value that is
/// not `{...}`, or is JSON but not an object, is refused; a `{...}` kvlint cannot parse may hold
/// such numbers and is left to the engine.
fn is_json_object(raw: &str) -> bool {
    let t = raw.trim();
    match serde_json::from_str::<serde_json::Value>(t) {
        Ok(v) => v.is_object(),
        Err(_) => t.starts_with('{') && t.ends_with('}'),
    }
}

/// vllm/utils/argparse_utils.py::human_readable_int_or_auto (≥ 0.16): `auto` and `-1` mean auto-fit.
fn human_int_or_auto(raw: &str) -> Option<SettingValue> {
    let s = raw.trim();
    if s.eq_ignore_ascii_case("auto") || s == "-1" {
        return Some(SettingValue::Auto);
    }
    human_int(HumanInt::Vllm, s).map(SettingValue::Int)
}

/// Parses a launch: `--config FILE` merged ahead of the command line (so the command line
/// wins, as in both engines), the engine's own rewriting of the tokens, then argparse. `files`
/// are the files the launch's input provides (mounted ConfigMap keys).
pub fn run(
    spec: &Spec,
    style: BoolStyle,
    args: &[Arg],
    files: &[crate::launch::LaunchFile],
    cx: &mut super::ParseContext,
) -> Outcome {
    let mut findings = Vec::new();
    // vllm argparse_utils.py::_pull_args_from_config asserts, sglang
    // server_args_config_parser.py::_extract_config_file_path raises, on a second `--config`.
    let configs: Vec<&Arg> = args.iter().filter(|a| a.text == "--config").collect();
    if let [_, second, ..] = configs.as_slice() {
        let reason = "more than one --config: the engine refuses to start".to_string();
        findings.push(cfg006(second.loc, "", reason));
    }
    // Without `--config` the tokens are the args themselves, copied only for a rewrite.
    let tokens = if configs.is_empty() {
        Cow::Borrowed(args)
    } else {
        Cow::Owned(merge_configs(spec, &style, args, files, cx, &mut findings))
    };
    let tokens = match spec.rewrite {
        Some(rewrite) => {
            let (tokens, mut found) = rewrite(spec, tokens.into_owned());
            findings.append(&mut found);
            Cow::Owned(tokens)
        }
        None => tokens,
    };
    let mut out = parse_tokens(spec, &tokens);
    findings.append(&mut out.findings);
    out.findings = findings;
    out
}

/// The args with each `--config FILE`'s keys put ahead of them, and the problems found.
fn merge_configs(
    spec: &Spec,
    style: &BoolStyle,
    args: &[Arg],
    files: &[crate::launch::LaunchFile],
    cx: &mut super::ParseContext,
    findings: &mut Vec<Finding>,
) -> Vec<Arg> {
    let mut tokens: Vec<Arg> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let tok = &args[i];
        i += 1;
        if tok.text != "--config" {
            tokens.push(tok.clone());
            continue;
        }
        match args.get(i).filter(|n| !looks_like_option(&n.text)) {
            Some(p) if p.unresolved.is_empty() => {
                i += 1;
                match super::config_file::load(spec, style, p, files, cx) {
                    Ok(cfg) => tokens.splice(0..0, cfg).for_each(drop),
                    Err(reason) => findings.push(cfg006(tok.loc, &p.text, reason)),
                }
            }
            Some(_) => i += 1, // `--config $FILE`: contents unknown
            None => findings.push(cfg006(tok.loc, "", "no file name follows --config".into())),
        }
    }
    tokens
}

fn cfg006(loc: crate::source::Loc, path: &str, reason: String) -> Finding {
    Finding::new("CFG006", Some(loc))
        .var("path", path)
        .var("reason", reason)
        .var(
            "fix",
            "give --config a readable .yaml/.yml file holding a flat mapping of option names to values",
        )
}

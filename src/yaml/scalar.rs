//! Scalar typing: the value a scalar event stands for, as serde-saphyr 2.2's `deserialize_any`
//! resolved it before this tree was built from parser events (`de/deserializer.rs`
//! `deserialize_any`, `parse_scalars.rs`, `de/tags.rs` `SfTag::from_optional_cow`), with its
//! default options: YAML 1.1 booleans, no legacy octal, non-finite floats refused.

use super::Value;
use granit_parser::{ScalarStyle, Tag};

/// What an explicit tag asks of a scalar (serde-saphyr's `SfTag`, reduced to what typing uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// No tag, or one kvlint does not know (`!Ref`): typed from the text.
    Untagged,
    Null,
    Bool,
    Int,
    Float,
    /// `!!str`: the text as written.
    Str,
    /// The non-specific `!`: the text as written on a scalar, any collection.
    NonSpecific,
    /// `!!binary`, `!!timestamp`: scalars kvlint has no value for.
    NotAString,
    Seq,
    Map,
    /// `!!merge`.
    Merge,
}

impl Kind {
    /// Whether the tag fits a scalar (`None`) or a sequence or map (`Some(Kind::Seq | Kind::Map)`),
    /// as serde-saphyr's `SfTag::requires` has it: a tag of the wrong kind is refused.
    pub(super) fn fits(self, collection: Option<Kind>) -> bool {
        match self {
            Kind::Untagged | Kind::NonSpecific => true,
            Kind::Seq | Kind::Map => collection == Some(self),
            _ => collection.is_none(),
        }
    }

    pub(super) fn of(tag: Option<&Tag>) -> Kind {
        let Some(tag) = tag else {
            return Kind::Untagged;
        };
        if let Some(core) = tag.core_suffix() {
            return core_kind(core).unwrap_or(Kind::Untagged);
        }
        if let Some(name) = tag.suffix_in_namespace("tag:yaml.org,2002:") {
            let name = name.strip_prefix('!').unwrap_or(&name);
            return match name {
                "merge" => Kind::Merge,
                "binary" | "timestamp" => Kind::NotAString,
                other => core_kind(other).unwrap_or(Kind::Untagged),
            };
        }
        match tag.suffix_in_namespace("!").as_deref() {
            Some("" | "!") => Kind::NonSpecific,
            Some("!timestamp" | "!binary" | "timestamp" | "binary") => Kind::NotAString,
            Some(name) => {
                core_kind(name.strip_prefix('!').unwrap_or(name)).unwrap_or(Kind::Untagged)
            }
            None => Kind::Untagged,
        }
    }
}

fn core_kind(name: &str) -> Option<Kind> {
    Some(match name {
        "null" => Kind::Null,
        "bool" => Kind::Bool,
        "int" => Kind::Int,
        "float" => Kind::Float,
        "str" => Kind::Str,
        "seq" => Kind::Seq,
        "map" => Kind::Map,
        _ => return None,
    })
}

/// Why a scalar has no value; the text is serde-saphyr's.
#[derive(Debug, PartialEq)]
pub(super) enum ScalarError {
    Invalid(&'static str),
    NonFinite,
    NotAString,
}

impl ScalarError {
    pub(super) fn message(&self, raw: &str) -> String {
        match self {
            ScalarError::Invalid(ty) => format!("invalid {ty}"),
            ScalarError::NonFinite => {
                format!("non-finite float `{raw}` rejected by the configured policy")
            }
            ScalarError::NotAString => "cannot deserialize tagged scalar into string".to_string(),
        }
    }
}

/// The value of a scalar event.
pub(super) fn resolve(text: &str, style: ScalarStyle, kind: Kind) -> Result<Value, ScalarError> {
    let plain = style == ScalarStyle::Plain;
    match kind {
        Kind::Null => return Ok(Value::Null),
        Kind::Bool => {
            return parse_bool(text)
                .map(Value::Bool)
                .ok_or(ScalarError::Invalid("boolean"))
        }
        Kind::Int if trim(text).starts_with('-') => {
            return int_signed(text)
                .map(Value::Int)
                .ok_or(ScalarError::Invalid("i64"));
        }
        Kind::Int => {
            return int_unsigned(text)
                .map(from_u64)
                .ok_or(ScalarError::Invalid("u64"))
        }
        Kind::Float => {
            return float(text, true)
                .ok_or(ScalarError::Invalid("floating point"))
                .and_then(finite);
        }
        Kind::NotAString => return Err(ScalarError::NotAString),
        Kind::Str | Kind::NonSpecific | Kind::Merge | Kind::Untagged | Kind::Seq | Kind::Map => {}
    }
    if !plain || matches!(kind, Kind::Str | Kind::NonSpecific) {
        return Ok(Value::Str(text.to_string()));
    }
    if is_null(text) {
        return Ok(Value::Null);
    }
    if !may_be_typed(text) {
        return Ok(Value::Str(text.to_string()));
    }
    Ok(untagged_plain(text)?.unwrap_or_else(|| Value::Str(text.to_string())))
}

/// Plain text YAML core reads as null (`scalar_is_nullish`: exact spellings, no trimming).
pub(super) fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// Whether a plain scalar can be anything but a string: every boolean, integer and float
/// spelling starts with one of these (after padding, which plain scalars do not have).
fn may_be_typed(text: &str) -> bool {
    text.as_bytes().first().is_some_and(|b| {
        b.is_ascii_digit()
            || matches!(
                b.to_ascii_lowercase(),
                b'+' | b'-'
                    | b'.'
                    | b't'
                    | b'f'
                    | b'y'
                    | b'n'
                    | b'o'
                    | b' '
                    | b'\t'
                    | b'\r'
                    | b'\n'
            )
    })
}

/// A plain, untagged, non-null scalar: bool, then int, then float; `None` keeps the text.
fn untagged_plain(text: &str) -> Result<Option<Value>, ScalarError> {
    if let Some(b) = parse_bool(text) {
        return Ok(Some(Value::Bool(b)));
    }
    let t = trim(text);
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    // Upper-case radix prefixes and signed NaN stay text (serde-saphyr keeps them strings).
    if matches!(unsigned.as_bytes(), [b'0', b'X' | b'O' | b'B', ..]) || is_signed_nan(t) {
        return Ok(None);
    }
    if t.starts_with('-') {
        if !leading_zero_decimal(t) {
            if let Some(i) = int_signed(t) {
                return Ok(Some(Value::Int(i)));
            }
        }
    } else if let Some(u) = int_unsigned(t) {
        return Ok(Some(from_u64(u)));
    }
    match float(text, false) {
        Some(f) => finite(f).map(Some),
        None => Ok(None),
    }
}

/// A u64 beyond i64 becomes a float, as the tree has no unsigned integers.
fn from_u64(u: u64) -> Value {
    i64::try_from(u).map_or(Value::Float(u as f64), Value::Int)
}

fn finite(f: f64) -> Result<Value, ScalarError> {
    if f.is_finite() {
        Ok(Value::Float(f))
    } else {
        Err(ScalarError::NonFinite)
    }
}

/// ASCII padding dropped before typing (`yaml_trim`); plain scalars never have any.
fn trim(s: &str) -> &str {
    let pad = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let bytes = s.as_bytes();
    if bytes.first().is_some_and(pad) || bytes.last().is_some_and(pad) {
        s.trim_matches([' ', '\t', '\r', '\n'])
    } else {
        s
    }
}

/// YAML 1.1 booleans, any case (`parse_yaml11_bool`).
fn parse_bool(s: &str) -> Option<bool> {
    let t = trim(s);
    // Most scalars are no boolean: only short ones can be, which spares the eight comparisons.
    if t.len() > 5 {
        return None;
    }
    let is = |words: [&str; 4]| words.iter().any(|w| t.eq_ignore_ascii_case(w));
    if is(["true", "yes", "y", "on"]) {
        Some(true)
    } else if is(["false", "no", "n", "off"]) {
        Some(false)
    } else {
        None
    }
}

fn is_signed_nan(t: &str) -> bool {
    t.strip_prefix(['+', '-'])
        .is_some_and(|u| matches!(u, ".nan" | ".NaN" | ".NAN"))
}

/// `0127`, `+0127`, `-0127`: a decimal with a redundant leading zero.
fn leading_zero_decimal(t: &str) -> bool {
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    digits.len() > 1 && digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `parse_int_signed::<i64>`: optional sign, `0x`/`0o`/`0b` (either case), single underscores
/// between digits; a decimal may not start with `0` unless it is `0`.
fn int_signed(s: &str) -> Option<i64> {
    let t = trim(s);
    let (neg, rest) = match t.strip_prefix('+') {
        Some(r) => (false, r),
        None => t.strip_prefix('-').map_or((false, t), |r| (true, r)),
    };
    let mag = magnitude(rest)?;
    let v = if neg {
        0i128.checked_sub(i128::try_from(mag).ok()?)?
    } else {
        i128::try_from(mag).ok()?
    };
    i64::try_from(v).ok()
}

/// `parse_int_unsigned::<u64>`.
fn int_unsigned(s: &str) -> Option<u64> {
    let t = trim(s);
    if t.starts_with('-') {
        return None;
    }
    u64::try_from(magnitude(t.strip_prefix('+').unwrap_or(t))?).ok()
}

fn magnitude(rest: &str) -> Option<u128> {
    let prefixed = |p: [&str; 2]| rest.strip_prefix(p[0]).or_else(|| rest.strip_prefix(p[1]));
    if let Some(d) = prefixed(["0x", "0X"]) {
        digits(d, 16)
    } else if let Some(d) = prefixed(["0o", "0O"]) {
        digits(d, 8)
    } else if let Some(d) = prefixed(["0b", "0B"]) {
        digits(d, 2)
    } else if rest.starts_with('0') && rest != "0" {
        None
    } else {
        digits(rest, 10)
    }
}

/// Digits in `radix`, `_` allowed only between two digits.
fn digits(d: &str, radix: u32) -> Option<u128> {
    let bytes = d.as_bytes();
    let mut val: u128 = 0;
    let mut saw = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let between =
                i > 0 && bytes[i - 1] != b'_' && bytes.get(i + 1).is_some_and(|&n| n != b'_');
            if !between {
                return None;
            }
            continue;
        }
        let digit = char::from(b).to_digit(radix)?;
        val = val
            .checked_mul(u128::from(radix))?
            .checked_add(u128::from(digit))?;
        saw = true;
    }
    saw.then_some(val)
}

/// `try_parse_float_incl_overflow`: `.inf`/`.nan` spellings, finite Rust floats, and
/// numeral-shaped literals that overflow to infinity. `tagged` keeps a signed NaN (`!!float -.nan`).
fn float(s: &str, tagged: bool) -> Option<f64> {
    let t = trim(s);
    if tagged && is_signed_nan(t) {
        let nan = f64::NAN;
        return Some(if t.starts_with('-') { -nan } else { nan });
    }
    let (negative, unsigned) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    match unsigned {
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        ".inf" | ".Inf" | ".INF" if negative => return Some(f64::NEG_INFINITY),
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        _ => {}
    }
    let parsed = t.parse::<f64>().ok()?;
    if parsed.is_finite() {
        return Some(parsed);
    }
    // Rust also reads `inf`/`nan`: only a literal that starts with a digit overflows.
    unsigned
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_digit)
        .then_some(parsed)
        .filter(|p| p.is_infinite())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Result<Value, ScalarError> {
        resolve(text, ScalarStyle::Plain, Kind::Untagged)
    }

    /// YAML 1.2.2 core schema, tag resolution (§10.3.2), for the spellings it lists.
    #[test]
    fn plain_scalars_resolve_as_the_core_schema_says() {
        let s = |t: &str| Value::Str(t.to_string());
        let table = [
            ("null", Value::Null),
            ("Null", Value::Null),
            ("NULL", Value::Null),
            ("~", Value::Null),
            ("", Value::Null),
            ("true", Value::Bool(true)),
            ("True", Value::Bool(true)),
            ("TRUE", Value::Bool(true)),
            ("false", Value::Bool(false)),
            ("FALSE", Value::Bool(false)),
            ("0", Value::Int(0)),
            ("-19", Value::Int(-19)),
            ("+12", Value::Int(12)),
            ("0o14", Value::Int(12)),
            ("0xC", Value::Int(12)),
            ("0x1f", Value::Int(31)),
            ("1.", Value::Float(1.0)),
            (".5", Value::Float(0.5)),
            ("+12e03", Value::Float(12000.0)),
            ("-2E+05", Value::Float(-200000.0)),
            ("0.", Value::Float(0.0)),
            // Not in any of the core schema's forms: strings.
            ("nULL", s("nULL")),
            ("tRUE", Value::Bool(true)), // YAML 1.1 booleans are case-insensitive (below)
            ("0x", s("0x")),
            ("inf", s("inf")),
            ("nan", s("nan")),
            ("12e", s("12e")),
            ("1:20", s("1:20")),
            ("2001-12-14", s("2001-12-14")),
            ("0.1.2", s("0.1.2")),
            ("Qwen/Qwen3-8B", s("Qwen/Qwen3-8B")),
        ];
        for (text, want) in table {
            assert_eq!(plain(text), Ok(want), "{text:?}");
        }
    }

    /// serde-saphyr's documented defaults, which kvlint's YAML always had: YAML 1.1 booleans
    /// (`Options::strict_booleans` off), binary and underscored integers, a u64 beyond i64 as a
    /// float here (the tree has no unsigned integers), non-finite floats refused
    /// (`reject_non_finite_typeless_float`), and upper-case radix prefixes kept as text.
    #[test]
    fn serde_saphyr_defaults_hold() {
        let s = |t: &str| Value::Str(t.to_string());
        for (text, b) in [
            ("yes", true),
            ("Y", true),
            ("on", true),
            ("No", false),
            ("n", false),
            ("OFF", false),
        ] {
            assert_eq!(plain(text), Ok(Value::Bool(b)), "{text:?}");
        }
        assert_eq!(plain("0b101"), Ok(Value::Int(5)));
        assert_eq!(plain("1_000"), Ok(Value::Int(1000)));
        assert_eq!(plain("1__0"), Ok(Value::Str("1__0".into())));
        assert_eq!(plain("9223372036854775807"), Ok(Value::Int(i64::MAX)));
        assert_eq!(
            plain("9223372036854775808"),
            Ok(Value::Float(9223372036854775808.0))
        );
        assert_eq!(plain("-9223372036854775808"), Ok(Value::Int(i64::MIN)));
        for text in [".inf", "-.inf", ".NaN", "1e999"] {
            assert_eq!(plain(text), Err(ScalarError::NonFinite), "{text:?}");
        }
        for text in ["0X1F", "0O17", "0B1", "-.nan", "+.nan"] {
            assert_eq!(plain(text), Ok(s(text)), "{text:?}");
        }
        // A redundant leading zero is no integer; Rust's float grammar still takes it.
        assert_eq!(plain("007"), Ok(Value::Float(7.0)));
    }

    #[test]
    fn quoted_block_and_string_tagged_scalars_stay_text() {
        for style in [
            ScalarStyle::SingleQuoted,
            ScalarStyle::DoubleQuoted,
            ScalarStyle::Literal,
            ScalarStyle::Folded,
        ] {
            assert_eq!(
                resolve("8", style, Kind::Untagged),
                Ok(Value::Str("8".into()))
            );
            assert_eq!(
                resolve("", style, Kind::Untagged),
                Ok(Value::Str(String::new()))
            );
        }
        for kind in [Kind::Str, Kind::NonSpecific] {
            assert_eq!(
                resolve("true", ScalarStyle::Plain, kind),
                Ok(Value::Str("true".into()))
            );
            assert_eq!(
                resolve("~", ScalarStyle::Plain, kind),
                Ok(Value::Str("~".into()))
            );
        }
    }

    #[test]
    fn explicit_tags_type_the_text_or_refuse_it() {
        let tagged = |text: &str, kind| resolve(text, ScalarStyle::Plain, kind);
        assert_eq!(tagged("8", Kind::Float), Ok(Value::Float(8.0)));
        assert_eq!(tagged("-8", Kind::Int), Ok(Value::Int(-8)));
        assert_eq!(tagged("x", Kind::Null), Ok(Value::Null));
        assert_eq!(tagged("yes", Kind::Bool), Ok(Value::Bool(true)));
        assert_eq!(tagged("8.5", Kind::Int), Err(ScalarError::Invalid("u64")));
        assert_eq!(
            tagged("maybe", Kind::Bool),
            Err(ScalarError::Invalid("boolean"))
        );
        assert_eq!(ScalarError::Invalid("u64").message("8.5"), "invalid u64");
    }
}

//! Numbers the way the engines' argparse `type=` functions read them: Python `int()` and
//! `float()` on a string, and each engine's `human_readable_int`.

/// How a value string becomes a number for `human_int` flags.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HumanInt {
    /// vllm/utils/argparse_utils.py::human_readable_int: `k` = 10³, `K` = 2¹⁰, decimals with
    /// lowercase suffixes only, computed as `int(float(number) * mult)`.
    Vllm,
    /// sglang/srt/utils/common.py::human_readable_int: SI `k M G T` (decimals allowed, computed
    /// exactly with `Decimal`) and IEC `Ki Mi Gi Ti`, case-sensitive.
    Sglang,
}

/// First code points of Unicode decimal-digit runs (category Nd) that Python's `int()`, `float()`
/// and regex `\d` accept besides ASCII: Arabic-Indic, Devanagari and the other Indic scripts,
/// Thai, Lao, Tibetan, Myanmar, Khmer, Mongolian, full-width.
const DIGIT_ZEROS: &[u32] = &[
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6,
    0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0xFF10,
];

/// The ASCII digit a Unicode decimal digit stands for.
fn ascii_digit(c: char) -> Option<char> {
    if c.is_ascii_digit() {
        return Some(c);
    }
    let cp = c as u32;
    let zero = DIGIT_ZEROS.iter().find(|z| (**z..**z + 10).contains(&cp))?;
    char::from_digit(cp - zero, 10)
}

/// Decimal digits in any script → ASCII, other characters unchanged.
fn ascii_digits(s: &str) -> String {
    s.chars().map(|c| ascii_digit(c).unwrap_or(c)).collect()
}

/// Python `str.strip()` whitespace (Unicode White_Space), then digits made ASCII.
fn normalize(raw: &str) -> String {
    ascii_digits(raw.trim())
}

/// ASCII digits only (`8192`), the common case, read without normalizing a copy.
fn plain_digits(raw: &str) -> bool {
    !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit())
}

/// Python `int(str)`: surrounding whitespace, a sign, digits in any script with single
/// underscores between them (`32_768`, `+8192`, `８１９２`).
pub fn py_int(raw: &str) -> Option<i64> {
    if plain_digits(raw) {
        return raw.parse().ok();
    }
    let s = normalize(raw);
    let digits = s.strip_prefix(['+', '-']).unwrap_or(&s);
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    if !digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    s.replace('_', "").parse().ok()
}

/// Python `float(str)`: decimal and exponent forms, `inf`, `nan`, underscores between digits.
pub fn py_float(raw: &str) -> Option<f64> {
    let s = normalize(raw);
    let bad_underscore = s.char_indices().any(|(i, c)| {
        c == '_' && {
            let before = s[..i].chars().next_back();
            let after = s[i + 1..].chars().next();
            !(before.is_some_and(|b| b.is_ascii_digit())
                && after.is_some_and(|a| a.is_ascii_digit()))
        }
    });
    let word = s.trim_start_matches(['+', '-']).to_ascii_lowercase();
    let special = matches!(word.as_str(), "inf" | "infinity" | "nan");
    let plain = s
        .chars()
        .all(|c| c.is_ascii_digit() || "+-._eE".contains(c));
    if s.is_empty() || bad_underscore || !(special || plain) {
        return None;
    }
    s.replace('_', "").parse().ok()
}

/// Number with an optional size suffix, per engine (see [`HumanInt`]).
pub fn human_int(flavor: HumanInt, raw: &str) -> Option<i64> {
    // No suffix: `int(value)`.
    if plain_digits(raw) {
        return raw.parse().ok();
    }
    let s = normalize(raw);
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    // The engines' regex: `(\d+(?:\.\d+)?)(suffix)`, else plain `int(value)`.
    let int_part = num.split('.').next().unwrap_or("");
    let frac = num.split_once('.').map(|(_, f)| f);
    let well_formed =
        !int_part.is_empty() && frac.is_none_or(|f| !f.is_empty() && !f.contains('.'));
    let mult = multiplier(flavor, suffix);
    let (Some((mult, decimals_ok)), true) = (mult, well_formed) else {
        return py_int(raw);
    };
    let Some(frac) = frac else {
        return int_part.parse::<i64>().ok()?.checked_mul(mult);
    };
    if !decimals_ok {
        return None; // "Decimals are not allowed with binary/IEC suffixes"
    }
    match flavor {
        // int(float(number) * mult): float rounding included (`4.1m` → 4099999).
        HumanInt::Vllm => {
            let n: f64 = num.parse().ok()?;
            let v = (n * mult as f64).trunc();
            (v.is_finite() && v.abs() < 9.2e18).then_some(v as i64)
        }
        // int(Decimal(number) * mult): exact (`4.1M` → 4100000).
        HumanInt::Sglang => {
            let whole = int_part.parse::<i128>().ok()?;
            let scale = 10i128.checked_pow(u32::try_from(frac.len()).ok()?)?;
            let part = frac.parse::<i128>().ok()?;
            let v = whole * i128::from(mult) + part * i128::from(mult) / scale;
            i64::try_from(v).ok()
        }
    }
}

/// `(multiplier, decimals allowed)` of a suffix.
fn multiplier(flavor: HumanInt, suffix: &str) -> Option<(i64, bool)> {
    Some(match (flavor, suffix) {
        (HumanInt::Vllm, "k") | (HumanInt::Sglang, "k") => (1_000, true),
        (HumanInt::Vllm, "m") | (HumanInt::Sglang, "M") => (1_000_000, true),
        (HumanInt::Vllm, "g") | (HumanInt::Sglang, "G") => (1_000_000_000, true),
        (HumanInt::Vllm, "t") | (HumanInt::Sglang, "T") => (1_000_000_000_000, true),
        (HumanInt::Vllm, "K") | (HumanInt::Sglang, "Ki") => (1 << 10, false),
        (HumanInt::Vllm, "M") | (HumanInt::Sglang, "Mi") => (1 << 20, false),
        (HumanInt::Vllm, "G") | (HumanInt::Sglang, "Gi") => (1 << 30, false),
        (HumanInt::Vllm, "T") | (HumanInt::Sglang, "Ti") => (1 << 40, false),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_int_forms() {
        assert_eq!(py_int("32_768"), Some(32768));
        assert_eq!(py_int("+8192"), Some(8192));
        assert_eq!(py_int("８１９２"), Some(8192));
        assert_eq!(py_int(" 8 "), Some(8));
        assert_eq!(py_int("1__0"), None);
        assert_eq!(py_int("_1"), None);
        assert_eq!(py_int("1.5"), None);
        assert_eq!(py_int("0x10"), None);
    }

    #[test]
    fn python_float_forms() {
        assert_eq!(py_float("0.7_5"), Some(0.75));
        assert_eq!(py_float("+0.6"), Some(0.6));
        assert!(py_float("nan").is_some_and(f64::is_nan));
        assert_eq!(py_float("inf"), Some(f64::INFINITY));
        assert_eq!(py_float("1_.5"), None);
        assert_eq!(py_float("abc"), None);
    }

    #[test]
    fn human_ints_per_engine() {
        assert_eq!(human_int(HumanInt::Sglang, "4.1M"), Some(4_100_000));
        assert_eq!(human_int(HumanInt::Vllm, "4.1m"), Some(4_099_999));
        assert_eq!(human_int(HumanInt::Sglang, "2Ki"), Some(2048));
        assert_eq!(human_int(HumanInt::Sglang, "1.5Ki"), None);
        assert_eq!(human_int(HumanInt::Vllm, "32K"), Some(32768));
        assert_eq!(human_int(HumanInt::Sglang, "32_768"), Some(32768));
        assert_eq!(human_int(HumanInt::Sglang, "３２k"), Some(32000));
        assert_eq!(human_int(HumanInt::Sglang, "1m"), None);
    }
}

//! Numbers as Python computes them from what the file fixes: `32 * 1024`, `int("32768")`.

use super::eval::Val;
use crate::source::Loc;
use crate::yaml::{Node, Value};

/// `a OP b` of two numbers (`True`/`False` count as 1/0, as in Python); `None` where Python
/// would raise, the result overflows, or a side is not a number the file fixes.
pub(super) fn arith(op: &str, a: &Val, b: &Val, loc: Loc) -> Option<Val> {
    let value = match (number(a)?, number(b)?) {
        (Num::Int(x), Num::Int(y)) => match op {
            "+" => Value::Int(x.checked_add(y)?),
            "-" => Value::Int(x.checked_sub(y)?),
            "*" => Value::Int(x.checked_mul(y)?),
            "//" => Value::Int(floor_div(x, y)?),
            "%" => Value::Int(x.checked_sub(floor_div(x, y)?.checked_mul(y)?)?),
            "/" if y != 0 => Value::Float(x as f64 / y as f64),
            _ => return None,
        },
        (x, y) => {
            let (x, y) = (x.float(), y.float());
            match op {
                "+" => Value::Float(x + y),
                "-" => Value::Float(x - y),
                "*" => Value::Float(x * y),
                "/" if y != 0.0 => Value::Float(x / y),
                _ => return None,
            }
        }
    };
    Some(Val::Scalar(Node { value, loc }))
}

/// `int(x)`: a number truncated toward zero, a decimal string (Python allows spaces around it and
/// `_` between digits); an unknown argument stays unknown at its own place (where the env read
/// or parameter is), anything else is `None`.
pub(super) fn int(v: Val) -> Option<Val> {
    let loc = v.loc();
    let value = match &v {
        Val::Unknown(..) => return Some(v),
        Val::Str(w) if w.unresolved.is_empty() => {
            let text = w.chars.as_str().trim().to_string();
            let digits = text.trim_start_matches(['+', '-']);
            let plain =
                !digits.starts_with('_') && !digits.ends_with('_') && !digits.contains("__");
            if !plain {
                return None;
            }
            Value::Int(text.replace('_', "").parse().ok()?)
        }
        Val::Scalar(_) => match number(&v)? {
            Num::Int(i) => Value::Int(i),
            Num::Float(f) if f.is_finite() && f.abs() < 9.0e18 => Value::Int(f.trunc() as i64),
            Num::Float(_) => return None,
        },
        _ => return None,
    };
    Some(Val::Scalar(Node { value, loc }))
}

enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn float(&self) -> f64 {
        match self {
            Num::Int(i) => *i as f64,
            Num::Float(f) => *f,
        }
    }
}

fn number(v: &Val) -> Option<Num> {
    let Val::Scalar(n) = v else { return None };
    match n.value {
        Value::Int(i) => Some(Num::Int(i)),
        Value::Bool(b) => Some(Num::Int(i64::from(b))),
        Value::Float(f) => Some(Num::Float(f)),
        _ => None,
    }
}

/// Python's `//` on integers: the quotient rounded toward negative infinity.
fn floor_div(x: i64, y: i64) -> Option<i64> {
    let q = x.checked_div(y)?;
    let inexact = x.checked_rem(y)? != 0;
    Some(if inexact && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn num(v: Value) -> Val {
        Val::Scalar(Node {
            value: v,
            loc: Loc::new(FileId(0), 0..1),
        })
    }

    fn value(v: Option<Val>) -> Option<Value> {
        match v? {
            Val::Scalar(n) => Some(n.value),
            _ => None,
        }
    }

    #[test]
    fn arithmetic_follows_python() {
        let at = Loc::new(FileId(0), 0..1);
        let (a, b) = (num(Value::Int(-7)), num(Value::Int(2)));
        assert_eq!(
            value(arith("*", &num(Value::Int(32)), &num(Value::Int(1024)), at)),
            Some(Value::Int(32768))
        );
        assert_eq!(value(arith("//", &a, &b, at)), Some(Value::Int(-4)));
        assert_eq!(value(arith("%", &a, &b, at)), Some(Value::Int(1)));
        assert_eq!(value(arith("/", &a, &b, at)), Some(Value::Float(-3.5)));
        assert_eq!(
            value(arith("+", &num(Value::Bool(true)), &b, at)),
            Some(Value::Int(3))
        );
        assert!(arith("//", &a, &num(Value::Int(0)), at).is_none());
        assert!(arith("*", &num(Value::Int(i64::MAX)), &b, at).is_none());
        assert!(arith("<<", &a, &b, at).is_none());
    }

    #[test]
    fn int_of_numbers_and_decimal_strings() {
        let text = |t: &str| {
            Val::Str(crate::extract::shell::MappedWord {
                chars: crate::extract::shell::Chars::verbatim(t, 0),
                loc: Loc::new(FileId(0), 0..t.len()),
                unresolved: Vec::new(),
                defaulted: false,
            })
        };
        assert_eq!(value(int(text(" 32_768 "))), Some(Value::Int(32768)));
        assert_eq!(value(int(num(Value::Float(-2.9)))), Some(Value::Int(-2)));
        assert!(int(text("32*1024")).is_none());
        assert!(int(text("1__0")).is_none());
        let unknown = Val::Unknown("os.getenv(\"X\")".into(), Loc::new(FileId(0), 3..9));
        assert!(matches!(int(unknown), Some(Val::Unknown(_, l)) if l.start == 3));
    }
}

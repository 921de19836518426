//! Shell arithmetic (`$((SLURM_NNODES * SLURM_GPUS_ON_NODE))`) over integer constants and
//! variables whose values the script fixes: `+ - * / %` and parentheses, as bash evaluates them
//! in 64-bit integers. Anything else (a variable kvlint does not know, another operator, an
//! overflow, a division by zero) is no value, and the expansion stays unresolved.

/// The value of the arithmetic expression `expr`, looking variables up with `var`.
pub fn eval(expr: &str, var: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
    let mut p = Parser {
        s: expr.as_bytes(),
        i: 0,
        var,
        depth: 0,
    };
    let v = p.sum()?;
    p.space();
    (p.i == p.s.len()).then_some(v)
}

/// Parentheses nested deeper than this are no value (a hostile script cannot recurse unbounded).
const MAX_NESTING: usize = 32;

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    var: &'a dyn Fn(&str) -> Option<i64>,
    depth: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.space();
        self.s.get(self.i).copied()
    }

    fn sum(&mut self) -> Option<i64> {
        let mut v = self.product()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            v = if op == b'+' {
                v.checked_add(r)?
            } else {
                v.checked_sub(r)?
            };
        }
        Some(v)
    }

    fn product(&mut self) -> Option<i64> {
        let mut v = self.unary()?;
        while let Some(op @ (b'*' | b'/' | b'%')) = self.peek() {
            // `**` (power) is not read.
            if self.s.get(self.i + 1) == Some(&b'*') {
                return None;
            }
            self.i += 1;
            let r = self.unary()?;
            v = match op {
                b'*' => v.checked_mul(r)?,
                b'/' => v.checked_div(r)?,
                _ => v.checked_rem(r)?,
            };
        }
        Some(v)
    }

    fn unary(&mut self) -> Option<i64> {
        match self.peek()? {
            b'-' => {
                self.i += 1;
                self.unary()?.checked_neg()
            }
            b'+' => {
                self.i += 1;
                self.unary()
            }
            b'(' if self.depth < MAX_NESTING => {
                self.i += 1;
                self.depth += 1;
                let v = self.sum()?;
                self.depth -= 1;
                (self.peek()? == b')').then(|| self.i += 1)?;
                Some(v)
            }
            c if c.is_ascii_digit() => {
                let start = self.i;
                while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                    self.i += 1;
                }
                std::str::from_utf8(&self.s[start..self.i])
                    .ok()?
                    .parse()
                    .ok()
            }
            _ => self.name(),
        }
    }

    /// `NAME`, `$NAME` or `${NAME}`.
    fn name(&mut self) -> Option<i64> {
        let braced = self.s[self.i..].starts_with(b"${");
        self.i += if braced {
            2
        } else {
            usize::from(self.s[self.i] == b'$')
        };
        let start = self.i;
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.i += 1;
        }
        let name = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        if braced {
            (self.s.get(self.i) == Some(&b'}')).then(|| self.i += 1)?;
        }
        if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
            return None;
        }
        (self.var)(name)
    }
}

#[cfg(test)]
mod tests {
    use super::eval;

    fn vars(name: &str) -> Option<i64> {
        match name {
            "SLURM_NNODES" => Some(2),
            "GPUS" => Some(4),
            _ => None,
        }
    }

    #[test]
    fn constants_and_known_variables() {
        let cases = [
            ("SLURM_NNODES * GPUS", Some(8)),
            ("$SLURM_NNODES*${GPUS} - 1", Some(7)),
            (" (1 + 2) * 3 ", Some(9)),
            ("-4 / 3", Some(-1)),
            ("7 % 4", Some(3)),
            ("UNKNOWN * 2", None),
            ("2 ** 3", None),
            ("1 / 0", None),
            ("i++", None),
            ("9223372036854775807 + 1", None),
            ("", None),
        ];
        for (expr, want) in cases {
            assert_eq!(eval(expr, &vars), want, "{expr}");
        }
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(eval(&deep, &vars), None);
    }
}

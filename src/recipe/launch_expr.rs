//! The launch expressions of a kernel recipe: integer expressions of the shape's
//! dimensions, by the names its problem kind gives them (`B`, `H`, `S`, `D`; `M`, `N`,
//! `K`), and the multiprocessor count (`SMS`), such as `cdiv(S, 128)` or
//! `(2 * 128 * 128 + 4 * 128 * 128) * 2 + 1024`. The grammar is exactly this and
//! nothing more:
//!
//! ```text
//! expr    = term (("+" | "-") term)*
//! term    = unary (("*" | "/" | "%") unary)*
//! unary   = "-" unary | primary
//! primary = integer | name | ("cdiv" | "min" | "max") "(" expr "," expr ")"
//!         | "(" expr ")"
//! ```
//!
//! A condition (a recipe path's `when`) is two such expressions compared:
//!
//! ```text
//! cond    = expr ("<" | "<=" | ">" | ">=" | "==" | "!=") expr
//! ```
//!
//! Arithmetic is on i64 and checked: an overflow, a division by zero or a remainder of
//! zero is an error, never a wrapped value. `/` truncates toward zero, `cdiv(a, b)` is
//! the quotient rounded up. An expression is at most [`MAX_LEN`] bytes long and nests
//! parentheses, calls and signs at most [`MAX_DEPTH`] deep, so no input can exhaust the
//! stack.

use std::fmt;

/// The longest expression accepted, in bytes.
pub const MAX_LEN: usize = 1024;
/// The deepest nesting of parentheses, calls and unary minus signs accepted.
pub const MAX_DEPTH: usize = 64;

/// The values the names of an expression stand for: each name with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vars<'a>(pub &'a [(&'a str, i64)]);

impl Vars<'_> {
    fn get(&self, name: &str) -> Option<i64> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

/// Why an expression has no value; `at` is a 1-based character column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExprError {
    Empty,
    TooLong {
        len: usize,
    },
    TooDeep {
        at: usize,
    },
    Unexpected {
        at: usize,
        found: String,
        expected: &'static str,
    },
    UnknownName {
        at: usize,
        name: String,
        /// The names the expression may use, comma-separated.
        known: String,
    },
    NumberTooLarge {
        at: usize,
    },
    Overflow {
        at: usize,
        op: char,
    },
    DivisionByZero {
        at: usize,
    },
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExprError::Empty => write!(f, "the expression is empty"),
            ExprError::TooLong { len } => {
                write!(
                    f,
                    "the expression is {len} bytes long; at most {MAX_LEN} are allowed"
                )
            }
            ExprError::TooDeep { at } => write!(
                f,
                "nested more than {MAX_DEPTH} deep at column {at}; write it flatter"
            ),
            ExprError::Unexpected {
                at,
                found,
                expected,
            } => write!(f, "{found} at column {at}; expected {expected}"),
            ExprError::UnknownName { at, name, known } => write!(
                f,
                "unknown name {name:?} at column {at}; the names are {known}, cdiv, min and \
                 max"
            ),
            ExprError::NumberTooLarge { at } => {
                write!(f, "the number at column {at} does not fit in 64 bits")
            }
            ExprError::Overflow { at, op } => {
                write!(f, "'{op}' at column {at} overflows 64-bit integers")
            }
            ExprError::DivisionByZero { at } => write!(f, "division by zero at column {at}"),
        }
    }
}

impl std::error::Error for ExprError {}

/// The value of `expr` with the names bound to `vars`.
pub fn eval(expr: &str, vars: &Vars) -> Result<i64, ExprError> {
    eval_with(expr, Some(vars))
}

/// The value of an expression of numbers alone (the shape's names are unknown in it),
/// such as `2*4096*4096*4096` for a FLOP count given on the command line.
pub fn eval_constant(expr: &str) -> Result<i64, ExprError> {
    eval_with(expr, None)
}

fn eval_with(expr: &str, vars: Option<&Vars>) -> Result<i64, ExprError> {
    let mut p = Parser::new(expr, vars)?;
    let v = p.expr()?;
    p.end(v)
}

/// Whether the condition `cond` (two expressions and a comparison between them, such as
/// `cdiv(S, 128) * B * H < SMS`) holds with the names bound to `vars`.
pub fn eval_condition(cond: &str, vars: &Vars) -> Result<bool, ExprError> {
    let mut p = Parser::new(cond, Some(vars))?;
    let a = p.expr()?;
    let op = p.comparison()?;
    let b = p.expr()?;
    p.end(op.holds(a, b))
}

/// The comparisons a condition may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comparison {
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    Equal,
    NotEqual,
}

impl Comparison {
    fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Comparison::Less => a < b,
            Comparison::LessOrEqual => a <= b,
            Comparison::Greater => a > b,
            Comparison::GreaterOrEqual => a >= b,
            Comparison::Equal => a == b,
            Comparison::NotEqual => a != b,
        }
    }
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    /// None: no names are bound.
    vars: Option<&'a Vars<'a>>,
}

impl<'a> Parser<'a> {
    fn new(text: &str, vars: Option<&'a Vars<'a>>) -> Result<Parser<'a>, ExprError> {
        if text.len() > MAX_LEN {
            return Err(ExprError::TooLong { len: text.len() });
        }
        let mut p = Parser {
            chars: text.chars().collect(),
            pos: 0,
            depth: 0,
            vars,
        };
        p.skip_space();
        if p.peek().is_none() {
            return Err(ExprError::Empty);
        }
        Ok(p)
    }

    /// `v`, where nothing follows.
    fn end<T>(&self, v: T) -> Result<T, ExprError> {
        match self.peek() {
            None => Ok(v),
            Some(_) => Err(self.unexpected("an operator or the end")),
        }
    }

    /// The comparison between a condition's two expressions.
    fn comparison(&mut self) -> Result<Comparison, ExprError> {
        let two = |p: &Self, c: char| p.chars.get(p.pos + 1) == Some(&c);
        let (op, len) = match self.peek() {
            Some('<') if two(self, '=') => (Comparison::LessOrEqual, 2),
            Some('<') => (Comparison::Less, 1),
            Some('>') if two(self, '=') => (Comparison::GreaterOrEqual, 2),
            Some('>') => (Comparison::Greater, 1),
            Some('=') if two(self, '=') => (Comparison::Equal, 2),
            Some('!') if two(self, '=') => (Comparison::NotEqual, 2),
            _ => return Err(self.unexpected("a comparison (<, <=, >, >=, == or !=)")),
        };
        self.pos += len;
        self.skip_space();
        Ok(op)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    /// The 1-based column of the next character.
    fn col(&self) -> usize {
        self.pos + 1
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// Consumes `c` (and the space after it) when it comes next.
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            self.skip_space();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, expected: &'static str) -> Result<(), ExprError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn unexpected(&self, expected: &'static str) -> ExprError {
        let found = match self.peek() {
            None => "the end".to_string(),
            Some(c) => format!("{:?}", c),
        };
        ExprError::Unexpected {
            at: self.col(),
            found,
            expected,
        }
    }

    /// Enters one level of nesting, opened at column `at`.
    fn descend(&mut self, at: usize) -> Result<(), ExprError> {
        if self.depth >= MAX_DEPTH {
            return Err(ExprError::TooDeep { at });
        }
        self.depth += 1;
        Ok(())
    }

    fn expr(&mut self) -> Result<i64, ExprError> {
        let mut v = self.term()?;
        loop {
            let at = self.col();
            let op = match self.peek() {
                Some(c @ ('+' | '-')) => c,
                _ => return Ok(v),
            };
            self.eat(op);
            let r = self.term()?;
            let out = if op == '+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            };
            v = out.ok_or(ExprError::Overflow { at, op })?;
        }
    }

    fn term(&mut self) -> Result<i64, ExprError> {
        let mut v = self.unary()?;
        loop {
            let at = self.col();
            let op = match self.peek() {
                Some(c @ ('*' | '/' | '%')) => c,
                _ => return Ok(v),
            };
            self.eat(op);
            let r = self.unary()?;
            v = match op {
                '*' => v.checked_mul(r).ok_or(ExprError::Overflow { at, op })?,
                _ if r == 0 => return Err(ExprError::DivisionByZero { at }),
                '/' => v.checked_div(r).ok_or(ExprError::Overflow { at, op })?,
                _ => v.checked_rem(r).ok_or(ExprError::Overflow { at, op })?,
            };
        }
    }

    fn unary(&mut self) -> Result<i64, ExprError> {
        let at = self.col();
        if self.eat('-') {
            self.descend(at)?;
            let v = self.unary()?;
            self.depth -= 1;
            return v.checked_neg().ok_or(ExprError::Overflow { at, op: '-' });
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<i64, ExprError> {
        let at = self.col();
        match self.peek() {
            Some('(') => {
                self.eat('(');
                self.descend(at)?;
                let v = self.expr()?;
                self.expect(')', "')'")?;
                self.depth -= 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let name = self.word();
                let v = match (name.as_str(), self.vars) {
                    ("cdiv" | "min" | "max", _) => return self.call(&name, at),
                    (_, vars) => match vars.and_then(|v| v.get(&name)) {
                        Some(v) => v,
                        None => {
                            let known = vars.map_or("numbers".into(), |v| {
                                v.0.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                            });
                            return Err(ExprError::UnknownName { at, name, known });
                        }
                    },
                };
                self.skip_space();
                Ok(v)
            }
            _ => Err(self.unexpected("a number, a name or '('")),
        }
    }

    fn number(&mut self) -> Result<i64, ExprError> {
        let at = self.col();
        let mut v: i64 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(i64::from(d)))
                .ok_or(ExprError::NumberTooLarge { at })?;
            self.pos += 1;
        }
        if self
            .peek()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '.')
        {
            return Err(self.unexpected("an operator after a number"));
        }
        self.skip_space();
        Ok(v)
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// `cdiv(a, b)`, `min(a, b)` or `max(a, b)`, the name already read.
    fn call(&mut self, name: &str, at: usize) -> Result<i64, ExprError> {
        self.skip_space();
        self.expect('(', "'(' after a function name")?;
        self.descend(at)?;
        let a = self.expr()?;
        self.expect(',', "',' between two arguments")?;
        let b = self.expr()?;
        self.expect(')', "')' after two arguments")?;
        self.depth -= 1;
        match name {
            "min" => Ok(a.min(b)),
            "max" => Ok(a.max(b)),
            _ => cdiv(a, b, at),
        }
    }
}

/// `a / b` rounded toward positive infinity.
fn cdiv(a: i64, b: i64, at: usize) -> Result<i64, ExprError> {
    if b == 0 {
        return Err(ExprError::DivisionByZero { at });
    }
    let overflow = ExprError::Overflow { at, op: '/' };
    let q = a.checked_div(b).ok_or(overflow.clone())?;
    let r = a.checked_rem(b).ok_or(overflow.clone())?;
    if r != 0 && ((r > 0) == (b > 0)) {
        q.checked_add(1).ok_or(overflow)
    } else {
        Ok(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REF: Vars = Vars(&[("B", 1), ("H", 64), ("S", 1024), ("D", 128), ("SMS", 132)]);

    fn ev(e: &str) -> Result<i64, ExprError> {
        eval(e, &REF)
    }

    fn cond(e: &str) -> Result<bool, ExprError> {
        eval_condition(e, &REF)
    }

    #[test]
    fn conditions_compare_two_expressions() {
        // At the reference shape: 8 query tiles of 128 rows a head, 64 heads, 132 SMs.
        assert_eq!(cond("cdiv(S, 128) * B * H < SMS"), Ok(false));
        assert_eq!(cond("cdiv(S, 128) * B < SMS"), Ok(true));
        assert_eq!(cond("S <= 1024"), Ok(true));
        assert_eq!(cond("S < 1024"), Ok(false));
        assert_eq!(cond("S >= 1025"), Ok(false));
        assert_eq!(cond("S > 1023"), Ok(true));
        assert_eq!(cond("D == 128"), Ok(true));
        assert_eq!(cond("D != 128"), Ok(false));
    }

    #[test]
    fn a_condition_needs_one_comparison() {
        assert!(matches!(
            cond("S + 1"),
            Err(ExprError::Unexpected { at: 6, expected, .. }) if expected.contains("comparison")
        ));
        assert!(matches!(
            cond("S < 1 < 2"),
            Err(ExprError::Unexpected { at: 7, .. })
        ));
        assert!(matches!(
            cond("S = 1"),
            Err(ExprError::Unexpected { at: 3, .. })
        ));
        assert_eq!(cond(""), Err(ExprError::Empty));
    }

    #[test]
    fn an_expression_holds_no_comparison() {
        assert!(matches!(
            ev("S < 1"),
            Err(ExprError::Unexpected { at: 3, .. })
        ));
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(ev("2 + 3 * 4 - 10 / 3 - 7 % 4"), Ok(2 + 12 - 3 - 3));
    }

    #[test]
    fn subtraction_is_left_associative() {
        assert_eq!(ev("10 - 3 - 2"), Ok(5));
    }

    #[test]
    fn parentheses_group() {
        assert_eq!(ev("(2 + 3) * 4"), Ok(20));
    }

    #[test]
    fn unary_minus_binds_tighter_than_product() {
        assert_eq!(ev("-2 * -3 + - - 1"), Ok(7));
    }

    #[test]
    fn variables_take_their_values() {
        assert_eq!(ev("B + H + S + D + SMS"), Ok(1 + 64 + 1024 + 128 + 132));
    }

    #[test]
    fn cdiv_rounds_up() {
        assert_eq!(ev("cdiv(S, 96)"), Ok(11));
    }

    #[test]
    fn cdiv_of_an_exact_multiple_is_the_quotient() {
        assert_eq!(ev("cdiv(S, 128)"), Ok(8));
    }

    #[test]
    fn cdiv_rounds_toward_positive_infinity_for_negatives() {
        assert_eq!(
            [ev("cdiv(-7, 2)"), ev("cdiv(7, -2)"), ev("cdiv(-7, -2)")],
            [Ok(-3), Ok(-3), Ok(4)]
        );
    }

    #[test]
    fn cdiv_of_large_operands_does_not_overflow() {
        assert_eq!(ev("cdiv(9223372036854775807, 2)"), Ok(4611686018427387904));
    }

    #[test]
    fn min_and_max() {
        assert_eq!(ev("min(SMS, 8 * 64) + max(1, D)"), Ok(132 + 128));
    }

    #[test]
    fn division_truncates_toward_zero() {
        assert_eq!(ev("-7 / 2"), Ok(-3));
    }

    #[test]
    fn space_anywhere_between_tokens() {
        assert_eq!(ev(" cdiv ( S ,\t128 ) "), Ok(8));
    }

    #[test]
    fn empty_is_an_error() {
        assert_eq!(ev("  "), Err(ExprError::Empty));
    }

    #[test]
    fn too_long_is_an_error() {
        let e = format!("1{}", "+1".repeat(MAX_LEN / 2));
        assert_eq!(ev(&e), Err(ExprError::TooLong { len: MAX_LEN + 1 }));
    }

    #[test]
    fn deep_parentheses_are_an_error() {
        let e = format!(
            "{}1{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(ev(&e), Err(ExprError::TooDeep { at: MAX_DEPTH + 1 }));
    }

    #[test]
    fn nesting_at_the_limit_is_accepted() {
        let e = format!("{}1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert_eq!(ev(&e), Ok(1));
    }

    #[test]
    fn deep_calls_are_an_error() {
        let e = format!(
            "{}1{}",
            "min(1,".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert!(matches!(ev(&e), Err(ExprError::TooDeep { .. })));
    }

    #[test]
    fn many_signs_are_an_error() {
        let e = format!("{}1", "-".repeat(MAX_DEPTH + 1));
        assert!(matches!(ev(&e), Err(ExprError::TooDeep { .. })));
    }

    #[test]
    fn hundred_thousand_parentheses_are_refused_without_recursing() {
        let e = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(ev(&e), Err(ExprError::TooLong { len: 200_001 }));
    }

    #[test]
    fn unknown_variable_is_an_error() {
        assert_eq!(
            ev("Q + 1"),
            Err(ExprError::UnknownName {
                at: 1,
                name: "Q".into(),
                known: "B, H, S, D, SMS".into()
            })
        );
    }

    #[test]
    fn string_functions_of_general_expression_languages_are_unknown() {
        assert!(matches!(
            ev("str::substring(\"ab\", 5, 1)"),
            Err(ExprError::UnknownName { .. })
        ));
    }

    #[test]
    fn a_function_name_without_arguments_is_an_error() {
        assert!(matches!(
            ev("cdiv + 1"),
            Err(ExprError::Unexpected { at: 6, .. })
        ));
    }

    #[test]
    fn a_call_with_one_argument_is_an_error() {
        assert!(matches!(
            ev("min(S)"),
            Err(ExprError::Unexpected { at: 6, .. })
        ));
    }

    #[test]
    fn a_call_with_three_arguments_is_an_error() {
        assert!(matches!(
            ev("max(1, 2, 3)"),
            Err(ExprError::Unexpected { at: 9, .. })
        ));
    }

    #[test]
    fn an_unclosed_parenthesis_is_an_error() {
        assert!(matches!(
            ev("(S + 1"),
            Err(ExprError::Unexpected { at: 7, .. })
        ));
    }

    #[test]
    fn a_trailing_operator_is_an_error() {
        assert!(matches!(
            ev("S +"),
            Err(ExprError::Unexpected { at: 4, .. })
        ));
    }

    #[test]
    fn two_values_in_a_row_are_an_error() {
        assert!(matches!(
            ev("S H"),
            Err(ExprError::Unexpected { at: 3, .. })
        ));
    }

    #[test]
    fn a_fraction_is_an_error() {
        assert!(matches!(
            ev("1.5 * S"),
            Err(ExprError::Unexpected { at: 2, .. })
        ));
    }

    #[test]
    fn unary_plus_is_not_in_the_grammar() {
        assert!(matches!(ev("+1"), Err(ExprError::Unexpected { at: 1, .. })));
    }

    #[test]
    fn a_number_past_64_bits_is_an_error() {
        assert_eq!(
            ev("1 + 9223372036854775808"),
            Err(ExprError::NumberTooLarge { at: 5 })
        );
    }

    #[test]
    fn an_overflowing_product_is_an_error() {
        assert_eq!(
            ev("S * 9223372036854775807"),
            Err(ExprError::Overflow { at: 3, op: '*' })
        );
    }

    #[test]
    fn an_overflowing_sum_is_an_error() {
        assert_eq!(
            ev("9223372036854775807 + 1"),
            Err(ExprError::Overflow { at: 21, op: '+' })
        );
    }

    #[test]
    fn an_overflowing_difference_is_an_error() {
        assert_eq!(
            ev("-9223372036854775807 - 2"),
            Err(ExprError::Overflow { at: 22, op: '-' })
        );
    }

    #[test]
    fn the_minimum_integer_divided_by_minus_one_is_an_error() {
        assert_eq!(
            ev("(-9223372036854775807 - 1) / -1"),
            Err(ExprError::Overflow { at: 28, op: '/' })
        );
    }

    #[test]
    fn negating_the_minimum_integer_is_an_error() {
        assert_eq!(
            ev("-(-9223372036854775807 - 1)"),
            Err(ExprError::Overflow { at: 1, op: '-' })
        );
    }

    #[test]
    fn division_by_zero_is_an_error() {
        assert_eq!(ev("S / (H - 64)"), Err(ExprError::DivisionByZero { at: 3 }));
    }

    #[test]
    fn remainder_by_zero_is_an_error() {
        assert_eq!(ev("S % 0"), Err(ExprError::DivisionByZero { at: 3 }));
    }

    #[test]
    fn cdiv_by_zero_is_an_error() {
        assert_eq!(ev("cdiv(S, 0)"), Err(ExprError::DivisionByZero { at: 1 }));
    }

    #[test]
    fn cdiv_of_the_minimum_integer_by_minus_one_is_an_error() {
        assert!(matches!(
            ev("cdiv(-9223372036854775807 - 1, -1)"),
            Err(ExprError::Overflow { .. })
        ));
    }

    #[test]
    fn a_control_character_is_reported_escaped() {
        let e = ev("S \u{1b}[2J").unwrap_err().to_string();
        assert!(e.contains("'\\u{1b}' at column 3"), "{e}");
    }
}

//! Any launch expression at any shape has a value or a clean error; a value is the
//! same with the expression in parentheses.
#![no_main]

use libfuzzer_sys::{arbitrary, fuzz_target};
use stallscope::recipe::launch_expr::{self, MAX_DEPTH, MAX_LEN, Vars};

#[derive(Debug, arbitrary::Arbitrary)]
struct Input {
    b: u32,
    h: u32,
    s: u32,
    d: u32,
    sms: u32,
    expr: String,
}

fuzz_target!(|input: Input| {
    // The attention names and the GEMM ones (M, N, K share the first three values), so
    // the seeds of either kind of recipe evaluate.
    let names = [
        ("B", i64::from(input.b)),
        ("H", i64::from(input.h)),
        ("S", i64::from(input.s)),
        ("D", i64::from(input.d)),
        ("M", i64::from(input.b)),
        ("N", i64::from(input.h)),
        ("K", i64::from(input.s)),
        ("SMS", i64::from(input.sms)),
    ];
    let vars = Vars(&names);
    let value = launch_expr::eval(&input.expr, &vars);
    let wrapped = format!("({})", input.expr);
    let fits = wrapped.len() <= MAX_LEN && input.expr.matches(['(', '-']).count() < MAX_DEPTH;
    if let (Ok(v), true) = (value, fits) {
        assert_eq!(launch_expr::eval(&wrapped, &vars), Ok(v), "{wrapped}");
    }
});

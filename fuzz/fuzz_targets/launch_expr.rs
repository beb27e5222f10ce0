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
    let vars = Vars {
        b: input.b.into(),
        h: input.h.into(),
        s: input.s.into(),
        d: input.d.into(),
        sms: input.sms.into(),
    };
    let value = launch_expr::eval(&input.expr, &vars);
    let wrapped = format!("({})", input.expr);
    let fits = wrapped.len() <= MAX_LEN && input.expr.matches(['(', '-']).count() < MAX_DEPTH;
    if let (Ok(v), true) = (value, fits) {
        assert_eq!(launch_expr::eval(&wrapped, &vars), Ok(v), "{wrapped}");
    }
});

//! Any bytes given as an export (CSV, gzip, a live run's output) end in an export or
//! a clean error, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let _ = stallscope::ncu::parse_bytes(Path::new("fuzz.csv"), data);
});

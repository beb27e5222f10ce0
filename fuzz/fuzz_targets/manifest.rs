//! Any text given as a profiles manifest (profiles/LADDER/ladder.toml) parses or
//! fails cleanly; what parses is written back and reads the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stallscope::model::manifest::Manifest;

fuzz_target!(|text: &str| {
    if let Ok(m) = Manifest::parse(text) {
        let written = m.to_toml();
        let again = Manifest::parse(&written).expect("a written manifest reads back");
        assert_eq!(again.to_toml(), written, "a manifest reads back the same");
    }
});

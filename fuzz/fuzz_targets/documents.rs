//! Any artifact text and any jq query, as the document checks see them: the first line is the
//! query, the rest the file (JSON when the first byte is odd, else YAML). Parsing, compiling and
//! running the query answer with values or an error, and never panic, abort or hang.
#![no_main]

use std::path::Path;

use labcheck::checks::documents::{Document, compile, query};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, _)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(data);
    let (code, body) = text.split_once('\n').unwrap_or((&text, ""));
    let path = if first % 2 == 1 { "a.json" } else { "a.yaml" };
    let Ok(docs) = Document::parse(Path::new(path), body) else {
        return;
    };
    if compile(code).is_ok() {
        let _ = query(&docs, code);
    }
});

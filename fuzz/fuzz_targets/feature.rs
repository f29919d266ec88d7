//! Any text as a feature file: lint answers with a lab or with problems that have a line, and
//! never panics, aborts or hangs.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Lint compiles steps to data and runs none of them: any panic is a defect, and aborts.
    let text = String::from_utf8_lossy(data);
    let path = Path::new("fuzz.feature");
    if let Err(problems) = labcheck::lint::lint_text(path, path, &text) {
        assert!(!problems.is_empty(), "lint failed without a problem");
        for p in &problems {
            assert!(p.line >= 1, "a problem without a line: {}", p.message);
        }
    }
});

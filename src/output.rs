//! Writing to stdout and stderr without ever panicking: when the reader has gone (a pipe into
//! `head`, a CI log collector that stopped), what labcheck prints is dropped and the run goes on
//! to its own exit code, its reports written. `println!` and `eprintln!` would panic there.

/// Like `print!`, on stdout; a closed stdout drops the text.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

/// Like `println!`, on stdout; a closed stdout drops the line.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Like `eprintln!`, on stderr; a closed stderr drops the line.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

//! Standard output for every subcommand. `println!` panics when stdout is a
//! closed pipe (`turnfit preflight f.json | head -1`), so the CLI writes
//! through [`write`] instead: a closed pipe ends the program quietly with
//! status 0, as ripgrep and most Rust command lines do (the reader has what
//! it wanted); any other write failure is a one-line error and status 2.

use std::io::{ErrorKind, Write};

/// Writes `args` to standard output, ending the process on failure.
pub(crate) fn write(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        end(&e);
    }
}

/// Writes raw bytes (not necessarily UTF-8) to standard output, ending the
/// process on failure as [`write`] does.
pub(crate) fn write_bytes(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        end(&e);
    }
}

/// A closed pipe ends the program with status 0; any other failure is a
/// one-line error and status 2.
fn end(e: &std::io::Error) -> ! {
    if e.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("turnfit: cannot write to standard output: {e}");
    std::process::exit(2);
}

/// `print!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*)) };
}

/// `println!` through [`write`].
macro_rules! outln {
    () => { $crate::out::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {out, outln};

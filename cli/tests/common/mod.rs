//! What the CLI test files share: running the built `turnfit` binary.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `turnfit ARGS` with `stdin` as its standard input and returns what
/// it printed and its status. The CLI may exit before reading its input (an
/// unknown model is reported up front), so a closed pipe is not a failure.
pub fn turnfit(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_turnfit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn turnfit");
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "writing stdin: {e}");
    }
    child.wait_with_output().unwrap()
}

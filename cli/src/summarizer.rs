//! `fit --summarizer-cmd`: the host's model as a command. turnfit calls no
//! model; the user names a command (`llm -m gpt-4o-mini`, a script around
//! their provider's client) that reads the summarizer prompt on standard
//! input and writes the summary on standard output. A failing, silent,
//! late or non-UTF-8 command makes the turn use the digest, and the report
//! says why.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use turnfit::turn::{FailReason, Reply, SummarizerCall};

/// Runs `cmd` through `sh -c` on one request. The request's fields are in
/// the environment too (`TURNFIT_SUMMARY_MAX_TOKENS`, `TURNFIT_SUMMARY_MODEL`,
/// `TURNFIT_SUMMARY_PIECE`, `TURNFIT_SUMMARY_PIECES`), so a script can pass
/// the cap and model to its client.
pub(crate) fn run(cmd: &str, call: &SummarizerCall) -> Reply {
    let failed = |reason, message: String| Reply::Failed { reason, message };
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .env("TURNFIT_SUMMARY_MAX_TOKENS", call.max_summary_tokens.to_string())
        .env("TURNFIT_SUMMARY_MODEL", &call.model)
        .env("TURNFIT_SUMMARY_PIECE", call.piece.to_string())
        .env("TURNFIT_SUMMARY_PIECES", call.pieces.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return failed(FailReason::Error, format!("cannot run the summarizer command: {e}")),
    };
    // Write the prompt from a thread, so a command that does not read it
    // all cannot block us while its output fills.
    let prompt = call.prompt.clone();
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(prompt.as_bytes());
        }
    });
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_end(&mut out);
        }
        out
    });
    let mut stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.take(4096).read_to_end(&mut out);
        }
        out
    });
    let deadline = (call.timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(call.timeout_ms));
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if deadline.is_some_and(|d| Instant::now() >= d) => {
                let _ = child.kill();
                let _ = child.wait();
                return failed(
                    FailReason::Timeout,
                    format!("the summarizer command ran past {} ms and was stopped", call.timeout_ms),
                );
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return failed(FailReason::Error, format!("waiting for the summarizer command: {e}")),
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    if !status.success() {
        let err = String::from_utf8_lossy(&err);
        return failed(FailReason::Error, format!("the summarizer command failed ({status}): {}", err.trim()));
    }
    match String::from_utf8(out) {
        Ok(text) => Reply::Summary(text),
        Err(e) => failed(
            FailReason::InvalidUtf8,
            format!("the summarizer command's output is not UTF-8 at byte offset {}", e.utf8_error().valid_up_to()),
        ),
    }
}

//! What a structured cut looks for in a log: key lines (errors, failures,
//! tracebacks, panics, a test runner's totals), the error block each one
//! starts (a Python traceback through its exception line, a Java/Kotlin or
//! JS stack with its `Caused by:` lines, a Go panic with its first frames,
//! a Rust panic with its message, a compiler diagnostic with the line
//! after), and a signature per block so repeated messages are told apart
//! from distinct ones.
//!
//! Why blocks and not lines: the line that says what went wrong is often
//! not the one with the error word. A traceback starts with `Traceback`
//! and ends with `decimal.InvalidOperation: ...`; keeping the first and
//! not the last loses the point (issue 47). Why signatures: a log where a
//! thousand lines say `ERROR` usually says a few things many times over
//! (ids, times and counts changing); one line per message and a count of
//! the rest tell a model more in less room than the newest thousand
//! (issue 52).
//!
//! Everything here is one pass over the text, no allocation per line, so
//! a cut costs the same per byte whatever share of lines carry an error.

use std::hash::Hasher;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use rustc_hash::FxHasher;

/// The words that make a line a key line, in any case.
const WORDS: [&str; 6] = ["error", "fail", "exception", "traceback", "panic", "fatal"];
/// The words of a test runner's totals, in any case (checked further).
const TOTALS: [&str; 4] = ["tests run", "test result", "tests:", " passed"];

fn automaton(words: &[&str]) -> AhoCorasick {
    // Built from constants: it cannot fail.
    AhoCorasick::builder().ascii_case_insensitive(true).build(words).expect("constant patterns compile")
}

fn words() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| automaton(&WORDS))
}

fn totals() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| automaton(&TOTALS))
}

/// Whether a line carries an error, a failure, a traceback, a panic or a
/// test runner's totals.
pub(crate) fn is_key_line(line: &str) -> bool {
    if words().is_match(line) {
        return true;
    }
    // A runner's totals, with a number: pytest's "12 passed, 1 skipped in
    // 0.3s", cargo's "test result: ok. 3 passed", Maven's "Tests run: 40",
    // Jest's "Tests: 40 passed, 41 total". A bare "13/13 passed" (a check
    // count on every line of a listing) is not one.
    if !line.bytes().any(|b| b.is_ascii_digit()) || !totals().is_match(line) {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    ["tests run", "test result", "tests:"].iter().any(|k| lower.contains(k))
        || (lower.contains(" passed")
            && ([" skipped", " total", " deselected", " warning"].iter().any(|k| lower.contains(k))
                || lower
                    .match_indices(" in ")
                    .any(|(i, _)| lower.as_bytes().get(i + 4).is_some_and(u8::is_ascii_digit))))
}

/// The kind of error block a key line starts, which decides where it ends
/// and which of its lines matter most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `Traceback (most recent call last):` through the exception line.
    Python,
    /// A Java/Kotlin or JS error line and its `at ...` frames, `Caused by:`
    /// and `... N more` lines.
    Stack,
    /// `panic: ...`, `goroutine N [running]:` and the frames.
    Go,
    /// `thread '...' panicked at file:line:col:` and the message.
    Rust,
    /// `file:line:col: error: ...` (or rustc's `error[E...]: ...`) and the
    /// line after.
    Diagnostic,
    /// Any other key line: a block of one line.
    Line,
}

/// One error block: lines `start..end`, its kind and its message's
/// signature (digits and ids masked).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) kind: Kind,
    pub(crate) sig: u64,
}

/// The longest block kept whole: longer ones are kept by their
/// [`essentials`] (a stack of 300 frames says what it says in a few).
const MAX_BLOCK_LINES: usize = 80;

fn indented(l: &str) -> bool {
    l.starts_with([' ', '\t'])
}

fn blank(l: &str) -> bool {
    l.trim().is_empty()
}

fn frame(l: &str) -> bool {
    let t = l.trim_start();
    (indented(l) && (t.starts_with("at ") || t.starts_with("...")))
        || t.starts_with("Caused by:")
        || t.starts_with("Suppressed:")
}

/// `path:12:5: error: ...`, `path:12: error: ...`, `path(12,5): error TS...`,
/// or rustc's `error[E0308]: ...` / `error: ...` at the line's start.
fn diagnostic(l: &str) -> bool {
    let t = l.trim_start();
    if t.starts_with("error[") || t.starts_with("error: ") {
        return true;
    }
    let Some(at) = l.find(": error").or_else(|| l.find(": fatal error")).or_else(|| l.find("): error")) else {
        return false;
    };
    let head = &l[..at];
    // A location before it: a colon or a parenthesis followed by digits.
    let digits = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b',');
    head.rsplit([':', '(', ',']).next().is_some_and(digits)
        || head.strip_suffix(')').and_then(|h| h.rsplit_once('(')).is_some_and(|(_, n)| digits(n))
}

fn kind_of(lines: &[&str], i: usize) -> Kind {
    let l = lines[i];
    let next = lines.get(i + 1).copied().unwrap_or("");
    if l.contains("Traceback (most recent call last)") && indented(next) {
        Kind::Python
    } else if l.contains("panicked at") {
        Kind::Rust
    } else if l.trim_start().starts_with("panic: ") || l.contains(" panic: ") {
        Kind::Go
    } else if diagnostic(l) {
        Kind::Diagnostic
    } else if frame(next) && !next.trim_start().starts_with("Caused by:") {
        Kind::Stack
    } else {
        Kind::Line
    }
}

/// Where the block of `kind` starting at line `i` ends (exclusive).
fn end_of(lines: &[&str], i: usize, kind: Kind) -> usize {
    let n = lines.len();
    let mut j = i + 1;
    match kind {
        Kind::Python => loop {
            // Frames and code lines are indented; the exception line is
            // the first that is not. A chained traceback goes on after a
            // blank line with "During handling..." or "The above
            // exception...".
            while j < n && (indented(lines[j]) || lines[j].starts_with("Traceback (")) {
                j += 1;
            }
            if j < n {
                j += 1; // the exception line
            }
            let mut k = j;
            while k < n && blank(lines[k]) {
                k += 1;
            }
            let chained = lines.get(k).is_some_and(|l| {
                l.starts_with("During handling of the above exception")
                    || l.starts_with("The above exception was the direct cause")
            });
            if !chained {
                break j;
            }
            j = k + 1;
        },
        Kind::Stack => {
            while j < n && frame(lines[j]) {
                j += 1;
            }
            j
        }
        Kind::Go => {
            // The message, a blank line, `goroutine N [running]:`, then
            // frames: a function line and its tab-indented location.
            let mut blanks = 0;
            while j < n {
                let l = lines[j];
                if blank(l) {
                    blanks += 1;
                    if blanks > 1 {
                        break;
                    }
                } else if !(l.starts_with("goroutine ")
                    || indented(l)
                    || l.starts_with("[recovered]")
                    || lines.get(j + 1).is_some_and(|x| x.starts_with('\t')))
                {
                    break;
                }
                j += 1;
            }
            while j > i + 1 && blank(lines[j - 1]) {
                j -= 1;
            }
            j
        }
        Kind::Rust => {
            // The message follows on its own lines since Rust 1.73
            // (`panicked at src/main.rs:2:5:`); the note is left out.
            if lines[i].trim_end().ends_with(':') {
                while j < n && j < i + 6 && !blank(lines[j]) && !lines[j].starts_with("note:") {
                    j += 1;
                }
            }
            j
        }
        Kind::Diagnostic => {
            // The line after (the source line, or rustc's `--> file`), and
            // rustc's snippet up to its blank line.
            if j < n {
                j += 1;
                if lines[j - 1].trim_start().starts_with("-->") {
                    while j < n && j < i + 12 && !blank(lines[j]) && lines[j].trim_start().starts_with(['|', '=']) {
                        j += 1;
                    }
                }
            }
            j
        }
        Kind::Line => j,
    }
    .min(n)
}

/// The lines of a block that say what went wrong, when the whole block is
/// too long to keep: its first line, and per kind the exception line
/// and the frame before it (Python), each `Caused by:` line and the first
/// frames (Java, JS), the first frames (Go), the message (Rust), the line
/// after (a diagnostic).
pub(crate) fn essentials(lines: &[&str], b: &Block) -> Vec<usize> {
    let (s, e) = (b.start, b.end);
    let mut out = vec![s];
    match b.kind {
        Kind::Python => out.extend(e.saturating_sub(3).max(s + 1)..e),
        Kind::Stack => {
            out.extend((s + 1..e).take(3));
            for (k, line) in lines.iter().enumerate().take(e).skip(s + 1) {
                if line.trim_start().starts_with("Caused by:") {
                    out.extend((k..e).take(2));
                }
            }
        }
        Kind::Go => out.extend((s + 1..e).take(6)),
        Kind::Rust | Kind::Diagnostic => out.extend((s + 1..e).take(2)),
        Kind::Line => {}
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The least of a block worth keeping: its first line, and a Python
/// traceback's exception line.
pub(crate) fn least(b: &Block) -> Vec<usize> {
    if b.kind == Kind::Python && b.end > b.start + 1 {
        vec![b.start, b.end - 1]
    } else {
        vec![b.start]
    }
}

/// A hash of `line` with its variable parts masked: every word holding a
/// digit (times, ids, counts, hashes) counts as one `#`, unless it starts
/// with a letter and is at most 6 long (an error code: `E0308`, `TS2322`).
fn signature(h: &mut FxHasher, line: &str) {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_alphanumeric() {
            h.write_u8(b[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let word = &b[start..i];
        let variable = word.iter().any(u8::is_ascii_digit) && !(word[0].is_ascii_alphabetic() && word.len() <= 6);
        if variable {
            h.write_u8(b'#');
        } else {
            h.write(word);
        }
    }
}

/// Every error block of `lines`, in order; the lines of a block are not
/// the start of another.
pub(crate) fn blocks(lines: &[&str]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_key_line(lines[i]) {
            i += 1;
            continue;
        }
        let kind = kind_of(lines, i);
        let end = end_of(lines, i, kind).max(i + 1);
        let mut h = FxHasher::default();
        signature(&mut h, lines[i].trim_end());
        if kind == Kind::Python {
            // The exception line says which error it was.
            h.write_u8(0);
            signature(&mut h, lines[end - 1].trim_end());
        }
        out.push(Block { start: i, end, kind, sig: h.finish() });
        i = end;
    }
    out
}

/// Whether the block is long enough that only its essentials are kept.
pub(crate) fn too_long(b: &Block) -> bool {
    b.end - b.start > MAX_BLOCK_LINES
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<&str> {
        s.split_inclusive('\n').collect()
    }

    #[test]
    fn key_lines_are_recognised() {
        for l in [
            "FAILED a::b",
            "Traceback (most recent call last):",
            "thread 'main' panicked at src/x.rs",
            "error[E0308]: mismatched types",
            "test result: FAILED. 3 passed; 1 failed",
            "Tests run: 40, Failures: 0",
            "=== 12 passed in 0.3s ===",
            "java.lang.IllegalStateException: boom",
        ] {
            assert!(is_key_line(l), "{l}");
        }
        for l in [
            "#12 open  feat: add a flag",
            "Compiling turnfit v0.1.0",
            "#4999 MERGED Fix x  checks: 13/13 passed",
            "#4998 MERGED Fix y in debug builds  checks: 9/9 passed",
            "",
        ] {
            assert!(!is_key_line(l), "{l}");
        }
    }

    #[test]
    fn blocks_end_where_their_kind_ends() {
        let text = "INFO start\n\
            Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    f()\n\
            decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]\n\
            INFO next\n\
            Exception in thread \"main\" java.lang.IllegalStateException: bad\n\tat a.B.c(B.java:10)\n\
            Caused by: java.io.IOException: closed\n\tat a.D.e(D.java:5)\n\t... 3 more\n\
            INFO next\n\
            panic: runtime error: index out of range [5] with length 3\n\n\
            goroutine 1 [running]:\nmain.main()\n\t/tmp/x.go:8 +0x1d\nexit status 2\n\
            thread 'main' panicked at src/main.rs:2:5:\nexplicit panic\nnote: run with `RUST_BACKTRACE=1`\n\
            src/x.c:3:5: error: unknown type name 'foo'\n    3 | foo x;\n\
            TypeError: x is not a function\n    at f (/app/a.js:1:1)\n    at g (/app/a.js:2:1)\n\
            INFO done\n";
        let ls = lines(text);
        let got: Vec<(Kind, String)> = blocks(&ls)
            .iter()
            .map(|b| (b.kind, ls[b.start..b.end].concat().lines().last().unwrap_or("").to_owned()))
            .collect();
        let want = [
            (Kind::Python, "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]"),
            (Kind::Stack, "\t... 3 more"),
            (Kind::Go, "\t/tmp/x.go:8 +0x1d"),
            (Kind::Rust, "explicit panic"),
            (Kind::Diagnostic, "    3 | foo x;"),
            (Kind::Stack, "    at g (/app/a.js:2:1)"),
        ];
        let got: Vec<(Kind, &str)> = got.iter().map(|(k, s)| (*k, s.as_str())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn signatures_mask_what_varies() {
        let sig = |l: &str| {
            let mut h = FxHasher::default();
            signature(&mut h, l);
            h.finish()
        };
        assert_eq!(
            sig("2026-03-01T12:36:04.645Z ERROR [api] failed to process order 1234: timeout after 300 ms"),
            sig("2026-03-02T01:00:59.001Z ERROR [api] failed to process order 98765: timeout after 12 ms")
        );
        assert_eq!(sig("deadlock detected (txn 3fa9c2e1b0d4)"), sig("deadlock detected (txn a3f9c2e1b0d4)"));
        assert_ne!(sig("error[E0308]: mismatched types"), sig("error[E0599]: mismatched types"));
        assert_ne!(sig("ERROR [api] redis reset"), sig("ERROR [auth] redis reset"));
    }
}

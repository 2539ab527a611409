//! What a tool result says about its call: ok or error, and the one line
//! worth keeping (the error line, the exit status, a test summary line).
//!
//! Tools report failure in many ways: Anthropic's `is_error`, an exit code in
//! the text, a traceback, `error:` from a compiler, a test runner's summary.
//! The line chosen is the one a developer would quote: for a Python
//! traceback its last `SomeError: ...` line rather than `Traceback (most
//! recent call last):`, for a test run its summary line.

/// The outcome of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Whether the call failed.
    pub error: bool,
    /// The line that says so (shortened), if any.
    pub line: Option<String>,
}

/// Longest line kept, in characters.
pub const LINE_CHARS: usize = 140;

/// Shortens `s` to `max` characters on one line; a cut ends in `…`, which no
/// fact grammar accepts, so a cut word is never mistaken for a fact.
pub fn shorten(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let mut out: String = one.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A test runner's summary line, and whether it reports failures.
fn test_summary(line: &str) -> Option<bool> {
    let l = line.trim().trim_matches('=').trim();
    let lower = l.to_ascii_lowercase();
    // pytest: "3 failed, 10 passed in 1.2s"; cargo: "test result: FAILED. 3 passed; 1 failed";
    // unittest: "FAILED (failures=1)" / "OK"; jest/mocha: "Tests: 1 failed, 4 passed".
    if lower.starts_with("test result:") {
        return Some(lower.contains("failed.") || !lower.contains(" 0 failed"));
    }
    if lower.starts_with("failed (") && (lower.contains("failures=") || lower.contains("errors=")) {
        return Some(true);
    }
    let has_count =
        |word: &str| {
            lower.split([',', ';', ' ']).collect::<Vec<_>>().windows(2).any(|w| {
                w[0].chars().all(|c| c.is_ascii_digit()) && !w[0].is_empty() && w[1].trim_end_matches(',') == word
            })
        };
    let passed = has_count("passed");
    let failed = has_count("failed") || has_count("error") || has_count("errors");
    if (passed || failed) && (lower.contains(" in ") || lower.starts_with("tests:") || lower.contains("passed")) {
        let nonzero_fail = lower.split([',', ';']).any(|part| {
            let p = part.trim();
            let mut it = p.split_whitespace();
            let (Some(n), Some(w)) = (it.next(), it.next()) else { return false };
            matches!(w, "failed" | "error" | "errors") && n.parse::<u64>().is_ok_and(|n| n > 0)
        });
        return Some(nonzero_fail);
    }
    None
}

/// An exit status stated in the text (`exit code 1`, `exit status: 2`,
/// `Exit code: 0`, `returncode=1`).
fn exit_status(line: &str) -> Option<i64> {
    let lower = line.to_ascii_lowercase();
    // mini-swe-agent wraps results as `<returncode>N</returncode><output>...`.
    if let Some(rest) = lower.trim_start().strip_prefix("<returncode>") {
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
        return digits.parse().ok();
    }
    for key in ["exit code", "exit status", "exited with code", "return code", "returncode", "exit_code"] {
        if let Some(at) = lower.find(key) {
            let rest = lower[at + key.len()..].trim_start_matches([' ', ':', '=', '(']);
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
    }
    None
}

/// A line that reports an error by itself.
fn error_line(line: &str) -> bool {
    let t = line.trim();
    let lower = t.to_ascii_lowercase();
    // `ValueError: ...`, `AssertionError`, `java.lang.NullPointerException: ...`
    let head = t.split([':', ' ']).next().unwrap_or("");
    let named = (head.ends_with("Error") || head.ends_with("Exception"))
        && head.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && head.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
    named
        || lower.starts_with("error:")
        || lower.starts_with("error[")
        || lower.starts_with("fatal:")
        || lower.starts_with("panic:")
        || lower.starts_with("syntaxerror")
        || lower.contains("command not found")
        || lower.contains("no such file or directory")
        || lower.contains("permission denied")
        || lower.starts_with("traceback (most recent call last)")
        || lower.contains("panicked at")
        || lower.starts_with("usage:") && lower.contains("error")
}

/// A line that is only markup around the output (`<output>`, `</output>`,
/// `<returncode>0</returncode>`), not output.
fn is_wrapper(line: &str) -> bool {
    let l = line.trim();
    l.starts_with('<') && l.ends_with('>') && {
        let inner = l.trim_start_matches('<').trim_start_matches('/');
        let tag: String = inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        !tag.is_empty()
            && (l == format!("<{tag}>") || l == format!("</{tag}>") || l.ends_with(&format!("</{tag}>")))
            && matches!(tag.as_str(), "output" | "returncode" | "stdout" | "stderr" | "result" | "warning")
    }
}

/// Classifies a result. `flagged` is the provider's own error flag
/// (Anthropic `is_error`).
pub fn classify(text: &str, flagged: bool) -> Outcome {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    // A test summary decides, wherever it is (usually last).
    if let Some((line, failed)) = lines.iter().rev().find_map(|l| test_summary(l).map(|f| (*l, f))) {
        return Outcome { error: failed || flagged, line: Some(shorten(line, LINE_CHARS)) };
    }
    if let Some((line, code)) = lines.iter().rev().find_map(|l| exit_status(l).map(|c| (*l, c))) {
        if code != 0 {
            let why = lines.iter().rev().find(|l| error_line(l)).copied();
            let line = why.map_or_else(|| line.to_owned(), |w| format!("{w} ({})", line.trim()));
            return Outcome { error: true, line: Some(shorten(&line, LINE_CHARS)) };
        }
    }
    if let Some(k) = lines.iter().position(|l| error_line(l)) {
        // For a traceback the last named error line is the one that says what went wrong.
        let named = lines[k..]
            .iter()
            .rev()
            .find(|l| error_line(l) && !l.to_ascii_lowercase().starts_with("traceback"))
            .copied()
            .unwrap_or(lines[k]);
        return Outcome { error: true, line: Some(shorten(named, LINE_CHARS)) };
    }
    let first = lines.iter().copied().find(|l| !is_wrapper(l));
    let first = first.map(|l| l.strip_prefix("<output>").unwrap_or(l).trim()).filter(|l| !l.is_empty());
    Outcome { error: flagged, line: first.map(|l| shorten(l, LINE_CHARS)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracebacks_give_their_last_error_line() {
        let o = classify(
            "Traceback (most recent call last):\n  File \"r.py\", line 3, in <module>\n    f()\nValueError: bad value\n",
            false,
        );
        assert_eq!(o, Outcome { error: true, line: Some("ValueError: bad value".into()) });
    }

    #[test]
    fn test_summaries_decide() {
        let o = classify("collected 12 items\n...\n===== 2 failed, 10 passed in 0.31s =====", false);
        assert!(o.error);
        assert_eq!(o.line.as_deref(), Some("===== 2 failed, 10 passed in 0.31s ====="));
        let o = classify("running 4 tests\ntest result: ok. 4 passed; 0 failed; 0 ignored", false);
        assert!(!o.error, "{o:?}");
        let o = classify("test result: FAILED. 3 passed; 1 failed; 0 ignored", false);
        assert!(o.error);
        let o = classify("===== 10 passed in 0.31s =====", false);
        assert!(!o.error);
        let o = classify("Ran 3 tests\nFAILED (failures=1)", false);
        assert!(o.error);
    }

    #[test]
    fn exit_status_and_error_lines() {
        let o = classify("compiling\nerror: could not find `Cargo.toml`\nexit code: 101", false);
        assert!(o.error);
        assert!(o.line.unwrap().starts_with("error: could not find"));
        assert!(!classify("done\nexit code: 0", false).error);
        assert!(classify("bash: foo: command not found", false).error);
        let ok = classify("\n\n[File: /repo/a.py (120 lines total)]\n1:import os", false);
        assert_eq!(ok, Outcome { error: false, line: Some("[File: /repo/a.py (120 lines total)]".into()) });
        assert!(classify("anything", true).error, "the provider's flag counts");
        let o = classify("<returncode>0</returncode>\n<output>\n14 passed\n</output>", false);
        assert_eq!(o, Outcome { error: false, line: Some("14 passed".into()) });
        let o = classify(
            "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\nKeyError: 'x'\n</output>",
            false,
        );
        assert_eq!(o, Outcome { error: true, line: Some("KeyError: 'x' (<returncode>1</returncode>)".into()) });
        assert_eq!(classify("", false), Outcome { error: false, line: None });
    }

    #[test]
    fn shorten_marks_cuts() {
        assert_eq!(shorten("a  b\nc", 10), "a b c");
        assert_eq!(shorten("abcdefghijkl", 5), "abcd…");
    }
}

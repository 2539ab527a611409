//! Cutting a tool output by its structure, not only by position: the head
//! and the tail are kept as whole lines, and so are the lines in between
//! that carry what a model needs from a long log: errors, failures,
//! tracebacks, panics and a test runner's totals (`error`, `FAILED`,
//! `Traceback`, `panicked`, `3 passed, 1 failed`). A plain head-and-tail
//! cut loses those whenever they sit in the middle, which is where a CI log
//! or a long listing puts them.
//!
//! Every gap gets a marker line. The first names the tool and the totals
//! cut (tokens and lines), the others the lines they stand for, so the
//! model can tell that the output is partial and how much is missing. The
//! result, markers included, is counted again and always fits the budget;
//! a text without usable lines (one long line, or a few huge ones) falls
//! back to the token-level head-and-tail cut with the same marker.

use crate::{Result, Tokenizer, TruncateSide};

/// A tool output cut to a token budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cut {
    /// The kept lines and the markers.
    pub(crate) text: String,
    /// Tokens of `text`, counted again.
    pub(crate) tokens: usize,
    /// Tokens of the input.
    pub(crate) original_tokens: usize,
    /// Lines of the input not in `text` (0 for a token-level cut).
    pub(crate) removed_lines: usize,
    /// Lines of the input.
    pub(crate) original_lines: usize,
    /// Error, failure and summary lines kept from the middle.
    pub(crate) kept_key_lines: usize,
}

impl Cut {
    /// Tokens of the input not in `text` (markers not counted).
    pub(crate) fn removed_tokens(&self) -> usize {
        self.original_tokens.saturating_sub(self.tokens)
    }
}

/// Whether a line carries an error, a failure, a traceback, a panic or a
/// test runner's totals.
pub(crate) fn is_key_line(line: &str) -> bool {
    // Case-sensitive markers first (the common spellings), then a
    // lowercase pass for the words that appear in any case.
    const EXACT: [&str; 6] = ["FAILED", "FAIL:", "Traceback", "panicked", "FATAL", "ERROR"];
    if EXACT.iter().any(|k| line.contains(k)) {
        return true;
    }
    let lower = line.to_ascii_lowercase();
    const WORDS: [&str; 6] = ["error", "fail", "exception", "traceback", "panic", "fatal"];
    if WORDS.iter().any(|k| lower.contains(k)) {
        return true;
    }
    // A runner's totals, with a number: pytest's "12 passed, 1 skipped in
    // 0.3s", cargo's "test result: ok. 3 passed", Maven's "Tests run: 40",
    // Jest's "Tests: 40 passed, 41 total". A bare "13/13 passed" (a check
    // count on every line of a listing) is not one.
    if !lower.bytes().any(|b| b.is_ascii_digit()) {
        return false;
    }
    ["tests run", "test result", "tests:"].iter().any(|k| lower.contains(k))
        || (lower.contains(" passed")
            && ([" skipped", " total", " deselected", " warning"].iter().any(|k| lower.contains(k))
                || lower
                    .match_indices(" in ")
                    .any(|(i, _)| lower.as_bytes().get(i + 4).is_some_and(u8::is_ascii_digit))))
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The first gap's marker: the tool and the totals cut.
fn header(tool: &str, tokens: usize, lines: usize, key: usize) -> String {
    let lines = if lines > 0 { format!(" ({} lines)", thousands(lines)) } else { String::new() };
    let key = if key > 0 { format!("; {key} error, failure and summary lines kept below") } else { String::new() };
    format!("[... turnfit cut {} tokens{lines} of {tool} output here{key} ...]\n", thousands(tokens))
}

fn gap(lines: usize) -> String {
    format!("[... {} line{} cut ...]\n", thousands(lines), if lines == 1 { "" } else { "s" })
}

/// `text` cut to at most `max_tokens` tokens (markers included), keeping
/// its head, its tail and the key lines between them; `None` when it
/// already fits. `tool` is named in the marker. A budget too small for a
/// marker is `InvalidArgument`.
pub(crate) fn cut(tok: &Tokenizer, text: &str, max_tokens: usize, tool: &str) -> Result<Option<Cut>> {
    let original_tokens = tok.count(text)?;
    if original_tokens <= max_tokens {
        return Ok(None);
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let original_lines = lines.len();
    if lines.len() >= 8 {
        let lt: Vec<usize> = lines.iter().map(|l| tok.count(l)).collect::<Result<_>>()?;
        let marker_cost = tok.count(&header(tool, original_tokens, original_lines, 999))? + 2;
        let mut budget = max_tokens.saturating_sub(marker_cost);
        for _ in 0..8 {
            if budget < max_tokens / 2 || budget == 0 {
                break;
            }
            let Some(plan) = plan(&lines, &lt, budget) else { break };
            // A plan that keeps little of its budget (a few huge lines)
            // is worse than a token-level cut.
            if plan.kept_tokens < budget / 2 {
                break;
            }
            let (out, removed_lines, kept_key) = render(&lines, &lt, &plan.keep, tool);
            let tokens = tok.count(&out)?;
            if tokens <= max_tokens {
                return Ok(Some(Cut {
                    text: out,
                    tokens,
                    original_tokens,
                    removed_lines,
                    original_lines,
                    kept_key_lines: kept_key,
                }));
            }
            budget = budget.saturating_sub(tokens - max_tokens + 8);
        }
    }
    let marker = format!("\n[... turnfit cut {{removed}} tokens of {tool} output here ...]\n");
    let r = tok.truncate(text, max_tokens, TruncateSide::Both, Some(&marker))?;
    Ok(Some(Cut {
        text: r.text,
        tokens: r.tokens,
        original_tokens,
        removed_lines: 0,
        original_lines,
        kept_key_lines: 0,
    }))
}

struct Plan {
    keep: Vec<bool>,
    kept_tokens: usize,
}

/// Which lines to keep within `budget` tokens of lines: a head and a tail
/// of a fifth each, then the key lines between them, newest first (a line
/// larger than a quarter of the budget is not kept for being a key line),
/// then the line before each kept key line (the test or the item the error
/// belongs to), then what is left extends the head and the tail.
fn plan(lines: &[&str], lt: &[usize], budget: usize) -> Option<Plan> {
    let n = lines.len();
    let mut keep = vec![false; n];
    let mut used = 0;
    let share = budget / 5;
    let mut h = 0;
    while h < n && used + lt[h] <= share {
        used += lt[h];
        keep[h] = true;
        h += 1;
    }
    let mut t = n;
    let mut tail_used = 0;
    while t > h && tail_used + lt[t - 1] <= share {
        tail_used += lt[t - 1];
        keep[t - 1] = true;
        t -= 1;
    }
    used += tail_used;
    if t <= h {
        return None; // the whole text fits: nothing to cut by lines
    }
    let mut key = Vec::new();
    for i in (h..t).rev() {
        if is_key_line(lines[i]) && lt[i] <= budget / 4 && used + lt[i] <= budget {
            keep[i] = true;
            used += lt[i];
            key.push(i);
        }
    }
    for &i in &key {
        if i > h && !keep[i - 1] && lt[i - 1] <= budget / 4 && used + lt[i - 1] <= budget {
            keep[i - 1] = true;
            used += lt[i - 1];
        }
    }
    // Extend the head, then the tail, with what is left.
    while h < t && (keep[h] || used + lt[h] <= budget) {
        if !keep[h] {
            used += lt[h];
            keep[h] = true;
        }
        h += 1;
    }
    while t > h && (keep[t - 1] || used + lt[t - 1] <= budget) {
        if !keep[t - 1] {
            used += lt[t - 1];
            keep[t - 1] = true;
        }
        t -= 1;
    }
    Some(Plan { keep, kept_tokens: used })
}

/// The kept lines with a marker for each run of cut ones: the text, the
/// lines cut and the key lines kept from between the head and the tail.
fn render(lines: &[&str], lt: &[usize], keep: &[bool], tool: &str) -> (String, usize, usize) {
    let cut_tokens: usize = lt.iter().zip(keep).filter(|(_, k)| !**k).map(|(t, _)| t).sum();
    let cut_lines = keep.iter().filter(|k| !**k).count();
    let first_cut = keep.iter().position(|k| !*k).unwrap_or(lines.len());
    let last_cut = keep.iter().rposition(|k| !*k).unwrap_or(0);
    let key =
        (first_cut..=last_cut.max(first_cut)).filter(|&i| i < lines.len() && keep[i] && is_key_line(lines[i])).count();
    let mut out = String::new();
    let mut i = 0;
    let mut first = true;
    while i < lines.len() {
        if keep[i] {
            out.push_str(lines[i]);
            if !lines[i].ends_with('\n') && i + 1 < lines.len() {
                out.push('\n');
            }
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && !keep[i] {
            i += 1;
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if first {
            out.push_str(&header(tool, cut_tokens, cut_lines, key));
            first = false;
        } else {
            out.push_str(&gap(i - start));
        }
    }
    (out, cut_lines, key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Encoding;

    fn log(lines: usize) -> String {
        let mut s = String::new();
        for i in 0..lines {
            match i {
                1234 => s.push_str("FAILED tests/test_api.py::test_retry - AssertionError: expected 3, got 2\n"),
                2001 => s.push_str("Traceback (most recent call last):\n"),
                _ => s.push_str(&format!(
                    "#{i} open  feat: change number {i} to the listing code  author{i}  2026-01-{:02}\n",
                    i % 28 + 1
                )),
            }
        }
        s.push_str("==== 1 failed, 2999 passed in 81.20s ====\n");
        s
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
    fn a_long_log_keeps_head_tail_and_the_error_lines() {
        let tok = Tokenizer::new(Encoding::O200kBase).unwrap();
        let text = log(3000);
        let c = cut(&tok, &text, 2000, "gh_pr_list").unwrap().unwrap();
        assert!(c.tokens <= 2000 && c.tokens == tok.count(&c.text).unwrap(), "{}", c.tokens);
        assert!(c.text.starts_with("#0 open"), "head kept");
        assert!(c.text.ends_with("==== 1 failed, 2999 passed in 81.20s ====\n"), "tail kept");
        assert!(c.text.contains("FAILED tests/test_api.py::test_retry"), "the failure in the middle is kept");
        assert!(c.text.contains("Traceback (most recent call last):"));
        assert!(c.text.contains("of gh_pr_list output"), "the marker names the tool");
        assert!(c.removed_lines > 2000 && c.kept_key_lines >= 2, "{} {}", c.removed_lines, c.kept_key_lines);
        let marker = c.text.lines().find(|l| l.starts_with("[... turnfit cut")).unwrap();
        assert!(marker.contains(&format!("({} lines)", thousands(c.removed_lines))), "{marker}");
        // A plain head-and-tail cut of the same size loses the failure.
        let plain = tok.truncate(&text, 2000, TruncateSide::Both, None).unwrap();
        assert!(!plain.text.contains("test_retry"));
    }

    #[test]
    fn one_long_line_falls_back_to_a_token_cut() {
        let tok = Tokenizer::new(Encoding::O200kBase).unwrap();
        let text = "word ".repeat(5000);
        let c = cut(&tok, &text, 300, "read").unwrap().unwrap();
        assert!(c.tokens <= 300 && c.text.contains("of read output"), "{}", c.text);
        assert!(cut(&tok, "short", 300, "read").unwrap().is_none());
        assert!(cut(&tok, &text, 3, "read").is_err(), "no room for the marker");
    }
}

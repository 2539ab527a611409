//! Cutting a tool output by its structure, not only by position: the head
//! and the tail are kept as whole lines, and so are the lines in between
//! that carry what a model needs from a long log: errors, failures,
//! tracebacks, panics and a test runner's totals (`error`, `FAILED`,
//! `Traceback`, `panicked`, `3 passed, 1 failed`). A plain head-and-tail
//! cut loses those whenever they sit in the middle, which is where a CI log
//! or a long listing puts them.
//!
//! The lines in between are kept as error blocks (see `blocks`): a
//! traceback through its exception line, a stack with its `Caused by:`
//! lines, a panic with its message, a diagnostic with the line after. A
//! log where thousands of lines carry an error word keeps its first and
//! last block and one block per distinct message; the markers count the
//! rest ("412 more error lines, 3 distinct messages"). Only the lines a cut
//! considers are counted, so its cost grows with the bytes of the log
//! (read once) and not with its share of error lines (issue 52).
//!
//! Every gap gets a marker line. The first names the tool and the totals
//! cut (tokens and lines), the others the lines they stand for, each with
//! the error lines it holds, so the model can tell that the output is
//! partial and how much is missing. The
//! result, markers included, is counted again and always fits the budget;
//! a text without usable lines (one long line, or a few huge ones) falls
//! back to the token-level head-and-tail cut with the same marker.

use crate::{Result, Tokenizer, TruncateSide};

mod blocks;

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

use blocks::Block;

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

/// The first gap's marker: the tool and the totals cut, and what the gap
/// held.
fn header(tool: &str, tokens: usize, lines: usize, key: usize, note: &Note) -> String {
    let lines = if lines > 0 { format!(" ({} lines)", thousands(lines)) } else { String::new() };
    let key = if key > 0 { format!("; {key} error, failure and summary lines kept below") } else { String::new() };
    format!("[... turnfit cut {} tokens{lines} of {tool} output here{key}{} ...]\n", thousands(tokens), note.text())
}

fn gap(lines: usize, note: &Note) -> String {
    format!("[... {} line{} cut{} ...]\n", thousands(lines), if lines == 1 { "" } else { "s" }, note.text())
}

/// A count not made yet.
const UNKNOWN: usize = usize::MAX;

/// The lines of the text and their tokens, counted when first asked for:
/// a cut keeps a few thousand tokens of a log of any length, so only the
/// lines it considers are counted (issue 52: counting every line of every
/// long log was most of `fit`'s time on logs).
struct Lines<'a> {
    tok: &'a Tokenizer,
    lines: Vec<&'a str>,
    tokens: Vec<usize>,
}

impl Lines<'_> {
    fn tokens(&mut self, i: usize) -> Result<usize> {
        if self.tokens[i] == UNKNOWN {
            self.tokens[i] = self.tok.count(self.lines[i])?;
        }
        Ok(self.tokens[i])
    }

    /// Tokens of lines `range` not yet in `keep`, or `None` as soon as
    /// they pass `cap` (the rest is not counted).
    fn cost(&mut self, range: impl IntoIterator<Item = usize>, keep: &[bool], cap: usize) -> Result<Option<usize>> {
        let mut n = 0;
        for i in range {
            if !keep[i] {
                n += self.tokens(i)?;
                if n > cap {
                    return Ok(None);
                }
            }
        }
        Ok(Some(n))
    }
}

/// `text` cut to at most `max_tokens` tokens (markers included), keeping
/// its head, its tail and its error blocks between them; `None` when it
/// already fits. `tool` is named in the marker; `known` is the text's
/// token count when the caller has it (else it is counted). A budget too
/// small for a marker is `InvalidArgument`.
pub(crate) fn cut(
    tok: &Tokenizer,
    text: &str,
    max_tokens: usize,
    tool: &str,
    known: Option<usize>,
) -> Result<Option<Cut>> {
    let original_tokens = match known {
        Some(n) => n,
        None => tok.count(text)?,
    };
    if original_tokens <= max_tokens {
        return Ok(None);
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let original_lines = lines.len();
    if lines.len() >= 8 {
        let blocks = blocks::blocks(&lines);
        let mut lt = Lines { tok, tokens: vec![UNKNOWN; lines.len()], lines };
        let widest = Note { blocks: original_lines, distinct: original_lines, shown: 1 };
        let marker_cost = tok.count(&header(tool, original_tokens, original_lines, 999, &widest))? + 2;
        let mut budget = max_tokens.saturating_sub(marker_cost);
        for _ in 0..8 {
            if budget < max_tokens / 2 || budget == 0 {
                break;
            }
            let Some(plan) = plan(&mut lt, &blocks, budget)? else { break };
            // A plan that keeps little of its budget (a few huge lines)
            // is worse than a token-level cut.
            if plan.kept_tokens < budget / 2 {
                break;
            }
            let cut_tokens = original_tokens.saturating_sub(plan.kept_tokens);
            let (out, removed_lines, kept_key) = render(&lt.lines, &blocks, &plan.keep, tool, cut_tokens);
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

/// Blocks tried in a row without one fitting before the rest are left
/// uncounted: what keeps a cut of a log with thousands of distinct error
/// lines bounded by its budget, not by the log.
const MAX_MISSES: usize = 32;

/// Which lines to keep within `budget` tokens of lines: a head and a tail
/// of a fifth each; then, between them, the first and the last error block
/// and one block of each distinct message (the newest), each whole up to a
/// quarter of the budget (a longer one by its essential lines, or its first
/// line alone when those do not fit either); then the
/// line before each kept block (the test or the request it belongs to);
/// then what is left extends the head and the tail. Repeated messages are
/// left to the markers, which count them.
fn plan(lt: &mut Lines, blocks: &[Block], budget: usize) -> Result<Option<Plan>> {
    let n = lt.lines.len();
    let mut keep = vec![false; n];
    let mut used = 0;
    let share = budget / 5;
    let mut h = 0;
    while h < n && used + lt.tokens(h)? <= share {
        used += lt.tokens(h)?;
        keep[h] = true;
        h += 1;
    }
    let mut t = n;
    let mut tail_used = 0;
    while t > h && tail_used + lt.tokens(t - 1)? <= share {
        tail_used += lt.tokens(t - 1)?;
        keep[t - 1] = true;
        t -= 1;
    }
    used += tail_used;
    if t <= h {
        return Ok(None); // the whole text fits: nothing to cut by lines
    }
    let middle: Vec<&Block> = blocks.iter().filter(|b| b.start >= h && b.end <= t).collect();
    // The order blocks are tried in: the first, the last, then the newest
    // of each message not yet tried.
    let mut order: Vec<&Block> = Vec::new();
    if let (Some(first), Some(last)) = (middle.first(), middle.last()) {
        order.push(first);
        if last.start != first.start {
            order.push(last);
        }
    }
    let mut seen: rustc_hash::FxHashSet<u64> = order.iter().map(|b| b.sig).collect();
    order.extend(middle.iter().rev().filter(|b| seen.insert(b.sig)));
    let block_cap = budget / 4;
    let mut kept_blocks = Vec::new();
    let mut misses = 0;
    for b in order {
        // The markers a kept block adds are left to the render loop,
        // which shrinks the budget by what they overshoot.
        if misses >= MAX_MISSES || used >= budget {
            break;
        }
        let room = (budget - used).min(block_cap);
        let whole = if blocks::too_long(b) { None } else { lt.cost(b.start..b.end, &keep, room)? };
        let lines: Vec<usize> = match whole {
            Some(_) => (b.start..b.end).collect(),
            None => {
                // Its essential lines, else its first line (and a
                // traceback's exception line) alone: a tight budget keeps
                // every message, if only by its first line.
                let ess = blocks::essentials(&lt.lines, b);
                let least = blocks::least(b);
                if lt.cost(ess.iter().copied(), &keep, room)?.is_some() {
                    ess
                } else if lt.cost(least.iter().copied(), &keep, room)?.is_some() {
                    least
                } else {
                    misses += 1;
                    continue;
                }
            }
        };
        misses = 0;
        for i in lines {
            if !keep[i] {
                used += lt.tokens(i)?;
                keep[i] = true;
            }
        }
        kept_blocks.push(b.start);
    }
    for &s in &kept_blocks {
        if s > h && !keep[s - 1] && used + lt.tokens(s - 1)? <= budget && lt.tokens(s - 1)? <= block_cap {
            used += lt.tokens(s - 1)?;
            keep[s - 1] = true;
        }
    }
    // Extend the head, then the tail, with what is left.
    while h < t && (keep[h] || used + lt.tokens(h)? <= budget) {
        if !keep[h] {
            used += lt.tokens(h)?;
            keep[h] = true;
        }
        h += 1;
    }
    while t > h && (keep[t - 1] || used + lt.tokens(t - 1)? <= budget) {
        if !keep[t - 1] {
            used += lt.tokens(t - 1)?;
            keep[t - 1] = true;
        }
        t -= 1;
    }
    let kept_tokens = (0..n).filter(|&i| keep[i]).map(|i| lt.tokens[i]).sum();
    Ok(Some(Plan { keep, kept_tokens }))
}

/// What a run of cut lines held besides plain lines: error blocks, the
/// distinct messages among them, and how many of those are kept
/// elsewhere in the output.
#[derive(Debug, Default, Clone, Copy)]
struct Note {
    blocks: usize,
    distinct: usize,
    shown: usize,
}

impl Note {
    fn text(&self) -> String {
        if self.blocks == 0 {
            return String::new();
        }
        let s = |n: usize| if n == 1 { "" } else { "s" };
        let shown = match self.shown {
            0 => String::new(),
            k if k == self.distinct && k == 1 => ", shown elsewhere".to_owned(),
            k if k == self.distinct => ", all shown elsewhere".to_owned(),
            k => format!(", {k} shown elsewhere"),
        };
        format!(
            "; {} more error line{}, {} distinct message{}{shown}",
            thousands(self.blocks),
            s(self.blocks),
            thousands(self.distinct),
            s(self.distinct)
        )
    }
}

/// The kept lines with a marker for each run of cut ones (counting the
/// error blocks each run held): the text, the lines cut and the error
/// blocks kept from between the head and the tail.
fn render(lines: &[&str], blocks: &[Block], keep: &[bool], tool: &str, cut_tokens: usize) -> (String, usize, usize) {
    let cut_lines = keep.iter().filter(|k| !**k).count();
    let first_cut = keep.iter().position(|k| !*k).unwrap_or(lines.len());
    let last_cut = keep.iter().rposition(|k| !*k).unwrap_or(0);
    let kept_block = |b: &Block| keep[b.start];
    let key = blocks.iter().filter(|b| b.start > first_cut && b.start < last_cut && kept_block(b)).count();
    let shown: rustc_hash::FxHashSet<u64> = blocks.iter().filter(|b| kept_block(b)).map(|b| b.sig).collect();
    let mut out = String::new();
    let mut next_block = 0;
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
        // The blocks that start in this run and were not kept.
        let mut note = Note::default();
        let mut sigs = rustc_hash::FxHashSet::default();
        while next_block < blocks.len() && blocks[next_block].start < i {
            let b = &blocks[next_block];
            if b.start >= start && !kept_block(b) {
                note.blocks += 1;
                if sigs.insert(b.sig) {
                    note.distinct += 1;
                    note.shown += usize::from(shown.contains(&b.sig));
                }
            }
            next_block += 1;
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if first {
            out.push_str(&header(tool, cut_tokens, cut_lines, key, &note));
            first = false;
        } else {
            out.push_str(&gap(i - start, &note));
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
    fn a_long_log_keeps_head_tail_and_the_error_lines() {
        let tok = Tokenizer::new(Encoding::O200kBase).unwrap();
        let text = log(3000);
        let c = cut(&tok, &text, 2000, "gh_pr_list", None).unwrap().unwrap();
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
        let c = cut(&tok, &text, 300, "read", None).unwrap().unwrap();
        assert!(c.tokens <= 300 && c.text.contains("of read output"), "{}", c.text);
        assert!(cut(&tok, "short", 300, "read", None).unwrap().is_none());
        assert!(cut(&tok, &text, 3, "read", None).is_err(), "no room for the marker");
    }

    /// An application log of `lines` lines (every tenth a warning) with
    /// `block` in the middle.
    fn app_log(lines: usize, block: &str) -> String {
        let mut s = String::new();
        for i in 0..lines {
            if i == lines / 2 {
                s.push_str("2026-03-01 10:30:00,000 ERROR [orders] unhandled exception while pricing order 1042\n");
                s.push_str(block);
            }
            let level = if i % 10 == 3 { "WARN " } else { "INFO " };
            s.push_str(&format!(
                "2026-03-01 10:{:02}:{:02},{:03} {level} [orders] GET /v1/orders/{} 200 in {} ms\n",
                (i / 60) % 60,
                i % 60,
                i % 1000,
                10_000 + i * 7,
                i % 97
            ));
        }
        s
    }

    /// Issue 47 item 6: real error outputs (tests/fixtures/errors-in-logs,
    /// PROVENANCE.md there) in the middle of a long log keep the lines
    /// that say what went wrong, not only the first one.
    #[test]
    fn error_blocks_in_the_middle_keep_their_point() {
        let tok = Tokenizer::new(Encoding::O200kBase).unwrap();
        let fixtures: [(&str, &[&str]); 5] = [
            (
                include_str!("../../../../tests/fixtures/errors-in-logs/python-traceback.txt"),
                &[
                    "Traceback (most recent call last):",
                    "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]",
                ],
            ),
            (
                include_str!("../../../../tests/fixtures/errors-in-logs/java-caused-by.txt"),
                &[
                    "java.lang.IllegalStateException: bad quantity in order line",
                    "\tat Main.parse(Main.java:6)",
                    "Caused by: java.lang.NumberFormatException: For input string: \"12x\"",
                ],
            ),
            (
                include_str!("../../../../tests/fixtures/errors-in-logs/rust-panic.txt"),
                &["panicked at p.rs:5:9:", "no line items in order 1042"],
            ),
            (
                include_str!("../../../../tests/fixtures/errors-in-logs/node-typeerror.txt"),
                &["TypeError: Cannot read properties of null (reading 'x')", "    at f ([eval]:1:20)"],
            ),
            (
                include_str!("../../../../tests/fixtures/errors-in-logs/gcc-error.txt"),
                &["a.c:1:17: error: unknown type name", "    1 | int main(void){ foo x; return 0; }"],
            ),
        ];
        for (block, want) in fixtures {
            let text = app_log(3000, block);
            let c = cut(&tok, &text, 1500, "tail_log", None).unwrap().unwrap();
            assert!(c.tokens <= 1500, "{}", c.tokens);
            for w in want {
                assert!(c.text.contains(w), "{w:?} lost from\n{}", c.text);
            }
        }
    }

    /// Issue 52 item 2: a log where thousands of lines carry an error word
    /// (three messages, their ids varying) keeps its first and last error
    /// line and each message once, counts the rest in the markers, and
    /// counts only a budget's worth of lines whatever the log's length.
    #[test]
    fn thousands_of_error_lines_are_deduped_and_counted() {
        let tok = Tokenizer::new(Encoding::O200kBase).unwrap();
        let messages = ["upstream timeout after {} ms", "deadlock detected (txn {})", "payment declined for order {}"];
        let log = |lines: usize| {
            let mut s = String::new();
            for i in 0..lines {
                if i % 3 == 1 {
                    let m = messages[(i / 3) % 3].replace("{}", &(1000 + i * 13).to_string());
                    s.push_str(&format!("2026-03-01T10:00:{:02}Z ERROR [api] {m}\n", i % 60));
                } else {
                    s.push_str(&format!("2026-03-01T10:00:{:02}Z INFO  [api] request {i} done\n", i % 60));
                }
            }
            s
        };
        let text = log(6000);
        let c = cut(&tok, &text, 2000, "tail_log", None).unwrap().unwrap();
        assert!(c.tokens <= 2000, "{}", c.tokens);
        let first_error = text.lines().find(|l| l.contains("ERROR")).unwrap();
        let last_error = text.lines().rev().find(|l| l.contains("ERROR")).unwrap();
        assert!(c.text.contains(first_error) && c.text.contains(last_error), "{}", c.text);
        for m in messages {
            assert!(c.text.contains(m.split(" {}").next().unwrap()), "{m} kept once at least");
        }
        assert!(c.text.contains("more error lines, 3 distinct messages, all shown elsewhere"), "{}", c.text);
        // Bounded: the lines counted do not grow with the log.
        let counted = |lines: usize| {
            let text = log(lines);
            let ls: Vec<&str> = text.split_inclusive('\n').collect();
            let blocks = blocks::blocks(&ls);
            let mut lt = Lines { tok: &tok, tokens: vec![UNKNOWN; ls.len()], lines: ls };
            plan(&mut lt, &blocks, 1800).unwrap().unwrap();
            lt.tokens.iter().filter(|&&n| n != UNKNOWN).count()
        };
        let (small, large) = (counted(6000), counted(60_000));
        assert!(large <= small + 40 && large < 1000, "{small} lines counted of 6,000, {large} of 60,000");
    }
}

//! The digest's fixed layout and how it is fitted to its budget.
//!
//! ```text
//! Summary of 24 earlier messages (deterministic digest, no model was called): 12 rounds, 14 tool calls, 2 errors.
//! User requests:
//! - [3] "Also keep the old API working."
//! Actions (oldest first):
//! - [1-6] 8 calls to `grep` (5), `open` (3); no errors
//! - [7] "Let me reproduce it." bash `python reproduce.py` -> error: ValueError: bad value
//! State:
//! - Files changed: reproduce.py, astropy/io/fits/card.py
//! - Repeated: `python reproduce.py` (3 runs), last ok: 1.0
//! - Open errors: [9] `pytest tests/test_card.py`: 1 failed, 10 passed in 0.3s
//! Facts:
//! - Paths: astropy/io/fits/card.py, ...
//! - URLs: ...
//! - Identifiers: ...
//! ```
//!
//! Over budget, the layout gives up detail in steps, least useful first:
//! fewer facts, shorter requests and state lists, then the oldest action
//! lines merge into one counted line (their calls by tool, their errors by
//! number). At every step a few of the newest action lines stay whole. The
//! result is counted with the real tokenizer, so the budget always holds;
//! if even the smallest layout does not fit, whole lines are dropped from
//! the end.

use super::facts::Fact;
use super::grammar::Kind;
use super::outcome::shorten;
use super::rounds::{Analysis, Call};
use super::state::State;
use super::Section;
use crate::{Result, Tokenizer, TruncateSide};

/// How much detail a rendering keeps.
#[derive(Debug, Clone, Copy)]
struct Plan {
    facts: usize,
    request_chars: usize,
    state_items: usize,
    calls_per_line: usize,
    /// How many of the oldest action lines are merged into one.
    merged: usize,
    /// Action lines that must stay whole at this level.
    keep: usize,
}

const LEVELS: [(usize, usize, usize, usize, usize); 4] =
    [(12, 400, 12, 6, 8), (6, 200, 6, 4, 5), (3, 120, 3, 3, 3), (0, 80, 1, 2, 0)];

/// What the rendering put in the action log, for the tests' accounting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Calls on their own in an action line.
    pub listed_calls: usize,
    /// Calls counted in a merged line (or a line's "more calls" tail).
    pub counted_calls: usize,
    /// Errors shown with their line.
    pub listed_errors: usize,
    /// Errors counted in a merged line or tail.
    pub counted_errors: usize,
}

fn is_error(c: &Call) -> bool {
    c.outcome.as_ref().is_some_and(|o| o.error)
}

fn outcome_text(c: &Call) -> String {
    match &c.outcome {
        None => "no result".to_owned(),
        Some(o) if o.error => format!("error: {}", o.line.as_deref().unwrap_or("(no message)")),
        Some(o) => match &o.line {
            Some(l) => format!("ok: {}", shorten(l, 60)),
            None => "ok".to_owned(),
        },
    }
}

/// "8 calls to `grep` (5), `open` (3); 1 error"
fn counted(calls: &[&Call], cov: &mut Coverage) -> String {
    let mut by_tool: Vec<(&str, usize)> = Vec::new();
    for c in calls {
        match by_tool.iter_mut().find(|(n, _)| *n == c.name) {
            Some(e) => e.1 += 1,
            None => by_tool.push((&c.name, 1)),
        }
    }
    by_tool.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut tools: Vec<String> = by_tool.iter().take(4).map(|(n, k)| format!("`{n}` ({k})")).collect();
    if by_tool.len() > 4 {
        tools.push(format!("{} other tools", by_tool.len() - 4));
    }
    let errors = calls.iter().filter(|c| is_error(c)).count();
    cov.counted_calls += calls.len();
    cov.counted_errors += errors;
    let errs = match errors {
        0 => "no errors".to_owned(),
        1 => "1 error".to_owned(),
        n => format!("{n} errors"),
    };
    format!("{} call{} to {}; {errs}", calls.len(), if calls.len() == 1 { "" } else { "s" }, tools.join(", "))
}

fn action_lines(a: &Analysis, plan: &Plan, cov: &mut Coverage) -> Vec<String> {
    let entries: Vec<usize> = (0..a.rounds.len()).filter(|&r| a.rounds[r].assistant).collect();
    let merged = plan.merged.min(entries.len());
    let mut out = Vec::new();
    if merged > 0 {
        let (first, last) = (entries[0], entries[merged - 1]);
        let calls: Vec<&Call> =
            entries[..merged].iter().flat_map(|&r| a.rounds[r].calls.iter()).map(|&k| &a.calls[k]).collect();
        let range = if first == last { format!("{}", first + 1) } else { format!("{}-{}", first + 1, last + 1) };
        out.push(if calls.is_empty() {
            format!("- [{range}] {} assistant messages, no tool calls", merged)
        } else {
            format!("- [{range}] {}", counted(&calls, cov))
        });
    }
    for &r in &entries[merged..] {
        let round = &a.rounds[r];
        let mut line = format!("- [{}]", r + 1);
        if let Some(i) = &round.intent {
            line.push_str(&format!(" \"{}\"", shorten(i, if plan.keep >= 5 { 160 } else { 90 })));
        }
        let calls: Vec<&Call> = round.calls.iter().map(|&k| &a.calls[k]).collect();
        let shown = calls.len().min(plan.calls_per_line.max(1));
        let parts: Vec<String> = calls[..shown]
            .iter()
            .map(|c| {
                cov.listed_calls += 1;
                cov.listed_errors += usize::from(is_error(c));
                let args = if c.view.shown.is_empty() { String::new() } else { format!(" `{}`", c.view.shown) };
                format!("{}{args} -> {}", c.name, outcome_text(c))
            })
            .collect();
        if !parts.is_empty() {
            line.push(' ');
            line.push_str(&parts.join("; "));
        }
        if calls.len() > shown {
            line.push_str(&format!("; and {}", counted(&calls[shown..], cov).replacen(" call", " more call", 1)));
        }
        out.push(line);
    }
    out
}

fn render(a: &Analysis, st: &State, facts: &[Fact], sections: &[Section], plan: &Plan) -> (Vec<String>, Coverage) {
    let mut cov = Coverage::default();
    let errors = a.calls.iter().filter(|c| is_error(c)).count();
    let mut lines = vec![format!(
        "Summary of {} earlier messages (deterministic digest, no model was called): {} rounds, {} tool calls, {} error{}.",
        a.messages,
        a.rounds.len(),
        a.calls.len(),
        errors,
        if errors == 1 { "" } else { "s" }
    )];
    let has = |s: Section| sections.contains(&s);
    if has(Section::Requests) && !a.requests.is_empty() {
        lines.push("User requests:".to_owned());
        let skip = a.requests.len().saturating_sub(plan.state_items.max(3));
        if skip > 0 {
            lines.push(format!("- {skip} earlier request{} not shown", if skip == 1 { "" } else { "s" }));
        }
        for q in &a.requests[skip..] {
            lines.push(format!("- [{}] \"{}\"", q.round + 1, shorten(&q.text, plan.request_chars)));
        }
    }
    if has(Section::Actions) && a.rounds.iter().any(|r| r.assistant) {
        lines.push("Actions (oldest first):".to_owned());
        lines.extend(action_lines(a, plan, &mut cov));
    }
    if has(Section::State) && (!st.files.is_empty() || !st.repeated.is_empty() || !st.open_errors.is_empty()) {
        lines.push("State:".to_owned());
        let n = plan.state_items;
        let list = |items: Vec<String>, total: usize| {
            let more = total.saturating_sub(items.len());
            if more > 0 {
                format!("{} (and {more} more)", items.join(", "))
            } else {
                items.join(", ")
            }
        };
        if !st.files.is_empty() {
            let recent: Vec<String> = st.files.iter().rev().take(n).rev().cloned().collect();
            lines.push(format!("- Files changed: {}", list(recent, st.files.len())));
        }
        for r in st.repeated.iter().rev().take(n).rev() {
            lines.push(format!("- Repeated: {} ({} runs), last {}", r.shown, r.times, r.last));
        }
        let open = &st.open_errors;
        for e in &open[open.len().saturating_sub(n.max(1))..] {
            lines.push(format!("- Open error: [{}] {}: {}", a.calls[e.call].round + 1, e.shown, e.line));
        }
        if open.len() > n.max(1) {
            lines.push(format!("- {} older open errors not shown", open.len() - n.max(1)));
        }
    }
    if has(Section::Facts) && plan.facts > 0 && !facts.is_empty() {
        let mut fact_lines = Vec::new();
        for (kind, label) in [(Kind::Path, "Paths"), (Kind::Url, "URLs"), (Kind::Identifier, "Identifiers")] {
            let items: Vec<&str> =
                facts.iter().filter(|f| f.kind == kind).take(plan.facts).map(|f| f.text.as_str()).collect();
            if !items.is_empty() {
                fact_lines.push(format!("- {label}: {}", items.join(", ")));
            }
        }
        if !fact_lines.is_empty() {
            lines.push("Facts:".to_owned());
            lines.extend(fact_lines);
        }
    }
    (lines, cov)
}

fn text_of(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// Renders the digest within `max_tokens`.
pub fn fit(
    a: &Analysis,
    st: &State,
    facts: &[Fact],
    sections: &[Section],
    tok: &Tokenizer,
    max_tokens: usize,
) -> Result<(String, Coverage)> {
    if max_tokens == 0 {
        return Ok((String::new(), Coverage::default()));
    }
    let entries = a.rounds.iter().filter(|r| r.assistant).count();
    let fits = |plan: &Plan| -> Result<Option<(String, Coverage)>> {
        let (lines, cov) = render(a, st, facts, sections, plan);
        let text = text_of(&lines);
        Ok((!tok.count_until_limit(&text, max_tokens)?.exceeded).then_some((text, cov)))
    };
    let mut last = None;
    for (facts_n, request_chars, state_items, calls_per_line, keep) in LEVELS {
        let mut plan = Plan { facts: facts_n, request_chars, state_items, calls_per_line, merged: 0, keep };
        if let Some(done) = fits(&plan)? {
            return Ok(done);
        }
        // The fewest merged lines that fit, keeping `keep` newest lines whole.
        let most = entries.saturating_sub(keep);
        plan.merged = most;
        if most > 0 && fits(&plan)?.is_some() {
            let (mut lo, mut hi) = (1, most); // fits at hi; find the smallest that fits
            while lo < hi {
                let mid = (lo + hi) / 2;
                plan.merged = mid;
                if fits(&plan)?.is_some() {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            plan.merged = lo;
            if let Some(done) = fits(&plan)? {
                return Ok(done);
            }
        }
        last = Some(plan);
    }
    // Even the smallest layout is too long: keep whole lines from the top.
    let plan = last.expect("LEVELS is not empty");
    let (lines, cov) = render(a, st, facts, sections, &plan);
    let mut kept: Vec<String> = Vec::new();
    for line in lines {
        kept.push(line);
        if tok.count_until_limit(&text_of(&kept), max_tokens)?.exceeded {
            kept.pop();
            break;
        }
    }
    if kept.is_empty() {
        // Not even the header: cut it (it holds no facts that a cut could garble).
        let header = render(a, st, facts, &[], &plan).0.remove(0);
        let cut = tok.truncate(&header, max_tokens, TruncateSide::Head, None)?;
        return Ok((cut.text, Coverage::default()));
    }
    // Lines dropped from the end leave calls uncounted; the coverage of the
    // full rendering would overstate, so it is recomputed as unknown.
    let complete = kept.len() == render(a, st, facts, sections, &plan).0.len();
    Ok((text_of(&kept), if complete { cov } else { Coverage::default() }))
}

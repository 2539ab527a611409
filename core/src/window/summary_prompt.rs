//! The summary request's prompt: what turnfit asks the host's model to write
//! when a span of the conversation is replaced by a summary (the two-phase
//! protocol in `summarize`). The wording and the reasons for it are in
//! docs/summaries.md.
//!
//! The prompt hands the model two views of the span: the deterministic
//! digest (every action with its outcome, files changed, open errors, the
//! recurring facts) as a checklist, and the transcript itself, cut in the
//! middle when it is longer than the summarizer's budget. The digest covers
//! the whole span even when the transcript is cut, so nothing the agent did
//! drops out of the model's view unannounced.

use super::Accountant;
use crate::{Error, Result, TruncateSide};

/// The default summarizer prompt. `{max_tokens}`, `{digest}` and
/// `{transcript}` are filled in; a host template needs only `{transcript}`.
pub const DEFAULT_TEMPLATE: &str = "\
You are compacting the working memory of an AI agent that is in the middle of a task. \
The messages below are being removed from its context. Your summary replaces them, and the \
agent will carry on from it with no other record of what happened in them.

Write the summary under these headings, in this order, and leave out a heading with nothing under it:
1. Task and requests: what the user asked for, including every request made in these messages; quote short ones exactly.
2. Status: what is finished, what is in progress, what remains.
3. Decisions: the choices made and why, including approaches that were tried and abandoned.
4. Files: each file created, changed or read that still matters, and its current state.
5. Errors: each error met, whether it is fixed and how; quote the message of any that is still open.
6. Next steps: the concrete actions the agent should take next.

Rules:
- Copy paths, URLs, identifiers, commands and numbers exactly; never make one up.
- When later messages contradict earlier ones, keep the later information.
- Drop greetings, repeated tool output and reasoning that led nowhere.
- Reply with the summary only, as plain text; do not call tools.
- Use at most {max_tokens} tokens: the summary must be less than half as long as the messages.

The digest was extracted mechanically from the same messages and covers all of them: a log of \
every action and its outcome, the files changed, the errors still open and the facts that recur. \
Use it as a checklist: account for every open error and changed file it lists. The transcript \
may be cut in the middle to fit; the digest is not.

<digest>
{digest}
</digest>

<transcript>
{transcript}
</transcript>";

/// The summary's cap: at most `cap`, and at most half the span, so a
/// summary always at least halves what it replaces.
pub fn summary_cap(cap: usize, span_tokens: usize) -> usize {
    cap.min(span_tokens / 2)
}

/// Builds the prompt from `template` within `budget` tokens as `acct`
/// counts them (the summarizer model's accountant: its host counter or
/// characters-per-token estimate when it has one), and returns it with its
/// tokens. The digest takes at most a third of the room left by the
/// template; the transcript gets the rest, cut in the middle (head and tail
/// kept) when longer. Cuts are made with the model's encoding; when the
/// accountant counts otherwise, the transcript is cut further until the
/// whole prompt is within the budget by the accountant's count (issue 48:
/// one path, so no prompt is reported in another model's tokens).
pub fn build(
    template: &str,
    max_tokens: usize,
    digest: impl FnOnce(usize) -> Result<String>,
    transcript: &str,
    budget: usize,
    acct: &Accountant,
) -> Result<(String, usize)> {
    if !template.contains("{transcript}") {
        return Err(Error::invalid_argument("summary_template must contain {transcript}"));
    }
    let frame = template.replace("{max_tokens}", &max_tokens.to_string());
    let frame_tokens = acct.text(&frame.replace("{transcript}", "").replace("{digest}", ""))?;
    if frame_tokens >= budget {
        return Err(Error::invalid_argument(format!(
            "summarizer_budget {budget} leaves no room for the transcript (the template takes {frame_tokens})"
        )));
    }
    let room = budget - frame_tokens;
    let digest_text = if frame.contains("{digest}") { digest(room / 3)? } else { String::new() };
    let digest_text = digest_text.trim_end();
    // Substitution can join tokens across the seams; two tokens of slack.
    let mut room = room.saturating_sub(acct.text(digest_text)? + 2);
    // Split at the transcript first, so placeholders inside the digest or the
    // transcript are never expanded.
    let (before, after) = frame.split_once("{transcript}").unwrap_or((&frame, ""));
    let (before, after) = (before.replace("{digest}", digest_text), after.replace("{digest}", digest_text));
    let tok = acct.tokenizer();
    loop {
        let cut = tok
            .truncate(transcript, room, TruncateSide::Both, None)
            .or_else(|_| tok.truncate(transcript, room, TruncateSide::Head, None))?;
        let prompt = format!("{before}{}{after}", cut.text);
        let n = acct.text(&prompt)?;
        if n <= budget {
            return Ok((prompt, n));
        }
        if room == 0 {
            return Err(Error::invalid_argument(format!(
                "summarizer_budget {budget} leaves no room for the transcript: the template and digest take {n}                  tokens as the model counts them"
            )));
        }
        // Over by the accountant's count: cut the transcript by at least
        // the excess (geometrically, so a counter far from the encoding
        // still ends in a few rounds).
        room = room.saturating_sub((n - budget).max(room / 8).max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::Counter;
    use crate::{Encoding, Tokenizer};

    fn acct(counter: Counter) -> Accountant {
        let e = Encoding::O200kBase;
        Accountant::new(Tokenizer::new(e).unwrap(), super::super::Framing::for_encoding(e)).with_counter(counter)
    }

    #[test]
    fn prompt_holds_digest_and_transcript_within_budget() {
        let a = acct(Counter::Encoding);
        let tok = a.tokenizer();
        let transcript = "assistant called bash(ls)\n".repeat(500);
        let (p, n) = build(DEFAULT_TEMPLATE, 200, |n| Ok(format!("digest in {n}")), &transcript, 1500, &a).unwrap();
        assert!(n <= 1500 && n == tok.count(&p).unwrap());
        assert!(p.contains("<digest>\ndigest in ") && p.contains("Use at most 200 tokens"));
        assert!(p.contains("<transcript>\nassistant called bash(ls)"));
        // A template without {digest} works; without {transcript} it is refused.
        let (p, _) = build("Summarize {transcript}", 10, |_| unreachable!(), "x", 100, &a).unwrap();
        assert_eq!(p, "Summarize x");
        assert!(build("Summarize", 10, |_| Ok(String::new()), "x", 100, &a).is_err());
        assert!(build(DEFAULT_TEMPLATE, 10, |_| Ok(String::new()), "x", 20, &a).is_err());
        // Placeholders inside the digest are not expanded.
        let (p, _) = build("{digest}|{transcript}", 1, |_| Ok("{transcript}".into()), "T", 100, &a).unwrap();
        assert_eq!(p, "{transcript}|T");
    }

    /// Issue 48 (K): a prompt is within the budget as the model's
    /// accountant counts it, whatever its counter: here a host counter that
    /// finds twice the encoding's tokens, and a characters-per-token
    /// estimate.
    #[test]
    fn the_budget_holds_by_the_accountants_count() {
        let tok = Tokenizer::new(Encoding::O200kBase).unwrap();
        // `Tokenizer` is `Copy`: the closure takes its own.
        let doubled = Counter::Host(crate::models::HostCounter::new("m", move |s| Ok(2 * tok.count(s).unwrap())));
        let transcript = "assistant called bash(ls) and read the file src/main.rs\n".repeat(400);
        for counter in [doubled, Counter::chars(1.5).unwrap()] {
            let a = acct(counter.clone());
            let (p, n) = build(DEFAULT_TEMPLATE, 200, |n| Ok(format!("digest in {n}")), &transcript, 2000, &a).unwrap();
            assert_eq!(n, a.text(&p).unwrap(), "{counter:?}");
            assert!(n <= 2000, "{counter:?}: {n}");
            assert!(tok.count(&p).unwrap() < 2000, "{counter:?}: the cut went further than the encoding alone");
        }
    }

    #[test]
    fn the_cap_halves_at_least() {
        assert_eq!(summary_cap(500, 4000), 500);
        assert_eq!(summary_cap(500, 600), 300);
    }
}

//! The summarizer's requests for one span: the span cut into pieces that
//! each fit the summarizer's own budget, and each piece's prompt carrying
//! the summary so far. A span too long for the summarizer (Claude Code's
//! and Codex's compaction deadlock: the history is too long to summarize)
//! is thus summarized piece by piece, every request within the budget,
//! instead of failing or being cut in the middle.
//!
//! Folding: a previous summary inside the span (a message that starts with
//! the summary label) is not summarized again as conversation; its text
//! becomes the first piece's "summary so far", so the next compaction
//! updates one summary instead of summarizing summaries of summaries.

use crate::chat::Message;
use crate::window::{build_digest, transcript_lines, Accountant, DigestOptions};
use crate::{Error, Result};

/// The words before a previous summary in a piece's transcript slot.
const SO_FAR: &str = "Summary of the conversation so far (update it with the messages that follow; keep what still \
                      matters):\n";
/// The words between the summary so far and the piece's messages.
const THEN: &str = "\n\nMessages that follow it:\n";

/// Tokens kept free in a piece for seams and the digest's rounding.
const SLACK: usize = 8;

/// Smallest transcript room a piece may have; below it the summarizer's
/// budget is too small to be useful and the digest is used.
pub(super) const MIN_PIECE_TOKENS: usize = 64;

/// The span split for the summarizer.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// Per span message: its transcript lines ("role: text", calls).
    lines: Vec<String>,
    /// Per piece: the range of span messages it covers.
    pub(super) pieces: Vec<std::ops::Range<usize>>,
    /// Round starts relative to the span (for each piece's digest).
    starts: Vec<usize>,
    /// A previous summary found in the span.
    pub(super) previous: Option<String>,
    /// Whether prompts carry the digest (only a single piece does).
    digest: bool,
}

/// Splits `span` into pieces for a summarizer whose requests may take
/// `budget` tokens with `template`, each reply at most `cap` tokens, as
/// `acct` (the summarizer model's accountant) counts them.
pub(super) fn plan(
    span: &[&Message],
    starts: &[usize],
    label: &str,
    template: &str,
    cap: usize,
    budget: usize,
    acct: &Accountant,
) -> Result<Plan> {
    let room = piece_room(template, cap, budget, acct, true)?;
    let full_room = piece_room(template, cap, budget, acct, false)?;
    let mut previous: Vec<String> = Vec::new();
    let lines: Vec<String> = span
        .iter()
        .map(|m| {
            let text = m.text();
            match text.trim_start().strip_prefix(label.trim_end()) {
                // A previous summary: folded, not transcribed.
                Some(rest) if !label.trim().is_empty() => {
                    previous.push(rest.trim().to_owned());
                    String::new()
                }
                _ => transcript_lines(m),
            }
        })
        .collect();
    let previous = (!previous.is_empty()).then(|| previous.join("\n\n"));
    // One piece when the whole span fits beside the digest; else pieces
    // that use the digest's third too (each piece's transcript is whole,
    // so the digest would only repeat it).
    let prev_tokens = acct.text(previous.as_deref().unwrap_or(""))?;
    let total: usize = lines.iter().map(|l| acct.text(l)).sum::<Result<usize>>()?;
    if prev_tokens + total <= room {
        let whole = std::iter::once(0..span.len()).collect();
        return Ok(Plan { lines, pieces: whole, starts: starts.to_vec(), previous, digest: true });
    }
    let room = full_room;
    let mut pieces = Vec::new();
    let (mut start, mut used) = (0, prev_tokens);
    for (i, l) in lines.iter().enumerate() {
        let n = acct.text(l)?;
        if i > start && used + n > room {
            pieces.push(start..i);
            // Later pieces carry the previous reply, at most `cap` tokens.
            (start, used) = (i, cap);
        }
        used += n;
    }
    pieces.push(start..lines.len());
    Ok(Plan { lines, pieces, starts: starts.to_vec(), previous, digest: false })
}

/// Transcript tokens one piece may hold, besides the summary so far: the
/// budget less the template, the digest's third and the seams.
pub(super) fn piece_room(
    template: &str,
    cap: usize,
    budget: usize,
    acct: &Accountant,
    with_digest: bool,
) -> Result<usize> {
    let frame = template.replace("{max_tokens}", &cap.to_string()).replace("{transcript}", "").replace("{digest}", "");
    let frame_tokens = acct.text(&frame)? + acct.text(SO_FAR)? + acct.text(THEN)? + SLACK;
    let room = budget.saturating_sub(frame_tokens);
    let digest = if with_digest && template.contains("{digest}") { room / 3 } else { 0 };
    Ok(room - digest)
}

impl Plan {
    /// The prompt for piece `k` (0-based), with `so_far` (the previous
    /// piece's reply, or the folded summary) ahead of its messages; within
    /// `budget` tokens as `acct` counts them, with those tokens (the
    /// transcript is cut in the middle if one message alone is too long).
    #[allow(clippy::too_many_arguments)] // each is one of the prompt's inputs; a struct would only rename them
    pub(super) fn prompt(
        &self,
        k: usize,
        span: &[&Message],
        so_far: Option<&str>,
        template: &str,
        cap: usize,
        budget: usize,
        acct: &Accountant,
        digest: &DigestOptions,
    ) -> Result<(String, usize)> {
        let r = self.pieces.get(k).ok_or_else(|| Error::internal(format!("summary piece {k} does not exist")))?;
        let mut transcript = String::new();
        if let Some(s) = so_far.filter(|s| !s.trim().is_empty()) {
            transcript.push_str(SO_FAR);
            transcript.push_str(s.trim());
            transcript.push_str(THEN);
        }
        for l in &self.lines[r.clone()] {
            transcript.push_str(l);
        }
        let msgs: Vec<Message> = span[r.clone()].iter().map(|m| (*m).clone()).collect();
        let starts: Vec<usize> =
            self.starts.iter().filter(|&&s| r.contains(&s)).map(|&s| s - r.start).chain(std::iter::once(0)).collect();
        let mut starts: Vec<usize> = starts;
        starts.sort_unstable();
        starts.dedup();
        let with_digest = self.digest;
        let scaffold = |room: usize| -> Result<String> {
            if !with_digest {
                return Ok(String::new());
            }
            Ok(build_digest(&msgs, &starts, acct.tokenizer(), digest.budget(room), &digest.sections)?.text)
        };
        crate::window::build_summary_prompt(template, cap, scaffold, &transcript, budget, acct)
    }
}

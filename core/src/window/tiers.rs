//! Multi-scale context (seed 000's "immediate, session, historical"): the
//! options that turn it on for a window, their checks, the report, and the
//! one context message that carries the two summaries.
//!
//! A window with `multi_scale` keeps its newest turns verbatim (the
//! immediate tier). Rounds that leave it are folded into a running summary
//! of the session; when that summary outgrows its budget it is folded into
//! the long-term (historical) summary. Both summaries travel in a single
//! user message placed right after the leading system messages, so the
//! conversation stays a valid request in every role-free format and a
//! call is never separated from its result (folds move whole rounds). The
//! folding itself is `state::tiers` (it needs the window's cached counts).

use serde::{Deserialize, Serialize};

use super::Accountant;
use crate::chat::{Format, Message, Role};
use crate::limits::MAX_BUDGET_TOKENS;
use crate::{Error, ErrorKind, Result, TruncateSide};

/// The first line of the context message: how the window finds it again.
pub const TIERS_LABEL: &str = "[Earlier context]";
/// The heading of the historical (long-term) summary in the context message.
pub const HISTORICAL_HEADING: &str = "Historical summary:";
/// The heading of the session summary in the context message.
pub const SESSION_HEADING: &str = "Session summary:";

/// Below this many tokens of text a summary tier cannot hold a summary.
const MIN_TIER_TEXT: usize = super::summary_message::MIN_SUMMARY_TOKENS;

/// Multi-scale context for a window: each tier's token budget. The budgets
/// are targets (folding aims for them); the window's limit is the wall.
/// Signed, so a negative budget is refused by name rather than as a type
/// error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MultiScale {
    /// Tokens the recent turns kept verbatim aim for: older rounds are
    /// folded into the session summary once these are exceeded (the newest
    /// round always stays).
    pub immediate_tokens: i64,
    /// Tokens the running summary of this session may take (its heading
    /// included); past them it is folded into the historical summary.
    pub session_tokens: i64,
    /// Tokens the long-term summary may take (its heading included); it is
    /// condensed to stay within them.
    pub historical_tokens: i64,
}

/// Checked tier budgets, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TierBudgets {
    pub immediate: usize,
    pub session: usize,
    pub historical: usize,
}

/// `InvalidArgument` naming the tier when a budget is not a positive
/// number of tokens, when a summary tier cannot hold a minimal summary, or
/// when the tiers together ask for more than the prompt's room (`limit`
/// less `reserved`).
pub(crate) fn check(ms: &MultiScale, limit: usize, reserved: usize, acct: &Accountant) -> Result<TierBudgets> {
    let positive = |name: &str, v: i64| -> Result<usize> {
        if v <= 0 {
            return Err(Error::invalid_argument(format!(
                "multi_scale.{name} is {v}; each tier's budget must be a positive number of tokens"
            )));
        }
        let n = usize::try_from(v).unwrap_or(usize::MAX);
        super::state::check_budget_tokens(&format!("multi_scale.{name}"), n)?;
        Ok(n)
    };
    let b = TierBudgets {
        immediate: positive("immediate_tokens", ms.immediate_tokens)?,
        session: positive("session_tokens", ms.session_tokens)?,
        historical: positive("historical_tokens", ms.historical_tokens)?,
    };
    for (name, budget, heading) in
        [("session_tokens", b.session, SESSION_HEADING), ("historical_tokens", b.historical, HISTORICAL_HEADING)]
    {
        let least = section_overhead(heading, acct)? + MIN_TIER_TEXT;
        if budget < least {
            return Err(Error::invalid_argument(format!(
                "multi_scale.{name} is {budget}; a summary tier needs at least {least} tokens (its heading and {MIN_TIER_TEXT} tokens of text)"
            )));
        }
    }
    let room = limit - reserved;
    let sum = b.immediate + b.session + b.historical;
    if sum > room {
        return Err(Error::invalid_argument(format!(
            "multi_scale tier budgets sum to {sum} tokens (immediate {}, session {}, historical {}), over the window's prompt room of {room} (context window {limit} less reserved output {reserved})",
            b.immediate, b.session, b.historical
        )));
    }
    debug_assert!(sum <= MAX_BUDGET_TOKENS);
    Ok(b)
}

/// Multi-scale figures: each tier's tokens and budget, and how often the
/// tiers were folded. In the pre-flight report and in each compaction of a
/// multi-scale window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TierReport {
    /// Tokens of the messages after the context message (the leading
    /// system messages are not a tier).
    pub immediate_tokens: usize,
    /// Tokens of the session summary's section (heading and text; 0 when
    /// empty).
    pub session_tokens: usize,
    /// Tokens of the historical summary's section (heading and text; 0
    /// when empty).
    pub historical_tokens: usize,
    /// Tokens of the whole context message, framing and label included
    /// (0 when there is none).
    pub context_message_tokens: usize,
    /// The immediate tier's budget.
    pub immediate_budget: usize,
    /// The session tier's budget.
    pub session_budget: usize,
    /// The historical tier's budget.
    pub historical_budget: usize,
    /// Messages folded out of the immediate tier since the window was made.
    pub messages_folded: usize,
    /// Folds into the session summary since the window was made.
    pub session_folds: usize,
    /// Folds of the session summary into the historical summary.
    pub historical_folds: usize,
    /// Folds written by the host's summarizer (the rest by the digest).
    pub host_summaries: usize,
}

/// Which summary a fold writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// The running summary of this session.
    Session,
    /// The long-term summary.
    Historical,
}

/// One summary a fold needs, handed to the host's summarizer (see
/// [`super::Window::add_with`]): send `prompt` to a model and reply with
/// at most `max_tokens` tokens of plain text, or `None` for the digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FoldRequest {
    /// The summary being written.
    pub tier: Tier,
    /// The prompt: what the summary must cover.
    pub prompt: String,
    /// The most the reply may take; a longer reply is cut to it.
    pub max_tokens: usize,
}

/// The two summaries a multi-scale window carries, and its fold counts.
#[derive(Debug, Clone, Default)]
pub(crate) struct TierState {
    pub session: String,
    pub historical: String,
    pub messages_folded: usize,
    pub session_folds: usize,
    pub historical_folds: usize,
    pub host_summaries: usize,
}

impl TierState {
    /// The context message's text, or `None` when both summaries are empty.
    pub fn text(&self) -> Option<String> {
        render(&self.historical, &self.session)
    }

    /// Takes the summaries from a context message's text (a loaded or
    /// replaced conversation); both empty when `text` is not one.
    pub fn read(&mut self, text: Option<&str>) {
        let (h, s) = text.and_then(parse).unwrap_or_default();
        self.historical = h;
        self.session = s;
    }
}

fn render(historical: &str, session: &str) -> Option<String> {
    if historical.is_empty() && session.is_empty() {
        return None;
    }
    let mut out = format!("{TIERS_LABEL}\n");
    if !historical.is_empty() {
        out.push_str(&format!("{HISTORICAL_HEADING}\n{historical}\n"));
    }
    if !session.is_empty() {
        if !historical.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{SESSION_HEADING}\n{session}\n"));
    }
    Some(out)
}

/// (historical, session) from a context message's text.
fn parse(text: &str) -> Option<(String, String)> {
    let body = text.strip_prefix(TIERS_LABEL)?.strip_prefix('\n')?;
    let (hist, rest) = match body.strip_prefix(&format!("{HISTORICAL_HEADING}\n")) {
        Some(after) => match after.find(&format!("\n\n{SESSION_HEADING}\n")) {
            Some(i) => (after[..i].to_owned(), &after[i + 2..]),
            None => (after.trim_end_matches('\n').to_owned(), ""),
        },
        None => (String::new(), body),
    };
    let session = rest.strip_prefix(&format!("{SESSION_HEADING}\n")).map(|s| s.trim_end_matches('\n').to_owned());
    Some((hist, session.unwrap_or_default()))
}

/// Whether `m` is a context message.
pub(crate) fn is_context(m: &Message) -> bool {
    m.role == Role::User && m.tool_calls.is_empty() && m.text().starts_with(&format!("{TIERS_LABEL}\n"))
}

/// The context message in `format`.
pub(crate) fn message(format: Format, text: &str, index: usize) -> Result<Message> {
    crate::chat::message_from_value(format, crate::chat::text_message(format, "user", text), index)
}

/// `InvalidArgument` for formats whose roles must alternate: there the
/// context message would sit beside a user turn.
pub(crate) fn check_format(format: Format) -> Result<()> {
    if format.results_are_messages() || format == Format::AiSdk {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::InvalidArgument,
        format!(
            "multi_scale context works on OpenAI Chat, Responses and AI SDK conversations; this window holds a {} conversation, whose roles must alternate",
            format.as_str()
        ),
    ))
}

/// Tokens a section's heading line adds to the context message.
pub(crate) fn section_overhead(heading: &str, acct: &Accountant) -> Result<usize> {
    acct.text(&format!("{heading}\n"))
}

/// Tokens of a section holding `text` (0 for empty text).
pub(crate) fn section_tokens(heading: &str, text: &str, acct: &Accountant) -> Result<usize> {
    if text.is_empty() {
        return Ok(0);
    }
    acct.text(&format!("{heading}\n{text}\n"))
}

/// `text` cut (keeping both ends) until its section fits `budget` tokens.
pub(crate) fn fit_section(heading: &str, text: String, budget: usize, acct: &Accountant) -> Result<String> {
    if section_tokens(heading, &text, acct)? <= budget {
        return Ok(text);
    }
    let mut cap = budget.saturating_sub(section_overhead(heading, acct)? + 1);
    loop {
        let side = if cap >= 24 { TruncateSide::Both } else { TruncateSide::Tail };
        let cut = acct.tokenizer().truncate(&text, cap, side, None)?.text;
        if cap == 0 || section_tokens(heading, &cut, acct)? <= budget {
            return Ok(cut);
        }
        cap -= 1.max(cap / 8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_text_reads_back() {
        for (h, s) in [("older things", "recent things"), ("", "only session"), ("only historical", "")] {
            let t = render(h, s).unwrap();
            assert_eq!(parse(&t), Some((h.to_owned(), s.to_owned())), "{t:?}");
        }
        assert_eq!(render("", ""), None);
        assert_eq!(parse("no label"), None);
    }
}

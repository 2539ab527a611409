//! The summarize strategy as a two-phase protocol. turnfit never calls a
//! model: [`request_summary`] says which messages to summarize and builds a
//! prompt that fits the summarizer's budget; the host calls its model; then
//! [`apply_summary`] puts the summary in place of those messages as one
//! message and re-checks the budget. [`compact_with_digest`] runs both phases
//! with the deterministic digest as the summary, for callers that have no
//! model at hand (the CLI, tests).

use std::borrow::Cow;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::compact::{
    assemble, compact_prepared, cut_to_fit, finish, prepare, select, without_summary_reserve, Compacted, Policy,
    Prepared,
};
use super::digest;
use super::manifest::{Change, ChangeKind, Shortfall, ShortfallReason};
use super::summary_message::{self, MIN_SUMMARY_TOKENS};
use super::summary_prompt;
use super::Accountant;
use crate::chat::{self, Conversation, Format, Message, Role};
use crate::{Error, Result, TruncateSide};

pub use super::summary_prompt::DEFAULT_TEMPLATE;

/// What the host must summarize.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SummaryRequest {
    /// Identifies the span and the conversation it came from; `apply_summary`
    /// refuses a summary whose id does not match.
    pub id: String,
    /// Indices, in the working conversation, of the messages to summarize:
    /// whole rounds, each call with its results.
    pub messages: Vec<usize>,
    /// Their tokens.
    pub span_tokens: usize,
    /// The prompt to send to the summarizer.
    pub prompt: String,
    /// Its tokens (at most the policy's `summarizer_budget`).
    pub prompt_tokens: usize,
    /// Tokens the summary may take; a longer one is cut. At most the
    /// policy's `summary_max_tokens`, less when the target has less room,
    /// never below the smallest summary: when the target has no room for
    /// it, the summary takes its room beyond the target (within the
    /// limit), and when the limit has none either, no summary is requested
    /// and the compaction drops rounds instead; either way the report's
    /// `shortfall` says so.
    pub max_summary_tokens: usize,
}

/// The host's summarizer and its budget, for a turn's summarize step
/// (`turnfit::turn`): the model that writes the summary is often a cheaper
/// one than the agent's, with a window of its own, and every request made
/// to it must fit that window.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct SummarizerOptions {
    /// The summarizer's model: its encoding counts the requests and its
    /// context window bounds them [default: the agent's model].
    pub model: Option<String>,
    /// The encoding for a summarizer model the registry does not know.
    pub encoding: Option<crate::Encoding>,
    /// The summarizer's context window, replacing the registry's;
    /// positive, at most `MAX_BUDGET_TOKENS`.
    pub context_window: Option<usize>,
    /// Tokens one summarizer request may take [default: the policy's
    /// `summarizer_budget`, at most the summarizer's window less the
    /// summary's room]. A span longer than this is summarized in pieces,
    /// each request within it.
    pub max_prompt_tokens: Option<usize>,
    /// Milliseconds the host's summarizer may take per request; a reply
    /// after it is discarded and the digest used [default 120000; 0: no
    /// limit]. Hosts with async models also cancel the call themselves.
    pub timeout_ms: Option<u64>,
    /// Most summarizer requests one turn makes [default 16, at most 256]:
    /// a span needing more pieces is summarized by the digest instead, as
    /// the report says.
    pub max_requests: Option<usize>,
}

/// The working conversation (repaired, tool outputs cut) to which a request
/// refers, kept by the caller between the two phases.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The request to hand to the host.
    pub request: SummaryRequest,
    prepared: Prepared,
    /// Per round: kept (true) or summarized.
    keep: Vec<bool>,
    /// Prompt tokens the result aims at: the target, or beyond it (within
    /// the limit) when the smallest summary needs the room.
    goal: usize,
}

fn label(policy: &Policy) -> String {
    summary_message::label(policy.summary_label.as_deref())
}

/// The summary as a message of its own.
fn summary_message(format: Format, text: &str, policy: &Policy, index: usize) -> Result<Message> {
    summary_message::message(format, text, policy.summary_role, index)
}

/// Phase one. `Ok(None)` when no round needs to go (the conversation fits,
/// or masking alone makes it fit), or when not even the smallest summary
/// fits the limit beside what is kept (then `compact` drops rounds
/// instead, and says so).
pub fn request_summary(c: &Conversation, policy: &Policy, acct: &Accountant) -> Result<Option<Pending>> {
    let mut p = prepare(Cow::Borrowed(c), policy, acct)?;
    let r = reserve(&p, policy, acct)?;
    cut_to_fit(&mut p, policy, acct, r)?;
    Ok(request_prepared(p, policy, acct)?.ok())
}

/// Tokens the smallest summary takes, message and label included.
fn reserve(p: &Prepared, policy: &Policy, acct: &Accountant) -> Result<usize> {
    summary_message::reserve(p.work.format, policy.summary_label.as_deref(), policy.summary_role, acct)
}

/// Phase one on a prepared copy; `Err(p)` gives the copy back when no
/// round needs to go.
fn request_prepared(
    mut p: Prepared,
    policy: &Policy,
    acct: &Accountant,
) -> Result<std::result::Result<Pending, Prepared>> {
    let total: usize = p.fixed + p.rounds.iter().map(|r| r.tokens).sum::<usize>();
    // "Keep only what is protected" summarizes every other round whatever
    // their tokens: its target holds the summary's whole room
    // (`summary_max_tokens`), so a short history was within it and left
    // alone (issue 53, seed 002's `compress(keep_recent=10)`).
    let only_protected = policy.keep_only_protected && p.rounds.iter().any(|r| r.protected.is_none());
    if total <= p.target && !only_protected {
        return Ok(Err(p));
    }
    // The summary must fit beside what is always kept, framing included.
    let overhead = acct.message(&summary_message(p.work.format, &label(policy), policy, 0)?)?;
    if policy.summary_max_tokens < MIN_SUMMARY_TOKENS {
        return Err(Error::invalid_argument(format!(
            "summary_max_tokens {} is below the smallest summary, {MIN_SUMMARY_TOKENS} tokens",
            policy.summary_max_tokens
        )));
    }
    // A target is a goal, the limit is the wall: the smallest summary goes
    // within the target if it can, else beyond it within the limit; when
    // the limit has no room either, this compaction drops rounds instead
    // of summarizing them. Either way the report says so; only what is
    // kept whatever the budget, over the limit, makes a turn fail.
    let kept = p.fixed + p.protected_tokens() + overhead;
    let smallest = MIN_SUMMARY_TOKENS + overhead;
    let kept_detail = || {
        format!(
            "framing, tools and the top-level system prompt take {}, the protected messages {} ({})",
            p.fixed,
            p.protected_tokens(),
            super::rounds::describe_protected(&p.rounds, &p.origin),
        )
    };
    let goal = if kept + MIN_SUMMARY_TOKENS <= p.target {
        p.target
    } else if kept + MIN_SUMMARY_TOKENS <= policy.limit_tokens {
        let detail = format!(
            "no room for the smallest summary ({smallest} tokens with its message and label) within the target of \
             {} prompt tokens: {}; the summary took its room beyond the target, within the limit of {}",
            p.target,
            kept_detail(),
            policy.limit_tokens,
        );
        p.shortfall = Some(Shortfall { reason: ShortfallReason::SummaryOverTarget, detail });
        kept + MIN_SUMMARY_TOKENS
    } else {
        let detail = format!(
            "no room for the smallest summary ({smallest} tokens with its message and label) within the limit of \
             {} prompt tokens: {}; rounds were dropped (newest kept) instead of summarized",
            policy.limit_tokens,
            kept_detail(),
        );
        p.shortfall = Some(Shortfall { reason: ShortfallReason::NoRoomForSummary, detail });
        return Ok(Err(p));
    };
    let room = goal - kept;
    let cap = policy.summary_max_tokens.min(room);
    let budget = goal.saturating_sub(p.fixed + cap + overhead);
    let keep = select(&p.rounds, &Policy { strategy: super::Strategy::Recency, ..policy.clone() }, budget, &[]);
    let messages: Vec<usize> =
        p.rounds.iter().zip(&keep).filter(|(_, k)| !**k).flat_map(|(r, _)| r.start..r.end).collect();
    if messages.is_empty() {
        // Nothing to summarize after all: no summary was given room.
        p.shortfall = None;
        return Ok(Err(p));
    }
    let span_tokens = messages.iter().map(|&i| p.counts[i]).sum();
    let cap = summary_prompt::summary_cap(cap, span_tokens).max(MIN_SUMMARY_TOKENS.min(cap));
    let transcript = transcript(&p.work, &messages);
    let template = policy.summary_template.as_deref().unwrap_or(summary_prompt::DEFAULT_TEMPLATE);
    let tok = acct.tokenizer();
    let span: Vec<_> = messages.iter().map(|&i| p.work.messages[i].clone()).collect();
    let scaffold = |room: usize| -> Result<String> {
        let budget = policy.digest.budget(room);
        Ok(digest::build(&span, &digest::round_starts(&span), tok, budget, &policy.digest.sections)?.text)
    };
    let (prompt, prompt_tokens) =
        summary_prompt::build(template, cap, scaffold, &transcript, policy.summarizer_budget, acct)?;
    let id = span_id(&p.work, &messages);
    Ok(Ok(Pending {
        request: SummaryRequest { id, messages, span_tokens, prompt, prompt_tokens, max_summary_tokens: cap },
        prepared: p,
        keep,
        goal,
    }))
}

/// Phase two: replaces the requested messages with `summary` (cut to the
/// request's `max_summary_tokens` if longer) and re-checks the budget.
pub fn apply_summary(
    pending: &Pending,
    id: &str,
    summary: &str,
    policy: &Policy,
    acct: &Accountant,
) -> Result<Compacted> {
    apply(pending, None, id, summary, policy, acct)
}

/// [`apply_summary`]; `owned`: the working messages, when the caller gives
/// them up (they are moved into the result rather than copied).
fn apply(
    pending: &Pending,
    owned: Option<Vec<Message>>,
    id: &str,
    summary: &str,
    policy: &Policy,
    acct: &Accountant,
) -> Result<Compacted> {
    let req = &pending.request;
    if id != req.id {
        return Err(Error::invalid_argument(format!(
            "summary id '{id}' does not match the pending request '{}'",
            req.id
        )));
    }
    let p = &pending.prepared;
    let format = p.work.format;
    let tok = acct.tokenizer();
    // The summary has the room phase one kept for it: its cap and its
    // message with the label. The text is cut with the encoding's
    // tokenizer, which for a model counted with its own (a host's counter,
    // a model registered from its files) is not the count: Gemma's makes a
    // token or two more of it, a byte-level one four times as many. So the
    // message is counted as the model counts it and cut again, in
    // proportion, until it is within that room.
    let room = req.max_summary_tokens + acct.message(&summary_message(format, &label(policy), policy, 0)?)?;
    let mut max = req.max_summary_tokens;
    let (cut, text, alone) = loop {
        let cut = tok.truncate(summary.trim(), max, TruncateSide::Head, None)?;
        let text = format!("{}{}", label(policy), cut.text);
        let alone = acct.message(&summary_message(format, &text, policy, 0)?)?;
        if alone <= room || max == 0 {
            break (cut, text, alone);
        }
        max = (max * room / alone).min(max - 1);
    };
    let budget = pending.goal.saturating_sub(p.fixed + alone);
    let mut d = assemble(p, &pending.keep, budget, owned, acct)?;
    let first = req.messages[0];
    for &i in &req.messages {
        let detail = format!("replaced by the summary at message {}", p.input_index(first));
        d.changes.push(Change {
            action: ChangeKind::Summarized,
            index: p.input_index(i),
            id: None,
            tokens: p.counts[i],
            detail,
        });
    }
    {
        // Kept messages before the summarized span: the summary goes right
        // after them (after the task, for a recency cut).
        let before = p
            .rounds
            .iter()
            .zip(&pending.keep)
            .filter(|(r, k)| **k && r.end <= first)
            .map(|(r, _)| r.end - r.start)
            .sum();
        let (at, replaced, msg) = place(format, &text, policy, &d.messages, before, first)?;
        let old: usize = match replaced {
            Some(k) => acct.message(&d.messages[k])?,
            None => 0,
        };
        d.tokens_after = d.tokens_after + acct.message(&msg)? - old;
        match replaced {
            Some(k) => d.messages[k] = msg,
            None => d.messages.insert(at, msg),
        }
        d.changes.push(Change {
            action: ChangeKind::InsertedSummary,
            index: p.input_index(first),
            id: Some(req.id.clone()),
            tokens: acct.text(&text)?,
            detail: format!(
                "summary of {} messages ({} tokens){}",
                req.messages.len(),
                req.span_tokens,
                if cut.truncated { ", cut to its budget" } else { "" }
            ),
        });
    }
    finish(p, d, policy, acct)
}

/// Both phases with the deterministic digest as the summary.
pub fn compact_with_digest(c: &Conversation, policy: &Policy, acct: &Accountant) -> Result<Compacted> {
    let p = prepare(Cow::Borrowed(c), policy, acct)?;
    match begin(p, policy, acct)? {
        Begun::Summarize(pending) => digest_summary(*pending, policy, acct),
        Begun::Done(c) => Ok(*c),
    }
}

/// Where a summarize compaction stands after its first phase.
#[derive(Debug)]
pub(crate) enum Begun {
    /// A span must be summarized (by the host's model, or the digest).
    Summarize(Box<Pending>),
    /// Nothing needs summarizing: masking and cuts were enough, or the
    /// history fits.
    Done(Box<Compacted>),
}

/// The ladder for the summarize strategy on a prepared copy, up to the
/// summary request: room for the smallest summary is kept while tool
/// outputs are cut and protection is lifted.
pub(crate) fn begin(mut p: Prepared, policy: &Policy, acct: &Accountant) -> Result<Begun> {
    let r = reserve(&p, policy, acct)?;
    cut_to_fit(&mut p, policy, acct, r)?;
    Ok(match request_prepared(p, policy, acct)? {
        Ok(pending) => Begun::Summarize(Box::new(pending)),
        Err(mut p) if p.shortfall.as_ref().is_some_and(|s| s.reason == ShortfallReason::NoRoomForSummary) => {
            // No summary this time: the newest rounds that fit, as recency
            // keeps them (without the room a summary would have taken).
            without_summary_reserve(&mut p, policy, acct)?;
            let recency = Policy { strategy: super::Strategy::Recency, ..policy.clone() };
            Begun::Done(Box::new(compact_prepared(p, &recency, acct)?))
        }
        Err(p) => Begun::Done(Box::new(compact_prepared(p, policy, acct)?)),
    })
}

impl Pending {
    /// The working messages the request summarizes, in order.
    pub(crate) fn span(&self) -> Vec<&Message> {
        self.request.messages.iter().map(|&i| &self.prepared.work.messages[i]).collect()
    }

    /// The input index of each summarized message (for a message repair
    /// made, the nearest input message before it).
    pub(crate) fn span_input_indices(&self) -> Vec<usize> {
        self.request.messages.iter().map(|&i| self.prepared.input_index(i)).collect()
    }

    /// Round starts, relative to the summarized messages.
    pub(crate) fn span_round_starts(&self) -> Vec<usize> {
        let mut starts = Vec::new();
        let mut k = 0;
        for (r, keep) in self.prepared.rounds.iter().zip(&self.keep) {
            if !keep {
                starts.push(k);
                k += r.end - r.start;
            }
        }
        starts
    }
}

/// Phase two with the deterministic digest as the summary: what a
/// summarize compaction does with no host model, or when the host's
/// model failed.
pub(crate) fn digest_summary(mut pending: Pending, policy: &Policy, acct: &Accountant) -> Result<Compacted> {
    let p = &pending.prepared;
    let msgs: Vec<_> = pending.request.messages.iter().map(|&i| p.work.messages[i].clone()).collect();
    let starts = pending.span_round_starts();
    let budget = policy.digest.budget(pending.request.max_summary_tokens);
    let text = digest::build(&msgs, &starts, acct.tokenizer(), budget, &policy.digest.sections)?.text;
    let owned = std::mem::take(&mut pending.prepared.work.messages);
    let id = pending.request.id.clone();
    apply(&pending, Some(owned), &id, &text, policy, acct)
}

/// Where the summary goes among the kept messages `out`, of which the
/// first `before` precede the summarized span (which began at working
/// message `first`). Returns (insert position, message replaced, message).
/// OpenAI: a message of its own right there. Anthropic needs alternation, so
/// the summary joins a neighbouring user message as a text block: the one
/// before (after its own content, which stays as it was) or else the one
/// after (after its leading tool results); a message of its own only when
/// neither neighbour is a user message.
fn place(
    format: Format,
    text: &str,
    policy: &Policy,
    out: &[Message],
    before: usize,
    first: usize,
) -> Result<(usize, Option<usize>, Message)> {
    let block = chat::text_block(format, text);
    let key = chat::blocks_key(format);
    // The AI SDK has no alternation rule: the summary is a message of its own.
    if !format.results_are_messages() && format != Format::AiSdk {
        if let Some(prev) = before.checked_sub(1).filter(|&k| out[k].role == Role::User) {
            let mut raw = out[prev].raw().clone();
            match raw.get_mut(key) {
                Some(Value::Array(blocks)) => blocks.push(block),
                Some(other) => {
                    let old = other.take();
                    *other = json!([{"type": "text", "text": old.as_str().unwrap_or_default()}, block]);
                }
                None => raw[key] = json!([block]),
            }
            return Ok((prev, Some(prev), chat::message_from_value(format, raw, first)?));
        }
        if let Some(next) = out.get(before).filter(|m| m.role == Role::User) {
            let mut raw = next.raw().clone();
            match raw.get_mut(key) {
                Some(Value::Array(blocks)) => {
                    // After leading tool results, which must come first.
                    let at = blocks.iter().take_while(|b| chat::is_result_block(format, b)).count();
                    blocks.insert(at, block);
                }
                Some(other) => {
                    let old = other.take();
                    *other = json!([block, {"type": "text", "text": old.as_str().unwrap_or_default()}]);
                }
                None => raw[key] = json!([block]),
            }
            return Ok((before, Some(before), chat::message_from_value(format, raw, first)?));
        }
    }
    Ok((before, None, summary_message(format, text, policy, first)?))
}

fn transcript(c: &Conversation, messages: &[usize]) -> String {
    messages.iter().map(|&i| transcript_lines(&c.messages[i])).collect()
}

/// A message's lines in the summarizer's transcript: "role: text", then
/// one "role called name(arguments)" line per tool call.
pub(crate) fn transcript_lines(m: &Message) -> String {
    let mut out = String::new();
    let text = m.text();
    if !text.trim().is_empty() {
        out.push_str(&format!("{}: {}\n", m.role.as_str(), text.trim()));
    }
    for call in &m.tool_calls {
        out.push_str(&format!("{} called {}({})\n", m.role.as_str(), call.name, call.arguments));
    }
    out
}

fn span_id(c: &Conversation, messages: &[usize]) -> String {
    let mut h = rustc_hash::FxHasher::default();
    for &i in messages {
        i.hash(&mut h);
        c.messages[i].raw().to_string().hash(&mut h);
    }
    format!("sum-{:016x}", h.finish())
}

#[cfg(test)]
mod tests;

//! The summarize strategy as a two-phase protocol. ctxkit never calls a
//! model: [`request_summary`] says which messages to summarize and builds a
//! prompt that fits the summarizer's budget; the host calls its model; then
//! [`apply_summary`] puts the summary in place of those messages as one
//! message and re-checks the budget. [`compact_with_digest`] runs both phases
//! with the deterministic digest as the summary, for callers that have no
//! model at hand (the CLI, tests).

use std::hash::{Hash, Hasher};

use serde::Serialize;
use serde_json::{json, Value};

use super::compact::{finish, prepare, select, Compacted, Policy, Prepared};
use super::digest;
use super::repair::{Action, Change};
use super::summary_prompt;
use super::Accountant;
use crate::chat::{self, Conversation, Format, Role};
use crate::{Error, Result, TruncateSide};

pub use super::summary_prompt::DEFAULT_TEMPLATE;

/// What the host must summarize.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SummaryRequest {
    /// Identifies the span and the conversation it came from; `apply_summary`
    /// refuses a summary whose id does not match.
    pub id: String,
    /// Indices, in the working conversation, of the messages to summarize.
    pub messages: Vec<usize>,
    /// Their tokens.
    pub span_tokens: usize,
    /// The prompt to send to the summarizer.
    pub prompt: String,
    /// Its tokens (at most the policy's `summarizer_budget`).
    pub prompt_tokens: usize,
    /// Tokens the summary may take; a longer one is cut. At most the
    /// policy's `summary_max_tokens`, less when the budget has less room.
    /// 0 means there is no room for any summary: `apply_summary` then drops
    /// the span (reported as dropped) and ignores the text.
    pub max_summary_tokens: usize,
}

/// Below this many tokens a summary is not worth a message.
const MIN_SUMMARY_TOKENS: usize = 16;

const LABEL: &str = "[Summary of earlier conversation]\n";

/// The working conversation (repaired, tool outputs cut) to which a request
/// refers, kept by the caller between the two phases.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The request to hand to the host.
    pub request: SummaryRequest,
    prepared_conversation: Conversation,
    prepared_changes: Vec<Change>,
    tokens_before: usize,
    counts: Vec<usize>,
    fixed: usize,
    turns: Vec<super::compact::Turn>,
    target: usize,
}

/// Phase one. `Ok(None)` when the conversation already fits (nothing to do).
pub fn request_summary(c: &Conversation, policy: &Policy, acct: &Accountant) -> Result<Option<Pending>> {
    let p = prepare(c, policy, acct)?;
    let total: usize = p.fixed + p.turns.iter().map(|t| t.tokens).sum::<usize>();
    if total <= p.target {
        return Ok(None);
    }
    // The summary must fit beside what is always kept, framing included.
    let pinned: usize = p.turns.iter().filter(|t| t.pinned).map(|t| t.tokens).sum();
    let label = chat::message_from_value(p.work.format, json!({"role": "user", "content": LABEL}), 0)?;
    let overhead = acct.message(&label)?;
    let room = p.target.saturating_sub(p.fixed + pinned + overhead);
    let cap = policy.summary_max_tokens.min(room);
    let cap = if cap < MIN_SUMMARY_TOKENS { 0 } else { cap };
    let reserve = if cap == 0 { 0 } else { cap + overhead };
    let budget = p.target.saturating_sub(p.fixed + reserve);
    let keep = select(&p.turns, &Policy { strategy: super::Strategy::Recency, ..policy.clone() }, budget, &[]);
    let messages: Vec<usize> =
        p.turns.iter().zip(&keep).filter(|(_, k)| !**k).flat_map(|(t, _)| t.start..t.end).collect();
    if messages.is_empty() {
        return Ok(None);
    }
    let span_tokens = messages.iter().map(|&i| p.counts[i]).sum();
    let cap = if cap == 0 { 0 } else { summary_prompt::summary_cap(cap, span_tokens).max(MIN_SUMMARY_TOKENS.min(cap)) };
    let transcript = transcript(&p.work, &messages);
    let template = policy.summary_template.as_deref().unwrap_or(summary_prompt::DEFAULT_TEMPLATE);
    let tok = acct.tokenizer();
    let span: Vec<_> = messages.iter().map(|&i| p.work.messages[i].clone()).collect();
    let scaffold = |room: usize| -> Result<String> {
        let budget = policy.digest.budget(room);
        Ok(digest::build(&span, &digest::round_starts(&span), tok, budget, &policy.digest.sections)?.text)
    };
    let prompt = summary_prompt::build(template, cap, scaffold, &transcript, policy.summarizer_budget, tok)?;
    let prompt_tokens = tok.count(&prompt)?;
    let id = span_id(&p.work, &messages);
    let Prepared { work, changes, tokens_before, counts, fixed, turns, target, .. } = p;
    Ok(Some(Pending {
        request: SummaryRequest { id, messages, span_tokens, prompt, prompt_tokens, max_summary_tokens: cap },
        prepared_conversation: work,
        prepared_changes: changes,
        tokens_before,
        counts,
        fixed,
        turns,
        target,
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
    let req = &pending.request;
    if id != req.id {
        return Err(Error::invalid_argument(format!(
            "summary id '{id}' does not match the pending request '{}'",
            req.id
        )));
    }
    let work = &pending.prepared_conversation;
    let tok = acct.tokenizer();
    let cut = tok.truncate(summary.trim(), req.max_summary_tokens, TruncateSide::Head, None)?;
    let text = format!("{LABEL}{}", cut.text);
    let mut changes = pending.prepared_changes.clone();
    let first = req.messages[0];
    let mut out = work.clone();
    out.messages.clear();
    let no_room = req.max_summary_tokens == 0;
    let mut pending_summary = (!no_room).then_some(text);
    let mut tokens_after = pending.fixed;
    for (i, m) in work.messages.iter().enumerate() {
        if req.messages.contains(&i) {
            let (action, detail) = if no_room {
                (Action::DroppedMessage, "dropped: the budget has no room for a summary".to_owned())
            } else {
                (Action::Summarized, format!("replaced by the summary at message {first}"))
            };
            changes.push(Change { action, index: i, id: None, tokens: acct.message(m)?, detail });
            continue;
        }
        if i > first {
            if let Some(s) = pending_summary.take() {
                let (msg, merged) = place(work.format, &s, Some(m), i)?;
                let tokens = tok.count(&s)?;
                tokens_after += acct.message(&msg)?;
                changes.push(Change {
                    action: Action::InsertedSummary,
                    index: first,
                    id: Some(req.id.clone()),
                    tokens,
                    detail: format!(
                        "summary of {} messages ({} tokens){}",
                        req.messages.len(),
                        req.span_tokens,
                        if cut.truncated { ", cut to its budget" } else { "" }
                    ),
                });
                out.messages.push(msg);
                if merged {
                    continue;
                }
            }
        }
        tokens_after += pending.counts[i];
        out.messages.push(m.clone());
    }
    if let Some(s) = pending_summary.take() {
        let msg = place(work.format, &s, None, work.messages.len())?.0;
        tokens_after += acct.message(&msg)?;
        out.messages.push(msg);
    }
    finish(
        out,
        changes,
        pending.tokens_before,
        tokens_after,
        pending.fixed,
        &pending.turns,
        pending.target,
        policy,
        acct,
    )
}

/// Both phases with the deterministic digest as the summary.
pub fn compact_with_digest(c: &Conversation, policy: &Policy, acct: &Accountant) -> Result<Compacted> {
    let Some(pending) = request_summary(c, policy, acct)? else {
        let p = prepare(c, policy, acct)?;
        let Prepared { work, changes, counts, fixed, turns, target, tokens_before, .. } = p;
        let after = fixed + counts.iter().sum::<usize>();
        return finish(work, changes, tokens_before, after, fixed, &turns, target, policy, acct);
    };
    let work = &pending.prepared_conversation;
    let msgs: Vec<_> = pending.request.messages.iter().map(|&i| work.messages[i].clone()).collect();
    let budget = policy.digest.budget(pending.request.max_summary_tokens);
    let text =
        digest::build(&msgs, &digest::round_starts(&msgs), acct.tokenizer(), budget, &policy.digest.sections)?.text;
    apply_summary(&pending, &pending.request.id.clone(), &text, policy, acct)
}

/// The summary as a message. Anthropic needs alternation, so there the
/// summary joins the next user message as a leading text block (after any
/// tool results), even when that message is the latest user turn: its own
/// content is kept intact, and the manifest's `inserted_summary` entry says
/// where the summary went.
fn place(format: Format, text: &str, next: Option<&chat::Message>, index: usize) -> Result<(chat::Message, bool)> {
    if format == Format::Anthropic {
        if let Some(next) = next.filter(|m| m.role == Role::User) {
            let mut raw = next.raw.clone();
            let block = json!({"type": "text", "text": text});
            match raw.get_mut("content") {
                Some(Value::Array(blocks)) => {
                    // After leading tool results, which must come first.
                    let at = blocks
                        .iter()
                        .take_while(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                        .count();
                    blocks.insert(at, block);
                }
                Some(other) => {
                    let old = other.take();
                    *other = json!([block, {"type": "text", "text": old.as_str().unwrap_or_default()}]);
                }
                None => raw["content"] = json!([block]),
            }
            return Ok((chat::message_from_value(format, raw, index)?, true));
        }
    }
    Ok((chat::message_from_value(format, json!({"role": "user", "content": text}), index)?, false))
}

fn transcript(c: &Conversation, messages: &[usize]) -> String {
    let mut out = String::new();
    for &i in messages {
        let m = &c.messages[i];
        let text = m.text();
        if !text.trim().is_empty() {
            out.push_str(&format!("{}: {}\n", m.role.as_str(), text.trim()));
        }
        for call in &m.tool_calls {
            out.push_str(&format!("{} called {}({})\n", m.role.as_str(), call.name, call.arguments));
        }
    }
    out
}

fn span_id(c: &Conversation, messages: &[usize]) -> String {
    let mut h = rustc_hash::FxHasher::default();
    for &i in messages {
        i.hash(&mut h);
        c.messages[i].raw.to_string().hash(&mut h);
    }
    format!("sum-{:016x}", h.finish())
}

#[cfg(test)]
mod tests;

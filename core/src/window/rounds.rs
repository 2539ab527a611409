//! Rounds: the unit compaction keeps, masks or drops, and what protects a
//! round whatever the budget. Every strategy (recency, relevance, hybrid,
//! summarize) works on these, so the logic lives once, here.
//!
//! A round is one message together with the messages that carry the results
//! of its tool calls: an OpenAI assistant message and the `tool` messages
//! after it, or an Anthropic assistant message and the user message after it
//! (which carries its `tool_result` blocks, and in a strictly alternating
//! history is the only thing that may follow it). Any other message is a
//! round on its own. In the Responses format, where each call and each
//! output is an item of its own, a round is the run of model-side items
//! (reasoning, messages, parallel calls) and the outputs after them. On a
//! repaired history (results right after their
//! calls) keeping or dropping whole rounds can never separate a call from
//! its result, parallel calls included, and in an alternating Anthropic
//! history it keeps the alternation: the rounds are one user message and
//! then assistant-user pairs.
//!
//! Unlike the user *turn* (a user message through everything up to the next
//! one), a round is small in an agent loop: one task and then hundreds of
//! tool rounds is one turn but hundreds of rounds, which is what lets
//! compaction shorten a loop that never returns to the user.

use super::manifest::{Protected, Reason};
use crate::chat::{Conversation, Format, Message, Part, Role};

/// One round of the working conversation.
#[derive(Debug, Clone)]
pub(super) struct Round {
    /// First message (index into the working conversation).
    pub(super) start: usize,
    /// One past the last message.
    pub(super) end: usize,
    /// Tokens of its messages as they stand (tool outputs already cut).
    pub(super) tokens: usize,
    /// Tokens with every maskable result masked (`tokens` when none is).
    pub(super) min_tokens: usize,
    /// Why it is kept whatever the budget; None when it may go.
    pub(super) protected: Option<Reason>,
}

/// What protects rounds, from the policy, with pins already mapped to
/// working indices.
pub(super) struct Protection<'a> {
    /// System and developer messages are kept (`Policy::keep_system`);
    /// when false they are ordinary rounds.
    pub(super) keep_system: bool,
    pub(super) keep_first: usize,
    pub(super) keep_last_rounds: usize,
    pub(super) keep_last_turns: usize,
    pub(super) keep_last_messages: usize,
    pub(super) pinned: &'a [usize],
    /// Messages holding a call that awaits its result (`pending_calls`).
    pub(super) awaiting: &'a [usize],
    /// The first line of a summary message: a summary is not something a
    /// person said, so it is never the task or the latest user message
    /// (else a previous summary would be kept whole forever, and never
    /// folded into the next).
    pub(super) summary_label: &'a str,
}

/// Whether `m` is a summary turnfit inserted (its text starts with `label`).
pub(super) fn is_summary(m: &Message, label: &str) -> bool {
    let label = label.trim();
    !label.is_empty()
        && m.parts.first().is_some_and(|p| matches!(p, Part::Text(t) if t.trim_start().starts_with(label)))
}

/// Whether `m` is something a person said: a user message that is not only
/// tool results.
pub(super) fn is_user_input(m: &Message) -> bool {
    m.role == Role::User
        && m.tool_call_id.is_none()
        && (m.parts.is_empty() || m.parts.iter().any(|p| !matches!(p, Part::ToolResult { .. })))
}

/// Round boundaries as (start, end) pairs covering every message in order.
pub(super) fn bounds(c: &Conversation) -> Vec<(usize, usize)> {
    let msgs = &c.messages;
    let mut out = Vec::new();
    let mut i = 0;
    while i < msgs.len() {
        let start = i;
        i += 1;
        match c.format {
            Format::OpenAi => {
                while i < msgs.len() && matches!(msgs[i].role, Role::Tool | Role::Function) {
                    i += 1;
                }
            }
            // AI SDK: the model's message, then its `tool` messages (the
            // SDK merges consecutive ones before the provider sees them).
            Format::AiSdk => {
                if msgs[start].role == Role::Assistant {
                    while i < msgs.len() && msgs[i].role == Role::Tool {
                        i += 1;
                    }
                }
            }
            Format::Anthropic | Format::Gemini | Format::Bedrock => {
                if msgs[start].role == Role::Assistant && i < msgs.len() && msgs[i].role == Role::User {
                    i += 1;
                }
            }
            // Responses: every item is a message. The model's side of a
            // round (messages, reasoning, parallel calls, server tool items)
            // then the outputs after it, so reasoning stays with its calls.
            Format::Responses => {
                if msgs[start].role == Role::Assistant {
                    while i < msgs.len() && msgs[i].role == Role::Assistant {
                        i += 1;
                    }
                }
                while i < msgs.len() && msgs[i].role == Role::Tool {
                    i += 1;
                }
            }
        }
        out.push((start, i));
    }
    out
}

/// Splits `c` into rounds, counts them with `counts` (per message) and
/// marks the protected ones. `min_tokens` starts equal to `tokens`; masking
/// lowers it.
pub(super) fn rounds(c: &Conversation, counts: &[usize], prot: &Protection) -> Vec<Round> {
    let msgs = &c.messages;
    let b = bounds(c);
    let users: Vec<usize> =
        (0..msgs.len()).filter(|&i| is_user_input(&msgs[i]) && !is_summary(&msgs[i], prot.summary_label)).collect();
    let task: &[usize] = &users[..prot.keep_first.min(users.len())];
    let latest = users.last().copied();
    let turns_from = (prot.keep_last_turns > 0)
        .then(|| users.len().checked_sub(prot.keep_last_turns.saturating_add(1)).map_or(0, |k| users[k]))
        .filter(|_| !users.is_empty());
    let messages_from = msgs.len().saturating_sub(prot.keep_last_messages);
    let is_system = |r: &(usize, usize)| {
        prot.keep_system && msgs[r.0..r.1].iter().any(|m| matches!(m.role, Role::System | Role::Developer))
    };
    // The newest `keep_last_rounds` rounds that are not kept system messages.
    let recent_from = b
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, r)| !is_system(r))
        .nth(prot.keep_last_rounds.saturating_sub(1))
        .map_or(0, |(k, _)| k);
    b.iter()
        .enumerate()
        .map(|(k, &(start, end))| {
            let within = |i: usize| (start..end).contains(&i);
            let protected = if is_system(&(start, end)) {
                Some(Reason::System)
            } else if task.iter().any(|&i| within(i)) {
                Some(Reason::Task)
            } else if latest.is_some_and(within) {
                Some(Reason::LatestUser)
            } else if prot.pinned.iter().any(|&i| within(i)) {
                Some(Reason::Pinned)
            } else if prot.awaiting.iter().any(|&i| within(i)) {
                Some(Reason::PendingCall)
            } else if prot.keep_last_rounds > 0 && k >= recent_from {
                Some(Reason::RecentRound)
            } else if turns_from.is_some_and(|t| end > t) {
                Some(Reason::RecentTurn)
            } else if prot.keep_last_messages > 0 && end > messages_from {
                Some(Reason::RecentMessage)
            } else {
                None
            };
            let tokens = counts[start..end].iter().sum();
            Round { start, end, tokens, min_tokens: tokens, protected }
        })
        .collect()
}

/// The protected rounds as manifest entries (input indices via `origin`).
pub(super) fn protected_entries(rounds: &[Round], origin: &[Option<usize>]) -> Vec<Protected> {
    rounds
        .iter()
        .filter_map(|r| {
            r.protected.map(|reason| Protected {
                reason,
                messages: (r.start..r.end).filter_map(|i| origin[i]).collect(),
                tokens: r.tokens,
            })
        })
        .collect()
}

/// "task 120 (message 1), latest user message 40 (message 9), ..." for a
/// `DoesNotFit` message: what is protected and what it costs, by reason.
pub(super) fn describe_protected(rounds: &[Round], origin: &[Option<usize>]) -> String {
    let reasons = [
        (Reason::System, "system messages"),
        (Reason::Task, "the task (keep_first)"),
        (Reason::LatestUser, "the latest user message"),
        (Reason::Pinned, "pinned messages"),
        (Reason::PendingCall, "calls awaiting their result"),
        (Reason::RecentRound, "the newest rounds (keep_last_rounds)"),
        (Reason::RecentTurn, "the newest turns (keep_last_turns)"),
        (Reason::RecentMessage, "the newest messages (keep_last_messages)"),
    ];
    let mut parts = Vec::new();
    for (reason, name) in reasons {
        let these: Vec<&Round> = rounds.iter().filter(|r| r.protected == Some(reason)).collect();
        if these.is_empty() {
            continue;
        }
        let tokens: usize = these.iter().map(|r| r.tokens).sum();
        let idx: Vec<usize> = these.iter().flat_map(|r| (r.start..r.end).filter_map(|i| origin[i])).collect();
        let at = match (idx.first(), idx.last()) {
            (Some(a), Some(b)) if a == b => format!("message {a}"),
            (Some(a), Some(b)) => format!("{} messages in {a}..={b}", idx.len()),
            _ => "inserted messages".to_owned(),
        };
        parts.push(format!("{name} {tokens} ({at})"));
    }
    if parts.is_empty() {
        "nothing".to_owned()
    } else {
        parts.join(", ")
    }
}

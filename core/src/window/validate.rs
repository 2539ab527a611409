//! Validation of tool-call structure and role order, as providers check it.
//!
//! OpenAI rejects a request whose assistant `tool_calls` are not each answered
//! by a `tool` message directly after it ("tool_calls that do not have a
//! corresponding ToolMessage"), or a `tool` message that answers nothing.
//! Anthropic rejects a `tool_use` whose `tool_result` is not in the very next
//! user message, and requires messages to alternate starting with the user.
//! [`validate`] reports all of it, located by message index, so a host can
//! show or log it; `repair` fixes what can be fixed mechanically.

use std::collections::HashMap;

use serde::Serialize;

use super::pairing::{Fate, Pairing};
use crate::chat::{Conversation, Format, Role};

/// What is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum IssueKind {
    /// A tool call with no result anywhere.
    OrphanedCall,
    /// A result whose id no tool call in the conversation has.
    OrphanedResult,
    /// Two tool calls share an id.
    DuplicateCallId,
    /// A second result for a call that already has one.
    DuplicateResult,
    /// A result that comes before the call it answers.
    ResultBeforeCall,
    /// A result that is not in the position the provider requires (OpenAI:
    /// directly after its call's assistant message, among other tool
    /// messages; Anthropic: in the user message right after the tool_use).
    MisplacedResult,
    /// A role order the provider rejects (Anthropic: not alternating, or not
    /// starting with user).
    RoleSequence,
}

/// One finding, located by message index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Issue {
    /// What is wrong.
    pub kind: IssueKind,
    /// Index of the message it is about.
    pub index: usize,
    /// The tool-call id involved, if any.
    pub id: Option<String>,
    /// A sentence for humans.
    pub detail: String,
}

/// All structural issues in `c`, in message order. Results are paired with
/// calls per occurrence (see `pairing`), so a reused call id is reported as
/// [`IssueKind::DuplicateCallId`] and any of its calls left unanswered as
/// [`IssueKind::OrphanedCall`].
pub fn validate(c: &Conversation) -> Vec<Issue> {
    let mut issues = Vec::new();
    // A call awaiting approval has no result yet, and needs none.
    let awaiting = crate::chat::awaiting_approval(c);
    let mut first_call: HashMap<&str, usize> =
        HashMap::with_capacity(c.messages.iter().map(|m| m.tool_calls.len()).sum());
    for (i, m) in c.messages.iter().enumerate() {
        for call in m.tool_calls.iter().filter(|call| !crate::chat::id_is_name(c.format, call)) {
            if let Some(&first) = first_call.get(call.id.as_str()) {
                issues.push(issue(
                    IssueKind::DuplicateCallId,
                    i,
                    &call.id,
                    format!("tool call id '{}' is also used by message {first}", call.id),
                ));
            } else {
                first_call.insert(&call.id, i);
            }
        }
    }
    let p = Pairing::of(c);
    let round_of = round_of(c);
    for r in &p.results {
        let (i, id) = (r.msg, r.id);
        match r.fate {
            Fate::Orphan => {
                issues.push(issue(IssueKind::OrphanedResult, i, id, format!("result for '{id}' answers no tool call")))
            }
            Fate::Duplicate => {
                issues.push(issue(IssueKind::DuplicateResult, i, id, format!("second result for '{id}'")))
            }
            Fate::Answers { call, early: true } => issues.push(issue(
                IssueKind::ResultBeforeCall,
                i,
                id,
                format!("result for '{id}' comes before its call in message {}", p.calls[call].msg),
            )),
            Fate::Answers { call, early: false } => {
                let ci = p.calls[call].msg;
                if !in_place(c, &round_of, ci, i) {
                    issues.push(issue(
                        IssueKind::MisplacedResult,
                        i,
                        id,
                        format!("result for '{id}' must directly follow its call in message {ci}"),
                    ));
                }
            }
        }
    }
    // A call answered only by a result before it is unanswered as the
    // provider reads the history.
    for (k, call) in p.calls.iter().enumerate() {
        let answered = matches!(p.answer(k), Some(r) if r.fate == (Fate::Answers { call: k, early: false }));
        let awaits_approval = p.answer(k).is_none() && awaiting.iter().any(|a| a == call.id);
        if !(answered || awaits_approval) {
            issues.push(issue(
                IssueKind::OrphanedCall,
                call.msg,
                call.id,
                format!("tool call '{}' ({}) has no result", call.id, call.name),
            ));
        }
    }
    if matches!(c.format, Format::Anthropic | Format::Bedrock) {
        let mut prev: Option<Role> = None;
        for (i, m) in c.messages.iter().enumerate() {
            let bad = match prev {
                None => m.role != Role::User,
                Some(p) => p == m.role,
            };
            if bad {
                let detail = if prev.is_none() {
                    "the first message must be from the user".to_owned()
                } else {
                    format!("two {} messages in a row", m.role.as_str())
                };
                issues.push(Issue { kind: IssueKind::RoleSequence, index: i, id: None, detail });
            }
            prev = Some(m.role);
        }
    }
    issues.sort_by_key(|x| x.index);
    issues
}

/// Whether a result in message `ri` sits where the provider expects the
/// answer to a call made in message `ci`.
fn in_place(c: &Conversation, round_of: &[usize], ci: usize, ri: usize) -> bool {
    match c.format {
        // Only tool/function messages between the call and this result.
        Format::OpenAi => c.messages[ci + 1..ri].iter().all(|m| matches!(m.role, Role::Tool | Role::Function)),
        Format::Anthropic | Format::Gemini | Format::Bedrock => ri == ci + 1 && c.messages[ri].role == Role::User,
        // In a `tool` message after the call, only `tool` messages between.
        Format::AiSdk => ri > ci && c.messages[ci + 1..=ri].iter().all(|m| m.role == Role::Tool),
        // Among the outputs of the round its call is in.
        Format::Responses => round_of[ri] == round_of[ci],
    }
}

/// Each message's round (`rounds::bounds`), for formats that place results
/// by round; empty for the others.
fn round_of(c: &Conversation) -> Vec<usize> {
    if c.format != Format::Responses {
        return Vec::new();
    }
    let mut out = vec![0; c.messages.len()];
    for (k, (start, end)) in super::rounds::bounds(c).into_iter().enumerate() {
        out[start..end].iter_mut().for_each(|r| *r = k);
    }
    out
}

fn issue(kind: IssueKind, index: usize, id: &str, detail: String) -> Issue {
    Issue { kind, index, id: Some(id.to_owned()), detail }
}

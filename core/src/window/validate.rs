//! Validation of tool-call structure and role order, as providers check it.
//!
//! OpenAI rejects a request whose assistant `tool_calls` are not each answered
//! by a `tool` message directly after it ("tool_calls that do not have a
//! corresponding ToolMessage"), or a `tool` message that answers nothing.
//! Anthropic rejects a `tool_use` whose `tool_result` is not in the very next
//! user message, and requires messages to alternate starting with the user.
//! [`validate`] reports all of it, located by message index, so a host can
//! show or log it; `repair` fixes what can be fixed mechanically.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::chat::{Conversation, Format, Role};

/// What is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

/// All structural issues in `c`, in message order.
pub fn validate(c: &Conversation) -> Vec<Issue> {
    let mut issues = Vec::new();
    let mut call_at: HashMap<&str, usize> = HashMap::new();
    for (i, m) in c.messages.iter().enumerate() {
        for call in &m.tool_calls {
            if let Some(&first) = call_at.get(call.id.as_str()) {
                issues.push(issue(IssueKind::DuplicateCallId, i, &call.id, format!("tool call id '{}' is also used by message {first}", call.id)));
            } else {
                call_at.insert(&call.id, i);
            }
        }
    }
    let mut answered: HashSet<&str> = HashSet::new();
    for (i, m) in c.messages.iter().enumerate() {
        for id in m.result_ids() {
            match call_at.get(id) {
                None => issues.push(issue(IssueKind::OrphanedResult, i, id, format!("result for '{id}' answers no tool call"))),
                Some(&ci) if ci >= i => issues.push(issue(
                    IssueKind::ResultBeforeCall,
                    i,
                    id,
                    format!("result for '{id}' comes before its call in message {ci}"),
                )),
                Some(&ci) => {
                    if !answered.insert(id) {
                        issues.push(issue(IssueKind::DuplicateResult, i, id, format!("second result for '{id}'")));
                    } else if !in_place(c, ci, i) {
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
    }
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, m) in c.messages.iter().enumerate() {
        for call in &m.tool_calls {
            if seen.insert(&call.id) && !answered.contains(call.id.as_str()) {
                issues.push(issue(IssueKind::OrphanedCall, i, &call.id, format!("tool call '{}' ({}) has no result", call.id, call.name)));
            }
        }
    }
    if c.format == Format::Anthropic {
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
fn in_place(c: &Conversation, ci: usize, ri: usize) -> bool {
    match c.format {
        // Only tool/function messages between the call and this result.
        Format::OpenAi => c.messages[ci + 1..ri].iter().all(|m| matches!(m.role, Role::Tool | Role::Function)),
        Format::Anthropic => ri == ci + 1 && c.messages[ri].role == Role::User,
    }
}

fn issue(kind: IssueKind, index: usize, id: &str, detail: String) -> Issue {
    Issue { kind, index, id: Some(id.to_owned()), detail }
}

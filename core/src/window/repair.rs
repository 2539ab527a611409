//! Mechanical repair of tool-call structure, with a manifest of every change.
//!
//! - a tool call with no result gets a synthetic result (configurable text,
//!   flagged as an error for Anthropic) placed where the provider expects it;
//! - a result that answers no call, or answers an already answered call, is
//!   dropped;
//! - a result that is out of place (before its call, or separated from it)
//!   is moved next to its call.
//!
//! Results already in place are left byte for byte as they were. Duplicate
//! call ids and Anthropic role-order problems are reported by `validate` but
//! not changed: fixing them would mean rewriting what the model said.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::{json, Value};

use super::Accountant;
use crate::chat::{self, Conversation, Format, Message, Part, Role};
use crate::Result;

/// The default text of a synthetic tool result.
pub const DEFAULT_SYNTHETIC_RESULT: &str = "Tool call was interrupted before it returned.";

/// What a repair (or, later, a compaction) did to one message or block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A tool result was removed.
    DroppedResult,
    /// A synthetic tool result was inserted.
    SynthesizedResult,
    /// A tool result was moved next to its call.
    MovedResult,
    /// A message left empty by the repair was removed.
    DroppedMessage,
    /// A tool result's content was cut to a token budget.
    TruncatedResult,
    /// A tool result's content was replaced by a placeholder.
    ClearedResult,
    /// A message was replaced by a summary.
    Summarized,
    /// The summary that replaced earlier messages was inserted.
    InsertedSummary,
}

/// One entry of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// What was done.
    pub action: Action,
    /// Index in the input conversation of the message concerned (for a
    /// synthesized result: the message holding the call).
    pub index: usize,
    /// Tool-call id, when the change concerns one.
    pub id: Option<String>,
    /// Tokens of the removed, moved or inserted content (for truncation and
    /// clearing: the tokens taken out).
    pub tokens: usize,
    /// A sentence for humans.
    pub detail: String,
}

/// The repaired conversation and what changed.
#[derive(Debug, Clone)]
pub struct Repaired {
    /// The conversation after repair, in the input's format.
    pub conversation: Conversation,
    /// Every change, in output order.
    pub changes: Vec<Change>,
}

/// Repairs `c` (see the module docs). `synthetic` is the text of inserted
/// results ([`DEFAULT_SYNTHETIC_RESULT`] when None).
pub fn repair(c: &Conversation, synthetic: Option<&str>, acct: &Accountant) -> Result<Repaired> {
    let text = synthetic.unwrap_or(DEFAULT_SYNTHETIC_RESULT);
    let mut call_at: HashMap<&str, usize> = HashMap::new();
    for (i, m) in c.messages.iter().enumerate() {
        for call in &m.tool_calls {
            call_at.entry(call.id.as_str()).or_insert(i);
        }
    }
    let mut r = Repairer { c, acct, text, call_at, changes: Vec::new() };
    let messages = match c.format {
        Format::OpenAi => r.openai()?,
        Format::Anthropic => r.anthropic()?,
    };
    let mut conversation = c.clone();
    conversation.messages = messages;
    Ok(Repaired { conversation, changes: r.changes })
}

struct Repairer<'a> {
    c: &'a Conversation,
    acct: &'a Accountant,
    text: &'a str,
    call_at: HashMap<&'a str, usize>,
    changes: Vec<Change>,
}

impl<'a> Repairer<'a> {
    fn note(&mut self, action: Action, index: usize, id: &str, tokens: usize, detail: String) {
        self.changes.push(Change { action, index, id: Some(id.to_owned()), tokens, detail });
    }

    /// For each result id, the first message that answers it (any position);
    /// later duplicates and orphans are recorded as dropped.
    fn assign(&mut self, results: &[(usize, &'a str)]) -> Result<HashMap<&'a str, usize>> {
        let mut first: HashMap<&str, usize> = HashMap::new();
        for &(i, id) in results {
            if !self.call_at.contains_key(id) {
                let t = self.result_tokens(i, id)?;
                self.note(Action::DroppedResult, i, id, t, format!("result for '{id}' answers no tool call"));
            } else if first.contains_key(id) {
                let t = self.result_tokens(i, id)?;
                self.note(Action::DroppedResult, i, id, t, format!("second result for '{id}'"));
            } else {
                first.insert(id, i);
            }
        }
        Ok(first)
    }

    fn result_tokens(&self, i: usize, id: &str) -> Result<usize> {
        let m = &self.c.messages[i];
        if matches!(m.role, Role::Tool | Role::Function) {
            return self.acct.message(m);
        }
        for p in &m.parts {
            if matches!(p, Part::ToolResult { id: pid, .. } if pid == id) {
                return self.acct.part(p);
            }
        }
        Ok(0)
    }

    fn openai(&mut self) -> Result<Vec<Message>> {
        let msgs = &self.c.messages;
        let results: Vec<(usize, &str)> = msgs
            .iter()
            .enumerate()
            .filter(|(_, m)| matches!(m.role, Role::Tool | Role::Function))
            .filter_map(|(i, m)| m.tool_call_id.as_deref().map(|id| (i, id)))
            .collect();
        let owner = self.assign(&results)?;
        let mut out = Vec::with_capacity(msgs.len());
        for (i, m) in msgs.iter().enumerate() {
            if matches!(m.role, Role::Tool | Role::Function) {
                // A tool message without an id answers nothing we can pair.
                if m.tool_call_id.is_none() {
                    let t = self.acct.message(m)?;
                    self.changes.push(Change {
                        action: Action::DroppedResult,
                        index: i,
                        id: None,
                        tokens: t,
                        detail: "tool message has no tool_call_id".into(),
                    });
                }
                continue; // results are emitted with their call group
            }
            out.push(m.clone());
            if m.tool_calls.is_empty() {
                continue;
            }
            let own: HashSet<&str> = m.tool_calls.iter().map(|t| t.id.as_str()).collect();
            let mut emitted: HashSet<&str> = HashSet::new();
            // Results already in place: the tool messages directly after.
            for (j, r) in msgs.iter().enumerate().skip(i + 1) {
                if !matches!(r.role, Role::Tool | Role::Function) {
                    break;
                }
                if let Some(id) = r.tool_call_id.as_deref() {
                    if own.contains(id) && owner.get(id) == Some(&j) && emitted.insert(id) {
                        out.push(r.clone());
                    }
                }
            }
            for call in &m.tool_calls {
                let id = call.id.as_str();
                if emitted.contains(id) || self.call_at.get(id) != Some(&i) {
                    continue;
                }
                emitted.insert(id);
                if let Some(&j) = owner.get(id) {
                    let t = self.acct.message(&msgs[j])?;
                    self.note(Action::MovedResult, j, id, t, format!("result for '{id}' moved next to its call in message {i}"));
                    out.push(msgs[j].clone());
                } else {
                    let raw = json!({"role": "tool", "tool_call_id": id, "content": self.text});
                    let msg = chat::message_from_value(Format::OpenAi, raw, i)?;
                    let t = self.acct.message(&msg)?;
                    self.note(Action::SynthesizedResult, i, id, t, format!("synthetic result for unanswered call '{id}' ({})", call.name));
                    out.push(msg);
                }
            }
        }
        Ok(out)
    }

    fn anthropic(&mut self) -> Result<Vec<Message>> {
        let msgs = &self.c.messages;
        let mut results: Vec<(usize, &str)> = Vec::new();
        for (i, m) in msgs.iter().enumerate() {
            for id in m.result_ids() {
                results.push((i, id));
            }
        }
        let owner = self.assign(&results)?;
        // Blocks to take out of each message: (message, id) pairs that are
        // dropped, or that belong in another message.
        let mut remove: HashSet<(usize, &str)> = HashSet::new();
        for &(i, id) in &results {
            let keep_here = owner.get(id) == Some(&i) && self.call_at.get(id).is_some_and(|&ci| ci + 1 == i);
            if !keep_here {
                remove.insert((i, id));
            }
        }
        let blocks = result_blocks(msgs);
        // What each call message's answer must receive from elsewhere.
        let mut incoming: HashMap<usize, Vec<Value>> = HashMap::new();
        for (ci, m) in msgs.iter().enumerate() {
            for call in &m.tool_calls {
                let id = call.id.as_str();
                if self.call_at.get(id) != Some(&ci) {
                    continue;
                }
                match owner.get(id) {
                    Some(&ri) if ri == ci + 1 => {}
                    Some(&ri) => {
                        let block = blocks.get(&(ri, id)).map_or(Value::Null, |b| (*b).clone());
                        let t = self.result_tokens(ri, id)?;
                        self.note(Action::MovedResult, ri, id, t, format!("result for '{id}' moved next to its call in message {ci}"));
                        incoming.entry(ci).or_default().push(block);
                    }
                    None => {
                        let block = json!({"type": "tool_result", "tool_use_id": id, "content": self.text, "is_error": true});
                        let t = self.acct.part(&Part::ToolResult { id: id.to_owned(), text: self.text.to_owned(), is_error: true })?;
                        self.note(Action::SynthesizedResult, ci, id, t, format!("synthetic result for unanswered call '{id}' ({})", call.name));
                        incoming.entry(ci).or_default().push(block);
                    }
                }
            }
        }
        let mut out = Vec::with_capacity(msgs.len());
        let mut pending: Option<Vec<Value>> = None;
        for (i, m) in msgs.iter().enumerate() {
            let takes_out = m.result_ids().iter().any(|id| remove.contains(&(i, *id)));
            let mut raw = m.raw.clone();
            if takes_out {
                if let Some(blocks) = raw.get_mut("content").and_then(Value::as_array_mut) {
                    blocks.retain(|b| {
                        let id = b.get("tool_use_id").and_then(Value::as_str);
                        b.get("type").and_then(Value::as_str) != Some("tool_result")
                            || id.is_none_or(|id| !remove.contains(&(i, id)))
                    });
                }
            }
            if let Some(blocks) = pending.take() {
                if m.role == Role::User {
                    insert_results(&mut raw, blocks);
                } else {
                    out.push(user_message(blocks, i)?);
                }
            }
            let emptied = takes_out && raw.get("content").and_then(Value::as_array).is_some_and(Vec::is_empty);
            if emptied {
                let t = self.acct.message(m)?;
                self.changes.push(Change {
                    action: Action::DroppedMessage,
                    index: i,
                    id: None,
                    tokens: t,
                    detail: "message held only results that were dropped or moved".into(),
                });
            } else if takes_out || raw != m.raw {
                out.push(chat::message_from_value(Format::Anthropic, raw, i)?);
            } else {
                out.push(m.clone());
            }
            if let Some(blocks) = incoming.remove(&i) {
                pending = Some(blocks);
            }
        }
        if let Some(blocks) = pending {
            out.push(user_message(blocks, msgs.len())?);
        }
        Ok(out)
    }
}

/// Every message's `tool_result` blocks by (message index, id), the first
/// block of an id in a message winning. Built once per repair: finding a
/// block by scanning its message for every moved result is quadratic when
/// one message answers many parallel calls (scripts/growth.sh,
/// `repair/parallel/anthropic`).
fn result_blocks(msgs: &[Message]) -> HashMap<(usize, &str), &Value> {
    let mut map = HashMap::new();
    for (i, m) in msgs.iter().enumerate() {
        let Some(content) = m.raw.get("content").and_then(Value::as_array) else { continue };
        for b in content {
            if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                if let Some(id) = b.get("tool_use_id").and_then(Value::as_str) {
                    map.entry((i, id)).or_insert(b);
                }
            }
        }
    }
    map
}

/// Puts result blocks after the user message's leading tool results (Anthropic
/// wants tool results before any other content).
fn insert_results(raw: &mut Value, blocks: Vec<Value>) {
    let content = raw.get_mut("content");
    let arr = match content {
        Some(Value::Array(a)) => a,
        Some(other) => {
            let text = other.take();
            *other = if text.is_string() { json!([{"type": "text", "text": text}]) } else { json!([]) };
            other.as_array_mut().expect("just built an array")
        }
        None => {
            raw["content"] = json!([]);
            raw["content"].as_array_mut().expect("just built an array")
        }
    };
    let at = arr.iter().take_while(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")).count();
    // One splice: inserting the blocks one by one shifts the tail once per
    // block (quadratic for many parallel results).
    arr.splice(at..at, blocks);
}

fn user_message(blocks: Vec<Value>, index: usize) -> Result<Message> {
    chat::message_from_value(Format::Anthropic, json!({"role": "user", "content": blocks}), index)
}

#[cfg(test)]
mod tests;

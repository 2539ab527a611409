//! Keeps the order of roles a model's chat template enforces (issue 50).
//!
//! Gemma's, Llama 2's and Mistral's templates raise "roles must alternate"
//! on two user messages in a row, and Gemma's on a conversation whose first
//! turn (after the system prompt) is not a user's. The input alternates (it
//! renders, or the fit refuses it before compacting); compaction can break
//! that: keeping the task and the newest turn while dropping what was
//! between leaves two user messages, a summary in the user role lands
//! beside one, and with `keep_first: 0` the newest rounds may open with an
//! assistant. A fit that returned such a request would be refused by the
//! very template it was counted with, so for those models the compacted
//! conversation is settled before it is counted:
//! - two user (or two assistant) messages in a row are joined into one, the
//!   texts separated by a blank line, nothing dropped (`merged_message`);
//! - messages before the first user message (after the system messages)
//!   are dropped, with the tool results that answer them
//!   (`dropped_message`).
//!
//! Joining rather than dropping keeps every word the budget allowed; it is
//! what hosts do by hand for these models. Only OpenAI Chat messages
//! occur here: a model counted with its template takes nothing else.

use serde_json::{Map, Value};

use super::compact::Compacted;
use super::manifest::{Change, ChangeKind};
use super::Accountant;
use crate::chat::{message_from_value, Format, Message, Role};
use crate::models::TurnOrder;
use crate::Result;

/// Settles `r`'s conversation to `order` (see the module doc), recording
/// each join and drop in its changes.
pub(crate) fn settle(r: &mut Compacted, order: TurnOrder, acct: &Accountant) -> Result<()> {
    if r.conversation.format != Format::OpenAi || (!order.alternate && !order.user_first) {
        return Ok(());
    }
    let origins = r.conversation.origins();
    let mut messages: Vec<(Message, Option<usize>)> =
        std::mem::take(&mut r.conversation.messages).into_iter().zip(origins).collect();
    if order.user_first {
        drop_before_first_user(&mut messages, &mut r.changes, acct)?;
    }
    if order.alternate {
        messages = join_same_roles(messages, &mut r.changes)?;
    }
    r.conversation.messages = messages.into_iter().map(|(m, _)| m).collect();
    Ok(())
}

/// Drops the messages between the system messages and the first user
/// message.
fn drop_before_first_user(
    messages: &mut Vec<(Message, Option<usize>)>,
    changes: &mut Vec<Change>,
    acct: &Accountant,
) -> Result<()> {
    let head = messages.iter().take_while(|(m, _)| matches!(m.role, Role::System | Role::Developer)).count();
    let end = messages[head..].iter().position(|(m, _)| m.role == Role::User).map_or(messages.len(), |p| head + p);
    // A message compaction made has no input index: it is reported at the
    // next input message's.
    let next = messages[end..].iter().find_map(|(_, o)| *o).unwrap_or(0);
    for (m, origin) in &messages[head..end] {
        changes.push(Change {
            action: ChangeKind::DroppedMessage,
            index: origin.unwrap_or(next),
            id: m.tool_call_id.clone(),
            tokens: acct.message(m)?,
            detail: format!(
                "{} message before the first user message: the model's chat template requires a user turn first",
                m.role.as_str()
            ),
        });
    }
    messages.drain(head..end);
    Ok(())
}

/// Joins each user (assistant) message to a user (assistant) message right
/// before it. An assistant message with tool calls takes nothing after it
/// (its results must follow it).
fn join_same_roles(
    messages: Vec<(Message, Option<usize>)>,
    changes: &mut Vec<Change>,
) -> Result<Vec<(Message, Option<usize>)>> {
    let mut out: Vec<(Message, Option<usize>)> = Vec::with_capacity(messages.len());
    for (m, origin) in messages {
        let joins = out.last().is_some_and(|(prev, _)| {
            prev.role == m.role && matches!(m.role, Role::User | Role::Assistant) && prev.tool_calls.is_empty()
        });
        if !joins {
            out.push((m, origin));
            continue;
        }
        let (prev, prev_origin) = out.pop().expect("joins needs a previous message");
        let index = origin.or(prev_origin).unwrap_or(0);
        let joined = message_from_value(Format::OpenAi, joined_value(prev.raw(), m.raw()), index)?;
        changes.push(Change {
            action: ChangeKind::MergedMessage,
            index,
            id: None,
            tokens: 0,
            detail: format!(
                "joined to the {} message before it: the model's chat template requires user and assistant turns \
                 to alternate",
                m.role.as_str()
            ),
        });
        out.push((joined, prev_origin));
    }
    Ok(out)
}

/// `a` with `b`'s content after its own (a blank line between two texts;
/// part arrays concatenated) and `b`'s tool calls.
fn joined_value(a: &Value, b: &Value) -> Value {
    let mut out: Map<String, Value> = a.as_object().cloned().unwrap_or_default();
    let (ca, cb) = (a.get("content").unwrap_or(&Value::Null), b.get("content").unwrap_or(&Value::Null));
    let content = match (ca, cb) {
        (Value::Null, c) | (c, Value::Null) => c.clone(),
        (Value::String(x), Value::String(y)) if x.is_empty() => Value::String(y.clone()),
        (Value::String(x), Value::String(y)) if y.is_empty() => Value::String(x.clone()),
        (Value::String(x), Value::String(y)) => Value::String(format!("{x}\n\n{y}")),
        (x, y) => Value::Array(parts(x).into_iter().chain(parts(y)).collect()),
    };
    out.insert("content".into(), content);
    if let Some(calls) = b.get("tool_calls").filter(|c| !c.is_null()) {
        out.insert("tool_calls".into(), calls.clone());
    }
    Value::Object(out)
}

/// Content as a part array (a string is one text part).
fn parts(content: &Value) -> Vec<Value> {
    match content {
        Value::Array(items) => items.clone(),
        Value::String(s) if s.is_empty() => Vec::new(),
        Value::String(s) => vec![serde_json::json!({"type": "text", "text": s})],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn joins_texts_with_a_blank_line_and_parts_as_arrays() {
        let a = json!({"role": "user", "content": "Task.", "name": "u"});
        assert_eq!(
            joined_value(&a, &json!({"role": "user", "content": "Later."})),
            json!({"role": "user", "content": "Task.\n\nLater.", "name": "u"})
        );
        let b = json!({"role": "user", "content": [{"type": "text", "text": "x"}]});
        assert_eq!(
            joined_value(&a, &b)["content"],
            json!([{"type": "text", "text": "Task."}, {"type": "text", "text": "x"}])
        );
        let calls = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "1"}]});
        let joined = joined_value(&json!({"role": "assistant", "content": "Let me look."}), &calls);
        assert_eq!(joined, json!({"role": "assistant", "content": "Let me look.", "tool_calls": [{"id": "1"}]}));
    }
}

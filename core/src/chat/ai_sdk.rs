//! Vercel AI SDK codec: `ModelMessage` arrays (ai 6: roles `system`,
//! `user`, `assistant`, `tool`; content a string or parts) and the
//! `LanguageModelV3Prompt` a language-model middleware sees (the same JSON
//! shape, with `file` parts in place of `image` ones).
//!
//! A document is a bare array of messages, or `{"messages": [...],
//! "system"?: ..., "tools"?: [...]}` with tools as the provider call gets
//! them (`{"type": "function", "name", "description", "inputSchema"}`).
//! Every message keeps its JSON (ids, `providerOptions` on messages and
//! parts, reasoning signatures, images), written back untouched unless an
//! operation changed it.
//!
//! **Counting** is of what the AI SDK's OpenAI Chat provider sends for the
//! message (`@ai-sdk/openai`'s `convertToOpenAIChatMessages`), so an OpenAI
//! model's count is as exact as a Chat Completions request's: an
//! assistant's text parts are joined into one string, a `tool-call`'s
//! `input` is its `JSON.stringify`, and a `tool` message carrying several
//! `tool-result` parts is sent as one `tool` message per result (counted
//! so, see `Accountant::message`); a result's output is its text
//! (`text`, `error-text`), its JSON (`json`, `error-json`, `content`) or the
//! denial reason (`execution-denied`). Parts the AI SDK never sends to a
//! provider (`tool-approval-request`, and a `tool-approval-response` that is
//! not provider-executed) count nothing. Reasoning parts are counted as
//! thinking (the Chat provider drops them, others send them: counted so the
//! figure is never under). A part of a type this codec does not know is
//! kept as it is and counted by the text it carries. Sent to the Responses
//! API instead (`openai('gpt-4o')`; the fit option `api`), an assistant
//! message is counted as the items that provider sends
//! (`window/accounting/api.rs`).
//!
//! **Pairing.** A `tool-result` answers the `tool-call` with its
//! `toolCallId`; it belongs in a `tool` message after the call with only
//! `tool` messages between them (the AI SDK merges consecutive `tool`
//! messages before the provider sees them). An approval request lives in
//! its call's message, so it goes wherever its call goes; an approval
//! response is a part of a `tool` message, which goes with the results
//! round of its call. A provider-executed call and its result (both in the
//! assistant message) are kept as blocks and not paired.

use serde_json::{json, Map, Value};

use super::{
    bad, block_text, image_size, pdf_pages, str_field, Conversation, Format, Message, Part, Role, Tool, ToolCall,
};
use crate::Result;

/// Part types only the AI SDK writes (a mark of the format).
pub(super) const PART_TYPES: &[&str] =
    &["tool-call", "tool-result", "tool-approval-request", "tool-approval-response", "reasoning"];

pub(super) fn parse(doc: Value) -> Result<Conversation> {
    let Value::Object(mut obj) = doc else {
        let Value::Array(items) = doc else {
            return Err(bad("", "must be an object with 'messages' or an array of messages"));
        };
        let messages = items.into_iter().enumerate().map(|(i, m)| message(m, i)).collect::<Result<Vec<_>>>()?;
        return Ok(Conversation {
            format: Format::AiSdk,
            system: None,
            messages,
            tools: Vec::new(),
            envelope: None,
            raw_system: None,
        });
    };
    let items = match obj.entry("messages").or_insert(Value::Null).take() {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        _ => return Err(bad("messages", "must be an array")),
    };
    let raw_system = obj.get_mut("system").map(Value::take).filter(|v| !v.is_null());
    let system = match &raw_system {
        None => None,
        Some(v) => Some(system_text(v)?),
    };
    let tools = super::take_tools(obj.get_mut("tools"))?;
    let tools = tools.into_iter().enumerate().map(|(i, t)| tool(t, i)).collect::<Result<Vec<_>>>()?;
    let messages = items.into_iter().enumerate().map(|(i, m)| message(m, i)).collect::<Result<Vec<_>>>()?;
    Ok(Conversation { format: Format::AiSdk, system, messages, tools, envelope: Some(obj), raw_system })
}

/// `system`: a string, a system message (`{"role": "system", "content"}`)
/// or an array of them.
fn system_text(v: &Value) -> Result<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Object(o) => match o.get("content") {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(bad("system", "a system message's 'content' must be a string")),
        },
        Value::Array(items) => Ok(items.iter().map(system_text).collect::<Result<Vec<_>>>()?.join("\n")),
        _ => Err(bad("system", "must be a string, a system message or an array of them")),
    }
}

fn tool(raw: Value, i: usize) -> Result<Tool> {
    let path = format!("tools[{i}]");
    let obj = raw.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
    let name = match str_field(obj, "name", &path)? {
        Some(n) => n.to_owned(),
        None => return Err(bad(&path, "has no 'name'")),
    };
    let description = str_field(obj, "description", &path)?.map(str::to_owned);
    let parameters = obj.get("inputSchema").or_else(|| obj.get("parameters")).cloned().unwrap_or(Value::Null);
    Ok(Tool { name, description, parameters, raw })
}

pub(super) fn message(raw: Value, i: usize) -> Result<Message> {
    let path = super::indexed("", "messages", i);
    let obj = raw.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
    let role = match str_field(obj, "role", &path)? {
        Some("system") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => Role::Tool,
        Some(other) => {
            return Err(bad(
                &path,
                format!("unknown role '{other}' (AI SDK messages are system, user, assistant or tool)"),
            ))
        }
        None => return Err(bad(&path, "has no 'role'")),
    };
    let mut m = Message::new(role, None, Vec::new(), Vec::new(), None, Value::Null);
    match obj.get("content") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if role != Role::Tool => m.parts.push(Part::Text(s.clone())),
        Some(Value::Array(parts)) if role != Role::System => {
            // The Chat provider sends an assistant's text parts as one string.
            let mut joined: Option<String> = None;
            for (j, p) in parts.iter().enumerate() {
                let path = super::indexed(&path, ".content", j);
                part(p, &path, &mut m, &mut joined)?;
            }
            if let Some(text) = joined {
                m.parts.insert(0, Part::Text(text));
            }
        }
        Some(_) => {
            let what = match role {
                Role::System => "a string",
                Role::Tool => "an array of parts",
                _ => "a string or an array of parts",
            };
            return Err(bad(&path, format!("'content' must be {what}")));
        }
    }
    m.raw = raw;
    Ok(m)
}

fn part(p: &Value, path: &str, m: &mut Message, joined: &mut Option<String>) -> Result<()> {
    let obj = p.as_object().ok_or_else(|| bad(path, "must be an object"))?;
    let provider_executed = obj.get("providerExecuted").and_then(Value::as_bool) == Some(true);
    let kind = str_field(obj, "type", path)?.ok_or_else(|| bad(path, "has no 'type'"))?;
    match (m.role, kind) {
        (_, "text") => {
            let text = str_field(obj, "text", path)?.unwrap_or_default();
            if m.role == Role::Assistant {
                joined.get_or_insert_with(String::new).push_str(text);
            } else {
                m.parts.push(Part::Text(text.to_owned()));
            }
        }
        (Role::Assistant, "reasoning") => {
            m.parts.push(Part::Thinking(str_field(obj, "text", path)?.unwrap_or_default().to_owned()))
        }
        (Role::Assistant, "tool-call") if !provider_executed => {
            let id = str_field(obj, "toolCallId", path)?.ok_or_else(|| bad(path, "tool-call has no 'toolCallId'"))?;
            let name = str_field(obj, "toolName", path)?.ok_or_else(|| bad(path, "tool-call has no 'toolName'"))?;
            // `JSON.stringify(input)`: compact, keys in their order.
            let arguments = obj.get("input").map_or_else(|| "{}".to_owned(), Value::to_string);
            m.tool_calls.push(ToolCall { id: id.to_owned(), name: name.to_owned(), arguments });
        }
        (Role::Tool, "tool-result") => {
            let id = str_field(obj, "toolCallId", path)?.ok_or_else(|| bad(path, "tool-result has no 'toolCallId'"))?;
            let (text, is_error) = output_text(obj.get("output"), path)?;
            m.parts.push(Part::ToolResult { id: id.to_owned(), text, is_error });
        }
        // Never sent to the provider: the AI SDK filters them out.
        (Role::Assistant, "tool-approval-request") => {}
        (Role::Tool, "tool-approval-response") if !provider_executed => {}
        (_, "image") => {
            let data = obj.get("image").and_then(Value::as_str);
            m.parts.push(image(data, obj));
        }
        (_, "file") => {
            let mime = str_field(obj, "mediaType", path)?.unwrap_or_default();
            let data = obj.get("data").and_then(Value::as_str);
            m.parts.push(if mime.starts_with("image/") {
                image(data, obj)
            } else if mime == "application/pdf" {
                match data.filter(|d| !d.contains("://")) {
                    Some(d) => Part::Pdf { pages: pdf_pages(d.rsplit(',').next().unwrap_or(d)) },
                    None => Part::Attachment("file"),
                }
            } else if mime.starts_with("audio/") {
                Part::Attachment("audio")
            } else {
                Part::Attachment("file")
            });
        }
        // A provider-executed call or result, an approval response of a
        // provider-executed tool, a part type this codec does not know:
        // kept as it is, counted by its text.
        (_, other) => m.parts.push(Part::Block { kind: other.to_owned(), text: block_text(p) }),
    }
    Ok(())
}

/// An image part (`image`, or a `file` with an image media type): sized
/// from its header when the data is inline; detail from
/// `providerOptions.openai.imageDetail`.
fn image(data: Option<&str>, obj: &Map<String, Value>) -> Part {
    let inline = data.filter(|d| !d.starts_with("http://") && !d.starts_with("https://"));
    let (width, height) = inline.and_then(image_size).map_or((None, None), |(w, h)| (Some(w), Some(h)));
    let detail = obj
        .get("providerOptions")
        .and_then(|o| o.get("openai"))
        .and_then(|o| o.get("imageDetail"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Part::Image { detail, width, height }
}

/// The text a result's `output` is sent as, and whether it is an error.
fn output_text(output: Option<&Value>, path: &str) -> Result<(String, bool)> {
    let Some(o) = output.and_then(Value::as_object) else {
        return Err(bad(path, "tool-result has no 'output' object"));
    };
    let kind = str_field(o, "type", path)?.ok_or_else(|| bad(path, "tool-result 'output' has no 'type'"))?;
    let value = o.get("value");
    Ok(match kind {
        "text" | "error-text" => {
            let text =
                value.and_then(Value::as_str).ok_or_else(|| bad(path, "a text output's 'value' must be a string"))?;
            (text.to_owned(), kind == "error-text")
        }
        "execution-denied" => {
            (o.get("reason").and_then(Value::as_str).unwrap_or("Tool execution denied.").to_owned(), true)
        }
        // json, error-json, content, and a type this codec does not know.
        _ => (value.map_or_else(|| "null".to_owned(), Value::to_string), kind == "error-json"),
    })
}

/// Writes `text` as the output of result part `p`, keeping whether it was
/// an error.
pub(super) fn set_output(p: &mut Value, text: &str) {
    let error = p
        .get("output")
        .and_then(|o| o.get("type"))
        .and_then(Value::as_str)
        .is_some_and(|t| t.starts_with("error") || t == "execution-denied");
    if let Some(obj) = p.as_object_mut() {
        obj.insert("output".into(), json!({"type": if error { "error-text" } else { "text" }, "value": text}));
    }
}

/// The result part answering call `id` of message `call`, as an error.
pub(super) fn synthetic_result(call: &Message, id: &str, text: &str) -> Value {
    let name = call.tool_calls.iter().find(|c| c.id == id).map_or("", |c| c.name.as_str());
    json!({"type": "tool-result", "toolCallId": id, "toolName": name, "output": {"type": "error-text", "value": text}})
}

/// Whether a part is a tool result, or with `calls` also any tool call,
/// result or approval part.
pub(super) fn is_tool_part(p: &Value, calls: bool) -> bool {
    match p.get("type").and_then(Value::as_str) {
        Some("tool-result") => true,
        Some("tool-call" | "tool-approval-request" | "tool-approval-response") => calls,
        _ => false,
    }
}

/// Whether a message carries a part only the AI SDK writes.
pub(super) fn looks_like(item: &Value) -> bool {
    item.get("content").and_then(Value::as_array).is_some_and(|ps| {
        ps.iter().any(|p| p.get("type").and_then(Value::as_str).is_some_and(|t| PART_TYPES.contains(&t)))
    })
}

#[cfg(test)]
mod tests;

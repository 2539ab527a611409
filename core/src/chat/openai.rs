//! OpenAI Chat Completions codec.

use serde_json::{Map, Value};

use super::{bad, block_text, image_size, str_field, Conversation, Format, Message, Part, Role, Tool, ToolCall};
use crate::Result;

pub(super) fn parse(doc: Value) -> Result<Conversation> {
    let (items, tools, envelope) = match doc {
        Value::Array(items) => (items, Vec::new(), None),
        Value::Object(mut obj) => {
            let items = match obj.get_mut("messages").map(|v| std::mem::replace(v, Value::Array(Vec::new()))) {
                Some(Value::Array(items)) => items,
                Some(_) => return Err(bad("messages", "must be an array")),
                None => return Err(bad("", "has no 'messages' array (and is not a bare messages array)")),
            };
            let tools = super::take_tools(obj.get_mut("tools"))?;
            (items, tools, Some(obj))
        }
        _ => return Err(bad("", "must be an object with 'messages' or an array of messages")),
    };
    let messages = items.into_iter().enumerate().map(|(i, m)| message(m, i)).collect::<Result<Vec<_>>>()?;
    let tools = tools.into_iter().enumerate().map(|(i, t)| tool(t, i)).collect::<Result<Vec<_>>>()?;
    Ok(Conversation { format: Format::OpenAi, system: None, messages, tools, envelope, raw_system: None })
}

pub(super) fn message(raw: Value, i: usize) -> Result<Message> {
    let path = super::indexed("", "messages", i);
    let obj = raw.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
    let role = match str_field(obj, "role", &path)? {
        Some("system") => Role::System,
        Some("developer") => Role::Developer,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => Role::Tool,
        Some("function") => Role::Function,
        Some(other) => return Err(bad(&path, format!("unknown role '{other}'"))),
        None => return Err(bad(&path, "has no 'role'")),
    };
    let name = str_field(obj, "name", &path)?.map(str::to_owned);
    let parts = content(obj.get("content"), &path)?;
    let mut tool_calls = Vec::new();
    if let Some(calls) = obj.get("tool_calls").filter(|v| !v.is_null()) {
        let calls = calls.as_array().ok_or_else(|| bad(&path, "'tool_calls' must be an array"))?;
        for (j, c) in calls.iter().enumerate() {
            tool_calls.push(call(c, &super::indexed(&path, ".tool_calls", j))?);
        }
    }
    if let Some(fc) = obj.get("function_call").and_then(Value::as_object) {
        // Legacy function calling pairs by name with the next `function` message.
        let name = str_field(fc, "name", &path)?.unwrap_or_default().to_owned();
        let arguments = str_field(fc, "arguments", &path)?.unwrap_or_default().to_owned();
        tool_calls.push(ToolCall { id: name.clone(), name, arguments });
    }
    // Only a `tool` message answers a call by `tool_call_id` (a legacy
    // `function` message by its name). The field on any other role is not
    // a result: it stays in `raw`, written back untouched, and is otherwise
    // ignored (found by the `window_fit` fuzz target: a user message with a
    // stray `tool_call_id` was reported as an orphaned result that repair
    // did not remove, so `fit` returned a history that failed validation).
    let tool_call_id = match role {
        Role::Function => name.clone(),
        Role::Tool => str_field(obj, "tool_call_id", &path)?.map(str::to_owned),
        _ => None,
    };
    Ok(Message::new(role, name, parts, tool_calls, tool_call_id, raw))
}

fn call(c: &Value, path: &str) -> Result<ToolCall> {
    let obj = c.as_object().ok_or_else(|| bad(path, "must be an object"))?;
    let id = str_field(obj, "id", path)?.ok_or_else(|| bad(path, "has no 'id'"))?.to_owned();
    if let Some(custom) = obj.get("custom").and_then(Value::as_object) {
        // A custom tool call: free-form `input` instead of JSON arguments.
        let name = str_field(custom, "name", path)?.unwrap_or_default().to_owned();
        let arguments = str_field(custom, "input", path)?.unwrap_or_default().to_owned();
        return Ok(ToolCall { id, name, arguments });
    }
    let f = obj
        .get("function")
        .and_then(Value::as_object)
        .ok_or_else(|| bad(path, "has no 'function' object (nor a 'custom' one)"))?;
    let name = str_field(f, "name", path)?.unwrap_or_default().to_owned();
    let arguments = match f.get("arguments") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    Ok(ToolCall { id, name, arguments })
}

fn content(v: Option<&Value>, path: &str) -> Result<Vec<Part>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![Part::Text(s.clone())]),
        Some(Value::Array(parts)) => {
            parts.iter().enumerate().map(|(j, p)| part(p, &super::indexed(path, ".content", j))).collect()
        }
        Some(_) => Err(bad(path, "'content' must be a string, an array of parts or null")),
    }
}

fn part(p: &Value, path: &str) -> Result<Part> {
    let obj = p.as_object().ok_or_else(|| bad(path, "must be an object"))?;
    Ok(match str_field(obj, "type", path)? {
        Some("text") => Part::Text(str_field(obj, "text", path)?.unwrap_or_default().to_owned()),
        Some("refusal") => Part::Text(str_field(obj, "refusal", path)?.unwrap_or_default().to_owned()),
        Some("image_url") => {
            let img = obj.get("image_url").and_then(Value::as_object);
            let dim = |k: &str| {
                img.and_then(|i| i.get(k))
                    .or_else(|| obj.get(k))
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
            };
            let (mut width, mut height) = (dim("width"), dim("height"));
            if width.is_none() || height.is_none() {
                let url = img.and_then(|i| i.get("url")).and_then(Value::as_str);
                if let Some((w, h)) = url.and_then(image_size) {
                    (width, height) = (Some(w), Some(h));
                }
            }
            Part::Image {
                detail: img.and_then(|i| i.get("detail")).and_then(Value::as_str).map(str::to_owned),
                width,
                height,
            }
        }
        Some("input_audio") => Part::Attachment("audio"),
        Some("file") => Part::Attachment("file"),
        Some(kind) => Part::Block { kind: kind.to_owned(), text: block_text(p) },
        None => return Err(bad(path, "has no 'type'")),
    })
}

pub(super) fn tool(raw: Value, i: usize) -> Result<Tool> {
    tool_at(raw, format!("tools[{i}]"))
}

/// One entry of the legacy `functions` parameter, read as a tool (errors
/// name `functions[i]`).
pub(super) fn legacy_function(raw: Value, i: usize) -> Result<Tool> {
    tool_at(raw, format!("functions[{i}]"))
}

fn tool_at(raw: Value, path: String) -> Result<Tool> {
    let obj = raw.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
    // A function tool, a `custom` tool (free-form input, an optional
    // grammar `format`), a legacy `functions` entry (the function object
    // itself) or a provider's own tool type (`openrouter:web_search`),
    // named by its type.
    let f: &Map<String, Value> = match obj.get("function").or_else(|| obj.get("custom")).and_then(Value::as_object) {
        Some(f) => f,
        None => obj,
    };
    let name = match str_field(f, "name", &path)? {
        Some(n) => n.to_owned(),
        None => match str_field(obj, "type", &path)? {
            Some(t) if t != "function" => t.to_owned(),
            _ => return Err(bad(&path, "has no function 'name'")),
        },
    };
    let description = str_field(f, "description", &path)?.map(str::to_owned);
    let parameters = f.get("parameters").or_else(|| f.get("format")).cloned().unwrap_or(Value::Null);
    Ok(Tool { name, description, parameters, raw })
}

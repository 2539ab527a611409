//! Anthropic Messages codec.

use serde_json::Value;

use super::{
    bad, block_text, image_size, pdf_pages, str_field, Conversation, Format, Message, Part, Role, Tool, ToolCall,
};
use crate::Result;

pub(super) fn parse(doc: Value) -> Result<Conversation> {
    let Value::Object(mut obj) = doc else {
        return Err(bad("", "must be an object with 'messages'"));
    };
    let items = match obj.get_mut("messages").map(|v| std::mem::replace(v, Value::Array(Vec::new()))) {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(bad("messages", "must be an array")),
        None => return Err(bad("", "has no 'messages' array")),
    };
    let raw_system = obj.get_mut("system").map(Value::take).filter(|v| !v.is_null());
    let system = match &raw_system {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(blocks)) => Some(
            blocks
                .iter()
                .enumerate()
                .map(|(j, b)| {
                    let mut out = Vec::new();
                    part(b, &format!("system[{j}]"), &mut out)?;
                    match out.pop() {
                        Some(Part::Text(t)) if out.is_empty() => Ok(t),
                        _ => Err(bad(&format!("system[{j}]"), "system blocks must be text")),
                    }
                })
                .collect::<Result<Vec<_>>>()?
                .join("\n"),
        ),
        Some(_) => return Err(bad("system", "must be a string or an array of text blocks")),
    };
    let tools = super::take_tools(obj.get_mut("tools"))?;
    let messages = items.into_iter().enumerate().map(|(i, m)| message(m, i)).collect::<Result<Vec<_>>>()?;
    let tools = tools.into_iter().enumerate().map(|(i, t)| tool(t, i)).collect::<Result<Vec<_>>>()?;
    Ok(Conversation { format: Format::Anthropic, system, messages, tools, envelope: Some(obj), raw_system })
}

pub(super) fn message(raw: Value, i: usize) -> Result<Message> {
    let path = super::indexed("", "messages", i);
    let obj = raw.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
    let role = match str_field(obj, "role", &path)? {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        // Accepted by the API in the middle of `messages` (recorded requests
        // answered 200); counted and kept like a user message.
        Some("system") => Role::System,
        Some(other) => {
            return Err(bad(
                &path,
                format!("unknown role '{other}' (Anthropic messages are user, assistant or system)"),
            ))
        }
        None => return Err(bad(&path, "has no 'role'")),
    };
    let mut parts = Vec::new();
    let mut tool_calls = Vec::new();
    match obj.get("content") {
        Some(Value::String(s)) => parts.push(Part::Text(s.clone())),
        Some(Value::Array(blocks)) => {
            for (j, b) in blocks.iter().enumerate() {
                let bpath = super::indexed(&path, ".content", j);
                if b.get("type").and_then(Value::as_str) == Some("tool_use") {
                    tool_calls.push(tool_use(b, &bpath)?);
                } else {
                    part(b, &bpath, &mut parts)?;
                }
            }
        }
        None | Some(Value::Null) => {}
        Some(_) => return Err(bad(&path, "'content' must be a string or an array of blocks")),
    }
    Ok(Message::new(role, None, parts, tool_calls, None, raw))
}

fn tool_use(b: &Value, path: &str) -> Result<ToolCall> {
    let obj = b.as_object().ok_or_else(|| bad(path, "must be an object"))?;
    let id = str_field(obj, "id", path)?.ok_or_else(|| bad(path, "tool_use has no 'id'"))?.to_owned();
    let name = str_field(obj, "name", path)?.unwrap_or_default().to_owned();
    let arguments = obj.get("input").map_or_else(String::new, Value::to_string);
    Ok(ToolCall { id, name, arguments })
}

/// Reads one content block into `out`: one part, or for a `tool_result`
/// the result followed by the images and documents nested in it (so they
/// are counted; pairing looks at the result alone).
fn part(b: &Value, path: &str, out: &mut Vec<Part>) -> Result<()> {
    let obj = b.as_object().ok_or_else(|| bad(path, "must be an object"))?;
    let p = match str_field(obj, "type", path)? {
        Some("text") => Part::Text(str_field(obj, "text", path)?.unwrap_or_default().to_owned()),
        Some("image") => image(obj),
        Some("document") => match obj.get("source").and_then(|s| s.get("type")).and_then(Value::as_str) {
            Some("text" | "content") => Part::Block { kind: "document".into(), text: block_text(b) },
            Some("base64") => match obj.get("source").and_then(|s| s.get("data")).and_then(Value::as_str) {
                Some(data) => Part::Pdf { pages: pdf_pages(data) },
                None => Part::Attachment("document"),
            },
            _ => Part::Attachment("document"),
        },
        Some("thinking") => Part::Thinking(str_field(obj, "thinking", path)?.unwrap_or_default().to_owned()),
        Some("redacted_thinking") => Part::RedactedThinking(str_field(obj, "data", path)?.map_or(0, str::len)),
        Some("tool_result") => {
            let id =
                str_field(obj, "tool_use_id", path)?.ok_or_else(|| bad(path, "tool_result has no 'tool_use_id'"))?;
            let mut nested = Vec::new();
            let text = match obj.get("content") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(inner)) => {
                    let mut texts = Vec::new();
                    for (k, c) in inner.iter().enumerate() {
                        let mut one = Vec::new();
                        part(c, &format!("{path}.content[{k}]"), &mut one)?;
                        for p in one {
                            match p {
                                Part::Text(t) | Part::Block { text: t, .. } => texts.push(t),
                                other => nested.push(other),
                            }
                        }
                    }
                    texts.join("\n")
                }
                Some(_) => return Err(bad(path, "tool_result 'content' must be a string or blocks")),
            };
            let is_error = obj.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            out.push(Part::ToolResult { id: id.to_owned(), text, is_error });
            out.extend(nested);
            return Ok(());
        }
        Some(kind) => Part::Block { kind: kind.to_owned(), text: block_text(b) },
        None => return Err(bad(path, "has no 'type'")),
    };
    out.push(p);
    Ok(())
}

fn image(obj: &serde_json::Map<String, Value>) -> Part {
    let (mut width, mut height) = (dim(obj, "width"), dim(obj, "height"));
    if width.is_none() || height.is_none() {
        let data = obj.get("source").and_then(|s| s.get("data")).and_then(Value::as_str);
        if let Some((w, h)) = data.and_then(image_size) {
            (width, height) = (Some(w), Some(h));
        }
    }
    Part::Image { detail: None, width, height }
}

fn dim(obj: &serde_json::Map<String, Value>, k: &str) -> Option<u32> {
    obj.get(k).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok())
}

fn tool(raw: Value, i: usize) -> Result<Tool> {
    let path = format!("tools[{i}]");
    let obj = raw.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
    // Server tools and MCP toolsets name themselves by their type or server.
    let name = match str_field(obj, "name", &path)? {
        Some(n) => n,
        None => str_field(obj, "mcp_server_name", &path)?
            .or(str_field(obj, "type", &path)?)
            .ok_or_else(|| bad(&path, "has no 'name' (nor a 'type')"))?,
    }
    .to_owned();
    let description = str_field(obj, "description", &path)?.map(str::to_owned);
    let parameters = obj.get("input_schema").cloned().unwrap_or(Value::Null);
    Ok(Tool { name, description, parameters, raw })
}

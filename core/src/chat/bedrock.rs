//! Amazon Bedrock Converse codec: a request's `messages`, its `system`
//! blocks and its `toolConfig.tools[].toolSpec`.
//!
//! Every message is one [`Message`] with role `user` or `assistant`, its
//! `content` a list of one-key blocks (`{"text": ...}`, `{"toolUse": ...}`).
//! A `toolUse` block is a tool call named by its `toolUseId`; a
//! `toolResult` block answers it from the next user message, so Converse
//! has Anthropic's shape and the window treats it the same way (results in
//! the user message right after the call, roles alternating from the user).
//!
//! `inferenceConfig`, `additionalModelRequestFields`, `guardrailConfig`,
//! `toolConfig.toolChoice` and everything else is kept untouched. Counting
//! is an estimate: Bedrock serves other vendors' models, each with its own
//! tokenizer, and the model registry counts them with a proxy encoding
//! unless the model is one turnfit knows (docs/formats.md).

use serde_json::{json, Map, Value};

use super::{
    bad, block_text, image_size, pdf_pages, str_field, Conversation, Format, Message, Part, Role, Tool, ToolCall,
};
use crate::Result;

pub(super) fn parse(doc: Value) -> Result<Conversation> {
    let Value::Object(mut obj) = doc else {
        return Err(bad("", "must be an object with 'messages'"));
    };
    // The key's slot in the envelope, absent or not, so a document read
    // without it and the one written back (which has it) read the same
    // (a `chat_codecs` finding, issue 33's forced-format seeds).
    let items = match Some(obj.entry("messages").or_insert(Value::Null).take()) {
        Some(Value::Array(items)) => items,
        Some(Value::Null) | None => Vec::new(),
        Some(_) => return Err(bad("messages", "must be an array")),
    };
    let raw_system = obj.get_mut("system").map(Value::take).filter(|v| !v.is_null());
    let system = match &raw_system {
        None => None,
        Some(Value::Array(blocks)) => Some(system_text(blocks)?),
        Some(_) => return Err(bad("system", "must be an array of blocks")),
    };
    let tools = tools(obj.get("toolConfig"))?;
    let messages = items.into_iter().enumerate().map(|(i, m)| message(m, i)).collect::<Result<Vec<_>>>()?;
    Ok(Conversation { format: Format::Bedrock, system, messages, tools, envelope: Some(obj), raw_system })
}

fn system_text(blocks: &[Value]) -> Result<String> {
    let mut texts = Vec::new();
    for (j, b) in blocks.iter().enumerate() {
        let path = format!("system[{j}]");
        let o = b.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
        if let Some(t) = str_field(o, "text", &path)? {
            texts.push(t.to_owned());
        } else if !o.contains_key("cachePoint") {
            texts.push(block_text(b));
        }
    }
    Ok(texts.join("\n"))
}

pub(super) fn message(raw: Value, i: usize) -> Result<Message> {
    let path = super::indexed("", "messages", i);
    let obj = raw.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
    let role = match str_field(obj, "role", &path)? {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some(other) => {
            return Err(bad(&path, format!("unknown role '{other}' (Bedrock Converse messages are user or assistant)")))
        }
        None => return Err(bad(&path, "has no 'role'")),
    };
    let mut m = Message::new(role, None, Vec::new(), Vec::new(), None, Value::Null);
    match obj.get("content") {
        None | Some(Value::Null) => {}
        Some(Value::Array(blocks)) => {
            for (j, b) in blocks.iter().enumerate() {
                block(b, &super::indexed(&path, ".content", j), &mut m)?;
            }
        }
        Some(_) => return Err(bad(&path, "'content' must be an array of blocks")),
    }
    m.raw = raw;
    Ok(m)
}

fn block(b: &Value, path: &str, m: &mut Message) -> Result<()> {
    let obj = b.as_object().ok_or_else(|| bad(path, "must be an object"))?;
    if let Some(u) = obj.get("toolUse") {
        let u = u.as_object().ok_or_else(|| bad(path, "toolUse must be an object"))?;
        let id = str_field(u, "toolUseId", path)?.ok_or_else(|| bad(path, "toolUse has no 'toolUseId'"))?;
        let name = str_field(u, "name", path)?.ok_or_else(|| bad(path, "toolUse has no 'name'"))?;
        let arguments = u.get("input").filter(|v| !v.is_null()).map_or_else(String::new, Value::to_string);
        m.tool_calls.push(ToolCall { id: id.to_owned(), name: name.to_owned(), arguments });
        return Ok(());
    }
    if let Some(r) = obj.get("toolResult") {
        let r = r.as_object().ok_or_else(|| bad(path, "toolResult must be an object"))?;
        let id = str_field(r, "toolUseId", path)?.ok_or_else(|| bad(path, "toolResult has no 'toolUseId'"))?;
        let is_error = str_field(r, "status", path)? == Some("error");
        let mut texts = Vec::new();
        let mut nested = Message::new(m.role, None, Vec::new(), Vec::new(), None, Value::Null);
        match r.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::Array(inner)) => {
                for (k, c) in inner.iter().enumerate() {
                    let cpath = format!("{path}.toolResult.content[{k}]");
                    match c.get("json") {
                        Some(j) => texts.push(j.to_string()),
                        None => block(c, &cpath, &mut nested)?,
                    }
                }
            }
            Some(_) => return Err(bad(path, "toolResult 'content' must be an array")),
        }
        let mut others = Vec::new();
        for p in nested.parts {
            match p {
                Part::Text(t) | Part::Block { text: t, .. } => texts.push(t),
                other => others.push(other),
            }
        }
        m.parts.push(Part::ToolResult { id: id.to_owned(), text: texts.join("\n"), is_error });
        m.parts.extend(others);
        return Ok(());
    }
    let Some((kind, v)) = obj.iter().next() else {
        return Err(bad(path, "is an empty block"));
    };
    let part = match kind.as_str() {
        "text" => Part::Text(v.as_str().ok_or_else(|| bad(path, "'text' must be a string"))?.to_owned()),
        "image" => {
            let data = v.get("source").and_then(|s| s.get("bytes")).and_then(Value::as_str);
            let (width, height) = data.and_then(image_size).map_or((None, None), |(w, h)| (Some(w), Some(h)));
            Part::Image { detail: None, width, height }
        }
        "document" => {
            let source = v.get("source");
            match (v.get("format").and_then(Value::as_str), source.and_then(|s| s.get("bytes")).and_then(Value::as_str))
            {
                (Some("pdf"), Some(data)) => Part::Pdf { pages: pdf_pages(data) },
                _ if source.is_some_and(|s| s.get("text").is_some() || s.get("content").is_some()) => {
                    Part::Block { kind: "document".into(), text: block_text(v) }
                }
                _ => Part::Attachment("document"),
            }
        }
        "video" => Part::Attachment("video"),
        "reasoningContent" => {
            if let Some(t) = v.get("reasoningText").and_then(|r| r.get("text")).and_then(Value::as_str) {
                Part::Thinking(t.to_owned())
            } else {
                Part::RedactedThinking(v.get("redactedContent").and_then(Value::as_str).map_or(0, str::len))
            }
        }
        // A cache checkpoint is not content.
        "cachePoint" => return Ok(()),
        other => Part::Block { kind: other.to_owned(), text: block_text(v) },
    };
    m.parts.push(part);
    Ok(())
}

fn tools(config: Option<&Value>) -> Result<Vec<Tool>> {
    let list = match config.filter(|v| !v.is_null()).map(|c| c.get("tools")) {
        None | Some(None | Some(Value::Null)) => return Ok(Vec::new()),
        Some(Some(Value::Array(list))) => list,
        Some(Some(_)) => return Err(bad("toolConfig.tools", "must be an array")),
    };
    let mut out = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let path = format!("toolConfig.tools[{i}]");
        let Some(spec) = entry.get("toolSpec") else {
            continue; // a cachePoint: kept as given, not a definition
        };
        let spec = spec.as_object().ok_or_else(|| bad(&path, "toolSpec must be an object"))?;
        let name = str_field(spec, "name", &path)?.ok_or_else(|| bad(&path, "toolSpec has no 'name'"))?.to_owned();
        let description = str_field(spec, "description", &path)?.map(str::to_owned);
        let parameters = spec.get("inputSchema").and_then(|s| s.get("json")).cloned().unwrap_or(Value::Null);
        out.push(Tool { name, description, parameters, raw: entry.clone() });
    }
    Ok(out)
}

/// Writes the tool views back into `toolConfig`: every entry as given while
/// its `toolSpec` entries are still the views, in order, cache points kept;
/// a spec no longer among the views is left out, new views are added at the
/// end, and a `toolConfig` left with no spec goes (Bedrock refuses an empty
/// tool list).
pub(super) fn write_tool_config(out: &mut Map<String, Value>, views: &[Tool]) {
    let Some(config) = out.get_mut("toolConfig") else {
        if !views.is_empty() {
            out.insert("toolConfig".into(), json!({"tools": views.iter().map(|t| t.raw.clone()).collect::<Vec<_>>()}));
        }
        return;
    };
    let original = config.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut next = 0;
    let mut kept = Vec::with_capacity(original.len());
    for entry in original.iter() {
        if entry.get("toolSpec").is_none() {
            kept.push(entry.clone());
        } else if views.get(next).is_some_and(|t| &t.raw == entry) {
            next += 1;
            kept.push(entry.clone());
        }
    }
    kept.extend(views[next.min(views.len())..].iter().map(|t| t.raw.clone()));
    if !kept.iter().any(|e| e.get("toolSpec").is_some()) && !original.is_empty() {
        out.remove("toolConfig");
    } else if kept != original {
        config["tools"] = Value::Array(kept);
    }
}

/// The `toolResult` block answering the unanswered call `id`: its text as
/// the content, with status `error`.
pub(super) fn synthetic_result(id: &str, text: &str) -> Value {
    json!({"toolResult": {"toolUseId": id, "content": [{"text": text}], "status": "error"}})
}

/// Writes `text` as a `toolResult` block's content (one text block).
pub(super) fn set_result(block: &mut Value, text: &str) {
    if let Some(r) = block.get_mut("toolResult").and_then(Value::as_object_mut) {
        r.insert("content".into(), json!([{"text": text}]));
    }
}

/// Whether a block is a tool result or, with `calls`, a tool use too.
pub(super) fn is_tool_block(b: &Value, calls: bool) -> bool {
    b.get("toolResult").is_some() || (calls && b.get("toolUse").is_some())
}

/// Whether a message's content blocks look like Converse's (one-key
/// blocks with no `type`: `toolUse`, `toolResult`, `reasoningContent`,
/// `cachePoint`, `guardContent`, or a bare `{"text": ...}`).
pub(super) fn looks_like(m: &Value) -> bool {
    m.get("content").and_then(Value::as_array).is_some_and(|blocks| {
        blocks.iter().any(|b| {
            b.get("type").is_none()
                && [
                    "toolUse",
                    "toolResult",
                    "reasoningContent",
                    "cachePoint",
                    "guardContent",
                    "text",
                    "image",
                    "document",
                ]
                .iter()
                .any(|k| b.get(*k).is_some())
        })
    })
}

#[cfg(test)]
mod tests;

//! OpenAI Responses codec: a request's `input` (a string, or a list of
//! items) and its `instructions`.
//!
//! Every item is one [`Message`], so an item no operation touched is written
//! back as it was read. Items map onto the neutral roles the window already
//! reasons about, the way Chat Completions would carry the same thing:
//!
//! - `message` items (with or without `"type": "message"`) keep their role;
//! - a client-side call (`function_call`, `custom_tool_call`,
//!   `computer_call`, `local_shell_call`, `shell_call`, `apply_patch_call`)
//!   is an assistant message with one tool call whose id is its `call_id`;
//! - its output item (`*_call_output`) is a `tool` message answering that
//!   `call_id` (`local_shell_call_output` names the call by `id` when it
//!   has no `call_id`, as the API's own type does);
//! - `reasoning` is an assistant message with its summary and reasoning
//!   text as thinking and its `encrypted_content` as opaque data (counted by
//!   length, an estimate);
//! - server-side tool items (`web_search_call`, `file_search_call`,
//!   `code_interpreter_call`, `image_generation_call`, `mcp_call`,
//!   `mcp_list_tools`, ...) carry their own result: an assistant message
//!   counted by the text it holds;
//! - `item_reference` and item types turnfit does not know are kept as they
//!   are, counted by their text, never rejected.
//!
//! Parallel calls are consecutive call items followed by their outputs, so
//! the window's round for this format is "the assistant-side items, then the
//! outputs after them" (see `window::rounds`); a reasoning item therefore
//! always goes with the calls after it.

use serde_json::{json, Map, Value};

use super::{bad, block_text, image_size, str_field, Conversation, Format, Message, Part, Role, ToolCall};
use crate::Result;

/// Client-side call item types, each answered by `<type>_output`.
const CALLS: &[&str] =
    &["function_call", "custom_tool_call", "computer_call", "local_shell_call", "shell_call", "apply_patch_call"];

/// Item types that only the Responses API uses (detection).
pub(super) const ITEM_TYPES: &[&str] = &[
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "computer_call",
    "computer_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "shell_call",
    "shell_call_output",
    "apply_patch_call",
    "apply_patch_call_output",
    "reasoning",
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "item_reference",
];

/// Content part types that only the Responses API uses (detection).
pub(super) const PART_TYPES: &[&str] = &["input_text", "output_text", "input_image", "input_file"];

pub(super) fn parse(doc: Value) -> Result<Conversation> {
    let (input, mut envelope) = match doc {
        Value::Array(items) => (Value::Array(items), None),
        // The key's slot in the envelope, absent or not, so a document read
        // without it and the one written back (which has it) read the same
        // (a `chat_codecs` finding, issue 33's forced-format seeds).
        Value::Object(mut obj) => match Some(obj.entry("input").or_insert(Value::Null).take()) {
            Some(v @ (Value::Array(_) | Value::String(_))) => (v, Some(obj)),
            Some(Value::Null) | None => (Value::Array(Vec::new()), Some(obj)),
            Some(_) => return Err(bad("input", "must be a string or an array of items")),
        },
        _ => return Err(bad("", "must be an object with 'input' or an array of items")),
    };
    let items = match input {
        Value::Array(items) => items,
        s => vec![s], // a string input is one user message
    };
    let (system, raw_system) = match envelope.as_mut().and_then(|e| e.get_mut("instructions")).map(Value::take) {
        None | Some(Value::Null) => (None, None),
        Some(Value::String(s)) => (Some(s.clone()), Some(Value::String(s))),
        // Instructions given as a list of input items (a prompt template's
        // expansion): counted by their text, written back as given.
        Some(v @ Value::Array(_)) => (Some(block_text(&v)), Some(v)),
        Some(_) => return Err(bad("instructions", "must be a string or an array of items")),
    };
    let tools = super::take_tools(envelope.as_mut().and_then(|e| e.get_mut("tools")))?;
    let mut messages = items.into_iter().enumerate().map(|(i, m)| message(m, i)).collect::<Result<Vec<_>>>()?;
    if envelope.as_ref().is_some_and(drops_earlier_reasoning) {
        drop_earlier_reasoning(&mut messages);
    }
    let tools = tools.into_iter().enumerate().map(|(i, t)| super::openai::tool(t, i)).collect::<Result<Vec<_>>>()?;
    Ok(Conversation { format: Format::Responses, system, messages, tools, envelope, raw_system })
}

/// Whether the request's model drops the reasoning of earlier turns (a
/// `reasoning` item with a user message after it): documented by OpenAI for
/// its reasoning models ("reasoning items from previous turns are
/// discarded"), and measured (issue 36: a gpt-5 request replaying an
/// earlier turn's 1,920 reasoning tokens was billed without them, as were
/// its summary). Not when the request asks to keep them
/// (`reasoning.context: "all_turns"`), and not for models the recordings
/// show keeping them (gpt-5.6: billed with them) or do not show: the
/// gpt-5 models up to gpt-5.5 and the o-series are the ones measured.
fn drops_earlier_reasoning(envelope: &Map<String, Value>) -> bool {
    let keeps = envelope.get("reasoning").and_then(|r| r.get("context")).and_then(Value::as_str) == Some("all_turns");
    let model = envelope.get("model").and_then(Value::as_str).unwrap_or("").to_ascii_lowercase();
    let model = model.rsplit('/').next().unwrap_or("");
    let measured =
        ["gpt-5-", "gpt-5.1", "gpt-5.2", "gpt-5.4", "gpt-5.5", "o1", "o3", "o4"].iter().any(|p| model.starts_with(p))
            || model == "gpt-5";
    !keeps && measured
}

/// Earlier turns' reasoning items cost nothing: their parts are cleared
/// (the item itself is kept and written back as it was read).
fn drop_earlier_reasoning(messages: &mut [Message]) {
    let Some(last_user) = messages.iter().rposition(|m| m.role == Role::User) else { return };
    for m in &mut messages[..last_user] {
        if is_reasoning(m) {
            m.parts.clear();
        }
    }
}

/// A `reasoning` item.
pub(crate) fn is_reasoning(m: &Message) -> bool {
    m.raw.get("type").and_then(Value::as_str) == Some("reasoning")
}

pub(super) fn message(raw: Value, i: usize) -> Result<Message> {
    let path = format!("input[{i}]");
    if let Value::String(s) = &raw {
        let parts = vec![Part::Text(s.clone())];
        return Ok(Message::new(Role::User, None, parts, Vec::new(), None, raw));
    }
    let obj = raw.as_object().ok_or_else(|| bad(&path, "must be an object or a string"))?;
    let kind = str_field(obj, "type", &path)?;
    let mut m = Message::new(Role::Assistant, None, Vec::new(), Vec::new(), None, Value::Null);
    match kind {
        None | Some("message") => {
            m.role = match str_field(obj, "role", &path)? {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                Some("system") => Role::System,
                Some("developer") => Role::Developer,
                Some(other) => return Err(bad(&path, format!("unknown role '{other}'"))),
                None if kind.is_none() => return Err(bad(&path, "has no 'type' nor 'role'")),
                None => return Err(bad(&path, "message has no 'role'")),
            };
            m.parts = content(obj.get("content"), &format!("{path}.content"))?;
        }
        Some(t) if CALLS.contains(&t) => m.tool_calls.push(call(obj, t, &path)?),
        Some(t) if t.strip_suffix("_output").is_some_and(|c| CALLS.contains(&c)) => {
            m.role = Role::Tool;
            let id = match str_field(obj, "call_id", &path)? {
                Some(id) => Some(id),
                None if t == "local_shell_call_output" => str_field(obj, "id", &path)?,
                None => None,
            };
            m.tool_call_id = id.map(str::to_owned);
            m.parts = output(obj.get("output"), &format!("{path}.output"))?;
        }
        Some("reasoning") => {
            // The `summary` is not billed: measured (issue 36; replayed
            // summaries were counted 356-633 over on gpt-5). It is a
            // description of the reasoning written for the client, not
            // part of what the model is shown. What is billed is the
            // reasoning itself: its `content` text when given, else the
            // hidden reasoning the `encrypted_content` (or the stored item
            // its `id` names) stands for, whose size only the provider
            // knows: an estimate by length (`Part::RedactedThinking`).
            if let Some(v) = obj.get("content").filter(|v| !v.is_null()) {
                let text = block_text(v);
                if !text.is_empty() {
                    m.parts.push(Part::Thinking(text));
                }
            }
            let enc = str_field(obj, "encrypted_content", &path)?;
            if enc.is_some() || obj.get("id").is_some() {
                m.parts.push(Part::RedactedThinking(enc.map_or(0, str::len)));
            }
        }
        Some("image_generation_call") => {
            let result = str_field(obj, "result", &path)?;
            let (width, height) = result.and_then(image_size).map_or((None, None), |(w, h)| (Some(w), Some(h)));
            m.parts.push(Part::Image { detail: None, width, height });
        }
        Some("mcp_approval_response") => {
            m.role = Role::User;
            m.parts.push(Part::Block { kind: "mcp_approval_response".into(), text: block_text(&raw) });
        }
        Some(other) => m.parts.push(Part::Block { kind: other.to_owned(), text: block_text(&raw) }),
    }
    m.raw = raw;
    Ok(m)
}

fn call(obj: &Map<String, Value>, kind: &str, path: &str) -> Result<ToolCall> {
    let id = str_field(obj, "call_id", path)?.ok_or_else(|| bad(path, format!("{kind} has no 'call_id'")))?.to_owned();
    let (name, arguments) = match kind {
        "function_call" => (
            str_field(obj, "name", path)?.ok_or_else(|| bad(path, "function_call has no 'name'"))?.to_owned(),
            match obj.get("arguments") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            },
        ),
        "custom_tool_call" => (
            str_field(obj, "name", path)?.ok_or_else(|| bad(path, "custom_tool_call has no 'name'"))?.to_owned(),
            str_field(obj, "input", path)?.unwrap_or_default().to_owned(),
        ),
        // Built-in client tools: named by their tool, arguments are the action.
        _ => {
            let tool = kind.strip_suffix("_call").unwrap_or(kind);
            let args = obj.get("action").or_else(|| obj.get("operation")).map_or_else(String::new, Value::to_string);
            (tool.to_owned(), args)
        }
    };
    Ok(ToolCall { id, name, arguments })
}

fn content(v: Option<&Value>, path: &str) -> Result<Vec<Part>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![Part::Text(s.clone())]),
        Some(Value::Array(parts)) => parts.iter().enumerate().map(|(j, p)| part(p, &format!("{path}[{j}]"))).collect(),
        Some(_) => Err(bad(path, "must be a string or an array of parts")),
    }
}

/// A `*_output`'s `output`: a string, a list of content parts, or an object
/// (a computer screenshot, shell outcomes) counted by what it holds.
fn output(v: Option<&Value>, path: &str) -> Result<Vec<Part>> {
    match v {
        Some(Value::Object(o)) if o.get("type").and_then(Value::as_str) == Some("computer_screenshot") => {
            Ok(vec![screenshot(o)])
        }
        Some(Value::Array(items)) if items.iter().all(|p| p.get("type").is_some()) => content(v, path),
        Some(v @ (Value::Object(_) | Value::Array(_))) => Ok(vec![Part::Text(block_text(v))]),
        _ => content(v, path),
    }
}

fn screenshot(o: &Map<String, Value>) -> Part {
    let url = o.get("image_url").and_then(Value::as_str);
    let (width, height) = url.and_then(image_size).map_or((None, None), |(w, h)| (Some(w), Some(h)));
    Part::Image { detail: None, width, height }
}

fn part(p: &Value, path: &str) -> Result<Part> {
    let obj = p.as_object().ok_or_else(|| bad(path, "must be an object"))?;
    Ok(match str_field(obj, "type", path)? {
        Some("input_text" | "output_text" | "text" | "summary_text" | "reasoning_text") => {
            Part::Text(str_field(obj, "text", path)?.unwrap_or_default().to_owned())
        }
        Some("refusal") => Part::Text(str_field(obj, "refusal", path)?.unwrap_or_default().to_owned()),
        Some("input_image") => {
            let url = str_field(obj, "image_url", path)?;
            let dim = |k: &str| obj.get(k).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
            let (mut width, mut height) = (dim("width"), dim("height"));
            if width.is_none() || height.is_none() {
                if let Some((w, h)) = url.and_then(image_size) {
                    (width, height) = (Some(w), Some(h));
                }
            }
            Part::Image { detail: str_field(obj, "detail", path)?.map(str::to_owned), width, height }
        }
        Some("computer_screenshot") => screenshot(obj),
        Some("input_file") => Part::Attachment("file"),
        Some("input_audio") => Part::Attachment("audio"),
        Some(kind) => Part::Block { kind: kind.to_owned(), text: block_text(p) },
        None => return Err(bad(path, "has no 'type'")),
    })
}

/// The output item answering an unanswered call made by `call`: its own
/// `*_output` type with `text` as the output. A `computer_call_output`
/// normally carries a screenshot; turnfit has none to give, so its synthetic
/// output is the text (docs/formats.md says the API may refuse it).
pub(super) fn synthetic_output(call: &Message, id: &str, text: &str) -> Value {
    let kind = call.raw.get("type").and_then(Value::as_str).unwrap_or("function_call");
    match kind {
        "local_shell_call" => json!({"type": "local_shell_call_output", "id": id, "output": text}),
        "custom_tool_call" | "shell_call" | "apply_patch_call" | "computer_call" => {
            json!({"type": format!("{kind}_output"), "call_id": id, "output": text})
        }
        _ => json!({"type": "function_call_output", "call_id": id, "output": text}),
    }
}

/// Writes `text` as an output item's `output`, keeping its shape (a string
/// stays a string; a list of parts becomes one `input_text` part). An
/// object output (a screenshot) is left alone.
pub(super) fn set_output(raw: &mut Value, text: &str) {
    if let Some(slot) = raw.get_mut("output") {
        match slot {
            Value::Array(_) => *slot = json!([{"type": "input_text", "text": text}]),
            Value::String(_) | Value::Null => *slot = Value::String(text.to_owned()),
            _ => {}
        }
    }
}

/// Writes the items back: the input as given when it was a string and is
/// still that one message, else a list (a string message becomes a user
/// message item).
pub(super) fn input_value(messages: &[Message]) -> Value {
    if let [m] = messages {
        if m.raw.is_string() {
            return m.raw.clone();
        }
    }
    Value::Array(
        messages
            .iter()
            .map(|m| match &m.raw {
                Value::String(s) => json!({"role": "user", "content": s}),
                other => other.clone(),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests;

//! The neutral chat model and the two wire formats it is read from and
//! written back to: OpenAI Chat Completions and Anthropic Messages.
//!
//! Each [`Message`] keeps the JSON it was parsed from, next to a typed view
//! of the parts ctxkit reasons about (role, text, tool calls and results,
//! images). Writing a conversation back emits that original JSON for every
//! message no operation touched, so unknown fields survive and untouched
//! messages are equal as JSON (and, with serde_json's `preserve_order`, keep
//! their key order). Operations that change a message edit its JSON, never
//! rebuild it from the view.

mod anthropic;
mod openai;
mod reader;

use serde_json::{Map, Value};

use crate::{json, Error, ErrorKind, Result};

/// A wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// OpenAI Chat Completions: `{"messages": [...], "tools": [...]}` or a bare array.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages: `{"system": ..., "messages": [...], "tools": [...]}`.
    Anthropic,
}

impl Format {
    /// Parses `openai` or `anthropic`.
    pub fn from_name(name: &str) -> Result<Format> {
        match name.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(Format::OpenAi),
            "anthropic" => Ok(Format::Anthropic),
            other => Err(Error::invalid_argument(format!("unknown format '{other}'; use openai or anthropic"))),
        }
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// System prompt (OpenAI message, or Anthropic's top-level `system`).
    System,
    /// OpenAI `developer` (the o-series' system role).
    Developer,
    /// The user (Anthropic tool results arrive as user messages).
    User,
    /// The model.
    Assistant,
    /// OpenAI tool result.
    Tool,
    /// OpenAI legacy function result.
    Function,
}

impl Role {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Function => "function",
        }
    }
}

/// A tool invocation requested by the assistant (OpenAI `tool_calls` entry
/// or legacy `function_call`, Anthropic `tool_use` block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The call id that the result must name.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON text (OpenAI's string, or Anthropic's `input` serialized).
    pub arguments: String,
}

/// One piece of message content.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text.
    Text(String),
    /// An image; size and detail when the request says them.
    Image {
        /// `low`, `high` or `auto` (OpenAI); None when absent.
        detail: Option<String>,
        /// Pixel width, when known.
        width: Option<u32>,
        /// Pixel height, when known.
        height: Option<u32>,
    },
    /// Audio input, a file or a document: counted by a declared estimate.
    Attachment(&'static str),
    /// Model reasoning (Anthropic `thinking`).
    Thinking(String),
    /// Anthropic `redacted_thinking`: opaque, counted by its data length.
    RedactedThinking(usize),
    /// A tool result block (Anthropic `tool_result`), content flattened to text.
    ToolResult {
        /// The `tool_use_id` it answers.
        id: String,
        /// Result text (nested text blocks joined with newlines).
        text: String,
        /// Anthropic `is_error`.
        is_error: bool,
    },
}

/// A message: the typed view plus the JSON it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Author.
    pub role: Role,
    /// OpenAI `name`, if any.
    pub name: Option<String>,
    /// Content parts in order (a string content is one `Text`).
    pub parts: Vec<Part>,
    /// Tool calls the assistant makes in this message.
    pub tool_calls: Vec<ToolCall>,
    /// OpenAI tool/function result: the call id it answers (for legacy
    /// `function` messages, the function name).
    pub tool_call_id: Option<String>,
    pub(crate) raw: Value,
}

impl Message {
    /// The JSON this message is written back as.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// Ids of the tool calls this message answers.
    pub fn result_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self.tool_call_id.iter().map(String::as_str).collect();
        ids.extend(self.parts.iter().filter_map(|p| match p {
            Part::ToolResult { id, .. } => Some(id.as_str()),
            _ => None,
        }));
        ids
    }

    /// All text the model reads in this message (text parts, thinking, tool
    /// result text), joined with newlines. Used by scorers and digests.
    pub fn text(&self) -> String {
        let mut out = Vec::new();
        for p in &self.parts {
            match p {
                Part::Text(t) | Part::Thinking(t) => out.push(t.as_str()),
                Part::ToolResult { text, .. } => out.push(text.as_str()),
                _ => {}
            }
        }
        out.join("\n")
    }
}

/// A tool definition offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// Function name.
    pub name: String,
    /// Description, if any.
    pub description: Option<String>,
    /// JSON-schema parameters (OpenAI `parameters`, Anthropic `input_schema`).
    pub parameters: Value,
    pub(crate) raw: Value,
}

/// A parsed conversation in one of the two formats.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The format it was read in and will be written in.
    pub format: Format,
    /// Anthropic's top-level system prompt as text (None for OpenAI, where
    /// system prompts are messages).
    pub system: Option<String>,
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// Tool definitions.
    pub tools: Vec<Tool>,
    /// The top-level object with `messages` (and `tools`, `system`) left as
    /// placeholders, so writing back keeps every other field and the key
    /// order; None for an OpenAI bare messages array.
    envelope: Option<Map<String, Value>>,
    /// Anthropic's `system` exactly as given (string or blocks).
    raw_system: Option<Value>,
}

impl Conversation {
    /// Parses a conversation. With `format` None the format is detected:
    /// a bare array, a system/developer/tool role or OpenAI-shaped tools mean
    /// OpenAI; a top-level `system`, Anthropic content blocks (`tool_use`,
    /// `tool_result`, `thinking`) or `input_schema` tools mean Anthropic.
    /// More than [`crate::limits::MAX_MESSAGES`] messages is `LimitExceeded`,
    /// refused while reading.
    pub fn parse(text: &str, format: Option<Format>) -> Result<Conversation> {
        let doc = reader::read(text)?;
        let format = match format {
            Some(f) => f,
            None => detect(&doc),
        };
        match format {
            Format::OpenAi => openai::parse(doc),
            Format::Anthropic => anthropic::parse(doc),
        }
    }

    /// The conversation as JSON in its own format. Top-level fields keep
    /// their values and order; only `messages`, `tools` and `system` are
    /// written from the (possibly edited) model.
    pub fn to_value(&self) -> Value {
        let messages = Value::Array(self.messages.iter().map(|m| m.raw.clone()).collect());
        let Some(envelope) = &self.envelope else {
            return messages;
        };
        let mut out = envelope.clone();
        if let Some(system) = &self.raw_system {
            out.insert("system".into(), system.clone());
        }
        out.insert("messages".into(), messages);
        // A `tools` array is rewritten; an explicit `"tools": null` stays
        // null unless tools were added.
        let keep_null = out.get("tools").is_some_and(Value::is_null) && self.tools.is_empty();
        if !keep_null && (!self.tools.is_empty() || out.contains_key("tools")) {
            out.insert("tools".into(), Value::Array(self.tools.iter().map(|t| t.raw.clone()).collect()));
        }
        Value::Object(out)
    }

    /// The conversation as compact JSON in its own format.
    pub fn to_json(&self) -> Result<String> {
        json::to_string(&self.to_value())
    }

    /// Parses one message given as JSON, in this conversation's format.
    pub fn parse_message(&self, text: &str) -> Result<Message> {
        let v = json::parse_value("message", text)?;
        message_from_value(self.format, v, 0)
    }
}

/// Parses one message's JSON in `format`; `index` locates errors.
pub(crate) fn message_from_value(format: Format, v: Value, index: usize) -> Result<Message> {
    match format {
        Format::OpenAi => openai::message(v, index),
        Format::Anthropic => anthropic::message(v, index),
    }
}

fn detect(doc: &Value) -> Format {
    let Some(obj) = doc.as_object() else {
        return Format::OpenAi;
    };
    if obj.contains_key("system") {
        return Format::Anthropic;
    }
    if let Some(tools) = obj.get("tools").and_then(Value::as_array) {
        if tools.iter().any(|t| t.get("input_schema").is_some()) {
            return Format::Anthropic;
        }
        if tools.iter().any(|t| t.get("function").is_some()) {
            return Format::OpenAi;
        }
    }
    let messages = obj.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    for m in messages {
        if let Some("system" | "developer" | "tool" | "function") = m.get("role").and_then(Value::as_str) {
            return Format::OpenAi;
        }
        if m.get("tool_calls").is_some() || m.get("tool_call_id").is_some() {
            return Format::OpenAi;
        }
        if let Some(blocks) = m.get("content").and_then(Value::as_array) {
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking" | "document") => {
                        return Format::Anthropic
                    }
                    Some("image") if b.get("source").is_some() => return Format::Anthropic,
                    _ => {}
                }
            }
        }
    }
    Format::OpenAi
}

/// A schema error at `path` (e.g. `messages[3].content[1]`).
pub(crate) fn bad(path: &str, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidJson, format!("conversation {path}: {what}"))
}

pub(crate) fn str_field<'a>(obj: &'a Map<String, Value>, key: &str, path: &str) -> Result<Option<&'a str>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(bad(path, format!("'{key}' must be a string"))),
    }
}

#[cfg(test)]
mod tests;

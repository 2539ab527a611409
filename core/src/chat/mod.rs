//! The neutral chat model and the wire formats it is read from and written
//! back to: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages,
//! Gemini `generateContent`, Bedrock Converse and the Vercel AI SDK's
//! `ModelMessage`.
//!
//! Each [`Message`] keeps the JSON it was parsed from, next to a typed view
//! of the parts turnfit reasons about (role, text, tool calls and results,
//! images). Writing a conversation back emits that original JSON for every
//! message no operation touched, so unknown fields survive and untouched
//! messages are equal as JSON (and, with serde_json's `preserve_order`, keep
//! their key order). Operations that change a message edit its JSON, never
//! rebuild it from the view.

mod ai_sdk;
mod anthropic;
mod api;
mod bedrock;
mod gemini;
mod openai;
mod reader;
mod responses;
mod shape;

pub use api::Api;
pub(crate) use api::{mark_chat_joins, ChatJoin};
pub(crate) use responses::is_reasoning as responses_reasoning;

use serde_json::{Map, Value};

use crate::{json, Error, ErrorKind, Result};

/// A wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// OpenAI Chat Completions: `{"messages": [...], "tools": [...]}` or a bare array.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages: `{"system": ..., "messages": [...], "tools": [...]}`.
    Anthropic,
    /// OpenAI Responses: `{"instructions": ..., "input": string | [items], "tools": [...]}`
    /// or a bare array of items.
    Responses,
    /// Gemini `generateContent`: `{"systemInstruction": ..., "contents": [...], "tools": [...]}`
    /// or a bare array of contents.
    Gemini,
    /// Amazon Bedrock Converse: `{"system": [...], "messages": [...], "toolConfig": {...}}`.
    Bedrock,
    /// Vercel AI SDK `ModelMessage` (or `LanguageModelV3Prompt`) arrays: a bare
    /// array of messages or `{"system"?: ..., "messages": [...], "tools"?: [...]}`;
    /// counted as the AI SDK's OpenAI Chat provider sends them (its Responses
    /// provider's items with the fit option `api: responses`, see [`Api`]).
    #[serde(rename = "ai_sdk")]
    AiSdk,
}

impl Format {
    /// Whether a count in this format can be exact, given a model whose
    /// encoding is exact. Chat Completions framing is measured against billed
    /// usage (docs/accuracy.md); Anthropic models are estimates anyway. The
    /// Responses API is measured too (issue 36, docs/accuracy.md "OpenAI
    /// Responses API"); its shapes the recordings do not measure are
    /// estimates per request (`Accountant::estimate_reasons`). Gemini and
    /// Bedrock Converse framings are not measured for OpenAI models: a count
    /// in those formats is reported as an estimate, so `calibrate` applies to it.
    pub fn counts_exactly(self) -> bool {
        matches!(self, Format::OpenAi | Format::Anthropic | Format::AiSdk | Format::Responses)
    }

    /// Every format's name, in the order error messages list them.
    pub const NAMES: &'static str = "openai, anthropic, responses, gemini, bedrock or ai_sdk";

    /// Parses `openai`, `anthropic`, `responses`, `gemini`, `bedrock` or
    /// `ai_sdk` (also spelled `ai-sdk`).
    pub fn from_name(name: &str) -> Result<Format> {
        match name.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(Format::OpenAi),
            "anthropic" => Ok(Format::Anthropic),
            "responses" => Ok(Format::Responses),
            "gemini" => Ok(Format::Gemini),
            "bedrock" => Ok(Format::Bedrock),
            "ai_sdk" | "ai-sdk" => Ok(Format::AiSdk),
            other => Err(Error::invalid_argument(format!("unknown format '{other}'; use {}", Format::NAMES))),
        }
    }

    /// The name `from_name` reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::OpenAi => "openai",
            Format::Anthropic => "anthropic",
            Format::Responses => "responses",
            Format::Gemini => "gemini",
            Format::Bedrock => "bedrock",
            Format::AiSdk => "ai_sdk",
        }
    }

    /// Whether a call's results are messages of their own after it (OpenAI
    /// Chat `tool` messages, Responses output items) rather than blocks in
    /// the next user message (Anthropic).
    pub fn results_are_messages(self) -> bool {
        matches!(self, Format::OpenAi | Format::Responses)
    }

    /// The top-level key holding the messages.
    fn messages_key(self) -> &'static str {
        match self {
            Format::Responses => "input",
            Format::Gemini => "contents",
            _ => "messages",
        }
    }

    /// The top-level key holding the system prompt, when the format has one.
    fn system_key(self) -> &'static str {
        match self {
            Format::Responses => "instructions",
            Format::Gemini => "systemInstruction",
            _ => "system",
        }
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// A base64 PDF document (Anthropic): counted per page by Anthropic's
    /// documented estimate. `pages` is the number of `/Type /Page` objects
    /// found in the data, at least 1.
    Pdf {
        /// Pages found.
        pages: usize,
    },
    /// Audio input, a file or a document: counted by a declared estimate.
    Attachment(&'static str),
    /// Model reasoning (Anthropic `thinking`).
    Thinking(String),
    /// Anthropic `redacted_thinking`: opaque, counted by its data length.
    RedactedThinking(usize),
    /// A block turnfit does not model by itself (Anthropic server tool blocks,
    /// `search_result`, `compaction`, a text `document`, a future block type,
    /// an OpenAI part type it does not know): kept as it is on the wire and
    /// counted by the text it carries (every string value but its `type`,
    /// ids, signatures and base64 data), as an estimate.
    Block {
        /// The block's `type`.
        kind: String,
        /// The text it carries, joined with newlines.
        text: String,
    },
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
#[derive(Debug, Clone)]
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
    /// Private to the codecs (this module and its children): every edit
    /// elsewhere builds a new message from a new value
    /// ([`message_from_value`]), which has no `origin`; so a message whose
    /// `origin` is set is written back as exactly the input message it
    /// names (see `origin`).
    raw: Value,
    /// The index of the input message this is, unedited: set on the
    /// messages of a parsed OpenAI or Anthropic conversation (whose
    /// messages are written back as they were read), kept when the message
    /// is moved or cloned, absent on anything built or edited afterwards.
    /// Lets a binding hand back its host's own object for a message `fit`
    /// kept whole instead of building a copy (issue 36).
    origin: Option<usize>,
    /// How this Responses item is sent in a Chat Completions request
    /// ([`ChatJoin`]): bookkeeping for counting, not content.
    pub(crate) chat_join: ChatJoin,
}

/// Equal messages: the same view and JSON, wherever they came from
/// (`origin` is bookkeeping, not content).
impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.role == other.role
            && self.name == other.name
            && self.parts == other.parts
            && self.tool_calls == other.tool_calls
            && self.tool_call_id == other.tool_call_id
            && self.raw == other.raw
    }
}

impl Message {
    /// A message of the codecs, not from any input message.
    pub(super) fn new(
        role: Role,
        name: Option<String>,
        parts: Vec<Part>,
        tool_calls: Vec<ToolCall>,
        tool_call_id: Option<String>,
        raw: Value,
    ) -> Message {
        Message { role, name, parts, tool_calls, tool_call_id, raw, origin: None, chat_join: ChatJoin::Own }
    }

    /// The JSON this message is written back as.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The index of the input message this message is, unedited, when
    /// known: the conversation was parsed as OpenAI or Anthropic and
    /// nothing rewrote the message since (see [`Conversation::origins`]).
    pub fn origin(&self) -> Option<usize> {
        self.origin
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
                Part::ToolResult { text, .. } | Part::Block { text, .. } => out.push(text.as_str()),
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
    /// an object with `input` and no `messages`, or an array holding a
    /// Responses item (`function_call`, `reasoning`, `input_text` parts, ...)
    /// means Responses; any other bare array, a system/developer/tool role or OpenAI-shaped tools mean
    /// OpenAI; a top-level `system`, Anthropic content blocks (`tool_use`,
    /// `tool_result`, `thinking`) or `input_schema` tools mean Anthropic.
    /// With `format` given, a document carrying a mark only other formats
    /// have (a top-level `messages` forced to `gemini`, a `tool_use` block
    /// forced to `openai`, ...) is `InvalidArgument` naming both: it is
    /// never read as an empty or half-read conversation (see `shape`).
    /// More than [`crate::limits::MAX_MESSAGES`] messages is `LimitExceeded`,
    /// refused while reading.
    pub fn parse(text: &str, format: Option<Format>) -> Result<Conversation> {
        Self::from_doc(reader::read(text)?, format)
    }

    /// [`Conversation::parse`] of a document a binding built from its
    /// host's objects instead of writing them as JSON text (issue 36: on a
    /// 12 MB transcript writing the text and reading it again was a quarter
    /// of `fit`). `text_len` is the length of the JSON text the document
    /// would be (the binding computes it), held to the same
    /// [`crate::limits::MAX_JSON_BYTES`] as text; more than
    /// [`crate::limits::MAX_MESSAGES`] messages is `LimitExceeded` too (the
    /// text reader says where it stopped, this cannot). Nesting depth and
    /// repeated keys are the caller's: a host's dict cannot repeat a key,
    /// and a binding sends a document deeper than
    /// [`crate::limits::MAX_JSON_DEPTH`] as text. Everything after reading
    /// (format detection, shape checks, the messages) is `parse`'s own code.
    pub fn from_value(doc: Value, text_len: usize, format: Option<Format>) -> Result<Conversation> {
        crate::limits::check("conversation", text_len, crate::limits::MAX_JSON_BYTES)?;
        if Self::over_message_limit(&doc) {
            let max = crate::limits::MAX_MESSAGES;
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("conversation: has more than {max} messages; the limit is {max} (MAX_MESSAGES)"),
            ));
        }
        Self::from_doc(doc, format)
    }

    /// Whether `doc` holds more than [`crate::limits::MAX_MESSAGES`]
    /// messages by the text reader's rule (a bare array, or the top-level
    /// `messages`, `input` or `contents` array): what
    /// [`Conversation::from_value`] refuses, for a binding that would
    /// rather send such a document as text, whose error says where.
    pub fn over_message_limit(doc: &Value) -> bool {
        let too_long =
            |v: Option<&Value>| v.and_then(Value::as_array).is_some_and(|m| m.len() > crate::limits::MAX_MESSAGES);
        match doc {
            Value::Object(obj) => ["messages", "input", "contents"].iter().any(|k| too_long(obj.get(*k))),
            other => too_long(Some(other)),
        }
    }

    /// Everything [`Conversation::parse`] does after reading the text.
    fn from_doc(doc: Value, format: Option<Format>) -> Result<Conversation> {
        let format = match format {
            Some(f) => {
                shape::check_document(&doc, f)?;
                f
            }
            None => detect(&doc),
        };
        let mut c = Self::read_doc(doc, format)?;
        // OpenAI and Anthropic messages are written back as read, one
        // input message each: each is its input message until edited.
        if matches!(format, Format::OpenAi | Format::Anthropic) {
            for (i, m) in c.messages.iter_mut().enumerate() {
                m.origin = Some(i);
            }
        }
        Ok(c)
    }

    /// For each message, the index of the input message it is, unedited
    /// ([`Message::origin`]). A binding that keeps its host's input
    /// objects hands those back for these messages instead of building
    /// copies of their JSON: they are equal, value for value.
    pub fn origins(&self) -> Vec<Option<usize>> {
        self.messages.iter().map(|m| m.origin).collect()
    }

    /// The codec of `format` on a document.
    fn read_doc(doc: Value, format: Format) -> Result<Conversation> {
        match format {
            Format::OpenAi => openai::parse(doc),
            Format::Anthropic => anthropic::parse(doc),
            Format::Responses => responses::parse(doc),
            Format::Gemini => match doc {
                Value::Array(items) => gemini::parse_bare(items),
                other => gemini::parse(other),
            },
            Format::Bedrock => bedrock::parse(doc),
            Format::AiSdk => ai_sdk::parse(doc),
        }
    }

    /// A top-level field of the request other than `messages`, `tools` and
    /// `system` (e.g. `tool_choice`, `response_format`), as given.
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.envelope.as_ref().and_then(|e| e.get(key)).filter(|v| !v.is_null())
    }

    /// The tool definitions the model is shown: [`Conversation::tools`], or,
    /// for an OpenAI Chat request without `tools`, the entries of the
    /// legacy `functions` parameter (older clients still send it; OpenAI
    /// renders them as the same `functions` namespace). An entry that is
    /// not a function object is `InvalidArgument` naming `functions[i]`.
    pub fn defined_tools(&self) -> Result<std::borrow::Cow<'_, [Tool]>> {
        let legacy = match self.field("functions") {
            Some(Value::Array(fs)) if self.tools.is_empty() && self.format == Format::OpenAi => fs,
            _ => return Ok(std::borrow::Cow::Borrowed(&self.tools)),
        };
        let tools =
            legacy.iter().enumerate().map(|(i, f)| openai::legacy_function(f.clone(), i)).collect::<Result<_>>()?;
        Ok(std::borrow::Cow::Owned(tools))
    }

    /// The conversation as JSON in its own format. Top-level fields keep
    /// their values and order; only `messages`, `tools` and `system` are
    /// written from the (possibly edited) model.
    pub fn to_value(&self) -> Value {
        let messages = match self.format {
            Format::Responses => responses::input_value(&self.messages),
            _ => Value::Array(self.messages.iter().map(|m| m.raw.clone()).collect()),
        };
        self.wrap(messages)
    }

    /// [`Conversation::to_value`] without copying: the messages' JSON is
    /// moved out (a binding that hands the result to its host as native
    /// objects needs no text in between; issue 36).
    pub fn into_value(mut self) -> Value {
        let messages = match self.format {
            Format::Responses => responses::input_value(&self.messages),
            _ => Value::Array(std::mem::take(&mut self.messages).into_iter().map(|m| m.raw).collect()),
        };
        self.wrap(messages)
    }

    /// The top-level value with `messages` as its messages (the value
    /// itself when there is no envelope).
    fn wrap(&self, messages: Value) -> Value {
        let Some(envelope) = &self.envelope else {
            return messages;
        };
        let mut out = envelope.clone();
        if let Some(system) = &self.raw_system {
            let key = match self.format {
                Format::Gemini if out.contains_key("system_instruction") => "system_instruction",
                f => f.system_key(),
            };
            out.insert(key.into(), system.clone());
        }
        out.insert(self.format.messages_key().into(), messages);
        if self.format == Format::Gemini {
            // Gemini's tools nest declarations in entries; written back as
            // given unless the views changed (see `gemini::write_tools`).
            if let Some(tools) = gemini::write_tools(out.get("tools"), &self.tools) {
                out.insert("tools".into(), tools);
            }
            return Value::Object(out);
        }
        if self.format == Format::Bedrock {
            bedrock::write_tool_config(&mut out, &self.tools);
            return Value::Object(out);
        }
        // A `tools` array is rewritten; an explicit `"tools": null` stays
        // null unless tools were added.
        let keep_null = out.get("tools").is_some_and(Value::is_null) && self.tools.is_empty();
        if !keep_null && (!self.tools.is_empty() || out.contains_key("tools")) {
            out.insert("tools".into(), Value::Array(self.tools.iter().map(|t| t.raw.clone()).collect()));
        }
        Value::Object(out)
    }

    /// This conversation (format, system prompt, tools, envelope) with
    /// `messages` instead of its own, which are not copied.
    pub(crate) fn with_messages(&self, messages: Vec<Message>) -> Conversation {
        Conversation {
            format: self.format,
            system: self.system.clone(),
            messages,
            tools: self.tools.clone(),
            envelope: self.envelope.clone(),
            raw_system: self.raw_system.clone(),
        }
    }

    /// The conversation as compact JSON in its own format.
    pub fn to_json(&self) -> Result<String> {
        if self.format == Format::Responses {
            return json::to_string(&self.to_value());
        }
        // Written from borrowed messages: `to_value` copies every message,
        // which on a 40 MB transcript cost as much as writing it (issue 36).
        // Same text: the envelope's keys in the same order, the messages
        // in the placeholder's place.
        let messages = RawMessages(&self.messages);
        match self.wrap(Value::Null) {
            Value::Object(out) => {
                json::to_string(&WithValue { map: &out, key: self.format.messages_key(), value: messages })
            }
            _ => json::to_string(&messages),
        }
    }

    /// Parses one message given as JSON, in this conversation's format.
    pub fn parse_message(&self, text: &str) -> Result<Message> {
        let v = json::parse_value("message", text)?;
        shape::check_message(&v, self.format, "the message")?;
        message_from_value(self.format, v, 0)
    }
}

/// Messages written as their raw JSON, in order, without copying them.
struct RawMessages<'a>(&'a [Message]);

impl serde::Serialize for RawMessages<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|m| &m.raw))
    }
}

/// An object written with `value` in place of its entry at `key`.
struct WithValue<'a, V> {
    map: &'a Map<String, Value>,
    key: &'static str,
    value: V,
}

impl<V: serde::Serialize> serde::Serialize for WithValue<'_, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.map.len()))?;
        for (k, v) in self.map {
            if k == self.key {
                m.serialize_entry(k, &self.value)?;
            } else {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

/// Parses one message's JSON in `format`; `index` locates errors.
pub(crate) fn message_from_value(format: Format, v: Value, index: usize) -> Result<Message> {
    match format {
        Format::OpenAi => openai::message(v, index),
        Format::Anthropic => anthropic::message(v, index),
        Format::Responses => responses::message(v, index),
        Format::Gemini => gemini::message(v, index),
        Format::Bedrock => bedrock::message(v, index),
        Format::AiSdk => ai_sdk::message(v, index),
    }
}

/// A message with `text` from `role` (`user`, `system`), as `format` writes
/// one (a summary, a handoff transcript).
pub(crate) fn text_message(format: Format, role: &str, text: &str) -> Value {
    match format {
        Format::OpenAi | Format::Anthropic | Format::Responses | Format::AiSdk => {
            serde_json::json!({"role": role, "content": text})
        }
        Format::Gemini => {
            let role = if role == "assistant" { "model" } else { "user" };
            serde_json::json!({"role": role, "parts": [{"text": text}]})
        }
        Format::Bedrock => {
            let role = if role == "assistant" { "assistant" } else { "user" };
            serde_json::json!({"role": role, "content": [{"text": text}]})
        }
    }
}

/// The result message answering the unanswered call `id` made by message
/// `call`, in a format whose results are messages of their own.
pub(crate) fn synthetic_result_message(format: Format, call: &Message, id: &str, text: &str) -> Value {
    match format {
        Format::Responses => responses::synthetic_output(call, id, text),
        _ => serde_json::json!({"role": "tool", "tool_call_id": id, "content": text}),
    }
}

/// Writes `text` as the content of a result message (`block` None: a tool
/// message or output item) or of its `block`th content block, keeping the
/// content's shape (a string stays a string; parts become one text part).
pub(crate) fn set_result_text(format: Format, raw: &mut Value, block: Option<usize>, text: &str) {
    if format == Format::Responses && block.is_none() {
        return responses::set_output(raw, text);
    }
    if format == Format::Gemini {
        if let Some(part) = block.and_then(|k| raw.get_mut("parts").and_then(|p| p.get_mut(k))) {
            gemini::set_response(part, text);
        }
        return;
    }
    if format == Format::AiSdk {
        if let Some(p) = block.and_then(|k| raw.get_mut("content").and_then(|c| c.get_mut(k))) {
            ai_sdk::set_output(p, text);
        }
        return;
    }
    if format == Format::Bedrock {
        if let Some(b) = block.and_then(|k| raw.get_mut("content").and_then(|c| c.get_mut(k))) {
            bedrock::set_result(b, text);
        }
        return;
    }
    let slot = match block {
        None => raw.get_mut("content"),
        Some(k) => raw.get_mut("content").and_then(|c| c.get_mut(k)).and_then(|b| b.get_mut("content")),
    };
    if let Some(slot) = slot {
        *slot = match slot {
            Value::Array(_) => serde_json::json!([{"type": "text", "text": text}]),
            _ => Value::String(text.to_owned()),
        };
    }
}

fn detect(doc: &Value) -> Format {
    let Some(obj) = doc.as_object() else {
        let items = doc.as_array().map(Vec::as_slice).unwrap_or(&[]);
        if items.iter().any(ai_sdk::looks_like) {
            return Format::AiSdk;
        }
        if items.iter().any(is_gemini_content) {
            return Format::Gemini;
        }
        return if items.iter().any(is_responses_item) { Format::Responses } else { Format::OpenAi };
    };
    if obj.contains_key("input") && !obj.contains_key("messages") {
        return Format::Responses;
    }
    if ["contents", "systemInstruction", "system_instruction"].iter().any(|k| obj.contains_key(*k))
        && !obj.contains_key("messages")
    {
        return Format::Gemini;
    }
    if ["toolConfig", "inferenceConfig", "additionalModelRequestFields"].iter().any(|k| obj.contains_key(*k))
        || obj.get("system").and_then(Value::as_array).is_some_and(|s| s.iter().any(|b| b.get("type").is_none()))
        || obj.get("messages").and_then(Value::as_array).is_some_and(|ms| ms.iter().any(bedrock::looks_like))
    {
        return Format::Bedrock;
    }
    if obj.get("messages").and_then(Value::as_array).is_some_and(|ms| ms.iter().any(ai_sdk::looks_like)) {
        return Format::AiSdk;
    }
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

/// Whether a bare array's item is a Gemini content: `parts` and no
/// `content`.
fn is_gemini_content(item: &Value) -> bool {
    item.get("parts").is_some_and(Value::is_array) && item.get("content").is_none()
}

/// The key of a message's content blocks, in a format whose results are
/// blocks of the next user message (Anthropic, Gemini).
pub(crate) fn blocks_key(format: Format) -> &'static str {
    match format {
        Format::Gemini => "parts",
        _ => "content",
    }
}

/// Whether a content block is a tool result (the codec reads each one, in
/// order, as one of the message's results).
pub(crate) fn is_result_block(format: Format, b: &Value) -> bool {
    match format {
        Format::Gemini => gemini::is_tool_part(b, false),
        Format::Bedrock => bedrock::is_tool_block(b, false),
        Format::AiSdk => ai_sdk::is_tool_part(b, false),
        _ => b.get("type").and_then(Value::as_str) == Some("tool_result"),
    }
}

/// Whether a content block is a tool call or a tool result.
pub(crate) fn is_tool_block(format: Format, b: &Value) -> bool {
    match format {
        Format::Gemini => gemini::is_tool_part(b, true),
        Format::Bedrock => bedrock::is_tool_block(b, true),
        Format::AiSdk => ai_sdk::is_tool_part(b, true),
        _ => {
            b.get("type").and_then(Value::as_str).is_some_and(|t| t.ends_with("tool_use") || t.ends_with("tool_result"))
        }
    }
}

/// A text block in `format`.
pub(crate) fn text_block(format: Format, text: &str) -> Value {
    match format {
        Format::Gemini | Format::Bedrock => serde_json::json!({"text": text}),
        _ => serde_json::json!({"type": "text", "text": text}),
    }
}

/// The result block answering the unanswered call `id` made by message
/// `call`, flagged as an error, in a format whose results are blocks.
pub(crate) fn synthetic_result_block(format: Format, call: &Message, id: &str, text: &str) -> Value {
    match format {
        Format::Gemini => gemini::synthetic_response(call, id, text),
        Format::Bedrock => bedrock::synthetic_result(id, text),
        Format::AiSdk => ai_sdk::synthetic_result(call, id, text),
        _ => serde_json::json!({"type": "tool_result", "tool_use_id": id, "content": text, "is_error": true}),
    }
}

/// A message holding result `blocks` (a user message; an AI SDK `tool`
/// message).
pub(crate) fn user_blocks_message(format: Format, blocks: Vec<Value>) -> Value {
    let role = if format == Format::AiSdk { "tool" } else { "user" };
    serde_json::json!({"role": role, blocks_key(format): blocks})
}

/// Ids of the calls that await a person's approval (an AI SDK
/// `tool-approval-request` for the call in the call's own message): until
/// their result arrives they are not orphans and get no synthetic result.
/// Empty for other formats.
pub fn awaiting_approval(c: &Conversation) -> Vec<String> {
    if c.format != Format::AiSdk {
        return Vec::new();
    }
    let mut out = Vec::new();
    for m in c.messages.iter().filter(|m| m.role == Role::Assistant && !m.tool_calls.is_empty()) {
        for p in m.raw.get("content").and_then(Value::as_array).into_iter().flatten() {
            if p.get("type").and_then(Value::as_str) == Some("tool-approval-request") {
                if let Some(id) = p.get("toolCallId").and_then(Value::as_str) {
                    out.push(id.to_owned());
                }
            }
        }
    }
    out
}

/// Whether `m` is the kind of message that holds the results of the
/// previous message's calls as blocks: a user message, or an AI SDK `tool`
/// message.
pub(crate) fn holds_results(format: Format, m: &Message) -> bool {
    match format {
        Format::AiSdk => m.role == Role::Tool,
        _ => m.role == Role::User,
    }
}

/// Whether call `call` of a message is named by its function name because
/// it has no id of its own (Gemini), so the name repeating is no reuse.
pub(crate) fn id_is_name(format: Format, call: &ToolCall) -> bool {
    format == Format::Gemini && call.id == call.name
}

/// Whether an item is one only the Responses API sends: a Responses item
/// type, or a message whose content parts are Responses parts.
fn is_responses_item(item: &Value) -> bool {
    let is = |v: Option<&Value>, set: &[&str]| v.and_then(Value::as_str).is_some_and(|t| set.contains(&t));
    if is(item.get("type"), responses::ITEM_TYPES) || is(item.get("type"), &["message"]) {
        return true;
    }
    item.get("content")
        .and_then(Value::as_array)
        .is_some_and(|parts| parts.iter().any(|p| is(p.get("type"), responses::PART_TYPES)))
}

/// The text a block carries: every string value in it, depth first, except
/// its `type`, ids, signatures, cache settings and base64 or URL data, joined
/// with newlines. Used to count blocks turnfit does not model.
pub(crate) fn block_text(v: &Value) -> String {
    fn walk(v: &Value, key: &str, out: &mut Vec<String>) {
        const SKIP: &[&str] = &[
            "type",
            "id",
            "tool_use_id",
            "signature",
            "data",
            "encrypted_content",
            "cache_control",
            "media_type",
            "url",
        ];
        match v {
            Value::String(s) if !SKIP.contains(&key) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|x| walk(x, key, out)),
            Value::Object(obj) => {
                for (k, x) in obj {
                    if !SKIP.contains(&k.as_str()) {
                        walk(x, k, out)
                    }
                }
            }
            Value::Number(n) => out.push(n.to_string()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, "", &mut out);
    out.join("\n")
}

/// Width and height of a PNG, GIF, WebP or JPEG image given as base64 (or a
/// `data:` URL), read from its header; None when the data is not one of
/// those or is cut before the size.
pub(crate) fn image_size(data: &str) -> Option<(u32, u32)> {
    let b64 = match data.strip_prefix("data:") {
        Some(rest) => rest.split_once(',')?.1,
        None => data,
    };
    let bytes = b64_prefix(b64, 96 * 1024);
    let be16 = |i: usize| bytes.get(i..i + 2).map(|b| u32::from(u16::from_be_bytes([b[0], b[1]])));
    let le16 = |i: usize| bytes.get(i..i + 2).map(|b| u32::from(u16::from_le_bytes([b[0], b[1]])));
    let be32 = |i: usize| bytes.get(i..i + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(16)?, be32(20)?));
    }
    if bytes.starts_with(b"GIF8") {
        return Some((le16(6)?, le16(8)?));
    }
    if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        return match bytes.get(12..16)? {
            b"VP8X" => {
                let w = u32::from_le_bytes([bytes[24], bytes[25], bytes[26], 0]) + 1;
                let h = u32::from_le_bytes([*bytes.get(27)?, *bytes.get(28)?, *bytes.get(29)?, 0]) + 1;
                Some((w, h))
            }
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            b"VP8L" => {
                let b = bytes.get(21..25)?;
                let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                Some(((v & 0x3fff) + 1, ((v >> 14) & 0x3fff) + 1))
            }
            _ => None,
        };
    }
    if bytes.starts_with(&[0xff, 0xd8]) {
        let mut i = 2;
        while i + 9 < bytes.len() {
            if bytes[i] != 0xff {
                return None;
            }
            let marker = bytes[i + 1];
            if marker == 0xff {
                i += 1;
                continue;
            }
            let len = be16(i + 2)? as usize;
            if matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
                return Some((be16(i + 7)?, be16(i + 5)?));
            }
            i += 2 + len;
        }
    }
    None
}

/// Pages of a base64 PDF: its `/Type /Page` objects (not `/Pages`), at
/// least 1 (a PDF cut short or with compressed object streams shows fewer).
pub(crate) fn pdf_pages(b64: &str) -> usize {
    let bytes = b64_prefix(b64, crate::limits::MAX_JSON_BYTES);
    let mut n = 0;
    for marker in [&b"/Type /Page"[..], &b"/Type/Page"[..]] {
        let mut i = 0;
        while let Some(at) = bytes[i..].windows(marker.len()).position(|w| w == marker) {
            let end = i + at + marker.len();
            if bytes.get(end) != Some(&b's') {
                n += 1;
            }
            i = end;
        }
    }
    n.max(1)
}

/// Decodes up to `max` bytes of standard base64 (whitespace skipped, stops
/// at the first character that is not base64).
fn b64_prefix(s: &str, max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
            if out.len() >= max {
                break;
            }
        }
    }
    out
}

/// Takes a request's `tools` array out of its envelope, leaving an empty array
/// in its place (the envelope is written back around the tools, so it must
/// not keep a second copy of them). Absent or null is no tools.
pub(crate) fn take_tools(slot: Option<&mut Value>) -> Result<Vec<Value>> {
    match slot {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) if v.is_array() => match std::mem::replace(v, Value::Array(Vec::new())) {
            Value::Array(tools) => Ok(tools),
            _ => Ok(Vec::new()),
        },
        Some(_) => Err(bad("tools", "must be an array")),
    }
}

/// A schema error at `path` (e.g. `messages[3].content[1]`).
pub(crate) fn bad(path: &str, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidJson, format!("conversation {path}: {what}"))
}

/// `{base}{field}[{i}]` (an error path such as `messages[3]` or
/// `messages[3].tool_calls[0]`) without the formatting machinery: a path is
/// built for every message and call while parsing, before any error, and
/// `format!` was 1.3% of `fit` on a 12 MB transcript (issue 36).
pub(crate) fn indexed(base: &str, field: &str, i: usize) -> String {
    let mut digits = [0u8; 20];
    let (mut n, mut k) = (i, digits.len());
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut s = String::with_capacity(base.len() + field.len() + 22);
    s.push_str(base);
    s.push_str(field);
    s.push('[');
    s.extend(digits[k..].iter().map(|&d| char::from(d)));
    s.push(']');
    s
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

/// The schema of a conversation document as [`Conversation::parse`] reads
/// it: the three shapes of docs/formats.md. Messages are the providers'
/// own (kept as given, unknown fields included), so the schema checks the
/// envelope and that each message is an object, no more.
#[cfg(feature = "schema")]
pub struct ConversationDoc;

#[cfg(feature = "schema")]
impl schemars::JsonSchema for ConversationDoc {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Conversation".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A conversation: OpenAI Chat Completions ({messages} or a bare array of messages), Anthropic Messages ({system?, messages}), OpenAI Responses ({instructions?, input}, or a bare array of items), Gemini generateContent ({systemInstruction?, contents}, or a bare array of contents), Bedrock Converse ({system?, messages, toolConfig?}) or Vercel AI SDK ModelMessage ({system?, messages, tools?}, or a bare array of messages). Other top-level fields are kept as given.",
            "anyOf": [
                {"title": "bare messages or Responses items", "type": "array", "items": {"type": "object"}},
                {
                    "title": "Chat Completions, Anthropic Messages, Bedrock Converse or AI SDK",
                    "type": "object",
                    "required": ["messages"],
                    "properties": {
                        "messages": {"type": "array", "items": {"type": "object"}},
                        "system": {"anyOf": [{"type": "string"}, {"type": "object"}, {"type": "array", "items": {"type": "object"}}]},
                        "tools": {"type": "array", "items": {"type": "object"}}
                    }
                },
                {
                    "title": "Responses",
                    "type": "object",
                    "required": ["input"],
                    "properties": {
                        "input": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}]},
                        "instructions": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}, {"type": "null"}]},
                        "tools": {"type": "array", "items": {"type": "object"}}
                    }
                },
                {
                    "title": "Gemini generateContent",
                    "type": "object",
                    "required": ["contents"],
                    "properties": {
                        "contents": {"type": "array", "items": {"type": "object"}},
                        "systemInstruction": {"anyOf": [{"type": "string"}, {"type": "object"}]},
                        "tools": {"type": "array", "items": {"type": "object"}}
                    }
                }
            ]
        })
    }
}

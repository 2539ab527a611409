//! Filtering the conversation handed over with a handoff. The receiving
//! agent has its own tools and rarely needs the sender's tool traffic, so
//! the transcript can be passed on either without tool calls and results
//! (`drop_tools`), or folded into one user message that quotes it
//! (`nest`). The output is in the input's shape (OpenAI or Anthropic),
//! with untouched messages byte-for-byte as given, and every change is
//! listed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::{message_from_value, Conversation, Message, Part, Role};
use crate::Result;

/// What to do with the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FilterMode {
    /// Remove tool calls, tool results and tool definitions; drop messages
    /// left empty.
    #[default]
    DropTools,
    /// Keep system prompts; replace every other message with one user
    /// message quoting the earlier transcript.
    Nest,
}

/// Filter options (JSON at the C ABI).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FilterOptions {
    /// The mode (default `drop_tools`).
    #[serde(default)]
    pub mode: FilterMode,
    /// `nest`: a line written before the quoted transcript (default:
    /// "Earlier conversation, handed over from the previous agent:").
    #[serde(default)]
    pub header: Option<String>,
}

/// One change the filter made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FilterChange {
    /// Index of the message in the input.
    pub index: usize,
    /// `dropped_message`, `removed_tool_calls` or `nested`.
    pub action: &'static str,
    /// What was removed or nested.
    pub detail: String,
}

/// The filtered conversation and the changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FilterResult {
    /// The conversation in the input's shape.
    pub conversation: Value,
    /// Every change, in message order.
    pub changes: Vec<FilterChange>,
    /// Tool definitions removed (drop_tools).
    pub removed_tools: usize,
}

const DEFAULT_HEADER: &str = "Earlier conversation, handed over from the previous agent:";

/// Filters `text` (a conversation in either shape, detected) with options
/// given as JSON (`None` for the defaults).
pub fn filter_json(text: &str, options_json: Option<&str>) -> Result<FilterResult> {
    let options: FilterOptions = match options_json {
        Some(o) => crate::json::parse("filter options", o)?,
        None => FilterOptions::default(),
    };
    let c = Conversation::parse(text, None)?;
    let (c, changes, removed_tools) = filter(&c, &options)?;
    Ok(FilterResult { conversation: c.to_value(), changes, removed_tools })
}

/// Filters a parsed conversation; returns it with the changes and the
/// number of tool definitions removed.
pub fn filter(c: &Conversation, options: &FilterOptions) -> Result<(Conversation, Vec<FilterChange>, usize)> {
    match options.mode {
        FilterMode::DropTools => drop_tools(c),
        FilterMode::Nest => nest(c, options.header.as_deref().unwrap_or(DEFAULT_HEADER)),
    }
}

fn empty_content(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

fn drop_tools(c: &Conversation) -> Result<(Conversation, Vec<FilterChange>, usize)> {
    let mut out = c.clone();
    let mut changes = Vec::new();
    let mut kept = Vec::new();
    for (i, m) in c.messages.iter().enumerate() {
        if matches!(m.role, Role::Tool | Role::Function) {
            changes.push(FilterChange {
                index: i,
                action: "dropped_message",
                detail: format!("{} result", m.role.as_str()),
            });
            continue;
        }
        let mut raw = m.raw().clone();
        let mut removed = Vec::new();
        if let Some(obj) = raw.as_object_mut() {
            for key in ["tool_calls", "function_call"] {
                if obj.remove(key).is_some_and(|v| !v.is_null()) {
                    removed.push(key);
                }
            }
            let key = crate::chat::blocks_key(c.format);
            if let Some(Value::Array(blocks)) = obj.get_mut(key) {
                let before = blocks.len();
                blocks.retain(|b| !crate::chat::is_tool_block(c.format, b));
                if blocks.len() != before {
                    removed.push("tool blocks");
                }
            }
            if !removed.is_empty() && empty_content(obj.get(key)) {
                changes.push(FilterChange {
                    index: i,
                    action: "dropped_message",
                    detail: format!("{} message with only {}", m.role.as_str(), removed.join(" and ")),
                });
                continue;
            }
        }
        if removed.is_empty() {
            kept.push(m.clone());
        } else {
            changes.push(FilterChange { index: i, action: "removed_tool_calls", detail: removed.join(" and ") });
            kept.push(message_from_value(c.format, raw, i)?);
        }
    }
    out.messages = kept;
    let removed_tools = out.tools.len();
    out.tools.clear();
    Ok((out, changes, removed_tools))
}

fn transcript_line(m: &Message) -> String {
    let mut out = String::new();
    let text = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.clone()),
            Part::ToolResult { id, text, is_error } => {
                Some(format!("[tool result {id}{}] {text}", if *is_error { " (error)" } else { "" }))
            }
            Part::Image { .. } => Some("[image]".into()),
            Part::Attachment(kind) => Some(format!("[{kind}]")),
            Part::Block { kind, .. } => Some(format!("[{kind}]")),
            Part::Pdf { .. } => Some("[document]".into()),
            Part::Thinking(_) | Part::RedactedThinking(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let who = match (m.role, &m.tool_call_id) {
        (Role::Tool | Role::Function, Some(id)) => format!("tool result {id}"),
        (r, _) => r.as_str().to_owned(),
    };
    if !text.is_empty() {
        out.push_str(&format!("[{who}] {text}\n"));
    }
    for call in &m.tool_calls {
        out.push_str(&format!("[{who} called {}({}) id={}]\n", call.name, call.arguments, call.id));
    }
    out
}

fn nest(c: &Conversation, header: &str) -> Result<(Conversation, Vec<FilterChange>, usize)> {
    let mut out = c.clone();
    let mut kept = Vec::new();
    let mut changes = Vec::new();
    let mut body = String::new();
    for (i, m) in c.messages.iter().enumerate() {
        if matches!(m.role, Role::System | Role::Developer) {
            kept.push(m.clone());
            continue;
        }
        body.push_str(&transcript_line(m));
        changes.push(FilterChange { index: i, action: "nested", detail: m.role.as_str().to_owned() });
    }
    if !changes.is_empty() {
        let body = body.replace("</previous_conversation", "<\\/previous_conversation");
        let text = format!("{header}\n<previous_conversation>\n{body}</previous_conversation>");
        let raw = crate::chat::text_message(c.format, "user", &text);
        kept.push(message_from_value(c.format, raw, kept.len())?);
    }
    out.messages = kept;
    Ok((out, changes, 0))
}

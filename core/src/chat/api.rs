//! Which OpenAI API a request is sent to, when that is not the one its
//! format is written for (issue 47). A framework's provider converts its
//! own messages to the wire: the AI SDK's `openai('gpt-4o')` sends
//! `ai_sdk` messages to the Responses API (`openai.chat(...)` to Chat
//! Completions); the Agents SDK's `OpenAIChatCompletionsModel` sends its
//! Responses-shaped items as Chat messages. The count must be of what is
//! sent, so the caller says which API (`FitOptions::api`) and the
//! accountant counts the messages in that API's framing
//! (`Accountant::with_api`).

use serde::{Deserialize, Serialize};

use super::{Conversation, Format, Message, Role};
use crate::{Error, Result};

/// An OpenAI API a request is sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// Chat Completions (`/v1/chat/completions`): one assistant message
    /// carries its text and all its calls.
    #[serde(alias = "chat")]
    ChatCompletions,
    /// Responses (`/v1/responses`): an assistant's text is a message item
    /// and each call a `function_call` item of its own.
    Responses,
}

impl Api {
    /// The API a conversation of `format` is sent to unless told otherwise.
    pub fn native(format: Format) -> Option<Api> {
        match format {
            Format::OpenAi | Format::AiSdk => Some(Api::ChatCompletions),
            Format::Responses => Some(Api::Responses),
            _ => None,
        }
    }

    /// The name the options take.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::ChatCompletions => "chat_completions",
            Api::Responses => "responses",
        }
    }

    /// Checks that a conversation of `format` can be counted as sent to
    /// `api`: the OpenAI-shaped formats (`openai`, `responses`, `ai_sdk`)
    /// can; Anthropic, Gemini and Bedrock requests go to their own APIs.
    pub fn check(api: Option<Api>, format: Format) -> Result<()> {
        match (api, Api::native(format)) {
            (None, _) | (Some(_), Some(_)) => Ok(()),
            (Some(a), None) => Err(Error::invalid_argument(format!(
                "options.api {:?} applies to openai, responses and ai_sdk conversations; a {} conversation is \
                 sent to its own API (leave options.api out)",
                a.as_str(),
                format.as_str()
            ))),
        }
    }
}

/// How one Responses item is sent in a Chat Completions request, by the
/// rule of `@openai/agents-openai`'s `itemsToMessages` (and the Python
/// SDK's `Converter.items_to_messages`): an assistant message item and the
/// `function_call` items right after it are one Chat assistant message;
/// several calls in it are parallel calls. Set by [`mark_chat_joins`];
/// a message built later is [`ChatJoin::Own`], counted as a message of its
/// own (never less than what is sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ChatJoin {
    /// A Chat message of its own.
    #[default]
    Own,
    /// The one call of the assistant message item just before it.
    AfterText,
    /// One of several calls sent in one assistant message.
    Parallel {
        /// The first call of the message.
        first: bool,
        /// The message also has the text of the item before the calls.
        after_text: bool,
    },
}

/// Marks how each item of a Responses conversation is sent as Chat
/// messages ([`ChatJoin`]); clears the marks for any other API.
pub(crate) fn mark_chat_joins(c: &mut Conversation, api: Option<Api>) {
    for m in &mut c.messages {
        m.chat_join = ChatJoin::Own;
    }
    if c.format != Format::Responses || api != Some(Api::ChatCompletions) {
        return;
    }
    let ms = &mut c.messages;
    let mut i = 0;
    while i < ms.len() {
        let text = is_text_item(&ms[i]);
        let start = if text { i + 1 } else { i };
        let mut end = start;
        while end < ms.len() && is_function_call(&ms[end]) {
            end += 1;
        }
        let calls = end - start;
        for (k, m) in ms[start..end].iter_mut().enumerate() {
            m.chat_join = match (calls, text) {
                (1, false) => ChatJoin::Own,
                (1, true) => ChatJoin::AfterText,
                _ => ChatJoin::Parallel { first: k == 0, after_text: text },
            };
        }
        i = end.max(i + 1);
    }
}

/// An assistant `message` item (text, no call).
fn is_text_item(m: &Message) -> bool {
    m.role == Role::Assistant
        && m.tool_calls.is_empty()
        && m.raw.get("type").and_then(serde_json::Value::as_str).is_none_or(|t| t == "message")
}

/// A `function_call` item (the only call type a Chat request carries).
fn is_function_call(m: &Message) -> bool {
    m.raw.get("type").and_then(serde_json::Value::as_str) == Some("function_call") && m.tool_calls.len() == 1
}

#[cfg(test)]
mod tests;

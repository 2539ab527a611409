//! Counting a message in the framing of the API its request is sent to
//! when that is not the API its format is written for (issue 47,
//! `FitOptions::api`, `chat::Api`):
//!
//! - **to Responses** (an `ai_sdk` or `openai` conversation): an assistant
//!   message is sent as items, as `@ai-sdk/openai`'s
//!   `convertToOpenAIResponsesInput` sends it: each text part an output
//!   `message` item, each reasoning part a `reasoning` item, each call a
//!   `function_call` item of its own, each framed as a message. Other
//!   messages cost what they cost in Chat (a tool result is a
//!   `function_call_output` item, framed as a `tool` message; a system
//!   message is a `system` or `developer` item). Request-level rules
//!   (the tool block, the hidden prompt, estimates) are the Responses ones
//!   ([`Accountant::sends_responses`]).
//! - **to Chat Completions** (a `responses` conversation): an assistant
//!   message item and the `function_call` items after it are one Chat
//!   message (`chat::ChatJoin`, as `@openai/agents-openai` converts them):
//!   a call after text costs no message framing; several calls are the one
//!   parallel call the Chat counting rules price, spread over the items
//!   so that their sum is never under the message's count.

use serde_json::Value;

use super::{Accountant, COMPACT_STRING_MEMBER, PARALLEL_MARGIN_PERCENT, REASONING_REPLY_PRIMING};
use crate::chat::{Api, ChatJoin, Conversation, Format, Message, Part, Role, ToolCall};
use crate::Result;

impl Accountant {
    /// The same accountant counting requests as sent to `api` (None: each
    /// conversation as sent to the API its format is written for).
    pub fn with_api(self, api: Option<Api>) -> Accountant {
        Accountant { api, ..self }
    }

    /// The API requests are counted as sent to, when set.
    pub fn api(&self) -> Option<Api> {
        self.api
    }

    /// Whether `c` is counted as a Responses request.
    pub(super) fn sends_responses(&self, c: &Conversation) -> bool {
        match self.api {
            Some(api) => api == Api::Responses,
            None => c.format == Format::Responses,
        }
    }

    /// Whether a request's tool block is the Responses API's on a reasoning
    /// model (gpt-5, o3, o4): its own rules, measured on the Responses
    /// tuning set ([`Accountant::request_tools`]).
    pub(super) fn responses_block(&self, c: &Conversation) -> bool {
        self.sends_responses(c) && self.reasoning_model()
    }

    /// Whether this is OpenAI framing for a reasoning model (gpt-5 but
    /// gpt-5-chat, o3, o4: the reply is primed with 2 tokens).
    pub(super) fn reasoning_model(&self) -> bool {
        self.framing.tool_style == super::ToolStyle::TypeScript && self.framing.reply_priming == REASONING_REPLY_PRIMING
    }

    /// Whether `m` is one of several calls sent as one Chat message.
    pub(super) fn sent_in_parallel(&self, m: &Message) -> bool {
        self.api == Some(Api::ChatCompletions) && matches!(m.chat_join, ChatJoin::Parallel { .. })
    }

    /// A message's count in the request's API when it differs from what
    /// its format's own framing says; None when it does not.
    pub(super) fn sent_as_api(&self, m: &Message) -> Result<Option<usize>> {
        match self.api {
            Some(Api::Responses) if m.role == Role::Assistant && m.raw().get("type").is_none() => {
                self.as_items(m).map(Some)
            }
            Some(Api::ChatCompletions) if m.tool_calls.len() == 1 => match m.chat_join {
                ChatJoin::Own => Ok(None),
                ChatJoin::AfterText => self.call(&m.tool_calls[0]).map(Some),
                ChatJoin::Parallel { first, after_text } => {
                    self.parallel_share(&m.tool_calls[0], first, after_text).map(Some)
                }
            },
            _ => Ok(None),
        }
    }

    /// An assistant message (not a Responses item) as the Responses items
    /// it is sent as.
    fn as_items(&self, m: &Message) -> Result<usize> {
        let f = &self.framing;
        let frame = f.tokens_per_message + self.count("assistant")?;
        let mut n = 0;
        let mut content = false;
        let mut text = false;
        for p in &m.parts {
            n += self.part(p)?;
            match p {
                // A reasoning part is an item of its own.
                Part::Thinking(_) | Part::RedactedThinking(_) => n += frame,
                Part::Text(_) => (content, text) = (true, true),
                _ => content = true,
            }
        }
        if content {
            n += frame;
        }
        if text {
            n += f.assistant_channel;
        }
        // The AI SDK sends each text part as an item (its codec joined them
        // as the Chat provider does): the others' framing, and 1 for where
        // the text was split.
        let texts = m
            .raw()
            .get("content")
            .and_then(Value::as_array)
            .map_or(0, |ps| ps.iter().filter(|p| p.get("type").and_then(Value::as_str) == Some("text")).count());
        n += texts.saturating_sub(1) * (frame + f.assistant_channel + 1);
        for c in &m.tool_calls {
            n += frame + self.call(c)?;
        }
        Ok(n)
    }

    /// One call as the Chat and Responses framings price it inside its
    /// message: name, arguments, the call constant, and the
    /// `functions.{name}` author of its result.
    fn call(&self, c: &ToolCall) -> Result<usize> {
        let f = &self.framing;
        let mut n = self.count(&c.name)? + self.count(&c.arguments)? + f.tokens_per_tool_call;
        if f.tool_style == super::ToolStyle::TypeScript {
            if c.arguments.contains(COMPACT_STRING_MEMBER) {
                n += 1;
            }
            n += self.count(&format!("functions.{}", c.name))?;
        }
        Ok(n)
    }

    /// One call's share of the `multi_tool_use.parallel` call its Chat
    /// message is counted as (`parallel_call`): its entry and a separator
    /// with the margin, its result's author; the first call also carries
    /// the wrapper, the call constant and (without text before it) the
    /// message framing. Pieces are counted apart, each with its margin
    /// rounded up, so the shares add up to at least the message's count.
    fn parallel_share(&self, c: &ToolCall, first: bool, after_text: bool) -> Result<usize> {
        let f = &self.framing;
        let margin = |t: usize| (t * PARALLEL_MARGIN_PERCENT).div_ceil(100);
        let entry = format!("{{\"recipient_name\":\"functions.{}\",\"parameters\":{}}}", c.name, c.arguments);
        let w = self.count(&entry)? + 1;
        let mut n = w + margin(w) + self.count(&format!("functions.{}", c.name))?;
        if first {
            let wrapper = self.count("{\"tool_uses\":[]}")?;
            n += self.count("multi_tool_use.parallel")? + f.tokens_per_tool_call + wrapper + margin(wrapper);
            if !after_text {
                n += f.tokens_per_message + self.count("assistant")?;
            }
        }
        Ok(n)
    }
}

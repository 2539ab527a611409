//! Token accounting for chat requests, following OpenAI's published recipe
//! ("How to count tokens with tiktoken", openai-cookbook, sections 6 and 7):
//!
//! - every message costs 3 tokens of framing, plus its role, its content and
//!   its name (a name costs 1 more token);
//! - every reply is primed with `<|start|>assistant<|message|>`: 3 tokens;
//! - tool definitions cost `func_init` per function, the tokens of
//!   `name:description` (a trailing period dropped), `prop_init` when there
//!   are properties, then per property `prop_key` plus `name:type:description`,
//!   with `enum_init` once and `enum_item` plus the item per enum value, and
//!   `func_end` once for the whole list. The constants are 7/3/3/-3/3/12 for
//!   gpt-4o-family (o200k) models and 10/3/3/-3/3/12 for gpt-4 and
//!   gpt-3.5-turbo (cl100k). The guide's worked examples (124/129 tokens for
//!   its corporate-jargon conversation, 101/105 for its weather tool) are
//!   golden tests here.
//!
//! Beyond what the guide publishes, ctxkit declares its own rules (see
//! docs/formats.md, "Accounting"): an assistant tool call costs its name and
//! arguments plus [`Framing::tokens_per_tool_call`]; images follow OpenAI's
//! tile formula when width and height are known, and a 1024x1024 high-detail
//! image (765 tokens) otherwise; audio, files and documents cost
//! [`ATTACHMENT_ESTIMATE`]; nested schema properties are not counted (the
//! guide's recipe looks at top-level properties only).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::{Conversation, Message, Part, Tool};
use crate::{Encoding, Result, Tokenizer};

/// Tokens assumed for an audio clip, a file or a document whose content is
/// not text ctxkit can count. A declared estimate, not a measurement.
pub const ATTACHMENT_ESTIMATE: usize = 256;

/// Chat framing constants for one model family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Framing {
    /// Per message (`<|start|>{role}...<|end|>` minus the role itself).
    pub tokens_per_message: usize,
    /// Extra for a `name` field.
    pub tokens_per_name: usize,
    /// Reply priming, once per request.
    pub reply_priming: usize,
    /// Per assistant tool call, on top of its name and arguments (ctxkit's
    /// rule; OpenAI does not publish one).
    pub tokens_per_tool_call: usize,
    /// Tool-definition constants from the guide.
    pub func_init: i64,
    /// Once per function that has properties.
    pub prop_init: i64,
    /// Per property.
    pub prop_key: i64,
    /// Once per enum.
    pub enum_init: i64,
    /// Per enum item.
    pub enum_item: i64,
    /// Once per request with tools.
    pub func_end: i64,
}

impl Framing {
    /// The published constants for models using `encoding`.
    pub fn for_encoding(encoding: Encoding) -> Framing {
        let func_init = if encoding == Encoding::O200kBase { 7 } else { 10 };
        Framing {
            tokens_per_message: 3,
            tokens_per_name: 1,
            reply_priming: 3,
            tokens_per_tool_call: 3,
            func_init,
            prop_init: 3,
            prop_key: 3,
            enum_init: -3,
            enum_item: 3,
            func_end: 12,
        }
    }
}

/// Counts messages, system prompts and tool definitions for one model.
#[derive(Debug, Clone, Copy)]
pub struct Accountant {
    tokenizer: Tokenizer,
    framing: Framing,
}

impl Accountant {
    /// An accountant counting with `tokenizer` under `framing`.
    pub fn new(tokenizer: Tokenizer, framing: Framing) -> Accountant {
        Accountant { tokenizer, framing }
    }

    /// The accountant for `model` as the registry describes it: the model's
    /// encoding and the published framing constants for it.
    pub fn for_model(registry: &crate::ModelRegistry, model: &str) -> Result<(Accountant, crate::ModelInfo)> {
        let (tokenizer, info) = registry.tokenizer(model, None)?;
        Ok((Accountant::new(tokenizer, Framing::for_encoding(info.encoding)), info))
    }

    /// The framing constants in use.
    pub fn framing(&self) -> &Framing {
        &self.framing
    }

    /// The tokenizer in use.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    fn count(&self, s: &str) -> Result<usize> {
        self.tokenizer.count(s)
    }

    /// Tokens one message adds to a request.
    pub fn message(&self, m: &Message) -> Result<usize> {
        let f = &self.framing;
        let mut n = f.tokens_per_message + self.count(m.role.as_str())?;
        if let Some(name) = &m.name {
            n += self.count(name)? + f.tokens_per_name;
        }
        for p in &m.parts {
            n += self.part(p)?;
        }
        for c in &m.tool_calls {
            n += self.count(&c.name)? + self.count(&c.arguments)? + f.tokens_per_tool_call;
        }
        Ok(n)
    }

    /// Tokens of one content part (used for block-level manifests).
    pub fn part(&self, p: &Part) -> Result<usize> {
        Ok(match p {
            Part::Text(t) | Part::Thinking(t) => self.count(t)?,
            Part::ToolResult { text, .. } => self.count(text)? + self.framing.tokens_per_tool_call,
            Part::Image { detail, width, height } => image_tokens(detail.as_deref(), *width, *height),
            Part::Attachment(_) => ATTACHMENT_ESTIMATE,
            // Opaque base64-like data: about 4 bytes per token.
            Part::RedactedThinking(len) => len.div_ceil(4),
        })
    }

    /// Tokens of a top-level system prompt (Anthropic), framed like a message.
    pub fn system(&self, text: &str) -> Result<usize> {
        Ok(self.framing.tokens_per_message + self.count("system")? + self.count(text)?)
    }

    /// Tokens of a tool list, by the guide's recipe (0 for no tools).
    pub fn tools(&self, tools: &[Tool]) -> Result<usize> {
        if tools.is_empty() {
            return Ok(0);
        }
        let f = &self.framing;
        let mut n: i64 = 0;
        for t in tools {
            n += f.func_init;
            let desc = t.description.as_deref().unwrap_or("");
            n += self.count(&format!("{}:{}", t.name, desc.strip_suffix('.').unwrap_or(desc)))? as i64;
            let props = t.parameters.get("properties").and_then(Value::as_object);
            if let Some(props) = props.filter(|p| !p.is_empty()) {
                n += f.prop_init;
                for (key, schema) in props {
                    n += f.prop_key;
                    if let Some(items) = schema.get("enum").and_then(Value::as_array) {
                        n += f.enum_init;
                        for item in items {
                            n += f.enum_item;
                            let text = item.as_str().map_or_else(|| item.to_string(), str::to_owned);
                            n += self.count(&text)? as i64;
                        }
                    }
                    let ty = match schema.get("type") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    };
                    let pdesc = schema.get("description").and_then(Value::as_str).unwrap_or("");
                    let pdesc = pdesc.strip_suffix('.').unwrap_or(pdesc);
                    n += self.count(&format!("{key}:{ty}:{pdesc}"))? as i64;
                }
            }
        }
        n += f.func_end;
        Ok(n.max(0) as usize)
    }

    /// Prompt tokens of everything but the messages: reply priming, tool
    /// definitions and a top-level system prompt.
    pub fn overhead(&self, c: &Conversation) -> Result<usize> {
        let mut n = self.framing.reply_priming + self.tools(&c.tools)?;
        if let Some(s) = &c.system {
            n += self.system(s)?;
        }
        Ok(n)
    }

    /// Prompt tokens of a whole request: system, tools, messages and reply priming.
    pub fn conversation(&self, c: &Conversation) -> Result<usize> {
        let mut n = self.overhead(c)?;
        for m in &c.messages {
            n += self.message(m)?;
        }
        Ok(n)
    }
}

/// OpenAI's image cost: 85 tokens at low detail; otherwise fit within
/// 2048x2048, scale the shortest side down to 768, and add 170 per 512-pixel
/// tile to the base 85. Unknown sizes cost a 1024x1024 image (765).
pub fn image_tokens(detail: Option<&str>, width: Option<u32>, height: Option<u32>) -> usize {
    if detail == Some("low") {
        return 85;
    }
    let (w, h) = match (width, height) {
        (Some(w), Some(h)) if w > 0 && h > 0 => (f64::from(w), f64::from(h)),
        _ => (1024.0, 1024.0),
    };
    let fit = (2048.0 / w.max(h)).min(1.0);
    let (w, h) = (w * fit, h * fit);
    let shrink = (768.0 / w.min(h)).min(1.0);
    let (w, h) = (w * shrink, h * shrink);
    let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
    85 + 170 * tiles as usize
}

#[cfg(test)]
mod tests;

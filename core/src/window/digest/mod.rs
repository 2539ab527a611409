//! The deterministic digest: what a summarized span of an agent's
//! conversation did, built without a model, in a fixed layout (see
//! [`layout`]) and within a token budget. It is the summary when the host has
//! no model at hand (the CLI, `fit`), and the scaffolding handed to the
//! host's model in the summary request.
//!
//! Four sections, each optional ([`Section`]):
//! - **requests**: what the user asked inside the span, verbatim when short;
//! - **actions**: one line per round, oldest first: the assistant's stated
//!   intent, each call (tool and key arguments) and its outcome (ok, or the
//!   error line, exit status or test summary); older lines merge into one
//!   counted line when the budget is short;
//! - **state**: files created or edited, the last outcome of every call run
//!   more than once, errors no later run of the same call has cleared;
//! - **facts**: well-formed paths, URLs and identifiers from tool arguments
//!   and results ([`grammar`]), ranked by frequency and recency.
//!
//! Same input, same digest: nothing depends on hashing order or time.

mod calls;
mod facts;
pub mod grammar;
pub mod layout;
mod outcome;
mod rounds;
mod state;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::chat::{Message, Part, Role};
use crate::{Result, Tokenizer};

/// A section of the digest. The layout's order is fixed whatever order
/// they are listed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(rename = "DigestSection"))]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// User requests made inside the span.
    Requests,
    /// The action log.
    Actions,
    /// Files changed, repeated commands, open errors.
    State,
    /// Paths, URLs, identifiers.
    Facts,
}

impl Section {
    /// Every section, in layout order.
    pub const ALL: [Section; 4] = [Section::Requests, Section::Actions, Section::State, Section::Facts];
}

/// Digest options, carried in the compaction policy as `digest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct DigestOptions {
    /// Tokens the digest may take; 0 means the summary's own budget
    /// (`summary_max_tokens`, or less when the window has less room).
    pub max_tokens: usize,
    /// Sections to include.
    pub sections: Vec<Section>,
}

impl Default for DigestOptions {
    fn default() -> Self {
        DigestOptions { max_tokens: 0, sections: Section::ALL.to_vec() }
    }
}

impl DigestOptions {
    /// The digest's budget given the room a summary has: the smaller of the
    /// two, or the room when `max_tokens` is 0.
    pub fn budget(&self, room: usize) -> usize {
        if self.max_tokens == 0 {
            room
        } else {
            self.max_tokens.min(room)
        }
    }
}

/// A digest and what its action log covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    /// The text, at most the budget's tokens.
    pub text: String,
    /// Tool calls in the span.
    pub calls: usize,
    /// Calls whose result reports an error.
    pub errors: usize,
    /// How the action log accounts for them.
    pub coverage: layout::Coverage,
}

/// Builds the digest of `messages` (split into rounds at `starts`, indices
/// into `messages`) with the given sections, in at most `max_tokens` tokens.
pub fn build(
    messages: &[Message],
    starts: &[usize],
    tok: &Tokenizer,
    max_tokens: usize,
    sections: &[Section],
) -> Result<Digest> {
    let a = rounds::analyze(messages, starts);
    let st = state::state(&a);
    let facts = facts::facts(&a, &st.files);
    let (text, coverage) = layout::fit(&a, &st, &facts, sections, tok, max_tokens)?;
    let errors = a.calls.iter().filter(|c| c.outcome.as_ref().is_some_and(|o| o.error)).count();
    Ok(Digest { text, calls: a.calls.len(), errors, coverage })
}

/// Round starts within a span: every message except tool results, so an
/// assistant message and the results answering it (OpenAI `tool` messages,
/// an Anthropic user message of `tool_result` blocks) form one round.
pub fn round_starts(messages: &[Message]) -> Vec<usize> {
    let result = |m: &Message| {
        matches!(m.role, Role::Tool | Role::Function)
            || (m.role == Role::User
                && !m.parts.is_empty()
                && m.parts.iter().all(|p| matches!(p, Part::ToolResult { .. })))
    };
    (0..messages.len()).filter(|&i| i == 0 || !result(&messages[i])).collect()
}

/// The digest of `messages` with every section, in at most `max_tokens`
/// tokens. `starts` are the round starts (indices into `messages`).
#[cfg(test)]
pub(crate) fn digest(messages: &[Message], starts: &[usize], tok: &Tokenizer, max_tokens: usize) -> Result<String> {
    Ok(build(messages, starts, tok, max_tokens, &Section::ALL)?.text)
}

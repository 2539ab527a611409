//! A model's own prompt counter (issue 50): for a model registered from its
//! files, what a server counts for a request is its chat template rendered
//! and tokenized, not the messages plus framing constants. The registry
//! holds it beside the entry so every fit, turn and window for the model
//! reports that count; the template itself lives in `crate::template`,
//! which depends on the window, so the registry knows it only by this
//! trait (the registry must not import the window).

use std::fmt::Debug;

use crate::Result;

/// Counts an OpenAI Chat request (a message array, or an object with
/// `messages` and `tools`) as the model's server counts its prompt, with
/// the generation prompt.
pub trait PromptModel: Debug + Send + Sync {
    /// The prompt's tokens for `request`.
    fn count_request(&self, request: &serde_json::Value) -> Result<usize>;

    /// What the model's template requires of the order of roles, which
    /// compaction must keep (dropping messages can leave two user turns in
    /// a row, which Gemma's, Llama 2's and Mistral's templates refuse).
    fn turn_order(&self) -> TurnOrder {
        TurnOrder::default()
    }

    /// Whether the count is the server's: false when the server is known
    /// to render with a template of its own (an Ollama model whose
    /// manifest carries a Go template or a renderer), so the files'
    /// template is only the closest known.
    fn exact(&self) -> bool {
        true
    }
}

/// Rules on the order of roles a chat template enforces (by raising an
/// exception), probed from the template itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnOrder {
    /// Two user (or two assistant) messages in a row are refused.
    pub alternate: bool,
    /// After the system messages, the first message must be a user's.
    pub user_first: bool,
}

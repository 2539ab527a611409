//! The summary message: its role, its label and the smallest room it takes.
//! Both the ladder (`compact`, which must leave that room beside the
//! protected rounds) and the summarize protocol (`summarize`, which writes
//! the message) need it; it lives apart so neither imports the other.

use serde::{Deserialize, Serialize};

use super::Accountant;
use crate::chat::{self, Format, Message};
use crate::Result;

/// The default first line of a summary message.
pub const DEFAULT_LABEL: &str = "[Summary of earlier conversation]";

/// Below this many tokens a summary is not worth a message.
pub(crate) const MIN_SUMMARY_TOKENS: usize = 16;

/// The role of an inserted summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SummaryRole {
    /// A user message (Anthropic: a text block joined to a neighbouring user
    /// message, which keeps the roles alternating).
    #[default]
    User,
    /// A system message where the format has system messages (OpenAI);
    /// Anthropic has none in its message list and uses `user`.
    System,
}

/// The label line that opens a summary (`label`: the policy's, if set).
pub(super) fn label(label: Option<&str>) -> String {
    format!("{}\n", label.unwrap_or(DEFAULT_LABEL))
}

/// The summary as a message of its own.
pub(super) fn message(format: Format, text: &str, role: SummaryRole, index: usize) -> Result<Message> {
    let role = match (format, role) {
        (f, SummaryRole::System) if f.results_are_messages() || f == Format::AiSdk => "system",
        _ => "user",
    };
    chat::message_from_value(format, chat::text_message(format, role, text), index)
}

/// Tokens the label-only summary message takes (framing included): what a
/// summary costs beyond its text.
pub(super) fn overhead(
    format: Format,
    label_text: Option<&str>,
    role: SummaryRole,
    acct: &Accountant,
) -> Result<usize> {
    acct.message(&message(format, &label(label_text), role, 0)?)
}

/// Tokens the smallest summary takes, message and label included: the
/// room the ladder leaves beside the protected rounds.
pub(super) fn reserve(format: Format, label_text: Option<&str>, role: SummaryRole, acct: &Accountant) -> Result<usize> {
    Ok(MIN_SUMMARY_TOKENS + overhead(format, label_text, role, acct)?)
}

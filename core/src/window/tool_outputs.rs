//! Shrinking tool outputs in place: truncating each oversized result to a
//! token budget (head and tail kept, with a marker that says how much was
//! removed), and clearing all but the newest results. Both edit only the
//! result's content in the message JSON, keep the call/result pairing
//! intact, and report every edit in a manifest.

use serde_json::Value;

use super::manifest::{Action, Change};
use super::Accountant;
use crate::chat::{self, Conversation, Format, Message, Part, Role};
use crate::{Result, TruncateSide};

/// The default placeholder for cleared results.
pub const DEFAULT_CLEARED: &str = "[tool output cleared to save context]";

/// One tool result: where it lives and its text.
pub(super) struct Site {
    pub(super) message: usize,
    /// `None` for an OpenAI tool message, else the block index.
    block: Option<usize>,
    pub(super) id: String,
    pub(super) text: String,
}

pub(super) fn sites(c: &Conversation) -> Vec<Site> {
    let mut out = Vec::new();
    for (i, m) in c.messages.iter().enumerate() {
        if matches!(m.role, Role::Tool | Role::Function) {
            out.push(Site { message: i, block: None, id: m.tool_call_id.clone().unwrap_or_default(), text: m.text() });
        } else if let Some(blocks) = m.raw.get("content").and_then(Value::as_array) {
            let mut parts = m.parts.iter().filter_map(|p| match p {
                Part::ToolResult { id, text, .. } => Some((id, text)),
                _ => None,
            });
            for (k, b) in blocks.iter().enumerate() {
                if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                    if let Some((id, text)) = parts.next() {
                        out.push(Site { message: i, block: Some(k), id: id.clone(), text: text.clone() });
                    }
                }
            }
        }
    }
    out
}

/// Writes `text` as the content of the result at `site`, keeping the
/// content's shape (a string stays a string; parts become one text part).
pub(super) fn set_content(m: &Message, site: &Site, text: &str, format: Format) -> Result<Message> {
    let mut raw = m.raw.clone();
    chat::set_result_text(format, &mut raw, site.block, text);
    chat::message_from_value(format, raw, site.message)
}

/// Truncates every tool result longer than `max_tokens` to that many tokens
/// (marker included), keeping its head and tail.
pub fn truncate_tool_outputs(
    c: &Conversation,
    max_tokens: usize,
    acct: &Accountant,
) -> Result<(Conversation, Vec<Change>)> {
    let mut out = c.clone();
    let mut changes = Vec::new();
    for site in sites(c) {
        let tok = acct.tokenizer();
        let r = tok.truncate(&site.text, max_tokens, TruncateSide::Both, None)?;
        if !r.truncated {
            continue;
        }
        let m = &out.messages[site.message];
        let edited = set_content(m, &site, &r.text, c.format)?;
        changes.push(Change {
            action: Action::TruncatedResult,
            index: site.message,
            id: Some(site.id.clone()),
            tokens: r.removed_tokens,
            detail: format!("tool output cut from {} to {} tokens (head and tail kept)", r.original_tokens, r.tokens),
        });
        out.messages[site.message] = edited;
    }
    Ok((out, changes))
}

/// Replaces the content of all but the newest `keep_last` tool results with
/// `placeholder` ([`DEFAULT_CLEARED`] when None).
pub fn clear_old_tool_results(
    c: &Conversation,
    keep_last: usize,
    placeholder: Option<&str>,
    acct: &Accountant,
) -> Result<(Conversation, Vec<Change>)> {
    let placeholder = placeholder.unwrap_or(DEFAULT_CLEARED);
    let all = sites(c);
    let cut = all.len().saturating_sub(keep_last);
    let mut out = c.clone();
    let mut changes = Vec::new();
    for site in all.into_iter().take(cut) {
        if site.text == placeholder {
            continue;
        }
        let before = acct.tokenizer().count(&site.text)?;
        let after = acct.tokenizer().count(placeholder)?;
        let edited = set_content(&out.messages[site.message], &site, placeholder, c.format)?;
        changes.push(Change {
            action: Action::ClearedResult,
            index: site.message,
            id: Some(site.id.clone()),
            tokens: before.saturating_sub(after),
            detail: format!("tool output of {before} tokens replaced by a placeholder"),
        });
        out.messages[site.message] = edited;
    }
    Ok((out, changes))
}

#[cfg(test)]
mod tests;

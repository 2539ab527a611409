//! Shrinking tool outputs in place: truncating each oversized result to a
//! token or byte budget (head and tail kept, with a marker that says how
//! much was removed), and clearing all but the newest results. Both edit only the
//! result's content in the message JSON, keep the call/result pairing
//! intact, and report every edit in a manifest.

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde_json::{json, Value};

use super::manifest::{Change, ChangeKind};
use super::Accountant;
use crate::chat::{self, Conversation, Format, Message, Part, Role};
use crate::Result;

/// The default placeholder for cleared results.
pub const DEFAULT_CLEARED: &str = "[tool output cleared to save context]";

/// One tool result: where it lives and its text (borrowed from the
/// conversation unless several parts had to be joined).
pub(super) struct Site<'a> {
    pub(super) message: usize,
    /// `None` for an OpenAI tool message, else the block index.
    block: Option<usize>,
    /// Its position among the results of its message (0 for an OpenAI tool
    /// message): the index into `Accountant::message_and_results`' figures.
    pub(super) ordinal: usize,
    pub(super) id: &'a str,
    pub(super) text: Cow<'a, str>,
}

/// The text of an OpenAI tool message as [`Message::text`] gives it,
/// without a copy when it is one part.
fn whole_text(m: &Message) -> Cow<'_, str> {
    let mut texts = m.parts.iter().filter_map(|p| match p {
        Part::Text(t) | Part::Thinking(t) => Some(t.as_str()),
        Part::ToolResult { text, .. } | Part::Block { text, .. } => Some(text.as_str()),
        _ => None,
    });
    match (texts.next(), texts.next()) {
        (None, _) => Cow::Borrowed(""),
        (Some(t), None) => Cow::Borrowed(t),
        _ => Cow::Owned(m.text()),
    }
}

pub(super) fn sites(c: &Conversation) -> Vec<Site<'_>> {
    let mut out = Vec::new();
    for i in 0..c.messages.len() {
        push_sites(c, i, &mut out);
    }
    out
}

/// The tool results of message `i` alone (see [`sites`]).
pub(super) fn message_sites(c: &Conversation, i: usize) -> Vec<Site<'_>> {
    let mut out = Vec::new();
    push_sites(c, i, &mut out);
    out
}

fn push_sites<'a>(c: &'a Conversation, i: usize, out: &mut Vec<Site<'a>>) {
    let m = &c.messages[i];
    if matches!(m.role, Role::Tool | Role::Function) && c.format != Format::AiSdk {
        let id = m.tool_call_id.as_deref().unwrap_or_default();
        out.push(Site { message: i, block: None, ordinal: 0, id, text: whole_text(m) });
    } else if let Some(blocks) = m.raw().get(chat::blocks_key(c.format)).and_then(Value::as_array) {
        let mut parts = m.parts.iter().filter_map(|p| match p {
            Part::ToolResult { id, text, .. } => Some((id, text)),
            _ => None,
        });
        let mut ordinal = 0;
        for (k, b) in blocks.iter().enumerate() {
            if chat::is_result_block(c.format, b) {
                if let Some((id, text)) = parts.next() {
                    out.push(Site { message: i, block: Some(k), ordinal, id, text: Cow::Borrowed(text) });
                    ordinal += 1;
                }
            }
        }
    }
}

/// Writes `text` as the content of the result at `site`, keeping the
/// content's shape (a string stays a string; parts become one text part).
/// The old content is not copied on the way (it is most of the message).
pub(super) fn set_content(m: &Message, site: &Site, text: &str, format: Format) -> Result<Message> {
    if (format == Format::Responses && site.block.is_none())
        || matches!(format, Format::Gemini | Format::Bedrock | Format::AiSdk)
    {
        // A Responses output lives in the item's `output`, a Gemini one in
        // its part's `response`, each in its own shape.
        let mut raw = m.raw().clone();
        chat::set_result_text(format, &mut raw, site.block, text);
        return chat::message_from_value(format, raw, site.message);
    }
    let content = |old: &Value| match old {
        Value::Array(_) => json!([{"type": "text", "text": text}]),
        _ => Value::String(text.to_owned()),
    };
    let raw = match site.block {
        None => with_field(m.raw(), "content", content),
        Some(k) => with_field(m.raw(), "content", |blocks| match blocks {
            Value::Array(list) => Value::Array(
                list.iter()
                    .enumerate()
                    .map(|(j, b)| if j == k { with_field(b, "content", content) } else { b.clone() })
                    .collect(),
            ),
            other => other.clone(),
        }),
    };
    chat::message_from_value(format, raw, site.message)
}

/// A copy of `v` with the value of `key` (when `v` is an object that has
/// it) replaced by `f` of the old value, which is not itself copied.
fn with_field(v: &Value, key: &str, f: impl FnOnce(&Value) -> Value) -> Value {
    let Value::Object(obj) = v else {
        return v.clone();
    };
    let mut f = Some(f);
    Value::Object(
        obj.iter()
            .map(|(k, old)| {
                let new = match (k == key).then(|| f.take()).flatten() {
                    Some(f) => f(old),
                    None => old.clone(),
                };
                (k.clone(), new)
            })
            .collect(),
    )
}

/// Truncates every tool result longer than `max_tokens` to that many tokens
/// (marker included), by structure: its head and tail lines, and the
/// error, failure, traceback and summary lines between them, with a marker
/// naming the tool and the tokens and lines cut (see `structured`).
pub fn truncate_tool_outputs(
    c: &Conversation,
    max_tokens: usize,
    acct: &Accountant,
) -> Result<(Conversation, Vec<Change>)> {
    truncate_counted(c, max_tokens, acct, &[])
}

/// [`truncate_tool_outputs`] given each message's result tokens where they
/// are known (`Accountant::message_and_results`): a result already within
/// `max_tokens` is then not counted again.
pub(super) fn truncate_counted(
    c: &Conversation,
    max_tokens: usize,
    acct: &Accountant,
    known: &[Vec<usize>],
) -> Result<(Conversation, Vec<Change>)> {
    cut_where(c, acct, known, |_| Some(max_tokens))
}

/// The tool named by each call id (the result's own `name` otherwise).
pub(super) fn tool_names(c: &Conversation) -> FxHashMap<&str, &str> {
    c.messages.iter().flat_map(|m| m.tool_calls.iter().map(|t| (t.id.as_str(), t.name.as_str()))).collect()
}

/// Cuts each tool result to the cap `cap_of` gives its site (none: left
/// alone), by structure (see [`structured`]): head and tail lines, and the
/// error, failure and summary lines between them, with a marker naming the
/// tool and what was cut. `known` are each message's result tokens where
/// they are known, so a result within its cap is not counted again.
pub(super) fn cut_where(
    c: &Conversation,
    acct: &Accountant,
    known: &[Vec<usize>],
    cap_of: impl Fn(&Site) -> Option<usize>,
) -> Result<(Conversation, Vec<Change>)> {
    let (edits, changes) = cut_edits(c, acct, known, cap_of)?;
    let mut out = c.clone();
    for (i, m) in edits {
        out.messages[i] = m;
    }
    Ok((out, changes))
}

/// One edited message: its index and its new form.
pub(super) type Edit = (usize, Message);

/// [`cut_where`]'s edits without the copy of the conversation: each edited
/// message (by index, in order; a message with several cut results appears
/// once per cut, the last its final form) and the changes. The fit ladder
/// applies them to its working copy in place: copying a 40 MB transcript
/// for each of its passes cost more than the cuts (issue 36).
pub(super) fn cut_edits(
    c: &Conversation,
    acct: &Accountant,
    known: &[Vec<usize>],
    cap_of: impl Fn(&Site) -> Option<usize>,
) -> Result<(Vec<Edit>, Vec<Change>)> {
    cut_sites(c, sites(c), &tool_names(c), acct, known, cap_of)
}

/// [`cut_edits`] on the given sites only, with the tool names
/// ([`tool_names`]) made once by the caller: the fit ladder cuts a
/// deferred output only when assembly restores it (`compact::assemble`),
/// one message at a time, and must not walk the whole history for each.
pub(super) fn cut_sites(
    c: &Conversation,
    sites: Vec<Site>,
    names: &FxHashMap<&str, &str>,
    acct: &Accountant,
    known: &[Vec<usize>],
    cap_of: impl Fn(&Site) -> Option<usize>,
) -> Result<(Vec<Edit>, Vec<Change>)> {
    let mut edits: Vec<Edit> = Vec::new();
    let mut changes = Vec::new();
    // The accountant's result figures are the tokenizer's count of the
    // text unless another counter or Anthropic's run rule is in play: then
    // the cut counts the text itself.
    let same_count = matches!(acct.counter(), crate::models::Counter::Encoding)
        && acct.framing().tool_style != super::ToolStyle::Json;
    for site in sites {
        let Some(max_tokens) = cap_of(&site) else { continue };
        if known.get(site.message).and_then(|r| r.get(site.ordinal)).is_some_and(|&n| n <= max_tokens) {
            continue;
        }
        let tool = names.get(site.id).copied().or(c.messages[site.message].name.as_deref()).unwrap_or("tool");
        let known = known.get(site.message).and_then(|r| r.get(site.ordinal)).copied().filter(|_| same_count);
        let Some(r) = structured::cut(acct.tokenizer(), &site.text, max_tokens, tool, known)? else {
            continue;
        };
        // A message with an earlier cut result is edited on from that cut.
        let m = match edits.last() {
            Some((i, m)) if *i == site.message => m,
            _ => &c.messages[site.message],
        };
        let edited = set_content(m, &site, &r.text, c.format)?;
        let lines = if r.removed_lines > 0 {
            format!(
                "{} of {} lines cut, head, tail and {} error, failure and summary lines kept",
                r.removed_lines, r.original_lines, r.kept_key_lines
            )
        } else {
            "head and tail kept".to_owned()
        };
        changes.push(Change {
            action: ChangeKind::TruncatedResult,
            index: site.message,
            id: Some(site.id.to_owned()),
            tokens: r.removed_tokens(),
            detail: format!("output of {tool} cut from {} to {} tokens ({lines})", r.original_tokens, r.tokens),
        });
        edits.push((site.message, edited));
    }
    Ok((edits, changes))
}

/// Cuts every tool result longer than `max_bytes` bytes of UTF-8 to that
/// many (marker included, see [`bytes::cut`]), keeping its head and tail
/// and the content's shape. `known` are each message's result tokens where
/// they are known (the manifest reports the tokens taken out).
pub(super) fn truncate_bytes_counted(
    c: &Conversation,
    max_bytes: usize,
    acct: &Accountant,
    known: &[Vec<usize>],
) -> Result<(Conversation, Vec<Change>)> {
    let mut out = c.clone();
    let mut changes = Vec::new();
    for site in sites(c) {
        let Some(cut) = bytes::cut(&site.text, max_bytes)? else {
            continue;
        };
        let before = match known.get(site.message).and_then(|r| r.get(site.ordinal)) {
            Some(&n) => n,
            None => acct.text(&site.text)?,
        };
        let after = acct.text(&cut.text)?;
        let edited = set_content(&out.messages[site.message], &site, &cut.text, c.format)?;
        changes.push(Change {
            action: ChangeKind::TruncatedResult,
            index: site.message,
            id: Some(site.id.to_owned()),
            tokens: before.saturating_sub(after),
            detail: format!(
                "tool output cut from {} to {} bytes (head and tail kept; {before} to {after} tokens)",
                site.text.len(),
                cut.text.len()
            ),
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
        let before = acct.text(&site.text)?;
        let after = acct.text(placeholder)?;
        let edited = set_content(&out.messages[site.message], &site, placeholder, c.format)?;
        changes.push(Change {
            action: ChangeKind::ClearedResult,
            index: site.message,
            id: Some(site.id.to_owned()),
            tokens: before.saturating_sub(after),
            detail: format!("tool output of {before} tokens replaced by a placeholder"),
        });
        out.messages[site.message] = edited;
    }
    Ok((out, changes))
}

pub(super) mod bytes;
pub(super) mod structured;
#[cfg(test)]
mod tests;

//! Whether a document's shape contradicts a format the caller forced.
//!
//! Each codec reads what it knows and keeps the rest as given, which is
//! right for unknown fields of its own format and wrong for a document of
//! another format: Gemini forced on a Chat Completions request used to read
//! no `contents`, keep `messages` as an unknown field, and report an empty
//! conversation that fits (issue 33, cause C). So before a forced format's
//! codec runs, the document is checked for marks only other formats have:
//! top-level keys (`messages`, `input`, `contents`, `toolConfig`, ...) and,
//! in every message, role names, item types and block shapes. One mark that
//! the forced format does not share is `InvalidArgument`, naming the forced
//! format, the mark and the formats it belongs to.
//!
//! Marks are evidence, never guesses: a plain `{"role": "user", "content":
//! "hi"}` is valid in Chat Completions, Anthropic and Responses alike, so it
//! contradicts none of them. Detection (`format` left out) is unchanged.

use serde_json::{Map, Value};

use super::{ai_sdk, is_gemini_content, responses, Format};
use crate::{Error, Result};

use Format::{AiSdk, Anthropic, Bedrock, Gemini, OpenAi, Responses};

/// Top-level keys and the formats whose requests have them.
const TOP_LEVEL: &[(&str, &[Format])] = &[
    ("messages", &[OpenAi, Anthropic, Bedrock, AiSdk]),
    ("input", &[Responses]),
    ("instructions", &[Responses]),
    ("contents", &[Gemini]),
    ("systemInstruction", &[Gemini]),
    ("system_instruction", &[Gemini]),
    ("system", &[Anthropic, Bedrock, AiSdk]),
    ("toolConfig", &[Bedrock, Gemini]),
    ("inferenceConfig", &[Bedrock]),
    ("additionalModelRequestFields", &[Bedrock]),
];

/// Anthropic content block types no other format uses.
const ANTHROPIC_BLOCKS: &[&str] = &["tool_use", "tool_result", "thinking", "redacted_thinking"];

/// Converse block keys no other format uses (a block is `{"toolUse": ...}`).
const BEDROCK_BLOCKS: &[&str] = &["toolUse", "toolResult", "reasoningContent", "cachePoint", "guardContent"];

/// `InvalidArgument` when `doc` carries a mark of a format other than
/// `forced` that `forced` does not share (see the module docs).
pub(super) fn check_document(doc: &Value, forced: Format) -> Result<()> {
    let items = match doc {
        Value::Object(obj) => {
            for (key, owners) in TOP_LEVEL {
                if obj.get(*key).is_some_and(|v| !v.is_null()) && !owners.contains(&forced) {
                    return Err(contradiction(forced, &format!("a top-level '{key}'"), owners));
                }
            }
            let key = forced.messages_key();
            obj.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
        }
        Value::Array(items) => items.as_slice(),
        _ => &[],
    };
    for (i, item) in items.iter().enumerate() {
        check_item(item, forced, &format!("message {i}"))?;
    }
    Ok(())
}

/// `InvalidArgument` when one message (`where_` locates it) carries a mark
/// of a format other than `forced`.
pub(super) fn check_message(item: &Value, forced: Format, where_: &str) -> Result<()> {
    check_item(item, forced, where_)
}

fn check_item(item: &Value, forced: Format, where_: &str) -> Result<()> {
    let Some(obj) = item.as_object() else { return Ok(()) };
    if let Some((what, owners)) = mark(item, obj) {
        if !owners.contains(&forced) {
            return Err(contradiction(forced, &format!("{where_} {what}"), owners));
        }
    }
    Ok(())
}

/// The first mark one message carries, and the formats it belongs to.
fn mark(item: &Value, obj: &Map<String, Value>) -> Option<(String, &'static [Format])> {
    let s = |k: &str| obj.get(k).and_then(Value::as_str);
    if is_gemini_content(item) {
        return Some(("has 'parts' and no 'content'".into(), &[Gemini]));
    }
    if s("role") == Some("model") {
        return Some(("has role 'model'".into(), &[Gemini]));
    }
    if let Some(t) = s("type").filter(|t| *t == "message" || responses::ITEM_TYPES.contains(t)) {
        return Some((format!("is a '{t}' item"), &[Responses]));
    }
    if let Some(t) = obj
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|p| p.get("type").and_then(Value::as_str).filter(|t| ai_sdk::PART_TYPES.contains(t)))
    {
        return Some((format!("has a '{t}' part"), &[AiSdk]));
    }
    if s("role") == Some("tool") {
        return Some(("has role 'tool'".into(), &[OpenAi, AiSdk]));
    }
    if s("role") == Some("function") {
        return Some(("has role 'function'".into(), &[OpenAi]));
    }
    for key in ["tool_calls", "tool_call_id", "function_call"] {
        if obj.get(key).is_some_and(|v| !v.is_null()) {
            return Some((format!("has '{key}'"), &[OpenAi]));
        }
    }
    let blocks = obj.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    for b in blocks {
        // A block without a `type` holding only `text` or `image` is a
        // malformed block of any format (its codec says where); these
        // keys are Converse's own.
        if let Some(k) = BEDROCK_BLOCKS.iter().find(|k| b.get("type").is_none() && b.get(**k).is_some()) {
            return Some((format!("has a '{k}' block"), &[Bedrock]));
        }
        match b.get("type").and_then(Value::as_str) {
            Some(t) if ANTHROPIC_BLOCKS.contains(&t) => return Some((format!("has a '{t}' block"), &[Anthropic])),
            Some(t) if responses::PART_TYPES.contains(&t) => return Some((format!("has an '{t}' part"), &[Responses])),
            _ => {}
        }
    }
    None
}

fn contradiction(forced: Format, what: &str, owners: &[Format]) -> Error {
    let names: Vec<&str> = owners.iter().map(|f| f.as_str()).collect();
    let looks = match names.as_slice() {
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
        [] => "another format".to_owned(),
    };
    Error::invalid_argument(format!(
        "format '{}' does not match the document: {what}, which {looks} requests have and {} requests do not; \
         the document looks like {looks}: pass that format, or leave 'format' out to detect it",
        forced.as_str(),
        forced.as_str()
    ))
}

//! Target `chat_codecs`: every chat codec. Input: one byte picks the format
//! (detected, OpenAI, Anthropic, Responses, Gemini, Bedrock Converse), the
//! rest is the conversation JSON.
//! Parsing never panics; a parsed conversation written back parses again,
//! in its own format, to an equal conversation, and writing that one gives
//! the same bytes (the round trip is a fixed point). A forced format never
//! reads a document that holds its messages under another format's key
//! (issue 33, cause C): `{"messages": [...]}` forced to Gemini is an error,
//! not an empty conversation.

use turnfit::chat::{Conversation, Format};

use super::common::{text, Knobs};

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let format = match k.byte() % 6 {
        0 => None,
        1 => Some(Format::OpenAi),
        2 => Some(Format::Anthropic),
        3 => Some(Format::Responses),
        4 => Some(Format::Gemini),
        _ => Some(Format::Bedrock),
    };
    let input = text(k.rest());
    let parsed = Conversation::parse(&input, format);
    if let (Some(f), Ok(doc)) = (format, serde_json::from_str::<serde_json::Value>(&input)) {
        let own = match f {
            Format::Responses => "input",
            Format::Gemini => "contents",
            _ => "messages",
        };
        let foreign = ["messages", "input", "contents"]
            .into_iter()
            .filter(|key| *key != own)
            .find(|key| doc.get(key).and_then(|v| v.as_array()).is_some_and(|a| !a.is_empty()));
        if let (Some(key), Ok(c)) = (foreign, &parsed) {
            panic!("{f:?} forced on a document with a non-empty '{key}' read {} messages", c.messages.len());
        }
    }
    let Ok(c) = parsed else { return };
    if let Some(f) = format {
        assert_eq!(c.format, f, "parse kept the requested format");
    }
    let json = c.to_json().expect("a parsed conversation serializes");
    let again = Conversation::parse(&json, Some(c.format))
        .unwrap_or_else(|e| panic!("re-parse of a written conversation failed: {e}\n{json}"));
    assert_eq!(again, c, "round trip changed the conversation\n{json}");
    assert_eq!(again.to_json().unwrap(), json, "writing is not a fixed point");
    // Detection agrees with the format the conversation was written in.
    if let Ok(detected) = Conversation::parse(&json, None) {
        let _ = detected.to_json().expect("serializes");
    }
}

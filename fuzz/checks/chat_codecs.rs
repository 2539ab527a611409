//! Target `chat_codecs`: every chat codec. Input: one byte picks the format
//! (detected, OpenAI, Anthropic, Responses, Gemini, Bedrock Converse), the
//! rest is the conversation JSON.
//! Parsing never panics; a parsed conversation written back parses again,
//! in its own format, to an equal conversation, and writing that one gives
//! the same bytes (the round trip is a fixed point).

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
    let Ok(c) = Conversation::parse(&input, format) else { return };
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

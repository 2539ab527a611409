//! Target `handoff`: handoff JSON through `Handoff::parse` (validation)
//! and `render`. Input: two option bytes (budget, encoding), then the
//! handoff JSON. Never panics; a valid handoff written back parses to an
//! equal handoff; a rendered block is counted exactly and is within the
//! budget when one is given.

use turnfit::handoff::{Handoff, RenderFormat, RenderOptions};
use turnfit::{Encoding, Tokenizer};

use super::common::{text, Knobs};

const ENCODINGS: [&str; 4] = ["cl100k_base", "o200k_base", "p50k_base", "r50k_base"];

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let budget = k.byte();
    let enc = k.byte();
    let input = text(k.rest());
    let Ok(h) = Handoff::parse(&input) else { return };
    let json = h.to_json().expect("a valid handoff serializes");
    let again = Handoff::parse(&json).unwrap_or_else(|e| panic!("written handoff does not parse: {e}\n{json}"));
    assert_eq!(again, h, "round trip changed the handoff");
    let options = RenderOptions {
        budget: if budget == 0 { None } else { Some(budget as usize * 8) },
        model: None,
        encoding: Some(ENCODINGS[enc as usize % 4].to_owned()),
        include_custom_fields: Some(enc & 0x80 == 0),
        format: Some(if enc & 0x40 == 0 { RenderFormat::Block } else { RenderFormat::PromptText }),
    };
    let Ok(r) = h.render(&options) else { return };
    let encoding = Encoding::from_name(ENCODINGS[enc as usize % 4]).unwrap();
    let tokens = Tokenizer::new(encoding).unwrap().count(&r.text).unwrap();
    assert_eq!(tokens, r.tokens, "render's token figure is not the block's count");
    if let Some(b) = options.budget {
        assert!(r.tokens <= b, "rendered {} tokens over the budget {b}", r.tokens);
    }
}

//! turnfit's ids must equal tiktoken-rs's for any UTF-8 input, in every
//! encoding, and count / count_until_limit / decode must agree with them.
//! The first byte picks the encoding; the rest is the text (invalid UTF-8 is
//! decoded lossily so every input exercises the tokenizer).
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use tiktoken_rs::CoreBPE;
use turnfit::{DecodeMode, Encoding, Tokenizer};

static ORACLES: LazyLock<Vec<(Tokenizer, CoreBPE)>> = LazyLock::new(|| {
    vec![
        (Tokenizer::new(Encoding::Cl100kBase).unwrap(), tiktoken_rs::cl100k_base().unwrap()),
        (Tokenizer::new(Encoding::O200kBase).unwrap(), tiktoken_rs::o200k_base().unwrap()),
        (Tokenizer::new(Encoding::P50kBase).unwrap(), tiktoken_rs::p50k_base().unwrap()),
        (Tokenizer::new(Encoding::R50kBase).unwrap(), tiktoken_rs::r50k_base().unwrap()),
    ]
});

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let (tok, oracle) = &ORACLES[first as usize % 4];
    let text = String::from_utf8_lossy(rest);
    let expected = oracle.encode_ordinary(&text);
    let ids = tok.encode(&text).unwrap();
    assert_eq!(ids, expected, "{:?}", text);
    assert_eq!(tok.count(&text).unwrap(), expected.len());
    let limit = (first as usize / 4) % (expected.len() + 2);
    let c = tok.count_until_limit(&text, limit).unwrap();
    assert_eq!(c.exceeded, expected.len() > limit);
    if !c.exceeded {
        assert_eq!(c.tokens, expected.len());
    }
    assert_eq!(tok.decode(&ids, DecodeMode::Strict).unwrap(), text);
});

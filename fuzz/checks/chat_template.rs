//! Target `chat_template`: chat templates as `template::ChatTemplate` parses
//! and renders them (core/src/template), both untrusted. Input: two bytes
//! give the length of a conversation's JSON at the end (taken modulo what is
//! there), the rest before it is the template source. Never panics; parsing
//! either succeeds or is refused with `InvalidArgument` or `DepthExceeded`;
//! a render, under small limits, either succeeds within the output cap or is
//! refused with `InvalidArgument`, `LimitExceeded` or `DepthExceeded`. The
//! same template and conversation are then counted (`PromptCounter`: user
//! strings marked, the render cut at its markers, on a byte-level tokenizer
//! with two special tokens), under the same rules.

use serde_json::json;
use std::sync::{Arc, OnceLock};

use turnfit::pipeline::FileTokenizer;
use turnfit::template::{ChatTemplate, ModelTemplate, PromptCounter, RenderLimits, RenderOptions};
use turnfit::ErrorKind;

use super::common::{text, Knobs};

const CAP: usize = 64 * 1024;

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let n = usize::from(k.u16());
    let rest = k.rest();
    let cut = rest.len() - n.min(rest.len());
    let (source, conv) = rest.split_at(cut);
    let template = match ChatTemplate::new(&text(source)) {
        Ok(t) => t,
        Err(e) => {
            assert!(
                matches!(e.kind(), ErrorKind::InvalidArgument | ErrorKind::DepthExceeded),
                "unexpected error kind: {e}"
            );
            return;
        }
    };
    let messages = match serde_json::from_str::<serde_json::Value>(&text(conv)) {
        Ok(v @ serde_json::Value::Array(_)) => v,
        _ => {
            json!([{"role": "system", "content": "s"}, {"role": "user", "content": text(conv)}, {"role": "assistant", "content": null}])
        }
    };
    let options = RenderOptions {
        tools: Some(json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}])),
        add_generation_prompt: true,
        bos_token: Some("<s>".into()),
        eos_token: Some("</s>".into()),
        fixed_now: Some("2024-07-26T10:00:00".into()),
        limits: RenderLimits { fuel: Some(200_000), max_recursion: 32, max_output_bytes: CAP },
        ..RenderOptions::default()
    };
    let refused = |e: turnfit::Error| {
        assert!(
            matches!(e.kind(), ErrorKind::InvalidArgument | ErrorKind::LimitExceeded | ErrorKind::DepthExceeded),
            "unexpected error kind: {e}"
        )
    };
    match template.render(&messages, &options) {
        Ok(out) => assert!(out.len() <= CAP, "output of {} bytes over the cap", out.len()),
        Err(e) => refused(e),
    }
    let model = ModelTemplate { source: text(source).into_owned(), origin: "fuzz".into(), ..ModelTemplate::default() };
    match PromptCounter::new(model, tokenizer()).and_then(|c| c.ids(&messages, &options)) {
        // At most one token a byte of the capped output (markers removed).
        Ok(ids) => assert!(ids.len() <= CAP, "{} ids from at most {CAP} bytes", ids.len()),
        Err(e) => refused(e),
    }
}

/// A byte-level tokenizer (one token a byte) with `<s>` and `<|end|>`
/// special, built once.
fn tokenizer() -> Arc<FileTokenizer> {
    static TOK: OnceLock<Arc<FileTokenizer>> = OnceLock::new();
    TOK.get_or_init(|| {
        let printable = |x: u8| matches!(x, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        let byte_char = |b: u8| {
            if printable(b) {
                char::from(b)
            } else {
                char::from_u32(256 + (0..b).filter(|&x| !printable(x)).count() as u32).unwrap_or('?')
            }
        };
        let vocab: serde_json::Map<String, serde_json::Value> =
            (0..=255u8).map(|b| (byte_char(b).to_string(), json!(b))).collect();
        let f = json!({
            "added_tokens": [
                {"id": 300, "content": "<s>", "special": true, "normalized": false},
                {"id": 301, "content": "<|end|>", "special": true, "normalized": false}
            ],
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
            "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": vocab, "merges": []}
        });
        let bytes = serde_json::to_vec(&f).expect("the tokenizer JSON serializes");
        Arc::new(FileTokenizer::from_bytes(&bytes, "fuzz.json").expect("the fuzz tokenizer loads"))
    })
    .clone()
}

//! Target `chat_template`: chat templates as `template::ChatTemplate` parses
//! and renders them (core/src/template), both untrusted. Input: two bytes
//! give the length of a conversation's JSON at the end (taken modulo what is
//! there), the rest before it is the template source. Never panics; parsing
//! either succeeds or is refused with `InvalidArgument` or `DepthExceeded`;
//! a render, under small limits, either succeeds within the output cap or is
//! refused with `InvalidArgument`, `LimitExceeded` or `DepthExceeded`.

use serde_json::json;
use turnfit::template::{ChatTemplate, RenderLimits, RenderOptions};
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
    match template.render(&messages, &options) {
        Ok(out) => assert!(out.len() <= CAP, "output of {} bytes over the cap", out.len()),
        Err(e) => assert!(
            matches!(e.kind(), ErrorKind::InvalidArgument | ErrorKind::LimitExceeded | ErrorKind::DepthExceeded),
            "unexpected error kind: {e}"
        ),
    }
}

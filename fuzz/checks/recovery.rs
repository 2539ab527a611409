//! Target `recovery`: error classification input. Input: one byte picks the
//! provider, two the HTTP status, one how the rest is used: as a JSON
//! classify request (`classify_json`, the C ABI's form), or as a response
//! body with its first line also sent as a `retry-after` header
//! (`classify`). Never panics; any body within the size limit classifies;
//! a retry always carries a delay and where it came from. In the JSON form
//! the rest is also read as an error context (`ErrorContext::from_json`):
//! a context that parses is echoed unchanged by `classify_in`.

use turnfit::recovery::{classify, classify_in, classify_json, Action, Classification, ErrorContext, Provider};

use super::common::{text, Knobs};

const PROVIDERS: [&str; 7] = ["openai", "azure", "anthropic", "bedrock", "gemini", "ollama", "other"];

fn consistent(c: &Classification) {
    if c.action == Action::Retry {
        assert!(c.retry_after_ms.is_some() && c.delay_source.is_some(), "retry without a delay: {c:?}");
    }
}

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let provider = PROVIDERS[k.byte() as usize % PROVIDERS.len()];
    let status = k.u16();
    let mode = k.byte();
    let body = text(k.rest());
    if mode & 1 == 0 {
        if let Ok(c) = classify_json(&body) {
            consistent(&c);
        }
        if let Ok(ctx) = ErrorContext::from_json(&body) {
            let c = classify_in(Provider::from_name(provider).unwrap(), status, "", &[], ctx.clone())
                .unwrap_or_else(|e| panic!("a context that parsed must classify: {e}"));
            assert_eq!(c.context(), ctx);
        }
        return;
    }
    let retry_after = body.lines().next().unwrap_or("");
    let headers: Vec<(&str, &str)> =
        if mode & 2 == 0 { vec![] } else { vec![("Retry-After", retry_after), ("x-request-id", retry_after)] };
    let c = classify(Provider::from_name(provider).unwrap(), status, &body, &headers)
        .unwrap_or_else(|e| panic!("a body within the size limit must classify: {e}"));
    assert_eq!(c.status, status);
    consistent(&c);
}

//! Target `window_fit`: compaction with random policies through
//! `turnfit::window::fit_json`. Input: eight option bytes (model, strategy,
//! budget, reserved output, turns kept, tool-output cap, repair, format;
//! the flag byte's low nibble modulo 6 forces no format, OpenAI, Anthropic,
//! Gemini, Bedrock or Responses, and bit 0x10 forces Responses; the turns
//! byte's bits 2-3 modulo 3 give no `api`, `responses` or
//! `chat_completions`, issue 47),
//! then the conversation JSON. Never panics; on success the result fits:
//! the reported and the recounted prompt tokens are within the limit, the
//! output parses in the reported format, and validation finds no orphaned
//! tool call or result (compaction's invariants). A failure is never
//! `Internal`: that is compaction's own orphan check firing, a bug.

use serde_json::{json, Map, Value};
use turnfit::chat::Conversation;
use turnfit::window::{fit_json, validate, Accountant, IssueKind};
use turnfit::{ErrorKind, ModelRegistry};

use super::common::{text, Knobs};

const MODELS: [&str; 5] = ["gpt-4o", "gpt-4", "gpt-3.5-turbo", "claude-sonnet-4", "text-davinci-003"];
const STRATEGIES: [&str; 4] = ["recency", "relevance", "hybrid", "summarize"];

/// The options object the leading bytes describe.
pub fn options(k: &mut Knobs) -> Value {
    let model = MODELS[k.byte() as usize % MODELS.len()];
    let strategy = STRATEGIES[k.byte() as usize % STRATEGIES.len()];
    let budget = k.u16() as usize; // 0..65535: most inputs must compact
    let reserve = k.byte();
    let keep_byte = k.byte();
    let keep = keep_byte % 4;
    let cap = k.byte();
    let flags = k.byte();
    let mut o = Map::new();
    o.insert("model".into(), json!(model));
    if budget != 0 {
        o.insert("max_tokens".into(), json!(budget));
    }
    if reserve != 0 {
        o.insert("reserve_output".into(), json!(reserve as usize * 4));
    }
    // Forced formats, every one of them (issue 33: a forced format on a
    // document of another shape must be refused, never fit as empty).
    const FORMATS: [&str; 5] = ["openai", "anthropic", "gemini", "bedrock", "responses"];
    match if flags & 0x10 != 0 { 5 } else { (flags & 0x0f) % 6 } {
        0 => {}
        f => {
            o.insert("format".into(), json!(FORMATS[f as usize - 1]));
        }
    }
    match (keep_byte >> 2) % 3 {
        1 => {
            o.insert("api".into(), json!("responses"));
        }
        2 => {
            o.insert("api".into(), json!("chat_completions"));
        }
        _ => {}
    }
    let mut p = Map::new();
    p.insert("strategy".into(), json!(strategy));
    p.insert("keep_last_turns".into(), json!(keep));
    if cap != 0 {
        p.insert("tool_output_max".into(), json!(cap as usize * 2));
    }
    p.insert("repair".into(), json!(flags & 0x80 == 0));
    if flags & 0x40 != 0 {
        p.insert("pinned".into(), json!([0, 1, 3]));
    }
    if flags & 0x20 != 0 {
        p.insert("relevance_weight".into(), json!(f64::from(cap) / 255.0));
    }
    o.insert("policy".into(), Value::Object(p));
    Value::Object(o)
}

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let options = options(&mut k);
    let conversation = text(k.rest());
    let (out, report) = match fit_json(&conversation, &options.to_string()) {
        Ok(r) => r,
        Err(e) => {
            assert_ne!(e.kind(), ErrorKind::Internal, "fit failed internally ({options}): {e}");
            return;
        }
    };
    assert!(
        report.tokens_after <= report.limit_tokens,
        "reported {} tokens over the limit {} ({options})",
        report.tokens_after,
        report.limit_tokens
    );
    let c = Conversation::parse(&out, Some(report.format))
        .unwrap_or_else(|e| panic!("fit's output does not parse: {e}\n{out}"));
    let model = options["model"].as_str().unwrap();
    let api = options.get("api").map(|a| serde_json::from_value(a.clone()).expect("an api name"));
    let (acct, _) = Accountant::for_model(&ModelRegistry::builtin(), model).expect("builtin model");
    let recount = acct.with_api(api).conversation(&c).expect("counts");
    // Responses items recounted as Chat messages without `fit`'s marks of
    // which items one Chat message joins count each item framed (more):
    // the recount bound holds for the other cases.
    let unmarked =
        api == Some(turnfit::chat::Api::ChatCompletions) && report.format == turnfit::chat::Format::Responses;
    assert!(
        unmarked || recount <= report.limit_tokens,
        "recounted {recount} tokens over the limit {} ({options})",
        report.limit_tokens
    );
    for issue in validate(&c) {
        assert!(
            !matches!(issue.kind, IssueKind::OrphanedCall | IssueKind::OrphanedResult),
            "fit left {:?} at message {} ({options})\n{out}",
            issue.kind,
            issue.index
        );
    }
}

//! Unit tests of counting with a template (count.rs, model.rs) on a tiny
//! byte-level tokenizer (one token per byte, two special tokens), so every
//! expected id can be read off the text. The real files are compared with
//! transformers by core/tests/chat_count.rs and scripts/templates.sh.

use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::*;
use crate::pipeline::FileTokenizer;
use crate::window::FitOptions;
use crate::ModelRegistry;

const BOS: u32 = 300;
const END: u32 = 301;

/// A byte-level tokenizer.json: GPT-2's byte alphabet, no merges, `<s>`
/// and `<|end|>` special.
fn tokenizer() -> Arc<FileTokenizer> {
    Arc::new(FileTokenizer::from_bytes(&tiny_tokenizer_json(), "tiny.json").unwrap())
}

/// The bytes of [`tokenizer`]'s file.
pub(crate) fn tiny_tokenizer_json() -> Vec<u8> {
    let printable = |x: u8| matches!(x, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let byte_char = |b: u8| {
        if printable(b) {
            char::from(b)
        } else {
            char::from_u32(256 + (0..b).filter(|&x| !printable(x)).count() as u32).unwrap()
        }
    };
    let vocab: serde_json::Map<String, Json> = (0..=255u8).map(|b| (byte_char(b).to_string(), json!(b))).collect();
    let f = json!({
        "added_tokens": [
            {"id": BOS, "content": "<s>", "special": true, "normalized": false},
            {"id": END, "content": "<|end|>", "special": true, "normalized": false}
        ],
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
        "decoder": {"type": "ByteLevel"},
        "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [BOS], "tokens": ["<s>"]}}},
        "model": {"type": "BPE", "vocab": vocab, "merges": []}
    });
    serde_json::to_vec(&f).unwrap()
}

pub(super) const TEMPLATE: &str = "{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}";

fn counter(source: &str) -> PromptCounter {
    let model = ModelTemplate {
        source: source.into(),
        origin: "test".into(),
        bos_token: Some("<s>".into()),
        ..Default::default()
    };
    PromptCounter::new(model, tokenizer()).unwrap()
}

fn bytes(s: &str) -> Vec<u32> {
    s.bytes().map(u32::from).collect()
}

fn gen() -> RenderOptions {
    RenderOptions { add_generation_prompt: true, ..RenderOptions::default() }
}

#[test]
fn special_text_typed_by_the_user_stays_text_and_the_templates_own_is_special() {
    let c = counter(TEMPLATE);
    let ids = c.ids(&json!([{"role": "user", "content": "a<|end|>b<s>"}]), &gen()).unwrap();
    // One BOS (the template's; the post-processor adds none), the typed
    // `<|end|>` and `<s>` as their bytes, the template's `<|end|>` as 301.
    let mut want = vec![BOS];
    want.extend(bytes("user:a"));
    want.extend(bytes("<|end|>"));
    want.extend(bytes("b"));
    want.extend(bytes("<s>"));
    want.push(END);
    want.extend(bytes("assistant:"));
    assert_eq!(ids, want);
    // Encoding the rendered text instead makes the typed ones special.
    let text = c.render(&json!([{"role": "user", "content": "a<|end|>b<s>"}]), &gen()).unwrap();
    assert_ne!(c.tokenizer().encode(&text).unwrap(), want);
}

#[test]
fn tools_and_kwargs_are_user_text_too() {
    let c = counter("{{ tools[0].name }}|{{ note }}");
    let options = RenderOptions {
        tools: Some(json!([{"name": "<|end|>"}])),
        kwargs: [("note".to_string(), json!("<s>"))].into_iter().collect(),
        ..RenderOptions::default()
    };
    let ids = c.ids(&json!([{"role": "user", "content": "x"}]), &options).unwrap();
    assert!(!ids.contains(&END) && !ids.contains(&BOS), "{ids:?}");
}

#[test]
fn a_template_that_splits_a_marked_token_keeps_it_text() {
    // The template cuts the content at "<|end|>": the markers are parted,
    // the pieces stay text, nothing forms a special token.
    let c = counter("{% for m in messages %}{{ m.content.split('|')|join('|') }}{% endfor %}");
    let ids = c.ids(&json!([{"role": "user", "content": "<|end|>"}]), &RenderOptions::default()).unwrap();
    assert_eq!(ids, bytes("<|end|>"));
}

#[test]
fn bad_inputs_are_specific_errors() {
    let c = counter(TEMPLATE);
    let e = c.ids(&json!([]), &gen()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("no messages"), "{e}");
    let e = c.ids(&json!({"role": "user"}), &gen()).unwrap_err();
    assert!(e.message().contains("JSON array"), "{e}");
    let e = c.ids(&json!(["hi"]), &gen()).unwrap_err();
    assert!(e.message().contains("message 0 is not a JSON object"), "{e}");
    let raising = counter("{{ raise_exception('roles must alternate') }}");
    let e = raising.ids(&json!([{"role": "user", "content": "x"}]), &gen()).unwrap_err();
    assert!(e.message().contains("refused the conversation: roles must alternate"), "{e}");
    let model = ModelTemplate { source: "{% for %}".into(), origin: "bad.jinja".into(), ..Default::default() };
    let e = PromptCounter::new(model, tokenizer()).unwrap_err();
    assert!(e.message().starts_with("bad.jinja: chat template syntax error"), "{e}");
    let model = TemplateModel::new(c, RenderOptions::default());
    let e = model.count_request(&json!({"model": "x"})).unwrap_err();
    assert!(e.message().contains("no \"messages\""), "{e}");
    let e = model.count_request(&json!("hi")).unwrap_err();
    assert!(e.message().contains("expected an array of messages"), "{e}");
}

#[test]
fn the_framing_is_measured_from_the_template() {
    let model = TemplateModel::new(counter(TEMPLATE), RenderOptions::default());
    let f = model.framing().unwrap();
    // `{role}:{content}<|end|>`: the role's bytes are counted apart; ':' and
    // `<|end|>` are the message's two.
    assert_eq!(f.tokens_per_message, 2);
    // BOS, and `assistant:` (10 bytes).
    assert_eq!(f.reply_priming, 11);
}

/// A template whose messages cost more as their number grows (the index is
/// printed): the framing measured on the first messages is short on later
/// ones, so only the template's count of the result can say it fits.
pub(super) const NUMBERED: &str = "{{ bos_token }}{% for m in messages %}[{{ loop.index * 1000 }}]{{ m.role }}:{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}";

#[test]
fn fit_reports_the_template_count_and_never_goes_over() {
    let model = TemplateModel::new(counter(NUMBERED), RenderOptions::default());
    let registry = ModelRegistry::builtin();
    model.register(&registry, "tiny", Some(4000), Some(100)).unwrap();
    let mut messages = vec![json!({"role": "system", "content": "Be brief."})];
    for i in 0..60 {
        messages.push(json!({"role": "user", "content": format!("question {i} about the weather in a city")}));
        messages.push(json!({"role": "assistant", "content": format!("answer {i}: it is sunny there today")}));
    }
    let text = serde_json::to_string(&json!({"messages": messages})).unwrap();
    let options = FitOptions { model: "tiny".into(), ..FitOptions::default() };
    let (fitted, report) = model.fit(&registry, &text, &options, None).unwrap();
    let fitted: Json = serde_json::from_str(&fitted.to_json().unwrap()).unwrap();
    let after = model.count_request(&fitted).unwrap();
    assert!(report.fit.exact);
    assert_eq!(report.fit.tokens_after, after);
    assert_eq!(report.fit.tokens_before, model.count_request(&serde_json::from_str(&text).unwrap()).unwrap());
    assert!(after <= report.fit.limit_tokens, "{after} over {}", report.fit.limit_tokens);
    assert!(!report.fit.insufficient);
    assert!(report.fit.messages_after < report.fit.messages_before);
    // Preflight's total is the template's count as well.
    let budget = crate::window::Budget { context_window: 4000, ..Default::default() };
    let pre = model.preflight(&registry, "tiny", &text, budget).unwrap();
    assert!(pre.exact);
    assert_eq!(pre.prompt_tokens, report.fit.tokens_before);
}

#[test]
fn only_openai_chat_conversations_are_rendered() {
    let model = TemplateModel::new(counter(TEMPLATE), RenderOptions::default());
    let registry = ModelRegistry::builtin();
    model.register(&registry, "tiny", Some(4000), None).unwrap();
    let anthropic = r#"{"system": "s", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}"#;
    let e = model
        .fit(&registry, anthropic, &FitOptions { model: "tiny".into(), ..FitOptions::default() }, None)
        .unwrap_err();
    assert!(e.message().contains("renders OpenAI Chat messages"), "{e}");
}

//! `register_model_files` and the shared paths that use the registered
//! model: `fit_json_in`, `fit_value_origins`, `turn::run` and the turn
//! state machine report the template's count (`exact: true`), and a fit's
//! rendered prompt is within its limit. On the tiny byte-level tokenizer of
//! tests_count.rs, written to a temp folder with a tokenizer_config.json.

use std::path::PathBuf;

use serde_json::{json, Value as Json};

use super::tests_count::{tiny_tokenizer_json, NUMBERED, TEMPLATE};
use super::*;
use crate::turn::Turn;
use crate::window::{fit_json_in, fit_value_origins, FitOptions};
use crate::{ErrorKind, ModelRegistry};

/// A fresh folder holding the tiny tokenizer.json and, when `template` is
/// given, a tokenizer_config.json with it as `chat_template`.
fn model_dir(tag: &str, template: Option<&str>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("turnfit-register-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tiny_tokenizer_json()).unwrap();
    if let Some(t) = template {
        let config = json!({"chat_template": t, "bos_token": "<s>", "eos_token": "<|end|>"});
        std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
    }
    dir
}

fn files(dir: &std::path::Path, name: &str) -> ModelFiles {
    ModelFiles {
        name: name.into(),
        tokenizer: dir.join("tokenizer.json").display().to_string(),
        context_window: 4000,
        max_output_tokens: Some(100),
        ..ModelFiles::default()
    }
}

/// 121 messages whose rendered cost grows with their position (NUMBERED).
fn long_chat() -> String {
    let mut messages = vec![json!({"role": "system", "content": "Be brief."})];
    for i in 0..60 {
        messages.push(json!({"role": "user", "content": format!("question {i} about the weather in a city")}));
        messages.push(json!({"role": "assistant", "content": format!("answer {i}: it is sunny there today")}));
    }
    serde_json::to_string(&json!({"messages": messages})).unwrap()
}

/// The template's own count, computed apart from the registry.
fn rendered_count(template: &str, request: &Json) -> usize {
    let model = ModelTemplate {
        source: template.into(),
        origin: "t".into(),
        bos_token: Some("<s>".into()),
        ..Default::default()
    };
    let tok = std::sync::Arc::new(crate::pipeline::FileTokenizer::from_bytes(&tiny_tokenizer_json(), "t").unwrap());
    TemplateModel::new(PromptCounter::new(model, tok).unwrap(), RenderOptions::default())
        .count_request(request)
        .unwrap()
}

#[test]
fn a_model_registered_from_its_files_is_exact_in_every_fit_path() {
    let dir = model_dir("paths", Some(NUMBERED));
    let registry = ModelRegistry::builtin();
    let info = register_model_files(&registry, &files(&dir, "Tiny-Local")).unwrap();
    assert_eq!((info.context_window, info.max_output_tokens, info.exact), (Some(4000), Some(100), true));
    let text = long_chat();
    let before = rendered_count(NUMBERED, &serde_json::from_str(&text).unwrap());
    let check = |value: &Json, report: &crate::window::FitReport, path: &str| {
        let after = rendered_count(NUMBERED, value);
        assert!(report.exact, "{path}");
        assert_eq!((report.tokens_before, report.tokens_after), (before, after), "{path}");
        assert!(after <= report.limit_tokens, "{path}: {after} over {}", report.limit_tokens);
        assert!(!report.insufficient, "{path}");
        assert!(report.messages_after < report.messages_before, "{path}");
        assert_eq!(report.max_tokens, 4000, "{path}");
    };
    let (out, report) = fit_json_in(&registry, &text, r#"{"model": "tiny-local"}"#).unwrap();
    check(&serde_json::from_str(&out).unwrap(), &report, "fit_json_in");
    let doc: Json = serde_json::from_str(&text).unwrap();
    let (value, report, _) = fit_value_origins(&registry, doc, text.len(), r#"{"model": "tiny-local"}"#).unwrap();
    check(&value, &report, "fit_value_origins");
    let options = FitOptions { model: "tiny-local".into(), ..FitOptions::default() };
    let (c, report) = crate::turn::run(&registry, &text, &options, None).unwrap();
    check(&c.to_value(), &report.fit, "turn::run");
    // The turn state machine (async hosts): its totals are the template's
    // too (it tightens first; an_async_turn_tightens_as_the_synchronous_one_does).
    let (c, report) = Turn::start(&registry, &text, &options).unwrap().finish().unwrap();
    assert!(report.fit.exact);
    assert_eq!(report.fit.tokens_after, rendered_count(NUMBERED, &c.to_value()));
    assert_eq!(report.fit.tokens_before, before);
    // A window's preflight: the template's count, with a new message too.
    let mut w = crate::window::Window::for_model(&registry, "tiny-local", crate::window::Budget::default()).unwrap();
    w.load(crate::chat::Conversation::parse(&text, None).unwrap()).unwrap();
    let pre = w.preflight(None).unwrap();
    assert!(pre.exact);
    assert_eq!(pre.prompt_tokens, before);
    assert_eq!(pre.verdict, crate::window::Verdict::Overflow);
    let next = w.conversation().parse_message(r#"{"role":"user","content":"and tomorrow?"}"#).unwrap();
    let mut grown: Json = serde_json::from_str(&text).unwrap();
    grown["messages"].as_array_mut().unwrap().push(json!({"role":"user","content":"and tomorrow?"}));
    assert_eq!(w.preflight(Some(&next)).unwrap().prompt_tokens, rendered_count(NUMBERED, &grown));
    // A budget given per call is honoured the same way.
    let (out, report) = fit_json_in(&registry, &text, r#"{"model": "tiny-local", "max_tokens": 2500}"#).unwrap();
    let after = rendered_count(NUMBERED, &serde_json::from_str(&out).unwrap());
    assert_eq!((report.max_tokens, report.tokens_after), (2500, after));
    assert!(after <= report.limit_tokens);
}

#[test]
fn the_template_given_as_text_wins_and_kwargs_reach_it() {
    let dir = model_dir("given", Some(TEMPLATE));
    let registry = ModelRegistry::builtin();
    let mut f = files(&dir, "tiny-kw");
    f.chat_template = Some("{{ bos_token }}{{ greeting }}{% for m in messages %}{{ m.content }}{% endfor %}".into());
    f.template_kwargs = serde_json::from_value(json!({"greeting": "hey"})).unwrap();
    register_model_files(&registry, &f).unwrap();
    let (_, report) = fit_json_in(&registry, r#"[{"role":"user","content":"abc"}]"#, r#"{"model":"tiny-kw"}"#).unwrap();
    // <s> + "hey" + "abc".
    assert_eq!(report.tokens_before, 7);
    // Registering the name again replaces the entry.
    register_model_files(&registry, &files(&dir, "tiny-kw")).unwrap();
    let (_, report) = fit_json_in(&registry, r#"[{"role":"user","content":"abc"}]"#, r#"{"model":"tiny-kw"}"#).unwrap();
    assert_eq!(report.tokens_before, rendered_count(TEMPLATE, &json!([{"role":"user","content":"abc"}])));
}

#[test]
fn bad_model_files_are_refused_by_name() {
    let registry = ModelRegistry::builtin();
    let with = model_dir("bad", Some(TEMPLATE));
    let without = model_dir("none", None);
    let cases: Vec<(ModelFiles, ErrorKind, &str)> = vec![
        (files(&with, "gpt-4o"), ErrorKind::InvalidArgument, "built-in model's name"),
        (files(&with, ""), ErrorKind::InvalidArgument, "model name"),
        (
            ModelFiles { context_window: 0, ..files(&with, "m") },
            ErrorKind::InvalidArgument,
            "context_window must be positive",
        ),
        (
            ModelFiles { tokenizer: with.join("missing.json").display().to_string(), ..files(&with, "m") },
            ErrorKind::Io,
            "missing.json",
        ),
        (ModelFiles { tokenizer: String::new(), ..files(&with, "m") }, ErrorKind::InvalidArgument, "tokenizer"),
        (files(&without, "m"), ErrorKind::InvalidArgument, "no chat template found"),
        (
            ModelFiles { chat_template: Some("{{ raise_exception('no system role') }}".into()), ..files(&with, "m") },
            ErrorKind::InvalidArgument,
            "no system role",
        ),
        (
            ModelFiles { chat_template: Some("{% for %}".into()), ..files(&with, "m") },
            ErrorKind::InvalidArgument,
            "chat_template: chat template syntax error",
        ),
        (
            ModelFiles { chat_template: Some("x".repeat(MAX_TEMPLATE_BYTES as usize + 1)), ..files(&with, "m") },
            ErrorKind::LimitExceeded,
            "larger than",
        ),
    ];
    for (f, kind, needle) in cases {
        let e = register_model_files(&registry, &f).unwrap_err();
        assert_eq!(e.kind(), kind, "{}: {e}", f.name);
        assert!(e.message().contains(needle), "{needle:?} not in {e}");
    }
    assert!(!registry.list().iter().any(|(p, _)| p.name == "m"), "a refused model is not registered");
    let e = register_model_files_json(&registry, r#"{"name": "m", "tokenizer": "x", "context_window": 8, "nope": 1}"#)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidJson, "{e}");
    let e = register_model_files_json(&registry, r#"{"name": "m", "tokenizer": "x"}"#).unwrap_err();
    assert!(e.message().contains("context_window"), "{e}");
    // Registered, the model refuses a conversation its template cannot take.
    register_model_files(&registry, &files(&with, "tiny-ok")).unwrap();
    let anthropic = r#"{"system": "s", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}"#;
    let e = fit_json_in(&registry, anthropic, r#"{"model":"tiny-ok"}"#).unwrap_err();
    assert!(e.message().contains("renders OpenAI Chat messages"), "{e}");
}

#[test]
fn a_model_from_its_files_is_not_a_host_counter() {
    // Its counter is turnfit's own tokenizer: a front end may release its
    // interpreter lock while it counts (the Python binding kept the GIL
    // for every call once such a model was registered).
    let reg = ModelRegistry::builtin();
    let dir = model_dir("native", Some(TEMPLATE));
    register_model_files(&reg, &files(&dir, "tiny-local")).unwrap();
    assert!(!reg.has_host_counters());
    reg.register_with_counter(
        crate::models::ModelProfile {
            name: "mine".into(),
            family: None,
            encoding: crate::Encoding::O200kBase,
            context_window: None,
            max_output_tokens: None,
            exact: false,
        },
        |s| Ok(s.len()),
    )
    .unwrap();
    assert!(reg.has_host_counters());
}

/// Gemma's rule, as its template words it: user and assistant turns
/// alternate, a user's first.
const ALTERNATING: &str =
    "{{ bos_token }}{% for m in messages %}{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}\
{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}\
<{{ m['role'] }}>{{ m['content'] }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}";

/// A user/assistant chat of `n` exchanges and a last question, no system
/// prompt (the template above refuses one).
fn alternating_chat(n: usize) -> String {
    let mut messages = Vec::new();
    for i in 0..n {
        messages.push(json!({"role": "user", "content": format!("question {i} about the weather in a city")}));
        messages.push(json!({"role": "assistant", "content": format!("answer {i}: it is sunny there today")}));
    }
    messages.push(json!({"role": "user", "content": "and tomorrow?"}));
    serde_json::to_string(&messages).unwrap()
}

#[test]
fn the_order_of_roles_a_template_enforces_is_probed() {
    let tok = std::sync::Arc::new(crate::pipeline::FileTokenizer::from_bytes(&tiny_tokenizer_json(), "t").unwrap());
    let order = |source: &str| {
        let model = ModelTemplate { source: source.into(), origin: "t".into(), ..Default::default() };
        TemplateModel::new(PromptCounter::new(model, tok.clone()).unwrap(), RenderOptions::default()).turn_order()
    };
    assert_eq!(order(ALTERNATING), crate::models::TurnOrder { alternate: true, user_first: true });
    assert_eq!(order(TEMPLATE), crate::models::TurnOrder::default());
    // A template that refuses everything tells nothing: nothing is assumed.
    assert_eq!(order("{{ raise_exception('no') }}"), crate::models::TurnOrder::default());
}

#[test]
fn a_fit_keeps_the_order_of_roles_the_template_enforces() {
    let dir = model_dir("alternating", Some(ALTERNATING));
    let registry = ModelRegistry::builtin();
    register_model_files(&registry, &ModelFiles { chat_template: Some(ALTERNATING.into()), ..files(&dir, "alt") })
        .unwrap();
    let text = alternating_chat(30);
    let input: Json = serde_json::from_str(&text).unwrap();
    let before = rendered_count(ALTERNATING, &input);
    let alternates =
        |value: &Json| value.as_array().unwrap().iter().enumerate().all(|(i, m)| (m["role"] == "user") == (i % 2 == 0));
    let mut merged = 0;
    for strategy in ["recency", "relevance", "hybrid", "summarize"] {
        for keep_first in [0, 1] {
            for max_tokens in (before / 5..before).step_by(before / 7) {
                let options = json!({"model": "alt", "max_tokens": max_tokens, "reserve_output": 10,
                    "policy": {"strategy": strategy, "keep_first": keep_first}});
                let case = format!("{strategy} keep_first {keep_first} at {max_tokens}");
                let (out, report) = fit_json_in(&registry, &text, &options.to_string()).expect(&case);
                let out: Json = serde_json::from_str(&out).unwrap();
                assert!(alternates(&out), "{case}: {out}");
                assert_eq!(report.tokens_after, rendered_count(ALTERNATING, &out), "{case}");
                assert!(report.tokens_after <= report.limit_tokens && !report.insufficient, "{case}");
                let joins = report.changes.iter().filter(|c| c.action == crate::window::ChangeKind::MergedMessage);
                merged += joins.count();
                if keep_first == 1 {
                    // The task is kept, joined or not.
                    assert!(out[0]["content"].as_str().unwrap().starts_with("question 0 "), "{case}: {out}");
                }
            }
        }
    }
    assert!(merged > 0, "no fit needed a join: the test does not exercise it");
    // A turn whose summary comes from the host's model: the summary, in the
    // user role after the kept task, is joined to it.
    let options = FitOptions {
        model: "alt".into(),
        max_tokens: Some(before / 2),
        policy: crate::window::Policy { strategy: crate::window::Strategy::Summarize, ..Default::default() },
        ..FitOptions::default()
    };
    let mut summarizer = |_: &crate::turn::SummarizerCall| crate::turn::Reply::Summary("It was sunny.".into());
    let (c, report) = crate::turn::run(&registry, &text, &options, Some(&mut summarizer)).unwrap();
    let out = c.to_value();
    assert!(alternates(&out), "{out}");
    assert!(out[0]["content"].as_str().unwrap().contains("It was sunny."), "{out}");
    assert_eq!(report.fit.tokens_after, rendered_count(ALTERNATING, &out));
}

#[test]
fn a_window_keeps_the_order_of_roles_the_template_enforces() {
    let dir = model_dir("alternating-window", Some(ALTERNATING));
    let registry = ModelRegistry::builtin();
    register_model_files(&registry, &ModelFiles { chat_template: Some(ALTERNATING.into()), ..files(&dir, "alt-w") })
        .unwrap();
    let text = alternating_chat(30);
    let before = rendered_count(ALTERNATING, &serde_json::from_str(&text).unwrap());
    let mut joined = 0;
    for strategy in [crate::window::Strategy::Recency, crate::window::Strategy::Relevance] {
        for keep_first in [0, 1] {
            let budget = crate::window::Budget { context_window: before / 3, ..Default::default() };
            let mut w = crate::window::Window::for_model(&registry, "alt-w", budget).unwrap();
            w.load(crate::chat::Conversation::parse(&text, None).unwrap()).unwrap();
            let policy = crate::window::Policy { strategy, keep_first, ..Default::default() };
            let crate::window::CompactOutcome::Done { report } = w.compact(&policy).unwrap() else {
                panic!("{strategy:?}: no summary was asked for")
            };
            joined += report.changes.iter().filter(|c| c.action == crate::window::ChangeKind::MergedMessage).count();
            // The compacted window renders: its preflight is the template's count.
            let pre = w.preflight(None).unwrap_or_else(|e| panic!("{strategy:?} keep_first {keep_first}: {e}"));
            assert_eq!(pre.prompt_tokens, rendered_count(ALTERNATING, &w.conversation().to_value()));
        }
    }
    assert!(joined > 0, "no compaction needed a join: the test does not exercise it");
}

#[test]
fn an_async_turn_tightens_as_the_synchronous_one_does() {
    // NUMBERED's cost grows with a message's position, so the per-message
    // figures undercount a long history and one pass renders over.
    let dir = model_dir("async", Some(NUMBERED));
    let registry = ModelRegistry::builtin();
    register_model_files(&registry, &files(&dir, "tiny-async")).unwrap();
    let text = long_chat();
    for max_tokens in [1200, 2000, 2500, 3000] {
        for strategy in [crate::window::Strategy::Recency, crate::window::Strategy::Summarize] {
            let options = FitOptions {
                model: "tiny-async".into(),
                max_tokens: Some(max_tokens),
                policy: crate::window::Policy { strategy, ..Default::default() },
                ..FitOptions::default()
            };
            let case = format!("{strategy:?} at {max_tokens}");
            let (c, report) = Turn::start(&registry, &text, &options).unwrap().finish().unwrap();
            let after = rendered_count(NUMBERED, &c.to_value());
            assert_eq!(report.fit.tokens_after, after, "{case}");
            assert_eq!(report.fit.max_tokens, max_tokens, "{case}: the budget asked for");
            assert!(
                after <= report.fit.limit_tokens && !report.fit.insufficient,
                "{case}: {after} over {}",
                report.fit.limit_tokens
            );
            // The same request as the synchronous turn (both with the digest).
            let (sync, _) = crate::turn::run(&registry, &text, &options, None).unwrap();
            assert_eq!(sync.to_value(), c.to_value(), "{case}");
        }
    }
}

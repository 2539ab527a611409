use super::*;

fn reg() -> ModelRegistry {
    ModelRegistry::builtin()
}

#[test]
fn builtin_table_parses_and_validates() {
    let all = builtin_entries().expect("embedded models.json is valid");
    assert!(all.len() >= 40);
    for family in [
        "gpt-5",
        "gpt-4.1",
        "gpt-4o",
        "o1",
        "o3",
        "o4-mini",
        "gpt-4",
        "gpt-3.5-turbo",
        "text-embedding-3-small",
        "claude-sonnet-4-5",
        "gemini-2.5-pro",
        "llama-3.1-70b",
    ] {
        reg().lookup(family).unwrap_or_else(|e| panic!("{family}: {e}"));
    }
}

#[test]
fn longest_prefix_wins_and_exact_beats_prefix() {
    let r = reg();
    let m = r.lookup("gpt-4o-mini-2024-07-18").unwrap();
    assert_eq!((m.matched.as_deref(), m.encoding), (Some("gpt-4o*"), Encoding::O200kBase));
    let m = r.lookup("gpt-4-turbo-preview").unwrap();
    assert_eq!(m.matched.as_deref(), Some("gpt-4-turbo*"));
    assert_eq!(m.context_window, Some(128000));
    let m = r.lookup("gpt-4-0613").unwrap();
    assert_eq!((m.matched.as_deref(), m.encoding), (Some("gpt-4*"), Encoding::Cl100kBase));
    let m = r.lookup("gpt-4o-2024-05-13").unwrap();
    assert_eq!((m.matched.as_deref(), m.max_output_tokens), (Some("gpt-4o-2024-05-13"), Some(4096)));
    assert_eq!(r.lookup("o4-mini").unwrap().encoding, Encoding::O200kBase);
    assert_eq!(r.lookup("text-davinci-003").unwrap().encoding, Encoding::P50kBase);
}

#[test]
fn estimate_families_are_flagged_inexact() {
    let r = reg();
    for m in ["claude-3-5-sonnet-20241022", "gemini-2.0-flash", "llama-3.3-70b-instruct"] {
        assert!(!r.lookup(m).unwrap().exact, "{m}");
    }
    assert!(r.lookup("gpt-5-mini").unwrap().exact);
}

#[test]
fn routing_prefixes_and_case_are_tolerated() {
    let r = reg();
    assert_eq!(r.lookup("openai/GPT-4o").unwrap().matched.as_deref(), Some("gpt-4o*"));
    let m = r.lookup("us.anthropic.claude-3-7-sonnet-20250219-v1:0").unwrap();
    assert_eq!(m.matched.as_deref(), Some("claude-3-7-sonnet*"));
    assert_eq!(m.model, "us.anthropic.claude-3-7-sonnet-20250219-v1:0");
}

#[test]
fn unknown_model_names_close_matches() {
    let err = reg().lookup("gpt4o").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownModel);
    assert!(err.message().contains("did you mean") && err.message().contains("gpt-4o"), "{err}");
    let err = reg().lookup("zzzz-qqqq").unwrap_err();
    assert!(err.message().contains("fallback encoding"), "{err}");
}

#[test]
fn fallback_encoding_is_inexact_with_unknown_limits() {
    let m = reg().lookup_or("my-finetune", Some(Encoding::Cl100kBase)).unwrap();
    assert_eq!(m.source, ModelSource::Fallback);
    assert_eq!((m.exact, m.context_window, m.matched), (false, None, None));
    // A fallback never shadows a known model.
    assert_eq!(reg().lookup_or("gpt-4o", Some(Encoding::R50kBase)).unwrap().encoding, Encoding::O200kBase);
}

#[test]
fn host_registration_overrides_and_stays_local() {
    let r = reg();
    let n = r
        .register_json(r#"[{"name":"acme-*","encoding":"o200k_base","context_window":32000,"exact":false},
                          {"name":"gpt-4o*","encoding":"o200k_base","context_window":64000,"max_output_tokens":1000,"exact":true}]"#)
        .unwrap();
    assert_eq!(n, 2);
    let m = r.lookup("acme-large").unwrap();
    assert_eq!((m.source, m.context_window), (ModelSource::Host, Some(32000)));
    assert_eq!(r.lookup("gpt-4o").unwrap().context_window, Some(64000));
    assert_eq!(reg().lookup("gpt-4o").unwrap().context_window, Some(128000));
}

#[test]
fn bad_registrations_are_rejected_whole() {
    let r = reg();
    let cases = [
        (r#"{"name":"x","encoding":"o201k","exact":true}"#, ErrorKind::InvalidJson, "unknown encoding"),
        (r#"{"name":"x","encoding":"o200k_base"}"#, ErrorKind::InvalidJson, "exact"),
        (r#"{"name":"x","encoding":"o200k_base","exact":true,"typo":1}"#, ErrorKind::InvalidJson, "typo"),
        (
            r#"[{"name":"ok","encoding":"o200k_base","exact":true},{"name":"","encoding":"o200k_base","exact":true}]"#,
            ErrorKind::InvalidArgument,
            "model name",
        ),
        (
            r#"{"name":"x","encoding":"o200k_base","exact":true,"context_window":0}"#,
            ErrorKind::InvalidArgument,
            "positive",
        ),
        ("not json", ErrorKind::InvalidJson, "model profile JSON"),
        ("42", ErrorKind::InvalidJson, "not a number"),
        (
            r#"[{"name":"a","encoding":"o200k_base","exact":true},{"name":"x","encoding":"cl100k","exact":true}]"#,
            ErrorKind::InvalidJson,
            "model profile 1: unknown encoding 'cl100k'; did you mean cl100k_base?",
        ),
    ];
    for (json, kind, needle) in cases {
        let err = r.register_json(json).unwrap_err();
        assert_eq!(err.kind(), kind, "{json}: {err}");
        assert!(err.message().contains(needle), "{json}: {err}");
    }
    assert!(r.lookup("ok").is_err(), "a failed batch registers nothing");
    assert!(r.lookup("a").is_err(), "a failed batch registers nothing");
}

#[test]
fn duplicate_names_in_a_batch_count_once_and_the_last_wins() {
    let r = reg();
    let n = r
        .register_json(
            r#"[{"name":"dup","encoding":"o200k_base","exact":true,"context_window":1},
                          {"name":"DUP","encoding":"o200k_base","exact":true,"context_window":2}]"#,
        )
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(r.lookup("dup").unwrap().context_window, Some(2));
}

/// Issue 14 bug 9: a 4 MiB unknown name took seconds of close-match search
/// and was echoed whole; names are capped and echoes clipped. Registration
/// refuses a repeated key like every other JSON object.
#[test]
fn huge_names_are_refused_early_and_never_echoed_whole() {
    use crate::limits::{MAX_ECHO_BYTES, MAX_NAME_BYTES};
    let huge = "g".repeat(4 << 20);
    for fallback in [None, Some(Encoding::Cl100kBase)] {
        let e = reg().lookup_or(&huge, fallback).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(
            e.message().contains("MAX_NAME_BYTES") && e.message().len() < MAX_ECHO_BYTES + 200,
            "{}",
            e.message().len()
        );
    }
    let at = "q".repeat(MAX_NAME_BYTES);
    let e = reg().lookup(&at).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownModel);
    assert!(e.message().len() < MAX_ECHO_BYTES + 200, "{}", e.message());
    let e = Encoding::from_name(&huge).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = reg().register_json(r#"{"name":"m","encoding":"o200k_base","name":"n"}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidJson);
    assert!(e.message().contains("duplicate key `name`"), "{e}");
}

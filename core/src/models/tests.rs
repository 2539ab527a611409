use super::*;

fn reg() -> ModelRegistry {
    ModelRegistry::builtin()
}

#[test]
fn builtin_table_parses_and_validates() {
    let all = builtin_entries().expect("embedded models.json is valid");
    assert!(all.len() >= 40);
    for f in &builtin().unwrap().families {
        assert!(!f.parts.is_empty(), "{}", f.text);
    }
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
    assert_eq!(r.lookup("gpt-oss-120b").unwrap().encoding, Encoding::O200kHarmony);
    assert_eq!(r.lookup("text-davinci-edit-001").unwrap().encoding, Encoding::P50kEdit);
    assert_eq!(r.lookup("gpt2").unwrap().encoding, Encoding::Gpt2);
    assert_eq!(r.lookup("gpt-2").unwrap().encoding.name(), "gpt2");
}

#[test]
fn prefixes_apply_only_on_name_boundaries() {
    let r = reg();
    for (name, matched) in [
        ("gpt-4o-2024-08-06", "gpt-4o*"),
        ("gpt-4o-mini", "gpt-4o*"),
        ("gpt-4o:free", "gpt-4o*"),
        ("gpt-4o@2024", "gpt-4o*"),
        ("gpt-4-0613", "gpt-4*"),
        ("gpt-4-32k-0613", "gpt-4-32k*"),
        ("gpt-3.5-turbo-16k", "gpt-3.5-turbo-16k*"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5*"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5*"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4*"),
        ("openai/gpt-4o", "gpt-4o*"),
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet*"),
        ("us-gov.anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet*"),
        ("ft:gpt-4o-mini-2024-07-18:org::id", "gpt-4o*"),
        ("ft:davinci-002:acme:suffix:abc123", "davinci-002*"),
        ("davinci:ft-personal-2022-12-12-00-00-00", "davinci"),
        ("gemini-1.5-pro-002", "gemini-1.5-pro*"),
        ("llama3.1:8b", "llama3.1*"),
        ("meta.llama3-1-70b-instruct-v1:0", "llama3-1*"),
    ] {
        let m = r.lookup(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((m.matched.as_deref(), m.source), (Some(matched), ModelSource::Builtin), "{name}");
    }
    // The issue's five, and a version that continues past a prefix.
    for name in ["gpt-40", "gpt-45", "gpt-4oo", "o3x", "llama-9", "gpt-4.7", "claude-opus-40", "llama-3.1x"] {
        let err = r.lookup(name).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownModel, "{name}");
        assert!(err.message().contains("did you mean"), "{name}: {err}");
    }
}

#[test]
fn boundary_rule() {
    for (stem, rest, ok) in [
        ("gpt-4", "", true),
        ("gpt-4", "-0613", true),
        ("gpt-4", "-32k", true),
        ("gpt-4", ":org", true),
        ("gpt-4", "@x", true),
        ("gpt-4", "/x", true),
        ("gpt-4", "o", false),
        ("gpt-4", "0", false),
        ("gpt-4", ".5", false),
        ("gpt-4", ".x", true),
        ("claude-opus-4", "-1", false),
        ("claude-opus-4", "-1-20250805", false),
        ("claude-opus-4", "-12", false),
        ("claude-opus-4", "-123", true),
        ("claude-opus-4", "-20250514", true),
        ("gpt-3.5-turbo", "-16k", true),
        ("acme-", "large", true),
        ("acme-", "1", true),
        ("acme:", "x", true),
    ] {
        assert_eq!(at_boundary(stem, rest), ok, "{stem:?} + {rest:?}");
    }
}

#[test]
fn family_patterns() {
    let p = |s: &str| parse_pattern(s).unwrap();
    let claude = p("claude-{opus|sonnet|haiku}-{v}");
    for (name, ok) in [
        ("claude-opus-5", true),
        ("claude-opus-4-6", true),
        ("claude-sonnet-5.1", true),
        ("claude-opus-5-20270101", true),
        ("claude-opus-5@20270101", true),
        ("claude-opus-4-7-v1:0", true),
        ("claude-opus-40", false),
        ("claude-opus-4-10", false),
        ("claude-opus-0", false),
        ("claude-opsu-5", false),
        ("claude-opus-", false),
        ("claude-opus-5x", false),
        ("claude-opus", false),
    ] {
        assert_eq!(matches_parts(&claude, name), ok, "{name}");
    }
    let gpt = p("gpt-5.{d}");
    assert!(matches_parts(&gpt, "gpt-5.4") && matches_parts(&gpt, "gpt-5.4-mini"));
    assert!(!matches_parts(&gpt, "gpt-5.45") && !matches_parts(&gpt, "gpt-5.") && !matches_parts(&gpt, "gpt-5.0"));
    for bad in ["", "{v}-x", "x{", "x{w}", "x{a|}", "x{|}"] {
        assert!(parse_pattern(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn newer_versions_resolve_to_the_family_estimate_where_the_family_declares_them() {
    let r = reg();
    for (name, family, encoding) in [
        ("claude-opus-5", "anthropic", Encoding::Cl100kBase),
        ("claude-sonnet-4-6", "anthropic", Encoding::Cl100kBase),
        ("anthropic.claude-opus-4-6-v1", "anthropic", Encoding::Cl100kBase),
        ("gemini-3-flash", "google", Encoding::O200kBase),
        ("gemini-4-pro-preview", "google", Encoding::O200kBase),
        ("models/gemini-3.5-flash-lite", "google", Encoding::O200kBase),
        ("gpt-5.4", "openai", Encoding::O200kBase),
        ("gpt-5.4-mini-2026-03-17", "openai", Encoding::O200kBase),
    ] {
        let m = r.lookup(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.source, ModelSource::Family, "{name}");
        assert_eq!((m.family.as_deref(), m.encoding, m.exact), (Some(family), encoding, false), "{name}");
        assert!(m.matched.as_deref().is_some_and(|p| p.contains('{')), "{name}: {:?}", m.matched);
        assert!(m.context_window.is_some(), "{name}");
    }
    // A family without patterns: an unknown version is unknown.
    for name in ["llama-9", "llama-5-70b", "deepseek-v9", "qwen9-72b", "mistral-huge-2601"] {
        assert_eq!(r.lookup(name).unwrap_err().kind(), ErrorKind::UnknownModel, "{name}");
    }
    // A known entry always beats the family pattern.
    assert_eq!(r.lookup("claude-opus-4-1").unwrap().source, ModelSource::Builtin);
    let json = serde_json::to_value(r.lookup("claude-opus-5").unwrap()).unwrap();
    assert_eq!(json["source"], "family");
}

#[test]
fn bad_names_are_unknown_models_not_panics() {
    let r = reg();
    let huge = "gpt-4o".to_owned() + &"-x".repeat(100_000);
    for name in [
        "",
        " ",
        "\t",
        "*",
        "gpt-*x",
        "-",
        ":",
        "/",
        ".",
        "@",
        "ft:",
        "ft::",
        "ft:::",
        "a.b.c.",
        "//",
        "openai/",
        "gpt\u{0}4o",
        "gpt-4o\u{feff}",
        "ｇｐｔ-４ｏ",
        "gpt–4o",
        "gpt_4o",
        huge.as_str(),
    ] {
        let err = r.lookup(name).unwrap_err();
        // One rule for every name (issue 14): longer than MAX_NAME_BYTES is
        // an invalid argument, refused before any comparison.
        let want = if name.len() > crate::limits::MAX_NAME_BYTES {
            ErrorKind::InvalidArgument
        } else {
            ErrorKind::UnknownModel
        };
        assert_eq!(err.kind(), want, "{:?}", crate::text::clip(name));
        assert!(err.message().len() < 2000, "the message must not echo a huge name");
    }
    let m = r.lookup_or(&huge, Some(Encoding::O200kBase));
    assert_eq!(m.unwrap_err().kind(), ErrorKind::InvalidArgument, "a huge name is never a fallback either");
}

/// The (name, encoding) pairs of a dict in tiktoken's `model.py`.
fn tiktoken_table(dict: &str) -> Vec<(String, String)> {
    let src = include_str!("../../tests/data/tiktoken/model.py");
    let start = src.find(&format!("{dict}: dict[str, str] = {{")).expect("table in model.py");
    let body = &src[start..];
    let body = &body[..body.find("\n}").expect("end of table")];
    body.lines()
        .filter_map(|l| {
            let l = l.trim();
            let (k, v) = l.strip_prefix('"')?.split_once("\": \"")?;
            let v = v.split('"').next()?;
            Some((k.to_owned(), v.to_owned()))
        })
        .collect()
}

#[test]
fn every_name_and_prefix_tiktoken_maps_resolves_to_its_encoding() {
    let r = reg();
    let names = tiktoken_table("MODEL_TO_ENCODING");
    let prefixes = tiktoken_table("MODEL_PREFIX_TO_ENCODING");
    assert_eq!((names.len(), prefixes.len()), (45, 17), "tiktoken 0.14.0's table");
    for (name, encoding) in &names {
        let m = r.lookup(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.encoding.name(), encoding, "{name}");
        assert!(m.exact && m.source == ModelSource::Builtin, "{name}");
    }
    for (prefix, encoding) in &prefixes {
        // A prefix stands for the names it is there to match: dated and
        // suffixed versions, and fine-tuned ids.
        let samples: Vec<String> = if prefix.starts_with("ft:") {
            vec![format!("{prefix}:acme::8fz2xk1q"), format!("{prefix}-2099-01-01:acme:custom:8fz2xk1q")]
        } else {
            let p = prefix.trim_end_matches('-');
            vec![format!("{p}-2099-01-01"), format!("{p}-0613"), format!("{p}-preview")]
        };
        for name in samples {
            let m = r.lookup(&name).unwrap_or_else(|e| panic!("{prefix}: {name}: {e}"));
            assert_eq!(m.encoding.name(), encoding, "{prefix}: {name}");
        }
    }
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
    assert_eq!(err.kind(), ErrorKind::UnknownModel);
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

#[test]
fn source_names_match_their_json() {
    for s in [ModelSource::Builtin, ModelSource::Host, ModelSource::Family, ModelSource::Fallback] {
        assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
    }
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

/// The tokenizer info shape every front end returns; `model` is `null` for a
/// tokenizer made from an encoding.
#[test]
fn tokenizer_info_has_one_shape() {
    let (t, info) = reg().tokenizer("gpt-4o", None).unwrap();
    let v = serde_json::to_value(t.info(Some(&info))).unwrap();
    assert_eq!(v["encoding"], "o200k_base");
    assert_eq!(v["model"]["model"], "gpt-4o");
    assert!(v["vocab_size"].as_u64().unwrap() > 200_000);
    let plain = serde_json::to_value(Tokenizer::new(Encoding::Cl100kBase).unwrap().info(None)).unwrap();
    let keys: Vec<&String> = plain.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["encoding", "special_tokens", "vocab_size", "memory_bytes", "model"]);
    assert!(plain["model"].is_null());
}

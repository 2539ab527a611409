use proptest::prelude::{any, prop_assert, prop_assert_eq, proptest, ProptestConfig};

use super::*;
use crate::limits::{MAX_BREAKER_KEYS, MAX_KEY_BYTES};
use crate::ErrorKind;

fn fixture(name: &str) -> String {
    let path = format!("{}/../examples/data/errors/{name}.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn cls(p: Provider, status: u16, body: &str, headers: &[(&str, &str)]) -> Classification {
    classify(p, status, body, headers).unwrap()
}

// ---- classification -------------------------------------------------------

#[test]
fn every_fixture_is_recognized_as_something() {
    let dir = format!("{}/../examples/data/errors", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let body = std::fs::read_to_string(e.unwrap().path()).unwrap();
        // With no status at all, the body alone must carry the meaning.
        let c = cls(Provider::Other, 400, &body, &[]);
        assert_ne!(c.category, Category::Unknown, "{body}");
        assert!(c.message.is_some(), "{body}");
        n += 1;
    }
    assert!(n >= 20);
}

#[test]
fn anthropic_529_means_overloaded_even_without_a_body() {
    let c = cls(Provider::Anthropic, 529, "", &[]);
    assert_eq!((c.category, c.action, c.retryable), (Category::Overloaded, Action::Retry, true));
    assert_eq!(c.delay_source, Some(DelaySource::Default));
}

#[test]
fn headers_are_case_insensitive_and_ms_wins_over_seconds() {
    let body = fixture("anthropic-rate-limit");
    let c = cls(Provider::Anthropic, 429, &body, &[("Retry-After", " 2 ")]);
    assert_eq!(c.retry_after_ms, Some(2000));
    let c = cls(Provider::Anthropic, 429, &body, &[("RETRY-AFTER", "2"), ("retry-after-ms", "250.5")]);
    assert_eq!((c.retry_after_ms, c.delay_source), (Some(251), Some(DelaySource::RetryAfterMsHeader)));
    // An HTTP-date is not interpreted (it would need a clock): the default applies.
    let c = cls(Provider::Anthropic, 429, &body, &[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]);
    assert_eq!((c.retry_after_ms, c.delay_source), (Some(1000), Some(DelaySource::Default)));
}

#[test]
fn hints_are_not_given_for_actions_other_than_retry() {
    let c = cls(Provider::OpenAi, 400, &fixture("openai-context-length"), &[("retry-after", "5")]);
    assert_eq!((c.action, c.retry_after_ms, c.delay_source), (Action::Compact, None, None));
}

#[test]
fn bedrock_is_read_from_the_header_when_the_body_says_little() {
    let c = cls(
        Provider::Bedrock,
        400,
        r#"{"message":"Too many tokens, please wait before trying again."}"#,
        &[("x-amzn-ErrorType", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")],
    );
    assert_eq!(c.category, Category::RateLimited);
    assert_eq!(c.code.as_deref(), Some("ThrottlingException"));
    let c = cls(Provider::Bedrock, 429, "{}", &[("x-amzn-errortype", "ModelNotReadyException")]);
    assert_eq!(c.category, Category::Overloaded);
    let c = cls(
        Provider::Bedrock,
        400,
        r#"{"__type":"ServiceQuotaExceededException","message":"Your request exceeds the service quota for your account."}"#,
        &[],
    );
    assert_eq!((c.category, c.action), (Category::RateLimited, Action::Fail));
}

#[test]
fn openai_orphaned_tool_message_is_a_history_problem() {
    let body = r#"{"error":{"message":"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.","type":"invalid_request_error","param":"messages.[3].role","code":null}}"#;
    let c = cls(Provider::OpenAi, 400, body, &[]);
    assert_eq!((c.category, c.action), (Category::InvalidToolHistory, Action::RepairHistory));
    assert!(c.tool_call_ids.is_empty());
}

#[test]
fn ids_are_found_after_non_ascii_text() {
    // 'İ' lowercases to two characters; the marker offset must still hold.
    let body =
        "İİİ messages.2: tool_use ids were found without tool_result blocks immediately after: toolu_9, toolu_ß. Each";
    let c = cls(Provider::Anthropic, 400, body, &[]);
    assert_eq!(c.category, Category::InvalidToolHistory);
    assert_eq!(c.tool_call_ids, ["toolu_9", "toolu_ß"]);
}

#[test]
fn plain_text_and_odd_json_bodies_are_handled() {
    let c = cls(Provider::Other, 503, "Service Unavailable", &[]);
    assert_eq!(c.category, Category::Overloaded);
    assert_eq!(c.message.as_deref(), Some("Service Unavailable"));
    let c = cls(Provider::Other, 400, "[1,2,3]", &[]);
    assert_eq!((c.category, c.message), (Category::InvalidRequest, None));
    let c = cls(Provider::Other, 400, r#"{"error":{"code":"x","message":7}}"#, &[]);
    assert_eq!(c.category, Category::InvalidRequest);
    let deep = "[".repeat(500) + &"]".repeat(500);
    assert_eq!(cls(Provider::Other, 500, &deep, &[]).category, Category::ServerError);
}

#[test]
fn classify_json_accepts_string_or_parsed_bodies() {
    let as_text =
        serde_json::json!({"provider": "gemini", "status": 429, "body": fixture("gemini-resource-exhausted")});
    let parsed: serde_json::Value = serde_json::from_str(&fixture("gemini-resource-exhausted")).unwrap();
    let as_json = serde_json::json!({"provider": "google", "status": 429, "body": parsed});
    let a = classify_json(&as_text.to_string()).unwrap();
    let b = classify_json(&as_json.to_string()).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.retry_after_ms, Some(28_000));
    let e = classify_json(r#"{"provider":"acme","status":500}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("acme"));
    assert_eq!(classify_json(r#"{"provider":"openai","status":70000}"#).unwrap_err().kind(), ErrorKind::InvalidJson);
    assert_eq!(classify_json(r#"{"provider":"openai","bogus":1}"#).unwrap_err().kind(), ErrorKind::InvalidJson);
}

#[test]
fn body_size_is_limited() {
    let at = " ".repeat(crate::limits::MAX_JSON_BYTES);
    assert!(classify(Provider::Other, 500, &at, &[]).is_ok());
    let past = " ".repeat(crate::limits::MAX_JSON_BYTES + 1);
    assert_eq!(classify(Provider::Other, 500, &past, &[]).unwrap_err().kind(), ErrorKind::LimitExceeded);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    /// Any body, any status: never panics, and the fields agree with each other.
    #[test]
    fn classification_is_consistent(body in ".{0,200}", status in any::<u16>()) {
        let c = cls(Provider::Other, status, &body, &[]);
        prop_assert_eq!(c.retryable, c.action == Action::Retry);
        prop_assert_eq!(c.retry_after_ms.is_some(), c.retryable);
        prop_assert_eq!(c.tool_call_ids.is_empty() || c.category == Category::InvalidToolHistory, true);
    }

    /// Marker phrases amid arbitrary Unicode never make the id or delay
    /// extraction slice inside a character.
    #[test]
    fn extraction_survives_any_text(pre in "\\PC{0,40}", post in "\\PC{0,40}") {
        for marker in ["did not have response messages:", "for the following Ids:", "try again in ", "retry after "] {
            let c = cls(Provider::Other, 429, &format!("{pre}{marker}{post}"), &[]);
            prop_assert_eq!(c.retry_after_ms.is_some(), c.retryable);
        }
    }
}

// ---- status 0 and framework exceptions ---------------------------------------

#[test]
fn state_and_tool_failures_have_their_own_categories() {
    // Document 000's "state"/"redis" rule, as a whole word (not "statement").
    for text in [
        "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379",
        "Failed to load agent state",
        "InvalidStateError: invalid state transition",
    ] {
        let c = cls(Provider::Other, 0, text, &[]);
        assert_eq!((c.category, c.severity, c.action), (Category::State, Severity::High, Action::Fail), "{text:?}");
    }
    assert_eq!(cls(Provider::Other, 0, "bad SQL statement", &[]).category, Category::Unknown);
    // A tool that failed while executing is not the provider's tool_error.
    for text in ["ToolException: file not found: notes.md", "tool execution failed: exit status 2"] {
        let c = cls(Provider::Other, 0, text, &[]);
        assert_eq!(
            (c.category, c.severity, c.action, c.retryable),
            (Category::ToolFailed, Severity::Medium, Action::Fail, false),
            "{text:?}"
        );
    }
    assert_eq!(cls(Provider::Other, 0, "toolbox missing", &[]).category, Category::Unknown);
    // A failed tool's own text: recognised patterns keep their category,
    // anything else (and nothing at all) is tool_failed.
    assert_eq!(tool_failure_category("KeyError: 'path'"), Category::ToolFailed);
    assert_eq!(tool_failure_category(""), Category::ToolFailed);
    assert_eq!(tool_failure_category("request timed out"), Category::Timeout);
    assert_eq!(tool_failure_category("redis down"), Category::State);
    for c in [Category::State, Category::ToolFailed, Category::ToolError, Category::RateLimited] {
        assert_eq!(serde_json::to_value(c).unwrap(), serde_json::json!(c.as_str()));
    }
}

#[test]
fn status_zero_reads_the_exception_text_and_unrecognised_text_fails() {
    let cases: [(&str, Category, Action); 12] = [
        ("safety validation failed", Category::ContentFilter, Action::Fail),
        ("state store unavailable", Category::State, Action::Fail),
        ("Rate limit exceeded", Category::RateLimited, Action::Retry),
        ("Too Many Requests", Category::RateLimited, Action::Retry),
        ("Request timed out.", Category::Timeout, Action::Retry),
        ("httpx.ConnectError: [Errno 111] Connection refused", Category::Network, Action::Retry),
        ("ConnectionResetError: [Errno 104] Connection reset by peer", Category::Network, Action::Retry),
        ("getaddrinfo ENOTFOUND api.openai.com", Category::Network, Action::Retry),
        ("input validation error: 'query' is required", Category::InvalidRequest, Action::Fail),
        ("Response was blocked by the content filter", Category::ContentFilter, Action::Fail),
        ("KeyError: 'narrative'", Category::Unknown, Action::Fail),
        ("", Category::Network, Action::Retry),
    ];
    for (text, category, action) in cases {
        let c = cls(Provider::Other, 0, text, &[]);
        assert_eq!((c.category, c.action, c.retryable), (category, action, action == Action::Retry), "{text:?}");
    }
    // The same text with an HTTP status keeps the status's meaning.
    assert_eq!(cls(Provider::Other, 503, "state store unavailable", &[]).category, Category::Overloaded);
    assert_eq!(cls(Provider::Other, 0, "state store unavailable", &[]).severity, Severity::High);
}

#[test]
fn langgraph_invalid_chat_history_is_repaired_with_its_ids() {
    // langgraph/prebuilt/chat_agent_executor.py `_validate_chat_history`, as
    // raised through create_error_message (the troubleshooting link appended).
    let text = "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. Here are the first few \
                of those tool calls: [{'name': 'get_weather', 'args': {'city': 'sf'}, 'id': 'call_Qx1', 'type': \
                'tool_call'}, {'name': 'search', 'args': {'q': \"it's\"}, 'id': 'toolu_01B', 'type': 'tool_call'}].\n\n\
                Every tool call (LLM requesting to call a tool) in the message history MUST have a corresponding \
                ToolMessage (result of a tool invocation to return to the LLM) - this is required by most LLM \
                providers.\nFor troubleshooting, visit: \
                https://python.langchain.com/docs/troubleshooting/errors/INVALID_CHAT_HISTORY ";
    for status in [0, 400, 500] {
        let c = cls(Provider::Other, status, text, &[]);
        assert_eq!((c.category, c.action), (Category::InvalidToolHistory, Action::RepairHistory), "status {status}");
        assert_eq!(c.tool_call_ids, ["call_Qx1", "toolu_01B"]);
    }
    // The short form some hosts re-raise, without ids.
    let c =
        cls(Provider::Other, 0, "Found AIMessages with tool_calls that do not have a corresponding ToolMessage", &[]);
    assert_eq!((c.category, c.tool_call_ids.len()), (Category::InvalidToolHistory, 0));
    // JSON-quoted ids are read too, and an unterminated quote ends the scan.
    let c = cls(Provider::Other, 0, r#"INVALID_CHAT_HISTORY: [{"id": "c1"}, {"id": "c2"}, {'id': 'open"#, &[]);
    assert_eq!(c.tool_call_ids, ["c1", "c2"]);
}

// ---- backoff ----------------------------------------------------------------

#[test]
fn backoff_gives_up_after_max_attempts_and_rejects_bad_policies() {
    let p = BackoffPolicy { max_attempts: 3, ..BackoffPolicy::default() };
    assert!(matches!(p.decide(2, 0, None).unwrap(), RetryDecision::Retry { .. }));
    assert!(matches!(p.decide(3, 0, None).unwrap(), RetryDecision::GiveUp { .. }));
    assert_eq!(p.decide(0, 0, None).unwrap_err().kind(), ErrorKind::InvalidArgument);
    for bad in [
        BackoffPolicy { base_ms: 0, ..p },
        BackoffPolicy { cap_ms: 10, base_ms: 11, ..p },
        BackoffPolicy { max_attempts: 0, ..p },
    ] {
        assert_eq!(bad.decide(1, 0, None).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    assert_eq!(
        BackoffPolicy::decide_json(r#"{"failed_attempts":1,"policy":{"base":5}}"#).unwrap_err().kind(),
        ErrorKind::InvalidJson
    );
}

#[test]
fn the_ceiling_doubles_then_caps() {
    let p = BackoffPolicy { base_ms: 100, cap_ms: 1000, max_attempts: 100, ..BackoffPolicy::default() };
    let got: Vec<u64> = (1..=6).map(|n| p.ceiling_ms(n)).collect();
    assert_eq!(got, [100, 200, 400, 800, 1000, 1000]);
    let big = BackoffPolicy { base_ms: u64::MAX / 2, cap_ms: u64::MAX, ..p };
    assert_eq!(big.ceiling_ms(3), u64::MAX);
}

#[test]
fn jitter_spreads_over_the_whole_range() {
    let p = BackoffPolicy { base_ms: 1000, cap_ms: 1000, max_attempts: 10, ..BackoffPolicy::default() };
    let delays: Vec<u64> = (0..2000u64)
        .map(|seed| match p.decide(1, seed, None).unwrap() {
            RetryDecision::Retry { delay_ms } => delay_ms,
            RetryDecision::GiveUp { .. } => unreachable!(),
        })
        .collect();
    // Full jitter: both ends of [0, 1000] are reached, and the mean is near 500.
    assert!(delays.iter().any(|&d| d < 50) && delays.iter().any(|&d| d > 950));
    let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
    assert!((430.0..570.0).contains(&mean), "mean {mean}");
}

#[test]
fn jitter_none_is_the_fixed_1_2_4_second_schedule() {
    // Three retries after the first call (four attempts), 1 s doubling: the
    // schedule a loop sleeping 2^attempt seconds keeps, for every seed.
    let p =
        BackoffPolicy { base_ms: 1000, cap_ms: 60_000, max_attempts: 4, jitter: Jitter::None, ..Default::default() };
    for seed in [0, 1, u64::MAX] {
        let got: Vec<RetryDecision> = (1..=4).map(|n| p.decide(n, seed, None).unwrap()).collect();
        assert_eq!(
            got,
            [
                RetryDecision::Retry { delay_ms: 1000 },
                RetryDecision::Retry { delay_ms: 2000 },
                RetryDecision::Retry { delay_ms: 4000 },
                RetryDecision::GiveUp { reason: "max_attempts reached" },
            ]
        );
    }
    // The cap still applies, a server hint is still a floor, and full jitter
    // (the default) stays below the ceiling.
    let capped = BackoffPolicy { cap_ms: 1500, ..p };
    assert_eq!(capped.decide(3, 0, None).unwrap(), RetryDecision::Retry { delay_ms: 1500 });
    assert_eq!(p.decide(1, 0, Some(3000)).unwrap(), RetryDecision::Retry { delay_ms: 3000 });
    let d = BackoffPolicy::decide_json(
        r#"{"failed_attempts":2,"policy":{"base_ms":1000,"cap_ms":8000,"max_attempts":4,"jitter":"none"}}"#,
    );
    assert_eq!(d.unwrap(), RetryDecision::Retry { delay_ms: 2000 });
    let bad = BackoffPolicy::decide_json(r#"{"failed_attempts":1,"policy":{"jitter":"half"}}"#);
    assert_eq!(bad.unwrap_err().kind(), ErrorKind::InvalidJson);
}

proptest! {
    #[test]
    fn backoff_never_exceeds_the_cap_and_is_deterministic(
        base in 1u64..10_000, extra in 0u64..100_000, attempts in 2u32..50, failed in 1u32..60, seed in any::<u64>()
    ) {
        let p = BackoffPolicy { base_ms: base, cap_ms: base + extra, max_attempts: attempts, ..BackoffPolicy::default() };
        let a = p.decide(failed, seed, None).unwrap();
        prop_assert_eq!(a, p.decide(failed, seed, None).unwrap());
        match a {
            RetryDecision::Retry { delay_ms } => {
                prop_assert!(failed < attempts);
                prop_assert!(delay_ms <= p.cap_ms && delay_ms <= p.ceiling_ms(failed));
            }
            RetryDecision::GiveUp { .. } => prop_assert!(failed >= attempts),
        }
    }

    #[test]
    fn a_server_hint_is_a_floor(seed in any::<u64>(), hint in 0u64..200_000, failed in 1u32..5) {
        let p = BackoffPolicy::default();
        match p.decide(failed, seed, Some(hint)).unwrap() {
            RetryDecision::Retry { delay_ms } => {
                prop_assert!(hint <= p.max_retry_after_ms);
                prop_assert!(delay_ms >= hint && delay_ms <= hint.max(p.cap_ms));
            }
            RetryDecision::GiveUp { .. } => prop_assert!(hint > p.max_retry_after_ms),
        }
    }
}

// ---- circuit breaker --------------------------------------------------------

fn breakers(threshold: u32, cool_down_ms: u64) -> Breakers {
    Breakers::new(BreakerConfig { failure_threshold: threshold, cool_down_ms, ..BreakerConfig::default() }).unwrap()
}

#[test]
fn breaker_walks_closed_open_half_open_closed() {
    let b = breakers(2, 1000);
    assert!(b.allow("openai", 0).unwrap());
    assert_eq!(b.record("openai", false, 10).unwrap(), BreakerState::Closed);
    assert_eq!(b.record("openai", false, 20).unwrap(), BreakerState::Open);
    let s = b.snapshot("openai", 520).unwrap();
    assert_eq!((s.state, s.opened_at_ms, s.retry_in_ms), (BreakerState::Open, Some(20), Some(500)));
    assert!(!b.allow("openai", 1019).unwrap());
    // Other keys are unaffected.
    assert!(b.allow("anthropic", 500).unwrap());
    assert!(b.allow("openai", 1020).unwrap()); // the probe
    assert_eq!(b.snapshot("openai", 1020).unwrap().probes_in_flight, 1);
    assert!(!b.allow("openai", 1021).unwrap()); // only one probe at a time
    assert_eq!(b.record("openai", true, 1030).unwrap(), BreakerState::Closed);
    let s = b.snapshot("openai", 1030).unwrap();
    assert_eq!((s.consecutive_failures, s.opened_at_ms, s.retry_in_ms), (0, None, None));
}

#[test]
fn breaker_config_and_keys_are_checked() {
    for bad in [
        BreakerConfig { failure_threshold: 0, ..BreakerConfig::default() },
        BreakerConfig { success_threshold: 0, ..BreakerConfig::default() },
        BreakerConfig { half_open_max_calls: 0, ..BreakerConfig::default() },
    ] {
        assert_eq!(Breakers::new(bad).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    let b = breakers(1, 10);
    assert_eq!(b.allow("", 0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(b.snapshot("", 0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    // Asking about a key does not start tracking it.
    assert_eq!(b.snapshot("never-seen", 0).unwrap().state, BreakerState::Closed);
    assert!(b.is_empty());
    assert!(b.allow(&"k".repeat(MAX_KEY_BYTES), 0).is_ok());
    assert_eq!(b.allow(&"k".repeat(MAX_KEY_BYTES + 1), 0).unwrap_err().kind(), ErrorKind::LimitExceeded);
}

#[test]
fn breaker_key_limit_evicts_idle_keys_first() {
    let b = breakers(3, 10);
    for i in 0..MAX_BREAKER_KEYS {
        b.record(&format!("k{i}"), false, 0).unwrap(); // one failure each: not idle
    }
    assert_eq!(b.len(), MAX_BREAKER_KEYS);
    // At the limit, a new key is refused while every key carries state...
    assert_eq!(b.allow("one-more", 0).unwrap_err().kind(), ErrorKind::LimitExceeded);
    // ...and accepted once one key has gone idle again.
    b.record("k0", true, 1).unwrap();
    assert!(b.allow("one-more", 1).unwrap());
    assert_eq!(b.len(), MAX_BREAKER_KEYS);
}

#[test]
fn breaker_is_shared_safely_by_threads() {
    let b = std::sync::Arc::new(breakers(1_000_000, 10));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let b = b.clone();
            std::thread::spawn(move || {
                for i in 0..1000u64 {
                    assert!(b.allow("shared", i).unwrap());
                    b.record("shared", false, i).unwrap();
                    b.record(&format!("own-{t}"), i % 2 == 0, i).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(b.snapshot("shared", 0).unwrap().consecutive_failures, 4000);
    assert_eq!(b.len(), 5);
}

#[test]
fn now_ms_reads_a_plausible_clock() {
    // After 2020-01-01 and monotone enough for two reads in a row.
    let a = now_ms();
    assert!(a > 1_577_836_800_000);
    assert!(now_ms() >= a);
}

// ---- error context (document 000's ErrorContext) --------------------------

fn ctx(agent: Option<&str>, workflow: Option<&str>) -> ErrorContext {
    ErrorContext { agent_id: agent.map(str::to_owned), workflow_id: workflow.map(str::to_owned), metadata: None }
}

#[test]
fn classification_echoes_the_context_it_was_given() {
    let body = fixture("openai-rate-limit");
    let mut meta = serde_json::Map::new();
    meta.insert("turn".into(), serde_json::json!(7));
    meta.insert("scene".into(), serde_json::json!({"id": "forest"}));
    let c = ErrorContext { metadata: Some(meta.clone()), ..ctx(Some("narrator"), Some("wf-42")) };
    let got = classify_in(Provider::OpenAi, 429, &body, &[], c.clone()).unwrap();
    assert_eq!((got.agent_id.as_deref(), got.workflow_id.as_deref()), (Some("narrator"), Some("wf-42")));
    assert_eq!(got.metadata.as_ref(), Some(&meta));
    assert_eq!(got.context(), c);
    // The verdict is the same as without a context.
    let plain = cls(Provider::OpenAi, 429, &body, &[]);
    assert_eq!((got.category, got.action, got.retry_after_ms), (plain.category, plain.action, plain.retry_after_ms));
    assert_eq!((&plain.agent_id, &plain.workflow_id, &plain.metadata), (&None, &None, &None));
    // In JSON the fields sit beside the verdict, null when not given.
    let v = serde_json::to_value(&got).unwrap();
    assert_eq!((v["agent_id"].as_str(), v["metadata"]["scene"]["id"].as_str()), (Some("narrator"), Some("forest")));
    let v = serde_json::to_value(&plain).unwrap();
    assert!(v["agent_id"].is_null() && v["workflow_id"].is_null() && v["metadata"].is_null());
}

#[test]
fn classify_json_reads_the_context_fields() {
    let req = r#"{"provider":"other","status":0,"body":"Rate limit exceeded","agent_id":"narrator",
        "workflow_id":"wf-1","metadata":{"attempt":2}}"#;
    let c = classify_json(req).unwrap();
    assert_eq!(
        (c.category, c.agent_id.as_deref(), c.workflow_id.as_deref()),
        (Category::RateLimited, Some("narrator"), Some("wf-1"))
    );
    assert_eq!(c.metadata.unwrap()["attempt"], 2);
}

#[test]
fn a_bad_context_is_refused_with_a_specific_error() {
    let e = classify_json(r#"{"provider":"openai","status":500,"agent_id":""}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("agent_id is empty"), "{e}");
    let long = "w".repeat(MAX_KEY_BYTES + 1);
    let e = classify_in(Provider::OpenAi, 500, "", &[], ctx(None, Some(&long))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    assert!(e.to_string().contains("workflow_id"), "{e}");
    let e = classify_json(r#"{"provider":"openai","status":500,"metadata":[1]}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidJson);
    let e = classify_json(r#"{"provider":"openai","status":500,"agent_id":7}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidJson);
    let e = ErrorContext::from_json(r#"{"agent":"x"}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidJson);
}

#[test]
fn breakers_count_failures_per_agent_and_workflow() {
    let b = Breakers::new(BreakerConfig::default()).unwrap();
    b.record_in("openai", false, 0, &ctx(Some("narrator"), Some("wf-1"))).unwrap();
    b.record_in("openai", false, 1, &ctx(Some("narrator"), Some("wf-2"))).unwrap();
    b.record_in("anthropic", false, 2, &ctx(Some("critic"), Some("wf-1"))).unwrap();
    // Successes and failures without ids are not attributed to anyone.
    b.record_in("openai", true, 3, &ctx(Some("narrator"), Some("wf-1"))).unwrap();
    b.record_in("openai", false, 4, &ErrorContext::default()).unwrap();
    b.record("openai", false, 5).unwrap();
    let n = b.failure_counts();
    assert_eq!(n.by_agent.get("narrator"), Some(&2));
    assert_eq!(n.by_agent.get("critic"), Some(&1));
    assert_eq!(n.by_workflow.get("wf-1"), Some(&2));
    assert_eq!(n.by_workflow.get("wf-2"), Some(&1));
    assert_eq!(n.unattributed, 0);
    // The breaker itself behaves as `record` does: the counts are beside it.
    assert_eq!(b.snapshot("openai", 6).unwrap().consecutive_failures, 2);
    // A bad context records nothing.
    let e = b.record_in("openai", false, 7, &ctx(Some(""), None)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(b.snapshot("openai", 8).unwrap().consecutive_failures, 2);
}

#[test]
fn failure_counts_stay_bounded_and_lose_no_failure() {
    let mut n = FailureCounts::default();
    for i in 0..MAX_COUNTED_IDS + 5 {
        n.add(Some(&format!("agent-{i}")), Some("wf"));
    }
    assert_eq!(n.by_agent.len(), MAX_COUNTED_IDS);
    assert_eq!(n.unattributed, 5);
    assert_eq!(n.by_workflow["wf"], (MAX_COUNTED_IDS + 5) as u64);
    // Known ids keep counting once the map is full.
    n.add(Some("agent-0"), None);
    assert_eq!((n.by_agent["agent-0"], n.unattributed), (2, 5));
}

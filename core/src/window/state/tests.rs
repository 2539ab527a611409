use super::*;
use crate::window::CompactOutcome;
use crate::window::Framing;
use crate::{ModelRegistry, Tokenizer};

fn window(model: &str, budget: Budget) -> Window {
    let info = ModelRegistry::builtin().lookup(model).unwrap();
    let acct = Accountant::new(Tokenizer::new(info.encoding).unwrap(), Framing::for_encoding(info.encoding));
    Window::new(acct, info, budget).unwrap()
}

fn msg(w: &Window, json: &str) -> Message {
    w.conversation().parse_message(json).unwrap()
}

#[test]
fn totals_match_a_full_recount_after_any_edit_sequence() {
    let mut w = window("gpt-4o", Budget::default());
    let c = Conversation::parse(include_str!("../../../../examples/data/coding-session.json"), None).unwrap();
    let full = Accountant::new(*w.accountant().tokenizer(), *w.accountant().framing());
    w.load(c).unwrap();
    let check = |w: &Window| {
        let p = w.preflight(None).unwrap();
        assert_eq!(p.prompt_tokens, full.conversation(w.conversation()).unwrap());
        assert_eq!(p.system + p.history, w.message_tokens().iter().sum::<usize>());
    };
    check(&w);
    let m = msg(&w, r#"{"role":"user","content":"and now the lexer tests"}"#);
    w.push(m).unwrap();
    check(&w);
    let s = msg(&w, r#"{"role":"system","content":"Be brief."}"#);
    w.replace(1, s).unwrap();
    check(&w);
    w.pop().unwrap();
    check(&w);
    assert!(w.replace(999, msg(&w, r#"{"role":"user","content":"x"}"#)).is_err());
}

#[test]
fn verdicts_follow_the_budget() {
    let budget = |cw| Budget { context_window: cw, reserved_output: Some(100), ..Budget::default() };
    let mut w = window("gpt-4o", budget(1000));
    w.push(msg(&w, &format!(r#"{{"role":"user","content":"{}"}}"#, "word ".repeat(100)))).unwrap();
    let p = w.preflight(None).unwrap();
    assert_eq!(p.verdict, Verdict::Fits, "{p:?}");
    assert_eq!(p.remaining, 1000 - (p.prompt_tokens as i64 + 100));
    let big = msg(&w, &format!(r#"{{"role":"user","content":"{}"}}"#, "word ".repeat(650)));
    assert_eq!(w.preflight(Some(&big)).unwrap().verdict, Verdict::ShouldCompact);
    let huge = msg(&w, &format!(r#"{{"role":"user","content":"{}"}}"#, "word ".repeat(900)));
    let p = w.preflight(Some(&huge)).unwrap();
    assert_eq!(p.verdict, Verdict::Overflow);
    assert!(p.remaining < 0 && p.utilization > 1.0);
}

#[test]
fn message_utilization_is_the_messages_over_the_window() {
    // Document 000: an empty window's utilization is 0.0; with the default
    // reserve the verdict's `utilization` is a quarter already.
    let budget = Budget { context_window: 1000, ..Budget::default() };
    let mut w = window("gpt-4", budget);
    let p = w.preflight(None).unwrap();
    assert_eq!((p.message_tokens, p.message_utilization), (0, 0.0));
    assert_eq!((p.prompt_tokens, p.reserved_output), (3, 250));
    assert!((p.utilization - 0.253).abs() < 1e-12, "{}", p.utilization);
    w.push(msg(&w, r#"{"role":"user","content":"Hello"}"#)).unwrap();
    let m = msg(&w, r#"{"role":"user","content":"and you?"}"#);
    let p = w.preflight(Some(&m)).unwrap();
    assert_eq!(p.message_tokens, p.system + p.tools + p.history + p.new_input);
    assert_eq!(p.message_tokens + p.reply_priming, p.prompt_tokens);
    assert!((p.message_utilization - p.message_tokens as f64 / 1000.0).abs() < 1e-12);
}

#[test]
fn defaults_come_from_the_model_and_bad_budgets_are_refused() {
    let w = window("gpt-4o", Budget::default());
    let p = w.preflight(None).unwrap();
    assert_eq!((p.limit, p.reserved_output), (128_000, 16_384));
    assert_eq!((p.trigger_tokens, p.target_tokens), (102_400, 64_000));
    let info = ModelRegistry::builtin().lookup_or("mystery", Some(crate::Encoding::Cl100kBase)).unwrap();
    let acct = Accountant::new(Tokenizer::new(info.encoding).unwrap(), Framing::for_encoding(info.encoding));
    let err = Window::new(acct.clone(), info.clone(), Budget::default()).unwrap_err();
    assert!(err.message().contains("context_window"), "{err}");
    for b in [
        Budget { trigger_ratio: 1.5, ..Budget::default() },
        Budget { target_ratio: 0.9, trigger_ratio: 0.8, ..Budget::default() },
        Budget { context_window: 100, reserved_output: Some(100), ..Budget::default() },
    ] {
        assert!(
            Window::new(acct.clone(), info.clone(), Budget { context_window: b.context_window.max(1), ..b }).is_err(),
            "{b:?}"
        );
    }
}

#[test]
fn calibration_applies_to_estimated_models_only() {
    let mut w = window("claude-sonnet-4-5", Budget::default());
    w.push(msg(&w, r#"{"role":"user","content":"Hello there, how are you today?"}"#)).unwrap();
    let raw = w.preflight(None).unwrap().prompt_tokens;
    let reported = raw * 5 / 4;
    let factor = w.calibrate(reported).unwrap();
    assert_eq!(factor, reported as f64 / raw as f64);
    let p = w.preflight(None).unwrap();
    assert_eq!(p.prompt_tokens, raw);
    assert_eq!(p.calibrated_prompt_tokens, reported);
    assert!(!p.exact);
    assert!(w.calibrate(raw * 10).is_err(), "implausible factor refused");

    let mut exact = window("gpt-4o", Budget::default());
    exact.push(msg(&exact, r#"{"role":"user","content":"Hello"}"#)).unwrap();
    let raw = exact.preflight(None).unwrap().prompt_tokens;
    exact.calibrate(raw + 1).unwrap();
    assert_eq!(exact.preflight(None).unwrap().calibrated_prompt_tokens, raw, "exact counts are not scaled");
}

#[test]
fn responses_counts_are_exact_unless_unmeasured_and_calibrate() {
    // A plain Responses request is measured (issue 36, docs/accuracy.md):
    // exact, like the same conversation in Chat form.
    let mut w = window("gpt-4o", Budget::default());
    let items = r#"{"input":[{"role":"user","content":"What is the capital of France?"}]}"#;
    w.load(Conversation::parse(items, Some(crate::chat::Format::Responses)).unwrap()).unwrap();
    assert!(w.preflight(None).unwrap().exact, "a plain Responses count is exact");
    let mut chat = window("gpt-4o", Budget::default());
    let messages = r#"[{"role":"user","content":"What is the capital of France?"}]"#;
    chat.load(Conversation::parse(messages, None).unwrap()).unwrap();
    assert_eq!(chat.preflight(None).unwrap().prompt_tokens, w.preflight(None).unwrap().prompt_tokens);
    // A shape the recordings do not measure (`instructions: ""`) is an
    // estimate, and calibration applies to it.
    let mut est = window("gpt-4o", Budget::default());
    let items = r#"{"instructions":"","input":[{"role":"user","content":"What is the capital of France?"}]}"#;
    est.load(Conversation::parse(items, Some(crate::chat::Format::Responses)).unwrap()).unwrap();
    let p = est.preflight(None).unwrap();
    assert!(!p.exact, "an unmeasured Responses shape is an estimate");
    let reported = p.prompt_tokens * 3 / 2;
    est.calibrate(reported).unwrap();
    assert_eq!(est.preflight(None).unwrap().calibrated_prompt_tokens, reported);
}

/// An exact model's preflight is an estimate for a request holding a shape
/// the accounting only estimates: parallel calls in the history or in the
/// message about to be sent, or a structured-output schema.
#[test]
fn preflight_exactness_is_per_request() {
    let mut w = window("gpt-4o", Budget::default());
    w.load(Conversation::parse(r#"[{"role":"user","content":"read both"}]"#, None).unwrap()).unwrap();
    assert!(w.preflight(None).unwrap().exact);
    let parallel = msg(
        &w,
        r#"{"role":"assistant","content":null,"tool_calls":[
          {"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}},
          {"id":"c2","type":"function","function":{"name":"b","arguments":"{}"}}]}"#,
    );
    assert!(!w.preflight(Some(&parallel)).unwrap().exact, "the new input has parallel calls");
    assert!(w.preflight(None).unwrap().exact, "nothing was added");
    w.push(parallel).unwrap();
    assert!(!w.preflight(None).unwrap().exact, "the history has parallel calls");

    let mut s = window("gpt-4o", Budget::default());
    let structured = r#"{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema",
        "json_schema":{"name":"A","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}"#;
    s.load(Conversation::parse(structured, None).unwrap()).unwrap();
    assert!(!s.preflight(None).unwrap().exact);
}

#[test]
fn window_compaction_and_the_summary_protocol() {
    use crate::window::{Policy, Strategy};
    let turns: Vec<String> = (0..10)
        .map(|k| {
            format!(
                r#"{{"role":"user","content":"q{k} {}"}},{{"role":"assistant","content":"a{k} {}"}}"#,
                "w ".repeat(40),
                "x ".repeat(40)
            )
        })
        .collect();
    let conv = Conversation::parse(&format!("[{}]", turns.join(",")), None).unwrap();
    let budget = Budget { context_window: 1500, reserved_output: Some(100), ..Budget::default() };
    let mut w = window("gpt-4o", budget);
    w.load(conv.clone()).unwrap();
    // Recency: compacted in place to the target (0.5 * 1500 - 100).
    let CompactOutcome::Done { report } = w.compact(&Policy::default()).unwrap() else {
        panic!("recency needs no summary")
    };
    assert_eq!((report.target_tokens, report.limit_tokens), (650, 1400));
    assert!(report.within_target && report.tokens_after <= 650);
    assert_eq!(w.preflight(None).unwrap().prompt_tokens, report.tokens_after);

    // Summarize: a request, then the host's summary.
    w.load(conv.clone()).unwrap();
    let p = Policy { strategy: Strategy::Summarize, summary_max_tokens: 60, ..Policy::default() };
    let CompactOutcome::NeedsSummary { request } = w.compact(&p).unwrap() else { panic!("expected a summary request") };
    assert!(w.apply_summary("sum-wrong", "x").is_err());
    let report = w.apply_summary(&request.id, "Ten questions were asked and answered.").unwrap();
    assert!(report.tokens_after <= 650);
    // The first question is the task (kept); the summary comes right after it.
    assert_eq!(w.conversation().messages[0].raw(), conv.messages[0].raw());
    assert!(w.conversation().messages[1].text().starts_with("[Summary of earlier conversation]\nTen questions"));
    assert!(w.apply_summary(&request.id, "again").is_err(), "consumed");

    // Any edit discards a pending request.
    w.load(conv).unwrap();
    let CompactOutcome::NeedsSummary { request } = w.compact(&p).unwrap() else { panic!() };
    let m = w.conversation().parse_message(r#"{"role":"user","content":"one more"}"#).unwrap();
    w.push(m).unwrap();
    assert!(w.apply_summary(&request.id, "late").unwrap_err().message().contains("no summary is pending"));
}

#[test]
fn message_count_limit_at_and_one_past_for_load_and_push() {
    use crate::limits::MAX_MESSAGES;
    let mut w = window("gpt-4o", Budget { context_window: 10_000_000, ..Budget::default() });
    let one = r#"{"role":"user","content":"x"}"#;
    let text = format!("[{}]", vec![one; MAX_MESSAGES - 1].join(","));
    w.load(Conversation::parse(&text, None).unwrap()).unwrap();
    assert_eq!(w.push(msg(&w, one)).unwrap(), 3 + 1 + 1);
    assert_eq!(w.message_tokens().len(), MAX_MESSAGES);
    let before = w.preflight(None).unwrap();
    let err = w.push(msg(&w, one)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    assert_eq!(err.message(), "the window would hold 100001 messages; the limit is 100000 (MAX_MESSAGES)");
    assert_eq!(w.preflight(None).unwrap(), before, "a refused push leaves the window unchanged");
    // A conversation built in code can exceed the parser's limit; load refuses it.
    let mut big = w.conversation().clone();
    big.messages.push(msg(&w, one));
    let err = w.load(big).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    assert_eq!(w.message_tokens().len(), MAX_MESSAGES);
}

/// Issue 14 bug 1: a u64::MAX window (with or without a huge reserve) was
/// accepted and preflight panicked or reported "fits" with a negative
/// remaining. Budgets past MAX_BUDGET_TOKENS are refused; at the limit every
/// figure stays consistent.
#[test]
fn budget_figures_are_bounded_and_never_wrap() {
    let info = ModelRegistry::builtin().lookup("gpt-4o").unwrap();
    let acct = || Accountant::new(Tokenizer::new(info.encoding).unwrap(), Framing::for_encoding(info.encoding));
    let huge = [
        Budget { context_window: usize::MAX, reserved_output: Some(usize::MAX - 1), ..Budget::default() },
        Budget { context_window: usize::MAX, ..Budget::default() },
        Budget { context_window: MAX_BUDGET_TOKENS + 1, ..Budget::default() },
        Budget { reserved_output: Some(MAX_BUDGET_TOKENS + 1), ..Budget::default() },
    ];
    for b in huge {
        let e = Window::new(acct(), info.clone(), b).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{b:?}");
        assert!(e.message().contains("MAX_BUDGET_TOKENS"), "{}", e.message());
    }
    let b =
        Budget { context_window: MAX_BUDGET_TOKENS, reserved_output: Some(MAX_BUDGET_TOKENS - 1), ..Budget::default() };
    let w = Window::new(acct(), info.clone(), b).unwrap();
    let p = w.preflight(None).unwrap();
    assert_eq!(p.verdict, Verdict::Overflow);
    assert!(p.remaining < 0 && p.remaining > -10, "{p:?}");
    let b = Budget { context_window: MAX_BUDGET_TOKENS, ..Budget::default() };
    let p = Window::new(acct(), info, b).unwrap().preflight(None).unwrap();
    assert_eq!(p.verdict, Verdict::Fits);
    assert!(p.remaining > 0 && p.remaining as usize <= MAX_BUDGET_TOKENS, "{p:?}");
    assert!(p.utilization >= 0.0 && p.utilization < 1.0);
}

/// Issue 53 (seed 000, a small window): with the default `keep_first: 1`
/// the task and the newest message are kept whatever the budget; when they
/// alone are over the trigger, compaction cannot reach the target and the
/// verdict stays over the trigger. Before, every `add` compacted again.
/// Now an `add` compacts again only once the window has grown the
/// trigger's gap (trigger less target) past where the last compaction left
/// it, or would overflow; the window never ends over its limit.
#[test]
fn a_target_out_of_reach_does_not_refire_on_every_add() {
    let budget = Budget {
        context_window: 200,
        reserved_output: Some(0),
        trigger_ratio: 0.5,
        target_ratio: 0.3,
        ..Budget::default()
    };
    let mut w = window("gpt-4o", budget);
    let policy = crate::window::Policy::default();
    assert_eq!(policy.keep_first, 1);
    let gap = 100 - 60;
    let task = format!(
        r#"{{"role":"user","content":"{}"}}"#,
        "You are a therapeutic narrative generator; keep the story consistent. ".repeat(7)
    );
    w.add(msg(&w, &task), &policy).unwrap();
    let mut compactions = 0;
    let mut settled: Option<usize> = None;
    for i in 0..40 {
        let m = msg(&w, &format!(r#"{{"role":"user","content":"Message {i} Message {i}"}}"#));
        let before = w.preflight(Some(&m)).unwrap();
        let added = w.add(m, &policy).unwrap();
        let after = w.preflight(None).unwrap();
        assert!(after.prompt_tokens <= 200, "message {i}: over the limit: {after:?}");
        match added.compacted {
            Some(r) => {
                compactions += 1;
                if let Some(s) = settled {
                    assert!(
                        before.verdict == Verdict::Overflow || before.prompt_tokens >= s + gap,
                        "message {i}: compacted again at {} tokens, {s} after the last compaction",
                        before.prompt_tokens
                    );
                }
                settled = (!r.within_target).then_some(r.tokens_after);
                assert!(settled.is_some_and(|s| s >= 100), "the task alone is over the trigger: {r:?}");
            }
            None => assert!(before.verdict == Verdict::Fits || settled.is_some(), "message {i}: {before:?}"),
        }
    }
    assert!((3..15).contains(&compactions), "{compactions} compactions in 40 adds");
    // A compaction that reaches the target lifts the rule: a window with
    // room compacts at its trigger as before.
    let mut w = window("gpt-4o", Budget { context_window: 1000, reserved_output: Some(0), ..Budget::default() });
    let policy = crate::window::Policy { keep_first: 0, ..Default::default() };
    let mut fired = 0;
    for i in 0..60 {
        let m = msg(&w, &format!(r#"{{"role":"user","content":"{}"}}"#, format!("Message {i} ").repeat(6)));
        let before = w.preflight(Some(&m)).unwrap();
        if let Some(r) = w.add(m, &policy).unwrap().compacted {
            assert!(r.within_target, "{r:?}");
            fired += 1;
        } else {
            assert_eq!(before.verdict, Verdict::Fits);
        }
    }
    assert!(fired >= 2, "{fired}");
}

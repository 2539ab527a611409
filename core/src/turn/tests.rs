//! The turn's summarizer protocol: a summarizer that succeeds, fails,
//! hangs past its timeout, replies with nothing or too much; pieces for a
//! span far larger than the summarizer's window; folding a previous
//! summary; the cache impact.

use serde_json::{json, Value};

use super::*;
use crate::window::Strategy;

/// An OpenAI agent loop: system, task, `rounds` tool rounds with outputs
/// of about `words` words each.
fn agent_loop(rounds: usize, words: usize) -> String {
    let mut msgs = vec![
        json!({"role": "system", "content": "You are a coding agent. Use the tools."}),
        json!({"role": "user", "content": "Fix the failing test in src/parser.rs and make cargo test pass."}),
    ];
    for k in 0..rounds {
        let id = format!("call_{k}");
        msgs.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": "bash", "arguments": format!("{{\"cmd\":\"cat src/file{k}.rs\"}}")}}]}));
        let out: String = (0..words).map(|w| format!("line{k} word{w} ")).collect();
        msgs.push(json!({"role": "tool", "tool_call_id": id, "content": out}));
    }
    Value::Array(msgs).to_string()
}

fn options(max_tokens: usize) -> FitOptions {
    FitOptions {
        model: "gpt-4o".into(),
        max_tokens: Some(max_tokens),
        reserve_output: Some(500),
        // Masking alone would make these loops fit: off, so a span is
        // summarized.
        policy: Policy {
            strategy: Strategy::Summarize,
            mask: crate::window::MaskOptions { enabled: false, ..Default::default() },
            ..Policy::default()
        },
        ..FitOptions::default()
    }
}

fn reg() -> ModelRegistry {
    ModelRegistry::builtin()
}

fn drive(conv: &str, o: &FitOptions, mut f: impl FnMut(&SummarizerCall) -> Reply) -> (Conversation, TurnReport) {
    run(&reg(), conv, o, Some(&mut f)).unwrap()
}

fn fits(report: &TurnReport) {
    assert!(
        report.fit.tokens_after <= report.fit.limit_tokens,
        "{} > {}",
        report.fit.tokens_after,
        report.fit.limit_tokens
    );
}

#[test]
fn a_host_summary_replaces_the_span() {
    let conv = agent_loop(40, 120);
    let mut calls = 0;
    let (c, r) = drive(&conv, &options(8000), |call| {
        calls += 1;
        assert!(call.prompt_tokens <= call.max_prompt_tokens);
        Reply::Summary("The agent read forty files; the bug is in parse_header.".into())
    });
    fits(&r);
    assert!(calls >= 1);
    let s = r.summary.as_ref().unwrap();
    assert_eq!(s.source, SummarySource::Host, "{s:?}");
    assert!(s.fallback.is_none());
    assert!(c.to_json().unwrap().contains("the bug is in parse_header"));
    assert!(r.changed && r.fired);
    // The first change is the first summarized message, after the task.
    let first = r.cache.first_changed.unwrap();
    assert!(first >= 2, "{first}");
    assert!(r.cache.unchanged_prefix_tokens > 0 && r.cache.invalidated_tokens > 0);
}

#[test]
fn every_failure_falls_back_to_the_digest_and_the_turn_fits() {
    let conv = agent_loop(40, 120);
    let cases: Vec<(Reply, FallbackReason)> = vec![
        (Reply::Failed { reason: FailReason::Error, message: "rate limited".into() }, FallbackReason::Error),
        (Reply::Failed { reason: FailReason::Timeout, message: "cancelled".into() }, FallbackReason::Timeout),
        (Reply::Failed { reason: FailReason::NotText, message: "a tool call".into() }, FallbackReason::NotText),
        (Reply::Failed { reason: FailReason::InvalidUtf8, message: "byte 3".into() }, FallbackReason::InvalidUtf8),
        (Reply::Summary("   \n".into()), FallbackReason::Empty),
        (Reply::Summary("word ".repeat(5000)), FallbackReason::Oversized),
    ];
    for (reply, want) in cases {
        let (c, r) = drive(&conv, &options(8000), |_| reply.clone());
        fits(&r);
        let s = r.summary.as_ref().unwrap();
        assert_eq!(s.source, SummarySource::Digest);
        assert_eq!(s.fallback.as_ref().map(|f| f.reason), Some(want), "{s:?}");
        assert!(c.to_json().unwrap().contains(DEFAULT_LABEL));
    }
}

#[test]
fn a_reply_a_little_over_its_cap_is_cut() {
    let conv = agent_loop(40, 120);
    let mut o = options(8000);
    o.policy.summary_max_tokens = 100;
    let (_, r) = drive(&conv, &o, |call| Reply::Summary("fact ".repeat(call.max_summary_tokens + 20)));
    fits(&r);
    let s = r.summary.unwrap();
    assert_eq!(s.source, SummarySource::Host);
    assert!(s.requests.last().unwrap().cut);
}

#[test]
fn a_reply_after_the_timeout_is_discarded() {
    let conv = agent_loop(40, 120);
    let mut o = options(8000);
    o.summarizer.timeout_ms = Some(1);
    let (_, r) = drive(&conv, &o, |_| {
        std::thread::sleep(std::time::Duration::from_millis(30));
        Reply::Summary("late".into())
    });
    fits(&r);
    assert_eq!(r.summary.unwrap().fallback.map(|f| f.reason), Some(FallbackReason::Timeout));
}

#[test]
fn no_summarizer_is_reported_not_silent() {
    let conv = agent_loop(40, 120);
    let (_, r) = run(&reg(), &conv, &options(8000), None).unwrap();
    fits(&r);
    assert_eq!(r.summary.unwrap().fallback.map(|f| f.reason), Some(FallbackReason::NoSummarizer));
    // Resuming a turn with nothing waiting is an error.
    let mut t = Turn::start(&reg(), &conv, &options(1_000_000)).unwrap();
    assert!(t.call().is_none());
    assert_eq!(t.resume(Reply::Summary("x".into())).unwrap_err().kind(), crate::ErrorKind::InvalidArgument);
}

/// A span ten times the summarizer's window: summarized in pieces, every
/// request within its budget, each later piece carrying the summary so
/// far.
#[test]
fn a_span_larger_than_the_summarizer_is_summarized_in_pieces() {
    let conv = agent_loop(200, 150);
    let mut o = options(128_000);
    o.max_tokens = Some(30_000);
    o.summarizer = crate::window::SummarizerOptions {
        model: Some("gpt-4o-mini".into()),
        context_window: Some(4_000),
        max_requests: Some(64),
        ..Default::default()
    };
    let mut seen = Vec::new();
    let (_, r) = drive(&conv, &o, |call| {
        seen.push((call.piece, call.pieces, call.prompt_tokens, call.max_prompt_tokens, call.folds_previous));
        Reply::Summary(format!("summary after piece {}", call.piece))
    });
    fits(&r);
    let s = r.summary.unwrap();
    assert_eq!(s.source, SummarySource::Host, "{:?}", s.fallback);
    assert!(s.span_tokens > 10 * 4_000, "span {}", s.span_tokens);
    assert!(seen.len() > 1);
    for (piece, pieces, tokens, max, folds) in &seen {
        assert!(tokens <= max && *max <= 4_000, "{tokens} > {max}");
        assert_eq!(*pieces, seen.len());
        assert_eq!(*folds, *piece > 1);
    }
    // Too few requests allowed: the digest, said so.
    o.summarizer.max_requests = Some(2);
    let (_, r) = drive(&conv, &o, |_| Reply::Summary("never".into()));
    fits(&r);
    assert_eq!(r.summary.unwrap().fallback.map(|f| f.reason), Some(FallbackReason::TooManyPieces));
}

/// The next compaction folds the previous summary into the new one.
#[test]
fn the_next_compaction_folds_the_previous_summary() {
    let conv = agent_loop(40, 120);
    let o = options(8000);
    let (c, _) = drive(&conv, &o, |_| Reply::Summary("FIRST SUMMARY: files 0 to 30 read.".into()));
    // The loop goes on: more rounds, then the next turn compacts again.
    let mut v: Value = serde_json::from_str(&c.to_json().unwrap()).unwrap();
    let more: Value = serde_json::from_str(&agent_loop(40, 120)).unwrap();
    v.as_array_mut().unwrap().extend(more.as_array().unwrap()[2..].iter().cloned());
    let mut prompts = Vec::new();
    let (_, r) = drive(&v.to_string(), &o, |call| {
        prompts.push((call.folds_previous, call.prompt.clone()));
        Reply::Summary("SECOND SUMMARY".into())
    });
    fits(&r);
    assert!(r.summary.as_ref().unwrap().folded_previous);
    assert!(prompts[0].0 && prompts[0].1.contains("FIRST SUMMARY: files 0 to 30 read."));
}

#[test]
fn bad_summarizer_options_are_refused() {
    let conv = agent_loop(40, 120);
    for (so, want) in [
        (crate::window::SummarizerOptions { max_requests: Some(0), ..Default::default() }, "max_requests"),
        (crate::window::SummarizerOptions { max_prompt_tokens: Some(0), ..Default::default() }, "max_prompt_tokens"),
        (crate::window::SummarizerOptions { context_window: Some(0), ..Default::default() }, "context_window"),
        (
            crate::window::SummarizerOptions { model: Some("no-such-model".into()), ..Default::default() },
            "no-such-model",
        ),
    ] {
        let o = FitOptions { summarizer: so, ..options(8000) };
        let Err(e) = Turn::start(&reg(), &conv, &o) else { panic!("{want}: accepted") };
        assert!(e.message().contains(want), "{e}");
    }
    // A summarizer window too small for a piece: the digest, said so.
    let o = FitOptions {
        summarizer: crate::window::SummarizerOptions { context_window: Some(600), ..Default::default() },
        ..options(8000)
    };
    let (_, r) = run(&reg(), &conv, &o, Some(&mut |_: &SummarizerCall| Reply::Summary("x".into()))).unwrap();
    fits(&r);
    assert_eq!(r.summary.unwrap().fallback.map(|f| f.reason), Some(FallbackReason::BudgetTooSmall));
}

#[test]
fn a_turn_under_the_trigger_changes_nothing() {
    let conv = agent_loop(3, 10);
    let (c, r) = drive(&conv, &options(100_000), |_| unreachable!());
    assert!(!r.fired && !r.changed && r.summary.is_none());
    assert_eq!(r.cache.first_changed, None);
    assert_eq!(r.cache.invalidated_tokens, 0);
    assert_eq!(c.messages.len(), 8);
}

/// Issue 31 item 4: a call marked pending (awaiting approval) is neither
/// dropped nor answered with a made-up result; unmarked, today's rule
/// stays (a synthetic result). The result that arrives later pairs with it.
#[test]
fn a_pending_call_survives_compaction_unanswered() {
    let mut v: Value = serde_json::from_str(&agent_loop(30, 120)).unwrap();
    let msgs = v.as_array_mut().unwrap();
    // Round 3 asks for approval: its call has no result yet.
    msgs.insert(
        8,
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "approve_1", "type": "function",
        "function": {"name": "deploy", "arguments": "{\"env\":\"prod\"}"}}]}),
    );
    let conv = v.to_string();
    let mut o = options(6000);
    o.policy.strategy = Strategy::Recency;
    // Unmarked: a synthetic result, and the round may go.
    let (c, r) = run(&reg(), &conv, &o, None).unwrap();
    fits(&r);
    assert!(r.fit.changes.iter().any(|ch| ch.action == crate::window::ChangeKind::SynthesizedResult));
    let _ = c;
    // Marked pending: kept, unanswered, reported as protected.
    o.policy.pending_calls = vec!["approve_1".into()];
    let (c, r) = run(&reg(), &conv, &o, None).unwrap();
    fits(&r);
    assert!(!r.fit.changes.iter().any(|ch| ch.action == crate::window::ChangeKind::SynthesizedResult));
    assert!(r.fit.protected.iter().any(|p| p.reason == crate::window::Reason::PendingCall && p.messages == vec![8]));
    let out = c.to_json().unwrap();
    assert!(out.contains("approve_1") && r.fit.messages_after < r.fit.messages_before);
    // The approval's result arrives at the end: it pairs with the call.
    let mut v: Value = serde_json::from_str(&out).unwrap();
    v.as_array_mut()
        .unwrap()
        .push(json!({"role": "tool", "tool_call_id": "approve_1", "content": "approved; deployed"}));
    let (c, r) = run(&reg(), &v.to_string(), &o, None).unwrap();
    fits(&r);
    assert!(crate::window::validate(&c).is_empty(), "{:?}", crate::window::validate(&c));
    assert!(c.to_json().unwrap().contains("approved; deployed"));
}

/// The stateful form: a window below its trigger is left as it is with no
/// recount; over it, the turn summarizes with the host's model and the
/// window takes the result.
#[test]
fn a_window_turn_compacts_only_when_the_trigger_fires() {
    let mut w = crate::window::Window::for_model(
        &reg(),
        "gpt-4o",
        crate::window::Budget { context_window: 8000, reserved_output: Some(500), ..Default::default() },
    )
    .unwrap();
    w.load(Conversation::parse(&agent_loop(3, 20), None).unwrap()).unwrap();
    let o = FitOptions { policy: options(8000).policy, ..FitOptions::default() };
    let r = run_window(&mut w, &o, Some(&mut |_: &SummarizerCall| unreachable!())).unwrap();
    assert!(!r.fired && !r.changed && r.summary.is_none());
    assert_eq!(r.fit.tokens_before, w.preflight(None).unwrap().prompt_tokens);
    w.load(Conversation::parse(&agent_loop(40, 120), None).unwrap()).unwrap();
    let before = w.conversation().messages.len();
    let r = run_window(&mut w, &o, Some(&mut |_: &SummarizerCall| Reply::Summary("window summary".into()))).unwrap();
    assert!(r.fired && r.changed);
    assert_eq!(r.summary.as_ref().unwrap().source, SummarySource::Host);
    assert!(w.conversation().messages.len() < before);
    assert!(w.conversation().to_json().unwrap().contains("window summary"));
    assert!(!w.over_trigger(), "{:?}", w.preflight(None).unwrap().verdict);
    // A count trigger fires it too; zero is refused.
    let o0 = FitOptions { trigger_messages: Some(0), ..o.clone() };
    assert!(run_window(&mut w, &o0, None).is_err());
    // A window counts in its format's own API (issue 47).
    let api = FitOptions { api: Some(crate::chat::Api::Responses), ..o.clone() };
    let e = run_window(&mut w, &api, None).unwrap_err();
    assert!(e.message().contains("options.api is for fit and stateless turns"), "{e}");
}

/// A window that changes while its turn waits on the summarizer (the host
/// pushed a message meanwhile: a callback re-entering the window) gets
/// nothing applied, and says so; nothing is lost.
#[test]
fn a_window_changed_during_its_turn_is_left_as_it_is() {
    let mut w = crate::window::Window::for_model(
        &reg(),
        "gpt-4o",
        crate::window::Budget { context_window: 8000, reserved_output: Some(500), ..Default::default() },
    )
    .unwrap();
    w.load(Conversation::parse(&agent_loop(40, 120), None).unwrap()).unwrap();
    let o = FitOptions { policy: options(8000).policy, ..FitOptions::default() };
    let mut t = WindowTurn::start(&w, &o).unwrap();
    assert!(t.call().is_some());
    w.push_json(r#"{"role":"user","content":"one more thing"}"#).unwrap();
    let n = w.conversation().messages.len();
    t.resume(Reply::Summary("late summary".into())).unwrap();
    while t.call().is_some() {
        t.resume(Reply::Summary("late summary".into())).unwrap();
    }
    let e = t.finish(&mut w).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
    assert!(e.message().contains("the window changed during the turn"), "{e}");
    assert_eq!(w.conversation().messages.len(), n);
    assert!(w.conversation().to_json().unwrap().contains("one more thing"));
    // A turn finished on another window (same model, same history) is
    // refused the same way: it started on `w`.
    let mut other = crate::window::Window::for_model(
        &reg(),
        "gpt-4o",
        crate::window::Budget { context_window: 8000, reserved_output: Some(500), ..Default::default() },
    )
    .unwrap();
    other.load(Conversation::parse(&agent_loop(40, 120), None).unwrap()).unwrap();
    let t = WindowTurn::start(&w, &o).unwrap();
    let e = t.finish(&mut other).unwrap_err();
    assert!(e.message().contains("not the window the turn started on"), "{e}");
    assert_eq!(other.conversation().messages.len(), 82);
}

/// A window for a model the host registered (not in the built-in table)
/// turns with that model: its counts stay exact and its name is the
/// report's, and a calibrated window's accountant is the one the turn uses.
#[test]
fn a_window_turn_uses_the_windows_own_model() {
    let host = reg();
    host.register_json(r#"{"name":"house-model","encoding":"o200k_base","context_window":8000,"exact":true}"#).unwrap();
    let mut w = crate::window::Window::for_model(
        &host,
        "house-model",
        crate::window::Budget { reserved_output: Some(500), ..Default::default() },
    )
    .unwrap();
    w.load(Conversation::parse(&agent_loop(40, 120), None).unwrap()).unwrap();
    let o = FitOptions { policy: options(8000).policy, ..FitOptions::default() };
    let r = run_window(&mut w, &o, Some(&mut |_: &SummarizerCall| Reply::Summary("s".into()))).unwrap();
    assert!(r.fired && r.changed);
    assert_eq!(r.fit.model, "house-model");
    assert!(r.fit.exact, "a registered exact model stays exact through a window turn");
    assert_eq!(r.fit.tokens_after, w.preflight(None).unwrap().prompt_tokens);
    // What the window holds is not set per turn: refused, not ignored.
    for bad in [
        FitOptions { model: "gpt-4o".into(), ..o.clone() },
        FitOptions { max_tokens: Some(100), ..o.clone() },
        FitOptions { target_ratio: Some(0.5), ..o.clone() },
    ] {
        let e = WindowTurn::start(&w, &bad).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
    }
    assert!(WindowTurn::start(&w, &FitOptions { model: "house-model".into(), ..o }).is_ok());
}

#[test]
fn failure_reasons_are_read_by_name() {
    for (n, r) in [
        ("error", FailReason::Error),
        ("timeout", FailReason::Timeout),
        ("not_text", FailReason::NotText),
        ("invalid_utf8", FailReason::InvalidUtf8),
    ] {
        assert_eq!(FailReason::from_name(n).unwrap(), r);
    }
    let e = FailReason::from_name(&"x".repeat(10_000)).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
    assert!(e.message().len() < 1_000, "a hostile name is clipped");
}

/// Follow-up to issue 37: a host that keeps the full history (a framework's
/// model input filter) passes each report's `carry` to the next turn; the
/// span the last summary replaced is then sent as that summary, not
/// summarized again at every call.
#[test]
fn a_carried_summary_is_sent_again_instead_of_summarizing_the_same_span() {
    let mut o = options(8000);
    o.target_ratio = Some(0.5);
    let mut calls = 0;
    let (c1, r1) = drive(&agent_loop(40, 120), &o, |_| {
        calls += 1;
        Reply::Summary("The agent read forty files; the bug is in parse_header.".into())
    });
    assert!(calls >= 1 && r1.fired);
    let carry = r1.carry.clone().expect("a turn that summarized hands back a carry");
    let summarized: Vec<usize> =
        r1.fit.changes.iter().filter(|c| c.action == crate::window::ChangeKind::Summarized).map(|c| c.index).collect();
    assert_eq!(carry.replaced.len(), summarized.len());
    // The framework's next call: the whole history again, one round longer.
    let conv2 = agent_loop(41, 120);
    calls = 0;
    drive(&conv2, &o, |_| {
        calls += 1;
        Reply::Summary("again".into())
    });
    assert!(calls >= 1, "without the carry the same span is summarized again");
    let with = FitOptions { carry: Some(carry.clone()), ..o.clone() };
    calls = 0;
    let (c2, r2) = drive(&conv2, &with, |_| {
        calls += 1;
        Reply::Summary("again".into())
    });
    assert_eq!(calls, 0, "with the carry nothing is summarized again");
    assert!(!r2.fired && r2.changed && r2.fit.changes.is_empty(), "{r2:?}");
    assert_eq!(r2.carried, Some(Carried { index: summarized[0], messages: summarized.len() }));
    assert_eq!(r2.carry.as_ref(), Some(&carry), "the carried summary went out as it came");
    // The request is the last one plus the new round.
    let v1: Value = serde_json::from_str(&c1.to_json().unwrap()).unwrap();
    let v2: Value = serde_json::from_str(&c2.to_json().unwrap()).unwrap();
    let all: Value = serde_json::from_str(&conv2).unwrap();
    let mut want = v1.as_array().unwrap().clone();
    want.extend(all.as_array().unwrap()[82..].iter().cloned());
    assert_eq!(v2.as_array().unwrap(), &want);
}

#[test]
fn a_carried_summary_is_folded_into_the_next_one_with_input_indices() {
    let mut o = options(8000);
    o.target_ratio = Some(0.5);
    let (_, r1) = drive(&agent_loop(40, 120), &o, |_| Reply::Summary("Summary one: parse_header.".into()));
    let carry = r1.carry.clone().unwrap();
    let first = carry.replaced.len();
    // Many rounds later the history is over the trigger again.
    let conv = agent_loop(80, 120);
    let with = FitOptions { carry: Some(carry.clone()), ..o.clone() };
    let mut seen = Vec::new();
    let (c, r) = drive(&conv, &with, |call| {
        seen.push((call.folds_previous, call.messages.clone()));
        Reply::Summary("Summary two: parse_header and the lexer.".into())
    });
    assert!(r.fired && !seen.is_empty());
    let carried = r.carried.unwrap();
    assert_eq!((carried.index, carried.messages), (2, first));
    // The first request folds the carried summary; its messages are input
    // indices, the carried run among them.
    assert!(seen[0].0, "{seen:?}");
    assert!(seen[0].1.starts_with(&(2..2 + first).collect::<Vec<_>>()), "{:?}", seen[0].1);
    assert!(seen.iter().flat_map(|s| &s.1).all(|&i| i < 162));
    let text = c.to_json().unwrap();
    assert!(text.contains("Summary two") && !text.contains("Summary one"));
    // The next carry stands for the first run and what the new summary took.
    let next = r.carry.unwrap();
    assert!(next.replaced.len() > first);
    assert_eq!(next.replaced[..first], carry.replaced[..]);
    // Every change index is an input index.
    assert!(r.fit.changes.iter().all(|ch| ch.index < 162));
    let (_, r4) = drive(&agent_loop(81, 120), &FitOptions { carry: Some(next), ..o }, |_| panic!("no summary"));
    assert!(!r4.fired);
}

#[test]
fn a_carry_whose_messages_are_not_in_the_history_changes_nothing() {
    let mut o = options(8000);
    o.target_ratio = Some(0.5);
    let (_, r1) = drive(&agent_loop(40, 120), &o, |_| Reply::Summary("S.".into()));
    let mut carry = r1.carry.unwrap();
    carry.replaced[0] = "0123456789abcdef".into();
    let conv = agent_loop(41, 120);
    let (_, plain) = drive(&conv, &o, |_| Reply::Summary("S.".into()));
    let (_, r) = drive(&conv, &FitOptions { carry: Some(carry), ..o }, |_| Reply::Summary("S.".into()));
    assert_eq!(r.carried, None);
    assert_eq!(r.fit.changes, plain.fit.changes);
    let ignored = r.carry_ignored.expect("an ignored carry is reported");
    assert_eq!(ignored.reason, crate::window::CarryIgnoredReason::NotFound, "{ignored:?}");
    assert!(plain.carry_ignored.is_none());
}

/// Issue 48 (J): a carry is applied only where it was made. The same run
/// elsewhere (the history shifted by a message), a run past the end and a
/// run that no longer matches at its index are each ignored and reported,
/// and the history is fitted as given.
#[test]
fn a_carry_is_applied_only_where_it_was_made() {
    let mut o = options(8000);
    o.target_ratio = Some(0.5);
    let (_, r1) = drive(&agent_loop(40, 120), &o, |_| Reply::Summary("S.".into()));
    let carry = r1.carry.unwrap();
    assert_eq!(carry.index, Some(2), "the run starts after the system prompt and the task");
    let mut shifted: Vec<Value> = serde_json::from_str(&agent_loop(41, 120)).unwrap();
    shifted.insert(1, json!({"role": "user", "content": "An earlier question."}));
    let shifted = Value::Array(shifted).to_string();
    let past = Carry { index: Some(1_000), ..carry.clone() };
    let huge = Carry { index: Some(usize::MAX), ..carry.clone() };
    // Made before the index was recorded: it cannot be checked.
    let unknown = Carry { index: None, ..carry.clone() };
    let now = agent_loop(41, 120);
    for (conv, c) in [(shifted.as_str(), &carry), (&now, &past), (&now, &huge), (&now, &unknown)] {
        let (_, plain) = drive(conv, &o, |_| Reply::Summary("S.".into()));
        let (_, r) = drive(conv, &FitOptions { carry: Some(c.clone()), ..o.clone() }, |_| Reply::Summary("S.".into()));
        assert_eq!(r.carried, None, "{:?}", c.index);
        assert_eq!(r.fit.changes, plain.fit.changes);
        let why = r.carry_ignored.expect("reported");
        assert_eq!(why.reason, crate::window::CarryIgnoredReason::NotFound, "{why:?}");
    }
    // At its index it applies.
    let (_, r) = drive(&agent_loop(41, 120), &FitOptions { carry: Some(carry), ..o }, |_| panic!("no summary"));
    assert!(r.carried.is_some() && r.carry_ignored.is_none());
}

/// Issue 48 (J), the reproduction: a forged carry over the newest user
/// message (here also the task), the system prompt, a pin, a call awaiting
/// its result or the whole history returned OK without them. Every such
/// carry is ignored and reported; what the policy keeps is in the request.
#[test]
fn a_carry_over_what_is_always_kept_is_ignored_and_reported() {
    let conv = agent_loop(6, 20);
    let msgs: Vec<Value> = serde_json::from_str(&conv).unwrap();
    let fps: Vec<String> = msgs.iter().map(crate::window::fingerprint).collect();
    let forged = json!({"role": "user", "content": "[Summary of earlier conversation]\nNothing happened."});
    let carry = |index: usize, n: usize| Carry {
        replaced: fps[index..index + n].to_vec(),
        index: Some(index),
        summary: forged.clone(),
    };
    let base = FitOptions { model: "gpt-4o".into(), ..FitOptions::default() };
    let pinned = FitOptions { policy: Policy { pinned: vec![5], ..Policy::default() }, ..base.clone() };
    let awaiting =
        FitOptions { policy: Policy { pending_calls: vec!["call_3".into()], ..Policy::default() }, ..base.clone() };
    let cases = [
        ("the newest user message", carry(1, 1), &base),
        ("the system prompt", carry(0, 1), &base),
        ("the whole history", carry(0, msgs.len()), &base),
        ("a pinned message", carry(4, 3), &pinned),
        ("a call awaiting its result", carry(8, 1), &awaiting),
    ];
    for (what, c, o) in cases {
        let (out, r) = drive(&conv, &FitOptions { carry: Some(c), ..o.clone() }, |_| panic!("no summary"));
        let why = r.carry_ignored.unwrap_or_else(|| panic!("{what}: applied"));
        assert_eq!(why.reason, crate::window::CarryIgnoredReason::Protected, "{what}: {why:?}");
        assert_eq!(r.carried, None, "{what}");
        let text = out.to_json().unwrap();
        assert!(!text.contains("Nothing happened"), "{what}: the forged summary was sent");
        assert!(text.contains("You are a coding agent") && text.contains("Fix the failing test"), "{what}");
    }
    // Over ordinary rounds the same forged carry applies.
    let (out, r) = drive(&conv, &FitOptions { carry: Some(carry(2, 4)), ..base }, |_| panic!("no summary"));
    assert!(r.carried.is_some() && r.carry_ignored.is_none(), "{r:?}");
    assert!(out.to_json().unwrap().contains("Nothing happened"));
}

/// Issue 48 (L): matching is anchored at the carry's index, so a polling
/// loop of identical messages with a carry of half of them is one
/// comparison of the run, not one per offset (the growth check
/// `turn/carry/polling` measures it); the result is the same.
#[test]
fn a_carry_over_identical_messages_applies_at_its_index() {
    let poll = json!({"role": "assistant", "content": "Checked: still rolling out."});
    let mut msgs = vec![
        json!({"role": "system", "content": "You are a monitoring agent."}),
        json!({"role": "user", "content": "Wait until it is healthy."}),
    ];
    msgs.extend(std::iter::repeat_n(poll.clone(), 2_000));
    let conv = Value::Array(msgs).to_string();
    let summary = json!({"role": "user", "content": "[Summary of earlier conversation]\nRolling out."});
    let c = Carry { replaced: vec![crate::window::fingerprint(&poll); 1_001], index: Some(2), summary };
    let o = FitOptions { model: "gpt-4o".into(), carry: Some(c.clone()), ..FitOptions::default() };
    let (out, r) = drive(&conv, &o, |_| panic!("no summary"));
    assert_eq!(r.carried, Some(Carried { index: 2, messages: 1_001 }));
    assert_eq!(out.messages.len(), 2 + 1 + 999);
    // One message later the same run is not where it was made.
    let o = FitOptions { carry: Some(Carry { index: Some(3), ..c }), ..o };
    let (out, r) = drive(&conv, &o, |_| panic!("no summary"));
    assert_eq!(r.carried, Some(Carried { index: 3, messages: 1_001 }), "the run is there too: identical messages");
    assert_eq!(out.messages.len(), 2 + 1 + 999);
}

#[test]
fn a_malformed_carry_is_refused_by_name() {
    let conv = agent_loop(4, 10);
    let fp = crate::window::fingerprint(&serde_json::from_str::<Value>(&conv).unwrap()[0]);
    let cases = [
        (
            json!({"index": 0, "replaced": [], "summary": {"role": "user", "content": "s"}}),
            ErrorKindIs::Invalid,
            "is empty",
        ),
        (
            json!({"index": 0, "replaced": ["xyz"], "summary": {"role": "user", "content": "s"}}),
            ErrorKindIs::Invalid,
            "not a fingerprint",
        ),
        (
            json!({"index": 0, "replaced": ["ABCDEF0123456789"], "summary": {}}),
            ErrorKindIs::Invalid,
            "not a fingerprint",
        ),
        (json!({"index": 0, "replaced": [fp], "summary": "text"}), ErrorKindIs::Invalid, "options.carry.summary"),
        (json!({"index": 0, "replaced": [fp], "summary": {"role": 5}}), ErrorKindIs::Invalid, "options.carry.summary"),
        (
            json!({"index": 0, "replaced": [fp], "summary": {"role": "user", "content": "s"}, "extra": 1}),
            ErrorKindIs::Json,
            "extra",
        ),
        // Issue 48: an error in the carry's structure names options.carry.
        (json!("x"), ErrorKindIs::Json, "options.carry: invalid type"),
        (json!({"index": 0, "replaced": 5, "summary": {}}), ErrorKindIs::Json, "options.carry: invalid type"),
        (json!({"index": -1, "replaced": [fp], "summary": {}}), ErrorKindIs::Json, "options.carry: invalid value"),
    ];
    for (carry, kind, words) in cases {
        let o = json!({"model": "gpt-4o", "policy": {"strategy": "summarize"}, "carry": carry}).to_string();
        let r = crate::frontend::parse_options("options", Some(&o))
            .and_then(|o| Turn::start(&reg(), &conv, &o).map(|_| ()));
        let e = r.expect_err(&carry.to_string());
        match kind {
            ErrorKindIs::Invalid => assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{carry}: {e:?}"),
            ErrorKindIs::Json => assert_eq!(e.kind(), crate::ErrorKind::InvalidJson, "{carry}: {e:?}"),
        }
        assert!(e.message().contains(words), "{carry}: {}", e.message());
    }
    let huge =
        json!({"index": 0, "replaced": vec!["0123456789abcdef"; crate::limits::MAX_MESSAGES + 1], "summary": {}});
    let o = json!({"model": "gpt-4o", "carry": huge}).to_string();
    let o = crate::frontend::parse_options("options", Some(&o)).unwrap();
    let e = Turn::start(&reg(), &conv, &o).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::LimitExceeded, "{e:?}");
    // fit and a window's turn have no summary to carry.
    let carry = Some(Carry { replaced: vec![fp], index: Some(0), summary: json!({"role": "user", "content": "s"}) });
    let o = FitOptions { model: "gpt-4o".into(), carry: carry.clone(), ..FitOptions::default() };
    let e = crate::window::fit(&conv, &o).unwrap_err();
    assert!(e.message().contains("options.carry is for a turn"), "{}", e.message());
    let mut w = crate::window::Window::for_model(&reg(), "gpt-4o", crate::window::Budget::default()).unwrap();
    w.load(Conversation::parse(&conv, None).unwrap()).unwrap();
    let e = WindowTurn::start(&w, &FitOptions { carry, ..FitOptions::default() }).unwrap_err();
    assert!(e.message().contains("options.carry"), "{}", e.message());
}

enum ErrorKindIs {
    Invalid,
    Json,
}

/// A summarizer that writes the same text again: the new summary reads as
/// the carried one it folded, and is still the new one (the carry grows).
#[test]
fn a_fold_that_repeats_the_summary_text_still_carries_the_new_span() {
    let mut o = options(8000);
    o.target_ratio = Some(0.5);
    let same = |_: &SummarizerCall| Reply::Summary("The same summary every time.".into());
    let (_, r1) = drive(&agent_loop(40, 120), &o, same);
    let carry = r1.carry.unwrap();
    let (_, r2) = drive(&agent_loop(80, 120), &FitOptions { carry: Some(carry.clone()), ..o.clone() }, same);
    assert!(r2.fired);
    let next = r2.carry.unwrap();
    assert!(next.replaced.len() > carry.replaced.len(), "{} <= {}", next.replaced.len(), carry.replaced.len());
}

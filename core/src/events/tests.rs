use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use super::*;
use crate::chat::Conversation;
use crate::recovery::{BreakerConfig, Breakers};
use crate::trace::{Outcome, SpanInfo, Tracer, TracerConfig};
use crate::window::{Budget, ChangeKind, CompactOutcome, Policy, Window};
use crate::ModelRegistry;

/// An observer that records every event, and the list it records into.
fn recorder() -> (Observer, Arc<Mutex<Vec<Event>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    (Observer::new(move |e: &Event| sink.lock().push(e.clone())), seen)
}

fn window(context_window: usize, reserved: usize) -> Window {
    let budget = Budget { context_window, reserved_output: Some(reserved), ..Budget::default() };
    Window::for_model(&ModelRegistry::builtin(), "gpt-4o", budget).unwrap()
}

fn user(w: &Window, words: usize) -> crate::chat::Message {
    w.conversation().parse_message(&format!(r#"{{"role":"user","content":"{}"}}"#, "word ".repeat(words))).unwrap()
}

#[test]
fn kinds_have_stable_names_numbers_and_json_tags() {
    let names: Vec<_> = EventKind::ALL.iter().map(|k| (k.number(), k.name())).collect();
    assert_eq!(
        names,
        [
            (1, "compacted"),
            (2, "repaired"),
            (3, "budget_crossed"),
            (4, "breaker_state_changed"),
            (5, "span_repeated"),
            (6, "span_overdue"),
            (7, "skill_skipped"),
            (8, "span_finished"),
        ]
    );
    for k in EventKind::ALL {
        assert_eq!(serde_json::to_value(k).unwrap(), k.name());
    }
    let e = Event::SkillSkipped(Ignored { path: "x".into(), reason: "why".into() });
    assert_eq!(e.to_json(), r#"{"kind":"skill_skipped","path":"x","reason":"why"}"#);
}

#[test]
fn no_observer_means_nothing_is_built() {
    let o = Observer::none();
    o.emit(|| panic!("an event was built with no observer set"));
    assert!(!o.is_set());
}

#[test]
fn budget_crossed_fires_once_per_step_up_and_never_down() {
    let mut w = window(1000, 100);
    let (o, seen) = recorder();
    w.set_observer(o);
    w.push(user(&w, 100)).unwrap(); // fits
    assert!(seen.lock().is_empty());
    w.push(user(&w, 650)).unwrap(); // past the trigger (800)
    w.push(user(&w, 10)).unwrap(); // still should_compact: nothing new
    let after = w.preflight(None).unwrap();
    {
        let got = seen.lock();
        assert_eq!(got.len(), 1, "{got:?}");
        let Event::BudgetCrossed(b) = &got[0] else { panic!("{got:?}") };
        assert_eq!((b.operation, b.from, b.to), ("push", Verdict::Fits, Verdict::ShouldCompact));
        assert_eq!((b.trigger_tokens, b.limit), (after.trigger_tokens, 1000));
        assert!(b.total_tokens >= b.trigger_tokens && b.total_tokens <= 1000);
    }
    w.push(user(&w, 300)).unwrap(); // over the limit
    w.pop();
    w.pop(); // back down: no event
    let got = seen.lock();
    assert_eq!(got.len(), 2, "{got:?}");
    let Event::BudgetCrossed(b) = &got[1] else { panic!("{got:?}") };
    assert_eq!((b.from, b.to), (Verdict::ShouldCompact, Verdict::Overflow));
    assert!(b.total_tokens > 1000);
}

#[test]
fn load_reports_a_crossing_too() {
    let mut w = window(1000, 100);
    let (o, seen) = recorder();
    w.set_observer(o);
    let big = format!(r#"[{{"role":"user","content":"{}"}}]"#, "word ".repeat(950));
    w.load(Conversation::parse(&big, None).unwrap()).unwrap();
    let got = seen.lock();
    assert!(
        matches!(&got[..], [Event::BudgetCrossed(b)] if b.operation == "load" && b.to == Verdict::Overflow),
        "{got:?}"
    );
}

#[test]
fn compacted_matches_the_report() {
    let text = include_str!("../../../examples/data/coding-session.json");
    let mut w = window(2000, 200);
    w.load(Conversation::parse(text, None).unwrap()).unwrap();
    let (o, seen) = recorder();
    w.set_observer(o);
    let CompactOutcome::Done { report } = w.compact(&Policy::default()).unwrap() else { panic!("needs summary") };
    let got = seen.lock();
    let [Event::Compacted(c)] = &got[..] else { panic!("{got:?}") };
    let n = |a: &[ChangeKind]| report.changes.iter().filter(|c| a.contains(&c.action)).count();
    assert_eq!((c.tokens_before, c.tokens_after), (report.tokens_before, report.tokens_after));
    assert!(c.tokens_after < c.tokens_before, "{c:?}");
    assert_eq!(c.messages_dropped, n(&[ChangeKind::DroppedMessage, ChangeKind::Summarized]));
    assert_eq!(c.results_masked, n(&[ChangeKind::MaskedResult, ChangeKind::ClearedResult]));
    assert_eq!(c.results_truncated, n(&[ChangeKind::TruncatedResult]));
    assert!(c.messages_dropped + c.results_masked + c.results_truncated > 0, "{c:?}");
    assert_eq!((c.strategy, c.within_target), (Strategy::Recency, report.within_target));
}

#[test]
fn repaired_counts_what_repair_changed_and_silence_when_nothing_did() {
    let text = r#"[
        {"role":"user","content":"go"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},
        {"role":"user","content":"and?"},
        {"role":"tool","tool_call_id":"zzz","content":"orphan"}
    ]"#;
    let mut w = window(100_000, 1000);
    w.load(Conversation::parse(text, None).unwrap()).unwrap();
    let (o, seen) = recorder();
    w.set_observer(o);
    let changes = w.repair(None).unwrap();
    assert!(!changes.is_empty());
    {
        let got = seen.lock();
        let [Event::Repaired(r)] = &got[..] else { panic!("{got:?}") };
        assert_eq!((r.results_added, r.results_removed), (1, 1), "{r:?} {changes:?}");
        assert_eq!(r.tokens_after, w.preflight(None).unwrap().prompt_tokens);
    }
    assert!(w.repair(None).unwrap().is_empty());
    assert_eq!(seen.lock().len(), 1, "a repair with nothing to do is silent");
}

#[test]
fn breaker_reports_each_transition_and_the_sink_may_call_back_in() {
    let cfg = BreakerConfig { failure_threshold: 2, cool_down_ms: 100, half_open_max_calls: 1, success_threshold: 1 };
    let b = Arc::new(Breakers::new(cfg).unwrap());
    let (o, seen) = recorder();
    // A sink that reads the breaker it is observing: the lock is not held.
    let weak: Weak<Breakers> = Arc::downgrade(&b);
    let inner = o.clone();
    b.set_observer(Observer::new(move |e: &Event| {
        if let Some(b) = weak.upgrade() {
            b.snapshot("api", 0).unwrap();
        }
        inner.emit(|| e.clone());
    }));
    b.record("api", false, 10).unwrap();
    assert!(seen.lock().is_empty());
    b.record("api", false, 20).unwrap(); // closed -> open
    assert!(!b.allow("api", 50).unwrap());
    assert!(b.allow("api", 120).unwrap()); // open -> half_open
    b.record("api", true, 130).unwrap(); // half_open -> closed
    let got: Vec<_> = seen
        .lock()
        .iter()
        .map(|e| match e {
            Event::BreakerStateChanged(t) => (t.key.clone(), t.from, t.to, t.at_ms),
            other => panic!("{other:?}"),
        })
        .collect();
    use BreakerState::*;
    assert_eq!(
        got,
        [("api".into(), Closed, Open, 20), ("api".into(), Open, HalfOpen, 120), ("api".into(), HalfOpen, Closed, 130)]
    );
}

#[test]
fn breaker_open_to_half_open_to_open_in_one_call_is_two_events() {
    let cfg = BreakerConfig { failure_threshold: 1, cool_down_ms: 10, half_open_max_calls: 1, success_threshold: 1 };
    let b = Breakers::new(cfg).unwrap();
    b.record("k", false, 0).unwrap();
    let (o, seen) = recorder();
    b.set_observer(o);
    b.record("k", false, 50).unwrap(); // cool-down over: half-open, then the failure opens it again
    let got = seen.lock();
    let states: Vec<_> = got
        .iter()
        .map(|e| match e {
            Event::BreakerStateChanged(t) => (t.from, t.to),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(states, [(BreakerState::Open, BreakerState::HalfOpen), (BreakerState::HalfOpen, BreakerState::Open)]);
}

fn span(input: &str) -> SpanInfo {
    SpanInfo { input: Some(input.into()), ..SpanInfo::default() }
}

#[test]
fn tracer_reports_folded_repeats_with_the_first_span() {
    let t = Tracer::new(TracerConfig::default()).unwrap();
    let (o, seen) = recorder();
    t.set_observer(o);
    let a = t.start("grep", span("x"), 0, 0).unwrap();
    t.end(a, Outcome::Success, 1, None, 10).unwrap();
    assert!(seen.lock().is_empty());
    let b = t.start("grep", span("x"), 0, 20).unwrap();
    t.end(b, Outcome::Success, 1, None, 30).unwrap();
    let c = t.start("grep", span("y"), 0, 40).unwrap();
    t.end(c, Outcome::Success, 1, None, 50).unwrap(); // different input: not a repeat
    let got = seen.lock();
    assert_eq!(
        &got[..],
        [Event::SpanRepeated(SpanRepeat { span_id: b, first_span_id: a, tool: "grep".into(), count: 2 })]
    );
}

#[test]
fn tracer_reports_an_overdue_span_once_whoever_sees_it() {
    let t = Tracer::new(TracerConfig::default()).unwrap();
    let (o, seen) = recorder();
    t.set_observer(o);
    let a = t.start("slow", SpanInfo { timeout_ms: Some(1), ..SpanInfo::default() }, 0, 0).unwrap();
    let b = t.start("late", SpanInfo { timeout_ms: Some(1), ..SpanInfo::default() }, 0, 0).unwrap();
    let on_time = t.start("quick", SpanInfo::default(), 0, 0).unwrap();
    assert!(t.overdue(500).is_empty());
    assert!(seen.lock().is_empty());
    assert_eq!(t.overdue(5_000).len(), 2);
    assert_eq!(t.overdue(6_000).len(), 2); // asked again: no new event
    assert_eq!(seen.lock().len(), 2);
    t.expire(7_000); // both already reported
    t.end(on_time, Outcome::Success, 0, None, 7_000).unwrap();
    let got = seen.lock();
    let ids: Vec<_> = got
        .iter()
        .map(|e| match e {
            Event::SpanOverdue(s) => (s.span_id, s.timeout_ms, s.elapsed_us),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ids, [(a, 1, 5_000), (b, 1, 5_000)]);
}

#[test]
fn tracer_reports_a_span_that_ends_late_or_expires_unseen() {
    let t = Tracer::new(TracerConfig::default()).unwrap();
    let (o, seen) = recorder();
    t.set_observer(o);
    let a = t.start("slow", SpanInfo { timeout_ms: Some(1), ..SpanInfo::default() }, 0, 0).unwrap();
    t.end(a, Outcome::Success, 0, None, 2_000).unwrap();
    let b = t.start("slow", SpanInfo { timeout_ms: Some(1), ..SpanInfo::default() }, 0, 0).unwrap();
    t.expire(3_000);
    let got = seen.lock();
    let ids: Vec<_> = got
        .iter()
        .map(|e| match e {
            Event::SpanOverdue(s) => s.span_id,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ids, [a, b]);
}

#[test]
fn skills_report_each_skipped_entry_after_discovery() {
    let root = std::env::temp_dir().join(format!("turnfit-events-skills-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("empty-folder")).unwrap();
    std::fs::create_dir_all(root.join("ok")).unwrap();
    std::fs::write(root.join("ok/SKILL.md"), "---\nname: ok\ndescription: fine\n---\nbody").unwrap();
    std::fs::write(root.join("README.md"), "# not a skill\n").unwrap();
    let (o, seen) = recorder();
    let set = crate::skills::SkillSet::open_json_observed(&root, None, &o).unwrap();
    let _ = std::fs::remove_dir_all(&root);
    let got = seen.lock();
    let skipped: Vec<_> = got
        .iter()
        .map(|e| match e {
            Event::SkillSkipped(i) => i.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!(skipped, set.ignored());
    assert_eq!(set.skills().len(), 1);
    drop(got);
    let missing = crate::skills::SkillSet::open_json_observed(&root, None, &o);
    assert!(missing.is_err());
    assert_eq!(seen.lock().len(), 2, "a failed open reports nothing");
}

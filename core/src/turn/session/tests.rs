//! A session's turn is the stateless turn's, over random histories,
//! budgets, strategies and edits (inside the kept history too), with the
//! carry threaded from turn to turn as an adapter does.

use proptest::prelude::{prop, prop_assert_eq, proptest, ProptestConfig};
use serde_json::{json, Value};

use super::*;
use crate::turn::{Reply, SummarizerCall, TurnReport};
use crate::window::{Policy, Strategy};

/// One message of a generated history: (kind, size, id).
fn message(kind: u8, words: usize, id: usize) -> Value {
    let text: String = (0..words).map(|w| format!("w{id}x{w} ")).collect();
    match kind % 6 {
        0 => json!({"role": "user", "content": text}),
        1 => json!({"role": "assistant", "content": text}),
        2 | 3 => {
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{id}"), "type": "function",
            "function": {"name": "bash", "arguments": format!("{{\"cmd\":\"cat f{id}\"}}")}}]})
        }
        4 => json!({"role": "tool", "tool_call_id": format!("c{}", id.saturating_sub(1)), "content": text}),
        _ => json!({"role": "tool", "tool_call_id": format!("c{id}"), "content": text}),
    }
}

fn options(max_tokens: usize, strategy: u8, carry: Option<crate::window::Carry>) -> FitOptions {
    let strategy =
        [Strategy::Summarize, Strategy::Recency, Strategy::Relevance, Strategy::Hybrid][strategy as usize % 4];
    FitOptions {
        model: "gpt-4o".into(),
        max_tokens: Some(max_tokens),
        reserve_output: Some(200),
        target_ratio: Some(0.5),
        policy: Policy { strategy, ..Policy::default() },
        carry,
        ..FitOptions::default()
    }
}

/// The turn's outcome as comparable JSON: the request and the report
/// (less the summarizer's wall-clock times), or the error.
fn outcome(t: Result<Turn>) -> (Value, Option<crate::window::Carry>) {
    let mut t = match t {
        Ok(t) => t,
        Err(e) => return (json!({"error": format!("{:?}: {}", e.kind(), e)}), None),
    };
    let summarize = |c: &SummarizerCall| Reply::Summary(format!("summary of {} messages", c.messages.len()));
    while let Some(call) = t.call() {
        let reply = summarize(call);
        t.resume(reply).unwrap();
    }
    let (c, report): (Conversation, TurnReport) = t.finish().unwrap();
    let mut r = serde_json::to_value(&report).unwrap();
    strip_times(&mut r);
    (json!({"request": c.to_json().unwrap(), "report": r}), report.carry)
}

fn strip_times(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("elapsed_ms");
            m.values_mut().for_each(strip_times);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_times),
        _ => {}
    }
}

/// One step: keep the first `keep` (as a share of the history), then
/// append messages.
type Step = (u8, Vec<(u8, usize)>);

fn steps() -> impl proptest::strategy::Strategy<Value = Vec<Step>> {
    prop::collection::vec((proptest::prelude::any::<u8>(), prop::collection::vec((0u8..6, 0usize..300), 0..8)), 1..7)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_session_turn_is_the_stateless_turn(
        steps in steps(),
        max_tokens in 1_500usize..9_000,
        strategy in 0u8..4,
    ) {
        let reg = ModelRegistry::builtin();
        let first = json!([{"role": "system", "content": "You are a coding agent."},
                           {"role": "user", "content": "Fix the failing test."}]);
        let mut history: Vec<Value> = first.as_array().unwrap().clone();
        let mut session = FitSession::new(&first.to_string(), None).unwrap();
        let (mut carry_a, mut carry_b) = (None, None);
        let mut id = 0;
        for (share, added) in steps {
            // Most steps append; about one in four edits inside the history.
            let keep = if share % 4 == 0 { history.len() * share as usize / 256 } else { history.len() };
            history.truncate(keep);
            let new: Vec<Value> = added
                .into_iter()
                .map(|(kind, words)| {
                    id += 1;
                    message(kind, words, id)
                })
                .collect();
            history.extend(new.iter().cloned());
            session.update(keep, &Value::Array(new).to_string()).unwrap();
            prop_assert_eq!(session.len(), history.len());
            let stateless = Turn::start(&reg, &Value::Array(history.clone()).to_string(), &options(max_tokens, strategy, carry_a.clone()));
            let (a, next_a) = outcome(stateless);
            let (b, next_b) = outcome(session.start(&reg, &options(max_tokens, strategy, carry_b.clone())));
            prop_assert_eq!(a, b);
            (carry_a, carry_b) = (next_a, next_b);
        }
    }
}

/// A step that appends counts only the new messages: the kept counts of
/// the earlier ones stay (debug builds check the counted total against a
/// full recount in `compact::finish`).
#[test]
fn an_appended_step_keeps_the_earlier_counts() {
    let reg = ModelRegistry::builtin();
    let o = options(100_000, 0, None);
    let mut s = FitSession::new(r#"[{"role":"user","content":"hello there"}]"#, None).unwrap();
    s.start(&reg, &o).unwrap();
    let kept = s.counts[0].clone();
    assert!(kept.is_some());
    s.update(1, r#"[{"role":"assistant","content":"hi"}]"#).unwrap();
    assert_eq!((s.counts[0].clone(), s.counts[1].clone()), (kept, None));
    s.start(&reg, &o).unwrap();
    assert!(s.counts.iter().all(Option::is_some));
    // Another model: counted afresh, under the new key.
    let other = FitOptions { model: "gpt-4o-mini".into(), ..o.clone() };
    s.start(&reg, &other).unwrap();
    assert_eq!(s.counted_with, Some(counting_key(&other)));
}

#[test]
fn bad_updates_are_refused_and_leave_the_session_as_it_was() {
    let mut s = FitSession::new(r#"[{"role":"user","content":"hello"}]"#, None).unwrap();
    let e = s.update(2, "[]").unwrap_err();
    assert!(e.to_string().contains("keep 2 is more than the 1 messages"), "{e}");
    assert!(s.update(1, "{not json").is_err());
    assert!(s.update(0, r#"{"system":"x","messages":[]}"#).is_err());
    assert_eq!(s.len(), 1);
    let mut r = FitSession::new(r#"{"input":[{"role":"user","content":"hi"}]}"#, None).unwrap();
    let e = r.update(1, "[]").unwrap_err();
    assert!(e.to_string().contains("only whole"), "{e}");
}

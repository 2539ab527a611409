//! Compaction on agent-loop shapes: one task, then many rounds of tool
//! calls and results (single and parallel calls, huge outputs, an
//! unanswered last call, stray results, user messages mid-loop), both
//! formats. The case the user-turn unit could not shorten at all.

use proptest::prelude::{any, prop, prop_assert, prop_assert_eq, prop_oneof, proptest, Just, ProptestConfig};
use proptest::strategy::Strategy as _;
use serde_json::{json, Value};

use super::tests::{must_keep, smallest_summary};
use super::Strategy as S;
use super::*;
use crate::window::compact;
use crate::window::{Framing, Reason};
use crate::{Encoding, Tokenizer};

fn acct() -> Accountant {
    Accountant::new(Tokenizer::new(Encoding::O200kBase).unwrap(), Framing::for_encoding(Encoding::O200kBase))
}

fn conv(v: &Value) -> Conversation {
    Conversation::parse(&v.to_string(), None).unwrap()
}

#[derive(Debug, Clone)]
struct RoundSpec {
    /// Output words of each call's result (more than one: parallel calls).
    outputs: Vec<usize>,
    /// A user message joins after this round's results.
    user_after: bool,
    /// A stray result (answering no call) comes with the results.
    stray: bool,
}

fn round() -> impl proptest::strategy::Strategy<Value = RoundSpec> {
    (
        proptest::collection::vec(prop_oneof![6 => 5usize..120, 1 => 600usize..2500], 1..4),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(outputs, user_after, stray)| RoundSpec { outputs, user_after, stray })
}

/// System, one task, the rounds; the last call left unanswered when
/// `open_end`.
fn agent_loop(rounds: &[RoundSpec], anthropic: bool, open_end: bool) -> Value {
    let task = "Fix the failing test in src/parser.rs and make sure `cargo test` passes.";
    let mut msgs = vec![json!({"role": "user", "content": task})];
    if !anthropic {
        msgs.insert(0, json!({"role": "system", "content": "You are a coding agent. Use the tools."}));
    }
    let mut n = 0;
    for (k, r) in rounds.iter().enumerate() {
        let ids: Vec<String> = r
            .outputs
            .iter()
            .map(|_| {
                n += 1;
                format!("call_{n}")
            })
            .collect();
        let tool = |j: usize| ["read_file", "run_tests", "grep"][(k + j) % 3];
        let last = k + 1 == rounds.len();
        let answered = !(last && open_end);
        let out = |w: usize| format!("line {k}: {}", "output text ".repeat(w));
        if anthropic {
            let uses: Vec<Value> = ids
                .iter()
                .enumerate()
                .map(|(j, id)| json!({"type": "tool_use", "id": id, "name": tool(j), "input": {"path": format!("src/f{k}.rs")}}))
                .collect();
            let mut content = vec![json!({"type": "text", "text": format!("Step {k}.")})];
            content.extend(uses);
            msgs.push(json!({"role": "assistant", "content": content}));
            if answered {
                let mut blocks: Vec<Value> = ids
                    .iter()
                    .zip(&r.outputs)
                    .map(|(id, &w)| json!({"type": "tool_result", "tool_use_id": id, "content": out(w)}))
                    .collect();
                if r.stray {
                    blocks.push(json!({"type": "tool_result", "tool_use_id": format!("stray_{k}"), "content": "lost"}));
                }
                if r.user_after {
                    blocks.push(json!({"type": "text", "text": format!("User note {k}: also check the docs.")}));
                }
                msgs.push(json!({"role": "user", "content": blocks}));
            }
        } else {
            let calls: Vec<Value> = ids
                .iter()
                .enumerate()
                .map(|(j, id)| json!({"id": id, "type": "function", "function": {"name": tool(j), "arguments": format!("{{\"path\":\"src/f{k}.rs\"}}")}}))
                .collect();
            msgs.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
            if answered {
                for (id, &w) in ids.iter().zip(&r.outputs) {
                    msgs.push(json!({"role": "tool", "tool_call_id": id, "content": out(w)}));
                }
                if r.stray {
                    msgs.push(json!({"role": "tool", "tool_call_id": format!("stray_{k}"), "content": "lost"}));
                }
                if r.user_after {
                    msgs.push(json!({"role": "user", "content": format!("User note {k}: also check the docs.")}));
                }
            }
        }
    }
    if anthropic {
        json!({"system": "You are a coding agent. Use the tools.", "messages": msgs})
    } else {
        json!({"messages": msgs})
    }
}

fn strategies() -> impl proptest::strategy::Strategy<Value = S> {
    prop_oneof![Just(S::Recency), Just(S::Relevance), Just(S::Hybrid), Just(S::Summarize)]
}

/// The reproducer: system, one task, 60 rounds of one call and a
/// ~400-token result. Half its size used to be `DoesNotFit`.
#[test]
fn a_long_tool_loop_after_one_task_fits_half_its_size() {
    let rounds: Vec<RoundSpec> =
        (0..60).map(|_| RoundSpec { outputs: vec![195], user_after: false, stray: false }).collect();
    for anthropic in [false, true] {
        let c = conv(&agent_loop(&rounds, anthropic, false));
        let a = acct();
        let before = a.conversation(&c).unwrap();
        for strategy in [S::Recency, S::Relevance, S::Hybrid, S::Summarize] {
            let limit = before / 2;
            let p = Policy { strategy, limit_tokens: limit, target_tokens: limit, ..Policy::default() };
            let r = compact(&c, &p, &a).unwrap_or_else(|e| panic!("{strategy:?} anthropic={anthropic}: {e}"));
            assert!(r.tokens_after <= limit && validate(&r.conversation).is_empty());
            assert_eq!(r.tokens_after, a.conversation(&r.conversation).unwrap());
            // Masking comes first: older results are masked, not all dropped.
            let masked = r.changes.iter().filter(|x| x.action == ChangeKind::MaskedResult).count();
            assert!(masked > 0, "{strategy:?}: no result masked");
            assert!(r.changes.iter().filter(|x| x.action == ChangeKind::MaskedResult).all(|x| x.id.is_some()));
            // The newest round is kept as it was.
            assert_eq!(r.conversation.messages.last().unwrap().raw(), c.messages.last().unwrap().raw());
            if strategy != S::Summarize {
                assert!(r.tokens_after * 10 >= limit * 4, "{strategy:?} used {} of {limit}", r.tokens_after);
            }
            let reasons: Vec<Reason> = r.protected.iter().map(|p| p.reason).collect();
            assert!(reasons.contains(&Reason::Task) && reasons.contains(&Reason::RecentRound), "{reasons:?}");
        }
        // Masking only as far as needed: a budget just under the size masks
        // one or two results and drops nothing.
        let limit = before - 100;
        let r = compact(&c, &Policy { limit_tokens: limit, target_tokens: limit, ..Policy::default() }, &a).unwrap();
        let masked = r.changes.iter().filter(|x| x.action == ChangeKind::MaskedResult).count();
        assert!((1..=2).contains(&masked), "{masked} masked");
        assert!(r.changes.iter().all(|x| x.action != ChangeKind::DroppedMessage));
        // The oldest result is the one masked (OpenAI: message 3).
        let first = r.changes.iter().find(|x| x.action == ChangeKind::MaskedResult).unwrap();
        assert_eq!(first.index, if anthropic { 2 } else { 3 });
        // Without masking, whole rounds go instead.
        let p = Policy {
            limit_tokens: limit,
            target_tokens: limit,
            mask: MaskOptions { enabled: false, ..MaskOptions::default() },
            ..Policy::default()
        };
        let r = compact(&c, &p, &a).unwrap();
        assert!(r.changes.iter().all(|x| x.action != ChangeKind::MaskedResult));
        assert!(r.changes.iter().any(|x| x.action == ChangeKind::DroppedMessage));
        // An excluded tool is never masked.
        let p = Policy {
            limit_tokens: before / 2,
            target_tokens: before / 2,
            mask: MaskOptions { exclude_tools: vec!["read_file".into()], ..MaskOptions::default() },
            ..Policy::default()
        };
        let r = compact(&c, &p, &a).unwrap();
        assert!(r
            .changes
            .iter()
            .filter(|x| x.action == ChangeKind::MaskedResult)
            .all(|x| !x.detail.contains("read_file")));
        let kept = r.conversation.to_json().unwrap();
        assert!(!kept.contains("[read_file output of"));
    }
}

#[test]
fn an_unanswered_last_call_is_repaired_and_kept() {
    let rounds: Vec<RoundSpec> =
        (0..20).map(|_| RoundSpec { outputs: vec![150], user_after: false, stray: false }).collect();
    for anthropic in [false, true] {
        let c = conv(&agent_loop(&rounds, anthropic, true));
        let a = acct();
        let before = a.conversation(&c).unwrap();
        let r = compact(&c, &Policy { limit_tokens: before / 2, target_tokens: before / 2, ..Policy::default() }, &a)
            .unwrap();
        assert!(validate(&r.conversation).is_empty());
        assert!(r.changes.iter().any(|x| x.action == ChangeKind::SynthesizedResult));
        let out = &r.conversation.messages;
        let call = &out[out.len() - 2];
        assert_eq!(call.raw(), c.messages.last().unwrap().raw(), "the open call is kept");
    }
}

#[test]
fn does_not_fit_names_what_is_protected() {
    let rounds = vec![RoundSpec { outputs: vec![2000], user_after: false, stray: false }];
    let c = conv(&agent_loop(&rounds, false, false));
    // Issue 31: the newest round's 2,000-token output is cut to fit 500
    // tokens by default, the newest round kept.
    let p = Policy { limit_tokens: 500, target_tokens: 500, ..Policy::default() };
    let r = compact(&c, &p, &acct()).unwrap();
    assert!(r.tokens_after <= 500 && r.changes.iter().any(|x| x.action == ChangeKind::TruncatedResult));
    assert_eq!(r.protected.iter().filter(|x| x.reason == Reason::RecentRound).count(), 1);
    // With cutting disabled, the newest round loses its protection and
    // goes; what cannot go fails, each part named with its cost.
    let p = Policy { tool_output_max: Some(0), ..p };
    let r = compact(&c, &p, &acct()).unwrap();
    assert!(r.tokens_after <= 500 && r.changes.iter().any(|x| x.action == ChangeKind::DroppedMessage));
    let err = compact(&c, &Policy { limit_tokens: 20, target_tokens: 20, ..p }, &acct()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DoesNotFit);
    for part in ["the task (keep_first)", "system messages", "framing", "tool_output_max is 0"] {
        assert!(err.message().contains(part), "{part}: {err}");
    }
    // keep_last_turns protects the latest user turn whole; a loop after one
    // task that exceeds the limit has its tool outputs cut first (issue 31:
    // it fits whenever the irreducible part does).
    let rounds: Vec<RoundSpec> =
        (0..10).map(|_| RoundSpec { outputs: vec![100], user_after: false, stray: false }).collect();
    let c = conv(&agent_loop(&rounds, false, false));
    let before = acct().conversation(&c).unwrap();
    let p = Policy { keep_last_turns: 1, limit_tokens: before / 2, target_tokens: before / 2, ..Policy::default() };
    let r = compact(&c, &p, &acct()).unwrap();
    assert!(r.tokens_after <= before / 2, "{} of {}", r.tokens_after, before / 2);
    assert!(r.changes.iter().any(|x| x.action == ChangeKind::TruncatedResult));
    assert!(r.protected.iter().any(|x| x.reason == Reason::RecentTurn), "the newest rounds stay protected");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn agent_loops_fit_or_the_protected_set_is_too_big(
        rounds in proptest::collection::vec(round(), 1..30),
        anthropic in any::<bool>(),
        open_end in prop::bool::weighted(0.2),
        strategy in strategies(),
        fraction in 0.02f64..1.2,
        mask in any::<bool>(),
        keep_last_rounds in 0usize..3,
        trunc in prop::option::of(50usize..400),
    ) {
        let c = conv(&agent_loop(&rounds, anthropic, open_end));
        let a = acct();
        let before = a.conversation(&c).unwrap();
        let limit = ((before as f64 * fraction) as usize).max(1);
        let p = Policy {
            strategy,
            limit_tokens: limit,
            target_tokens: limit,
            tool_output_max: trunc,
            keep_last_rounds,
            mask: MaskOptions { enabled: mask, ..MaskOptions::default() },
            ..Policy::default()
        };
        let rep = repair::repair(&c, None, &a).unwrap();
        // The input index the manifest gives the repaired copy's last message.
        let last_in = rep.origin.iter().rev().find_map(|o| *o).unwrap_or(0);
        let mut repaired = rep.conversation;
        if let Some(max) = trunc {
            repaired = tool_outputs::truncate_tool_outputs(&repaired, max, &a).unwrap().0;
        }
        match compact(&c, &p, &a) {
            Err(e) => {
                prop_assert_eq!(e.kind(), ErrorKind::DoesNotFit, "{}", e);
                let mut must = repaired.clone();
                // Only the irreducible part (system, task, latest user
                // message) can make it fail: tool outputs in the newest
                // rounds are cut and their protection lifted first.
                let keep = must_keep(&repaired, 0);
                must.messages = keep.iter().map(|&i| repaired.messages[i].clone()).collect();
                prop_assert!(a.conversation(&must).unwrap() + smallest_summary(&e) > limit, "fits: {}", e);
            }
            Ok(r) => {
                let out = &r.conversation;
                prop_assert_eq!(r.tokens_after, a.conversation(out).unwrap());
                prop_assert!(r.tokens_after <= limit);
                prop_assert!(validate(out).is_empty(), "{:?}", validate(out));
                prop_assert_eq!(out.system.clone(), c.system.clone());
                // The task, verbatim (Anthropic: a summary may follow it in
                // the same message, as a block of its own).
                let task_in = &repaired.messages[if anthropic { 0 } else { 1 }];
                let task_out = &out.messages[if anthropic { 0 } else { 1 }];
                if anthropic && task_out.raw() != task_in.raw() {
                    prop_assert_eq!(&task_out.raw()["content"][0]["text"], &task_in.raw()["content"]);
                } else {
                    prop_assert_eq!(&task_out.raw(), &task_in.raw());
                }
                if !anthropic {
                    prop_assert_eq!(&out.messages[0].raw(), &repaired.messages[0].raw());
                }
                // The last message (the newest round's end) is kept, or
                // the manifest says it was cut or dropped to make it fit.
                let reported = r.changes.iter().any(|x| {
                    x.index == last_in && matches!(
                        x.action,
                        ChangeKind::TruncatedResult
                            | ChangeKind::DroppedMessage
                            | ChangeKind::Summarized
                            | ChangeKind::MaskedResult
                    )
                });
                if keep_last_rounds > 0 && !reported {
                    prop_assert_eq!(&out.messages.last().unwrap().raw(), &repaired.messages.last().unwrap().raw());
                }
                // Every call keeps its result.
                let calls: usize = out.messages.iter().map(|m| m.tool_calls.len()).sum();
                let results: usize = out.messages.iter().map(|m| m.result_ids().len()).sum();
                prop_assert_eq!(calls, results);
            }
        }
    }
}

/// Issue 31: parallel outputs in the newest round that together exceed the
/// budget, with an explicit cap above each of them, are cut to one level
/// that makes the round fit (not only the largest); the round is kept.
#[test]
fn parallel_outputs_of_the_newest_round_are_cut_to_one_level() {
    for anthropic in [false, true] {
        let rounds = vec![
            RoundSpec { outputs: vec![50], user_after: false, stray: false },
            RoundSpec { outputs: vec![1500, 1500, 400], user_after: false, stray: false },
        ];
        let c = conv(&agent_loop(&rounds, anthropic, false));
        let p = Policy { limit_tokens: 1500, target_tokens: 1500, tool_output_max: Some(5000), ..Policy::default() };
        let r = compact(&c, &p, &acct()).unwrap();
        assert!(r.tokens_after <= 1500, "{}", r.tokens_after);
        let cuts: Vec<&Change> = r.changes.iter().filter(|x| x.action == ChangeKind::TruncatedResult).collect();
        assert_eq!(cuts.len(), 3, "{:?}", r.changes);
        assert!(cuts.iter().all(|x| x.detail.contains("turnfit") || x.detail.contains("output of")));
        let ids: Vec<&str> =
            r.conversation.messages.iter().flat_map(|m| m.tool_calls.iter().map(|t| t.id.as_str())).collect();
        for id in ["call_2", "call_3", "call_4"] {
            assert!(ids.contains(&id), "the newest round is kept: {ids:?}");
        }
        assert_eq!(r.protected.iter().filter(|x| x.reason == Reason::RecentRound).count(), 1);
        assert!(validate(&r.conversation).is_empty());
    }
}

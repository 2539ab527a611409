use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;
use crate::window::{validate, Framing, IssueKind};
use crate::{Encoding, Tokenizer};

fn acct() -> Accountant {
    Accountant::new(Tokenizer::new(Encoding::O200kBase).unwrap(), Framing::for_encoding(Encoding::O200kBase))
}

fn conv(v: Value) -> Conversation {
    Conversation::parse(&v.to_string(), None).unwrap()
}

fn kinds(c: &Conversation) -> Vec<IssueKind> {
    validate(c).into_iter().map(|i| i.kind).collect()
}

fn call(id: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}})
}

#[test]
fn openai_interrupted_call_stray_result_and_misplaced_result() {
    let c = conv(json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "user", "content": "wait"},
        {"role": "tool", "tool_call_id": "b", "content": "B late"},
        {"role": "tool", "tool_call_id": "zzz", "content": "stray"},
        {"role": "assistant", "content": null, "tool_calls": [call("c")]},
        {"role": "user", "content": "next"}
    ]}));
    let before = kinds(&c);
    assert!(
        before.contains(&IssueKind::MisplacedResult)
            && before.contains(&IssueKind::OrphanedResult)
            && before.contains(&IssueKind::OrphanedCall),
        "{before:?}"
    );
    let r = repair(&c, Some("interrupted"), &acct()).unwrap();
    assert!(kinds(&r.conversation).is_empty(), "{:?}", validate(&r.conversation));
    let out = r.conversation.to_value();
    let roles: Vec<&str> = out["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "assistant", "tool", "user"]);
    assert_eq!(out["messages"][3]["content"], "B late");
    assert_eq!(out["messages"][6], json!({"role": "tool", "tool_call_id": "c", "content": "interrupted"}));
    let actions: Vec<(ChangeKind, usize, Option<&str>)> =
        r.changes.iter().map(|c| (c.action, c.index, c.id.as_deref())).collect();
    assert_eq!(
        actions,
        [
            (ChangeKind::DroppedResult, 5, Some("zzz")),
            (ChangeKind::MovedResult, 4, Some("b")),
            (ChangeKind::SynthesizedResult, 6, Some("c")),
        ]
    );
    assert!(r.changes.iter().all(|c| c.tokens > 0));
}

#[test]
fn a_clean_conversation_is_untouched() {
    let v = json!({"model": "m", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "A", "extra": 1}
    ]});
    let r = repair(&conv(v.clone()), None, &acct()).unwrap();
    assert!(r.changes.is_empty());
    assert_eq!(r.conversation.to_value(), v);
}

#[test]
fn anthropic_missing_result_stray_block_and_result_in_wrong_message() {
    let c = conv(json!({"system": "s", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}},
                                          {"type": "tool_use", "id": "t2", "name": "g", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "one"},
                                     {"type": "tool_result", "tool_use_id": "nope", "content": "stray"},
                                     {"type": "text", "text": "and?"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t3", "name": "h", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "two"}]},
        {"role": "assistant", "content": "done"}
    ]}));
    let r = repair(&c, None, &acct()).unwrap();
    assert!(kinds(&r.conversation).is_empty(), "{:?}", validate(&r.conversation));
    let out = r.conversation.to_value();
    let m = out["messages"].as_array().unwrap();
    let ids = |k: usize| {
        m[k]["content"].as_array().unwrap().iter().filter_map(|b| b["tool_use_id"].as_str()).collect::<Vec<_>>()
    };
    assert_eq!(ids(2), ["t1", "t2"]);
    assert_eq!(m[2]["content"][2]["text"], "and?", "text stays after the results");
    assert_eq!(ids(4), ["t3"], "t2's old message now holds t3's synthetic result");
    assert_eq!(m[4]["content"][0]["is_error"], true);
    assert_eq!(m.len(), 6);
    assert_eq!(out["system"], "s");
}

#[test]
fn anthropic_call_at_the_end_gets_a_new_user_message() {
    let c = conv(json!({"system": "s", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]}
    ]}));
    let r = repair(&c, None, &acct()).unwrap();
    assert_eq!(r.conversation.messages.len(), 3);
    assert_eq!(r.conversation.messages[2].result_ids(), ["t1"]);
    assert!(kinds(&r.conversation).is_empty());
}

/// Many parallel calls answered late, in reverse order, one of them twice
/// in the same message: each moved result is its own first block, in call
/// order, ahead of the answer's text. (The blocks are found through one
/// index and inserted with one splice; scripts/growth.sh checks that this
/// stays linear.)
#[test]
fn anthropic_many_late_parallel_results_move_in_call_order() {
    let n = 300;
    let uses: Vec<Value> =
        (0..n).map(|k| json!({"type": "tool_use", "id": format!("p{k}"), "name": "f", "input": {}})).collect();
    let mut late: Vec<Value> = (0..n)
        .rev()
        .map(|k| json!({"type": "tool_result", "tool_use_id": format!("p{k}"), "content": format!("late {k}")}))
        .collect();
    late.insert(1, json!({"type": "tool_result", "tool_use_id": format!("p{}", n - 1), "content": "second"}));
    late.push(json!({"type": "text", "text": "and then?"}));
    let c = conv(json!({"system": "s", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": uses},
        {"role": "user", "content": [{"type": "text", "text": "waiting"}]},
        {"role": "assistant", "content": "still waiting"},
        {"role": "user", "content": late}
    ]}));
    let r = repair(&c, None, &acct()).unwrap();
    assert!(kinds(&r.conversation).is_empty(), "{:?}", validate(&r.conversation));
    let out = r.conversation.to_value();
    let m = out["messages"].as_array().unwrap();
    let blocks = m[2]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), n + 1);
    for (k, b) in blocks[..n].iter().enumerate() {
        assert_eq!(b["tool_use_id"], format!("p{k}"));
        assert_eq!(b["content"], format!("late {k}"), "the first block of an id is the one moved");
    }
    assert_eq!(blocks[n]["text"], "waiting", "text stays after the results");
    assert_eq!(r.changes.iter().filter(|c| c.action == ChangeKind::MovedResult).count(), n);
    assert_eq!(
        r.changes.iter().filter(|c| c.action == ChangeKind::DroppedResult).count(),
        1,
        "the second block of p{} is dropped",
        n - 1
    );
    // The late message held only results besides its text, which stays.
    assert_eq!(m.last().unwrap()["content"], json!([{"type": "text", "text": "and then?"}]));
}

// ---- reused call ids (docs/reliability.md finding 3) ------------------------

fn issues(c: &Conversation) -> Vec<(IssueKind, usize, String)> {
    validate(c).into_iter().map(|i| (i.kind, i.index, i.id.unwrap_or_default())).collect()
}

fn actions(r: &Repaired) -> Vec<(ChangeKind, usize, Option<&str>)> {
    r.changes.iter().map(|c| (c.action, c.index, c.id.as_deref())).collect()
}

#[test]
fn openai_reused_id_reports_and_answers_the_later_unanswered_call() {
    let c = conv(json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [call("x")]},
        {"role": "tool", "tool_call_id": "x", "content": "first"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": null, "tool_calls": [call("x")]},
        {"role": "user", "content": "latest"}
    ]}));
    let x = "x".to_owned();
    assert_eq!(issues(&c), [(IssueKind::DuplicateCallId, 4, x.clone()), (IssueKind::OrphanedCall, 4, x.clone())]);
    let r = repair(&c, Some("gone"), &acct()).unwrap();
    assert_eq!(actions(&r), [(ChangeKind::SynthesizedResult, 4, Some("x"))]);
    let out = r.conversation.to_value();
    assert_eq!(out["messages"][2]["content"], "first", "the first call keeps its result");
    assert_eq!(out["messages"][5], json!({"role": "tool", "tool_call_id": "x", "content": "gone"}));
    assert_eq!(issues(&r.conversation), [(IssueKind::DuplicateCallId, 4, x)]);
    assert!(repair(&r.conversation, None, &acct()).unwrap().changes.is_empty(), "idempotent");
}

#[test]
fn openai_reused_id_with_only_the_later_call_answered() {
    // The result sits after the second call: it stays there, and the first
    // call (not the second) is the one that needs a result.
    let c = conv(json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [call("x")]},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": null, "tool_calls": [call("x")]},
        {"role": "tool", "tool_call_id": "x", "content": "second"}
    ]}));
    assert_eq!(issues(&c), [(IssueKind::OrphanedCall, 1, "x".into()), (IssueKind::DuplicateCallId, 3, "x".into())]);
    let r = repair(&c, None, &acct()).unwrap();
    assert_eq!(actions(&r), [(ChangeKind::SynthesizedResult, 1, Some("x"))]);
    let roles: Vec<_> = r.conversation.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::User, Role::Assistant, Role::Tool]);
    assert_eq!(r.conversation.messages[5].raw()["content"], "second");
    assert!(issues(&r.conversation).iter().all(|i| i.0 == IssueKind::DuplicateCallId));
}

#[test]
fn one_message_calling_the_same_id_twice_needs_two_results() {
    let c = conv(json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [call("x"), call("x")]},
        {"role": "tool", "tool_call_id": "x", "content": "one"},
        {"role": "tool", "tool_call_id": "x", "content": "two"},
        {"role": "tool", "tool_call_id": "x", "content": "three"}
    ]}));
    assert_eq!(issues(&c), [(IssueKind::DuplicateCallId, 1, "x".into()), (IssueKind::DuplicateResult, 4, "x".into())]);
    let r = repair(&c, None, &acct()).unwrap();
    assert_eq!(actions(&r), [(ChangeKind::DroppedResult, 4, Some("x"))]);
    assert_eq!(r.conversation.messages.len(), 4);
}

#[test]
fn legacy_function_calls_reuse_the_name_as_id_and_are_not_duplicates() {
    let v = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "function_call": {"name": "lookup", "arguments": "{}"}},
        {"role": "function", "name": "lookup", "content": "one"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": null, "function_call": {"name": "lookup", "arguments": "{}"}},
        {"role": "function", "name": "lookup", "content": "two"}
    ]});
    let c = conv(v.clone());
    // The reuse is reported; the second result is not a "second result".
    assert_eq!(issues(&c), [(IssueKind::DuplicateCallId, 4, "lookup".into())]);
    let r = repair(&c, None, &acct()).unwrap();
    assert!(r.changes.is_empty(), "{:?}", r.changes);
    assert_eq!(r.conversation.to_value(), v);
}

#[test]
fn a_result_before_its_call_yields_to_one_in_place() {
    let c = conv(json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "x", "content": "early"},
        {"role": "assistant", "content": null, "tool_calls": [call("x")]},
        {"role": "tool", "tool_call_id": "x", "content": "in place"}
    ]}));
    assert_eq!(issues(&c), [(IssueKind::DuplicateResult, 1, "x".into())]);
    let r = repair(&c, None, &acct()).unwrap();
    assert_eq!(actions(&r), [(ChangeKind::DroppedResult, 1, Some("x"))]);
    assert_eq!(r.conversation.messages[2].raw()["content"], "in place");
    // Alone, an early result is moved to its call.
    let c = conv(json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "x", "content": "early"},
        {"role": "assistant", "content": null, "tool_calls": [call("x")]}
    ]}));
    assert_eq!(issues(&c), [(IssueKind::ResultBeforeCall, 1, "x".into()), (IssueKind::OrphanedCall, 2, "x".into())]);
    let r = repair(&c, None, &acct()).unwrap();
    assert_eq!(actions(&r), [(ChangeKind::MovedResult, 1, Some("x"))]);
    assert!(issues(&r.conversation).is_empty());
}

#[test]
fn anthropic_reused_id_gets_its_own_synthetic_result() {
    let tu = |id: &str| json!({"type": "tool_use", "id": id, "name": "f", "input": {}});
    let tr = |id: &str, t: &str| json!({"type": "tool_result", "tool_use_id": id, "content": t});
    let c = conv(json!({"system": "s", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tu("t")]},
        {"role": "user", "content": [tr("t", "first"), {"type": "text", "text": "again"}]},
        {"role": "assistant", "content": [tu("t")]},
        {"role": "user", "content": [{"type": "text", "text": "latest"}]},
        {"role": "assistant", "content": [tu("u"), tu("u")]},
        {"role": "user", "content": [tr("u", "u1"), tr("u", "u2"), tr("u", "u3")]}
    ]}));
    assert_eq!(
        issues(&c),
        [
            (IssueKind::DuplicateCallId, 3, "t".into()),
            (IssueKind::OrphanedCall, 3, "t".into()),
            (IssueKind::DuplicateCallId, 5, "u".into()),
            (IssueKind::DuplicateResult, 6, "u".into()),
        ]
    );
    let r = repair(&c, None, &acct()).unwrap();
    assert_eq!(actions(&r), [(ChangeKind::DroppedResult, 6, Some("u")), (ChangeKind::SynthesizedResult, 3, Some("t"))]);
    let out = r.conversation.to_value();
    assert_eq!(out["messages"][2]["content"][0]["content"], "first");
    assert_eq!(
        out["messages"][4]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "t", "content": DEFAULT_SYNTHETIC_RESULT, "is_error": true})
    );
    assert_eq!(out["messages"][4]["content"][1]["text"], "latest");
    let kept: Vec<&str> =
        out["messages"][6]["content"].as_array().unwrap().iter().map(|b| b["content"].as_str().unwrap()).collect();
    assert_eq!(kept, ["u1", "u2"], "the third result for 'u' (the one no call is left for) is dropped");
    assert!(issues(&r.conversation).iter().all(|i| i.0 == IssueKind::DuplicateCallId), "{:?}", issues(&r.conversation));
}

#[test]
fn anthropic_result_in_an_assistant_message_is_moved_to_a_user_message() {
    let c = conv(json!({"system": "s", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
        {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}, {"type": "text", "text": "hm"}]}
    ]}));
    assert!(issues(&c).iter().any(|i| i.0 == IssueKind::MisplacedResult), "{:?}", issues(&c));
    let r = repair(&c, None, &acct()).unwrap();
    assert_eq!(actions(&r), [(ChangeKind::MovedResult, 2, Some("t"))]);
    assert!(issues(&r.conversation).is_empty(), "{:?}", issues(&r.conversation));
    let roles: Vec<_> = r.conversation.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::User, Role::Assistant]);
    assert!(repair(&r.conversation, None, &acct()).unwrap().changes.is_empty(), "idempotent");
}

// ---- property test over random conversations -------------------------------

#[derive(Debug, Clone)]
enum Step {
    Text(bool),       // user (true) or assistant text
    Calls(Vec<Fate>), // assistant calls with per-call result fate
    Stray(u8),        // a result for an id no one calls
}

#[derive(Debug, Clone, Copy)]
enum Fate {
    InPlace,
    Missing,
    Late,  // after the next user turn
    Twice, // in place, then again later
}

fn step() -> impl Strategy<Value = Step> {
    let fate =
        prop_oneof![4 => Just(Fate::InPlace), 2 => Just(Fate::Missing), 1 => Just(Fate::Late), 1 => Just(Fate::Twice)];
    prop_oneof![
        3 => any::<bool>().prop_map(Step::Text),
        3 => proptest::collection::vec(fate, 1..4).prop_map(Step::Calls),
        1 => any::<u8>().prop_map(Step::Stray),
    ]
}

/// Builds an OpenAI conversation from steps; call ids are unique.
fn build_openai(steps: &[Step]) -> Value {
    build_openai_ids(steps, usize::MAX)
}

/// As [`build_openai`], with call ids cycling through `ids` values (so they
/// repeat when `ids` is small).
fn build_openai_ids(steps: &[Step], ids: usize) -> Value {
    let mut msgs = vec![json!({"role": "user", "content": "start"})];
    let mut late: Vec<Value> = Vec::new();
    let mut n = 0;
    for s in steps {
        match s {
            Step::Text(user) => {
                msgs.push(json!({"role": if *user { "user" } else { "assistant" }, "content": "text"}));
                msgs.append(&mut late);
            }
            Step::Calls(fates) => {
                let ids: Vec<String> = fates
                    .iter()
                    .map(|_| {
                        n += 1;
                        format!("call_{}", n % ids)
                    })
                    .collect();
                msgs.push(json!({"role": "assistant", "content": null, "tool_calls": ids.iter().map(|i| call(i)).collect::<Vec<_>>()}));
                for (id, f) in ids.iter().zip(fates) {
                    let r = json!({"role": "tool", "tool_call_id": id, "content": format!("result {id}")});
                    match f {
                        Fate::InPlace => msgs.push(r),
                        Fate::Missing => {}
                        Fate::Late => late.push(r),
                        Fate::Twice => {
                            msgs.push(r.clone());
                            late.push(r)
                        }
                    }
                }
            }
            Step::Stray(k) => msgs.push(json!({"role": "tool", "tool_call_id": format!("stray_{k}"), "content": "?"})),
        }
    }
    msgs.append(&mut late);
    json!({"messages": msgs})
}

/// The same steps in Anthropic shape (results as blocks in user messages).
fn build_anthropic(steps: &[Step]) -> Value {
    build_anthropic_ids(steps, usize::MAX)
}

/// As [`build_anthropic`], with call ids cycling through `ids` values.
fn build_anthropic_ids(steps: &[Step], ids: usize) -> Value {
    let mut msgs = vec![json!({"role": "user", "content": "start"})];
    let mut late: Vec<Value> = Vec::new();
    let mut n = 0;
    for s in steps {
        match s {
            Step::Text(_) => {
                let mut content = vec![json!({"type": "text", "text": "text"})];
                content.append(&mut late);
                msgs.push(json!({"role": "user", "content": content}));
                msgs.push(json!({"role": "assistant", "content": "ok"}));
            }
            Step::Calls(fates) => {
                let ids: Vec<String> = fates
                    .iter()
                    .map(|_| {
                        n += 1;
                        format!("tu_{}", n % ids)
                    })
                    .collect();
                msgs.push(json!({"role": "assistant", "content": ids.iter().map(|i| json!({"type": "tool_use", "id": i, "name": "f", "input": {}})).collect::<Vec<_>>()}));
                let mut now = Vec::new();
                for (id, f) in ids.iter().zip(fates) {
                    let b = json!({"type": "tool_result", "tool_use_id": id, "content": "r"});
                    match f {
                        Fate::InPlace => now.push(b),
                        Fate::Missing => {}
                        Fate::Late => late.push(b),
                        Fate::Twice => {
                            now.push(b.clone());
                            late.push(b)
                        }
                    }
                }
                now.push(json!({"type": "text", "text": "continue"}));
                msgs.push(json!({"role": "user", "content": now}));
                msgs.push(json!({"role": "assistant", "content": "ok"}));
            }
            Step::Stray(k) => {
                msgs.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("stray_{k}"), "content": "?"}, {"type": "text", "text": "x"}]}));
                msgs.push(json!({"role": "assistant", "content": "ok"}));
            }
        }
    }
    if !late.is_empty() {
        msgs.push(json!({"role": "user", "content": late}));
    }
    json!({"system": "sys", "messages": msgs})
}

/// Text of every non-result message, in order: repair must keep all of it.
fn non_result_text(c: &Conversation) -> Vec<String> {
    c.messages
        .iter()
        .filter(|m| !matches!(m.role, Role::Tool | Role::Function))
        .map(|m| {
            m.parts
                .iter()
                .filter_map(|p| if let Part::Text(t) = p { Some(t.clone()) } else { None })
                .collect::<Vec<_>>()
                .join("|")
        })
        .filter(|s| !s.is_empty())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn repair_leaves_no_tool_structure_issue_and_loses_nothing_else(steps in proptest::collection::vec(step(), 0..12), anthropic in any::<bool>()) {
        let v = if anthropic { build_anthropic(&steps) } else { build_openai(&steps) };
        let c = conv(v);
        let r = repair(&c, None, &acct()).unwrap();
        let after = kinds(&r.conversation);
        let structural = [IssueKind::OrphanedCall, IssueKind::OrphanedResult, IssueKind::DuplicateResult, IssueKind::ResultBeforeCall, IssueKind::MisplacedResult];
        prop_assert!(after.iter().all(|k| !structural.contains(k)), "{:?}\n{}", validate(&r.conversation), r.conversation.to_value());
        // Every call keeps exactly one result; nothing but results changed.
        let calls: usize = c.messages.iter().map(|m| m.tool_calls.len()).sum();
        let results: usize = r.conversation.messages.iter().map(|m| m.result_ids().len()).sum();
        prop_assert_eq!(calls, results);
        prop_assert_eq!(non_result_text(&c), non_result_text(&r.conversation));
        // The manifest accounts for every added and removed result.
        let before: usize = c.messages.iter().map(|m| m.result_ids().len()).sum();
        let synthesized = r.changes.iter().filter(|x| x.action == ChangeKind::SynthesizedResult).count();
        let dropped = r.changes.iter().filter(|x| x.action == ChangeKind::DroppedResult).count();
        prop_assert_eq!(before + synthesized - dropped, results);
        // Repair is idempotent.
        let again = repair(&r.conversation, None, &acct()).unwrap();
        prop_assert!(again.changes.is_empty(), "{:?}", again.changes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    /// The same properties when call ids repeat (1 to 3 distinct ids): after
    /// repair the only issue left is the reuse itself.
    #[test]
    fn repair_handles_reused_call_ids(steps in proptest::collection::vec(step(), 0..12), anthropic in any::<bool>(), ids in 1usize..4) {
        let v = if anthropic { build_anthropic_ids(&steps, ids) } else { build_openai_ids(&steps, ids) };
        let c = conv(v);
        let r = repair(&c, None, &acct()).unwrap();
        let after = kinds(&r.conversation);
        prop_assert!(after.iter().all(|k| matches!(k, IssueKind::DuplicateCallId | IssueKind::RoleSequence)), "{:?}\n{}", validate(&r.conversation), r.conversation.to_value());
        let calls: usize = c.messages.iter().map(|m| m.tool_calls.len()).sum();
        let results: usize = r.conversation.messages.iter().map(|m| m.result_ids().len()).sum();
        prop_assert_eq!(calls, results);
        prop_assert_eq!(non_result_text(&c), non_result_text(&r.conversation));
        let before: usize = c.messages.iter().map(|m| m.result_ids().len()).sum();
        let synthesized = r.changes.iter().filter(|x| x.action == ChangeKind::SynthesizedResult).count();
        let dropped = r.changes.iter().filter(|x| x.action == ChangeKind::DroppedResult).count();
        prop_assert_eq!(before + synthesized - dropped, results);
        let again = repair(&r.conversation, None, &acct()).unwrap();
        prop_assert!(again.changes.is_empty(), "{:?}", again.changes);
    }
}

/// Issue 14 bug 5: 70 unanswered calls with a 1 MiB synthetic text made a
/// 73 MB conversation the window then refused. The text and the total are
/// bounded before anything is built; at the bounds the repair works.
#[test]
fn synthetic_results_cannot_amplify_the_conversation() {
    use crate::limits::{MAX_SYNTHETIC_RESULT_BYTES, MAX_SYNTHETIC_TOTAL_BYTES};
    let calls: Vec<Value> = (0..300).map(|i| call(&format!("c{i}"))).collect();
    let c =
        conv(json!([{"role": "user", "content": "go"}, {"role": "assistant", "content": null, "tool_calls": calls}]));
    let big = "x".repeat(MAX_SYNTHETIC_RESULT_BYTES + 1);
    let e = repair(&c, Some(&big), &acct()).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::LimitExceeded, "{e}");
    assert!(e.message().contains("synthetic_result"), "{e}");
    let at = "x".repeat(MAX_SYNTHETIC_RESULT_BYTES);
    assert!(300 * at.len() > MAX_SYNTHETIC_TOTAL_BYTES);
    let e = repair(&c, Some(&at), &acct()).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::LimitExceeded, "{e}");
    assert!(e.message().contains("MAX_SYNTHETIC_TOTAL_BYTES"), "{e}");
    let fits = "x".repeat(MAX_SYNTHETIC_TOTAL_BYTES / 300);
    let r = repair(&c, Some(&fits), &acct()).unwrap();
    assert_eq!(r.conversation.messages.len(), 302);
}

/// Issue 33, cause H: the caps counted raw text, the JSON limit escaped
/// bytes, so 250 unanswered calls answered with 64 KiB of U+0001 each
/// (15.6 MiB of text) made 98 MB of JSON the window then refused. The caps
/// count the text as written; whatever a repair returns loads back.
#[test]
fn synthetic_result_caps_count_escaped_bytes() {
    use crate::limits::{MAX_JSON_BYTES, MAX_SYNTHETIC_RESULT_BYTES, MAX_SYNTHETIC_TOTAL_BYTES};
    let unanswered = |n: usize| {
        let calls: Vec<Value> = (0..n).map(|i| call(&format!("c{i}"))).collect();
        conv(json!([{"role": "user", "content": "go"}, {"role": "assistant", "content": null, "tool_calls": calls}]))
    };
    let refused = |c: &Conversation, text: &str| match repair(c, Some(text), &acct()) {
        Ok(r) => panic!("repair of {} bytes accepted: {} messages", text.len(), r.conversation.messages.len()),
        Err(e) => e,
    };
    let c = unanswered(250);
    let ctrl = "\u{1}".repeat(MAX_SYNTHETIC_RESULT_BYTES);
    let e = refused(&c, &ctrl);
    assert_eq!(e.kind(), crate::ErrorKind::LimitExceeded, "{e}");
    assert!(e.message().contains("escaped") && e.message().contains("MAX_SYNTHETIC_RESULT_BYTES"), "{e}");
    // A sixth of the cap in control characters is the cap, escaped: one
    // result passes, 300 of them exceed the total though their raw text
    // (300 x 10,922 bytes, 3.1 MiB) is far under it.
    let sixth = "\u{1}".repeat(MAX_SYNTHETIC_RESULT_BYTES / 6);
    let e = refused(&unanswered(300), &sixth);
    assert!(e.message().contains("MAX_SYNTHETIC_TOTAL_BYTES") && e.message().contains("escaped"), "{e}");
    assert!(300 * sixth.len() < MAX_SYNTHETIC_TOTAL_BYTES);
    // The issue's 250 calls at the escaped cap: accepted, and what the
    // repair returns is under the document limit, so it loads back.
    let r = repair(&c, Some(&sixth), &acct()).unwrap();
    let out = r.conversation.to_json().unwrap();
    assert!(out.len() < MAX_JSON_BYTES);
    assert_eq!(Conversation::parse(&out, None).unwrap().messages.len(), 252);
    // Quotes count twice.
    let q = "\"".repeat(MAX_SYNTHETIC_RESULT_BYTES / 2 + 1);
    assert!(refused(&c, &q).message().contains("MAX_SYNTHETIC_RESULT_BYTES"));
}

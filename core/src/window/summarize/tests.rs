use serde_json::json;

use super::*;
use crate::window::compact::Strategy;
use crate::window::{validate, Framing};
use crate::{Encoding, Tokenizer};

fn acct() -> Accountant {
    Accountant::new(Tokenizer::new(Encoding::O200kBase).unwrap(), Framing::for_encoding(Encoding::O200kBase))
}

fn session(anthropic: bool) -> Conversation {
    let mut msgs = Vec::new();
    for k in 0..8 {
        msgs.push(json!({"role": "user", "content": format!("Step {k}: edit src/mod_{k}.rs and run `cargo test -p core`. {}", "Context words. ".repeat(30))}));
        msgs.push(json!({"role": "assistant", "content": format!("Done with step {k}; 4{k} tests pass. {}", "More words here. ".repeat(30))}));
    }
    msgs.push(json!({"role": "user", "content": "What is left to do?"}));
    let v = if anthropic {
        json!({"system": "Be careful.", "messages": msgs})
    } else {
        let mut all = vec![json!({"role": "system", "content": "Be careful."})];
        all.extend(msgs);
        json!({"messages": all})
    };
    Conversation::parse(&v.to_string(), None).unwrap()
}

fn policy(limit: usize) -> Policy {
    Policy {
        strategy: Strategy::Summarize,
        limit_tokens: limit,
        target_tokens: limit,
        summary_max_tokens: 120,
        summarizer_budget: 600,
        ..Policy::default()
    }
}

#[test]
fn two_phase_summary_replaces_the_oldest_turns() {
    let c = session(false);
    let before = acct().conversation(&c).unwrap();
    let p = policy(before / 3);
    let pending = request_summary(&c, &p, &acct()).unwrap().expect("needs a summary");
    let req = &pending.request;
    assert!(req.prompt_tokens <= 600, "{}", req.prompt_tokens);
    assert!(req.prompt.contains("Done with step 0"), "transcript head kept");
    assert!(!req.prompt.contains("Step 0: edit"), "the task is kept, not summarized");
    assert!(req.messages.windows(2).all(|w| w[1] == w[0] + 1), "oldest rounds, contiguous");
    assert_eq!(req.messages[0], 2, "the system prompt and the task are not summarized");
    let r = apply_summary(&pending, &req.id, "The user and agent edited modules 0-5; all tests pass.", &p, &acct())
        .unwrap();
    assert!(r.tokens_after <= before / 3);
    let out = &r.conversation;
    assert_eq!(out.messages[0].role, Role::System);
    assert_eq!(out.messages[1].raw(), c.messages[1].raw(), "the task");
    assert!(out.messages[2].text().starts_with("[Summary of earlier conversation]\nThe user and agent"));
    assert_eq!(out.messages.last().unwrap().text(), "What is left to do?");
    let summarized = r.changes.iter().filter(|x| x.action == ChangeKind::Summarized).count();
    assert_eq!(summarized, req.messages.len());
    assert_eq!(r.changes.iter().filter(|x| x.action == ChangeKind::InsertedSummary).count(), 1);
    assert!(validate(out).is_empty());
    // A stale id is refused; an over-long summary is cut to its budget.
    assert!(apply_summary(&pending, "sum-0", "x", &p, &acct()).is_err());
    let long = "word ".repeat(1000);
    let r = apply_summary(&pending, &req.id, &long, &p, &acct()).unwrap();
    assert!(acct().tokenizer().count(&r.conversation.messages[2].text()).unwrap() <= 120 + 10);
}

#[test]
fn anthropic_summary_joins_the_task_message() {
    let c = session(true);
    let before = acct().conversation(&c).unwrap();
    let r = compact(&c, &policy(before / 3), &acct()).unwrap();
    let out = &r.conversation;
    assert!(validate(out).is_empty(), "{:?}", validate(out));
    assert_eq!(out.messages[0].role, Role::User);
    // The task's own text first, verbatim; the summary a block after it.
    assert_eq!(out.messages[0].raw()["content"][0]["text"], c.messages[0].raw()["content"]);
    let first = out.messages[0].raw()["content"][1]["text"].as_str().unwrap();
    assert!(first.starts_with("[Summary of earlier conversation]\nSummary of"), "{first}");
    assert!(
        first.contains("User requests:") && first.contains("src/mod_") && first.contains("cargo test -p core"),
        "digest keeps the requests: {first}"
    );
    assert!(r.tokens_after <= before / 3);
}

#[test]
fn nothing_to_summarize_when_it_fits() {
    let c = session(false);
    assert!(request_summary(&c, &policy(1_000_000), &acct()).unwrap().is_none());
    let r = compact(&c, &policy(1_000_000), &acct()).unwrap();
    assert_eq!(r.conversation.messages.len(), c.messages.len());
}

use crate::window::compact;

/// Issue 23 (002): summarizing never silently becomes deleting; issue 47:
/// a target is a goal, the limit is the wall. A limit with room for the
/// protected messages but not for the smallest summary drops rounds as
/// recency would and says so (`no_room_for_summary`, naming the smallest
/// summary's size); a target without that room but a limit with it puts
/// the summary beyond the target (`summary_over_target`); a little more
/// room gives a summary within the target, never a bare drop.
#[test]
fn no_room_for_a_summary_is_reported_never_silent() {
    for anthropic in [false, true] {
        let c = session(anthropic);
        let a = acct();
        // The protected set alone: system, the task, the latest user message.
        let mut p = policy(10_000);
        p.keep_last_rounds = 0;
        let protected = prepare(Cow::Borrowed(&c), &p, &a).unwrap();
        let floor = protected.fixed + protected.protected_tokens();
        let overhead = a.message(&summary_message(c.format, &label(&p), &p, 0).unwrap()).unwrap();
        let smallest = format!("the smallest summary ({} tokens", MIN_SUMMARY_TOKENS + overhead);
        let tight = Policy { limit_tokens: floor + 5, target_tokens: floor + 5, ..p.clone() };
        assert!(request_summary(&c, &tight, &a).unwrap().is_none(), "no summary is requested");
        for r in [compact_with_digest(&c, &tight, &a).unwrap(), crate::window::compact(&c, &tight, &a).unwrap()] {
            let s = r.shortfall.as_ref().expect("the report says why");
            assert_eq!(s.reason, ShortfallReason::NoRoomForSummary, "{}", s.detail);
            assert!(s.detail.contains(&smallest), "{smallest}: {}", s.detail);
            assert!(r.tokens_after <= floor + 5);
            assert!(r.changes.iter().any(|x| x.action == ChangeKind::DroppedMessage));
            assert!(r.changes.iter().all(|x| x.action != ChangeKind::InsertedSummary));
        }
        // The target too small, the limit roomy: the summary goes beyond
        // the target, within the limit.
        let roomy = floor + MIN_SUMMARY_TOKENS + overhead + 40;
        let beyond = Policy { limit_tokens: roomy, target_tokens: floor + 5, ..p.clone() };
        let r = compact_with_digest(&c, &beyond, &a).unwrap();
        assert_eq!(r.shortfall.as_ref().map(|s| s.reason), Some(ShortfallReason::SummaryOverTarget));
        assert!(r.changes.iter().any(|x| x.action == ChangeKind::InsertedSummary), "{:?}", r.changes);
        assert!(r.tokens_after <= roomy && !r.within_target);
        let roomy = floor + MIN_SUMMARY_TOKENS + overhead + 40;
        let ok = Policy { limit_tokens: roomy, target_tokens: roomy, ..p.clone() };
        let r = compact_with_digest(&c, &ok, &a).unwrap();
        assert!(r.changes.iter().any(|x| x.action == ChangeKind::InsertedSummary), "{:?}", r.changes);
        assert!(r.changes.iter().all(|x| x.action != ChangeKind::DroppedMessage));
        assert!(r.tokens_after <= roomy);
        // A summary cap below the smallest summary is a configuration error.
        let tiny = Policy { summary_max_tokens: 5, ..ok };
        assert_eq!(compact_with_digest(&c, &tiny, &a).unwrap_err().kind(), crate::ErrorKind::InvalidArgument);
    }
}

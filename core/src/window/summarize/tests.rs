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
    assert!(req.prompt.contains("Step 0: edit src/mod_0.rs"), "transcript head kept");
    assert!(req.messages.windows(2).all(|w| w[1] == w[0] + 1), "oldest turns, contiguous");
    assert_eq!(req.messages[0], 1, "the system prompt is not summarized");
    let r = apply_summary(&pending, &req.id, "The user and agent edited modules 0-5; all tests pass.", &p, &acct())
        .unwrap();
    assert!(r.tokens_after <= before / 3);
    let out = &r.conversation;
    assert_eq!(out.messages[0].role, Role::System);
    assert!(out.messages[1].text().starts_with("[Summary of earlier conversation]\nThe user and agent"));
    assert_eq!(out.messages.last().unwrap().text(), "What is left to do?");
    let summarized = r.changes.iter().filter(|x| x.action == Action::Summarized).count();
    assert_eq!(summarized, req.messages.len());
    assert_eq!(r.changes.iter().filter(|x| x.action == Action::InsertedSummary).count(), 1);
    assert!(validate(out).is_empty());
    // A stale id is refused; an over-long summary is cut to its budget.
    assert!(apply_summary(&pending, "sum-0", "x", &p, &acct()).is_err());
    let long = "word ".repeat(1000);
    let r = apply_summary(&pending, &req.id, &long, &p, &acct()).unwrap();
    assert!(acct().tokenizer().count(&r.conversation.messages[1].text()).unwrap() <= 120 + 10);
}

#[test]
fn anthropic_summary_joins_the_next_user_message() {
    let c = session(true);
    let before = acct().conversation(&c).unwrap();
    let r = compact(&c, &policy(before / 3), &acct()).unwrap();
    let out = &r.conversation;
    assert!(validate(out).is_empty(), "{:?}", validate(out));
    assert_eq!(out.messages[0].role, Role::User);
    let first = out.messages[0].raw["content"][0]["text"].as_str().unwrap();
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

use super::super::compact::compact;

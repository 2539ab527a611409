//! Multi-scale windows on real agent trajectories (tests/fixtures/trajectories,
//! provenance in its PROVENANCE.md).

use proptest::prelude::*;

use crate::chat::{Conversation, Message, Role};
use crate::window::{
    validate, Accountant, Budget, CompactOutcome, Framing, IssueKind, MultiScale, Policy, Window, TIERS_LABEL,
};
use crate::{ErrorKind, ModelRegistry, Tokenizer};

const SQLFLUFF: &str =
    include_str!("../../../../../tests/fixtures/trajectories/mini-swe-agent-sqlfluff-2419.openai.json");
const TAU: &str = include_str!("../../../../../tests/fixtures/trajectories/tau-bench-airline-task0.openai.json");
const MARSHMALLOW: &str =
    include_str!("../../../../../tests/fixtures/trajectories/swe-agent-marshmallow-1867-fc.openai.json");

fn window(cw: usize, ms: Option<MultiScale>) -> crate::Result<Window> {
    let info = ModelRegistry::builtin().lookup("gpt-4o").unwrap();
    let acct = Accountant::new(Tokenizer::new(info.encoding).unwrap(), Framing::for_encoding(info.encoding));
    let budget = Budget { context_window: cw, reserved_output: Some(cw / 8), multi_scale: ms, ..Budget::default() };
    Window::new(acct, info, budget)
}

fn tiers(i: i64, s: i64, h: i64) -> Option<MultiScale> {
    Some(MultiScale { immediate_tokens: i, session_tokens: s, historical_tokens: h })
}

fn messages(text: &str) -> Vec<Message> {
    Conversation::parse(text, None).unwrap().messages
}

/// Adds every message of `text`; returns the window and how many were added
/// before one could not fit (all of them when none failed).
fn replay(w: &mut Window, text: &str) -> usize {
    let msgs = messages(text);
    for (i, m) in msgs.into_iter().enumerate() {
        if let Err(e) = w.add(m, &Policy::default()) {
            assert_eq!(e.kind(), ErrorKind::DoesNotFit, "{e}");
            return i;
        }
    }
    usize::MAX
}

#[test]
fn off_by_default_and_the_report_says_nothing() {
    let mut w = window(8000, None).unwrap();
    replay(&mut w, TAU);
    let p = w.preflight(None).unwrap();
    assert!(p.tiers.is_none());
    assert!(!crate::json::to_string(&p).unwrap().contains("tiers"));
}

#[test]
fn a_long_session_folds_into_session_then_historical() {
    let mut w = window(8000, tiers(2000, 600, 900)).unwrap();
    let n = messages(SQLFLUFF).len();
    assert_eq!(replay(&mut w, SQLFLUFF), usize::MAX);
    let p = w.preflight(None).unwrap();
    let t = p.tiers.clone().unwrap();
    assert!(t.session_folds > 1 && t.historical_folds >= 1, "{t:?}");
    // Folds go down to three quarters of the immediate budget: not one per message.
    assert!(t.session_folds * 3 < t.messages_folded, "{t:?}");
    assert!(t.immediate_tokens <= 2000 && t.session_tokens <= 600 && t.historical_tokens <= 900, "{t:?}");
    assert!(p.prompt_tokens + p.reserved_output <= p.limit, "{p:?}");
    // Nothing lost without being summarized: every message is either folded
    // or still here (the leading system message, the context message).
    let c = w.conversation();
    assert!(c.messages[1].text().starts_with(TIERS_LABEL));
    assert_eq!(t.messages_folded + c.messages.len() - 1, n);
    // The trajectory ends on a call that never got its result; nothing else.
    let issues: Vec<_> = validate(c).into_iter().filter(|i| i.index + 1 != c.messages.len()).collect();
    assert!(issues.is_empty(), "{issues:?}");
    // The context message carries both summaries, historical first.
    let text = c.messages[1].text();
    let (h, s) = (text.find("Historical summary:").unwrap(), text.find("Session summary:").unwrap());
    assert!(h < s);
}

#[test]
fn the_host_summarizer_writes_the_folds_and_long_replies_are_cut() {
    let mut w = window(8000, tiers(1500, 300, 400)).unwrap();
    let mut asked = Vec::new();
    for m in messages(TAU) {
        w.add_with(m, &Policy::default(), &mut |r| {
            asked.push(r.tier);
            Some(format!("{:?} summary. ", r.tier).repeat(200))
        })
        .unwrap();
    }
    let t = w.preflight(None).unwrap().tiers.unwrap();
    assert!(t.host_summaries > 0 && t.host_summaries == asked.len(), "{t:?}");
    assert!(t.session_tokens <= 300 && t.historical_tokens <= 400, "{t:?}");
}

#[test]
fn compact_folds_a_multi_scale_window_and_a_load_keeps_its_summaries() {
    let mut w = window(8000, tiers(1000, 400, 400)).unwrap();
    w.load(Conversation::parse(MARSHMALLOW, None).unwrap()).unwrap();
    let before = w.message_tokens().len();
    let CompactOutcome::Done { report } = w.compact(&Policy::default()).unwrap() else { panic!() };
    let t = report.tiers.clone().unwrap();
    assert!(t.messages_folded > 0 && t.messages_folded + w.message_tokens().len() == before + 1, "{t:?}");
    assert!(report.tokens_after < report.tokens_before);
    // The conversation round-trips: loading it back finds the same summaries.
    let json = w.conversation().to_json().unwrap();
    let mut v = window(8000, tiers(1000, 400, 400)).unwrap();
    v.load(Conversation::parse(&json, None).unwrap()).unwrap();
    let u = v.preflight(None).unwrap().tiers.unwrap();
    assert_eq!((u.session_tokens, u.historical_tokens), (t.session_tokens, t.historical_tokens));
}

#[test]
fn bad_tier_budgets_are_refused_by_name() {
    let cases = [
        (tiers(0, 500, 500), "multi_scale.immediate_tokens is 0"),
        (tiers(500, -3, 500), "multi_scale.session_tokens is -3"),
        (tiers(500, 500, 5), "multi_scale.historical_tokens is 5; a summary tier needs at least"),
        (tiers(6000, 1000, 1000), "tier budgets sum to 8000 tokens"),
    ];
    for (ms, want) in cases {
        let e = window(8000, ms).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains(want), "{e}");
    }
    let e = crate::json::parse::<Budget>("budget", r#"{"multi_scale":{"immediate_tokens":1}}"#).unwrap_err();
    assert!(e.to_string().contains("session_tokens"), "{e}");
}

#[test]
fn other_formats_are_refused_when_folding() {
    let mut w = window(8000, tiers(200, 300, 300)).unwrap();
    let a = include_str!("../../../../../examples/data/anthropic-session.json");
    w.load(Conversation::parse(a, None).unwrap()).unwrap();
    let e = w.compact(&Policy::default()).unwrap_err();
    assert!(e.to_string().contains("roles must alternate"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the history and tier budgets: the window never passes its
    /// limit, every message added is still there or counted as folded, and a
    /// call is never split from its result.
    #[test]
    fn never_over_the_limit_nothing_lost_no_call_split(
        which in 0usize..3,
        cw in 1500usize..12000,
        shares in (1u32..10, 1u32..10, 1u32..10),
        host in any::<bool>(),
    ) {
        let text = [SQLFLUFF, TAU, MARSHMALLOW][which];
        let room = cw - cw / 8;
        let sum = (shares.0 + shares.1 + shares.2) as usize;
        let part = |s: u32| ((room * s as usize / sum) as i64).max(40);
        let Ok(mut w) = window(cw, tiers(part(shares.0), part(shares.1), part(shares.2))) else {
            return Ok(()); // budgets the checks refuse (the test above covers them)
        };
        let mut added = 0;
        for m in messages(text) {
            let len = w.message_tokens().len();
            let r = w.add_with(m.clone(), &Policy::default(), &mut |r| host.then(|| "done: ".repeat(r.max_tokens)));
            match r {
                Ok(_) => added += 1,
                Err(e) => {
                    prop_assert_eq!(e.kind(), ErrorKind::DoesNotFit);
                    prop_assert_eq!(w.message_tokens().len(), len);
                    // Only when the system messages and the newest round
                    // alone pass the limit.
                    let mut c = w.conversation().clone();
                    let keep = c.messages.iter().take_while(|m| m.role == Role::System).count();
                    let mut round = vec![m.clone()];
                    if m.role == Role::Tool {
                        let start = c.messages.iter().rposition(|m| m.role != Role::Tool).unwrap();
                        round.splice(0..0, c.messages[start..].iter().cloned());
                    }
                    c.messages.truncate(keep);
                    c.messages.extend(round);
                    let needed = w.accountant().conversation(&c).unwrap() + cw / 8;
                    prop_assert!(needed > cw, "refused although {} tokens fit in {}", needed, cw);
                    break;
                }
            }
            let p = w.preflight(None).unwrap();
            prop_assert!(p.prompt_tokens + p.reserved_output <= p.limit, "{:?}", p);
            let t = p.tiers.unwrap();
            let c = w.conversation();
            let ctx = c.messages.iter().filter(|m| m.text().starts_with(TIERS_LABEL)).count();
            prop_assert_eq!(t.messages_folded + c.messages.len() - ctx, added);
            let split = validate(c).into_iter().filter(|i| {
                matches!(i.kind, IssueKind::OrphanedResult | IssueKind::MisplacedResult | IssueKind::ResultBeforeCall)
            });
            prop_assert_eq!(split.count(), 0);
            // A folded tool message never starts the immediate tier.
            if let Some(first) = c.messages.iter().position(|m| m.role != Role::System).map(|i| i + ctx) {
                prop_assert!(c.messages.get(first).is_none_or(|m| m.role != Role::Tool));
            }
        }
    }
}

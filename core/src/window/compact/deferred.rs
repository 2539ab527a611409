//! Issue 52: with recency, a long output in an unprotected round is cut to
//! the default cap only if assembly keeps it unmasked. A cut of a log
//! that then ends as a placeholder, or is dropped with its round, was
//! most of `fit`'s time on agent transcripts with long logs.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::Strategy as S;
use super::*;
use crate::window::compact;
use crate::window::Framing;
use crate::{Encoding, Tokenizer};

fn acct() -> Accountant {
    Accountant::new(Tokenizer::new(Encoding::O200kBase).unwrap(), Framing::for_encoding(Encoding::O200kBase))
}

/// A service log of `lines` lines, a third of them ERROR or WARN (a few
/// messages, ids varying), with a real Python traceback in the middle
/// (tests/fixtures/errors-in-logs, PROVENANCE.md there).
fn log(k: usize, lines: usize) -> String {
    let traceback = include_str!("../../../../tests/fixtures/errors-in-logs/python-traceback.txt");
    let msgs = ["upstream timeout after {} ms", "deadlock detected (txn {})", "retrying job {} (attempt 2)"];
    let mut s = String::new();
    for i in 0..lines {
        if i == lines / 2 {
            s.push_str(traceback);
        }
        let n = 1000 + (k * 7919 + i * 13) % 9000;
        match i % 3 {
            1 => s.push_str(&format!(
                "10:{:02}:{:02} ERROR [api] {}\n",
                i / 60 % 60,
                i % 60,
                msgs[i % 2].replace("{}", &n.to_string())
            )),
            2 if i % 2 == 0 => s.push_str(&format!(
                "10:{:02}:{:02} WARN  [worker] {}\n",
                i / 60 % 60,
                i % 60,
                msgs[2].replace("{}", &n.to_string())
            )),
            _ => s.push_str(&format!(
                "10:{:02}:{:02} INFO  [api] GET /v1/orders/{n} 200 in {} ms\n",
                i / 60 % 60,
                i % 60,
                n % 97
            )),
        }
    }
    s
}

/// One task, then `rounds` rounds of one or three calls (every third
/// round parallel); each answered by a log, or a short listing for every
/// other call. In Anthropic's format a round's results share one user
/// message; `grep` results are excluded from masking by the tests that
/// say so.
fn transcript(rounds: usize, anthropic: bool) -> Conversation {
    let mut msgs = vec![
        json!({"role": "user", "content": "The orders API returns 500s since the last deploy; find out why and fix it."}),
    ];
    if !anthropic {
        msgs.insert(0, json!({"role": "system", "content": "You are a coding agent. Use the tools."}));
    }
    let mut n = 0;
    for k in 0..rounds {
        let calls = if k % 3 == 2 { 3 } else { 1 };
        let ids: Vec<String> = (0..calls)
            .map(|_| {
                n += 1;
                format!("call_{n}")
            })
            .collect();
        let tool = |j: usize| ["tail_log", "grep", "ls"][(k + j) % 3];
        let output = |j: usize| {
            if (k + j) % 3 == 2 {
                format!("src/\ntests/\nREADME.md ({k})\n")
            } else {
                log(k * 3 + j, 300 + 97 * ((k + j) % 5))
            }
        };
        if anthropic {
            let mut content = vec![json!({"type": "text", "text": format!("Step {k}: checking.")})];
            content.extend(
                ids.iter()
                    .enumerate()
                    .map(|(j, id)| json!({"type": "tool_use", "id": id, "name": tool(j), "input": {"n": k}})),
            );
            msgs.push(json!({"role": "assistant", "content": content}));
            let blocks: Vec<Value> = ids
                .iter()
                .enumerate()
                .map(|(j, id)| json!({"type": "tool_result", "tool_use_id": id, "content": output(j)}))
                .collect();
            msgs.push(json!({"role": "user", "content": blocks}));
        } else {
            let calls: Vec<Value> = ids
                .iter()
                .enumerate()
                .map(|(j, id)| json!({"id": id, "type": "function", "function": {"name": tool(j), "arguments": format!("{{\"n\":{k}}}")}}))
                .collect();
            msgs.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
            for (j, id) in ids.iter().enumerate() {
                msgs.push(json!({"role": "tool", "tool_call_id": id, "content": output(j)}));
            }
        }
    }
    let doc = if anthropic {
        json!({"system": "You are a coding agent.", "messages": msgs})
    } else {
        json!({"messages": msgs})
    };
    Conversation::parse(&doc.to_string(), None).unwrap()
}

fn ids_of(r: &Compacted, kind: ChangeKind) -> Vec<String> {
    r.changes.iter().filter(|c| c.action == kind).filter_map(|c| c.id.clone()).collect()
}

/// The result texts of the output, by tool-call id.
fn results(c: &Conversation) -> Vec<(String, String)> {
    tool_outputs::sites(c).into_iter().map(|s| (s.id.to_owned(), s.text.into_owned())).collect()
}

/// Every default-cap cut recency makes is of an output the result shows
/// (none of an output then masked or dropped), within the cap, and the
/// result fits; masked outputs name their uncut size. Failed before the
/// deferral: every long log of the rounds recency might keep was cut,
/// and most were then masked (a TruncatedResult and a MaskedResult for
/// the same call).
#[test]
fn recency_cuts_only_the_outputs_it_shows() {
    let a = acct();
    for anthropic in [false, true] {
        let c = transcript(60, anthropic);
        let before = a.conversation(&c).unwrap();
        for limit in [6_000, 16_000, 40_000] {
            let cap = default_tool_output_max(limit);
            let p = Policy { limit_tokens: limit, target_tokens: limit, ..Policy::default() };
            let r = compact(&c, &p, &a).unwrap();
            assert!(r.tokens_after <= limit && r.tokens_after == a.conversation(&r.conversation).unwrap());
            assert!(validate(&r.conversation).is_empty());
            let cut = ids_of(&r, ChangeKind::TruncatedResult);
            let masked: HashSet<String> = ids_of(&r, ChangeKind::MaskedResult).into_iter().collect();
            assert!(
                !cut.is_empty() && !masked.is_empty(),
                "{anthropic} {limit}: {} cut, {} masked",
                cut.len(),
                masked.len()
            );
            let shown = results(&r.conversation);
            for id in &cut {
                assert!(!masked.contains(id), "{anthropic} {limit}: {id} cut and then masked");
                let (_, text) =
                    shown.iter().find(|(i, _)| i == id).unwrap_or_else(|| panic!("{id} cut and then dropped"));
                assert!(text.contains("turnfit cut") && a.text(text).unwrap() <= cap, "{id}");
            }
            // A masked output's placeholder names the tokens it had.
            let original: Vec<(String, String)> = results(&c);
            for ch in r.changes.iter().filter(|x| x.action == ChangeKind::MaskedResult) {
                let id = ch.id.as_deref().unwrap();
                let text = &original.iter().find(|(i, _)| i == id).unwrap().1;
                assert_eq!(ch.tokens, a.text(text).unwrap(), "{id}");
            }
            assert!(r.tokens_after < before);
        }
    }
}

/// A message whose results are partly deferred (a maskable log) and
/// partly cut at once (an excluded tool's log) in one Anthropic user
/// message: both end cut when the message is kept unmasked, the excluded
/// one also when it is masked, and the cached counts match a recount
/// (`finish` checks that in debug builds).
#[test]
fn deferred_and_immediate_cuts_share_a_message() {
    let a = acct();
    let c = transcript(30, true);
    for limit in [8_000, 20_000, 50_000] {
        let p = Policy {
            limit_tokens: limit,
            target_tokens: limit,
            mask: mask::MaskOptions { exclude_tools: vec!["tail_log".into()], ..mask::MaskOptions::default() },
            ..Policy::default()
        };
        let r = compact(&c, &p, &a).unwrap();
        assert!(r.tokens_after <= limit && r.tokens_after == a.conversation(&r.conversation).unwrap());
        assert!(validate(&r.conversation).is_empty());
        let cap = default_tool_output_max(limit);
        for (id, text) in results(&r.conversation) {
            assert!(a.text(&text).unwrap() <= cap || text.starts_with('['), "{limit}: {id} over the cap");
        }
    }
}

/// The other strategies cut as before (relevance reads the cut text,
/// summarize decides from the cut counts): nothing deferred.
#[test]
fn only_recency_defers() {
    let a = acct();
    let c = transcript(40, false);
    for strategy in [S::Hybrid, S::Relevance, S::Summarize] {
        let p = Policy { strategy, limit_tokens: 16_000, target_tokens: 16_000, ..Policy::default() };
        let mut prepared = prepare(std::borrow::Cow::Borrowed(&c), &p, &a).unwrap();
        cut_to_fit(&mut prepared, &p, &a, 0).unwrap();
        assert!(prepared.deferred.is_empty(), "{strategy:?}");
    }
    let p = Policy { limit_tokens: 16_000, target_tokens: 16_000, ..Policy::default() };
    let mut prepared = prepare(std::borrow::Cow::Borrowed(&c), &p, &a).unwrap();
    cut_to_fit(&mut prepared, &p, &a, 0).unwrap();
    assert!(!prepared.deferred.is_empty());
}

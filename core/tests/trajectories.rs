//! Compaction on real public agent trajectories (tests/fixtures/trajectories,
//! provenance and licences in its PROVENANCE.md and manifest.json): for each
//! fixture, at 50% and 25% of its size and at 8,000 tokens, every strategy
//! fits, keeps every call with its result, keeps the system prompt and the
//! task verbatim and the last message, stays within the budget by an
//! independent count, and (recency, relevance, hybrid) uses at least 40% of
//! the budget, so "drop everything" cannot pass.
//!
//! Two exceptions, each checked independently rather than excused: at 25%
//! of a small fixture the system prompt, task and newest round alone can
//! exceed the budget (mini-swe-agent's task message is 1,295 tokens of a
//! 5,860-token run), and then `DoesNotFit` is the right answer; and under
//! 40% is accepted only when the newest dropped round's call message alone
//! is bigger than the room left (OpenHands' 2048 run: one 1,000-token
//! file-writing call). The runs each exception covers are printed.

use std::path::PathBuf;

use serde_json::Value;
use turnfit::chat::{Conversation, Format, Role};
use turnfit::window::{fit, validate, Accountant, ChangeKind, FitOptions, Policy, Strategy};
use turnfit::ModelRegistry;

fn fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/trajectories");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/trajectories")
        .map(|e| e.unwrap().path())
        .filter(|p| {
            [".openai.json", ".anthropic.json", ".ai-sdk.json"].iter().any(|s| p.to_string_lossy().ends_with(s))
        })
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    out.sort();
    assert!(out.len() >= 5, "expected the trajectory fixtures, found {}", out.len());
    out
}

/// The first user message's content (the task) as JSON.
fn task(c: &Conversation) -> Value {
    c.messages.iter().find(|m| m.role == Role::User).map(|m| m.raw()["content"].clone()).unwrap()
}

#[test]
fn every_strategy_fits_every_trajectory_at_every_budget() {
    let registry = ModelRegistry::builtin();
    let (acct, _) = Accountant::for_model(&registry, "gpt-4o").unwrap();
    let (mut checked, mut refused, mut underused) = (0, Vec::new(), Vec::new());
    for (name, text) in fixtures() {
        let input = Conversation::parse(&text, None).unwrap();
        let size = acct.conversation(&input).unwrap();
        for budget in [size / 2, size / 4, 8_000] {
            if budget >= size {
                continue;
            }
            for strategy in [Strategy::Recency, Strategy::Relevance, Strategy::Hybrid, Strategy::Summarize] {
                let opts = FitOptions {
                    model: "gpt-4o".into(),
                    max_tokens: Some(budget),
                    reserve_output: Some(0),
                    policy: Policy { strategy, ..Policy::default() },
                    ..FitOptions::default()
                };
                let at = format!("{name} at {budget} of {size} with {strategy:?}");
                let (out, report) = match fit(&text, &opts) {
                    Ok(r) => r,
                    Err(e) => {
                        // Only when the irreducible part, system, task and
                        // latest user message, exceeds the budget (counted
                        // here independently; issue 31: the newest round's
                        // outputs are cut, then its protection lifted).
                        // At any budget: swe-agent-missing-colon-fc's task
                        // and tools are more than half of it (1,221 of
                        // 2,076), so half size is refused there.
                        assert_eq!(e.kind(), turnfit::ErrorKind::DoesNotFit, "{at}: {e}");
                        let mut must = input.clone();
                        let person = |m: &turnfit::chat::Message| {
                            m.role == Role::User
                                && m.parts.iter().any(|p| !matches!(p, turnfit::chat::Part::ToolResult { .. }))
                        };
                        let last = input.messages.iter().rposition(person).unwrap_or(0);
                        let first_user = input.messages.iter().position(|m| m.role == Role::User).unwrap();
                        must.messages = input
                            .messages
                            .iter()
                            .enumerate()
                            .filter(|(i, m)| m.role == Role::System || *i == first_user || *i == last)
                            .map(|(_, m)| m.clone())
                            .collect();
                        assert!(acct.conversation(&must).unwrap() > budget, "{at}: fits, yet {e}");
                        assert!(e.message().contains("the task (keep_first)"), "{at}: {e}");
                        refused.push(at);
                        continue;
                    }
                };
                // Within budget by an independent recount of the output JSON.
                let again = Conversation::parse(&out.to_json().unwrap(), None).unwrap();
                let tokens = acct.conversation(&again).unwrap();
                assert_eq!(tokens, report.tokens_after, "{at}");
                assert!(tokens <= budget, "{at}: {tokens}");
                // Tool pairs intact.
                let issues = validate(&again);
                assert!(
                    issues.iter().all(|i| i.kind == turnfit::window::IssueKind::DuplicateCallId),
                    "{at}: {issues:?}"
                );
                let calls: usize = again.messages.iter().map(|m| m.tool_calls.len()).sum();
                let results: usize = again.messages.iter().map(|m| m.result_ids().len()).sum();
                assert_eq!(calls, results, "{at}");
                // System prompt and task verbatim.
                assert_eq!(again.system, input.system, "{at}");
                for (a, b) in input
                    .messages
                    .iter()
                    .filter(|m| m.role == Role::System)
                    .zip(again.messages.iter().filter(|m| m.role == Role::System))
                {
                    assert_eq!(a.raw(), b.raw(), "{at}: system prompt");
                }
                let (t_in, t_out) = (task(&input), task(&again));
                if input.format == Format::Anthropic && t_out != t_in {
                    // A summary may join the task as a block of its own.
                    let first = &t_out[0];
                    assert!(first["text"] == t_in || *first == t_in[0], "{at}: task");
                } else {
                    assert_eq!(t_out, t_in, "{at}: task");
                }
                // The last message kept (repair may answer an open call
                // after it), or its tool output cut by the default cap.
                let last_in = input.messages.last().unwrap().raw();
                let synthesized = report.changes.iter().any(|c| c.action == ChangeKind::SynthesizedResult);
                let kept_last = again.messages.iter().rev().take(2).any(|m| m.raw() == last_in);
                let cut_last = report
                    .changes
                    .iter()
                    .any(|c| c.action == ChangeKind::TruncatedResult && c.index == input.messages.len() - 1);
                assert!(
                    kept_last || cut_last || (synthesized && again.messages.iter().any(|m| m.raw() == last_in)),
                    "{at}: last message"
                );
                if strategy != Strategy::Summarize && tokens * 10 < budget * 4 {
                    // Under 40% only when the newest dropped round could not
                    // come back even with its results masked: its call
                    // message alone is bigger than the room left.
                    let newest_dropped_call = report
                        .changes
                        .iter()
                        .filter(|c| c.action == ChangeKind::DroppedMessage)
                        .filter(|c| input.messages[c.index].role == Role::Assistant)
                        .max_by_key(|c| c.index)
                        .unwrap_or_else(|| panic!("{at}: only {tokens} of {budget} used, nothing dropped"));
                    assert!(
                        newest_dropped_call.tokens > budget - tokens,
                        "{at}: only {tokens} of {budget} used, yet message {} ({} tokens) was dropped",
                        newest_dropped_call.index,
                        newest_dropped_call.tokens
                    );
                    underused.push(at.clone());
                }
                if strategy == Strategy::Summarize {
                    assert!(
                        report.changes.iter().any(|c| c.action == ChangeKind::InsertedSummary)
                            || !report.changes.iter().any(|c| c.action == ChangeKind::DroppedMessage),
                        "{at}: summarize dropped messages without a summary"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "{checked} runs");
    // Printed for docs/benchmarks.md: the budgets where the protected set
    // alone does not fit.
    eprintln!("{checked} fits, {} refused: {refused:#?}; under 40% of the budget: {underused:#?}", refused.len());
}

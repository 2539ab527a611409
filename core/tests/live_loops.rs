//! Issue 31: real trajectories replayed as live loops. Before model calls
//! of each committed public trajectory (tests/fixtures/trajectories, their
//! provenance in PROVENANCE.md), the turn-level entry point runs with a
//! fake summarizer at budgets from 10% to 90% of the trajectory's final
//! size, in all five wire formats: the OpenAI and Anthropic fixtures as
//! committed, and the OpenAI ones written mechanically as Responses, Gemini
//! and Bedrock requests (`convert` below; same messages, calls and results).
//!
//! Every request must fit (by an independent recount), have no orphaned
//! call or result, keep the system prompt and the task verbatim, and every
//! input message missing from the request must be in the manifest. A
//! `DoesNotFit` is accepted only where the system prompt, the task and the
//! newest user message alone (plus framing and tools, and 64 tokens for the
//! smallest summary) exceed the budget, checked independently. The figures
//! are printed (docs/benchmarks.md, "Replayed as live loops"):
//! `cargo test -p turnfit --test live_loops -- --nocapture`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{json, Value};
use turnfit::chat::{Conversation, Format};
use turnfit::turn::{run, Reply, SummarizerCall};
use turnfit::window::{validate, Accountant, ChangeKind, FitOptions, IssueKind, Policy, Strategy};
use turnfit::{ErrorKind, ModelRegistry};

fn fixtures() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/trajectories");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".openai.json") || p.to_string_lossy().ends_with(".anthropic.json"))
        .map(|p| {
            let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 5);
    out
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

fn args(call: &Value) -> Value {
    serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or("{}")).unwrap_or(json!({}))
}

/// Appends `entry` (`{"role", <key>: [...]}`), merging it into the last
/// one when the role repeats (Gemini and Bedrock alternate roles).
fn push_merged(out: &mut Vec<Value>, role: &str, key: &str, parts: Vec<Value>) {
    if parts.is_empty() {
        return;
    }
    if let Some(last) = out.last_mut().filter(|l| l["role"] == role) {
        last[key].as_array_mut().unwrap().extend(parts);
    } else {
        out.push(json!({"role": role, key: parts}));
    }
}

/// An OpenAI chat history written as `format`.
fn convert(openai: &Value, format: Format) -> Value {
    let msgs = openai["messages"].as_array().unwrap();
    let system: Vec<String> = msgs.iter().filter(|m| m["role"] == "system").map(|m| text_of(&m["content"])).collect();
    let rest = msgs.iter().filter(|m| m["role"] != "system");
    let names: std::collections::HashMap<String, String> = msgs
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| (c["id"].as_str().unwrap().to_owned(), c["function"]["name"].as_str().unwrap().to_owned()))
        .collect();
    match format {
        Format::Responses => {
            let mut input = Vec::new();
            for m in rest {
                match m["role"].as_str().unwrap() {
                    "tool" => input.push(json!({"type": "function_call_output", "call_id": m["tool_call_id"],
                        "output": text_of(&m["content"])})),
                    role => {
                        let t = text_of(&m["content"]);
                        if !t.is_empty() {
                            input.push(json!({"role": role, "content": t}));
                        }
                        for c in m["tool_calls"].as_array().into_iter().flatten() {
                            input.push(json!({"type": "function_call", "call_id": c["id"],
                                "name": c["function"]["name"], "arguments": c["function"]["arguments"]}));
                        }
                    }
                }
            }
            json!({"model": "gpt-4o", "instructions": system.join("\n"), "input": input})
        }
        Format::Gemini => {
            let mut contents = Vec::new();
            for m in rest {
                let t = text_of(&m["content"]);
                match m["role"].as_str().unwrap() {
                    "tool" => {
                        let id = m["tool_call_id"].as_str().unwrap();
                        push_merged(
                            &mut contents,
                            "user",
                            "parts",
                            vec![json!({"functionResponse":
                            {"id": id, "name": names[id], "response": {"output": t}}})],
                        );
                    }
                    "assistant" => {
                        let mut parts: Vec<Value> = Vec::new();
                        if !t.is_empty() {
                            parts.push(json!({"text": t}));
                        }
                        for c in m["tool_calls"].as_array().into_iter().flatten() {
                            parts.push(json!({"functionCall": {"id": c["id"], "name": c["function"]["name"], "args": args(c)}}));
                        }
                        push_merged(&mut contents, "model", "parts", parts);
                    }
                    _ => push_merged(&mut contents, "user", "parts", vec![json!({"text": t})]),
                }
            }
            json!({"systemInstruction": {"parts": [{"text": system.join("\n")}]}, "contents": contents})
        }
        Format::Bedrock => {
            let mut messages = Vec::new();
            for m in rest {
                let t = text_of(&m["content"]);
                let t = if t.is_empty() { "(empty)".to_owned() } else { t };
                match m["role"].as_str().unwrap() {
                    "tool" => push_merged(
                        &mut messages,
                        "user",
                        "content",
                        vec![json!({"toolResult":
                        {"toolUseId": m["tool_call_id"], "content": [{"text": t}], "status": "success"}})],
                    ),
                    "assistant" => {
                        let mut parts = vec![json!({"text": t})];
                        for c in m["tool_calls"].as_array().into_iter().flatten() {
                            parts.push(json!({"toolUse": {"toolUseId": c["id"], "name": c["function"]["name"], "input": args(c)}}));
                        }
                        push_merged(&mut messages, "assistant", "content", parts);
                    }
                    _ => push_merged(&mut messages, "user", "content", vec![json!({"text": t})]),
                }
            }
            json!({"system": [{"text": system.join("\n")}], "messages": messages})
        }
        _ => openai.clone(),
    }
}

/// The list of messages (or items) of a request in `format`, and a
/// function putting a prefix of it back into the request.
fn list_key(format: Format) -> &'static str {
    match format {
        Format::Responses => "input",
        Format::Gemini => "contents",
        _ => "messages",
    }
}

/// Whether list entry `e` is a model call (the point before which a live
/// loop calls the model).
fn is_model_turn(format: Format, e: &Value) -> bool {
    match format {
        Format::Responses => e["type"] == "function_call" || e["role"] == "assistant",
        Format::Gemini => e["role"] == "model",
        _ => e["role"] == "assistant",
    }
}

struct Tally {
    turns: usize,
    summarized: usize,
    refused: usize,
    summarizer_calls: usize,
    max_ratio: f64,
}

#[test]
fn every_turn_of_every_trajectory_fits_in_every_format() {
    let registry = ModelRegistry::builtin();
    let (acct, _) = Accountant::for_model(&registry, "gpt-4o").unwrap();
    let mut t = Tally { turns: 0, summarized: 0, refused: 0, summarizer_calls: 0, max_ratio: 0.0 };
    let mut formats_seen = BTreeSet::new();
    for (name, fixture) in fixtures() {
        let formats: Vec<Format> = if name.ends_with(".anthropic.json") {
            vec![Format::Anthropic]
        } else {
            vec![Format::OpenAi, Format::Responses, Format::Gemini, Format::Bedrock]
        };
        for format in formats {
            let doc = convert(&fixture, format);
            let key = list_key(format);
            let list = doc[key].as_array().unwrap().clone();
            let full = Conversation::parse(&doc.to_string(), Some(format)).unwrap();
            let size = acct.conversation(&full).unwrap();
            formats_seen.insert(format.as_str());
            // Model calls: every entry that is a model turn; five of them,
            // spread from the middle of the run to its end.
            let calls: Vec<usize> = (1..list.len()).filter(|&k| is_model_turn(format, &list[k])).collect();
            let picks: Vec<usize> =
                (0..5).map(|j| calls[calls.len() / 2 + j * (calls.len() - calls.len() / 2 - 1) / 4]).collect();
            for &k in &picks {
                let mut req = doc.clone();
                req[key] = Value::Array(list[..k].to_vec());
                let text = req.to_string();
                let input = Conversation::parse(&text, Some(format)).unwrap();
                for pct in [10, 30, 50, 70, 90] {
                    let budget = size * pct / 100;
                    let options = FitOptions {
                        model: "gpt-4o".into(),
                        max_tokens: Some(budget),
                        reserve_output: Some(0),
                        format: Some(format),
                        policy: Policy { strategy: Strategy::Summarize, ..Policy::default() },
                        ..FitOptions::default()
                    };
                    let mut n = 0;
                    let mut fake = |c: &SummarizerCall| {
                        n += 1;
                        assert!(c.prompt_tokens <= c.max_prompt_tokens, "{name}: summarizer request over its budget");
                        Reply::Summary(format!(
                            "Summary {}: the agent explored the repository and ran the tests.",
                            c.piece
                        ))
                    };
                    let what = format!("{name} as {} before entry {k} at {pct}% ({budget} tokens)", format.as_str());
                    match run(&registry, &text, &options, Some(&mut fake)) {
                        Ok((out, report)) => {
                            t.turns += 1;
                            t.summarizer_calls += n;
                            t.summarized += usize::from(report.summary.is_some());
                            let recount = acct.conversation(&out).unwrap();
                            assert!(recount <= budget, "{what}: {recount} tokens");
                            t.max_ratio = t.max_ratio.max(recount as f64 / budget as f64);
                            let bad: Vec<_> = validate(&out)
                                .into_iter()
                                .filter(|i| matches!(i.kind, IssueKind::OrphanedCall | IssueKind::OrphanedResult))
                                .collect();
                            assert!(bad.is_empty(), "{what}: {bad:?}");
                            assert_eq!(out.system, input.system, "{what}: system prompt");
                            let task = input.messages.iter().position(|m| m.role == turnfit::chat::Role::User).unwrap();
                            // Verbatim (where a format keeps roles alternating, the
                            // summary may join the task's message as a block of its own).
                            let task_text = input.messages[task].text();
                            assert!(out.messages.iter().any(|m| m.text().contains(&task_text)), "{what}: task lost");
                            // Every input message that is gone is in the manifest.
                            let kept: BTreeSet<String> = out.messages.iter().map(|m| m.raw().to_string()).collect();
                            let listed: BTreeSet<usize> = report
                                .fit
                                .changes
                                .iter()
                                .filter(|c| !matches!(c.action, ChangeKind::InsertedSummary))
                                .map(|c| c.index)
                                .collect();
                            for (i, m) in input.messages.iter().enumerate() {
                                if !kept.contains(&m.raw().to_string())
                                    && !out
                                        .messages
                                        .iter()
                                        .any(|o| o.text().contains(&m.text()) && !m.text().is_empty())
                                {
                                    assert!(listed.contains(&i), "{what}: message {i} is gone and not in the manifest");
                                }
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::DoesNotFit => {
                            // Only when system prompt and task alone exceed the budget.
                            let task = input.messages.iter().find(|m| m.role == turnfit::chat::Role::User).unwrap();
                            let sys: usize = input
                                .messages
                                .iter()
                                .filter(|m| m.role == turnfit::chat::Role::System)
                                .map(|m| acct.message(m).unwrap())
                                .sum();
                            // The newest thing a person said is irreducible too.
                            // The newest thing a person said is irreducible too, with
                            // the model turn before it where a round pairs a model turn
                            // with the user turn after it (Anthropic, Gemini, Bedrock).
                            let latest = input
                                .messages
                                .iter()
                                .rposition(|m| {
                                    m.role == turnfit::chat::Role::User
                                        && m.parts.iter().any(|p| !matches!(p, turnfit::chat::Part::ToolResult { .. }))
                                })
                                .filter(|&i| !std::ptr::eq(&input.messages[i], task))
                                .map_or(0, |i| {
                                    let m = &input.messages[i];
                                    let call = if i > 0 && !format.results_are_messages() {
                                        acct.message(&input.messages[i - 1]).unwrap()
                                    } else {
                                        0
                                    };
                                    acct.message(m).unwrap() + call
                                });
                            let floor = acct.overhead(&input).unwrap() + sys + acct.message(task).unwrap() + latest;
                            assert!(floor + 64 > budget, "{what}: DoesNotFit though system+task take {floor}: {e}");
                            t.refused += 1;
                        }
                        Err(e) => panic!("{what}: {e}"),
                    }
                }
            }
        }
    }
    assert_eq!(formats_seen.len(), 5, "{formats_seen:?}");
    println!(
        "live loops: {} turns fitted ({} summarized, {} summarizer requests), {} refused as DoesNotFit, \
         highest use {:.1}% of the budget, formats {:?}",
        t.turns,
        t.summarized,
        t.summarizer_calls,
        t.refused,
        t.max_ratio * 100.0,
        formats_seen
    );
}

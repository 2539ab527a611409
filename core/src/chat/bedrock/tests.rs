//! The Bedrock Converse codec: every block shape, round trips, errors with
//! their location, pairing by `toolUseId`, and the window's operations on
//! messages, on a real recorded request and on generated histories.

use proptest::prelude::{any, prop, prop_assert, prop_assert_eq, prop_oneof, proptest, Just, ProptestConfig};
use proptest::strategy::Strategy as _;
use serde_json::{json, Value};

use crate::chat::{Conversation, Format, Part, Role};
use crate::window::{self, Accountant, ChangeKind, Framing, IssueKind, Policy, Strategy};
use crate::{Encoding, ErrorKind, Tokenizer};

fn acct() -> Accountant {
    Accountant::new(Tokenizer::new(Encoding::O200kBase).unwrap(), Framing::for_encoding(Encoding::O200kBase))
}

fn rt(v: &Value, format: Option<Format>) -> Conversation {
    let c = Conversation::parse(&v.to_string(), format).unwrap();
    assert_eq!(c.to_json().unwrap(), v.to_string(), "byte for byte, key order kept");
    c
}

fn sample() -> Value {
    json!({
        "modelId": "anthropic.claude-sonnet-4",
        "system": [{"text": "Be terse."}, {"cachePoint": {"type": "default"}}, {"guardContent": {"text": {"text": "guarded"}}}],
        "messages": [
            {"role": "user", "content": [
                {"text": "Weather in Paris and Oslo? And this picture:"},
                {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGP8z8DwnwEKmBgYGAAtRQMBEmMknwAAAABJRU5ErkJggg=="}}},
                {"document": {"format": "pdf", "name": "a", "source": {"s3Location": {"uri": "s3://b/a.pdf"}}}},
                {"cachePoint": {"type": "default"}}
            ]},
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "Two cities.", "signature": "c2ln"}}},
                {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Paris"}}},
                {"toolUse": {"toolUseId": "t2", "name": "weather", "input": {"city": "Oslo"}}}
            ]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "t2", "content": [{"json": {"temp": 9}}], "status": "success"}},
                {"toolResult": {"toolUseId": "t1", "content": [{"text": "18C"}, {"image": {"format": "png", "source": {"bytes": "AAAA"}}}], "status": "error"}}
            ]},
            {"role": "assistant", "content": [{"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}}, {"text": "Paris is warmer."}]},
            {"role": "user", "content": [{"guardContent": {"text": {"text": "thanks"}}}]}
        ],
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": "weather", "description": "Weather.", "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}}}},
                {"cachePoint": {"type": "default"}}
            ],
            "toolChoice": {"auto": {}}
        },
        "inferenceConfig": {"maxTokens": 512, "temperature": 0.5},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    })
}

#[test]
fn every_block_round_trips_and_is_read() {
    let c = rt(&sample(), None);
    assert_eq!(c.format, Format::Bedrock);
    assert_eq!(c.system.as_deref(), Some("Be terse.\nguarded"));
    let roles: Vec<Role> = c.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::User, Role::Assistant, Role::User]);
    let m0 = &c.messages[0].parts;
    assert_eq!(m0.len(), 3, "a cache point is not content");
    assert_eq!(m0[1], Part::Image { detail: None, width: Some(2), height: Some(3) });
    assert_eq!(m0[2], Part::Attachment("document"));
    assert_eq!(c.messages[1].parts, [Part::Thinking("Two cities.".into())]);
    let ids: Vec<&str> = c.messages[1].tool_calls.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["t1", "t2"]);
    assert_eq!(c.messages[1].tool_calls[0].arguments, r#"{"city":"Paris"}"#);
    match &c.messages[2].parts[..] {
        [Part::ToolResult { id: a, text: ta, is_error: ea }, Part::ToolResult { id: b, text: tb, is_error: eb }, Part::Image { .. }] =>
        {
            assert_eq!((a.as_str(), ta.as_str(), *ea), ("t2", r#"{"temp":9}"#, false));
            assert_eq!((b.as_str(), tb.as_str(), *eb), ("t1", "18C", true));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c.messages[3].parts[0], Part::RedactedThinking(12));
    assert!(
        matches!(&c.messages[4].parts[0], Part::Block { kind, text } if kind == "guardContent" && text == "thanks")
    );
    assert_eq!(c.tools.len(), 1);
    assert_eq!(c.tools[0].parameters["type"], "object");
    assert!(window::validate(&c).is_empty(), "{:?}", window::validate(&c));
    assert_eq!(c.field("inferenceConfig"), Some(&json!({"maxTokens": 512, "temperature": 0.5})));
    assert_eq!(Format::from_name("bedrock").unwrap(), Format::Bedrock);
}

#[test]
fn detection_tells_converse_from_anthropic() {
    let conv = json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}]});
    assert_eq!(rt(&conv, None).format, Format::Bedrock);
    let anth = json!({"system": "s", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]});
    assert_eq!(rt(&anth, None).format, Format::Anthropic);
    let sys = json!({"system": [{"text": "s"}], "messages": []});
    assert_eq!(rt(&sys, None).format, Format::Bedrock);
}

#[test]
fn malformed_messages_say_where() {
    let cases = [
        (json!({"messages": 3}), "conversation messages: must be an array"),
        (json!({"messages": [7]}), "conversation messages[0]: must be an object"),
        (json!({"messages": [{"content": []}]}), "conversation messages[0]: has no 'role'"),
        (
            json!({"messages": [{"role": "system", "content": []}]}),
            "conversation messages[0]: unknown role 'system' (Bedrock Converse messages are user or assistant)",
        ),
        (
            json!({"messages": [{"role": "user", "content": "hi"}]}),
            "conversation messages[0]: 'content' must be an array of blocks",
        ),
        (
            json!({"messages": [{"role": "user", "content": []}, {"role": "assistant", "content": [{"toolUse": {"name": "f", "input": {}}}]}]}),
            "conversation messages[1].content[0]: toolUse has no 'toolUseId'",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"toolResult": {"content": []}}]}]}),
            "conversation messages[0].content[0]: toolResult has no 'toolUseId'",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"toolResult": {"toolUseId": "a", "content": "x"}}]}]}),
            "conversation messages[0].content[0]: toolResult 'content' must be an array",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{}]}]}),
            "conversation messages[0].content[0]: is an empty block",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"text": 5}]}]}),
            "conversation messages[0].content[0]: 'text' must be a string",
        ),
        (json!({"messages": [], "system": "s"}), "conversation system: must be an array of blocks"),
        (
            json!({"messages": [], "toolConfig": {"tools": [{"toolSpec": {"description": "d"}}]}}),
            "conversation toolConfig.tools[0]: toolSpec has no 'name'",
        ),
        (json!({"messages": [], "toolConfig": {"tools": 1}}), "conversation toolConfig.tools: must be an array"),
    ];
    for (doc, want) in cases {
        let e = Conversation::parse(&doc.to_string(), Some(Format::Bedrock)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidJson, "{doc}");
        assert_eq!(e.message(), want, "{doc}");
    }
    assert_eq!(Conversation::parse("[]", Some(Format::Bedrock)).unwrap_err().kind(), ErrorKind::InvalidJson);
    let deep = format!(
        "{{\"messages\":[{{\"role\":\"user\",\"content\":[],\"k\":{}1{}}}]}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    assert_eq!(Conversation::parse(&deep, None).unwrap_err().kind(), ErrorKind::LimitExceeded);
}

#[test]
fn repair_answers_with_a_tool_result_and_drops_strays() {
    let doc = json!({"system": [{"text": "sys"}], "messages": [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "a", "name": "f", "input": {}}}, {"toolUse": {"toolUseId": "b", "name": "g", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "zzz", "content": [{"text": "stray"}]}}, {"text": "next"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "c", "name": "h", "input": {}}}]}
    ], "inferenceConfig": {"maxTokens": 10}});
    let c = rt(&doc, None);
    let kinds: Vec<IssueKind> = window::validate(&c).iter().map(|i| i.kind).collect();
    assert_eq!(kinds.iter().filter(|k| **k == IssueKind::OrphanedCall).count(), 3, "{kinds:?}");
    assert!(kinds.contains(&IssueKind::OrphanedResult));
    let r = window::repair(&c, Some("interrupted"), &acct()).unwrap();
    let out = r.conversation.to_value();
    assert_eq!(out["system"], doc["system"]);
    assert_eq!(out["inferenceConfig"], doc["inferenceConfig"]);
    let msgs = out["messages"].as_array().unwrap();
    let res =
        |id: &str| json!({"toolResult": {"toolUseId": id, "content": [{"text": "interrupted"}], "status": "error"}});
    assert_eq!(msgs[2], json!({"role": "user", "content": [res("a"), res("b"), {"text": "next"}]}));
    assert_eq!(msgs[4], json!({"role": "user", "content": [res("c")]}));
    let acts: Vec<ChangeKind> = r.changes.iter().map(|x| x.action).collect();
    assert_eq!(acts.iter().filter(|a| **a == ChangeKind::SynthesizedResult).count(), 3);
    assert!(acts.contains(&ChangeKind::DroppedResult));
    assert!(window::validate(&r.conversation).is_empty(), "{:?}", window::validate(&r.conversation));
}

#[test]
fn truncating_and_clearing_results_keep_their_shape() {
    let big = "line of output\n".repeat(400);
    let doc = json!({"messages": [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "a", "name": "f", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "a", "content": [{"text": big}], "status": "success"}}]}
    ]});
    let c = rt(&doc, None);
    let (t, changes) = window::truncate_tool_outputs(&c, 50, &acct()).unwrap();
    assert_eq!(changes.len(), 1);
    let v = t.to_value();
    let r = &v["messages"][2]["content"][0]["toolResult"];
    assert!(r["content"][0]["text"].as_str().unwrap().len() < big.len());
    assert_eq!(r["status"], "success");
    let (cl, _) = window::clear_old_tool_results(&c, 0, Some("gone"), &acct()).unwrap();
    assert_eq!(
        cl.to_value()["messages"][2]["content"][0],
        json!({"toolResult": {"toolUseId": "a", "content": [{"text": "gone"}], "status": "success"}})
    );
}

#[test]
fn tool_config_is_rewritten_only_when_the_tools_change() {
    let mut c = rt(&sample(), None);
    c.tools.clear();
    let v = c.to_value();
    assert!(v.get("toolConfig").is_none(), "Bedrock refuses an empty tool list");
}

fn fixture(name: &str) -> String {
    let path = format!("{}/../tests/fixtures/formats/bedrock/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn recorded_request_round_trips_validates_counts_and_fits() {
    let text = fixture("pydantic-ai-tool-error.json");
    let c = Conversation::parse(text.trim_end(), None).unwrap();
    assert_eq!(c.format, Format::Bedrock);
    assert_eq!(c.to_json().unwrap(), text.trim_end());
    assert!(window::validate(&c).is_empty());
    // Bedrock billed 521 input tokens for this request on amazon.nova-micro
    // (the cassette's usage; 426 for the first message and the tool alone):
    // Nova's own tool prompt, which turnfit does not model. The estimate is
    // recorded so a change shows up.
    let a = acct();
    assert_eq!(a.conversation(&c).unwrap(), 143, "estimate; billed 521");
    crate::chat::tests::fits_every_budget(&c, &a, &["toolConfig"]);
}

#[derive(Debug, Clone)]
enum Turn {
    Chat(usize),
    /// Parallel calls: (result words, answered); reasoning first; a stray
    /// result after.
    Tools {
        calls: Vec<(usize, bool)>,
        reasoning: bool,
        stray: bool,
    },
}

fn turn() -> impl proptest::strategy::Strategy<Value = Turn> {
    prop_oneof![
        (1usize..60).prop_map(Turn::Chat),
        (
            proptest::collection::vec(
                (prop_oneof![5 => 1usize..60, 1 => 300usize..1500], prop::bool::weighted(0.8)),
                1..4
            ),
            any::<bool>(),
            prop::bool::weighted(0.15)
        )
            .prop_map(|(calls, reasoning, stray)| Turn::Tools { calls, reasoning, stray }),
    ]
}

fn build(turns: &[Turn]) -> Value {
    let mut msgs = Vec::new();
    let mut n = 0;
    for (k, t) in turns.iter().enumerate() {
        msgs.push(json!({"role": "user", "content": [{"text": format!("question {k} {}", "w ".repeat(k % 5))}]}));
        match t {
            Turn::Chat(words) => {
                msgs.push(json!({"role": "assistant", "content": [{"text": "answer ".repeat(*words)}]}))
            }
            Turn::Tools { calls, reasoning, stray } => {
                let mut blocks = Vec::new();
                if *reasoning {
                    blocks.push(json!({"reasoningContent": {"reasoningText": {"text": "think", "signature": "s"}}}));
                }
                let ids: Vec<String> = calls
                    .iter()
                    .map(|_| {
                        n += 1;
                        format!("tooluse_{n}")
                    })
                    .collect();
                for id in &ids {
                    blocks.push(json!({"toolUse": {"toolUseId": id, "name": "f", "input": {}}}));
                }
                msgs.push(json!({"role": "assistant", "content": blocks}));
                let mut results = Vec::new();
                for (id, c) in ids.iter().zip(calls) {
                    if c.1 {
                        results.push(json!({"toolResult": {"toolUseId": id, "content": [{"text": "out ".repeat(c.0)}], "status": "success"}}));
                    }
                }
                if *stray {
                    results
                        .push(json!({"toolResult": {"toolUseId": format!("stray{k}"), "content": [{"text": "lost"}]}}));
                }
                results.push(json!({"text": "continue"}));
                msgs.push(json!({"role": "user", "content": results}));
                msgs.push(json!({"role": "assistant", "content": [{"text": "done"}]}));
            }
        }
    }
    msgs.push(json!({"role": "user", "content": [{"text": "final question about out answer"}]}));
    json!({"system": [{"text": "sys prompt"}], "messages": msgs, "inferenceConfig": {"temperature": 0}})
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// Generated Converse histories (parallel calls, interrupted calls,
    /// stray results, huge results, reasoning) through every strategy.
    #[test]
    fn every_strategy_keeps_the_invariants_on_converse(
        turns in proptest::collection::vec(turn(), 0..8),
        strategy in prop_oneof![Just(Strategy::Recency), Just(Strategy::Relevance), Just(Strategy::Hybrid), Just(Strategy::Summarize)],
        fraction in 0.05f64..1.2,
        trunc in prop::option::of(20usize..200),
    ) {
        let doc = build(&turns);
        let c = Conversation::parse(&doc.to_string(), None).unwrap();
        prop_assert_eq!(c.format, Format::Bedrock);
        prop_assert_eq!(c.to_json().unwrap(), doc.to_string());
        let a = acct();
        let before = a.conversation(&c).unwrap();
        let limit = ((before as f64 * fraction) as usize).max(1);
        let p = Policy { strategy, limit_tokens: limit, target_tokens: limit, tool_output_max: trunc, ..Policy::default() };
        let repaired = window::repair(&c, None, &a).unwrap().conversation;
        prop_assert!(window::validate(&repaired).iter().all(|i| i.kind == IssueKind::RoleSequence), "{:?}", window::validate(&repaired));
        match window::compact(&c, &p, &a) {
            Err(e) => prop_assert_eq!(e.kind(), ErrorKind::DoesNotFit, "{}", e),
            Ok(r) => {
                let out = &r.conversation;
                prop_assert_eq!(r.tokens_after, a.conversation(out).unwrap());
                prop_assert!(r.tokens_after <= limit);
                prop_assert!(window::validate(out).iter().all(|i| i.kind == IssueKind::RoleSequence), "{:?}", window::validate(out));
                prop_assert_eq!(out.system.as_deref(), Some("sys prompt"));
                let v = out.to_value();
                prop_assert_eq!(&v["inferenceConfig"], &json!({"temperature": 0}));
                let msgs = v["messages"].as_array().unwrap();
                prop_assert_eq!(msgs.last(), doc["messages"].as_array().unwrap().last());
                for m in msgs {
                    prop_assert!(m["content"].is_array(), "written in Converse's shape: {}", m);
                    for b in m["content"].as_array().unwrap() {
                        prop_assert!(b.get("type").is_none(), "{}", b);
                    }
                }
                let count = |x: ChangeKind| r.changes.iter().filter(|c| c.action == x).count();
                let standalone = out.messages.iter().filter(|m| m.text().starts_with("[Summary of earlier conversation]")).count();
                prop_assert_eq!(
                    out.messages.len() + count(ChangeKind::DroppedMessage) + count(ChangeKind::Summarized),
                    repaired.messages.len() + standalone
                );
            }
        }
    }
}

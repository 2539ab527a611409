//! The Gemini codec: every part shape, round trips, errors with their
//! location, pairing by `id` and (without ids) by name and order, and the
//! window's operations on contents, on real recorded requests and on
//! generated histories.

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
        "systemInstruction": {"parts": [{"text": "Be terse."}, {"text": "Use metric."}]},
        "contents": [
            {"role": "user", "parts": [
                {"text": "Weather in Paris and Oslo? And this picture:"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGP8z8DwnwEKmBgYGAAtRQMBEmMknwAAAABJRU5ErkJggg=="}},
                {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/a.pdf"}},
                {"inline_data": {"mime_type": "audio/wav", "data": "UklGRg=="}}
            ]},
            {"role": "model", "parts": [
                {"text": "Two cities, so two calls.", "thought": true},
                {"functionCall": {"name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2ln"},
                {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "weather", "response": {"result": "18C"}}},
                {"functionResponse": {"name": "weather", "response": {"temp": 9, "unit": "C"}}}
            ]},
            {"role": "model", "parts": [
                {"executableCode": {"language": "PYTHON", "code": "print(18 - 9)"}},
                {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "9\n"}},
                {"text": "Paris is 9 degrees warmer."},
                {"thoughtSignature": "c2ln"}
            ]},
            {"parts": [{"text": "thanks"}]}
        ],
        "tools": [
            {"functionDeclarations": [{"name": "weather", "description": "Weather.", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}]},
            {"codeExecution": {}}
        ],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {"temperature": 0.2, "thinkingConfig": {"includeThoughts": true}},
        "safetySettings": []
    })
}

#[test]
fn every_part_round_trips_and_is_read() {
    let c = rt(&sample(), None);
    assert_eq!(c.format, Format::Gemini);
    assert_eq!(c.system.as_deref(), Some("Be terse.\nUse metric."));
    let roles: Vec<Role> = c.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::User, Role::Assistant, Role::User]);
    let m0 = &c.messages[0].parts;
    assert_eq!(m0[1], Part::Image { detail: None, width: Some(2), height: Some(3) });
    assert_eq!(m0[2], Part::Attachment("file"));
    assert_eq!(m0[3], Part::Attachment("audio"));
    assert_eq!(c.messages[1].parts, [Part::Thinking("Two cities, so two calls.".into())]);
    let calls: Vec<(&str, &str)> =
        c.messages[1].tool_calls.iter().map(|t| (t.id.as_str(), t.arguments.as_str())).collect();
    assert_eq!(calls, [("weather", r#"{"city":"Paris"}"#), ("weather", r#"{"city":"Oslo"}"#)]);
    assert_eq!(c.messages[2].result_ids(), ["weather", "weather"]);
    match &c.messages[2].parts[..] {
        [Part::ToolResult { text: a, .. }, Part::ToolResult { text: b, .. }] => {
            assert_eq!(a, "18C");
            assert_eq!(b, r#"{"temp":9,"unit":"C"}"#);
        }
        other => panic!("{other:?}"),
    }
    let kinds: Vec<&str> = c.messages[3]
        .parts
        .iter()
        .map(|p| match p {
            Part::Block { kind, .. } => kind.as_str(),
            Part::Text(_) => "text",
            _ => "?",
        })
        .collect();
    assert_eq!(kinds, ["executableCode", "codeExecutionResult", "text"], "a bare signature is nothing");
    let names: Vec<&str> = c.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["weather", "codeExecution"]);
    // Id-less parallel calls of one name, answered in order: valid.
    assert!(window::validate(&c).is_empty(), "{:?}", window::validate(&c));
    assert_eq!(c.field("toolConfig"), Some(&json!({"functionCallingConfig": {"mode": "AUTO"}})));
}

#[test]
fn bare_arrays_snake_case_and_detection() {
    let bare = json!([{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "yo"}]}]);
    let c = rt(&bare, None);
    assert_eq!(c.format, Format::Gemini);
    let snake = json!({"system_instruction": {"parts": [{"text": "s"}]}, "contents": [
        {"role": "model", "parts": [{"function_call": {"id": "x", "name": "f", "args": {}}}]},
        {"role": "user", "parts": [{"function_response": {"id": "x", "name": "f", "response": {"output": "ok"}}}]}
    ], "tools": [{"function_declarations": [{"name": "f", "parameters_json_schema": {"type": "object"}}]}]});
    let c = rt(&snake, None);
    assert_eq!(c.system.as_deref(), Some("s"));
    assert_eq!(c.tools[0].parameters, json!({"type": "object"}));
    assert!(window::validate(&c).is_empty());
    // Forced: a Chat-looking document read as Gemini fails where it differs.
    let e = Conversation::parse(r#"{"contents":[{"role":"assistant","parts":[]}]}"#, None).unwrap_err();
    assert_eq!(e.message(), "conversation contents[0]: unknown role 'assistant' (Gemini contents are user or model)");
    assert_eq!(Format::from_name("Gemini").unwrap(), Format::Gemini);
}

#[test]
fn malformed_contents_say_where() {
    let cases = [
        (json!({"contents": 3}), "conversation contents: must be an array"),
        (json!({"contents": [7]}), "conversation contents[0]: must be an object"),
        (json!({"contents": [{"role": "user", "parts": {}}]}), "conversation contents[0]: 'parts' must be an array"),
        (
            json!({"contents": [{"role": "user"}, {"role": "user"}, {"role": "model"}, {"role": "user", "parts": [{"functionResponse": {"response": {}}}]}]}),
            "conversation contents[3].parts[0]: functionResponse has no 'name'",
        ),
        (
            json!({"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]}),
            "conversation contents[0].parts[0]: functionCall has no 'name'",
        ),
        (
            json!({"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": "x"}}]}]}),
            "conversation contents[0].parts[0]: functionResponse 'response' must be an object",
        ),
        (json!({"contents": [{"role": "user", "parts": [5]}]}), "conversation contents[0].parts[0]: must be an object"),
        (
            json!({"contents": [{"role": "user", "parts": [{"text": 5}]}]}),
            "conversation contents[0].parts[0]: 'text' must be a string",
        ),
        (
            json!({"contents": [], "systemInstruction": 5}),
            "conversation systemInstruction: must be a content object or a string",
        ),
        (
            json!({"contents": [], "systemInstruction": {"parts": [{"inlineData": {}}]}}),
            "conversation systemInstruction.parts[0]: system instruction parts must be text",
        ),
        (
            json!({"contents": [], "tools": [{"functionDeclarations": [{"description": "d"}]}]}),
            "conversation tools[0].functionDeclarations[0]: has no 'name'",
        ),
        (json!({"contents": [], "tools": {}}), "conversation tools: must be an array"),
    ];
    for (doc, want) in cases {
        let e = Conversation::parse(&doc.to_string(), Some(Format::Gemini)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidJson, "{doc}");
        assert_eq!(e.message(), want, "{doc}");
    }
    assert_eq!(Conversation::parse("3", Some(Format::Gemini)).unwrap_err().kind(), ErrorKind::InvalidJson);
    let deep =
        format!("{{\"contents\":[{{\"role\":\"user\",\"parts\":[],\"k\":{}1{}}}]}}", "[".repeat(200), "]".repeat(200));
    assert_eq!(Conversation::parse(&deep, None).unwrap_err().kind(), ErrorKind::LimitExceeded);
    let one = r#"{"parts":[{"text":"x"}]}"#;
    let many = format!("{{\"contents\":[{}]}}", vec![one; crate::limits::MAX_MESSAGES + 1].join(","));
    assert_eq!(Conversation::parse(&many, None).unwrap_err().kind(), ErrorKind::LimitExceeded);
}

#[test]
fn pairing_by_id_and_by_name_and_order() {
    // With ids, the order of responses does not matter.
    let doc = json!({"contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "f", "args": {}}}, {"functionCall": {"id": "b", "name": "f", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "b", "name": "f", "response": {}}}, {"functionResponse": {"id": "a", "name": "f", "response": {}}}]},
        {"role": "model", "parts": [{"functionCall": {"name": "g", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "g", "response": {}}}]},
        {"role": "model", "parts": [{"functionCall": {"name": "g", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "g", "response": {}}}]}
    ]});
    let c = rt(&doc, None);
    assert!(window::validate(&c).is_empty(), "a name repeated across rounds is not a reused id");
    // A response by name to a call that has an id answers nothing.
    let doc = json!({"contents": [
        {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "f", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}
    ]});
    let kinds: Vec<IssueKind> = window::validate(&rt(&doc, None)).iter().map(|i| i.kind).collect();
    assert_eq!(kinds, [IssueKind::OrphanedCall, IssueKind::OrphanedResult]);
}

#[test]
fn repair_answers_with_a_function_response_and_drops_strays() {
    let doc = json!({"systemInstruction": {"parts": [{"text": "sys"}]}, "contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "f", "args": {}}}, {"functionCall": {"name": "g", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "zzz", "response": {"output": "stray"}}}, {"text": "next"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "h", "args": {}}}]}
    ], "generationConfig": {"maxOutputTokens": 10}});
    let c = rt(&doc, None);
    let kinds: Vec<IssueKind> = window::validate(&c).iter().map(|i| i.kind).collect();
    assert_eq!(kinds.iter().filter(|k| **k == IssueKind::OrphanedCall).count(), 3, "{kinds:?}");
    assert!(kinds.contains(&IssueKind::OrphanedResult));
    let r = window::repair(&c, Some("interrupted"), &acct()).unwrap();
    let out = r.conversation.to_value();
    assert_eq!(out["systemInstruction"], doc["systemInstruction"]);
    assert_eq!(out["generationConfig"], doc["generationConfig"]);
    let contents = out["contents"].as_array().unwrap();
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"id": "a", "name": "f", "response": {"error": "interrupted"}}},
            {"functionResponse": {"name": "g", "response": {"error": "interrupted"}}},
            {"text": "next"}
        ]}),
        "answers first, in the call's id or name; the stray is gone"
    );
    assert_eq!(
        contents[4],
        json!({"role": "user", "parts": [{"functionResponse": {"name": "h", "response": {"error": "interrupted"}}}]})
    );
    let acts: Vec<ChangeKind> = r.changes.iter().map(|x| x.action).collect();
    assert_eq!(acts.iter().filter(|a| **a == ChangeKind::SynthesizedResult).count(), 3);
    assert!(acts.contains(&ChangeKind::DroppedResult));
    assert!(window::validate(&r.conversation).is_empty(), "{:?}", window::validate(&r.conversation));
}

#[test]
fn truncating_and_clearing_responses_keep_their_shape() {
    let big = "line of output\n".repeat(400);
    let doc = json!({"contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}, {"functionCall": {"name": "f", "args": {}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "f", "response": {"result": big}}},
            {"functionResponse": {"name": "f", "response": {"stdout": big, "code": 0}}}
        ]}
    ]});
    let c = rt(&doc, None);
    let (t, changes) = window::truncate_tool_outputs(&c, 50, &acct()).unwrap();
    assert_eq!(changes.len(), 2);
    let v = t.to_value();
    let parts = &v["contents"][2]["parts"];
    assert!(parts[0]["functionResponse"]["response"]["result"].as_str().unwrap().len() < big.len());
    assert!(parts[1]["functionResponse"]["response"]["output"].as_str().unwrap().len() < big.len());
    assert_eq!(parts[1]["functionResponse"]["name"], "f");
    let (cl, _) = window::clear_old_tool_results(&c, 0, Some("gone"), &acct()).unwrap();
    let v = cl.to_value();
    assert_eq!(
        v["contents"][2]["parts"][0],
        json!({"functionResponse": {"name": "f", "response": {"result": "gone"}}})
    );
    assert_eq!(
        v["contents"][2]["parts"][1],
        json!({"functionResponse": {"name": "f", "response": {"output": "gone"}}})
    );
    assert!(window::validate(&cl).is_empty());
}

#[test]
fn dropping_tools_keeps_built_in_tools_and_rewrites_only_what_changed() {
    let mut c = rt(&sample(), None);
    c.tools.retain(|t| t.name != "weather");
    let v = c.to_value();
    assert_eq!(v["tools"], json!([{"codeExecution": {}}]));
    c.tools.clear();
    assert_eq!(c.to_value()["tools"], json!([]));
}

fn fixture(name: &str) -> String {
    let path = format!("{}/../tests/fixtures/formats/gemini/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const FIXTURES: &[&str] = &["pydantic-ai-tool-call-id.json", "pydantic-ai-parallel-calls.json"];

#[test]
fn recorded_requests_round_trip_validate_and_count_as_estimates() {
    for name in FIXTURES {
        let text = fixture(name);
        let c = Conversation::parse(text.trim_end(), None).unwrap();
        assert_eq!(c.format, Format::Gemini, "{name}");
        assert_eq!(c.to_json().unwrap(), text.trim_end(), "{name}");
        assert!(window::validate(&c).is_empty(), "{name}: {:?}", window::validate(&c));
    }
    let (a, info) = Accountant::for_model(&crate::ModelRegistry::builtin(), "gemini-2.5-flash").unwrap();
    assert!(!info.exact, "Gemini is counted with a proxy encoding");
    // Google billed 57 prompt tokens for the first recording (cassette
    // usage). turnfit's estimate is recorded here so a change shows up;
    // it is not a measurement of Gemini's tokenizer.
    let c = Conversation::parse(fixture(FIXTURES[0]).trim_end(), None).unwrap();
    let n = a.conversation(&c).unwrap();
    assert_eq!(n, 68, "estimate; billed 57");
}

#[test]
fn recorded_requests_fit_tight_budgets_with_every_invariant() {
    for name in FIXTURES {
        let c = Conversation::parse(fixture(name).trim_end(), None).unwrap();
        let a = acct();
        crate::chat::tests::fits_every_budget(&c, &a, &["toolConfig"]);
    }
}

#[derive(Debug, Clone)]
enum Turn {
    Chat(usize),
    /// Parallel calls: (output words, answered); with ids or by name; a
    /// thought first; a stray response after.
    Tools {
        calls: Vec<(usize, bool)>,
        ids: bool,
        thought: bool,
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
            any::<bool>(),
            prop::bool::weighted(0.15)
        )
            .prop_map(|(calls, ids, thought, stray)| Turn::Tools { calls, ids, thought, stray }),
    ]
}

fn build(turns: &[Turn]) -> Value {
    let mut contents = Vec::new();
    let mut n = 0;
    for (k, t) in turns.iter().enumerate() {
        contents.push(json!({"role": "user", "parts": [{"text": format!("question {k} {}", "w ".repeat(k % 5))}]}));
        match t {
            Turn::Chat(words) => contents.push(json!({"role": "model", "parts": [{"text": "answer ".repeat(*words)}]})),
            Turn::Tools { calls, ids, thought, stray } => {
                let mut parts = Vec::new();
                if *thought {
                    parts.push(json!({"text": "think", "thought": true}));
                }
                let names: Vec<(String, Option<String>)> = calls
                    .iter()
                    .enumerate()
                    .map(|(j, _)| {
                        n += 1;
                        (format!("f{}", j % 2), ids.then(|| format!("call_{n}")))
                    })
                    .collect();
                for (name, id) in &names {
                    let mut fc = json!({"name": name, "args": {}});
                    if let Some(id) = id {
                        fc["id"] = json!(id);
                    }
                    parts.push(json!({"functionCall": fc}));
                }
                contents.push(json!({"role": "model", "parts": parts}));
                let mut answers = Vec::new();
                for ((name, id), c) in names.iter().zip(calls) {
                    if c.1 {
                        let mut fr = json!({"name": name, "response": {"result": "out ".repeat(c.0)}});
                        if let Some(id) = id {
                            fr["id"] = json!(id);
                        }
                        answers.push(json!({"functionResponse": fr}));
                    }
                }
                if *stray {
                    answers.push(json!({"functionResponse": {"id": format!("stray{k}"), "name": "f0", "response": {"result": "lost"}}}));
                }
                if !answers.is_empty() {
                    contents.push(json!({"role": "user", "parts": answers}));
                }
                contents.push(json!({"role": "model", "parts": [{"text": "done"}]}));
            }
        }
    }
    contents.push(json!({"role": "user", "parts": [{"text": "final question about out answer"}]}));
    json!({"systemInstruction": {"parts": [{"text": "sys prompt"}]}, "contents": contents, "generationConfig": {"temperature": 0}})
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// Generated Gemini histories (parallel calls with and without ids,
    /// interrupted calls, stray responses, huge responses, thoughts)
    /// through every strategy.
    #[test]
    fn every_strategy_keeps_the_invariants_on_contents(
        turns in proptest::collection::vec(turn(), 0..8),
        strategy in prop_oneof![Just(Strategy::Recency), Just(Strategy::Relevance), Just(Strategy::Hybrid), Just(Strategy::Summarize)],
        fraction in 0.05f64..1.2,
        trunc in prop::option::of(20usize..200),
    ) {
        let doc = build(&turns);
        let c = Conversation::parse(&doc.to_string(), None).unwrap();
        prop_assert_eq!(c.format, Format::Gemini);
        prop_assert_eq!(c.to_json().unwrap(), doc.to_string());
        let a = acct();
        let before = a.conversation(&c).unwrap();
        let limit = ((before as f64 * fraction) as usize).max(1);
        let p = Policy { strategy, limit_tokens: limit, target_tokens: limit, tool_output_max: trunc, ..Policy::default() };
        let repaired = window::repair(&c, None, &a).unwrap().conversation;
        prop_assert!(window::validate(&repaired).is_empty(), "{:?}", window::validate(&repaired));
        match window::compact(&c, &p, &a) {
            Err(e) => prop_assert_eq!(e.kind(), ErrorKind::DoesNotFit, "{}", e),
            Ok(r) => {
                let out = &r.conversation;
                prop_assert_eq!(r.tokens_after, a.conversation(out).unwrap());
                prop_assert!(r.tokens_after <= limit);
                prop_assert!(window::validate(out).is_empty(), "{:?}", window::validate(out));
                prop_assert_eq!(out.system.as_deref(), Some("sys prompt"));
                let v = out.to_value();
                prop_assert_eq!(&v["generationConfig"], &json!({"temperature": 0}));
                let contents = v["contents"].as_array().unwrap();
                prop_assert_eq!(contents.last(), doc["contents"].as_array().unwrap().last());
                for m in contents {
                    prop_assert!(m.get("content").is_none(), "written in Gemini's shape: {}", m);
                    prop_assert!(m["role"] == "user" || m["role"] == "model", "{}", m);
                }
                // Nothing lost silently.
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

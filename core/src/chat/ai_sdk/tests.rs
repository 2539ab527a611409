use serde_json::{json, Value};

use crate::chat::{awaiting_approval, Conversation, Format, Part, Role};
use crate::window::{validate, Accountant, IssueKind};
use crate::ModelRegistry;

fn acct() -> Accountant {
    Accountant::for_model(&ModelRegistry::builtin(), "gpt-4o").unwrap().0
}

fn fixture(name: &str) -> String {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/trajectories");
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// Every part type ai 6 writes, provider options on messages and parts,
/// reasoning with its signature, an image, an approval pair and a part
/// type the codec does not know.
fn rich() -> Value {
    json!([
        {"role": "system", "content": "You are terse.", "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}},
        {"role": "user", "content": [
            {"type": "text", "text": "What is in this picture? Then delete /tmp/x."},
            {"type": "image", "image": "https://example.com/cat.png", "providerOptions": {"openai": {"imageDetail": "low"}}},
            {"type": "file", "data": "JVBERi0=", "mediaType": "application/pdf", "filename": "a.pdf"}
        ]},
        {"role": "assistant", "content": [
            {"type": "reasoning", "text": "The user wants two things.", "providerOptions": {"anthropic": {"signature": "sig=="}}},
            {"type": "text", "text": "A cat. "},
            {"type": "text", "text": "Deleting now."},
            {"type": "tool-call", "toolCallId": "call_1", "toolName": "rm", "input": {"path": "/tmp/x"}},
            {"type": "tool-approval-request", "approvalId": "ap_1", "toolCallId": "call_1"},
            {"type": "future-part", "note": "kept as is"}
        ], "providerOptions": {"openai": {"itemId": "msg_1"}}},
        {"role": "tool", "content": [{"type": "tool-approval-response", "approvalId": "ap_1", "approved": true}]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "call_1", "toolName": "rm", "output": {"type": "json", "value": {"deleted": true}}}
        ]}
    ])
}

#[test]
fn reads_every_part_and_writes_every_message_back_as_given() {
    let text = rich().to_string();
    let c = Conversation::parse(&text, None).unwrap();
    assert_eq!(c.format, Format::AiSdk);
    assert_eq!(c.to_json().unwrap(), text);
    let a = &c.messages[2];
    assert_eq!(a.role, Role::Assistant);
    assert_eq!(a.tool_calls.len(), 1);
    assert_eq!(a.tool_calls[0].arguments, r#"{"path":"/tmp/x"}"#);
    // Text parts joined as the Chat provider sends them, reasoning as
    // thinking, the unknown part as a block counted by its text.
    assert_eq!(a.parts[0], Part::Text("A cat. Deleting now.".into()));
    assert!(a.parts.contains(&Part::Thinking("The user wants two things.".into())));
    assert!(a.parts.contains(&Part::Block { kind: "future-part".into(), text: "kept as is".into() }));
    assert!(matches!(c.messages[1].parts[1], Part::Image { detail: Some(ref d), .. } if d == "low"));
    assert_eq!(c.messages[3].parts, vec![]);
    assert_eq!(c.messages[4].result_ids(), vec!["call_1"]);
    // The result after the approval response is in place: no issue.
    assert_eq!(validate(&c), vec![]);
}

#[test]
fn counts_what_the_openai_chat_provider_sends() {
    // Each fixture against its OpenAI Chat twin (the same trajectory,
    // tests/fixtures/trajectories/convert.py).
    let a = acct();
    for (ai, openai) in [
        ("mini-swe-agent-astroid-1866.ai-sdk.json", "mini-swe-agent-astroid-1866.openai.json"),
        ("swe-agent-marshmallow-1867-fc.ai-sdk.json", "swe-agent-marshmallow-1867-fc.openai.json"),
    ] {
        let x = Conversation::parse(&fixture(ai), None).unwrap();
        assert_eq!(x.format, Format::AiSdk, "{ai}");
        // The AI SDK sends `JSON.stringify(input)`: compact arguments.
        let mut twin: Value = serde_json::from_str(&fixture(openai)).unwrap();
        for m in twin["messages"].as_array_mut().unwrap() {
            for c in m.get_mut("tool_calls").and_then(Value::as_array_mut).into_iter().flatten() {
                let args: Value = serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
                c["function"]["arguments"] = Value::String(args.to_string());
            }
        }
        let y = Conversation::parse(&twin.to_string(), None).unwrap();
        assert_eq!(a.conversation(&x).unwrap(), a.conversation(&y).unwrap(), "{ai}");
        assert_eq!(x.to_json().unwrap(), serde_json::from_str::<Value>(&fixture(ai)).unwrap().to_string());
    }
    // Two results in one tool message are sent as two tool messages.
    let ai = json!([
        {"role": "user", "content": "weather in Paris and Rome"},
        {"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": "a", "toolName": "w", "input": {"city": "Paris"}},
            {"type": "tool-call", "toolCallId": "b", "toolName": "w", "input": {"city": "Rome"}}]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "a", "toolName": "w", "output": {"type": "text", "value": "sunny, 21C"}},
            {"type": "tool-result", "toolCallId": "b", "toolName": "w", "output": {"type": "error-text", "value": "timeout"}}]}
    ]);
    let chat = json!([
        {"role": "user", "content": "weather in Paris and Rome"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "w", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "b", "type": "function", "function": {"name": "w", "arguments": "{\"city\":\"Rome\"}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "sunny, 21C"},
        {"role": "tool", "tool_call_id": "b", "content": "timeout"}
    ]);
    let x = Conversation::parse(&ai.to_string(), None).unwrap();
    let y = Conversation::parse(&chat.to_string(), None).unwrap();
    assert_eq!(a.conversation(&x).unwrap(), a.conversation(&y).unwrap());
}

#[test]
fn pairs_results_by_call_id_and_keeps_a_pending_approval() {
    let mut doc = rich();
    let items = doc.as_array_mut().unwrap();
    // The result gone: the call awaits approval, which is no orphan.
    items.truncate(3);
    let c = Conversation::parse(&Value::Array(items.clone()).to_string(), None).unwrap();
    assert_eq!(awaiting_approval(&c), vec!["call_1".to_owned()]);
    assert_eq!(validate(&c), vec![]);
    // A result naming no call is an orphan; a call without approval or
    // result is one too.
    items.push(json!({"role": "tool", "content": [
        {"type": "tool-result", "toolCallId": "nope", "toolName": "rm", "output": {"type": "text", "value": "?"}}]}));
    items.push(json!({"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": "call_2", "toolName": "ls", "input": {}}]}));
    items.push(json!({"role": "user", "content": "next"}));
    let c = Conversation::parse(&Value::Array(items.clone()).to_string(), None).unwrap();
    let kinds: Vec<_> = validate(&c).into_iter().map(|i| (i.kind, i.id)).collect();
    assert!(kinds.contains(&(IssueKind::OrphanedResult, Some("nope".into()))), "{kinds:?}");
    assert!(kinds.contains(&(IssueKind::OrphanedCall, Some("call_2".into()))), "{kinds:?}");
    // Repair answers call_2 with an error result in a tool message of the
    // AI SDK's shape, drops the orphan, leaves call_1 awaiting approval.
    let r = crate::window::repair(&c, None, &acct()).unwrap();
    assert_eq!(validate(&r.conversation), vec![]);
    let out = r.conversation.to_value();
    let added = out.as_array().unwrap().iter().find(|m| m.to_string().contains("call_2") && m["role"] == "tool");
    assert_eq!(
        added.unwrap()["content"][0],
        json!({"type": "tool-result", "toolCallId": "call_2", "toolName": "ls",
               "output": {"type": "error-text", "value": crate::window::DEFAULT_SYNTHETIC_RESULT}})
    );
    assert!(!out.to_string().contains("\"nope\""));
}

#[test]
fn bad_input_is_a_specific_error() {
    for (doc, want) in [
        (r#"[{"role":"tool","content":"x"}]"#, "'content' must be an array of parts"),
        (r#"[{"role":"robot","content":"x"}]"#, "unknown role 'robot'"),
        (r#"[{"role":"assistant","content":[{"type":"tool-call","toolName":"f","input":{}}]}]"#, "no 'toolCallId'"),
        (r#"[{"role":"tool","content":[{"type":"tool-result","toolCallId":"a","toolName":"f"}]}]"#, "no 'output'"),
    ] {
        let e = Conversation::parse(doc, Some(Format::AiSdk)).unwrap_err();
        assert!(e.message().contains(want), "{doc}: {e}");
    }
    // An OpenAI request forced to ai_sdk names what gives it away.
    let e = Conversation::parse(
        r#"{"messages":[{"role":"assistant","content":null,"tool_calls":[]}]}"#,
        Some(Format::AiSdk),
    )
    .unwrap_err();
    assert!(e.message().contains("'tool_calls'"), "{e}");
    assert_eq!(Format::from_name("ai-sdk").unwrap(), Format::AiSdk);
}

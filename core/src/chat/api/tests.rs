//! Counting as sent to another API (issue 47): each conversation against
//! the same conversation converted to that API's wire format, the way the
//! framework's provider converts it, and counted natively.

use serde_json::{json, Value};

use crate::chat::{Api, Conversation, Format};
use crate::window::{fit, Accountant, EstimateReason, FitOptions};
use crate::{ErrorKind, ModelRegistry};

fn acct(model: &str, api: Option<Api>) -> Accountant {
    Accountant::for_model(&ModelRegistry::builtin(), model).unwrap().0.with_api(api)
}

fn fixture(name: &str) -> Value {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/trajectories");
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

/// AI SDK messages as `@ai-sdk/openai`'s `convertToOpenAIResponsesInput`
/// sends them (ai 6, `store: false`, no provider options): system and user
/// messages as message items, each assistant text part an output message
/// item, each call a `function_call` (`JSON.stringify(input)`), each result
/// a `function_call_output`; tools as Responses function tools.
fn ai_sdk_to_responses(doc: &Value) -> Value {
    let mut input = Vec::new();
    for m in doc["messages"].as_array().unwrap() {
        let parts = m["content"].as_array().cloned().unwrap_or_default();
        match m["role"].as_str().unwrap() {
            "system" => input.push(json!({"role": "system", "content": m["content"]})),
            "user" => {
                let content: Vec<Value> = match &m["content"] {
                    Value::String(s) => vec![json!({"type": "input_text", "text": s})],
                    _ => parts.iter().map(|p| json!({"type": "input_text", "text": p["text"]})).collect(),
                };
                input.push(json!({"role": "user", "content": content}));
            }
            "assistant" => {
                if let Value::String(s) = &m["content"] {
                    input.push(json!({"role": "assistant", "content": [{"type": "output_text", "text": s}]}));
                }
                for p in &parts {
                    match p["type"].as_str().unwrap() {
                        "text" => input.push(
                            json!({"role": "assistant", "content": [{"type": "output_text", "text": p["text"]}]}),
                        ),
                        "tool-call" => input.push(json!({"type": "function_call", "call_id": p["toolCallId"],
                            "name": p["toolName"], "arguments": p["input"].to_string()})),
                        other => panic!("no conversion for {other}"),
                    }
                }
            }
            "tool" => {
                for p in &parts {
                    let o = &p["output"];
                    let text = match o["type"].as_str().unwrap() {
                        "text" | "error-text" => o["value"].as_str().unwrap().to_owned(),
                        _ => o["value"].to_string(),
                    };
                    input.push(json!({"type": "function_call_output", "call_id": p["toolCallId"], "output": text}));
                }
            }
            other => panic!("role {other}"),
        }
    }
    let tools: Vec<Value> = doc["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    json!({"type": "function", "name": t["name"], "description": t["description"],
                    "parameters": t["inputSchema"]})
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"input": input, "tools": tools})
}

/// Chat messages as the Agents SDK holds them (Responses items: an
/// assistant's text a message item, each call a `function_call` item after
/// it, each result a `function_call_output`), for counting as it sends
/// them back to Chat Completions (`itemsToMessages`).
fn chat_to_items(doc: &Value) -> Value {
    let mut input = Vec::new();
    for m in doc["messages"].as_array().unwrap() {
        match m["role"].as_str().unwrap() {
            "assistant" => {
                if let Some(s) = m["content"].as_str().filter(|s| !s.is_empty()) {
                    input.push(json!({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": s}]}));
                }
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    input.push(json!({"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
                        "arguments": c["function"]["arguments"]}));
                }
            }
            "tool" => input.push(json!({"type": "function_call_output", "call_id": m["tool_call_id"],
                "output": m["content"]})),
            _ => input.push(json!({"type": "message", "role": m["role"], "content": m["content"]})),
        }
    }
    let tools: Vec<Value> = doc["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    json!({"type": "function", "name": t["function"]["name"],
            "description": t["function"]["description"], "parameters": t["function"]["parameters"]})
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"input": input, "tools": tools})
}

/// Compact arguments, as the AI SDK sends them (`JSON.stringify(input)`).
fn compact_arguments(doc: &mut Value) {
    for m in doc["messages"].as_array_mut().unwrap() {
        for c in m.get_mut("tool_calls").and_then(Value::as_array_mut).into_iter().flatten() {
            let args: Value = serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
            c["function"]["arguments"] = Value::String(args.to_string());
        }
    }
}

#[test]
fn ai_sdk_counted_as_sent_to_responses_equals_the_converted_request() {
    for model in ["gpt-4o", "gpt-4.1", "gpt-5-mini", "o4-mini"] {
        let native = acct(model, None);
        let sent = acct(model, Some(Api::Responses));
        for name in ["mini-swe-agent-astroid-1866.ai-sdk.json", "swe-agent-marshmallow-1867-fc.ai-sdk.json"] {
            let doc = fixture(name);
            let x = Conversation::parse(&doc.to_string(), None).unwrap();
            assert_eq!(x.format, Format::AiSdk);
            let wire = Conversation::parse(&ai_sdk_to_responses(&doc).to_string(), None).unwrap();
            assert_eq!(wire.format, Format::Responses);
            let want = native.conversation(&wire).unwrap();
            assert_eq!(sent.conversation(&x).unwrap(), want, "{model} {name}");
            // Message by message too: what compaction adds up.
            let items: usize = wire.messages.iter().map(|m| native.message(m).unwrap()).sum();
            let msgs: usize = x.messages.iter().map(|m| sent.message(m).unwrap()).sum();
            assert_eq!(msgs, items, "{model} {name}");
            assert_eq!(sent.estimate_reasons(&x), native.estimate_reasons(&wire), "{model} {name}");
            // The Chat count differs (the issue's gap): the Responses
            // request carries each call as an item of its own.
            assert_ne!(native.conversation(&x).unwrap(), want, "{model} {name}");
        }
    }
}

#[test]
fn several_text_parts_and_calls_are_items_of_their_own() {
    let ai = json!({"messages": [
        {"role": "user", "content": [{"type": "text", "text": "weather in Paris and Rome?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me look. "},
            {"type": "text", "text": "Both cities."},
            {"type": "tool-call", "toolCallId": "a", "toolName": "w", "input": {"city": "Paris"}},
            {"type": "tool-call", "toolCallId": "b", "toolName": "w", "input": {"city": "Rome"}}]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "a", "toolName": "w", "output": {"type": "text", "value": "sunny"}},
            {"type": "tool-result", "toolCallId": "b", "toolName": "w", "output": {"type": "json", "value": {"t": 3}}}]}
    ]});
    let sent = acct("gpt-4o", Some(Api::Responses));
    let x = Conversation::parse(&ai.to_string(), None).unwrap();
    let wire = Conversation::parse(&ai_sdk_to_responses(&ai).to_string(), None).unwrap();
    let want = acct("gpt-4o", None).conversation(&wire).unwrap();
    let got = sent.conversation(&x).unwrap();
    // Each split of the text may cost a token: never under, at most 1 over.
    assert!(got >= want && got <= want + 1, "{got} vs {want}");
    // No parallel call in Responses: not an estimate for that.
    assert!(!sent.estimate_reasons(&x).contains(&EstimateReason::ParallelToolCalls));
}

#[test]
fn responses_items_counted_as_sent_to_chat_equal_the_chat_request() {
    let native = acct("gpt-4o", None);
    let sent = acct("gpt-4o", Some(Api::ChatCompletions));
    for name in [
        "mini-swe-agent-astroid-1866.openai.json",
        "swe-agent-marshmallow-1867-fc.openai.json",
        "mini-swe-agent-github-issue.openai.json",
        "tau-bench-airline-task0.openai.json",
    ] {
        let mut doc = fixture(name);
        compact_arguments(&mut doc);
        let chat = Conversation::parse(&doc.to_string(), Some(Format::OpenAi)).unwrap();
        let want = native.conversation(&chat).unwrap();
        let mut items = Conversation::parse(&chat_to_items(&doc).to_string(), None).unwrap();
        assert_eq!(items.format, Format::Responses);
        assert_ne!(native.conversation(&items).unwrap(), want, "{name}: the Responses count differs");
        crate::chat::mark_chat_joins(&mut items, Some(Api::ChatCompletions));
        assert_eq!(sent.conversation(&items).unwrap(), want, "{name}");
    }
}

#[test]
fn parallel_calls_sent_to_chat_are_never_under() {
    let chat = json!({"messages": [
        {"role": "user", "content": "weather in Paris, Rome and Oslo?"},
        {"role": "assistant", "content": "Checking all three.", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\",\"unit\":\"c\"}"}},
            {"id": "b", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Rome\"}"}},
            {"id": "c", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\",\"days\":[1,2,3]}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "sunny"},
        {"role": "tool", "tool_call_id": "b", "content": "rain"},
        {"role": "tool", "tool_call_id": "c", "content": "snow"},
        {"role": "assistant", "tool_calls": [
            {"id": "d", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Bern\"}"}},
            {"id": "e", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Graz\"}"}}]},
        {"role": "tool", "tool_call_id": "d", "content": "fog"},
        {"role": "tool", "tool_call_id": "e", "content": "hail"}
    ]});
    let native = acct("gpt-4o", None);
    let sent = acct("gpt-4o", Some(Api::ChatCompletions));
    let want = native.conversation(&Conversation::parse(&chat.to_string(), None).unwrap()).unwrap();
    let mut items = Conversation::parse(&chat_to_items(&chat).to_string(), None).unwrap();
    crate::chat::mark_chat_joins(&mut items, Some(Api::ChatCompletions));
    let got = sent.conversation(&items).unwrap();
    assert!(got >= want && got <= want + 12, "{got} vs {want}");
    assert!(sent.estimate_reasons(&items).contains(&EstimateReason::ParallelToolCalls));
}

#[test]
fn fit_takes_the_api_and_refuses_it_for_other_apis() {
    let doc = fixture("swe-agent-marshmallow-1867-fc.ai-sdk.json");
    let wire = Conversation::parse(&ai_sdk_to_responses(&doc).to_string(), None).unwrap();
    let want = acct("gpt-4o", None).conversation(&wire).unwrap();
    let o = FitOptions { model: "gpt-4o".into(), api: Some(Api::Responses), ..FitOptions::default() };
    let (_, r) = fit(&doc.to_string(), &o).unwrap();
    assert_eq!(r.tokens_before, want);
    // From the options JSON, as the C ABI and the bindings give it.
    let o: FitOptions = serde_json::from_str(r#"{"model": "gpt-4o", "api": "chat"}"#).unwrap();
    assert_eq!(o.api, Some(Api::ChatCompletions));
    let o: FitOptions = serde_json::from_str(r#"{"model": "gpt-4o", "api": "responses"}"#).unwrap();
    let anthropic = json!({"system": "s", "messages": [{"role": "user", "content": "hi"}]});
    let e = fit(&anthropic.to_string(), &o).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("options.api") && e.message().contains("anthropic"), "{e}");
    assert!(serde_json::from_str::<FitOptions>(r#"{"model": "gpt-4o", "api": "grpc"}"#).is_err());
}

use serde_json::json;

use super::*;
use crate::window::{validate, Framing};
use crate::{Encoding, Tokenizer};

fn acct() -> Accountant {
    Accountant::new(Tokenizer::new(Encoding::O200kBase).unwrap(), Framing::for_encoding(Encoding::O200kBase))
}

fn conv(v: serde_json::Value) -> Conversation {
    Conversation::parse(&v.to_string(), None).unwrap()
}

#[test]
fn long_outputs_are_cut_head_and_tail_in_both_formats() {
    let long = (0..2000).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
    let openai = conv(json!({"messages": [
        {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": long},
        {"role": "user", "content": "short"}
    ]}));
    let (out, changes) = truncate_tool_outputs(&openai, 200, &acct()).unwrap();
    assert_eq!(changes.len(), 1);
    let text = out.messages[1].text();
    assert!(text.starts_with("line 0\n") && text.ends_with("line 1999"), "{}", &text[..50]);
    assert!(text.contains("tokens truncated"));
    assert!(acct().tokenizer().count(&text).unwrap() <= 200);
    assert_eq!(out.messages[2], openai.messages[2], "other messages untouched");
    assert!(validate(&out).is_empty());

    let anthropic = conv(json!({"system": "s", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": long}]}, {"type": "text", "text": "keep me"}]}
    ]}));
    let (out, changes) = truncate_tool_outputs(&anthropic, 100, &acct()).unwrap();
    assert_eq!((changes.len(), changes[0].id.as_deref()), (1, Some("t")));
    let v = out.to_value();
    assert_eq!(v["messages"][2]["content"][1]["text"], "keep me");
    assert!(v["messages"][2]["content"][0]["content"][0]["text"].as_str().unwrap().contains("tokens truncated"));
}

#[test]
fn clearing_keeps_the_newest_results() {
    let mut msgs = vec![json!({"role": "user", "content": "go"})];
    for k in 0..5 {
        msgs.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{k}"), "type": "function", "function": {"name": "f", "arguments": "{}"}}]}));
        msgs.push(json!({"role": "tool", "tool_call_id": format!("c{k}"), "content": format!("output number {k} with some words in it")}));
    }
    let c = conv(json!({"messages": msgs}));
    let (out, changes) = clear_old_tool_results(&c, 2, None, &acct()).unwrap();
    assert_eq!(changes.iter().map(|c| c.id.clone().unwrap()).collect::<Vec<_>>(), ["c0", "c1", "c2"]);
    assert_eq!(out.messages[2].text(), DEFAULT_CLEARED);
    assert_eq!(out.messages[10].text(), "output number 4 with some words in it");
    // Clearing again changes nothing.
    let (_, again) = clear_old_tool_results(&out, 2, None, &acct()).unwrap();
    assert!(again.is_empty());
}

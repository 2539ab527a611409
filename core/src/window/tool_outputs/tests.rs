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
    assert!(text.contains("turnfit cut") && text.contains("of f output"), "{text}");
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
    assert!(v["messages"][2]["content"][0]["content"][0]["text"].as_str().unwrap().contains("turnfit cut"));
}

/// Issue 36: the fit ladder applies `cut_edits` in place instead of copying
/// the conversation. Two results in one message are both cut, the second
/// on top of the first (the edit a message gets last is its final form),
/// and the edits applied in place give `cut_where`'s conversation.
#[test]
fn two_results_in_one_message_are_both_cut_in_place() {
    let long = |tag: &str| (0..2000).map(|i| format!("{tag} line {i}")).collect::<Vec<_>>().join("\n");
    let c = conv(json!({"system": "s", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "f", "input": {}},
            {"type": "tool_use", "id": "b", "name": "g", "input": {}}
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": long("first")},
            {"type": "tool_result", "tool_use_id": "b", "content": [{"type": "text", "text": long("second")}]},
            {"type": "text", "text": "keep me"}
        ]}
    ]}));
    let (edits, changes) = cut_edits(&c, &acct(), &[], |_| Some(150)).unwrap();
    assert_eq!(changes.iter().map(|ch| ch.id.as_deref()).collect::<Vec<_>>(), [Some("a"), Some("b")]);
    let mut work = c.clone();
    for (i, m) in edits {
        work.messages[i] = m;
    }
    let (copied, _) = cut_where(&c, &acct(), &[], |_| Some(150)).unwrap();
    assert_eq!(work.to_json().unwrap(), copied.to_json().unwrap());
    let v = work.to_value();
    let first = v["messages"][2]["content"][0]["content"].as_str().unwrap();
    let second = v["messages"][2]["content"][1]["content"][0]["text"].as_str().unwrap();
    assert!(first.contains("turnfit cut") && first.starts_with("first line 0"), "{}", &first[..40]);
    assert!(second.contains("turnfit cut") && second.starts_with("second line 0"), "{}", &second[..40]);
    assert_eq!(v["messages"][2]["content"][2]["text"], "keep me");
    assert!(validate(&work).is_empty());
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

/// Issue 23 (design 001's 10 KB cap): outputs over the byte cap are cut,
/// head and tail kept, within the cap, in each format's own shape.
#[test]
fn the_byte_cap_cuts_in_every_format_and_keeps_the_shape() {
    let long: String = (0..3000).map(|i| format!("row {i}: é中🦀\n")).collect();
    let a = acct();
    let cases = [
        json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": long},
            {"role": "user", "content": "short"}
        ]}),
        json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": long}]},
            {"role": "user", "content": "short"}
        ]}),
        json!({"system": "s", "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": long}, {"type": "text", "text": "keep me"}]}
        ]}),
        json!({"input": [
            {"role": "user", "content": "go"},
            {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": long}
        ]}),
    ];
    for case in cases {
        let c = conv(case.clone());
        let (out, changes) = truncate_bytes_counted(&c, 10_000, &a, &[]).unwrap();
        assert_eq!(changes.len(), 1, "{}", c.format.as_str());
        let ch = &changes[0];
        assert_eq!((ch.action, ch.id.as_deref()), (ChangeKind::TruncatedResult, Some("a")));
        assert!(ch.detail.starts_with(&format!("tool output cut from {} to ", long.len())), "{}", ch.detail);
        let before = a.tokenizer().count(&long).unwrap();
        let site = sites(&out).into_iter().next().unwrap();
        let text = site.text.to_string();
        assert!(text.len() <= 10_000 && text.len() > 9_900, "{}", text.len());
        assert!(text.starts_with("row 0: é中🦀\n") && text.ends_with("row 2999: é中🦀\n"));
        assert!(text.contains(" bytes truncated ...]"), "{}", &text[4900..5100]);
        assert_eq!(ch.tokens, before - a.tokenizer().count(&text).unwrap());
        assert!(validate(&out).is_empty());
        // The content keeps its JSON type: a string stays a string, parts stay parts.
        let (v_in, v_out) = (case, out.to_value());
        let key = if c.format == chat::Format::Responses { "input" } else { "messages" };
        let (m_in, m_out) = (&v_in[key][site.message], &v_out[key][site.message]);
        for field in ["content", "output"] {
            let kind = |v: &serde_json::Value| (v.is_string(), v.is_array(), v.is_null());
            assert_eq!(kind(&m_in[field]), kind(&m_out[field]), "{field} in {}", c.format.as_str());
        }
        if site.block.is_some() {
            assert_eq!(v_out[key][site.message]["content"][1]["text"], "keep me");
        }
        // Already within the cap: nothing to do.
        let (_, again) = truncate_bytes_counted(&out, 10_000, &a, &[]).unwrap();
        assert!(again.is_empty());
    }
    // A cap too small for the marker names the option and the marker's size.
    let c = conv(cases_openai_small());
    let e = truncate_bytes_counted(&c, 10, &a, &[]).unwrap_err();
    assert!(e.message().starts_with("tool_output_max_bytes 10 leaves no room"), "{}", e.message());
}

fn cases_openai_small() -> serde_json::Value {
    json!({"messages": [
        {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "x".repeat(100)}
    ]})
}

/// Issue 47 item 6: an application log with its one traceback in the
/// middle, as the newest tool output, fitted at a 16,000-token budget,
/// keeps the traceback's exception line (the one that says what went
/// wrong), not only its `Traceback` line. The traceback is a real one
/// (tests/fixtures/errors-in-logs/PROVENANCE.md).
#[test]
fn a_mid_log_traceback_keeps_its_exception_line_in_a_fit() {
    let traceback = include_str!("../../../../tests/fixtures/errors-in-logs/python-traceback.txt");
    let mut log = String::new();
    for i in 0..3000 {
        if i == 1500 {
            log.push_str("2026-03-01 10:30:00,000 ERROR [orders] unhandled exception while pricing order 1042\n");
            log.push_str(traceback);
        }
        let level = if i % 10 == 3 { "WARN " } else { "INFO " };
        log.push_str(&format!(
            "2026-03-01 10:{:02}:{:02},{:03} {level} [orders] GET /v1/orders/{} 200 in {} ms\n",
            (i / 60) % 60,
            i % 60,
            i % 1000,
            10_000 + i * 7,
            i % 97
        ));
    }
    let conv = json!({"messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Orders fail with a decimal error; find out why."},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "tail_log", "arguments": "{\"service\":\"orders\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": log}
    ]});
    let (out, report) = crate::window::fit_json(&conv.to_string(), r#"{"model":"gpt-4o","max_tokens":16000}"#).unwrap();
    assert!(report.tokens_after < report.tokens_before, "the log was cut");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let kept = v["messages"][3]["content"].as_str().unwrap();
    assert!(kept.contains("Traceback (most recent call last):"), "{kept}");
    assert!(kept.contains("decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]"), "{kept}");
}

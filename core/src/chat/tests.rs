use serde_json::{json, Value};

use super::*;

fn rt(v: &Value, format: Option<Format>) -> Conversation {
    let c = Conversation::parse(&v.to_string(), format).unwrap();
    assert_eq!(&c.to_value(), v, "round trip");
    assert_eq!(c.to_json().unwrap(), v.to_string(), "byte for byte, key order kept");
    assert_eq!(&c.clone().into_value(), v, "into_value is to_value");
    c
}

fn openai_sample() -> Value {
    json!({
        "model": "gpt-4o", "temperature": 0.2, "x-unknown": {"keep": [1, 2, 3]},
        "messages": [
            {"role": "system", "content": "Be terse.", "x-meta": 1},
            {"role": "developer", "content": [{"type": "text", "text": "Dev note"}]},
            {"role": "user", "name": "alice", "content": [
                {"type": "text", "text": "Look"},
                {"type": "image_url", "image_url": {"url": "data:...", "detail": "high", "width": 1024, "height": 768}},
                {"type": "input_audio", "input_audio": {"data": "AAA", "format": "wav"}},
                {"type": "file", "file": {"file_id": "f1"}}
            ]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"p\":\"/\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "cat", "arguments": "{}"}}
            ], "refusal": null},
            {"role": "tool", "tool_call_id": "c1", "content": "a b c"},
            {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "file"}]},
            {"role": "assistant", "function_call": {"name": "legacy", "arguments": "{}"}, "content": null},
            {"role": "function", "name": "legacy", "content": "ok"}
        ],
        "tools": [{"type": "function", "function": {"name": "ls", "description": "List.", "parameters": {"type": "object", "properties": {}}}}],
        "tail": true
    })
}

#[test]
fn openai_round_trips_and_reads_every_shape() {
    let c = rt(&openai_sample(), None);
    assert_eq!(c.format, Format::OpenAi);
    let roles: Vec<Role> = c.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::System,
            Role::Developer,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Tool,
            Role::Assistant,
            Role::Function
        ]
    );
    assert_eq!(c.messages[2].name.as_deref(), Some("alice"));
    assert!(matches!(c.messages[2].parts[1], Part::Image { width: Some(1024), height: Some(768), .. }));
    assert_eq!(c.messages[3].tool_calls.len(), 2);
    assert_eq!(c.messages[3].tool_calls[0].arguments, "{\"p\":\"/\"}");
    assert_eq!(c.messages[4].result_ids(), ["c1"]);
    assert_eq!(c.messages[6].tool_calls[0].id, "legacy");
    assert_eq!(c.messages[7].result_ids(), ["legacy"]);
    assert_eq!(c.tools[0].name, "ls");
}

#[test]
fn bare_array_and_null_tools_round_trip() {
    let c = rt(&json!([{"role": "user", "content": "hi"}]), None);
    assert_eq!(c.format, Format::OpenAi);
    rt(&json!({"messages": [], "tools": null}), None);
    rt(&json!({"messages": [], "tools": []}), None);
}

fn anthropic_sample() -> Value {
    json!({
        "model": "claude-sonnet-4-5", "max_tokens": 1024,
        "system": [{"type": "text", "text": "You are careful.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "Read the file"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I should read it", "signature": "sig"},
                {"type": "redacted_thinking", "data": "xyzxyz"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "tu1", "name": "read", "input": {"path": "a.rs"}},
                {"type": "tool_use", "id": "tu2", "name": "read", "input": {"path": "b.rs"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "tu1", "content": "fn a() {}"},
                {"type": "tool_result", "tool_use_id": "tu2", "is_error": true,
                 "content": [{"type": "text", "text": "not found"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}]},
                {"type": "text", "text": "Also see the doc"},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "doc"}}
            ]}
        ],
        "tools": [{"name": "read", "description": "Read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
    })
}

#[test]
fn anthropic_round_trips_and_reads_every_block() {
    let c = rt(&anthropic_sample(), None);
    assert_eq!(c.format, Format::Anthropic);
    assert_eq!(c.system.as_deref(), Some("You are careful."));
    let a = &c.messages[1];
    assert_eq!(a.tool_calls.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["tu1", "tu2"]);
    assert_eq!(a.tool_calls[0].arguments, r#"{"path":"a.rs"}"#);
    assert!(matches!(a.parts[0], Part::Thinking(_)));
    assert_eq!(a.parts[1], Part::RedactedThinking(6));
    let u = &c.messages[2];
    assert_eq!(u.result_ids(), ["tu1", "tu2"]);
    assert!(matches!(&u.parts[1], Part::ToolResult { is_error: true, text, .. } if text == "not found"));
    assert_eq!(c.tools[0].parameters["properties"]["path"]["type"], "string");
}

#[test]
fn detection_and_explicit_override() {
    assert_eq!(
        Conversation::parse(r#"{"messages":[{"role":"user","content":"x"}]}"#, None).unwrap().format,
        Format::OpenAi
    );
    let anth = r#"{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]}]}"#;
    assert_eq!(Conversation::parse(anth, None).unwrap().format, Format::Anthropic);
    // A forced format never reads a document of another shape (issue 33,
    // cause C): Anthropic blocks are not Chat Completions content.
    let err = Conversation::parse(anth, Some(Format::OpenAi)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.message().contains("format 'openai'") && err.message().contains("'tool_result' block"), "{err}");
    let err =
        Conversation::parse(r#"{"messages":[{"role":"tool","content":"x"}]}"#, Some(Format::Anthropic)).unwrap_err();
    assert!(err.message().contains("message 0 has role 'tool'"), "{err}");
    // A plain message is valid in several formats: forcing any of them reads it.
    let plain = r#"{"messages":[{"role":"user","content":"x"}]}"#;
    assert_eq!(Conversation::parse(plain, Some(Format::Anthropic)).unwrap().messages.len(), 1);
}

#[test]
fn malformed_conversations_say_where() {
    let cases = [
        ("not json", "line 1"),
        ("42", "must be an object"),
        (r#"{"msgs": []}"#, "has no 'messages'"),
        (r#"{"messages": {}}"#, "messages: must be an array"),
        (r#"[{"role": 7}]"#, "messages[0]: 'role' must be a string"),
        (r#"[{"content": "x"}]"#, "messages[0]: has no 'role'"),
        (r#"[{"role": "wizard"}]"#, "unknown role 'wizard'"),
        (r#"[{"role": "user", "content": 5}]"#, "'content' must be"),
        (r#"[{"role": "user", "content": [{"text": "x"}]}]"#, "messages[0].content[0]: has no 'type'"),
        (r#"[{"role": "assistant", "tool_calls": [{"type": "function"}]}]"#, "messages[0].tool_calls[0]: has no 'id'"),
        (r#"{"messages": [], "tools": [{"type": "function", "function": {}}]}"#, "tools[0]: has no function 'name'"),
    ];
    for (text, needle) in cases {
        let err = Conversation::parse(text, None).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::InvalidJson), "{text}: {err}");
        assert!(err.message().contains(needle), "{text}: {err}");
    }
}

#[test]
fn deep_nesting_in_unknown_fields_is_a_limit() {
    let deep = format!(r#"[{{"role":"user","content":"x","extra":{}1{}}}]"#, "[".repeat(5000), "]".repeat(5000));
    let err = Conversation::parse(&deep, None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
}

/// `n` one-word user messages, comma-separated (no brackets), built once per
/// test so the limit tests stay fast.
fn user_messages(n: usize) -> String {
    let one = r#"{"role":"user","content":"x"}"#;
    let mut s = String::with_capacity(n * (one.len() + 1));
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(one);
    }
    s
}

#[test]
fn message_count_limit_at_and_one_past() {
    use crate::limits::MAX_MESSAGES;
    let at = user_messages(MAX_MESSAGES);
    let past = format!(r#"{at},{{"role":"user","content":"x"}}"#);
    let cases = [
        (format!("[{at}]"), format!("[{past}]"), None),
        (format!(r#"{{"model":"m","messages":[{at}]}}"#), format!(r#"{{"model":"m","messages":[{past}]}}"#), None),
        (
            format!(r#"{{"system":"s","messages":[{at}]}}"#),
            format!(r#"{{"system":"s","messages":[{past}]}}"#),
            Some(Format::Anthropic),
        ),
    ];
    for (ok, too_many, format) in cases {
        let c = Conversation::parse(&ok, format).unwrap();
        assert_eq!(c.messages.len(), MAX_MESSAGES);
        let err = Conversation::parse(&too_many, format).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
        assert!(
            err.message()
                .starts_with("conversation: has more than 100000 messages; the limit is 100000 (MAX_MESSAGES)"),
            "{err}"
        );
    }
}

#[test]
fn message_count_is_refused_while_reading() {
    use crate::limits::MAX_MESSAGES;
    // One message past the limit, then bytes that are not JSON: the reader
    // stops at the extra message and never reaches them.
    let text = format!(r#"{{"messages":[{},{{"role":"user","content":"x"}},!!! not json"#, user_messages(MAX_MESSAGES));
    let err = Conversation::parse(&text, None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    // Arrays elsewhere are not messages, and a nested `messages` key is not
    // the conversation's.
    let nested = format!(
        r#"{{"messages":[{{"role":"user","content":"x","messages":[{}]}}],"other":[{0}]}}"#,
        "1,".repeat(MAX_MESSAGES) + "1"
    );
    let c = Conversation::parse(&nested, None).unwrap();
    assert_eq!(c.messages.len(), 1);
}

#[test]
fn the_reader_builds_the_same_document_as_serde_json() {
    // Key order, numbers of every kind, escapes. (A repeated key, which
    // serde_json lets win last, is refused: see the test below.)
    let text = r#"{"z":1,"messages":[{"role":"user","content":"a\u00e9\n","n":-5,"f":1.5e300,"big":18446744073709551615,"x":true,"y":null}],"a":{"b":[1,{"c":2}]},"messages2":0}"#;
    let mine = reader::read(text).unwrap();
    let theirs: Value = serde_json::from_str(text).unwrap();
    assert_eq!(mine, theirs);
    assert_eq!(serde_json::to_string(&mine).unwrap(), serde_json::to_string(&theirs).unwrap());
    for scalar in ["42", "-1", "2.5", "\"s\"", "true", "null"] {
        assert_eq!(reader::read(scalar).unwrap(), serde_json::from_str::<Value>(scalar).unwrap(), "{scalar}");
    }
}

// Issue 15: shapes providers accept (answered 200 in recorded requests).

#[test]
fn anthropic_mid_conversation_system_and_server_blocks_are_accepted_and_round_trip() {
    let v = json!({
        "model": "claude-sonnet-4-5", "system": "top",
        "messages": [
            {"role": "user", "content": "find it"},
            {"role": "system", "content": "A note injected mid-conversation."},
            {"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust"}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                    {"type": "web_search_result", "title": "The Rust language", "url": "https://x.invalid", "encrypted_content": "QUJD"}
                ]},
                {"type": "compaction", "content": "summary of earlier turns"},
                {"type": "some_future_block", "text": "future text"}
            ]},
            {"role": "user", "content": [{"type": "search_result", "source": "s", "title": "t", "content": [{"type": "text", "text": "found"}]}]}
        ],
        "tools": [{"type": "web_search_20250305", "name": "web_search"}, {"type": "mcp_toolset", "mcp_server_name": "files"}]
    });
    let c = rt(&v, Some(Format::Anthropic));
    assert_eq!(c.messages[1].role, Role::System);
    let kinds: Vec<&str> = c.messages[2]
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Block { kind, .. } => Some(kind.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["server_tool_use", "web_search_tool_result", "compaction", "some_future_block"]);
    // Counted by their text: the title is in, the encrypted content and ids are not.
    let Part::Block { text, .. } = &c.messages[2].parts[1] else { panic!() };
    assert_eq!(text, "The Rust language");
    assert_eq!(c.tools[1].name, "files");
}

#[test]
fn anthropic_unknown_block_is_counted_by_its_text_not_a_flat_rate() {
    let big = "word ".repeat(20_000);
    let v = json!({"messages": [{"role": "user", "content": [{"type": "compaction", "content": big}]}], "system": "s"});
    let c = Conversation::parse(&v.to_string(), Some(Format::Anthropic)).unwrap();
    let (acct, _) =
        crate::window::Accountant::for_model(&crate::ModelRegistry::builtin(), "claude-sonnet-4-0").unwrap();
    assert!(acct.message(&c.messages[0]).unwrap() > 15_000);
}

#[test]
fn anthropic_image_inside_tool_result_is_counted() {
    // A 1x1 PNG header claiming 750x1000 pixels.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAu4AAAPoCAYAAAA=";
    let v = json!({"system": "s", "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
        {"type": "text", "text": "shot"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    ]}]}]});
    let c = rt(&v, Some(Format::Anthropic));
    assert!(matches!(c.messages[0].parts[1], Part::Image { width: Some(750), height: Some(1000), .. }));
    let (acct, _) =
        crate::window::Accountant::for_model(&crate::ModelRegistry::builtin(), "claude-sonnet-4-0").unwrap();
    assert!(acct.message(&c.messages[0]).unwrap() >= 1000);
}

#[test]
fn image_sizes_from_headers_and_cut_data() {
    assert_eq!(image_size("iVBORw0KGgoAAAANSUhEUgAAAu4AAAPoCAYAAAA="), Some((750, 1000)));
    assert_eq!(image_size("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAu4AAAPoCAYAAAA="), Some((750, 1000)));
    // GIF89a, 3x2.
    assert_eq!(image_size("R0lGODlhAwACAA=="), Some((3, 2)));
    // Cut before the size, not an image, empty, a data URL without a comma.
    assert_eq!(image_size("iVBORw0KGgo"), None);
    assert_eq!(image_size("aGVsbG8gd29ybGQ="), None);
    assert_eq!(image_size(""), None);
    assert_eq!(image_size("data:image/png;base64"), None);
    // A JPEG whose segment length runs past the data.
    assert_eq!(image_size("/9j/4AAQSkZJRgABAQ"), None);
}

#[test]
fn openai_custom_tools_calls_and_provider_tool_types_are_accepted() {
    let v = json!({
        "model": "gpt-5",
        "messages": [
            {"role": "user", "content": "run it"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "custom", "custom": {"name": "code_exec", "input": "print(1)"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "1"}
        ],
        "tools": [
            {"type": "custom", "custom": {"name": "code_exec", "description": "Runs code", "format": {"type": "text"}}},
            {"type": "openrouter:web_search", "parameters": {"max_results": 3}}
        ]
    });
    let c = rt(&v, Some(Format::OpenAi));
    assert_eq!(c.messages[1].tool_calls[0].name, "code_exec");
    assert_eq!(c.messages[1].tool_calls[0].arguments, "print(1)");
    assert_eq!(c.tools[0].name, "code_exec");
    assert_eq!(c.tools[1].name, "openrouter:web_search");
}

#[test]
fn tools_and_calls_without_a_name_are_rejected_with_their_path() {
    let e = Conversation::parse(
        r#"{"messages": [], "tools": [{"type": "function", "function": {}}]}"#,
        Some(Format::OpenAi),
    )
    .unwrap_err();
    assert!(e.to_string().contains("tools[0]: has no function 'name'"), "{e}");
    let e = Conversation::parse(r#"{"messages": [], "tools": [{"description": "x"}]}"#, Some(Format::Anthropic))
        .unwrap_err();
    assert!(e.to_string().contains("tools[0]: has no 'name' (nor a 'type')"), "{e}");
    let e = Conversation::parse(
        r#"{"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "type": "custom"}]}]}"#,
        Some(Format::OpenAi),
    )
    .unwrap_err();
    assert!(e.to_string().contains("has no 'function' object (nor a 'custom' one)"), "{e}");
    let e = Conversation::parse(
        r#"{"system": "s", "messages": [{"role": "tool", "content": "x"}]}"#,
        Some(Format::Anthropic),
    )
    .unwrap_err();
    assert!(e.to_string().contains("role 'tool'") && e.to_string().contains("format 'anthropic'"), "{e}");
}

#[test]
fn pdf_pages_are_counted_from_the_data() {
    let pdf = |body: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(body)
    };
    let two = pdf("%PDF-1.4\n1 0 obj << /Type /Pages /Count 2 >>\n2 0 obj << /Type /Page >>\n3 0 obj <</Type/Page>>\n");
    assert_eq!(pdf_pages(&two), 2);
    assert_eq!(pdf_pages(&pdf("%PDF-1.7 compressed")), 1);
    assert_eq!(pdf_pages("not base64 at all!"), 1);
    let v = json!({"system": "s", "messages": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": two}}
    ]}]});
    let c = rt(&v, Some(Format::Anthropic));
    assert_eq!(c.messages[0].parts[0], Part::Pdf { pages: 2 });
}

/// Issue 14 bug 3: untouched numbers came back re-formatted
/// (`123456789012345678901234567890` as `1.2345678901234568e+29`, `-0`,
/// `1E5`, `0.10` and `1e-400` altered). They come back with every digit
/// as written, in messages, tools and the envelope, in both formats. The
/// one normalisation is serde_json's for exponents: `E` is written `e`
/// with an explicit sign (`1E5` becomes `1e+5`, the same number).
#[test]
fn untouched_numbers_round_trip_as_written() {
    let forms = [
        "123456789012345678901234567890",
        "1e5",
        "2E-3",
        "-0",
        "1E5",
        "0.10",
        "1e-400",
        "-1.5e+300",
        "18446744073709551616",
    ];
    for n in forms {
        let openai = format!(
            r#"{{"model":"m","x":{n},"messages":[{{"role":"user","content":"hi","x-n":{n},"arr":[{n},{{"k":{n}}}]}}],"tools":[{{"type":"function","function":{{"name":"f","parameters":{{"type":"object","default":{n}}}}}}}]}}"#
        );
        let anthropic = format!(
            r#"{{"system":"s","x":{n},"messages":[{{"role":"user","content":[{{"type":"text","text":"hi","x-n":{n}}}]}}]}}"#
        );
        for (doc, f) in [(openai, Format::OpenAi), (anthropic, Format::Anthropic)] {
            let c = Conversation::parse(&doc, Some(f)).unwrap();
            assert_eq!(
                c.to_json().unwrap(),
                doc.replace("1E5", "1e+5").replace("1e5", "1e+5").replace("2E-3", "2e-3"),
                "{n} in {f:?}"
            );
        }
    }
}

/// Issue 14 bug 9: one rule for repeated keys. Every object turnfit reads
/// refuses a key given twice, wherever it sits in a conversation.
#[test]
fn a_repeated_key_is_refused_anywhere_in_a_conversation() {
    for doc in [
        r#"{"messages":[],"messages":[]}"#,
        r#"[{"role":"user","role":"assistant","content":"x"}]"#,
        r#"[{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}]"#,
        r#"{"model":"m","meta":{"a":1,"a":2},"messages":[]}"#,
    ] {
        let e = Conversation::parse(doc, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidJson, "{doc}: {e}");
        assert!(e.message().contains("duplicate key"), "{e}");
    }
    let c = Conversation::parse("[]", Some(Format::OpenAi)).unwrap();
    let e = c.parse_message(r#"{"role":"user","content":"a","content":"b"}"#).unwrap_err();
    assert!(e.message().contains("duplicate key `content`"), "{e}");
}

/// The recorded-request check every codec shares: at the full count, 5 under,
/// half and a quarter, under every strategy, compaction fits and keeps the
/// invariants (its count is a recount, the result validates clean, the system
/// prompt and the named top-level `fields` are unchanged), or refuses with
/// DOES_NOT_FIT.
pub(crate) fn fits_every_budget(c: &Conversation, a: &crate::window::Accountant, fields: &[&str]) {
    use crate::window::{self, Policy, Strategy};
    let full = a.conversation(c).unwrap();
    for limit in [full, full - 5, full / 2, full / 4] {
        for strategy in [Strategy::Recency, Strategy::Relevance, Strategy::Hybrid, Strategy::Summarize] {
            let p = Policy { strategy, limit_tokens: limit, target_tokens: limit, ..Policy::default() };
            match window::compact(c, &p, a) {
                Ok(r) => {
                    assert!(r.tokens_after <= limit);
                    assert_eq!(r.tokens_after, a.conversation(&r.conversation).unwrap());
                    assert!(window::validate(&r.conversation).is_empty());
                    assert_eq!(r.conversation.system, c.system);
                    for f in fields {
                        assert_eq!(r.conversation.field(f), c.field(f), "{f}");
                    }
                }
                Err(e) => assert_eq!(e.kind(), crate::ErrorKind::DoesNotFit, "{e}"),
            }
        }
    }
}

/// Issue 33, cause C: every ordered pair of formats. A request carrying its
/// format's marks reads under that format; forced to any other, it is
/// `InvalidArgument` naming the forced format, never an empty conversation.
#[test]
fn a_forced_format_refuses_every_other_formats_document() {
    let docs = [
        (
            Format::OpenAi,
            json!({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}),
        ),
        (
            Format::Responses,
            json!({"instructions": "s", "input": [{"role": "user", "content": "hi"},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "ok"}]}),
        ),
        (
            Format::Anthropic,
            json!({"messages": [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]}]}),
        ),
        (
            Format::Gemini,
            json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"r": "ok"}}}]}]}),
        ),
        (
            Format::Bedrock,
            json!({"messages": [{"role": "user", "content": [{"text": "hi"}]},
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "c1", "name": "f", "input": {}}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "c1", "content": [{"text": "ok"}]}}]}]}),
        ),
        (
            Format::AiSdk,
            json!({"messages": [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "f", "input": {}}]},
                {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "f",
                    "output": {"type": "text", "value": "ok"}}]}]}),
        ),
    ];
    for (own, doc) in &docs {
        let text = doc.to_string();
        assert_eq!(Conversation::parse(&text, None).unwrap().format, *own, "{text}");
        for (forced, _) in &docs {
            let r = Conversation::parse(&text, Some(*forced));
            if forced == own {
                assert_eq!(r.unwrap().messages.len(), 3 + usize::from(*own == Format::OpenAi), "{text}");
                continue;
            }
            let e = r.expect_err(&format!("{} forced on {text}", forced.as_str()));
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
            let want = format!("format '{}' does not match the document", forced.as_str());
            assert!(e.message().contains(&want) && e.message().contains(own.as_str()), "{e}");
        }
    }
    // The issue's call: a plain Chat Completions request forced to Gemini,
    // Responses or Bedrock; a bare array of Gemini contents forced to Chat.
    let plain = r#"{"messages":[{"role":"user","content":"hello"}]}"#;
    for f in [Format::Gemini, Format::Responses, Format::Bedrock] {
        assert!(Conversation::parse(plain, Some(f)).is_err(), "{f:?}");
    }
    let bare = r#"[{"role":"user","parts":[{"text":"hi"}]}]"#;
    let e = Conversation::parse(bare, Some(Format::OpenAi)).unwrap_err();
    assert!(e.message().contains("'parts' and no 'content'"), "{e}");
    // One message pushed in another format is refused the same way.
    let c = Conversation::parse(plain, None).unwrap();
    let e = c.parse_message(r#"{"role":"model","parts":[{"text":"x"}]}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// Issue 36: a document a binding built from its host's objects reads as
/// the same conversation as its JSON text, in every format (the recorded
/// requests under tests/fixtures/formats and chats, and the samples above),
/// and is held to the text's limits.
#[test]
fn from_value_reads_what_parse_reads() {
    let mut docs: Vec<String> = vec![openai_sample().to_string(), anthropic_sample().to_string()];
    for dir in ["formats/responses", "formats/gemini", "formats/bedrock", "chats"] {
        let path = format!("{}/../tests/fixtures/{dir}", env!("CARGO_MANIFEST_DIR"));
        for entry in std::fs::read_dir(&path).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "json") {
                docs.push(std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    assert!(docs.len() >= 5, "{} documents", docs.len());
    for text in &docs {
        let v: Value = crate::json::parse_value("doc", text).unwrap();
        for format in [None, Some(Format::OpenAi), Some(Format::Anthropic), Some(Format::Gemini)] {
            let by_text = Conversation::parse(text, format);
            let by_value = Conversation::from_value(v.clone(), text.len(), format);
            match (by_text, by_value) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(a), Err(b)) => assert_eq!((a.kind(), a.message()), (b.kind(), b.message())),
                (a, b) => panic!("{format:?}: text {a:?}, value {b:?}"),
            }
        }
    }
    // The size limit is the text's length against MAX_JSON_BYTES.
    let max = crate::limits::MAX_JSON_BYTES;
    let small = json!([{"role": "user", "content": "hi"}]);
    assert!(Conversation::from_value(small.clone(), max, None).is_ok());
    let e = Conversation::from_value(small, max + 1, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    assert_eq!(e.message(), Conversation::parse(&" ".repeat(max + 1), None).unwrap_err().message());
    // More than MAX_MESSAGES messages, bare or under `messages`, `input` or
    // `contents`: refused as the reader refuses them (without its position).
    let n = crate::limits::MAX_MESSAGES;
    let many = Value::Array(vec![json!({"role": "user", "content": "hi"}); n + 1]);
    for doc in [many.clone(), json!({"messages": many}), json!({"input": many}), json!({"contents": many})] {
        let e = Conversation::from_value(doc.clone(), 10, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded);
        let text_error = Conversation::parse(&doc.to_string(), None).unwrap_err();
        assert!(text_error.message().starts_with(e.message()), "{} / {}", text_error.message(), e.message());
    }
    let at_limit = Value::Array(vec![json!({"role": "user", "content": "hi"}); n]);
    assert_eq!(Conversation::from_value(at_limit, 10, None).unwrap().messages.len(), n);
}

/// `indexed` writes what `format!` wrote for error paths.
#[test]
fn indexed_paths_are_the_formatted_ones() {
    for i in [0usize, 7, 9, 10, 99, 100, 12_345, usize::MAX] {
        assert_eq!(indexed("", "messages", i), format!("messages[{i}]"));
        assert_eq!(indexed("messages[3]", ".tool_calls", i), format!("messages[3].tool_calls[{i}]"));
    }
}

use proptest::prelude::*;
use serde_json::{json, Value};

use super::grammar::{balanced, is_path, scan, Kind};
use super::*;
use crate::chat::{Conversation, Message, Part, Role};
use crate::Encoding;

fn tok() -> Tokenizer {
    Tokenizer::new(Encoding::O200kBase).unwrap()
}

/// Everything the digest may quote: texts, raw arguments and their decoded
/// string values.
pub(crate) fn haystack(msgs: &[Message]) -> String {
    let mut s = String::new();
    for m in msgs {
        s.push_str(&m.text());
        s.push('\n');
        for c in &m.tool_calls {
            s.push_str(&c.arguments);
            s.push('\n');
            if let Ok(v) = serde_json::from_str::<Value>(&c.arguments) {
                let mut stack = vec![v];
                while let Some(v) = stack.pop() {
                    match v {
                        Value::String(x) => {
                            s.push_str(&x);
                            s.push('\n');
                        }
                        Value::Array(a) => stack.extend(a),
                        Value::Object(o) => stack.extend(o.into_iter().map(|(_, v)| v)),
                        _ => {}
                    }
                }
            }
        }
    }
    s
}

/// The checks the issue asks for, on any span and budget. Returns the digest.
pub(crate) fn check(msgs: &[Message], budget: usize) -> Digest {
    let tok = tok();
    let starts = round_starts(msgs);
    let d = build(msgs, &starts, &tok, budget, &Section::ALL).unwrap();
    assert!(tok.count(&d.text).unwrap() <= budget, "over budget {budget}:\n{}", d.text);
    assert_eq!(build(msgs, &starts, &tok, budget, &Section::ALL).unwrap(), d, "deterministic");
    let hay = haystack(msgs);
    let mut facts = Vec::new();
    scan(&d.text, &mut facts);
    for (kind, f) in &facts {
        assert!(balanced(f), "unbalanced fact {f}");
        if *kind == Kind::Path {
            assert!(is_path(f) && hay.contains(f.as_str()), "path {f} is not verbatim in the span:\n{}", d.text);
        }
    }
    let calls: usize = msgs.iter().map(|m| m.tool_calls.len()).sum();
    assert_eq!(d.calls, calls);
    let cov = d.coverage;
    if cov != layout::Coverage::default() || calls == 0 {
        assert_eq!(cov.listed_calls + cov.counted_calls, calls, "every call listed or counted:\n{}", d.text);
        assert_eq!(cov.listed_errors + cov.counted_errors, d.errors, "every error listed or counted:\n{}", d.text);
    }
    d
}

fn parse(v: Value) -> Conversation {
    Conversation::parse(&v.to_string(), None).unwrap()
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
}

/// A SWE-agent-like loop: look around, reproduce, edit, test until green.
fn swe_loop(rounds: usize) -> Conversation {
    let mut m = vec![
        json!({"role": "system", "content": "You are a software engineer. Use the tools."}),
        json!({"role": "user", "content": "TimeDelta serialization precision is off in marshmallow/fields.py; fix it."}),
    ];
    for k in 0..rounds {
        let id = format!("call_{k}");
        let (intent, name, args, result) = match k % 6 {
            0 => (
                "Let me search for the field.",
                "bash",
                json!({"command": "grep -rn \"class TimeDelta\" src/marshmallow/"}),
                "src/marshmallow/fields.py:1432:class TimeDelta(Field):".to_owned(),
            ),
            1 => (
                "I'll open the file at that line.",
                "str_replace_editor",
                json!({"command": "view", "path": "/repo/src/marshmallow/fields.py", "view_range": [1432, 1480]}),
                format!(
                    "Here's the result of running `cat -n` on /repo/src/marshmallow/fields.py:\n{}",
                    "  1440  return int(value.total_seconds() / base_unit.total_seconds())\n".repeat(20)
                ),
            ),
            2 => (
                "Now reproduce the bug.",
                "str_replace_editor",
                json!({"command": "create", "path": "/repo/reproduce.py", "file_text": "from marshmallow.fields import TimeDelta\nprint(td_field.serialize(\"td_field\", obj))\n"}),
                "File created successfully at: /repo/reproduce.py".to_owned(),
            ),
            3 => (
                "Run it.",
                "bash",
                json!({"command": "python /repo/reproduce.py"}),
                if k < rounds / 2 {
                    "Traceback (most recent call last):\n  File \"/repo/reproduce.py\", line 2, in <module>\nNameError: name 'td_field' is not defined".to_owned()
                } else {
                    "345".to_owned()
                },
            ),
            4 => (
                "Fix the rounding.",
                "str_replace_editor",
                json!({"command": "str_replace", "path": "/repo/src/marshmallow/fields.py", "old_str": "int(value", "new_str": "int(round(value"}),
                "The file /repo/src/marshmallow/fields.py has been edited.".to_owned(),
            ),
            _ => (
                "Run the tests.",
                "bash",
                json!({"command": "cd /repo && python -m pytest tests/test_fields.py -q"}),
                if k + 6 < rounds {
                    "F.....\n===== 1 failed, 5 passed in 0.12s =====".to_owned()
                } else {
                    "......\n===== 6 passed in 0.10s =====".to_owned()
                },
            ),
        };
        m.push(json!({"role": "assistant", "content": format!("{intent} Then see what it prints."), "tool_calls": [call(&id, name, args)]}));
        let result = if k % 6 == 0 {
            format!("{result}\n(see https://docs.python.org/3/library/datetime.html#timedelta-objects)")
        } else {
            result
        };
        m.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
        if k == rounds / 2 {
            m.push(json!({"role": "user", "content": "Please also keep the old behaviour for integers."}));
        }
    }
    parse(json!({"messages": m}))
}

#[test]
fn swe_loop_digest_has_the_layout_and_the_facts() {
    let c = swe_loop(24);
    let span = &c.messages[2..];
    let d = check(span, 2000);
    let t = &d.text;
    assert!(t.starts_with("Summary of "), "{t}");
    for needle in [
        "User requests:",
        "\"Please also keep the old behaviour for integers.\"",
        "Actions (oldest first):",
        "bash `python /repo/reproduce.py` -> error: NameError: name 'td_field' is not defined",
        "-> error: ===== 1 failed, 5 passed in 0.12s =====",
        "State:",
        "- Files changed: /repo/reproduce.py, /repo/src/marshmallow/fields.py",
        "- Repeated: `cd /repo && python -m pytest tests/test_fields.py -q` (4 runs), last ok: ===== 6 passed in 0.10s =====",
        "Facts:",
        "https://docs.python.org/3/library/datetime.html#timedelta-objects",
        "src/marshmallow/fields.py",
    ] {
        assert!(t.contains(needle), "{needle} missing from:\n{t}");
    }
    assert!(!t.contains("Open error"), "every error was followed by a success:\n{t}");
    assert_eq!(d.errors, 2 + 3, "two failing runs of the script, three of the tests:\n{t}");
}

#[test]
fn open_errors_are_the_ones_not_followed_by_a_success() {
    // The script fails in the first half only; the tests pass on the last
    // run, which is left out of the span.
    let c = swe_loop(12);
    let span = &c.messages[2..c.messages.len() - 2];
    let d = check(span, 2000);
    assert!(
        d.text.contains("- Open error: [6] `cd /repo && python -m pytest tests/test_fields.py -q`: ===== 1 failed"),
        "{}",
        d.text
    );
    assert_eq!(d.text.matches("Open error").count(), 1, "the script's error was cleared by a later run:\n{}", d.text);
}

#[test]
fn over_budget_older_lines_merge_and_every_call_is_counted() {
    let c = swe_loop(120);
    let span = &c.messages[2..];
    for budget in [150, 300, 500, 1000] {
        let d = check(span, budget);
        assert!(d.coverage.counted_calls > 0, "{budget}: {}", d.text);
        assert!(d.text.contains("`bash` ("), "{}", d.text);
    }
    let small = check(span, 300);
    let big = check(span, 1000);
    assert!(small.coverage.listed_calls < big.coverage.listed_calls);
}

#[test]
fn anthropic_shape_pairs_results_by_block() {
    let c = parse(json!({"system": "be brief", "messages": [
        {"role": "user", "content": "Fix the build in crates/core/src/lib.rs."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking the build first."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cargo build"}},
            {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "crates/core/src/lib.rs"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "error[E0425]: cannot find value `x` in this scope\n --> crates/core/src/lib.rs:3:5"},
            {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "fn main() {}"}]}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t3", "name": "Edit", "input": {"file_path": "crates/core/src/lib.rs", "old_string": "x", "new_string": "1"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t3", "content": "ok"}]},
        {"role": "user", "content": "thanks"}
    ]}));
    let d = check(&c.messages, 1000);
    let t = &d.text;
    assert!(
        t.contains("Bash `cargo build` -> error: error[E0425]: cannot find value 'x' in this scope")
            || t.contains("Bash `cargo build` -> error: error[E0425]: cannot find value `x` in this scope"),
        "{t}"
    );
    assert!(t.contains("Read `crates/core/src/lib.rs` -> ok: fn main() {}"), "{t}");
    assert!(t.contains("- Files changed: crates/core/src/lib.rs"), "{t}");
    assert!(t.contains("- Open error: [2] `cargo build`"), "{t}");
    assert!(t.contains("\"Fix the build in crates/core/src/lib.rs.\"") && t.contains("\"thanks\""), "{t}");
}

#[test]
fn sections_can_be_chosen() {
    let c = swe_loop(12);
    let tok = tok();
    let starts = round_starts(&c.messages[2..]);
    let only = build(&c.messages[2..], &starts, &tok, 1000, &[Section::Facts]).unwrap();
    assert!(only.text.contains("Facts:") && !only.text.contains("Actions") && !only.text.contains("State:"));
    let none = build(&c.messages[2..], &starts, &tok, 1000, &[]).unwrap();
    assert_eq!(none.text.lines().count(), 1, "{}", none.text);
    let opts: DigestOptions = serde_json::from_str(r#"{"max_tokens": 300, "sections": ["actions", "state"]}"#).unwrap();
    assert_eq!(opts.sections, [Section::Actions, Section::State]);
    assert_eq!(opts.budget(500), 300);
    assert_eq!(DigestOptions::default().budget(500), 500);
    assert!(serde_json::from_str::<DigestOptions>(r#"{"sections": ["everything"]}"#).is_err());
    assert!(serde_json::from_str::<DigestOptions>(r#"{"max_token": 3}"#).is_err());
}

#[test]
fn the_shipped_sessions() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/data");
    for name in ["coding-session.json", "anthropic-session.json", "interrupted-session.json"] {
        let text = std::fs::read_to_string(root.join(name)).unwrap();
        let c = Conversation::parse(&text, None).unwrap();
        for budget in [0, 1, 20, 120, 500, 2000] {
            check(&c.messages, budget);
        }
    }
}

#[test]
fn the_old_wrapper_still_works() {
    let c = parse(json!([{"role":"user","content":"Fix src/parser.rs, see https://example.com/issue/42."},
        {"role":"assistant","content":null,"tool_calls":[call("a", "run_tests", json!({"filter":"parser::tests"}))]},
        {"role":"tool","tool_call_id":"a","content":"test parser::tests::nested_braces ... FAILED"}]));
    let tok = tok();
    let d = digest(&c.messages, &[0, 1], &tok, 500).unwrap();
    for needle in ["src/parser.rs", "https://example.com/issue/42", "run_tests", "parser::tests::nested_braces"] {
        assert!(d.contains(needle), "{needle} missing from:\n{d}");
    }
    assert!(tok.count(&digest(&c.messages, &[0, 1], &tok, 20).unwrap()).unwrap() <= 20);
}

fn arb_text() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("src/a.py".to_owned()),
        Just("<x>.py".to_owned()),
        Just("obj[\"k".to_owned()),
        Just("https://example.com/a_(b)".to_owned()),
        Just("Traceback (most recent call last):\nValueError: x".to_owned()),
        Just("===== 1 failed, 2 passed in 0.1s =====".to_owned()),
        Just("exit code: 2".to_owned()),
        Just("é✓漢字 ".to_owned()),
        Just("\n".to_owned()),
        "[ -~]{0,40}",
        "\\PC{0,10}",
    ];
    prop::collection::vec(pieces, 0..8).prop_map(|v| v.join(" "))
}

fn arb_message(k: usize) -> impl Strategy<Value = Value> {
    let id = format!("c{}", k % 5); // ids repeat, results may be missing or stray
    prop_oneof![
        arb_text().prop_map(|t| json!({"role": "user", "content": t})),
        (arb_text(), arb_text(), prop::bool::ANY).prop_map(move |(t, a, shell)| {
            let args = if shell { json!({"command": a}).to_string() } else { a };
            json!({"role": "assistant", "content": t,
                   "tool_calls": [{"id": id, "type": "function", "function": {"name": if shell { "bash" } else { "edit" }, "arguments": args}}]})
        }),
        arb_text().prop_map(move |t| json!({"role": "tool", "tool_call_id": format!("c{}", k % 5), "content": t})),
        arb_text().prop_map(|t| json!({"role": "assistant", "content": t})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn random_spans_never_exceed_the_budget_or_panic(
        msgs in prop::collection::vec((0usize..1000).prop_flat_map(arb_message), 0..14),
        budget in 0usize..400,
    ) {
        let c = Conversation::parse(&Value::Array(msgs).to_string(), Some(crate::chat::Format::OpenAi)).unwrap();
        check(&c.messages, budget);
    }
}

/// The committed real trajectories and chats (tests/fixtures, provenance in
/// their PROVENANCE.md), top level only (`raw/` holds the sources).
pub(crate) fn fixtures() -> Vec<(String, Conversation)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut out = Vec::new();
    for dir in ["trajectories", "chats"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.ends_with("manifest.json"))
            .collect();
        names.sort();
        for p in names {
            let text = std::fs::read_to_string(&p).unwrap();
            let c = Conversation::parse(&text, None).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            out.push((p.file_name().unwrap().to_string_lossy().into_owned(), c));
        }
    }
    out
}

/// The span a summary replaces on an agent loop: after the task (the first
/// user message), before the last round.
pub(crate) fn summarized_span(c: &Conversation) -> &[Message] {
    let task = c.messages.iter().position(|m| m.role == Role::User).map_or(0, |i| i + 1);
    let starts = round_starts(&c.messages);
    let last = starts.last().copied().unwrap_or(0).max(task);
    &c.messages[task..last]
}

#[test]
fn real_trajectories_and_chats() {
    let all = fixtures();
    assert!(all.len() >= 8, "fixtures missing: {}", all.len());
    for (name, c) in &all {
        let span = summarized_span(c);
        let flagged: usize =
            span.iter().flat_map(|m| &m.parts).filter(|p| matches!(p, Part::ToolResult { is_error: true, .. })).count();
        for budget in [150, 500, 1000, 4000] {
            let d = check(span, budget);
            assert!(d.errors >= flagged, "{name}: every result the provider flagged is an error");
            assert!(d.text.starts_with("Summary of "), "{name} {budget}:\n{}", d.text);
        }
        // The whole conversation too (system prompt and task included).
        check(&c.messages, 1000);
    }
}

#[test]
fn hostile_arguments_and_outputs() {
    // Nesting deeper than serde_json's limit, malformed JSON, a huge output,
    // control characters and a lone quote: read as text, never a panic.
    let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    let huge = format!("{}\nValueError: at the end", "x/y.py ".repeat(200_000));
    let c = parse(json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "\"", "tool_calls": [
            call("a", "bash", json!(deep)),
            {"id": "b", "type": "function", "function": {"name": "edit", "arguments": "{\"path\": \"a.py\""}},
            {"id": "c", "type": "function", "function": {"name": "", "arguments": "\u{0}\u{1b}[31m"}}]},
        {"role": "tool", "tool_call_id": "a", "content": huge},
        {"role": "tool", "tool_call_id": "b", "content": "\u{0}"},
        {"role": "tool", "tool_call_id": "zzz", "content": "stray"}
    ]));
    for budget in [0, 10, 300, 3000] {
        let d = check(&c.messages, budget);
        assert_eq!(d.calls, 3);
    }
    let d = check(&c.messages, 3000);
    assert!(d.text.contains("-> error: ValueError: at the end"), "{}", d.text);
}

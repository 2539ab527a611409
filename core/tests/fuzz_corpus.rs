//! Replays every committed fuzz seed corpus of a core target through the
//! same checking function the fuzz target runs (fuzz/checks/<target>.rs,
//! included here by path so libfuzzer never enters this workspace). A crash
//! a fuzzer finds is fixed by committing its input under
//! fuzz/corpus/<target>/ together with the fix; this test keeps it fixed.
//! The C ABI target (`abi`) is replayed by the ffi crate's own test.

#[path = "../../fuzz/checks/common.rs"]
mod common;

#[path = "../../fuzz/checks/chat_codecs.rs"]
mod chat_codecs;
#[path = "../../fuzz/checks/chat_template.rs"]
mod chat_template;
#[path = "../../fuzz/checks/handoff.rs"]
mod handoff;
#[path = "../../fuzz/checks/model_locate.rs"]
mod model_locate;
#[path = "../../fuzz/checks/recovery.rs"]
mod recovery;
#[path = "../../fuzz/checks/skill_paths.rs"]
mod skill_paths;
#[path = "../../fuzz/checks/skills_frontmatter.rs"]
mod skills_frontmatter;
#[path = "../../fuzz/checks/tokenizer_file.rs"]
mod tokenizer_file;
#[path = "../../fuzz/checks/turn_carry.rs"]
mod turn_carry;
#[path = "../../fuzz/checks/turn_session.rs"]
mod turn_session;
#[path = "../../fuzz/checks/window_fit.rs"]
mod window_fit;
#[path = "../../fuzz/checks/window_tiers.rs"]
mod window_tiers;

use std::path::PathBuf;

/// Runs `check` over every seed of fuzz/corpus/<target>/, naming the file
/// that failed.
fn replay(target: &str, check: fn(&[u8])) {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for (f, data) in common::seeds(&corpus, target) {
        let result = std::panic::catch_unwind(|| check(&data));
        assert!(result.is_ok(), "{target}: check failed on {}", f.display());
    }
}

#[test]
fn model_locate_corpus() {
    replay("model_locate", model_locate::check);
}

#[test]
fn chat_codecs_corpus() {
    replay("chat_codecs", chat_codecs::check);
}

#[test]
fn window_fit_corpus() {
    replay("window_fit", window_fit::check);
}

#[test]
fn window_tiers_corpus() {
    replay("window_tiers", window_tiers::check);
}

#[test]
fn turn_carry_corpus() {
    replay("turn_carry", turn_carry::check);
}

#[test]
fn turn_session_corpus() {
    replay("turn_session", turn_session::check);
}

#[test]
fn skills_frontmatter_corpus() {
    replay("skills_frontmatter", skills_frontmatter::check);
}

#[test]
fn skill_paths_corpus() {
    replay("skill_paths", skill_paths::check);
}

#[test]
fn handoff_corpus() {
    replay("handoff", handoff::check);
}

#[test]
fn recovery_corpus() {
    replay("recovery", recovery::check);
}

#[test]
fn tokenizer_file_corpus() {
    replay("tokenizer_file", tokenizer_file::check);
}

#[test]
fn chat_template_corpus() {
    replay("chat_template", chat_template::check);
}

/// Found by `window_fit`: a user message with a stray `tool_call_id` was
/// parsed as a tool result, so validation called it orphaned while repair
/// (which only moves `tool` messages) left it, and `fit` returned a history
/// that failed validation. Only `tool` messages answer calls by id; the
/// stray field is kept verbatim. (Seed: fuzz/corpus/window_fit/regression-*.)
#[test]
fn regression_a_stray_tool_call_id_on_a_user_message_is_not_a_result() {
    use turnfit::chat::Conversation;
    use turnfit::window::{fit_json, validate};
    let input = r#"{"messages":[{"role":"system","content":"s"},{"role":"user","content":"x","tool_call_id":"c9"},{"role":"user","content":"y"}]}"#;
    let c = Conversation::parse(input, None).unwrap();
    assert!(c.messages[1].tool_call_id.is_none());
    assert!(c.messages[1].result_ids().is_empty());
    assert!(validate(&c).is_empty(), "{:?}", validate(&c));
    assert_eq!(c.to_json().unwrap(), input, "the stray field is written back untouched");
    let (out, _) = fit_json(input, r#"{"model":"gpt-4o"}"#).unwrap();
    assert!(validate(&Conversation::parse(&out, None).unwrap()).is_empty());
    // A real tool message still answers its call.
    let t = r#"[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]"#;
    let c = Conversation::parse(t, None).unwrap();
    assert_eq!(c.messages[1].tool_call_id.as_deref(), Some("c1"));
    assert!(validate(&c).is_empty());
}

/// Found by `handoff`: serde_json's default float parser is not correctly
/// rounded, so a number in host data (`custom_fields`, a conversation's
/// unknown fields) could change by one ulp on every pass through turnfit:
/// a 76-digit integer parsed to 1e75, was written as `1e75`, and read back
/// as 1.0000000000000001e75. The workspace enables serde_json's
/// `float_roundtrip`, so what turnfit writes reads back to the same number.
/// (Seed: fuzz/corpus/handoff/regression-float-roundtrip-*.)
#[test]
fn regression_numbers_in_host_data_survive_a_round_trip() {
    use turnfit::chat::Conversation;
    use turnfit::handoff::Handoff;
    let big = "9".repeat(76);
    let handoff = format!(
        r#"{{"version":"1.0","task_summary":"x","key_outputs":[],"metadata":{{"from_agent":"a","to_agent":"b","created_at":"2026-03-01T12:00:00Z"}},"custom_fields":{{"n":{big},"e":1e75,"f":0.30000000000000004,"g":2.2250738585072014e-308}}}}"#
    );
    let h = Handoff::parse(&handoff).unwrap();
    let once = h.to_json().unwrap();
    let again = Handoff::parse(&once).unwrap();
    assert_eq!(again, h);
    assert_eq!(again.to_json().unwrap(), once);
    let conv = format!(r#"{{"messages":[{{"role":"user","content":"hi"}}],"temperature":1e75,"x":{big}}}"#);
    let c = Conversation::parse(&conv, None).unwrap();
    let once = c.to_json().unwrap();
    assert_eq!(Conversation::parse(&once, None).unwrap(), c);
}

/// Found by `window_fit`: two assistant messages used the same tool-call id
/// and only the first was answered. The one result paired with the first
/// call, which hid the second call's missing result; compaction dropped the
/// first turn (result included) and kept the second call, and `fit`
/// returned a history with an orphaned call. Validation and repair now pair
/// each result with the nearest preceding unanswered call of its id, so the
/// second call is reported as orphaned and repair gives it a synthetic
/// result: `fit` succeeds and its output validates clean (but for the
/// reused id itself, which is reported and left alone).
/// (Seed: fuzz/corpus/window_fit/regression-duplicate-call-id-*.)
#[test]
fn regression_duplicate_call_ids_never_yield_an_orphaned_call() {
    use turnfit::chat::Conversation;
    use turnfit::window::{fit_json, validate, IssueKind};
    let call = |id: &str| {
        format!(
            r#"{{"role":"assistant","content":null,"tool_calls":[{{"id":"{id}","type":"function","function":{{"name":"run","arguments":"{{}}"}}}}]}}"#
        )
    };
    let input = format!(
        r#"{{"messages":[{{"role":"system","content":"sys"}},{{"role":"user","content":"{}"}},{},{{"role":"tool","tool_call_id":"c2","content":"{}"}},{{"role":"user","content":"next"}},{},{{"role":"user","content":"latest"}}]}}"#,
        "start ".repeat(100),
        call("c2"),
        "out ".repeat(300),
        call("c2"),
    );
    let kinds = |json: &str| {
        validate(&Conversation::parse(json, None).unwrap()).into_iter().map(|i| (i.kind, i.index)).collect::<Vec<_>>()
    };
    // The second call (message 5) is the unanswered one.
    assert_eq!(kinds(&input), [(IssueKind::DuplicateCallId, 5), (IssueKind::OrphanedCall, 5)]);
    for options in [r#"{"model":"gpt-4o","max_tokens":200,"policy":{"strategy":"recency"}}"#, r#"{"model":"gpt-4o"}"#] {
        let (out, report) = fit_json(&input, options).unwrap();
        let issues = kinds(&out);
        assert!(issues.iter().all(|(k, _)| *k == IssueKind::DuplicateCallId), "{options}: {issues:?}\n{out}");
        let synthesized: Vec<_> =
            report.changes.iter().filter(|c| c.action == turnfit::window::ChangeKind::SynthesizedResult).collect();
        assert_eq!(synthesized.len(), 1, "{options}: {:?}", report.changes);
        assert_eq!((synthesized[0].index, synthesized[0].id.as_deref()), (5, Some("c2")));
    }
    // Dropping the first turn keeps the second call with its synthetic result.
    let (out, _) = fit_json(&input, r#"{"model":"gpt-4o","max_tokens":200,"policy":{"strategy":"recency"}}"#).unwrap();
    assert!(!out.contains("out out"), "the first turn was dropped: {out}");
    assert!(
        out.contains(
            r#"{"role":"tool","tool_call_id":"c2","content":"Tool call was interrupted before it returned."}"#
        ),
        "{out}"
    );
}

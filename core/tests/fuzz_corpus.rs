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
#[path = "../../fuzz/checks/handoff.rs"]
mod handoff;
#[path = "../../fuzz/checks/recovery.rs"]
mod recovery;
#[path = "../../fuzz/checks/skill_paths.rs"]
mod skill_paths;
#[path = "../../fuzz/checks/skills_frontmatter.rs"]
mod skills_frontmatter;
#[path = "../../fuzz/checks/window_fit.rs"]
mod window_fit;

use std::path::PathBuf;

/// Runs `check` over every file of fuzz/corpus/<target>/, naming the file
/// that failed. Requires at least 50 seeds so the corpus cannot silently
/// go missing.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 50, "{target}: only {} seeds in {}", files.len(), dir.display());
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let result = std::panic::catch_unwind(|| check(&data));
        assert!(result.is_ok(), "{target}: check failed on {}", f.display());
    }
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

/// Found by `window_fit`: a user message with a stray `tool_call_id` was
/// parsed as a tool result, so validation called it orphaned while repair
/// (which only moves `tool` messages) left it, and `fit` returned a history
/// that failed validation. Only `tool` messages answer calls by id; the
/// stray field is kept verbatim. (Seed: fuzz/corpus/window_fit/regression-*.)
#[test]
fn regression_a_stray_tool_call_id_on_a_user_message_is_not_a_result() {
    use ctxkit::chat::Conversation;
    use ctxkit::window::{fit_json, validate};
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

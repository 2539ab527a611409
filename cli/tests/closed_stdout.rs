//! Every subcommand treats a closed standard output as a normal end: no
//! panic, exit status 0 (`turnfit preflight f.json | head -1` used to die
//! with a panic and status 101). The pipe's read end is closed before the
//! child starts, so every write fails with EPIPE and the test cannot pass
//! by winning a race.

use std::process::{Command, Stdio};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn run_with_closed_stdout(args: &[&str]) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_turnfit"))
        .current_dir(ROOT)
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("spawn turnfit");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert_eq!(out.status.code(), Some(0), "{args:?}: status {:?}, stderr: {stderr}", out.status);
}

#[test]
fn every_subcommand_ends_quietly_on_a_closed_pipe() {
    let session = "examples/data/coding-session.json";
    let cases: &[&[&str]] = &[
        &["count", "README.md"],
        &["count", "--json", "README.md", "Cargo.toml"],
        &["encode", "README.md"],
        &["encode", "--raw", "README.md"],
        &["decode", "24912", "2375"],
        &["decode", "--bytes", "24912", "2375"],
        &["decode", "--offsets", "24912", "2375"],
        &["models"],
        &["models", "gpt-4o"],
        &["models", "gpt-4o", "--json"],
        &["preflight", session, "--model", "gpt-4o"],
        &["fit", session, "--model", "gpt-4o", "--max-tokens", "16000", "--tool-output-max", "2000"],
        &["repair", "examples/data/interrupted-session.json", "--model", "gpt-4o"],
        &["skills", "list", "examples/data/skills"],
        &["skills", "show", "examples/data/skills", "code-review"],
        &["skills", "list", "examples/data/skills", "--budget", "200"],
        &["skills", "check", "examples/data/skills"],
        &["handoff", "check", "examples/data/handoffs/planner-to-coder.json"],
        &["handoff", "render", "examples/data/handoffs/planner-to-coder.json"],
        &["classify", "--provider", "openai", "--status", "429", "examples/data/errors/openai-rate-limit.json"],
        &["assemble", "examples/seeds/003-context-engine/state.json"],
        &["assemble", "examples/seeds/003-context-engine/state.json", "--json"],
    ];
    for args in cases {
        run_with_closed_stdout(args);
    }
}

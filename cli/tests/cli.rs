//! End-to-end tests of the `turnfit` binary: output shapes, exit codes, and
//! that counts equal tiktoken-rs (the oracle) for every encoding.

use std::process::{Command, Output};

mod common;
use common::turnfit;

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn tmp(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("turnfit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

const SAMPLE: &str = "Hello, world! Ünïcödé 日本語 👨‍👩‍👧‍👦 <|endoftext|>\r\n  fn main() { println!(\"{}\", 12345678); }\n";

#[test]
fn json_counts_equal_the_oracle_for_every_encoding() {
    let oracles = [
        ("cl100k_base", tiktoken_rs::cl100k_base().unwrap()),
        ("o200k_base", tiktoken_rs::o200k_base().unwrap()),
        ("p50k_base", tiktoken_rs::p50k_base().unwrap()),
        ("r50k_base", tiktoken_rs::r50k_base().unwrap()),
        ("o200k_harmony", tiktoken_rs::o200k_harmony().unwrap()),
        ("p50k_edit", tiktoken_rs::p50k_edit().unwrap()),
        // tiktoken-rs has no `gpt2`; its ranks are r50k_base's.
        ("gpt2", tiktoken_rs::r50k_base().unwrap()),
    ];
    let hostile = "a".repeat(100_000) + &" ".repeat(5000) + "x";
    for (name, bpe) in &oracles {
        for text in [SAMPLE, hostile.as_str()] {
            let o = turnfit(&["count", "--json", "--encoding", name], text.as_bytes());
            assert!(o.status.success(), "{}", stderr(&o));
            let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
            assert_eq!(v["file"], "-");
            assert_eq!(v["encoding"], *name);
            assert_eq!(v["bytes"], text.len());
            assert_eq!(v["tokens"], bpe.encode_ordinary(text).len(), "{name}");
        }
    }
}

#[test]
fn default_encoding_is_o200k_and_special_flag_recognizes() {
    let o = turnfit(&["count", "--json"], b"<|endoftext|>");
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["encoding"], "o200k_base");
    assert!(v["tokens"].as_u64().unwrap() > 1);
    let o = turnfit(&["count", "--json", "--special"], b"<|endoftext|>");
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["tokens"], 1);
}

#[test]
fn special_tokens_allowed_and_refused_by_set() {
    let text = b"<|endoftext|> hi <|fim_prefix|>";
    let count = |extra: &[&str]| {
        let o = turnfit(&[&["count", "--json", "--encoding", "cl100k_base"], extra].concat(), text);
        (o.status.code(), stdout(&o), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let tokens = |s: &str| serde_json::from_str::<serde_json::Value>(s.trim()).unwrap()["tokens"].as_u64().unwrap();
    let (_, all, _) = count(&["--allowed-special", "all"]);
    let (_, one, _) = count(&["--allowed-special", "<|endoftext|>"]);
    let (_, none, _) = count(&[]);
    assert_eq!(tokens(&all), 4);
    assert!(tokens(&none) > tokens(&one) && tokens(&one) > tokens(&all));
    let (code, _, err) = count(&["--allowed-special", "<|endoftext|>", "--disallowed-special", "all"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("'<|fim_prefix|>' at byte offset 17"), "{err}");
    let (code, _, _) = count(&["--special", "--allowed-special", "all"]);
    assert_eq!(code, Some(2), "--special conflicts with the sets");
}

#[test]
fn files_are_listed_with_a_total_and_errors_do_not_stop_the_rest() {
    let a = tmp("a.txt", b"hello world");
    let bad = tmp("bad.txt", b"ok \xe6\x97 broken");
    let b = tmp("b.txt", b"one two three");
    let missing = "/nonexistent/turnfit/file.txt";
    let o = turnfit(&["count", &a, &bad, missing, &b], b"");
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].trim_start().starts_with("2 ") && lines[0].ends_with("a.txt"));
    assert!(lines[1].ends_with("b.txt"));
    assert!(lines[2].trim_start().starts_with("5 total"), "{out}");
    let err = stderr(&o);
    assert!(err.contains("bad.txt: input is not valid UTF-8 at byte offset 3"), "{err}");
    assert!(err.contains(&format!("{missing}: No such file or directory")), "{err}");
    assert_eq!(err.lines().count(), 2, "one line per failure: {err}");
}

#[test]
fn json_lines_carry_model_and_exactness() {
    let a = tmp("m.txt", b"hello world");
    let o = turnfit(&["count", "--json", "--model", "claude-sonnet-4-5", &a, "-"], b"x");
    assert!(o.status.success());
    let lines: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["file"], a.as_str());
    assert_eq!(lines[1]["file"], "-");
    assert_eq!(lines[0]["model"], "claude-sonnet-4-5");
    assert_eq!(lines[0]["exact"], false);
}

#[test]
fn unknown_model_and_encoding_suggest_close_matches() {
    let o = turnfit(&["count", "--model", "gpt4o"], b"x");
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.starts_with("turnfit: unknown model 'gpt4o'; did you mean gpt-4o"), "{err}");
    assert_eq!(err.lines().count(), 1);
    let o = turnfit(&["count", "--encoding", "cl100k"], b"x");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).trim(), "turnfit: unknown encoding 'cl100k'; did you mean cl100k_base?");
    // Issue 31 item 5: with --model, --encoding is the encoding of a model
    // the registry does not know (a known model keeps its own).
    let o = turnfit(&["count", "--json", "--encoding", "cl100k_base", "--model", "gpt-4o"], b"x");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(serde_json::from_str::<serde_json::Value>(stdout(&o).trim()).unwrap()["encoding"], "o200k_base");
    let o = turnfit(&["count", "--json", "--encoding", "cl100k_base", "--model", "my-azure-deployment"], b"x");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(serde_json::from_str::<serde_json::Value>(stdout(&o).trim()).unwrap()["encoding"], "cl100k_base");
}

/// Issue 31 item 5: a model the registry does not know works in `fit`,
/// `preflight`, `repair` and `models` given its encoding and window; without
/// them it stays an error with suggestions; a zero or absurd window is a
/// specific error.
#[test]
fn custom_models_work_wherever_a_model_is_taken() {
    let file = agent_loop_file();
    let o = turnfit(&["fit", &file, "--model", "my-azure-gpt4o"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown model 'my-azure-gpt4o'"), "{}", stderr(&o));
    let custom =
        ["--model", "my-azure-gpt4o", "--encoding", "o200k_base", "--context-window", "3000", "--max-output", "500"];
    let report = std::env::temp_dir().join(format!("turnfit-fit-custom-{}.json", std::process::id()));
    let mut args = vec!["fit", file.as_str(), "--report", report.to_str().unwrap()];
    args.extend(custom);
    let o = turnfit(&args, b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        (r["model"].as_str(), r["max_tokens"].as_u64(), r["reserved_output"].as_u64()),
        (Some("my-azure-gpt4o"), Some(3000), Some(500))
    );
    assert!(r["tokens_after"].as_u64().unwrap() <= 2500);
    let mut args = vec!["preflight", file.as_str()];
    args.extend(custom);
    let o = turnfit(&args, b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let p: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (p["limit"].as_u64(), p["reserved_output"].as_u64(), p["exact"].as_bool()),
        (Some(3000), Some(500), Some(false))
    );
    let mut args = vec!["repair", file.as_str()];
    args.extend(custom);
    assert!(turnfit(&args, b"").status.success());
    let o =
        turnfit(&["models", "my-azure-gpt4o", "--json", "--encoding", "cl100k_base", "--context-window", "8192"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let m: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (m["encoding"].as_str(), m["context_window"].as_u64(), m["source"].as_str()),
        (Some("cl100k_base"), Some(8192), Some("fallback"))
    );
    // A known model takes new limits.
    let o = turnfit(&["preflight", &file, "--model", "gpt-4o", "--context-window", "50000"], b"");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()["limit"], 50000);
    for (flag, value, want) in [
        ("--context-window", "0", "context_window must be positive"),
        ("--context-window", "4294967296", "context_window is 4294967296 tokens; the limit is 4294967295"),
        ("--max-output", "0", "max_output_tokens must be positive"),
        ("--encoding", "cl100k", "unknown encoding 'cl100k'"),
    ] {
        for cmd in ["fit", "preflight"] {
            let mut args = vec![cmd, file.as_str(), "--model", "my-azure-gpt4o", flag, value];
            if flag != "--encoding" {
                args.extend(["--encoding", "o200k_base"]);
            }
            let o = turnfit(&args, b"");
            assert_eq!(o.status.code(), Some(2), "{cmd} {flag} {value}");
            assert!(stderr(&o).contains(want), "{cmd} {flag} {value}: {}", stderr(&o));
            assert_eq!(stderr(&o).lines().count(), 1);
        }
    }
}

/// Issue 31 item 2: one large tool output in the newest round (system +
/// task + one call + its ~95,000-token result, a generated 3,000-line PR
/// listing, tests/fixtures/long-tool-output) fits 16,000 tokens with the
/// defaults, its failure, error, traceback and panic lines and the totals
/// kept, the cut reported with the tool's name.
#[test]
fn fit_cuts_a_huge_newest_tool_output_by_default_keeping_its_error_lines() {
    let file = "../tests/fixtures/long-tool-output/pr-listing.openai.json";
    let report = std::env::temp_dir().join(format!("turnfit-fit-huge-{}.json", std::process::id()));
    let o = turnfit(
        &["fit", file, "--model", "gpt-4o", "--max-tokens", "16000", "--report", report.to_str().unwrap()],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let input: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let msgs = out.as_array().unwrap();
    assert_eq!(msgs.len(), 4, "system, task, call and result all kept");
    assert_eq!(msgs[..3], input.as_array().unwrap()[..3], "untouched messages are equal");
    let result = msgs[3]["content"].as_str().unwrap();
    for line in [
        "FAILED tests/test_window.py::test_fit_newest_round",
        "error[E0308]: mismatched types",
        "Traceback (most recent call last)",
        "ValueError: options.model is required",
        "panicked at core/src/chat/reader.rs",
        "CI summary: 2995 passed, 5 failed",
        "of gh_pr_list output",
        // The line before a failure (which pull request it is).
        "#4188\tMERGED",
    ] {
        assert!(result.contains(line), "{line} lost");
    }
    assert!(result.starts_with("#4999\t"));
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(r["tokens_before"].as_u64().unwrap() > 90_000);
    assert!(r["tokens_after"].as_u64().unwrap() <= r["limit_tokens"].as_u64().unwrap());
    let changes = r["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!((changes[0]["action"].as_str(), changes[0]["index"].as_u64()), (Some("truncated_result"), Some(3)));
    assert!(changes[0]["detail"].as_str().unwrap().contains("gh_pr_list"), "{}", changes[0]["detail"]);
    // The old behaviour, on request: no cut, and the error names each
    // irreducible part with its cost.
    let o = turnfit(&["fit", file, "--model", "gpt-4o", "--max-tokens", "16000", "--tool-output-max", "0"], b"");
    assert!(o.status.success(), "the newest round is dropped instead: {}", stderr(&o));
    let o = turnfit(
        &[
            "fit",
            file,
            "--model",
            "gpt-4o",
            "--max-tokens",
            "4100",
            "--reserve-output",
            "4080",
            "--tool-output-max",
            "0",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    for part in ["framing", "system messages", "the task (keep_first)", "tool_output_max is 0"] {
        assert!(err.contains(part), "{part}: {err}");
    }
}

#[test]
fn models_lists_and_resolves() {
    let o = turnfit(&["models", "--json"], b"");
    assert!(o.status.success());
    let rows: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(rows.len() >= 40);
    assert!(rows.iter().any(|r| r["name"] == "gpt-4o*" && r["encoding"] == "o200k_base" && r["source"] == "builtin"));
    let o = turnfit(&["models", "gpt-4o-mini", "--json"], b"");
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!((v["matched"].as_str(), v["context_window"].as_u64()), (Some("gpt-4o*"), Some(128000)));
    let o = turnfit(&["models"], b"");
    assert!(stdout(&o).lines().any(|l| l.starts_with("claude-3-5-sonnet*") && l.ends_with("estimate")));
    let o = turnfit(&["models", "claude-opus-5"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("source:            family"), "{}", stdout(&o));
}

/// Every vector of tests/vectors/models.json, through `turnfit models NAME
/// --json`, and the near misses through `turnfit count --model` as well.
#[test]
fn models_resolve_real_names_and_reject_near_misses() {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("../tests/vectors/models.json").unwrap()).unwrap();
    let vectors = doc["vectors"].as_array().unwrap();
    let (mut real, mut typos) = (0, 0);
    for v in vectors {
        let (name, expected) = (v["input"]["model"].as_str().unwrap(), &v["expected"]);
        let o = turnfit(&["models", name, "--json"], b"");
        if expected.get("error").is_some() {
            typos += 1;
            assert_eq!(o.status.code(), Some(2), "{name}: {}", stdout(&o));
            let err = stderr(&o);
            assert!(err.starts_with(&format!("turnfit: unknown model '{name}'")), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            let o = turnfit(&["count", "--model", name], b"hello");
            assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(2), ""), "{name}");
            continue;
        }
        real += 1;
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let got: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(got["model"], name);
        for key in ["family", "encoding", "context_window", "max_output_tokens", "exact", "source"] {
            assert_eq!(got[key], expected[key], "{name}: {key}");
        }
    }
    assert!(real >= 100 && typos >= 30, "{real} real names, {typos} near misses");
    // count --model uses the model's encoding and says whether it is exact.
    for (name, encoding, exact) in
        [("gpt-oss-20b", "o200k_harmony", true), ("gpt2", "gpt2", true), ("claude-opus-5", "cl100k_base", false)]
    {
        let o = turnfit(&["count", "--json", "--model", name], SAMPLE.as_bytes());
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!((v["encoding"].as_str(), v["exact"].as_bool()), (Some(encoding), Some(exact)), "{name}");
    }
}

#[test]
fn bad_model_names_are_one_line_errors() {
    let huge = "g".repeat(100_000);
    for name in ["", " ", "gpt-4o\u{7}", "--", "ft:", "openai/", huge.as_str()] {
        let o = turnfit(&["models", "--", name], b"");
        assert_eq!(o.status.code(), Some(2), "{name:?}");
        let err = stderr(&o);
        // A name longer than any model name is refused before lookup.
        let want = if name.len() > 256 { "turnfit: model name '" } else { "turnfit: unknown model" };
        assert!(err.starts_with(want), "{:?}: {err}", &name[..name.len().min(40)]);
        assert_eq!(err.lines().count(), 1);
        assert!(err.len() < 4096, "the message must not echo a huge name");
    }
    // Not UTF-8: clap refuses the argument before turnfit sees it.
    use std::os::unix::ffi::OsStrExt;
    let o = Command::new(env!("CARGO_BIN_EXE_turnfit"))
        .arg("models")
        .arg(std::ffi::OsStr::from_bytes(b"gpt-4o\xff"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).is_empty() && o.stdout.is_empty());
}

#[test]
fn preflight_reports_components_and_honours_the_budget() {
    let o = turnfit(&["preflight", "../examples/data/coding-session.json", "--model", "gpt-4o"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["limit"], 128000);
    assert_eq!(v["verdict"], "fits");
    let sum = ["system", "tools", "history", "new_input", "reply_priming"]
        .iter()
        .map(|k| v[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(v["prompt_tokens"].as_u64().unwrap(), sum);
    let o = turnfit(
        &["preflight", "-", "--max-tokens", "3000", "--reserve-output", "500"],
        &std::fs::read("../examples/data/coding-session.json").unwrap(),
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((v["limit"].as_u64(), v["reserved_output"].as_u64()), (Some(3000), Some(500)));
    assert_eq!(v["verdict"], "overflow");
    let o = turnfit(
        &["preflight", "-", "--model", "claude-sonnet-4-5"],
        br#"{"system":"s","messages":[{"role":"user","content":"hi"}]}"#,
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["exact"], false);
    // Exactness is per request: on gpt-4o a plain request is exact, one
    // with a structured-output schema is an estimate.
    let exact = |body: &[u8]| {
        let o = turnfit(&["preflight", "-", "--model", "gpt-4o"], body);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()["exact"].clone()
    };
    assert_eq!(exact(br#"{"messages":[{"role":"user","content":"hi"}]}"#), true);
    let structured = br#"{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema",
        "json_schema":{"name":"A","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}"#;
    assert_eq!(exact(structured), false);
}

#[test]
fn repair_prints_the_fixed_conversation_and_a_manifest() {
    let report = std::env::temp_dir().join(format!("turnfit-repair-{}.json", std::process::id()));
    let o = turnfit(
        &[
            "repair",
            "../examples/data/interrupted-session.json",
            "--report",
            report.to_str().unwrap(),
            "--synthetic-result",
            "lost",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let fixed: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let msgs = fixed["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 6, "stray dropped, synthetic result added after its call");
    assert_eq!(msgs[5]["role"], "user");
    assert_eq!(msgs[4]["role"], "tool");
    assert_eq!(msgs[4]["tool_call_id"], "call_smoke");
    assert_eq!(msgs[4]["content"], "lost");
    assert_eq!(fixed["model"], "gpt-4o-mini", "envelope kept");
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(manifest["changes"].as_array().unwrap().len(), 2);
    assert_eq!(manifest["issues_after"].as_array().unwrap().len(), 0);
    assert_eq!(manifest["issues_before"].as_array().unwrap().len(), 2);
}

#[test]
fn malformed_conversations_fail_with_a_located_message() {
    let o = turnfit(&["preflight", "-"], br#"{"messages":[{"role":"user","content":5}]}"#);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("-: conversation messages[0]: 'content' must be"), "{err}");
    let o = turnfit(&["repair", "-", "--format", "anthropic"], br#"[{"role":"user","content":"x"}]"#);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("must be an object"), "{}", stderr(&o));
}

#[test]
fn responses_input_is_detected_forced_and_repaired_in_its_own_shape() {
    let doc = br#"{"model":"gpt-4o","instructions":"sys","input":[{"role":"user","content":"go"},{"type":"function_call","call_id":"c1","name":"ls","arguments":"{}"},{"role":"user","content":"next"}],"store":false}"#;
    let o = turnfit(&["repair", "-", "--synthetic-result", "lost"], doc);
    assert!(o.status.success(), "{}", stderr(&o));
    let fixed: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        fixed["input"][2],
        serde_json::json!({"type": "function_call_output", "call_id": "c1", "output": "lost"})
    );
    assert_eq!(fixed["instructions"], "sys");
    assert_eq!(fixed["store"], false);
    let o = turnfit(&["preflight", "-", "--format", "responses"], br#"[{"role":"user","content":"hi"}]"#);
    assert!(o.status.success(), "{}", stderr(&o));
    let o =
        turnfit(&["preflight", "-", "--format", "responses"], br#"{"input":[{"type":"function_call","name":"f"}]}"#);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-: conversation input[0]: function_call has no 'call_id'"), "{}", stderr(&o));
    let o = turnfit(&["preflight", "-", "--format", "gemini-ish"], b"[]");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("use openai, anthropic, responses, gemini, bedrock or ai_sdk"), "{}", stderr(&o));
}

#[test]
fn bedrock_input_is_detected_forced_and_repaired_in_its_own_shape() {
    let doc = br#"{"system":[{"text":"sys"}],"messages":[{"role":"user","content":[{"text":"go"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"ls","input":{}}}]}],"inferenceConfig":{"maxTokens":9}}"#;
    let o = turnfit(&["repair", "-", "--synthetic-result", "lost"], doc);
    assert!(o.status.success(), "{}", stderr(&o));
    let fixed: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        fixed["messages"][2],
        serde_json::json!({"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "lost"}], "status": "error"}}]})
    );
    assert_eq!(fixed["inferenceConfig"]["maxTokens"], 9);
    let o = turnfit(
        &["preflight", "-", "--format", "bedrock"],
        br#"{"messages":[{"role":"user","content":[{"toolResult":{"content":[]}}]}]}"#,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("-: conversation messages[0].content[0]: toolResult has no 'toolUseId'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn gemini_input_is_detected_forced_and_repaired_in_its_own_shape() {
    let doc = br#"{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}}}]}],"generationConfig":{"temperature":0}}"#;
    let o = turnfit(&["repair", "-", "--model", "gemini-2.5-flash", "--synthetic-result", "lost"], doc);
    assert!(o.status.success(), "{}", stderr(&o));
    let fixed: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        fixed["contents"][2],
        serde_json::json!({"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"error": "lost"}}}]})
    );
    assert_eq!(fixed["systemInstruction"]["parts"][0]["text"], "sys");
    assert_eq!(fixed["generationConfig"]["temperature"], 0);
    let o = turnfit(
        &["preflight", "-", "--model", "gemini-2.5-flash", "--format", "gemini"],
        br#"[{"role":"user","parts":[{"text":"hi"}]}]"#,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = turnfit(
        &["preflight", "-", "--format", "gemini"],
        br#"{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}}]},{"role":"user","parts":[{"functionResponse":{"response":{}}}]}]}"#,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("-: conversation contents[1].parts[0]: functionResponse has no 'name'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn fit_cuts_the_long_tool_output_and_reports_it() {
    let report = std::env::temp_dir().join(format!("turnfit-fit-{}.json", std::process::id()));
    let o = turnfit(
        &[
            "fit",
            "../examples/data/coding-session.json",
            "--model",
            "gpt-4o",
            "--max-tokens",
            "16000",
            "--tool-output-max",
            "2000",
            "--report",
            report.to_str().unwrap(),
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("../examples/data/coding-session.json").unwrap()).unwrap();
    assert_eq!(out["tools"], input["tools"], "same shape, tools kept");
    assert_eq!(out["messages"].as_array().unwrap().len(), input["messages"].as_array().unwrap().len());
    assert_eq!(out["messages"][4], input["messages"][4], "untouched messages are equal");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(r["tokens_after"].as_u64().unwrap() <= r["limit_tokens"].as_u64().unwrap());
    assert_eq!(r["changes"][0]["action"], "truncated_result");
    assert_eq!(r["changes"][0]["id"], "call_tests_1");
}

/// Issue 23 (design 001's 10 KB cap): `--tool-output-max-bytes` cuts every
/// longer output to the cap (marker included), before the token cap; a cap
/// that cannot hold the marker is a one-line error.
#[test]
fn fit_caps_tool_outputs_in_bytes() {
    let file = agent_loop_file();
    let report = std::env::temp_dir().join(format!("turnfit-fit-bytes-{}.json", std::process::id()));
    let o = turnfit(
        &["fit", &file, "--model", "gpt-4o", "--tool-output-max-bytes", "500", "--report", report.to_str().unwrap()],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let results: Vec<&str> = out["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(results.len(), 60);
    assert!(results.iter().all(|t| t.len() <= 500 && t.contains(" bytes truncated ...]")), "{}", results[0]);
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let changes = r["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 60);
    assert!(changes.iter().all(|c| c["action"] == "truncated_result" && c["tokens"].as_u64().unwrap() > 0));
    let o = turnfit(&["fit", &file, "--model", "gpt-4o", "--tool-output-max-bytes", "12"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("tool_output_max_bytes 12 leaves no room for the truncation marker"), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1);
}

#[test]
fn fit_drops_turns_when_it_must_and_keeps_anthropic_shape() {
    let o = turnfit(
        &[
            "fit",
            "../examples/data/anthropic-session.json",
            "--model",
            "claude-sonnet-4-5",
            // The session counts 911 (598 of them its tools with Anthropic's
            // tool-use system prompt), the fixed part 631: 850 forces drops.
            "--max-tokens",
            "850",
            "--reserve-output",
            "50",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(out["system"].is_array(), "Anthropic system blocks kept");
    let msgs = out["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "user");
    assert_eq!(msgs.last().unwrap()["content"], "Thanks. Does that include the reserved output?");
    let report: serde_json::Value = serde_json::from_str(&stderr(&o)).unwrap();
    assert!(report["changes"].as_array().unwrap().iter().any(|c| c["action"] == "dropped_message"));
    let o = turnfit(
        &[
            "fit",
            "../examples/data/anthropic-session.json",
            "--model",
            "claude-sonnet-4-5",
            "--max-tokens",
            "60",
            "--reserve-output",
            "10",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot fit"), "{}", stderr(&o));
    let o = turnfit(
        &[
            "fit",
            "../examples/data/coding-session.json",
            "--strategy",
            "summarize",
            "--max-tokens",
            "4000",
            "--reserve-output",
            "500",
            // Cutting the long outputs (the default when over the target)
            // would make it fit without a summary.
            "--tool-output-max",
            "0",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let summary = out["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|m| m["content"].as_str().filter(|t| t.starts_with("[Summary of earlier conversation]")))
        .expect("a summary message");
    assert!(summary.contains("run_tests") && summary.contains("src/parser.rs"), "{summary}");
    let report: serde_json::Value = serde_json::from_str(&stderr(&o)).unwrap();
    assert!(report["changes"].as_array().unwrap().iter().any(|c| c["action"] == "inserted_summary"));
    // Digest options: only the facts, in at most 40 tokens.
    let o = turnfit(
        &[
            "fit",
            "../examples/data/coding-session.json",
            "--strategy",
            "summarize",
            "--max-tokens",
            "4000",
            "--reserve-output",
            "500",
            "--digest-sections",
            "facts",
            "--digest-max-tokens",
            "40",
            "--tool-output-max",
            "0",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let summary = out["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|m| m["content"].as_str().filter(|t| t.starts_with("[Summary of earlier conversation]")))
        .expect("a summary message");
    assert!(!summary.contains("Actions") && !summary.contains("State:"), "{summary}");
    let o = turnfit(&["fit", "../examples/data/coding-session.json", "--digest-sections", "everything"], b"");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn classify_reads_a_body_file_or_stdin_and_headers() {
    let o = turnfit(
        &[
            "classify",
            "--provider",
            "anthropic",
            "--status",
            "529",
            "../examples/data/errors/anthropic-overloaded.json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (v["category"].as_str(), v["action"].as_str(), v["retryable"].as_bool()),
        (Some("overloaded"), Some("retry"), Some(true))
    );
    assert_eq!(v["provider"], "anthropic");

    let body = std::fs::read("../examples/data/errors/openai-rate-limit.json").unwrap();
    let o = turnfit(
        &[
            "classify",
            "--provider",
            "openai",
            "--status",
            "429",
            "--header",
            "Retry-After: 3",
            "--header",
            "x-request-id:abc",
        ],
        &body,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["retry_after_ms"], 3000);
    assert_eq!(v["delay_source"], "retry_after_header");
    assert_eq!(v["code"], "rate_limit_exceeded");

    let o = turnfit(
        &[
            "classify",
            "--provider",
            "bedrock",
            "--status",
            "400",
            "--header",
            "x-amzn-ErrorType: ValidationException",
            "-",
        ],
        br#"{"message":"Input is too long for requested model."}"#,
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((v["category"].as_str(), v["action"].as_str()), (Some("context_overflow"), Some("compact")));

    let o = turnfit(&["classify", "--provider", "openai", "--status", "0"], b"connection reset by peer");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["category"], "network");
}

#[test]
fn classify_reports_bad_arguments_in_one_line() {
    for (args, needle) in [
        (vec!["classify", "--provider", "acme", "--status", "500"], "unknown provider 'acme'"),
        (
            vec!["classify", "--provider", "openai", "--status", "500", "--header", "no-colon"],
            "--header 'no-colon' is not 'name: value'",
        ),
        (vec!["classify", "--provider", "openai", "--status", "500", "missing-file.json"], "missing-file.json"),
    ] {
        let o = turnfit(&args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1);
    }
    let o = turnfit(&["classify", "--provider", "openai", "--status", "500"], b"\xff\xfe");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("byte offset 0"), "{}", stderr(&o));
    // clap rejects a status outside u16.
    assert!(!turnfit(&["classify", "--provider", "openai", "--status", "70000"], b"").status.success());
}

/// Issue 13's reproducer: a system message, one task, then 60 rounds of one
/// tool call and a ~400-token result. Half its size used to exit 2.
fn agent_loop_file() -> String {
    let mut msgs = vec![
        serde_json::json!({"role": "system", "content": "You are a coding agent."}),
        serde_json::json!({"role": "user", "content": "Make the failing parser test pass."}),
    ];
    for k in 0..60 {
        let id = format!("call_{k}");
        let tool = if k % 2 == 0 { "read_file" } else { "run_tests" };
        msgs.push(serde_json::json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": tool, "arguments": format!("{{\"path\":\"src/m{k}.rs\"}}")}}]}));
        msgs.push(serde_json::json!({"role": "tool", "tool_call_id": id, "content": format!("{k} {}", "fn body() { value += 1; }\n".repeat(40))}));
    }
    tmp("agent-loop.json", serde_json::json!({ "messages": msgs }).to_string().as_bytes())
}

#[test]
fn fit_shortens_an_agent_loop_to_half_its_size() {
    let file = agent_loop_file();
    let o = turnfit(&["fit", &file, "--model", "gpt-4o", "--max-tokens", "1000000", "--reserve-output", "0"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let size = serde_json::from_str::<serde_json::Value>(&stderr(&o)).unwrap()["tokens_before"].as_u64().unwrap();
    assert!(size > 20_000, "{size}");
    let half = (size / 2).to_string();
    let o = turnfit(&["fit", &file, "--model", "gpt-4o", "--max-tokens", &half, "--reserve-output", "0"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stderr(&o)).unwrap();
    assert!(r["tokens_after"].as_u64().unwrap() <= size / 2);
    let actions: Vec<&str> = r["changes"].as_array().unwrap().iter().map(|c| c["action"].as_str().unwrap()).collect();
    assert!(actions.contains(&"masked_result"), "{actions:?}");
    let reasons: Vec<&str> = r["protected"].as_array().unwrap().iter().map(|p| p["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons, ["system", "task", "recent_round"]);
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(out["messages"][1]["content"], "Make the failing parser test pass.");
    // --no-mask drops whole rounds instead; --mask-exclude spares a tool.
    let o = turnfit(&["fit", &file, "--max-tokens", &half, "--reserve-output", "0", "--no-mask"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("masked_result") && stderr(&o).contains("dropped_message"));
    let o = turnfit(
        &[
            "fit",
            &file,
            "--max-tokens",
            &half,
            "--reserve-output",
            "0",
            "--mask-exclude",
            "read_file",
            "--mask-keep-last",
            "1",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("[read_file output of") && stdout(&o).contains("[run_tests output of"));
    // Protecting more than fits (issue 31): outputs are cut, then the
    // newest rounds lose their protection, oldest first, and it fits.
    let o = turnfit(&["fit", &file, "--max-tokens", "2000", "--reserve-output", "0", "--keep-last-rounds", "10"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stderr(&o)).unwrap();
    assert!(r["tokens_after"].as_u64().unwrap() <= 2000);
    let recent = r["protected"].as_array().unwrap().iter().filter(|p| p["reason"] == "recent_round").count();
    assert!((1..=10).contains(&recent), "{recent}");
    // keep_first 0: the task may go; a target below the limit compacts further.
    let o = turnfit(
        &["fit", &file, "--max-tokens", &half, "--reserve-output", "0", "--keep-first", "0", "--target-ratio", "0.5"],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stderr(&o)).unwrap();
    assert!(r["tokens_after"].as_u64().unwrap() <= size / 4);
    let o = turnfit(&["fit", &file, "--max-tokens", &half, "--target-ratio", "1.5"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("target_ratio"), "{}", stderr(&o));
}

#[test]
fn encode_and_decode_round_trip_text_bytes_and_offsets() {
    let enc = ["--encoding", "cl100k_base"];
    let o = turnfit(&[&["encode"][..], &enc].concat(), b"hello world");
    assert_eq!((o.status.code(), stdout(&o).trim()), (Some(0), "[15339,1917]"));
    let o = turnfit(&[&["decode"][..], &enc, &["15339", "1917"]].concat(), b"");
    assert_eq!(stdout(&o), "hello world");
    let o = turnfit(&[&["decode", "--offsets"][..], &enc].concat(), b"[15339, 1917]");
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v, serde_json::json!({"text": "hello world", "offsets": [0, 5]}));

    // Bytes that are not UTF-8: encoded as they are, given back exactly.
    let raw = b"ok \xe6\x97 broken";
    let o = turnfit(&[&["encode", "--raw"][..], &enc].concat(), raw);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ids = stdout(&o);
    let o = turnfit(&[&["decode", "--bytes"][..], &enc].concat(), ids.as_bytes());
    assert_eq!(o.stdout, raw);
    let o = turnfit(&[&["decode"][..], &enc].concat(), ids.as_bytes());
    assert_eq!(stdout(&o), "ok \u{fffd} broken");
    let o = turnfit(&[&["decode", "--errors", "ignore"][..], &enc].concat(), ids.as_bytes());
    assert_eq!(stdout(&o), "ok  broken");
    let o = turnfit(&[&["decode", "--errors", "strict"][..], &enc].concat(), ids.as_bytes());
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("UTF-8"), "{}", stderr(&o));
    // Without --raw the same input is refused with its offset.
    let o = turnfit(&[&["encode"][..], &enc].concat(), raw);
    assert_ne!(o.status.code(), Some(0));
}

#[test]
fn encode_and_decode_refuse_bad_input_with_one_line() {
    let o = turnfit(&["decode", "1", "x", "3"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("token id 1 ('x') is not a number"), "{}", stderr(&o));
    let o = turnfit(&["decode", "--encoding", "cl100k_base", "4294967295"], b"");
    assert_ne!(o.status.code(), Some(0));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let o = turnfit(&["decode", "--errors", "loose", "1"], b"");
    assert!(stderr(&o).contains("decode mode 'loose'"), "{}", stderr(&o));
    let o = turnfit(&["encode", "--encoding", "cl100k_base", "--disallowed-special", "all"], b"a <|endoftext|>");
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("<|endoftext|>"), "{}", stderr(&o));
    let o = turnfit(&["encode", "--encoding", "cl100k_base", "--allowed-special", "all"], b"a <|endoftext|>");
    assert_eq!(stdout(&o).trim(), "[64,220,100257]");
}

#[test]
fn encode_lists_the_special_tokens_of_an_encoding() {
    let o = turnfit(&["encode", "--list-special", "--encoding", "cl100k_base"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("<|endoftext|>") && out.contains("100257") && out.contains("<|fim_prefix|>"), "{out}");
    let o = turnfit(&["encode", "--list-special", "--raw"], b"");
    assert_eq!(o.status.code(), Some(2), "--list-special conflicts with encoding options");
}

/// Issue 23: the call stack from the command line. Depth 5 by default (the
/// design's maximum), a sixth agent and a cycle are refusals (exit 1 with
/// the error kind), a stored stack continues, bad input is a one-line error.
#[test]
fn callstack_enters_agents_and_refuses_depth_and_cycles() {
    let ok = turnfit(&["callstack", "planner", "coder", "reviewer", "tester", "writer"], b"");
    assert!(ok.status.success(), "{}", stderr(&ok));
    let v: serde_json::Value = serde_json::from_str(&stdout(&ok)).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"agents": ["planner", "coder", "reviewer", "tester", "writer"], "depth": 5, "max_depth": 5})
    );
    let deep = turnfit(&["callstack", "a", "b", "c", "d", "e", "f"], b"");
    assert_eq!(deep.status.code(), Some(1));
    let e: serde_json::Value = serde_json::from_str(&stdout(&deep)).unwrap();
    assert_eq!(e["error"], "depth_exceeded");
    assert_eq!(e["message"], "agent call depth 6 exceeds the maximum of 5: a -> b -> c -> d -> e -> f");
    let cyc = turnfit(&["callstack", "planner", "coder", "planner"], b"");
    assert_eq!(cyc.status.code(), Some(1));
    let e: serde_json::Value = serde_json::from_str(&stdout(&cyc)).unwrap();
    assert_eq!(e["error"], "cycle_detected");
    assert!(e["message"].as_str().unwrap().contains("planner -> coder -> planner"), "{e}");
    let more = turnfit(&["callstack", "--stack", "-", "coder"], br#"{"agents": ["planner"], "max_depth": 2}"#);
    assert!(more.status.success(), "{}", stderr(&more));
    assert!(stdout(&more).contains(r#""agents":["planner","coder"],"depth":2,"max_depth":2"#), "{}", stdout(&more));
    for (args, stdin, msg) in [
        (&["callstack", "--max-depth", "0", "a"][..], &b""[..], "max_depth must be at least 1"),
        (&["callstack", "--stack", "-", "a"][..], &b"{\"agents\": 3}"[..], "-: "),
        (&["callstack", ""][..], &b""[..], "agent name is empty"),
    ] {
        let o = turnfit(args, stdin);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(msg) && stderr(&o).lines().count() == 1, "{args:?}: {}", stderr(&o));
    }
}

//! `count --chat` and `preflight`/`fit --tokenizer`: a conversation counted
//! and fitted as the model's chat template renders it. The tokenizer is a
//! tiny byte-level one written here (one token per byte, `<s>` and
//! `<|end|>` special), so ids can be read off the text; the real files are
//! checked against transformers by scripts/templates.sh.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

mod common;
use common::turnfit;

const TEMPLATE: &str = "{{ bos_token }}{% for m in messages %}{% if m.content == 'boom' %}{{ raise_exception('no boom here') }}{% endif %}{{ m.role }}:{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}";

/// A folder with the tiny tokenizer.json and, when `template`, a
/// tokenizer_config.json holding it.
fn model_dir(name: &str, template: bool) -> PathBuf {
    let printable = |x: u8| matches!(x, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let byte_char = |b: u8| {
        if printable(b) {
            char::from(b)
        } else {
            char::from_u32(256 + (0..b).filter(|&x| !printable(x)).count() as u32).unwrap()
        }
    };
    let vocab: serde_json::Map<String, Value> = (0..=255u8).map(|b| (byte_char(b).to_string(), json!(b))).collect();
    let f = json!({
        "added_tokens": [
            {"id": 300, "content": "<s>", "special": true, "normalized": false},
            {"id": 301, "content": "<|end|>", "special": true, "normalized": false}
        ],
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab, "merges": []}
    });
    let dir = std::env::temp_dir().join(format!("turnfit-cli-chat-count-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), serde_json::to_vec(&f).unwrap()).unwrap();
    if template {
        let config = json!({"bos_token": "<s>", "eos_token": "<|end|>", "chat_template": TEMPLATE});
        std::fs::write(dir.join("tokenizer_config.json"), serde_json::to_vec(&config).unwrap()).unwrap();
    }
    dir
}

fn tok(dir: &Path) -> String {
    dir.join("tokenizer.json").display().to_string()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn count_chat_gives_the_servers_ids() {
    let dir = model_dir("ids", true);
    let conv = r#"[{"role": "user", "content": "a<|end|>"}]"#;
    let out = turnfit(&["count", "--tokenizer", &tok(&dir), "--chat", "--ids"], conv.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let ids: Vec<u32> = serde_json::from_slice(&out.stdout).unwrap();
    // BOS once, "user:a", the typed <|end|> as its 7 bytes, the template's as 301, "assistant:".
    let mut want = vec![300];
    want.extend("user:a<|end|>".bytes().map(u32::from));
    want.push(301);
    want.extend("assistant:".bytes().map(u32::from));
    assert_eq!(ids, want);
    let out = turnfit(&["count", "--tokenizer", &tok(&dir), "--chat", "--no-generation-prompt"], conv.as_bytes());
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), format!("{} -", want.len() - 10));
    // Without --chat the input is text: its bytes, the typed <|end|> special.
    let out = turnfit(&["count", "--tokenizer", &tok(&dir)], conv.as_bytes());
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), format!("{} -", conv.len() - 6));
}

#[test]
fn count_chat_bad_inputs_are_clear_errors() {
    let dir = model_dir("bad", true);
    let t = tok(&dir);
    let run = |args: &[&str], stdin: &str| {
        turnfit(&[&["count", "--tokenizer", &t, "--chat"], args].concat(), stdin.as_bytes())
    };
    // Not messages.
    let out = run(&[], r#"{"model": "x"}"#);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no \"messages\""), "{}", stderr(&out));
    let out = run(&[], r#""hello""#);
    assert!(stderr(&out).contains("expected an array of messages"), "{}", stderr(&out));
    let out = run(&[], "not json");
    assert!(stderr(&out).contains("not valid JSON"), "{}", stderr(&out));
    // A template that raises.
    let out = run(&[], r#"[{"role": "user", "content": "boom"}]"#);
    assert!(stderr(&out).contains("refused the conversation: no boom here"), "{}", stderr(&out));
    // No template anywhere.
    let bare = model_dir("bare", false);
    let out = turnfit(&["count", "--tokenizer", &tok(&bare), "--chat"], b"[{\"role\": \"user\", \"content\": \"x\"}]");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no chat template found"), "{}", stderr(&out));
    // A template file too large.
    let big = dir.join("big.jinja");
    std::fs::write(&big, "x".repeat((1 << 20) + 1)).unwrap();
    let out = run(&["--chat-template", &big.display().to_string()], r#"[{"role": "user", "content": "x"}]"#);
    assert!(stderr(&out).contains("larger than 1048576 bytes"), "{}", stderr(&out));
    // Options that need --chat.
    let out = turnfit(&["count", "--tokenizer", &t, "--ids"], b"x");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("go with --chat"), "{}", stderr(&out));
}

/// A conversation of `n` exchanges, long enough to need fitting.
fn conversation(n: usize) -> String {
    let mut messages = vec![json!({"role": "system", "content": "Be brief."})];
    for i in 0..n {
        messages.push(json!({"role": "user", "content": format!("question {i} about the weather in a city")}));
        messages.push(json!({"role": "assistant", "content": format!("answer {i}: it is sunny there today")}));
    }
    json!({"messages": messages}).to_string()
}

fn count_chat(dir: &Path, conv: &str) -> usize {
    let out = turnfit(&["count", "--tokenizer", &tok(dir), "--chat", "--json"], conv.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    line["tokens"].as_u64().unwrap() as usize
}

#[test]
fn preflight_and_fit_total_the_templates_count() {
    let dir = model_dir("fit", true);
    let conv = conversation(60);
    let exact = count_chat(&dir, &conv);
    let out = turnfit(&["preflight", "-", "--tokenizer", &tok(&dir), "--context-window", "2000"], conv.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["exact"], true);
    assert_eq!(report["prompt_tokens"], exact);
    assert_eq!(report["verdict"], "overflow", "{report}");

    let report_path = dir.join("fit-report.json");
    let out = turnfit(
        &[
            "fit",
            "-",
            "--tokenizer",
            &tok(&dir),
            "--context-window",
            "2000",
            "--report",
            &report_path.display().to_string(),
        ],
        conv.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let fitted = String::from_utf8(out.stdout).unwrap();
    let report: Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();
    let after = count_chat(&dir, &fitted);
    assert_eq!(report["exact"], true);
    assert_eq!(report["tokens_before"], exact);
    assert_eq!(report["tokens_after"], after);
    assert!(after <= report["limit_tokens"].as_u64().unwrap() as usize, "{after} over {}", report["limit_tokens"]);
    assert!(report["messages_after"].as_u64() < report["messages_before"].as_u64());
}

#[test]
fn preflight_and_fit_bad_inputs_are_clear_errors() {
    let dir = model_dir("fit-bad", true);
    let t = tok(&dir);
    let conv = conversation(2);
    // No window.
    let out = turnfit(&["preflight", "-", "--tokenizer", &t], conv.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("(--tokenizer, --ollama-model, --hf-model) needs --context-window"),
        "{}",
        stderr(&out)
    );
    // Another format than OpenAI Chat.
    let anthropic = r#"{"system": "s", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}"#;
    let out = turnfit(&["fit", "-", "--tokenizer", &t, "--context-window", "500"], anthropic.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("renders OpenAI Chat messages"), "{}", stderr(&out));
    // A template that raises.
    let boom = r#"[{"role": "user", "content": "x"}, {"role": "assistant", "content": "boom"}]"#;
    let out = turnfit(&["preflight", "-", "--tokenizer", &t, "--context-window", "500"], boom.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no boom here"), "{}", stderr(&out));
    // No template.
    let bare = model_dir("fit-bare", false);
    let out = turnfit(&["fit", "-", "--tokenizer", &tok(&bare), "--context-window", "500"], conv.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no chat template found"), "{}", stderr(&out));
    // --tokenizer does not go with an encoding.
    let out = turnfit(&["preflight", "-", "--tokenizer", &t, "--encoding", "o200k_base"], conv.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("takes the place of --encoding"), "{}", stderr(&out));
}

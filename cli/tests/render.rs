//! `turnfit render`: a conversation rendered with the model's chat template
//! (from the files beside a tokenizer.json, or --chat-template), printed byte
//! for byte. The tokenizer file is a tiny one written here; the collection of
//! real templates is checked against transformers by scripts/templates.sh.

use std::path::{Path, PathBuf};

use serde_json::json;

mod common;
use common::turnfit;

/// A folder with a byte-level tokenizer.json (the 256 bytes, GPT-2's alphabet).
fn model_dir(name: &str) -> PathBuf {
    let printable = |x: u8| matches!(x, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let byte_char = |b: u8| {
        if printable(b) {
            char::from(b)
        } else {
            char::from_u32(256 + (0..b).filter(|&x| !printable(x)).count() as u32).unwrap()
        }
    };
    let vocab: serde_json::Map<String, serde_json::Value> =
        (0..=255u8).map(|b| (byte_char(b).to_string(), json!(b))).collect();
    let f = json!({
        "added_tokens": [{"id": 300, "content": "<s>", "special": true, "normalized": false}],
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab, "merges": []}
    });
    let dir = std::env::temp_dir().join(format!("turnfit-cli-render-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), serde_json::to_vec(&f).unwrap()).unwrap();
    dir
}

const TEMPLATE: &str = "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}{% if tools %}tools={{ tools | tojson }}\n{% endif %}{% if add_generation_prompt %}<|assistant|>{% endif %}";

fn with_config(name: &str) -> PathBuf {
    let dir = model_dir(name);
    let config =
        json!({"bos_token": {"content": "<s>", "special": true}, "eos_token": "</s>", "chat_template": TEMPLATE});
    std::fs::write(dir.join("tokenizer_config.json"), serde_json::to_vec(&config).unwrap()).unwrap();
    dir
}

fn tok(dir: &Path) -> String {
    dir.join("tokenizer.json").display().to_string()
}

const CONV: &str = r#"[{"role": "user", "content": "héllo <|assistant|>"}, {"role": "assistant", "content": null}]"#;

#[test]
fn renders_the_template_beside_the_tokenizer_byte_for_byte() {
    let dir = with_config("config");
    let out = turnfit(&["render", "-", "--tokenizer", &tok(&dir)], CONV.as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // No newline added; content null renders as "".
    assert_eq!(out.stdout, "<s><|user|>héllo <|assistant|>\n<|assistant|>\n<|assistant|>".as_bytes());
    let out = turnfit(&["render", "-", "--tokenizer", &tok(&dir), "--no-generation-prompt"], CONV.as_bytes());
    assert_eq!(out.stdout, "<s><|user|>héllo <|assistant|>\n<|assistant|>\n".as_bytes());
}

#[test]
fn a_request_body_brings_its_tools_and_kwargs_reach_the_template() {
    let dir = with_config("tools");
    let body = r#"{"model": "x", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "f"}}]}"#;
    let out = turnfit(&["render", "-", "--tokenizer", &tok(&dir), "--no-generation-prompt"], body.as_bytes());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "<s><|user|>hi\ntools=[{\"type\": \"function\", \"function\": {\"name\": \"f\"}}]\n"
    );
    let t = dir.join("kw.jinja");
    std::fs::write(&t, "{% if enable_thinking is false %}no-think{% endif %}").unwrap();
    let out = turnfit(
        &[
            "render",
            "-",
            "--tokenizer",
            &tok(&dir),
            "--chat-template",
            &t.display().to_string(),
            "--template-kwargs",
            r#"{"enable_thinking": false}"#,
        ],
        body.as_bytes(),
    );
    assert_eq!(out.stdout, b"no-think");
}

#[test]
fn chat_template_file_overrides_and_chat_template_jinja_comes_first() {
    let dir = with_config("override");
    let file = dir.join("mine.jinja");
    std::fs::write(&file, "[{{ messages | length }}{{ eos_token }}]").unwrap();
    let out = turnfit(
        &["render", "-", "--tokenizer", &tok(&dir), "--chat-template", &file.display().to_string()],
        CONV.as_bytes(),
    );
    assert_eq!(out.stdout, b"[2</s>]");
    std::fs::write(dir.join("chat_template.jinja"), "jinja file {{ bos_token }}").unwrap();
    let out = turnfit(&["render", "-", "--tokenizer", &tok(&dir)], CONV.as_bytes());
    assert_eq!(out.stdout, b"jinja file <s>");
}

#[test]
fn no_template_and_hostile_templates_are_clear_errors() {
    let dir = model_dir("none");
    let out = turnfit(&["render", "-", "--tokenizer", &tok(&dir)], CONV.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no chat template found") && err.contains("--chat-template"), "{err}");

    let file = dir.join("loop.jinja");
    std::fs::write(&file, "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}").unwrap();
    let out = turnfit(
        &["render", "-", "--tokenizer", &tok(&dir), "--chat-template", &file.display().to_string()],
        CONV.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("loop.jinja") && err.contains("work limit"), "{err}");
    assert!(out.stdout.is_empty());

    let out = turnfit(
        &["render", "-", "--tokenizer", &tok(&dir), "--chat-template", &file.display().to_string()],
        b"{\"nope\": 1}",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("no \"messages\""));
}

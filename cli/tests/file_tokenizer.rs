//! `count`, `encode` and `decode` with `--tokenizer FILE` (a tokenizer.json
//! written here; the real files are checked by scripts/open-models.sh).

use serde_json::json;

mod common;
use common::turnfit;

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// GPT-2's byte alphabet.
fn byte_char(b: u8) -> char {
    let printable = |x: u8| matches!(x, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    if printable(b) {
        return char::from(b);
    }
    char::from_u32(256 + (0..b).filter(|&x| !printable(x)).count() as u32).unwrap()
}

/// A byte-level tokenizer.json: the 256 bytes, "Ġt" (256), "he" (257),
/// "Ġthe" (258), special `<s>` (300) added before a text.
fn write_file() -> String {
    let mut vocab = serde_json::Map::new();
    for b in 0..=255u8 {
        vocab.insert(byte_char(b).to_string(), json!(b));
    }
    for (i, t) in ["Ġt", "he", "Ġthe"].iter().enumerate() {
        vocab.insert(t.to_string(), json!(256 + i));
    }
    let f = json!({
        "added_tokens": [{"id": 300, "content": "<s>", "special": true, "normalized": false}],
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": r" ?\p{L}+|\s+|[^\s\p{L}]+"}, "behavior": "Isolated", "invert": false},
            {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
        "post_processor": {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [300], "tokens": ["<s>"]}}},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab, "merges": [["Ġ", "t"], ["h", "e"], ["Ġt", "he"]]}
    });
    let dir = std::env::temp_dir().join(format!("turnfit-cli-tokfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tokenizer.json");
    std::fs::write(&path, serde_json::to_vec(&f).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn count_encode_and_decode_with_a_tokenizer_file() {
    let file = write_file();
    let o = turnfit(&["encode", "--tokenizer", &file], b"a the<s>");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "[97,258,300]");
    let o = turnfit(&["encode", "--tokenizer", &file, "--add-special"], b"a the");
    assert_eq!(text(&o.stdout).trim(), "[300,97,258]");
    let o = turnfit(&["count", "--json", "--tokenizer", &file], b"a the");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["tokens"].as_u64(), v["bytes"].as_u64()), (Some(2), Some(5)), "{v}");
    assert_eq!(v["tokenizer"], json!(file));
    let o = turnfit(&["decode", "--tokenizer", &file, "97", "258", "300"], b"");
    assert_eq!(text(&o.stdout), "a the<s>");
}

#[test]
fn bad_files_and_mixed_options_are_refused() {
    let dir = std::env::temp_dir().join(format!("turnfit-cli-tokfile-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, br#"{"model": {"type": "Unigram"}}"#).unwrap();
    let bad = bad.to_string_lossy().into_owned();
    let o = turnfit(&["count", "--tokenizer", &bad], b"x");
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("bad.json") && text(&o.stderr).contains("Unigram"), "{}", text(&o.stderr));
    let file = write_file();
    let o = turnfit(&["count", "--tokenizer", &file, "--encoding", "cl100k_base"], b"x");
    assert!(!o.status.success() && text(&o.stderr).contains("--tokenizer"), "{}", text(&o.stderr));
    let o = turnfit(&["count", "--tokenizer", &file, "--pattern", "llama3"], b"x");
    assert!(!o.status.success() && text(&o.stderr).contains("own split rules"), "{}", text(&o.stderr));
    let o = turnfit(&["count", "--add-special"], b"x");
    assert!(!o.status.success(), "--add-special needs --tokenizer");
}

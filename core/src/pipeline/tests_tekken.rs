//! Mistral Tekken files on a small vocabulary written here: mistral-common's
//! rules (declared rank count, ids after the special tokens, its default
//! special tokens) and every bad file refused with an error naming the file
//! and the problem. The real files are compared by `scripts/open-models.sh`.

use super::*;
use crate::ErrorKind;
use serde_json::{json, Value};

fn b64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = c.iter().enumerate().fold(0u32, |n, (i, &x)| n | (x as u32) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= c.len() { A[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

/// 256 byte ranks, then `ab` (256) and `abc` (257); 25 special tokens and
/// a vocabulary size that leaves `abc` out.
fn tekken() -> Value {
    let mut vocab: Vec<Value> =
        (0..=255u8).map(|b| json!({"rank": b, "token_bytes": b64(&[b]), "token_str": null})).collect();
    vocab.push(json!({"rank": 256, "token_bytes": b64(b"ab"), "token_str": "ab"}));
    vocab.push(json!({"rank": 257, "token_bytes": b64(b"abc"), "token_str": "abc"}));
    json!({
        "config": {"pattern": r"\p{L}+|\s+|[^\s\p{L}]+", "num_vocab_tokens": 258, "default_vocab_size": 25 + 257,
            "default_num_special_tokens": 25, "version": "v3"},
        "vocab": vocab,
    })
}

fn load(v: &Value) -> Result<FileTokenizer> {
    FileTokenizer::from_bytes(&serde_json::to_vec(v).unwrap(), "tekken.json")
}

#[test]
fn a_tekken_file_follows_mistral_commons_rules() {
    let t = load(&tekken()).unwrap();
    // Only 257 ranks: `abc` is not a token; ids are shifted past 25 specials.
    assert_eq!(t.encode("abc").unwrap(), [25 + 256, 25 + 99]);
    assert_eq!(t.encode_with_special("ab", true).unwrap(), [1, 25 + 256], "<s> is mistral-common's default 1");
    // The default special tokens and the fillers after them.
    assert_eq!(t.encode("[INST]ab<SPECIAL_24>").unwrap(), [3, 25 + 256, 24]);
    assert_eq!(t.decode(&[3, 25 + 256, 25 + 0x20, 25 + 99]).unwrap(), "[INST]ab c");
    assert_eq!(t.vocab_size(), 25 + 257);
    // mistral-common's `encode` never finds special tokens in text.
    let plain = load(&tekken()).unwrap().with_special_text(true);
    assert_eq!(plain.encode("[/INST]").unwrap().len(), 7, "[/ I N S T ]: text, split by the pattern");
    // A file that lists its special tokens uses them.
    let mut f = tekken();
    f["special_tokens"] = json!([{"rank": 0, "token_str": "<unk>", "is_control": true},
        {"rank": 1, "token_str": "<s>", "is_control": true}, {"rank": 2, "token_str": "[THINK]", "is_control": true}]);
    f["config"]["version"] = json!("v13");
    let t = load(&f).unwrap();
    assert_eq!(t.encode("[THINK]<SPECIAL_3>").unwrap(), [2, 3]);
}

fn refused(f: &Value, words: &[&str]) {
    let e = load(f).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().starts_with("tekken.json: "), "names the file: {e}");
    for w in words {
        assert!(e.message().contains(w), "{w:?} not in {e}");
    }
}

#[test]
fn bad_tekken_files_are_clear_errors() {
    let mut f = tekken();
    f["config"]["version"] = json!("v99");
    refused(&f, &["config.version \"v99\""]);
    let mut f = tekken();
    f["config"]["version"] = json!("v11");
    refused(&f, &["special_tokens is missing", "v11"]);
    let mut f = tekken();
    f["config"]["default_vocab_size"] = json!(25 + 300);
    refused(&f, &["needs 300 ranks but vocab has 258"]);
    let mut f = tekken();
    f["config"]["default_vocab_size"] = json!(3);
    refused(&f, &["below default_num_special_tokens"]);
    let mut f = tekken();
    f["config"]["default_num_special_tokens"] = json!(10);
    f["config"]["default_vocab_size"] = json!(10 + 257);
    refused(&f, &["20 default special tokens for default_num_special_tokens 10"]);
    let mut f = tekken();
    f["config"]["default_num_special_tokens"] = json!(1u64 << 40);
    refused(&f, &["default_num_special_tokens is 1099511627776"]);
    let mut f = tekken();
    f["vocab"][7]["rank"] = json!(8);
    refused(&f, &["vocab[7] has rank 8"]);
    let mut f = tekken();
    f["vocab"][65]["token_bytes"] = json!(b64(b"B"));
    refused(&f, &["vocab[65] is not the byte 0x41"]);
    let mut f = tekken();
    f["vocab"][256]["token_bytes"] = json!("a?==");
    refused(&f, &["vocab[256].token_bytes is not base64"]);
    let mut f = tekken();
    f["vocab"][256]["token_bytes"] = json!(b64(b"a"));
    refused(&f, &["vocab[256] repeats"]);
    let mut f = tekken();
    f["special_tokens"] = json!([{"rank": 0, "token_str": "<s>", "is_control": true},
        {"rank": 1, "token_str": "<s>", "is_control": true}]);
    refused(&f, &["special token \"<s>\" appears twice"]);
    let mut f = tekken();
    f["special_tokens"] = json!([{"rank": 5, "token_str": "<s>", "is_control": true}]);
    refused(&f, &["special_tokens[0] has rank 5"]);
    let mut f = tekken();
    f["config"]["pattern"] = json!("(\\p{L}");
    refused(&f, &["config.pattern"]);
    // Wrong types and truncation: the JSON error, naming the file.
    let mut f = tekken();
    f["vocab"] = json!({"a": 1});
    let e = load(&f).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidJson);
    assert!(e.message().starts_with("tekken.json: neither a tokenizer.json nor a Tekken file"), "{e}");
    let bytes = serde_json::to_vec(&tekken()).unwrap();
    for cut in [1, bytes.len() / 2, bytes.len() - 1] {
        let e = FileTokenizer::from_bytes(&bytes[..cut], "tekken.json").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidJson, "cut at {cut}: {e}");
    }
}

//! SentencePiece-style files on small vocabularies written here: HF's
//! `Metaspace` pre-tokenizer in a `tokenizer.json`, and llama.cpp's
//! score-ordered rule for `llama`-type GGUF files; and every bad file of
//! those kinds refused with an error naming the file and the problem. The
//! real files are compared by `scripts/open-models.sh`.

use super::gguf::tests::{gguf, s, strings};
use super::*;
use crate::ErrorKind;
use serde_json::{json, Value};

const SP: &str = "\u{2581}";

/// `<unk>`, `<s>`, `▁`, `a`, `b`, `▁a`, `▁b`, `a▁`, then 256 byte tokens;
/// `a▁` merges first, so splitting at `▁` or not shows.
fn metaspace_file(pre: Value) -> Value {
    let mut vocab = serde_json::Map::new();
    for (i, t) in ["<unk>", "<s>", SP, "a", "b", "\u{2581}a", "\u{2581}b", "a\u{2581}"].iter().enumerate() {
        vocab.insert(t.to_string(), json!(i));
    }
    for b in 0..=255u32 {
        let id = vocab.len();
        vocab.insert(format!("<0x{b:02X}>"), json!(id));
    }
    json!({
        "added_tokens": [{"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false,
            "normalized": false, "special": true}],
        "normalizer": null,
        "pre_tokenizer": pre,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SP}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true, "vocab": vocab,
            "merges": [["a", SP], [SP, "a"], [SP, "b"]]}
    })
}

fn metaspace(extra: Value) -> Value {
    let mut m = json!({"type": "Metaspace", "replacement": SP});
    for (k, v) in extra.as_object().unwrap() {
        m[k] = v.clone();
    }
    m
}

fn load(v: &Value) -> Result<FileTokenizer> {
    FileTokenizer::from_bytes(&serde_json::to_vec(v).unwrap(), "test.json")
}

#[test]
fn metaspace_prepends_as_its_scheme_says_and_splits_when_asked() {
    // first, no split (Llama 2 / Mistral files today): `▁` only at the
    // start of the input, none after an added token.
    let t = load(&metaspace_file(metaspace(json!({"prepend_scheme": "first", "split": false})))).unwrap();
    assert_eq!(t.encode("a b").unwrap(), [2, 7, 4], "\u{2581}a\u{2581}b: a\u{2581} merges first");
    assert_eq!(t.encode("<s>a").unwrap(), [1, 3]);
    assert_eq!(t.encode(" a").unwrap(), [5], "a leading space is the prefix: no second one");
    assert_eq!(t.encode("").unwrap(), Vec::<u32>::new());
    assert_eq!(t.decode(&t.encode("a b").unwrap()).unwrap(), "a b");
    // always: after an added token too; split: pieces start at each `▁`.
    let t = load(&metaspace_file(metaspace(json!({"prepend_scheme": "always", "split": true})))).unwrap();
    assert_eq!(t.encode("<s>a").unwrap(), [1, 5]);
    assert_eq!(t.encode("a b").unwrap(), [5, 6], "split: a\u{2581} cannot form");
    // The defaults are HF's: always, split.
    let t = load(&metaspace_file(metaspace(json!({})))).unwrap();
    assert_eq!(t.encode("<s>a b").unwrap(), [1, 5, 6]);
    // never (with the older `add_prefix_space: false` beside it or not).
    for m in [
        json!({"prepend_scheme": "never", "split": false}),
        json!({"add_prefix_space": false, "prepend_scheme": "never", "split": false}),
    ] {
        let t = load(&metaspace_file(metaspace(m))).unwrap();
        assert_eq!(t.encode("a b").unwrap(), [7, 4]);
        assert_eq!(t.encode("b").unwrap(), [4]);
    }
    // Unknown characters fall back to bytes, as without Metaspace.
    let t = load(&metaspace_file(metaspace(json!({"prepend_scheme": "first"})))).unwrap();
    assert_eq!(t.encode("\u{e9}").unwrap(), [2, 8 + 0xC3, 8 + 0xA9]);
}

fn refused(f: &Value, words: &[&str]) {
    let e = load(f).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidJson, "{e}");
    assert!(e.message().starts_with("test.json: "), "names the file: {e}");
    for w in words {
        assert!(e.message().contains(w), "{w:?} not in {e}");
    }
}

#[test]
fn bad_metaspace_options_are_clear_errors() {
    refused(&metaspace_file(metaspace(json!({"replacement": "ab"}))), &["pre_tokenizer.replacement", "one character"]);
    refused(&metaspace_file(metaspace(json!({"replacement": 7}))), &["pre_tokenizer.replacement"]);
    refused(&metaspace_file(metaspace(json!({"prepend_scheme": "sometimes"}))), &["prepend_scheme", "sometimes"]);
    refused(&metaspace_file(metaspace(json!({"prepend_scheme": 1}))), &["prepend_scheme", "not a string"]);
    refused(&metaspace_file(metaspace(json!({"split": "yes"}))), &["pre_tokenizer.split", "not a boolean"]);
    // HF 0.23 refuses `add_prefix_space: false` unless the scheme is never.
    refused(&metaspace_file(metaspace(json!({"add_prefix_space": false}))), &["add_prefix_space does not match"]);
    refused(&metaspace_file(metaspace(json!({"prepend_scheme": null}))), &["prepend_scheme", "not a string"]);
    let seq = json!({"type": "Sequence", "pretokenizers": [metaspace(json!({"prepend_scheme": "last"}))]});
    refused(&metaspace_file(seq), &["pre_tokenizer.pretokenizers[0].prepend_scheme"]);
}

fn f32s(v: &[f32]) -> Vec<u8> {
    let mut b = 6u32.to_le_bytes().to_vec();
    b.extend((v.len() as u64).to_le_bytes());
    v.iter().for_each(|x| b.extend(x.to_le_bytes()));
    b
}

fn i32s(v: &[i32]) -> Vec<u8> {
    let mut b = 5u32.to_le_bytes().to_vec();
    b.extend((v.len() as u64).to_le_bytes());
    v.iter().for_each(|x| b.extend(x.to_le_bytes()));
    b
}

/// A `llama`-type vocabulary: `<unk>` `<s>` `</s>`, 256 byte tokens
/// (ids 3-258), then `▁` `a` `b` `▁a` `ab` `▁ab` (259-264) with scores
/// that make `ab` merge before `▁a`. `edit` changes the key-values.
fn spm_gguf(edit: impl FnOnce(&mut Vec<(&'static str, u32, Vec<u8>)>)) -> Vec<u8> {
    let mut tokens: Vec<String> = vec!["<unk>".into(), "<s>".into(), "</s>".into()];
    tokens.extend((0..=255u8).map(|b| format!("<0x{b:02X}>")));
    tokens.extend([SP, "a", "b", "\u{2581}a", "ab", "\u{2581}ab"].map(String::from));
    let mut types = vec![2, 3, 3];
    types.extend([6; 256]);
    types.extend([1; 6]);
    let mut scores = vec![0.0f32; 259];
    scores.extend([-1.0, -2.0, -2.0, -5.0, -3.0, -4.0]);
    let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let mut kv = vec![
        ("general.architecture", 8, s("llama")),
        ("llama.context_length", 4, 4096u32.to_le_bytes().to_vec()),
        ("tokenizer.ggml.model", 8, s("llama")),
        ("tokenizer.ggml.tokens", 9, strings(&refs)),
        ("tokenizer.ggml.scores", 9, f32s(&scores)),
        ("tokenizer.ggml.token_type", 9, i32s(&types)),
        ("tokenizer.ggml.bos_token_id", 4, 1u32.to_le_bytes().to_vec()),
    ];
    edit(&mut kv);
    gguf(&kv)
}

fn spm(edit: impl FnOnce(&mut Vec<(&'static str, u32, Vec<u8>)>)) -> Result<FileTokenizer> {
    FileTokenizer::from_bytes(&spm_gguf(edit), "m.gguf")
}

#[test]
fn a_llama_type_gguf_merges_by_score_with_llama_cpps_spaces() {
    let t = spm(|_| {}).unwrap();
    // "▁ab": ab (-3) before ▁a (-5), then ▁ab (-4).
    assert_eq!(t.encode("ab").unwrap(), [264]);
    // A space before every stretch of text, after special tokens too.
    assert_eq!(t.encode("a<s>b").unwrap(), [262, 1, 259, 261]);
    assert_eq!(t.with_special_text(false).encode("a b").unwrap(), [262, 259, 261]);
    let t = spm(|_| {}).unwrap();
    // A character the vocabulary lacks: its UTF-8 bytes' tokens.
    assert_eq!(t.encode("\u{e9}").unwrap(), [259, 3 + 0xC3, 3 + 0xA9]);
    assert_eq!(t.encode("").unwrap(), Vec::<u32>::new());
    assert_eq!(t.encode_with_special("ab", true).unwrap(), [1, 264], "BOS by default");
    assert_eq!(t.decode(&t.encode("ab a\u{e9}").unwrap()).unwrap(), "ab a\u{e9}");
    assert_eq!(t.info().context_length, Some(4096));
    // Without the space prefix.
    let t = spm(|kv| kv.push(("tokenizer.ggml.add_space_prefix", 7, vec![0]))).unwrap();
    assert_eq!(t.encode("ab").unwrap(), [263]);
    assert_eq!(t.decode(&[259, 263]).unwrap(), " ab");
}

fn spm_refused(edit: impl FnOnce(&mut Vec<(&'static str, u32, Vec<u8>)>), words: &[&str]) {
    let e = spm(edit).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().starts_with("m.gguf: "), "names the file: {e}");
    for w in words {
        assert!(e.message().contains(w), "{w:?} not in {e}");
    }
}

#[test]
fn bad_llama_type_ggufs_are_clear_errors() {
    spm_refused(|kv| kv[4].2 = f32s(&[0.0; 3]), &["tokenizer.ggml.scores has 3 entries for 265 tokens"]);
    spm_refused(|kv| kv[4].2 = i32s(&[0; 265]), &["tokenizer.ggml.scores is not an array of f32"]);
    spm_refused(|kv| kv[5].2 = i32s(&[1; 2]), &["token_type has 2 entries"]);
    spm_refused(|kv| kv[6].2 = 999u32.to_le_bytes().to_vec(), &["bos_token_id is 999"]);
    // A vocabulary without the byte token for 0x80.
    spm_refused(
        |kv| {
            let mut tokens: Vec<String> = vec!["<unk>".into(), "<s>".into(), "</s>".into()];
            tokens.extend((0..=255u8).map(|b| if b == 0x80 { "x".into() } else { format!("<0x{b:02X}>") }));
            tokens.extend([SP, "a", "b", "\u{2581}a", "ab", "\u{2581}ab"].map(String::from));
            let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
            kv[3].2 = strings(&refs);
        },
        &["no byte token <0x80>"],
    );
    spm_refused(|kv| kv[2].2 = s("bert"), &["tokenizer.ggml.model \"bert\""]);
    // Truncated anywhere: an error naming the file, never a panic.
    let good = spm_gguf(|_| {});
    for cut in [10, 100, good.len() / 2, good.len() - 1] {
        let e = FileTokenizer::from_bytes(&good[..cut], "m.gguf").unwrap_err();
        assert!(e.message().starts_with("m.gguf: "), "cut at {cut}: {e}");
    }
}

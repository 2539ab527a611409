//! The pipeline on small files written here: what each component does,
//! and every kind of bad file refused with a clear error. The real files
//! are compared with HF `tokenizers` by `scripts/open-models.sh`.

use super::*;
use crate::ErrorKind;
use serde_json::{json, Value};

/// A byte-level file: the 256 byte tokens, then `extra` tokens built by
/// `merges` (as [left, right] pairs), with Llama 3's split pattern.
fn byte_level_file(merges: &[(&str, &str)], added: Value, pre: Value) -> Value {
    let mut vocab = serde_json::Map::new();
    for b in 0..=255u8 {
        vocab.insert(byte_level::byte_to_char(b).to_string(), json!(b as u32));
    }
    for (a, b) in merges {
        let id = vocab.len();
        vocab.entry(format!("{a}{b}")).or_insert(json!(id));
    }
    json!({
        "version": "1.0",
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": pre,
        "post_processor": {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [300], "tokens": ["<s>"]}}},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "fuse_unk": false, "byte_fallback": false,
            "ignore_merges": false, "vocab": vocab, "merges": merges.iter().map(|(a, b)| json!([a, b])).collect::<Vec<_>>()}
    })
}

fn llama3_pre() -> Value {
    json!({"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": split_regex_llama3()}, "behavior": "Isolated", "invert": false},
        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})
}

fn split_regex_llama3() -> &'static str {
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
}

fn special(id: u32, content: &str) -> Value {
    json!({"id": id, "content": content, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})
}

fn load(v: &Value) -> Result<FileTokenizer> {
    FileTokenizer::from_bytes(&serde_json::to_vec(v).unwrap(), "test.json")
}

fn small() -> FileTokenizer {
    let f = byte_level_file(
        &[("Ġ", "t"), ("h", "e"), ("Ġt", "he")],
        json!([special(300, "<s>"), special(301, "<|end|>")]),
        llama3_pre(),
    );
    load(&f).unwrap()
}

#[test]
fn a_byte_level_file_encodes_splits_merges_and_decodes() {
    let t = small();
    // " the" is one piece: Ġ t -> Ġt, h e -> he, Ġt he -> Ġthe (258).
    assert_eq!(t.encode("a the").unwrap(), [b'a' as u32, 258]);
    assert_eq!(t.decode(&t.encode("a the é\n").unwrap()).unwrap(), "a the é\n");
    assert_eq!(t.encode("").unwrap(), Vec::<u32>::new());
}

#[test]
fn special_tokens_are_recognized_unless_asked_not_to() {
    let t = small();
    assert_eq!(t.encode("a<|end|>").unwrap(), [b'a' as u32, 301]);
    let plain = small().with_special_text(true);
    // `<|`, `end`, `|>` as text: seven bytes, none of which the test vocabulary merges.
    assert_eq!(plain.encode("<|end|>").unwrap(), "<|end|>".bytes().map(u32::from).collect::<Vec<_>>());
    assert_eq!(t.encode_with_special("a", true).unwrap(), [300, b'a' as u32]);
    assert_eq!(t.decode(&[301]).unwrap(), "<|end|>");
}

#[test]
fn unknown_ids_are_refused_when_decoding() {
    let e = small().decode(&[999]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownToken);
    assert!(e.message().contains("test.json") && e.message().contains("999"), "{e}");
}

/// The error for `f` has `kind` and mentions each of `words`.
fn refused(f: &Value, kind: ErrorKind, words: &[&str]) {
    let e = load(f).unwrap_err();
    assert_eq!(e.kind(), kind, "{e}");
    assert!(e.message().starts_with("test.json: "), "names the file: {e}");
    for w in words {
        assert!(e.message().contains(w), "{w:?} not in {e}");
    }
}

#[test]
fn malformed_files_are_clear_errors() {
    let good = byte_level_file(&[("h", "e")], json!([]), llama3_pre());
    let bytes = serde_json::to_vec(&good).unwrap();
    for cut in [0, 1, bytes.len() / 2, bytes.len() - 1] {
        let e = FileTokenizer::from_bytes(&bytes[..cut], "test.json").unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidJson), "cut at {cut}: {e}");
    }
    let e = FileTokenizer::from_bytes(b"GGUF\0\0", "x.bin").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    let mut f = good.clone();
    f["model"]["vocab"] = json!(["a", "b"]);
    refused(&f, ErrorKind::InvalidJson, &["not a tokenizer.json"]);
    let mut f = good.clone();
    f["model"]["merges"] = json!([["h", "zz"]]);
    refused(&f, ErrorKind::InvalidJson, &["model.merges[0]", "\"zz\""]);
    let mut f = good.clone();
    f["model"]["merges"] = json!(["h e x"]);
    refused(&f, ErrorKind::InvalidJson, &["model.merges[0]"]);
    let mut f = good.clone();
    f["model"]["vocab"].as_object_mut().unwrap().remove("he");
    refused(&f, ErrorKind::InvalidJson, &["makes \"he\""]);
    let mut f = good.clone();
    f["model"]["vocab"].as_object_mut().unwrap().remove("Ġ");
    refused(&f, ErrorKind::InvalidJson, &["byte 0x20"]);
    let mut f = good.clone();
    f["model"]["unk_token"] = json!("<unk>");
    refused(&f, ErrorKind::InvalidJson, &["unk_token"]);
    let mut f = good.clone();
    f["pre_tokenizer"]["pretokenizers"][0]["pattern"] = json!({"Regex": "(\\p{L}"});
    refused(&f, ErrorKind::InvalidJson, &["pre_tokenizer.pretokenizers[0].pattern", "does not compile"]);
    let mut f = good.clone();
    f["pre_tokenizer"]["pretokenizers"][0]["behavior"] = json!(3);
    refused(&f, ErrorKind::InvalidJson, &["behavior"]);
    let mut f = good.clone();
    f["pre_tokenizer"]["pretokenizers"][1]["use_regex"] = json!("yes");
    refused(&f, ErrorKind::InvalidJson, &["use_regex", "not a boolean"]);
    let mut f = good.clone();
    f["added_tokens"] = json!([{"id": -1, "content": "x"}]);
    refused(&f, ErrorKind::InvalidJson, &[]);
    let mut f = good.clone();
    f["model"]["vocab"]["big"] = json!(1u64 << 40);
    refused(&f, ErrorKind::InvalidJson, &[]);
}

#[test]
fn what_the_pipeline_does_not_implement_is_refused_by_name() {
    let good = byte_level_file(&[("h", "e")], json!([]), llama3_pre());
    for kind in ["Unigram", "WordPiece", "WordLevel"] {
        let mut f = good.clone();
        f["model"]["type"] = json!(kind);
        refused(&f, ErrorKind::InvalidArgument, &[kind, "not supported"]);
    }
    let mut f = good.clone();
    f["model"]["dropout"] = json!(0.1);
    refused(&f, ErrorKind::InvalidArgument, &["dropout"]);
    let mut f = good.clone();
    f["normalizer"] = json!({"type": "BertNormalizer"});
    refused(&f, ErrorKind::InvalidArgument, &["BertNormalizer"]);
    let mut f = good.clone();
    f["pre_tokenizer"] = json!({"type": "Whitespace"});
    refused(&f, ErrorKind::InvalidArgument, &["Whitespace"]);
    // An unsupported post-processor only matters when special tokens are added.
    let mut f = good.clone();
    f["post_processor"] = json!({"type": "Mystery"});
    let t = load(&f).unwrap();
    assert_eq!(t.encode("he").unwrap(), [256]);
    assert_eq!(t.encode_with_special("he", true).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn files_over_the_limit_are_refused_before_reading() {
    let dir = std::env::temp_dir().join(format!("turnfit-pipeline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("huge.json");
    // A sparse file: its size is declared, no memory or disk is used.
    std::fs::File::create(&path).unwrap().set_len(MAX_TOKENIZER_FILE_BYTES as u64 + 1).unwrap();
    let e = FileTokenizer::from_file(&path).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    assert!(e.message().contains("huge.json"), "{e}");
    let e = FileTokenizer::from_file(dir.join("missing.json")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.message().contains("missing.json"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A path that is not a regular file is refused before it is read: before,
/// `/dev/zero` (length 0, so under the limit) was read until memory ran out,
/// and a FIFO blocked the caller in `open` until a writer came.
#[cfg(unix)]
#[test]
fn paths_that_are_not_regular_files_are_refused_unread() {
    for path in ["/dev/zero", "/dev/null", "/"] {
        if !std::path::Path::new(path).exists() {
            continue;
        }
        let e = FileTokenizer::from_file(path).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{path}: {e}");
        assert!(e.message().contains("not a regular file"), "{e}");
    }
    let dir = std::env::temp_dir().join(format!("turnfit-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("tokenizer.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    if made {
        let e = FileTokenizer::from_file(&fifo).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// SentencePiece-style files (Gemma 3, Llama 2 as `tokenizer.json`): spaces
/// become `▁` in the normalizer, the whole text is one piece, unknown
/// characters fall back to byte tokens; and a long unsplit text is merged in
/// O(n log n), not quadratic time.
#[test]
fn a_sentencepiece_style_file_with_byte_fallback() {
    let mut vocab = serde_json::Map::new();
    for (i, t) in ["<unk>", "\u{2581}", "a", "b", "\u{2581}a", "ab", "aa"].iter().enumerate() {
        vocab.insert(t.to_string(), json!(i));
    }
    for b in 0..=255u32 {
        let id = vocab.len();
        vocab.insert(format!("<0x{b:02X}>"), json!(id));
    }
    let f = json!({
        "added_tokens": [],
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"},
        "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": false},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}]},
        "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true, "vocab": vocab,
            "merges": [["\u{2581}", "a"], ["a", "b"], ["a", "a"]]}
    });
    let t = load(&f).unwrap();
    let ids = t.encode("ab a\u{e9}").unwrap();
    // "ab▁aé": ab, ▁a, then é as its two UTF-8 bytes.
    assert_eq!(ids, [5, 4, 7 + 0xC3, 7 + 0xA9]);
    assert_eq!(t.decode(&ids).unwrap(), "ab a\u{e9}");
    let long = "a".repeat(100_000);
    assert_eq!(t.encode(&long).unwrap(), vec![6; 50_000]);
}

#[test]
fn calls_from_many_threads_share_the_kept_caches_and_agree() {
    // The tokenizer keeps its piece caches across calls (scratch.rs): the
    // same text gives the same ids on every call and every thread, also
    // after other texts filled the caches.
    let t = std::sync::Arc::new(small());
    let texts = ["a the the", "the<|end|> é\n", "hello the world", "  the  the\n\n"];
    let want: Vec<Vec<u32>> = texts.iter().map(|s| small().encode(s).unwrap()).collect();
    let threads: Vec<_> = (0..12)
        .map(|k| {
            let (t, want) = (t.clone(), want.clone());
            std::thread::spawn(move || {
                for i in 0..200 {
                    let j = (i + k) % texts.len();
                    assert_eq!(t.encode(texts[j]).unwrap(), want[j]);
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|h| h.join().unwrap());
}

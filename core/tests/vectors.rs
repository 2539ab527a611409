//! Runs every conformance vector in tests/vectors/*.json against the core.
//! The expected values come from OpenAI's Python tiktoken (see
//! tests/vectors/README.md); every binding runs the same files.

use std::path::PathBuf;

use ctxkit::{DecodeMode, Encoding, SpecialTokens, Tokenizer, TruncateSide};
use serde_json::Value;

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

fn tokenizer(input: &Value) -> Tokenizer {
    let enc = Encoding::from_name(input["encoding"].as_str().expect("encoding")).unwrap();
    let special = match input["special"].as_str().unwrap_or("ordinary") {
        "ordinary" => SpecialTokens::Ordinary,
        "recognize" => SpecialTokens::Recognize,
        other => panic!("bad special {other}"),
    };
    Tokenizer::new(enc).unwrap().with_special_tokens(special)
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().expect("ids").iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

/// Runs one vector; returns a description of the mismatch, if any.
fn run(v: &Value) -> Result<(), String> {
    let (op, input, expected) = (v["op"].as_str().unwrap_or(""), &v["input"], &v["expected"]);
    let t = tokenizer(input);
    let text = input["text"].as_str().unwrap_or("");
    let got: Value = match op {
        "encode" => {
            let ids = t.encode(text).map_err(|e| e.to_string())?;
            let count = t.count(text).map_err(|e| e.to_string())?;
            serde_json::json!({ "ids": ids, "count": count })
        }
        "decode" => {
            let mode = match input["mode"].as_str() {
                Some("strict") => DecodeMode::Strict,
                _ => DecodeMode::Replace,
            };
            match t.decode(&ids(&input["ids"]), mode) {
                Ok(s) => serde_json::json!({ "text": s }),
                Err(e) => serde_json::json!({ "error": e.kind().as_str() }),
            }
        }
        "count_until_limit" => {
            let limit = input["limit"].as_u64().unwrap() as usize;
            let r = t.count_until_limit(text, limit).map_err(|e| e.to_string())?;
            if r.exceeded {
                let min = expected["tokens_min"].as_u64().unwrap_or(0) as usize;
                if r.tokens < min {
                    return Err(format!("exceeded with {} tokens, expected at least {min}", r.tokens));
                }
                serde_json::json!({ "exceeded": true, "tokens_min": expected["tokens_min"] })
            } else {
                serde_json::json!({ "tokens": r.tokens, "exceeded": false })
            }
        }
        "truncate" => {
            let side = match input["side"].as_str() {
                Some("head") => TruncateSide::Head,
                Some("tail") => TruncateSide::Tail,
                Some("both") => TruncateSide::Both,
                other => return Err(format!("bad side {other:?}")),
            };
            let max = input["max_tokens"].as_u64().unwrap() as usize;
            match t.truncate(text, max, side, input["marker"].as_str()) {
                Ok(r) => serde_json::to_value(r).unwrap(),
                Err(e) => serde_json::json!({ "error": e.kind().as_str() }),
            }
        }
        other => return Err(format!("unknown op {other:?}")),
    };
    if &got == expected {
        Ok(())
    } else {
        Err(format!("expected {expected}\n     got {got}"))
    }
}

#[test]
fn every_conformance_vector_passes() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("tests/vectors exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no vector files");
    let (mut passed, mut failures) = (0usize, Vec::new());
    for file in &files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(doc["format"], 1, "{}", file.display());
        let vectors = doc["vectors"].as_array().expect("vectors array");
        assert!(vectors.len() >= 100, "{} has only {} vectors", file.display(), vectors.len());
        for v in vectors {
            match run(v) {
                Ok(()) => passed += 1,
                Err(e) => failures.push(format!("{}: {}", v["name"], e)),
            }
        }
    }
    for f in failures.iter().take(20) {
        eprintln!("FAIL {f}");
    }
    assert!(failures.is_empty(), "{} of {} vectors failed", failures.len(), passed + failures.len());
    eprintln!("vectors: {passed} passed");
}

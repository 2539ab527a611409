//! The byte-level and special-token API against OpenAI's tiktoken: every
//! case of tests/fixtures/tiktoken/bytes_oracle.json, whose expectations
//! tiktoken 0.14.0 produced (gen_bytes_oracle.py next to it): token bytes,
//! single-token lookup, decode_bytes, decode in three modes,
//! decode_with_offsets, _encode_bytes on bytes that are not UTF-8 (random and
//! real text cut inside characters), allowed / disallowed special sets.

use std::path::PathBuf;

use serde_json::{json, Value};
use turnfit::{DecodeMode, Encoding, ErrorKind, SpecialPolicy, SpecialSet, Tokenizer};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| u32::try_from(x.as_u64().unwrap()).unwrap()).collect()
}

fn set(v: &Value) -> SpecialSet {
    match v {
        Value::String(s) if s == "all" => SpecialSet::All,
        Value::Array(a) => SpecialSet::of(a.iter().map(|x| x.as_str().unwrap().to_owned())),
        other => panic!("bad set {other}"),
    }
}

fn err(e: turnfit::Error) -> Value {
    json!({ "error": e.kind().as_str() })
}

fn run(t: &Tokenizer, op: &str, input: &Value) -> Value {
    match op {
        "special_tokens" => {
            let list: Vec<Value> = serde_json::from_str(&t.special_tokens_json().unwrap()).unwrap();
            let map: serde_json::Map<String, Value> =
                list.iter().map(|x| (x["token"].as_str().unwrap().to_owned(), x["id"].clone())).collect();
            if map.len() < 100 {
                json!({ "tokens": map })
            } else {
                json!({ "count": map.len(), "first": list[..20].iter().map(|x| (x["token"].as_str().unwrap().to_owned(), x["id"].clone())).collect::<serde_json::Map<_, _>>() })
            }
        }
        "token_bytes" => {
            let id = input["id"].as_u64().unwrap();
            match u32::try_from(id) {
                Ok(id) => t.token_bytes(id).map_or_else(err, |b| json!({ "bytes": to_hex(b) })),
                Err(_) => json!({ "error": "unknown_token" }),
            }
        }
        "token_id" => t.token_id(&hex(input["bytes"].as_str().unwrap())).map_or_else(err, |id| json!({ "id": id })),
        "decode_bytes" => t.decode_bytes(&ids(&input["ids"])).map_or_else(err, |b| json!({ "bytes": to_hex(&b) })),
        "decode" => {
            let mode = DecodeMode::from_name(input["mode"].as_str().unwrap()).unwrap();
            t.decode(&ids(&input["ids"]), mode).map_or_else(err, |s| json!({ "text": s }))
        }
        "decode_with_offsets" => {
            t.decode_with_offsets(&ids(&input["ids"])).map_or_else(err, |(s, o)| json!({ "text": s, "offsets": o }))
        }
        "encode_bytes" => {
            t.encode_bytes(&hex(input["bytes"].as_str().unwrap())).map_or_else(err, |i| json!({ "ids": i }))
        }
        "encode_special" => {
            let policy = SpecialPolicy {
                allowed: set(&input["allowed_special"]),
                disallowed: set(&input["disallowed_special"]),
            };
            let text = input["text"].as_str().unwrap();
            match t.encode_with(text, &policy) {
                Ok(i) => json!({ "ids": i }),
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
                    // The message names the token: '<|endoftext|>' at byte offset N.
                    let token = e.message().split('\'').nth(1).unwrap_or_default().to_owned();
                    json!({ "error": "disallowed", "token": token })
                }
            }
        }
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn every_case_matches_tiktoken() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/tiktoken/bytes_oracle.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc["oracle"], "tiktoken 0.14.0 (OpenAI)");
    let cases = doc["cases"].as_array().unwrap();
    let mut per_op = std::collections::BTreeMap::<&str, usize>::new();
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let op = case["op"].as_str().unwrap();
        let t = Tokenizer::new(Encoding::from_name(case["encoding"].as_str().unwrap()).unwrap()).unwrap();
        let got = run(&t, op, &case["input"]);
        if got != case["expected"] {
            failures.push(format!(
                "case {i} {op} {}: {}\n  expected {}\n  got      {got}",
                case["encoding"], case["input"], case["expected"]
            ));
        }
        *per_op.entry(op).or_default() += 1;
    }
    println!("tiktoken bytes oracle: {}/{} cases, {per_op:?}", cases.len() - failures.len(), cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from tiktoken:\n{}",
        failures.len(),
        cases.len(),
        failures[..failures.len().min(20)].join("\n")
    );
    for op in
        ["token_bytes", "token_id", "decode_bytes", "decode", "decode_with_offsets", "encode_bytes", "encode_special"]
    {
        assert!(per_op.get(op).copied().unwrap_or(0) >= 50, "too few {op} cases");
    }
}

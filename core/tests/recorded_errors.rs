//! Real provider error bodies (tests/fixtures/errors/recorded.jsonl: HTTP
//! 4xx responses recorded in VCR cassettes of public sdists, see
//! tests/fixtures/errors/SOURCES.md) classified as the providers document
//! them (tests/fixtures/errors/expected.json, written by hand). The
//! documented shapes in examples/data/errors/ are hand-made; these are what
//! the servers actually sent.

use std::collections::BTreeMap;

use serde_json::Value;
use turnfit::recovery::{classify, Provider};

fn fixture(name: &str) -> String {
    let path = format!("{}/../tests/fixtures/errors/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn every_recorded_error_body_gets_the_documented_category_and_decision() {
    let expected: Value = serde_json::from_str(&fixture("expected.json")).unwrap();
    let expected = expected["expected"].as_object().expect("expected.json has an 'expected' object");
    let mut seen = BTreeMap::new();
    let mut wrong = Vec::new();
    for line in fixture("recorded.jsonl").lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let id = r["id"].as_str().unwrap();
        let want = expected.get(id).unwrap_or_else(|| panic!("{id} has no hand-written expectation"));
        let provider = Provider::from_name(r["provider"].as_str().unwrap()).unwrap();
        let headers: Vec<(&str, &str)> =
            r["headers"].as_object().unwrap().iter().map(|(k, v)| (k.as_str(), v.as_str().unwrap())).collect();
        let status = u16::try_from(r["status"].as_u64().unwrap()).unwrap();
        let c =
            serde_json::to_value(classify(provider, status, r["body"].as_str().unwrap(), &headers).unwrap()).unwrap();
        for field in ["category", "action", "retryable"] {
            if c[field] != want[field] {
                wrong.push(format!("{id} ({}): {field} {} (expected {})", r["source"]["path"], c[field], want[field]));
            }
        }
        *seen.entry(r["provider"].as_str().unwrap().to_owned()).or_insert(0) += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(seen.values().sum::<usize>(), expected.len(), "every expectation has its recording");
    assert!(seen.len() >= 3, "providers covered: {seen:?}");
}

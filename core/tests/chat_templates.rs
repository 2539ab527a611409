//! Chat templates rendered byte-identically to transformers (jinja2): every
//! template of llama.cpp's models/templates collection (llama-cpp-python 0.3.36
//! sdist, fetched by scripts/templates.sh) on the conversations of
//! tests/fixtures/templates/conversations.json, against the renders of
//! scripts/templates/reference.py (transformers 5.23.0, jinja2 3.1.6).
//! Prints N/N per template; a template transformers renders and turnfit
//! refuses is listed with the reason and must be in KNOWN_REFUSED; any
//! difference in bytes fails. Skipped (with a line saying so) without the
//! files: run `bash scripts/templates.sh`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use turnfit::template::{ChatTemplate, RenderOptions};

/// Templates turnfit refuses on some case that transformers renders, with the
/// reason (kept short; the test prints the full error).
const KNOWN_REFUSED: &[(&str, &str)] = &[(
    "meetkai-functionary-medium-v3.1",
    "`\"text\"|safe + schema`: jinja2's Markup HTML-escapes the added string (&#34;); refused when a tools list is rendered",
)];

/// Templates transformers fails on with a Python TypeError (a template bug,
/// not a deliberate refusal) where turnfit renders: minijinja is more lenient.
const KNOWN_LENIENT: &[(&str, &str)] = &[
    (
        "CohereForAI-c4ai-command-r-plus-tool_use",
        "iterates `tools` when it is None: jinja2 raises, minijinja iterates nothing",
    ),
    ("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", "iterates `tools` when it is None"),
    ("NousResearch-Hermes-3-Llama-3.1-8B-tool_use", "iterates `tools` when it is None"),
    (
        "llama-cpp-deepseek-r1",
        "`tools | map(...) | tojson`: jinja2's map is a generator json.dumps refuses; minijinja's is a list",
    ),
];

#[test]
fn templates_render_as_transformers_does() {
    let (Ok(dir), Ok(reference)) = (std::env::var("TURNFIT_TEMPLATES_DIR"), std::env::var("TURNFIT_TEMPLATES_REF"))
    else {
        println!(
            "chat templates: SKIPPED (TURNFIT_TEMPLATES_DIR/TURNFIT_TEMPLATES_REF unset; run scripts/templates.sh)"
        );
        return;
    };
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/templates/conversations.json");
    let cases: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let cases = cases["cases"].as_array().unwrap();
    let reference: BTreeMap<String, BTreeMap<String, Value>> =
        serde_json::from_str(&std::fs::read_to_string(reference).unwrap()).unwrap();
    assert!(reference.len() >= 60, "the reference holds {} templates", reference.len());

    let mut mismatches = Vec::new();
    let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut lenient: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let (mut total_ok, mut total, mut both_refused) = (0, 0, 0);
    for (name, expected) in &reference {
        let source = std::fs::read_to_string(PathBuf::from(&dir).join(format!("{name}.jinja"))).unwrap();
        let template = ChatTemplate::new(&source);
        let mut ok = 0;
        for case in cases {
            let case_name = case["name"].as_str().unwrap();
            let want = &expected[case_name];
            let options = RenderOptions {
                tools: case.get("tools").cloned(),
                add_generation_prompt: case["add_generation_prompt"].as_bool().unwrap(),
                bos_token: Some("<|bos|>".into()),
                eos_token: Some("<|eos|>".into()),
                kwargs: case.get("kwargs").and_then(Value::as_object).cloned().unwrap_or_default(),
                fixed_now: Some("2024-07-26T10:00:00".into()),
                ..RenderOptions::default()
            };
            let got = template.as_ref().map_err(Clone::clone).and_then(|t| t.render(&case["messages"], &options));
            match (want.get("text").and_then(Value::as_str), got) {
                (Some(text), Ok(out)) if out == text => ok += 1,
                (Some(text), Ok(out)) => {
                    let at =
                        text.bytes().zip(out.bytes()).position(|(a, b)| a != b).unwrap_or(text.len().min(out.len()));
                    let from = at.saturating_sub(40);
                    mismatches.push(format!(
                        "{name} / {case_name}: differs at byte {at}: transformers {:?} turnfit {:?}",
                        text.get(from..(at + 40).min(text.len())).unwrap_or(""),
                        out.get(from..(at + 40).min(out.len())).unwrap_or("")
                    ));
                }
                (Some(_), Err(e)) => refused.entry(name.clone()).or_default().push(format!("{case_name}: {e}")),
                // Both refuse (the template rejects the conversation, as raise_exception or a type error).
                (None, Err(_)) => {
                    ok += 1;
                    both_refused += 1;
                }
                (None, Ok(_))
                    if want["error"].as_str().is_some_and(|e| e.starts_with("TypeError"))
                        && KNOWN_LENIENT.iter().any(|(k, _)| k == name) =>
                {
                    lenient.entry(name.clone()).or_default().push(case_name.to_string());
                }
                (None, Ok(_)) => mismatches.push(format!(
                    "{name} / {case_name}: transformers refused ({}) but turnfit rendered",
                    want["error"]
                )),
            }
        }
        println!("{name}: {ok}/{}", cases.len());
        total_ok += ok;
        total += cases.len();
    }
    println!(
        "chat templates: {total_ok}/{total} agree with transformers across {} templates ({} identical renders, {both_refused} refused by both)",
        reference.len(),
        total_ok - both_refused
    );
    for (name, reasons) in &refused {
        println!("REFUSED {name}: {}", reasons.join(" | "));
    }
    for (name, cases) in &lenient {
        let why = KNOWN_LENIENT.iter().find(|(k, _)| k == name).map_or("", |(_, w)| w);
        println!("LENIENT {name} ({why}): transformers raised TypeError, turnfit rendered: {}", cases.join(", "));
    }
    for m in &mismatches {
        println!("MISMATCH {m}");
    }
    assert!(mismatches.is_empty(), "{} renders differ from transformers", mismatches.len());
    let unknown: Vec<&String> = refused.keys().filter(|n| !KNOWN_REFUSED.iter().any(|(k, _)| k == n)).collect();
    assert!(unknown.is_empty(), "templates refused that transformers renders: {unknown:?}");
}

//! The prompt's ids for real model files equal transformers'
//! `apply_chat_template(..., tokenize=True, sanitize_control_tokens=True)`
//! (what vLLM sends) on every conversation of
//! tests/fixtures/templates/conversations.json: the ids of
//! scripts/templates/count_reference.py (transformers 5.23.0), cached by
//! scripts/templates.sh with the files' paths. Prints N/N per model; any id
//! differing fails, and so does a case one side refuses and the other counts.
//! Skipped (with a line saying so) without TURNFIT_COUNT_REF.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use turnfit::pipeline::FileTokenizer;
use turnfit::template::{ModelTemplate, PromptCounter, RenderOptions};

#[test]
fn prompt_ids_are_apply_chat_templates() {
    let Ok(reference) = std::env::var("TURNFIT_COUNT_REF") else {
        println!("chat template counts: SKIPPED (TURNFIT_COUNT_REF unset; run scripts/templates.sh)");
        return;
    };
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/templates/conversations.json");
    let cases: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let cases = cases["cases"].as_array().unwrap();
    let reference: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(reference).unwrap()).unwrap();
    let mut failures = Vec::new();
    for (model, entry) in &reference {
        let path = Path::new(entry["tokenizer"].as_str().unwrap());
        let tokenizer = Arc::new(FileTokenizer::from_file(path).unwrap());
        let (mut ok, mut counted) = (0, 0);
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let tools = case.get("tools").cloned();
            let file = entry["template"].as_str().map(Path::new);
            let got = ModelTemplate::load(path, &tokenizer, tools.is_some(), file)
                .and_then(|t| PromptCounter::new(t, tokenizer.clone()))
                .and_then(|counter| {
                    let options = RenderOptions {
                        tools,
                        add_generation_prompt: case["add_generation_prompt"].as_bool().unwrap(),
                        kwargs: case.get("kwargs").and_then(Value::as_object).cloned().unwrap_or_default(),
                        fixed_now: Some("2024-07-26T10:00:00".into()),
                        ..RenderOptions::default()
                    };
                    counter.ids(&case["messages"], &options)
                });
            let want = &entry["cases"][name];
            match (want.get("ids"), got) {
                (Some(ids), Ok(got)) => {
                    let ids: Vec<u32> = serde_json::from_value(ids.clone()).unwrap();
                    if ids == got {
                        ok += 1;
                        counted += 1;
                    } else {
                        let at = ids.iter().zip(&got).position(|(a, b)| a != b).unwrap_or(ids.len().min(got.len()));
                        failures.push(format!(
                            "{model} / {name}: {} ids, turnfit {}; first difference at {at}: transformers {:?} turnfit {:?}",
                            ids.len(),
                            got.len(),
                            &ids[at.saturating_sub(3)..(at + 5).min(ids.len())],
                            &got[at.saturating_sub(3)..(at + 5).min(got.len())]
                        ));
                    }
                }
                (Some(_), Err(e)) => failures.push(format!("{model} / {name}: transformers counts, turnfit: {e}")),
                (None, Err(_)) => ok += 1,
                (None, Ok(_)) => failures
                    .push(format!("{model} / {name}: transformers refused ({}), turnfit counted", want["error"])),
            }
        }
        println!("{model}: {ok}/{} ({counted} counted, {} refused by both)", cases.len(), ok - counted);
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}

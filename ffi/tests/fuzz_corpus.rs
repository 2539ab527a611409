//! Replays the committed seed corpus of the `abi` fuzz target
//! (fuzz/corpus/abi/) through the same checking function the fuzz target
//! runs (fuzz/checks/abi.rs). This crate builds no rlib, so the file is
//! compiled as a unit-test module of the ffi crate (see `lib.rs`), where
//! `super::ffi` is the crate itself; `autotests = false` keeps cargo from
//! also building it as an integration test.

#[path = "../../fuzz/checks/common.rs"]
mod common;
mod ffi {
    pub use crate::*;
}
#[path = "../../fuzz/checks/abi.rs"]
mod abi;

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

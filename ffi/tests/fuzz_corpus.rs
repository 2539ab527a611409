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
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/abi");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 50, "abi: only {} seeds in {}", files.len(), dir.display());
    // Every function the target distinguishes has at least one seed.
    let mut covered = vec![false; abi::FUNCTIONS as usize];
    for f in &files {
        let data = std::fs::read(f).unwrap();
        if let Some(&b) = data.first() {
            covered[(b % abi::FUNCTIONS) as usize] = true;
        }
        let result = std::panic::catch_unwind(|| abi::check(&data));
        assert!(result.is_ok(), "abi: check failed on {}", f.display());
    }
    let missing: Vec<usize> = covered.iter().enumerate().filter(|(_, c)| !**c).map(|(i, _)| i).collect();
    assert!(missing.is_empty(), "abi: no seed selects function slots {missing:?}");
}

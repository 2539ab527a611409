//! The checking logic of every fuzz target, as plain functions over bytes.
//!
//! Each `fuzz_targets/<name>.rs` is one line that calls `<name>::check`.
//! The main workspace replays every committed corpus file through the same
//! functions in ordinary `cargo test` (core/tests/fuzz_corpus.rs includes
//! the core checks with `#[path]`; the ffi crate's test module
//! ffi/tests/fuzz_corpus.rs includes `abi.rs`), so a fix is checked against
//! the corpus without cargo-fuzz or a nightly toolchain. A check module
//! refers to its helpers as `super::common` and to the C ABI as
//! `super::ffi`, so it works wherever it is included.

pub mod common;
mod ffi {
    pub use turnfit_ffi::*;
}

pub mod abi;
pub mod chat_codecs;
pub mod chat_template;
pub mod handoff;
pub mod model_locate;
pub mod recovery;
pub mod skill_paths;
pub mod skills_frontmatter;
pub mod turn_carry;
pub mod turn_session;
pub mod tokenizer_file;
pub mod window_fit;
pub mod window_tiers;

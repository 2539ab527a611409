//! The C ABI of turnfit: a thin layer that converts C arguments to core types,
//! calls the core, and converts results and errors back. No behaviour lives
//! here; see `include/turnfit.h` (generated from this crate) for the contract.
//!
//! Conventions every function follows, enforced by the helpers in `args`,
//! `boundary` and `error`:
//! - fallible functions return `turnfit_status`; on failure, when `err` is not
//!   NULL, `*err` receives an owned `turnfit_error`;
//! - out-parameters are written only on success;
//! - text comes in as `(const uint8_t *ptr, size_t len)` UTF-8, with
//!   `(NULL, 0)` meaning the empty string;
//! - every function runs inside the panic boundary, so a panic becomes
//!   `TURNFIT_STATUS_PANIC` instead of unwinding into C.
#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn)]

mod args;
mod boundary;
mod callstack;
mod error;
mod events;
mod file_tokenizer;
mod handoff;
mod recovery;
mod registry;
mod skills;
mod status;
mod strings;
mod token_bytes;
mod tokenizer;
mod toolset;
mod trace;
mod turn;
mod version;
mod window;
mod window_turn;

pub use callstack::*;
pub use error::*;
pub use events::*;
pub use file_tokenizer::*;
pub use handoff::*;
pub use recovery::*;
pub use registry::*;
pub use skills::*;
pub use status::*;
pub use strings::*;
pub use token_bytes::*;
pub use tokenizer::*;
pub use toolset::*;
pub use trace::*;
pub use turn::*;
pub use version::*;
pub use window::*;
pub use window_turn::*;

// Test modules kept under ffi/tests/ (this crate has no rlib, so they are
// unit tests; `autotests = false` in Cargo.toml).
#[cfg(test)]
#[path = "../tests/errors_lists.rs"]
mod errors_lists;
#[cfg(test)]
#[path = "../tests/fuzz_corpus.rs"]
mod fuzz_corpus;
#[cfg(test)]
#[path = "../tests/hostile_numbers.rs"]
mod hostile_numbers;
#[cfg(test)]
#[path = "../tests/options.rs"]
mod options;
#[cfg(all(test, feature = "panic-inject"))]
#[path = "../tests/panic_injection.rs"]
mod panic_injection;
#[cfg(test)]
#[path = "../tests/window_turn.rs"]
mod window_turn_tests;

//! Fuzz target `window_fit`: what it feeds and asserts is documented in
//! fuzz/checks/window_fit.rs, whose `check` `cargo test` also runs over every
//! file of fuzz/corpus/window_fit/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::window_fit::check(data));

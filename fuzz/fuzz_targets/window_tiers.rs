//! Fuzz target `window_tiers`: what it feeds and asserts is documented in
//! fuzz/checks/window_tiers.rs, whose `check` `cargo test` also runs over every
//! file of fuzz/corpus/window_tiers/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::window_tiers::check(data));

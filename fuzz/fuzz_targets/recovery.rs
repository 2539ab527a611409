//! Fuzz target `recovery`: what it feeds and asserts is documented in
//! fuzz/checks/recovery.rs, whose `check` `cargo test` also runs over every
//! file of fuzz/corpus/recovery/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::recovery::check(data));

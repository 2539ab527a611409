//! Fuzz target `model_locate`: what it feeds and asserts is documented in
//! fuzz/checks/model_locate.rs, whose `check` `cargo test` also runs over every
//! file of fuzz/corpus/model_locate/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::model_locate::check(data));

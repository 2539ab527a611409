//! Fuzz target `abi`: what it feeds and asserts is documented in
//! fuzz/checks/abi.rs, whose `check` `cargo test` also runs over every
//! file of fuzz/corpus/abi/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::abi::check(data));

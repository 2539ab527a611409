//! Fuzz target `turn_carry`: what it feeds and asserts is documented in
//! fuzz/checks/turn_carry.rs, whose `check` `cargo test` also runs over every
//! file of fuzz/corpus/turn_carry/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::turn_carry::check(data));

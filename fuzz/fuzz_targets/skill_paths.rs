//! Fuzz target `skill_paths`: what it feeds and asserts is documented in
//! fuzz/checks/skill_paths.rs, whose `check` `cargo test` also runs over every
//! file of fuzz/corpus/skill_paths/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::skill_paths::check(data));

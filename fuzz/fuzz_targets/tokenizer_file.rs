//! Fuzz target `tokenizer_file`: what it feeds and asserts is documented in
//! fuzz/checks/tokenizer_file.rs, whose `check` `cargo test` also runs over every
//! file of fuzz/corpus/tokenizer_file/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::tokenizer_file::check(data));

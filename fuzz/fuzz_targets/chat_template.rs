//! Fuzz target `chat_template`: what it feeds and asserts is documented in
//! fuzz/checks/chat_template.rs, whose `check` `cargo test` also runs over every
//! file of fuzz/corpus/chat_template/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::chat_template::check(data));

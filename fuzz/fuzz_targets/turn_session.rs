//! Fuzz target `turn_session`: what it feeds and asserts is documented in
//! fuzz/checks/turn_session.rs, whose `check` `cargo test` also runs over
//! every file of fuzz/corpus/turn_session/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::turn_session::check(data));

//! Fuzz target `skills_frontmatter`: what it feeds and asserts is documented in
//! fuzz/checks/skills_frontmatter.rs, whose `check` `cargo test` also runs over every
//! file of fuzz/corpus/skills_frontmatter/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| turnfit_fuzz_checks::skills_frontmatter::check(data));

//! The pre-tokenizer's Unicode class table (`core/data/unicode_classes.bin`)
//! must say exactly what the regex engine behind tiktoken says about every
//! code point: `\p{Lu}`, `\p{Ll}`, `\p{Lt}`, `\p{Lm}`, `\p{Lo}`, `\p{M}`,
//! `\p{N}` and `\s`. This test rebuilds the table from regex-syntax (the
//! crate fancy-regex compiles those classes with) and compares it byte for
//! byte; `TURNFIT_BLESS=1` rewrites the file instead, after a regex-syntax
//! upgrade brings a new Unicode version.
//!
//! Layout (read by `core/src/tokens/unicode.rs`): code points are split into
//! blocks of 128; a header of 8704 little-endian `u16` block numbers (one per
//! block, 0x110000 / 128) is followed by the distinct blocks, 128 class bytes
//! each. Class bits: 1 Lu, 2 Ll, 4 Lt, 8 Lm, 16 Lo, 32 M, 64 N, 128 White_Space.

use regex_syntax::hir::{Class, HirKind};

const CLASSES: [&str; 8] = [r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}", r"\p{N}", r"\s"];
const BLOCK: usize = 128;
const BLOCKS: usize = 0x110000 / BLOCK;

fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    let hir = regex_syntax::ParserBuilder::new().build().parse(pattern).unwrap();
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => c.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect(),
        other => panic!("{pattern} parsed to {other:?}"),
    }
}

fn build() -> Vec<u8> {
    let mut bits = vec![0u8; 0x110000];
    for (bit, pattern) in CLASSES.iter().enumerate() {
        for (a, b) in class_ranges(pattern) {
            for cp in a..=b {
                bits[cp as usize] |= 1 << bit;
            }
        }
    }
    let mut blocks: Vec<&[u8]> = Vec::new();
    let mut index = Vec::with_capacity(BLOCKS);
    for chunk in bits.chunks(BLOCK) {
        let n = blocks.iter().position(|b| *b == chunk).unwrap_or_else(|| {
            blocks.push(chunk);
            blocks.len() - 1
        });
        index.push(u16::try_from(n).unwrap());
    }
    let mut out = Vec::new();
    for n in index {
        out.extend_from_slice(&n.to_le_bytes());
    }
    for b in blocks {
        out.extend_from_slice(b);
    }
    out
}

#[test]
fn unicode_class_table_matches_regex_syntax() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/unicode_classes.bin");
    let fresh = build();
    if std::env::var_os("TURNFIT_BLESS").is_some() {
        std::fs::write(path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read(path).expect("core/data/unicode_classes.bin (TURNFIT_BLESS=1 creates it)");
    assert!(committed == fresh, "core/data/unicode_classes.bin is stale; rerun with TURNFIT_BLESS=1");
}

//! Unicode classes for the hand-written pre-tokenizers.
//!
//! tiktoken's patterns ask four questions of a character: is it a letter
//! (and which kind: `\p{Lu}`, `\p{Ll}`, `\p{Lt}`, `\p{Lm}`, `\p{Lo}`), a mark
//! (`\p{M}`), a number (`\p{N}`) or whitespace (`\s`)? The answers must be
//! the regex engine's own, for the Unicode version it ships, or the pieces
//! (and so the token ids) differ from tiktoken's. The table is therefore
//! generated from regex-syntax and checked against it on every test run
//! (`core/tests/unicode_tables.rs`, which documents the layout).
//!
//! One lookup is two array reads (block offset, then class byte), or one
//! for a two-byte UTF-8 character, and ASCII, which is most text, skips
//! both through a constant table. The arrays are derived from the generated
//! file at compile time, never written by hand.

/// `\p{Lu}`.
pub(crate) const LU: u8 = 1;
/// `\p{Ll}`.
pub(crate) const LL: u8 = 2;
/// `\p{Lt}`.
pub(crate) const LT: u8 = 4;
/// `\p{Lm}`.
pub(crate) const LM: u8 = 8;
/// `\p{Lo}`.
pub(crate) const LO: u8 = 16;
/// `\p{M}`.
pub(crate) const M: u8 = 32;
/// `\p{N}`.
pub(crate) const N: u8 = 64;
/// `\s` (White_Space).
pub(crate) const WS: u8 = 128;
/// `\p{L}`.
pub(crate) const L: u8 = LU | LL | LT | LM | LO;

/// The generated table (layout in `core/tests/unicode_tables.rs`): a header
/// of one little-endian `u16` block number per 128 code points, then the
/// distinct blocks' class bytes. Read only at compile time, into the arrays
/// below, so that the lookups need no byte assembly and fewer bounds checks.
const RAW: &[u8] = include_bytes!("../../data/unicode_classes.bin");
const BLOCK_SHIFT: u32 = 7;
const BLOCKS: usize = 0x110000 >> BLOCK_SHIFT;
/// Bytes of class data after the header.
const DATA_LEN: usize = RAW.len() - 2 * BLOCKS;
/// `DATA`'s size: a power of two, so that an index masked with
/// `DATA_MASK` needs no bounds check.
const DATA_SIZE: usize = DATA_LEN.next_power_of_two();
const DATA_MASK: usize = DATA_SIZE - 1;
// Offsets into `DATA` are `u16`; a Unicode version with more distinct
// blocks than that fails the build here rather than reading wrong classes.
const _: () = assert!(DATA_SIZE <= 1 << 16 && DATA_LEN.is_multiple_of(1 << BLOCK_SHIFT));

/// The distinct blocks' class bytes (the table after its header), padded
/// with zeros to `DATA_SIZE`.
static DATA: [u8; DATA_SIZE] = {
    let mut d = [0u8; DATA_SIZE];
    let mut i = 0;
    while i < DATA_LEN {
        d[i] = RAW[2 * BLOCKS + i];
        i += 1;
    }
    d
};

/// Where block `b`'s 128 class bytes start in `DATA`.
const fn block_offset(b: usize) -> usize {
    (u16::from_le_bytes([RAW[2 * b], RAW[2 * b + 1]]) as usize) << BLOCK_SHIFT
}

/// `block_offset` of every block: one load per lookup instead of two bytes
/// assembled into a block number.
static OFFSET: [u16; BLOCKS] = {
    let mut t = [0u16; BLOCKS];
    let mut b = 0;
    while b < BLOCKS {
        t[b] = block_offset(b) as u16;
        b += 1;
    }
    t
};

/// Classes of U+0000 to U+07FF, indexed by code point: a two-byte UTF-8
/// character (Latin, Greek, Cyrillic, Hebrew, Arabic...) is one load,
/// indexed by the payload bits of its two bytes.
static TWO_BYTE: [u8; 0x800] = {
    let mut t = [0u8; 0x800];
    let mut cp = 0;
    while cp < 0x800 {
        t[cp] = RAW[2 * BLOCKS + block_offset(cp >> BLOCK_SHIFT) + (cp & 0x7F)];
        cp += 1;
    }
    t
};

/// For each 64 code points of the Basic Multilingual Plane, where their
/// class bytes start in `DATA`: a three-byte UTF-8 character (CJK, kana,
/// Hangul, Indic scripts...) selects its 64 with its first two bytes and its
/// class with the third, without assembling the code point.
static BMP_64: [u16; 0x400] = {
    let mut t = [0u16; 0x400];
    let mut c = 0;
    while c < 0x400 {
        t[c] = (block_offset(c >> 1) + ((c & 1) << 6)) as u16;
        c += 1;
    }
    t
};

/// Classes of the 128 ASCII characters; `ascii_table_matches_the_generated_table`
/// checks it against the generated table.
pub(crate) static ASCII: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = if b.is_ascii_uppercase() {
            LU
        } else if b.is_ascii_lowercase() {
            LL
        } else if b.is_ascii_digit() {
            N
        } else if matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ') {
            WS
        } else {
            0
        };
        c += 1;
    }
    t
};

/// The class bits of code point `cp` (which must be below 0x110000).
#[inline]
pub(crate) fn class_of(cp: u32) -> u8 {
    if cp < 128 {
        return ASCII[cp as usize];
    }
    let at = OFFSET[(cp >> BLOCK_SHIFT) as usize] as usize + (cp as usize & ((1 << BLOCK_SHIFT) - 1));
    DATA[at & DATA_MASK]
}

/// Class bits and byte length of the character at `s[i]`; `s` is valid
/// UTF-8 and `i` a character boundary below `s.len()`.
///
/// The pre-tokenizers ask this of every non-ASCII character, and on
/// non-Latin text it was most of their cost (issue 36): two- and three-byte
/// characters, nearly all of such text, are looked up from their bytes'
/// payload bits (`TWO_BYTE`, `BMP_64`) without decoding the code point.
#[inline(always)]
pub(crate) fn class_at(s: &[u8], i: usize) -> (u8, usize) {
    let b0 = s[i];
    if b0 < 0x80 {
        return (ASCII[b0 as usize], 1);
    }
    if b0 < 0xE0 {
        return (class2(b0, s[i + 1]), 2);
    }
    if b0 < 0xF0 {
        return (class3(b0, s[i + 1], s[i + 2]), 3);
    }
    let cp = (u32::from(b0 & 0x07) << 18)
        | (u32::from(s[i + 1] & 0x3F) << 12)
        | (u32::from(s[i + 2] & 0x3F) << 6)
        | u32::from(s[i + 3] & 0x3F);
    (class_of(cp), 4)
}

/// Class of the two-byte character `b0 b1` (one load, no bounds check).
#[inline(always)]
pub(crate) fn class2(b0: u8, b1: u8) -> u8 {
    TWO_BYTE[(usize::from(b0 & 0x1F) << 6) | usize::from(b1 & 0x3F)]
}

/// Class of the three-byte character `b0 b1 b2` (two loads, no bounds
/// check).
#[inline(always)]
pub(crate) fn class3(b0: u8, b1: u8, b2: u8) -> u8 {
    let at = BMP_64[(usize::from(b0 & 0x0F) << 6) | usize::from(b1 & 0x3F)] as usize + usize::from(b2 & 0x3F);
    DATA[at & DATA_MASK]
}

/// Start of the character that ends at byte `end` (exclusive); `end > 0`.
#[inline]
pub(crate) fn prev_char_start(s: &[u8], end: usize) -> usize {
    let mut i = end - 1;
    while i > 0 && (s[i] & 0xC0) == 0x80 {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The class of `cp` read straight from the generated file, as its
    /// layout says (the file itself is checked against regex-syntax by
    /// `core/tests/unicode_tables.rs`).
    fn from_file(cp: u32) -> u8 {
        let b = (cp >> BLOCK_SHIFT) as usize;
        let block = u16::from_le_bytes([RAW[2 * b], RAW[2 * b + 1]]) as usize;
        RAW[2 * BLOCKS + (block << BLOCK_SHIFT) + (cp as usize & 0x7F)]
    }

    #[test]
    fn ascii_table_matches_the_generated_table() {
        for c in 0..128u32 {
            assert_eq!(ASCII[c as usize], from_file(c), "{c:#x}");
        }
    }

    /// Every derived table (`DATA`, `OFFSET`, `TWO_BYTE`, `BMP_64`) and both
    /// lookups agree with the file on every scalar value, from the code
    /// point and from its UTF-8 bytes followed by more text.
    #[test]
    fn lookups_match_the_generated_table_on_every_scalar_value() {
        let mut buf = [0u8; 8];
        for cp in (0..0x110000u32).filter_map(char::from_u32) {
            let want = from_file(cp as u32);
            assert_eq!(class_of(cp as u32), want, "class_of({:#x})", cp as u32);
            let n = cp.encode_utf8(&mut buf).len();
            buf[n..].fill(0xBF);
            assert_eq!(class_at(&buf[..n], 0), (want, n), "class_at({:#x})", cp as u32);
            assert_eq!(class_at(&buf, 0), (want, n), "class_at({:#x}) before continuation bytes", cp as u32);
        }
    }

    #[test]
    fn prev_char_start_finds_every_scalar_value() {
        let mut buf = [0u8; 4];
        for cp in (0..0x110000u32).filter_map(char::from_u32) {
            let s = cp.encode_utf8(&mut buf).as_bytes();
            assert_eq!(prev_char_start(s, s.len()), 0);
        }
    }

    #[test]
    fn spot_checks() {
        assert_eq!(class_of('A' as u32), LU);
        assert_eq!(class_of('ſ' as u32), LL);
        assert_eq!(class_of(0x01C5), LT); // ǅ
        assert_eq!(class_of(0x02B0), LM); // ʰ
        assert_eq!(class_of('中' as u32), LO);
        assert_eq!(class_of(0x0301), M);
        assert_eq!(class_of('٣' as u32), N);
        assert_eq!(class_of(0x3000), WS);
        assert_eq!(class_of(0x85), WS);
        assert_eq!(class_of(0x1F600), 0); // 😀
    }
}

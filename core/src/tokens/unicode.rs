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
//! One lookup is two array reads (block number, then class byte), and ASCII,
//! which is most text, skips both through a constant table.

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

static TABLE: &[u8] = include_bytes!("../../data/unicode_classes.bin");
const BLOCK_SHIFT: u32 = 7;
const BLOCKS: usize = 0x110000 >> BLOCK_SHIFT;

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
    let b = (cp >> BLOCK_SHIFT) as usize;
    let block = u16::from_le_bytes([TABLE[2 * b], TABLE[2 * b + 1]]) as usize;
    TABLE[2 * BLOCKS + (block << BLOCK_SHIFT) + (cp as usize & ((1 << BLOCK_SHIFT) - 1))]
}

/// Decodes the character starting at `s[i]`; `s` is valid UTF-8 and `i` a
/// character boundary below `s.len()`. Returns (code point, byte length).
#[inline(always)]
pub(crate) fn decode(s: &[u8], i: usize) -> (u32, usize) {
    let b0 = s[i] as u32;
    if b0 < 0x80 {
        (b0, 1)
    } else if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | (s[i + 1] as u32 & 0x3F), 2)
    } else if b0 < 0xF0 {
        (((b0 & 0x0F) << 12) | ((s[i + 1] as u32 & 0x3F) << 6) | (s[i + 2] as u32 & 0x3F), 3)
    } else {
        let cp = ((b0 & 0x07) << 18)
            | ((s[i + 1] as u32 & 0x3F) << 12)
            | ((s[i + 2] as u32 & 0x3F) << 6)
            | (s[i + 3] as u32 & 0x3F);
        (cp, 4)
    }
}

/// Class bits and byte length of the character at `s[i]`.
#[inline(always)]
pub(crate) fn class_at(s: &[u8], i: usize) -> (u8, usize) {
    let b = s[i];
    if b < 0x80 {
        return (ASCII[b as usize], 1);
    }
    let (cp, len) = decode(s, i);
    (class_of(cp), len)
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

    #[test]
    fn ascii_table_matches_the_generated_table() {
        for c in 0..128u32 {
            let b = (c >> BLOCK_SHIFT) as usize;
            let block = u16::from_le_bytes([TABLE[2 * b], TABLE[2 * b + 1]]) as usize;
            assert_eq!(ASCII[c as usize], TABLE[2 * BLOCKS + (block << BLOCK_SHIFT) + c as usize], "{c:#x}");
        }
    }

    #[test]
    fn decode_agrees_with_std_on_every_scalar_value() {
        let mut buf = [0u8; 4];
        for cp in (0..0x110000u32).filter_map(char::from_u32) {
            let s = cp.encode_utf8(&mut buf).as_bytes();
            assert_eq!(decode(s, 0), (cp as u32, s.len()));
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

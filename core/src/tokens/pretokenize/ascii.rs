//! ASCII fast paths for the cl100k and o200k pre-tokenizers.
//!
//! Most pieces of real text are decided by ASCII bytes alone: a word with an
//! optional space or punctuation before it, a run of punctuation, one to
//! three digits, a run of spaces. These functions answer those from a byte
//! class table and eight-bytes-at-a-time letter scans, and return `None`
//! whenever a byte of 0x80 or above could change the answer (a non-ASCII
//! letter continuing a word, a Unicode space, a mark after a prefix). The
//! general functions in `pretokenize.rs`, which decode characters and follow
//! the regex alternative by alternative, then decide. So the fast paths
//! never need to know Unicode; they need only agree with the general path
//! wherever they answer, which `pretokenize/tests.rs` checks against
//! fancy-regex on ASCII-heavy text with long runs.
//!
//! With the counting loop inlined around it, this took English prose from
//! 35.1 to 22.5 instructions per byte on cl100k_base and from 52.5 to 26.0
//! on o200k_base (see docs/benchmarks.md).

use super::{contraction, o200k_suffix, space_not_before_nonspace, through_last_newline};

/// `[a-z]`.
const LOWER: u8 = 1;
/// `[A-Z]`.
const UPPER: u8 = 2;
/// `[0-9]`.
const DIGIT: u8 = 4;
/// ASCII `\s` other than CR and LF: space, tab, vertical tab, form feed.
const SPACE: u8 = 8;
/// CR and LF: `\s`, but excluded from the patterns' prefix class.
const NEWLINE: u8 = 16;
/// Every other ASCII byte, `'` included: `[^\s\p{L}\p{N}]`.
const PUNCT: u8 = 32;
/// 0x80 and above: part of a multi-byte character, undecidable here.
const HIGH: u8 = 64;

const LETTER: u8 = LOWER | UPPER;
/// The patterns' optional prefix `[^\r\n\p{L}\p{N}]`, restricted to ASCII.
const PREFIX: u8 = SPACE | PUNCT;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b >= 0x80 {
            HIGH
        } else if b.is_ascii_lowercase() {
            LOWER
        } else if b.is_ascii_uppercase() {
            UPPER
        } else if b.is_ascii_digit() {
            DIGIT
        } else if b == b'\r' || b == b'\n' {
            NEWLINE
        } else if matches!(b, b' ' | b'\t' | 0x0b | 0x0c) {
            SPACE
        } else {
            PUNCT
        };
        i += 1;
    }
    t
};

#[inline(always)]
fn class(s: &[u8], i: usize) -> u8 {
    // Past the end reads as no class at all.
    s.get(i).map_or(0, |&b| CLASS[b as usize])
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `w` that lies in `lo..=hi` (both below 0x80).
/// The bytes are masked to seven bits first, so no addition carries into
/// the next byte; bytes of 0x80 and above are then excluded.
#[inline(always)]
fn in_range(w: u64, lo: u8, hi: u8) -> u64 {
    let x = w & !HIGH_BITS;
    let ge_lo = x.wrapping_add(ONES * u64::from(0x80 - lo));
    let gt_hi = x.wrapping_add(ONES * u64::from(0x7f - hi));
    ge_lo & !gt_hi & !w & HIGH_BITS
}

#[inline(always)]
fn lower_bytes(w: u64) -> u64 {
    in_range(w, b'a', b'z')
}

#[inline(always)]
fn upper_bytes(w: u64) -> u64 {
    in_range(w, b'A', b'Z')
}

#[inline(always)]
fn letter_bytes(w: u64) -> u64 {
    // Setting bit 5 maps A-Z onto a-z and no other byte into a-z.
    in_range(w | (ONES * 0x20), b'a', b'z')
}

/// End of the run of bytes from `j` that `swar` marks (eight at a time) and
/// whose class has a bit in `class` (for the last few bytes).
#[inline(always)]
fn run(s: &[u8], mut j: usize, swar: impl Fn(u64) -> u64, class: u8) -> usize {
    while let Some(w) = s.get(j..j + 8) {
        let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        // The lowest unmarked byte; 8 when all eight are marked.
        let n = (!swar(w) & HIGH_BITS).trailing_zeros() as usize / 8;
        j += n;
        if n < 8 {
            return j;
        }
    }
    while j < s.len() && CLASS[s[j] as usize] & class != 0 {
        j += 1;
    }
    j
}

/// End of `[A-Z]*[a-z]*` from `j`. Most words fit in one eight-byte load,
/// whose upper-case and lower-case lanes then give both runs at once.
#[inline(always)]
fn upper_then_lower(s: &[u8], j: usize) -> usize {
    if let Some(w) = s.get(j..j + 8) {
        let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        let upper = (!upper_bytes(w) & HIGH_BITS).trailing_zeros() as usize / 8;
        if upper < 8 {
            // Non-lower lanes from the first non-upper one on; none means
            // the lower-case run reaches past this load.
            let rest = (!lower_bytes(w) & HIGH_BITS) >> (8 * upper);
            if rest != 0 {
                return j + upper + rest.trailing_zeros() as usize / 8;
            }
            return run(s, j + 8, lower_bytes, LOWER);
        }
    }
    let k = run(s, j, upper_bytes, UPPER);
    run(s, k, lower_bytes, LOWER)
}

/// `Some(e)` unless the byte at `e` starts a multi-byte character, which
/// might extend the run that ended there.
#[inline(always)]
fn decided(s: &[u8], e: usize) -> Option<usize> {
    (class(s, e) & HIGH == 0).then_some(e)
}

/// `\p{N}{1,3}` from the digit at `i`.
#[inline(always)]
fn digits(s: &[u8], i: usize) -> Option<usize> {
    let mut e = i + 1;
    while e < i + 3 && class(s, e) & DIGIT != 0 {
        e += 1;
    }
    if e < i + 3 {
        // A non-ASCII number (Arabic-Indic, fractions, ...) could follow.
        decided(s, e)
    } else {
        Some(e)
    }
}

/// `[^\s\p{L}\p{N}]+` from `j`, then any of `tail`'s bytes (CR, LF and, for
/// o200k, `/`).
#[inline(always)]
fn punctuation(s: &[u8], j: usize, tail: impl Fn(u8) -> bool) -> Option<usize> {
    let mut e = j + 1;
    while class(s, e) & PUNCT != 0 {
        e += 1;
    }
    decided(s, e)?;
    while e < s.len() && tail(s[e]) {
        e += 1;
    }
    Some(e)
}

/// The whitespace alternatives: `\s*[\r\n]`, `\s+(?!\S)`, then `single`
/// (cl100k's `\s`, one character) or the whole run (o200k's `\s+`). Both
/// patterns end at the text's end when the run reaches it (cl100k by
/// `\s++$`, o200k because the look-ahead holds there).
#[inline(always)]
fn whitespace(s: &[u8], i: usize, single: bool) -> Option<usize> {
    let mut j = i + 1;
    while class(s, j) & (SPACE | NEWLINE) != 0 {
        j += 1;
    }
    // A Unicode space (U+00A0, U+3000, ...) could continue the run.
    decided(s, j)?;
    if single && j == s.len() {
        return Some(j); // cl100k's `\s++$` comes before its newline rule.
    }
    Some(through_last_newline(s, i, j).or_else(|| space_not_before_nonspace(s, i, j)).unwrap_or(if single {
        i + 1
    } else {
        j
    }))
}

/// cl100k: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
/// where ASCII decides it (see the module docs).
#[inline(always)]
pub(super) fn cl100k(s: &[u8], i: usize) -> Option<usize> {
    let b = s[i];
    let c = CLASS[b as usize];
    if c & LETTER != 0 {
        return decided(s, run(s, i + 1, letter_bytes, LETTER));
    }
    if b == b'\'' {
        // The contraction alternative comes first.
        if let Some(n) = contraction(s, i + 1, true) {
            return Some(i + 1 + n);
        }
    }
    let next = class(s, i + 1);
    if c & PREFIX != 0 && next & LETTER != 0 {
        return decided(s, run(s, i + 2, letter_bytes, LETTER));
    }
    if c & DIGIT != 0 {
        return digits(s, i);
    }
    if c & PUNCT != 0 {
        return punctuation(s, i, |b| b == b'\r' || b == b'\n');
    }
    if (c | next) & HIGH != 0 {
        // A prefix before a non-ASCII letter, or a space before a symbol.
        return None;
    }
    if b == b' ' && next & PUNCT != 0 {
        return punctuation(s, i + 1, |b| b == b'\r' || b == b'\n');
    }
    if c & (SPACE | NEWLINE) != 0 {
        return whitespace(s, i, true);
    }
    None
}

/// o200k: `[^\r\n\p{L}\p{N}]?UPPER*LOWER+SUFFIX?|[^\r\n\p{L}\p{N}]?UPPER+LOWER*SUFFIX?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
/// where ASCII decides it (see the module docs).
#[inline(always)]
pub(super) fn o200k(s: &[u8], i: usize) -> Option<usize> {
    let b = s[i];
    let c = CLASS[b as usize];
    let next = class(s, i + 1);
    let start = if c & LETTER != 0 {
        Some(i)
    } else if c & PREFIX != 0 && next & LETTER != 0 {
        Some(i + 1)
    } else {
        None
    };
    if let Some(start) = start {
        // ASCII letters are upper or lower case, never both, and neither a
        // modifier letter nor a mark, so both word alternatives end after
        // `[A-Z]*[a-z]*` (the first needs a lower-case letter; when there is
        // none the second matches the same upper-case run).
        let e = decided(s, upper_then_lower(s, start))?;
        return Some(o200k_suffix(s, e));
    }
    if c & DIGIT != 0 {
        return digits(s, i);
    }
    let newline_or_slash = |b: u8| b == b'\r' || b == b'\n' || b == b'/';
    if c & PUNCT != 0 {
        return punctuation(s, i, newline_or_slash);
    }
    if (c | next) & HIGH != 0 {
        return None;
    }
    if b == b' ' && next & PUNCT != 0 {
        return punctuation(s, i + 1, newline_or_slash);
    }
    if c & (SPACE | NEWLINE) != 0 {
        return whitespace(s, i, false);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swar_classes_agree_with_the_table_for_every_byte_in_every_lane() {
        for b in 0..=255u8 {
            for lane in 0..8 {
                // The byte in one lane, neighbours that are and are not in
                // range around it (carries would show up in them).
                for fill in [0u8, b'a', b'Z', 0x7f, 0x80, 0xff] {
                    let mut bytes = [fill; 8];
                    bytes[lane] = b;
                    let w = u64::from_le_bytes(bytes);
                    for (swar, class) in
                        [(lower_bytes as fn(u64) -> u64, LOWER), (upper_bytes, UPPER), (letter_bytes, LETTER)]
                    {
                        let marked = swar(w);
                        for (k, &x) in bytes.iter().enumerate() {
                            let want = CLASS[x as usize] & class != 0;
                            assert_eq!(marked >> (8 * k + 7) & 1 == 1, want, "byte {x:#x} lane {k}");
                        }
                        assert_eq!(marked & !HIGH_BITS, 0);
                    }
                }
            }
        }
    }

    #[test]
    fn runs_cross_eight_byte_boundaries() {
        let s = b"abcdefghijklmnopqrstuvwxyzABC def";
        assert_eq!(run(s, 0, letter_bytes, LETTER), 29);
        assert_eq!(run(s, 0, lower_bytes, LOWER), 26);
        assert_eq!(run(s, 26, upper_bytes, UPPER), 29);
        assert_eq!(run(s, 30, lower_bytes, LOWER), 33);
        assert_eq!(run(s, 33, lower_bytes, LOWER), 33);
    }

    #[test]
    fn upper_then_lower_matches_two_runs_at_every_length_and_offset() {
        let words = ["", "A", "a", "ABCDEFGHIJ", "abcdefghij", "ABCDabcd", "ABCDEFGHabc", "Abcdefghijk", "ABcDe"];
        for w in words {
            for tail in ["", " ", "Z", "z", "é", "0123456789"] {
                for pad in 0..9 {
                    let t = format!("{}{w}{tail}", "-".repeat(pad));
                    let s = t.as_bytes();
                    let k = run(s, pad, upper_bytes, UPPER);
                    assert_eq!(upper_then_lower(s, pad), run(s, k, lower_bytes, LOWER), "{t:?}");
                }
            }
        }
    }
}

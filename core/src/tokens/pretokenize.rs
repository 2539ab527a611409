//! Hand-written pre-tokenizers, one per tiktoken pattern.
//!
//! tiktoken splits text with a regex before merging bytes; a general regex
//! engine (with the look-ahead these patterns need) caps counting at a few
//! tens of MB/s, far below what the merge step can do. Each function here
//! returns where the piece starting at `i` ends, following the pattern's
//! alternatives in order and reproducing the regex engine's backtracking
//! (greedy, possessive and look-ahead) by hand. The reasoning for each
//! alternative is next to its code; `pretokenize/tests.rs` compares every
//! pattern with fancy-regex on random and adversarial text, and the oracle
//! tests compare the resulting ids with tiktoken-rs.
//!
//! Inputs are `&[u8]` holding valid UTF-8 (they come from `&str`), and `i` is
//! always a character boundary below `s.len()`; the result is a character
//! boundary greater than `i`, so iteration always advances.

use super::unicode::{class2, class3, class_at, prev_char_start, ASCII, L, LL, LM, LO, LT, LU, M, N, WS};

/// Which of tiktoken's patterns an encoding uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pattern {
    /// r50k_base and p50k_base (GPT-2's pattern).
    Gpt2,
    /// cl100k_base.
    Cl100k,
    /// o200k_base.
    O200k,
}

/// End of the run of characters, from `i`, whose class has a bit in `mask`.
#[inline]
fn run(s: &[u8], i: usize, mask: u8) -> usize {
    run_noting(s, i, mask, 0).0
}

/// As [`run`], also returning the class of the character that stopped the
/// run (0 at the end of the text) and where the run's last character with a
/// bit in `note` ends (`i` when none has).
///
/// Two- and three-byte characters are scanned in loops of their own: a word
/// is nearly always in one script, so a character's length is dispatched
/// once per stretch of same-length characters, and each is bounds-checked
/// once rather than once per byte (about a sixth of the per-character cost
/// on CJK and Cyrillic text, issue 36).
#[inline(always)]
fn run_noting(s: &[u8], mut i: usize, mask: u8, note: u8) -> (usize, u8, usize) {
    let mut last = i;
    // Takes a character of class `c` and length `len` into the run, or
    // returns where the run stops.
    macro_rules! take {
        ($c:expr, $len:expr) => {{
            let c = $c;
            if c & mask == 0 {
                return (i, c, last);
            }
            i += $len;
            if c & note != 0 {
                last = i;
            }
        }};
    }
    while let Some(&b0) = s.get(i) {
        if b0 < 0x80 {
            take!(ASCII[usize::from(b0)], 1);
        } else if b0 & 0xE0 == 0xC0 {
            take!(class2(b0, s[i + 1]), 2);
            while let Some(&[b0, b1]) = s.get(i..i + 2) {
                if b0 & 0xE0 != 0xC0 {
                    break;
                }
                take!(class2(b0, b1), 2);
            }
        } else if b0 & 0xF0 == 0xE0 {
            take!(class3(b0, s[i + 1], s[i + 2]), 3);
            while let Some(&[b0, b1, b2]) = s.get(i..i + 3) {
                if b0 & 0xF0 != 0xE0 {
                    break;
                }
                take!(class3(b0, b1, b2), 3);
            }
        } else {
            let (c, len) = class_at(s, i);
            take!(c, len);
        }
    }
    (i, 0, last)
}

/// End of the run of characters, from `i`, whose class has no bit in `mask`.
#[inline]
fn run_not(s: &[u8], mut i: usize, mask: u8) -> usize {
    while i < s.len() {
        let (c, len) = class_at(s, i);
        if c & mask != 0 {
            break;
        }
        i += len;
    }
    i
}

#[inline]
fn class_at_or_none(s: &[u8], i: usize) -> u8 {
    if i < s.len() {
        class_at(s, i).0
    } else {
        0
    }
}

/// Whether the character at `i` matches ASCII letter `lower` case-
/// insensitively, as the regex engine's simple case folding does: `s` also
/// matches U+017F LATIN SMALL LETTER LONG S. Returns its byte length.
#[inline]
fn fold_eq(s: &[u8], i: usize, lower: u8) -> Option<usize> {
    let b = *s.get(i)?;
    if b.to_ascii_lowercase() == lower {
        return Some(1);
    }
    // U+017F is 0xC5 0xBF in UTF-8.
    (lower == b's' && b == 0xC5 && s.get(i + 1) == Some(&0xBF)).then_some(2)
}

/// Bytes after the apostrophe matched by `(?:[sdmt]|ll|ve|re)`, case-sensitive
/// (GPT-2) or with `(?i:...)` (cl100k, o200k's suffix). `i` is just after `'`.
#[inline]
fn contraction(s: &[u8], i: usize, fold: bool) -> Option<usize> {
    let eq = |at: usize, c: u8| -> Option<usize> {
        if fold {
            fold_eq(s, at, c)
        } else {
            (s.get(at) == Some(&c)).then_some(1)
        }
    };
    for c in [b's', b'd', b'm', b't'] {
        if let Some(n) = eq(i, c) {
            return Some(n);
        }
    }
    for [a, b] in [[b'l', b'l'], [b'v', b'e'], [b'r', b'e']] {
        if let Some(n) = eq(i, a) {
            if let Some(m) = eq(i + n, b) {
                return Some(n + m);
            }
        }
    }
    None
}

/// Whitespace alternatives shared by the patterns. `j` is the end of the
/// maximal whitespace run starting at `i`.
///
/// `\s+(?!\S)`: the greedy run either reaches the end of the text (the
/// look-ahead holds there) or stops before a non-space; backtracking one
/// character then leaves a space next, so the match is the run minus its last
/// character, when that leaves at least one.
#[inline]
fn space_not_before_nonspace(s: &[u8], i: usize, j: usize) -> Option<usize> {
    if j == s.len() {
        return Some(j);
    }
    let last = prev_char_start(s, j);
    (last > i).then_some(last)
}

/// `\s*[\r\n]` (cl100k) and `\s*[\r\n]+` (o200k): backtracking the greedy
/// `\s*` stops at the last CR or LF of the run; `[\r\n]+` cannot extend past
/// it because it is the last. CR and LF are ASCII, so a byte scan is exact.
#[inline]
fn through_last_newline(s: &[u8], i: usize, j: usize) -> Option<usize> {
    s[i..j].iter().rposition(|&b| b == b'\r' || b == b'\n').map(|r| i + r + 1)
}

/// `\p{N}{1,3}` after its first number (which ends at `j`): at most two more.
#[inline]
fn up_to_three_numbers(s: &[u8], mut j: usize) -> usize {
    for _ in 0..2 {
        if j >= s.len() {
            break;
        }
        let (c, len) = class_at(s, j);
        if c & N == 0 {
            break;
        }
        j += len;
    }
    j
}

/// `[^\r\n\p{L}\p{N}]`: any character but CR, LF, letters and numbers.
#[inline]
fn is_prefix(b: u8, class: u8) -> bool {
    class & (L | N) == 0 && b != b'\r' && b != b'\n'
}

/// r50k/p50k: `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`
fn gpt2(s: &[u8], i: usize) -> usize {
    let b = s[i];
    if b == b'\'' {
        if let Some(n) = contraction(s, i + 1, false) {
            return i + 1 + n;
        }
    }
    // ` ?` is greedy but not possessive: when the space is not followed by
    // the class, the alternative retries without it, and a space is in none
    // of the three classes, so that retry fails too.
    let j = if b == b' ' { i + 1 } else { i };
    if j < s.len() {
        let (c, _) = class_at(s, j);
        if c & L != 0 {
            return run(s, j, L);
        }
        if c & N != 0 {
            return run(s, j, N);
        }
        if c & (WS | L | N) == 0 {
            return run_not(s, j, WS | L | N);
        }
    }
    // What is left starts with whitespace.
    let (_, len) = class_at(s, i);
    let j = run(s, i, WS);
    if j == s.len() {
        return j; // \s++$
    }
    space_not_before_nonspace(s, i, j).unwrap_or(i + len)
}

/// cl100k, through the ASCII fast path when it decides.
#[inline(always)]
fn cl100k(s: &[u8], i: usize) -> usize {
    match ascii::cl100k(s, i) {
        Some(e) => e,
        None => cl100k_general(s, i),
    }
}

/// cl100k: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
#[inline(never)]
fn cl100k_general(s: &[u8], i: usize) -> usize {
    let b = s[i];
    if b == b'\'' {
        if let Some(n) = contraction(s, i + 1, true) {
            return i + 1 + n;
        }
    }
    let (c, len) = class_at(s, i);
    // `[^\r\n\p{L}\p{N}]?+\p{L}++`: possessive, so a prefix character that is
    // not followed by a letter fails the alternative (and it is no letter).
    if c & L != 0 {
        return run(s, i + len, L);
    }
    if is_prefix(b, c) && class_at_or_none(s, i + len) & L != 0 {
        return run(s, i + len, L);
    }
    // `\p{N}{1,3}+`.
    if c & N != 0 {
        return up_to_three_numbers(s, i + len);
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`.
    let j = if b == b' ' { i + 1 } else { i };
    if j < s.len() && class_at(s, j).0 & (WS | L | N) == 0 {
        let mut e = run_not(s, j, WS | L | N);
        while e < s.len() && (s[e] == b'\r' || s[e] == b'\n') {
            e += 1;
        }
        return e;
    }
    // Whitespace.
    let j = run(s, i, WS);
    if j == s.len() {
        return j; // \s++$
    }
    through_last_newline(s, i, j).or_else(|| space_not_before_nonspace(s, i, j)).unwrap_or(i + len)
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` after a word in o200k.
#[inline]
fn o200k_suffix(s: &[u8], e: usize) -> usize {
    if s.get(e) == Some(&b'\'') {
        if let Some(n) = contraction(s, e + 1, true) {
            return e + 1 + n;
        }
    }
    e
}

/// o200k's "upper" class `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
const UPPER: u8 = LU | LT | LM | LO | M;
/// o200k's "lower" class `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
const LOWER: u8 = LL | LM | LO | M;

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` from `p`, then
/// the suffix. The greedy upper run gives back characters one at a time
/// until a lower one can start; the first success is therefore the last
/// position of the upper run (or just after it) holding a lower character.
/// If that is just after the run, the lower run continues greedily; if it is
/// inside the run, the characters after it are upper-only, so the lower run
/// is that one character.
///
/// One pass: the upper run notes where its last lower character ends and
/// which class stopped it, rather than looking the stopping character up
/// again and walking back (on CJK and Indic text, where nearly every letter
/// is in both classes, those lookups were a fifth of the pre-tokenizer's).
fn o200k_word_lower(s: &[u8], p: usize) -> Option<usize> {
    if p >= s.len() {
        return None;
    }
    let (k, stop, last_lower) = run_noting(s, p, UPPER, LOWER);
    if stop & LOWER != 0 {
        return Some(o200k_suffix(s, run(s, k, LOWER)));
    }
    (last_lower > p).then(|| o200k_suffix(s, last_lower))
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` from `p`, then
/// the suffix; nothing here can fail after the first character.
fn o200k_word_upper(s: &[u8], p: usize) -> Option<usize> {
    if p >= s.len() || class_at(s, p).0 & UPPER == 0 {
        return None;
    }
    let k = run(s, p, UPPER);
    Some(o200k_suffix(s, run(s, k, LOWER)))
}

/// o200k, through the ASCII fast path when it decides.
#[inline(always)]
fn o200k(s: &[u8], i: usize) -> usize {
    match ascii::o200k(s, i) {
        Some(e) => e,
        None => o200k_general(s, i),
    }
}

/// o200k:
/// `[^\r\n\p{L}\p{N}]?UPPER*LOWER+SUFFIX?|[^\r\n\p{L}\p{N}]?UPPER+LOWER*SUFFIX?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
///
/// The optional prefix is greedy but not possessive: each word alternative
/// is tried with the prefix and then without it (which matters when the
/// prefix character is itself a mark, a member of both word classes), and
/// only then the next alternative.
#[inline(never)]
fn o200k_general(s: &[u8], i: usize) -> usize {
    let b = s[i];
    let (c, len) = class_at(s, i);
    let prefixed = is_prefix(b, c);
    let word = (if prefixed { o200k_word_lower(s, i + len) } else { None })
        .or_else(|| o200k_word_lower(s, i))
        .or_else(|| if prefixed { o200k_word_upper(s, i + len) } else { None })
        .or_else(|| o200k_word_upper(s, i));
    if let Some(e) = word {
        return e;
    }
    // `\p{N}{1,3}`.
    if c & N != 0 {
        return up_to_three_numbers(s, i + len);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`.
    let j = if b == b' ' { i + 1 } else { i };
    if j < s.len() && class_at(s, j).0 & (WS | L | N) == 0 {
        let mut e = run_not(s, j, WS | L | N);
        while e < s.len() && matches!(s[e], b'\r' | b'\n' | b'/') {
            e += 1;
        }
        return e;
    }
    // Whitespace: `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`.
    let j = run(s, i, WS);
    through_last_newline(s, i, j).or_else(|| space_not_before_nonspace(s, i, j)).unwrap_or(j)
}

/// What the pre-tokenizer's loop hands each piece to.
///
/// A trait rather than a closure so that implementations can mark `piece`
/// `#[inline(always)]`: the loop is instantiated once per pattern, so a
/// closure has three call sites, and LLVM left `encode`'s outlined, at a
/// call per piece.
pub(crate) trait Sink {
    /// Takes the piece `s[a..b]`; returning false stops the loop.
    fn piece(&mut self, a: usize, b: usize) -> bool;
}

/// Hands the (start, end) byte span of each piece of `s` to `sink` until it
/// returns false; returns whether every piece was visited. Each pattern
/// gets its own loop, so its piece function and the sink inline into one
/// another: per-piece calls and the pattern dispatch cost as much as the
/// fast path itself on prose.
#[inline(always)]
#[allow(clippy::redundant_closure)] // see the closures below
pub(crate) fn for_each_piece(pattern: Pattern, s: &str, sink: &mut impl Sink) -> bool {
    let s = s.as_bytes();
    match pattern {
        // Closures rather than the fn items: LLVM inlines these calls into
        // the loop, where it left each fn item's `Fn::call` shim outlined.
        Pattern::Gpt2 => drive(s, |s, i| gpt2(s, i), sink),
        Pattern::Cl100k => blocks::drive(s, false, |s, i| cl100k(s, i), sink),
        Pattern::O200k => blocks::drive(s, true, |s, i| o200k(s, i), sink),
    }
}

#[inline(always)]
fn drive(s: &[u8], end: impl Fn(&[u8], usize) -> usize, sink: &mut impl Sink) -> bool {
    let mut i = 0;
    while i < s.len() {
        let e = end(s, i);
        if !sink.piece(i, e) {
            return false;
        }
        i = e;
    }
    true
}

mod ascii;
mod blocks;
#[cfg(test)]
mod tests;

//! Block pre-tokenization for cl100k and o200k: the boundaries of every piece
//! in 64 bytes at once.
//!
//! Why: on text that does not repeat, counting was bound by mispredicted
//! branches, half of them in the per-piece dispatch of `ascii.rs` ("which
//! alternative starts here, where does this run end"), a decision the
//! branch predictor cannot learn when the piece boundaries never recur. Here
//! the window's bytes are classified into one `u64` mask per class (SSE2 on
//! x86_64, eight bytes at a time elsewhere), the piece starts follow from
//! those masks by shifts and carries, and the caller walks the start mask with
//! `trailing_zeros`: one well-predicted loop per piece instead of a tree of
//! data-dependent branches.
//!
//! The rules below derive from the patterns' alternatives restricted to ASCII
//! (byte classes: L letter, U/Lo upper/lower case, D digit, S space, tab,
//! VT, FF, N CR/LF, W = S|N, P everything else below 0x80, SP the space
//! 0x20, AP the apostrophe). A piece starts at:
//!
//! - a letter run's start, unless the byte before is its prefix: a space-class
//!   byte (S is always its run's last piece start when a letter follows) or a
//!   punctuation byte that starts a piece itself (P-run start not after SP);
//! - a punctuation run's start not preceded by SP (` ?P+` takes the space);
//! - a digit run's start and every third digit after it (`\p{N}{1,3}`);
//! - a whitespace run's start, unless it begins with CR/LF right after
//!   punctuation (` ?P+[\r\n]*` takes those; the run then starts after them);
//!   within a whitespace run followed by a non-space: after its last CR/LF
//!   (`\s*[\r\n]`), and at its last byte if that is S (`\s+(?!\S)` gives one
//!   back; the last is then alone or a word's prefix);
//! - o200k only: an upper-case letter after a lower-case one (words are
//!   `U*Lo*`).
//!
//! Contractions are the only rule that reads letters, so they are checked
//! one by one (apostrophes are rare): cl100k's `'s`, `'ll`... at an apostrophe
//! that starts a piece ends that piece; o200k's suffix after a word extends
//! the word.
//!
//! A match of these patterns at a piece start reads only forward, so a piece
//! start is a clean state: each window starts at one and takes nothing
//! from before it. What it cannot know is what follows its last byte or its
//! first byte of 0x80 or more (a non-ASCII letter, space, number or mark may
//! extend the run there); so only boundaries up to the start of the run that
//! touches that edge are kept, and the next window starts at the last of
//! them. When none is certain (a piece longer than the window, non-ASCII at
//! the start) the caller takes one piece from the per-piece functions.
//! `pretokenize/tests.rs` compares this with fancy-regex and with the
//! per-piece path on long random text, through both classifiers.

use super::contraction;

/// One `u64` per byte class of a 64-byte window: bit `k` is byte `k`. Only
/// the bits of bytes below the first one of 0x80 or more are meaningful.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(super) struct Masks {
    /// 0x80 and above (part of a multi-byte character).
    high: u64,
    /// `[A-Z]` (o200k; cl100k does not tell the cases apart and leaves it
    /// empty).
    upper: u64,
    /// `[a-z]` (cl100k: `[A-Za-z]`).
    lower: u64,
    /// `[0-9]`.
    digit: u64,
    /// ASCII `\s`: space, tab, LF, VT, FF, CR.
    white: u64,
    /// CR and LF.
    newline: u64,
    /// The space 0x20 (the only one ` ?` takes).
    space: u64,
    /// `'`.
    apos: u64,
    /// `/` (o200k, whose punctuation pieces take `[\r\n/]*`; cl100k leaves
    /// it empty).
    slash: u64,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// High bit of each byte of `w` in `lo..=hi` (both below 0x80), for bytes
/// below 0x80 (the others are past the window's known bytes). The bytes are
/// masked to seven bits first, so no addition carries into the next byte.
#[inline(always)]
fn swar_range(w: u64, lo: u8, hi: u8) -> u64 {
    let x = w & !HIGH_BITS;
    let ge_lo = x.wrapping_add(ONES * u64::from(0x80 - lo));
    let gt_hi = x.wrapping_add(ONES * u64::from(0x7f - hi));
    ge_lo & !gt_hi & HIGH_BITS
}

/// The eight high bits of `m` (one per byte) as eight low bits: each byte's
/// bit lands in the top byte of the product, at its own place, and no two
/// partial products meet.
#[inline(always)]
fn gather(m: u64) -> u64 {
    ((m >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// Portable classifier: eight bytes per step, in plain integer arithmetic.
#[inline(always)]
pub(super) fn classify_swar<const O200K: bool>(w: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (k, chunk) in w.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let at = 8 * k;
        let sp = swar_range(x, b' ', b' ');
        m.high |= gather(x & HIGH_BITS) << at;
        if O200K {
            m.upper |= gather(swar_range(x, b'A', b'Z')) << at;
            m.lower |= gather(swar_range(x, b'a', b'z')) << at;
            m.slash |= gather(swar_range(x, b'/', b'/')) << at;
        } else {
            // Setting bit 5 maps A-Z onto a-z and no other byte into a-z.
            m.lower |= gather(swar_range(x | (ONES * 0x20), b'a', b'z')) << at;
        }
        m.digit |= gather(swar_range(x, b'0', b'9')) << at;
        m.white |= gather(swar_range(x, b'\t', b'\r') | sp) << at;
        m.newline |= gather(swar_range(x, b'\n', b'\n') | swar_range(x, b'\r', b'\r')) << at;
        m.space |= gather(sp) << at;
        m.apos |= gather(swar_range(x, b'\'', b'\'')) << at;
    }
    m
}

/// The classifier for this target.
#[inline(always)]
pub(super) fn classify<const O200K: bool>(w: &[u8; 64]) -> Masks {
    classify_swar::<O200K>(w)
}

/// The piece starts of the window at `s[i..]` (`i` a piece start): bit `k`
/// set where a piece starts at `i + k`, bit 0 always, only bits below the
/// returned `cut`; the pieces between them and the one ending at `i + cut`
/// are certain. `cut == 0`: no piece is (the caller takes one piece the
/// per-piece way). The third value is the number of ASCII bytes from `i`
/// (64 or more: none other in the window).
#[inline(always)]
pub(super) fn window<const O200K: bool>(
    s: &[u8],
    i: usize,
    classify: impl Fn(&[u8; 64]) -> Masks,
) -> (u64, usize, usize) {
    let rest = s.len() - i;
    let (m, avail) = match s.get(i..i + 64) {
        Some(w) => (classify(w.try_into().unwrap_or(&[0; 64])), u64::MAX),
        None => {
            let mut w = [0u8; 64];
            w[..rest].copy_from_slice(&s[i..]);
            (classify(&w), (1u64 << rest) - 1)
        }
    };
    let stop = m.high | !avail;
    // Known bytes: below the first high byte and the text's end.
    let known = stop.wrapping_sub(1) & !stop;
    let end = stop.trailing_zeros() as usize;
    if end == 0 {
        return (0, 0, 0);
    }
    let at_end = i + end == s.len();

    let (upper, lower) = (m.upper & known, m.lower & known);
    let letter = upper | lower;
    let digit = m.digit & known;
    let white = m.white & known;
    let newline = m.newline & known;
    let space = white & !newline;
    let sp = m.space & known;
    let punct = known & !(letter | digit | white);

    // Punctuation pieces end with `[\r\n]*` (o200k: `[\r\n/]*`): from each
    // CR/LF right after punctuation, the run of those bytes is taken (a run
    // holding several such CR/LF is one; the sum clears it from its first
    // and sets the others, which the `| seeds` restores). The byte after it
    // starts a piece; nothing inside does, and a `/` taken there is no
    // punctuation of its own.
    let tails = newline | (m.slash & known);
    let seeds = newline & (punct << 1);
    let sum = tails.wrapping_add(seeds);
    let taken = (tails & !sum) | seeds;
    let after = sum & !tails & known;
    let punct = punct & !taken;

    let letter_start = letter & !(letter << 1);
    let punct_start = punct & !(punct << 1);
    let digit_start = digit & !(digit << 1);
    let white_start = white & !(white << 1);

    // A punctuation byte that starts a piece and prefixes a word.
    let prefix = punct_start & !(sp << 1) & (letter >> 1);
    let mut b =
        1 | (letter_start & !(space << 1) & !(prefix << 1)) | (punct_start & !(sp << 1)) | digit_start | white_start;

    // `\p{N}{1,3}`: every third digit of a run starts a piece; these are
    // certain whatever follows, so they also count as run starts below.
    let digit4 = digit & (digit << 1) & (digit << 2) & (digit << 3);
    let mut groups = 0;
    let mut t = digit_start;
    loop {
        t = (t << 3) & digit4;
        if t == 0 {
            break;
        }
        groups |= t;
    }
    b |= groups;

    // Whitespace: the last byte of a run followed by a known non-space, when
    // it is S.
    let last = space & ((known & !white) >> 1);
    // The S bytes after a run's last CR/LF (all of a run without one), for
    // runs followed by a non-space (o200k: or by the text's end): found
    // from the run's end backwards, where a carry can run.
    let mut ends = last;
    if O200K && at_end {
        ends |= space & (1u64 << (end - 1));
    }
    let rs = space.reverse_bits();
    let tail = (rs & !rs.wrapping_add(ends.reverse_bits())).reverse_bits();
    b |= last | (tail & (newline << 1));
    b = (b & !taken) | after;

    let mut starts = letter_start | punct_start | digit_start | white_start | groups | after;
    if O200K {
        let case = upper & (lower << 1);
        b |= case;
        starts |= case;
    }

    // Contractions, read from the text itself (it may continue past the
    // window, or hold `ſ`, which folds to `s`).
    let apos = m.apos & known;
    if apos != 0 {
        // cl100k: `'(?i:[sdmt]|ll|ve|re)` at an apostrophe that starts a
        // piece. o200k: the same after a word, as part of the word (not
        // after a suffix's letters: `a've's` is `a've` then `'s`).
        let mut cand = if O200K { apos & (letter << 1) } else { apos & punct_start & !(sp << 1) };
        let mut suffix_end = usize::MAX;
        while cand != 0 {
            let a = cand.trailing_zeros() as usize;
            cand &= cand - 1;
            if O200K && a == suffix_end {
                continue;
            }
            if let Some(n) = contraction(s, i + a + 1, true) {
                let e = a + 1 + n;
                suffix_end = e;
                if O200K {
                    // Not a piece start, nor anything inside the suffix.
                    b &= !(((2u64 << n) - 1) << a);
                }
                if e < 64 {
                    b |= 1 << e;
                }
            }
        }
    }

    if at_end {
        return (b & known, end, end);
    }
    // The run touching the edge may continue past it: keep the boundaries
    // up to its start.
    let r = 63 - (starts & known).leading_zeros();
    let certain = b & (u64::MAX >> (63 - r));
    let cut = 63 - certain.leading_zeros() as usize;
    (certain & !(u64::MAX << cut), cut, end)
}

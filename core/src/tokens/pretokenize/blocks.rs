//! Piece boundaries for 64 bytes at a time (cl100k and o200k patterns).
//!
//! The per-piece pre-tokenizers (`ascii.rs`, and the general path behind
//! it) decide each piece with a chain of branches on its first bytes: a
//! word, a space and a word, punctuation, digits, whitespace. On text
//! without repeated lines those branches are unpredictable, and the
//! profile of a count (issue 36) put the mispredictions there. Here the
//! same decisions are made for a whole 64-byte window at once, as bit
//! masks: one bit per byte for each byte class (from four 16-byte SSE2
//! compares), then each rule of the pattern as shifts and ands over the
//! masks. What is left per piece is popping the next set bit.
//!
//! **Why this is exact.** The window starts at a piece start, and neither
//! pattern looks behind, so what was before the window cannot matter. In
//! ASCII every piece start follows from a byte's class and its neighbours':
//!
//! - a letter run starts a piece, or its first letter takes the byte before
//!   it as the patterns' optional prefix `[^\r\n\p{L}\p{N}]?`: any space or
//!   tab, or a punctuation byte that begins its own piece (the first of a
//!   run of one, not after a literal space, which ` ?[^\s\p{L}\p{N}]+` would
//!   take first); o200k also starts a word at an upper-case letter after a
//!   lower-case one (`UPPER*LOWER+|UPPER+LOWER*`);
//! - digits start a piece at the start of their run and every three after;
//! - a punctuation run starts a piece unless a literal space is before it
//!   (the space starts it); the piece runs on over the CR and LF after it;
//! - a whitespace run (the part not taken by punctuation before it) starts a
//!   piece; so does the byte after its last CR or LF when a space or tab
//!   follows it to the run's end (`\s*[\r\n]` ends at the last newline);
//!   so does its last byte when that is a space or tab (`\s+(?!\S)` leaves
//!   it for the next piece: a prefix, the ` ` of ` ?[^\s...]`, or `\s`);
//! - cl100k's contractions `'s`, `'ll`, ... end a piece inside a letter run;
//!   o200k's contraction suffix moves a word's end past it.
//!
//! A start is only used when everything that decides it is in the window:
//! bytes up to three past it (the contractions), and the whole whitespace
//! run it is in. So bytes from the first of 0x80 or above, and the window's
//! last bytes, decide nothing; the pieces up to the last start that is
//! certain are handed out and the next window begins there. A window that
//! yields no piece (a word or a run of spaces longer than the window,
//! non-ASCII text) falls back to the per-piece functions, which also end
//! every text. `pretokenize/tests.rs` checks all of it against fancy-regex.

/// One bit per byte of a window (bit `j` is byte `j`) for each class the
/// rules need.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Classes {
    lower: u64,
    upper: u64,
    digit: u64,
    /// ASCII `\s` but CR and LF: space, tab, vertical tab, form feed.
    space: u64,
    /// ` ` alone (the optional space of ` ?[^\s\p{L}\p{N}]+`).
    literal_space: u64,
    /// CR and LF.
    newline: u64,
    apostrophe: u64,
    /// `/` (o200k's punctuation takes it, with CR and LF, after its run).
    slash: u64,
    /// 0x80 and above.
    high: u64,
}

/// [`Classes`] byte by byte: the reference for [`classify`], and the
/// classifier on targets without SSE2.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
pub(super) fn classify_bytes(w: &[u8; 64]) -> Classes {
    let mut c = Classes::default();
    for (j, &b) in w.iter().enumerate() {
        let bit = 1u64 << j;
        match b {
            b'a'..=b'z' => c.lower |= bit,
            b'A'..=b'Z' => c.upper |= bit,
            b'0'..=b'9' => c.digit |= bit,
            b' ' => {
                c.space |= bit;
                c.literal_space |= bit;
            }
            b'\t' | 0x0b | 0x0c => c.space |= bit,
            b'\r' | b'\n' => c.newline |= bit,
            b'\'' => c.apostrophe |= bit,
            b'/' => c.slash |= bit,
            0x80..=0xff => c.high |= bit,
            _ => {}
        }
    }
    c
}

/// [`Classes`] sixteen bytes at a time. `safe_arch` wraps the SSE2
/// intrinsics (part of every x86_64 target) as safe functions, so the core
/// keeps `forbid(unsafe_code)`. Signed compares suffice: bytes of 0x80 and
/// above are negative and fall outside every ASCII range.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
pub(super) fn classify(w: &[u8; 64]) -> Classes {
    use safe_arch::{
        bitand_m128i, bitor_m128i, cmp_eq_mask_i8_m128i, cmp_gt_mask_i8_m128i, load_unaligned_m128i, m128i,
        move_mask_i8_m128i, set_splat_i8_m128i,
    };
    let splat = |x: u8| set_splat_i8_m128i(x as i8);
    let within = |v: m128i, lo: u8, hi: u8| {
        bitand_m128i(cmp_gt_mask_i8_m128i(v, splat(lo - 1)), cmp_gt_mask_i8_m128i(splat(hi + 1), v))
    };
    let mut c = Classes::default();
    for (k, chunk) in w.chunks_exact(16).enumerate() {
        let v = load_unaligned_m128i(chunk.try_into().unwrap_or(&[0; 16]));
        let eq = |x: u8| cmp_eq_mask_i8_m128i(v, splat(x));
        let bits = |m: m128i| u64::from(move_mask_i8_m128i(m) as u16) << (16 * k);
        let literal = eq(b' ');
        c.lower |= bits(within(v, b'a', b'z'));
        c.upper |= bits(within(v, b'A', b'Z'));
        c.digit |= bits(within(v, b'0', b'9'));
        c.literal_space |= bits(literal);
        c.space |= bits(bitor_m128i(literal, bitor_m128i(eq(b'\t'), within(v, 0x0b, 0x0c))));
        c.newline |= bits(bitor_m128i(eq(b'\n'), eq(b'\r')));
        c.apostrophe |= bits(eq(b'\''));
        c.slash |= bits(eq(b'/'));
        c.high |= bits(v);
    }
    c
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
pub(super) fn classify(w: &[u8; 64]) -> Classes {
    classify_bytes(w)
}

/// Letters after an apostrophe that cl100k's `'(?i:[sdmt]|ll|ve|re)` and
/// o200k's suffix `(?i:'s|'t|'re|'ve|'m|'ll|'d)` take (the two sets are the
/// same), case-insensitively: 1, 2, or 0 for none. `b1` is a letter.
#[inline]
fn contraction_letters(b1: u8, b2: u8) -> usize {
    match (b1 | 0x20, b2 | 0x20) {
        (b's' | b'd' | b'm' | b't', _) => 1,
        (b'l', b'l') | (b'v', b'e') | (b'r', b'e') => 2,
        _ => 0,
    }
}

/// The piece starts in `w` (bit `j`: a piece starts at byte `j`; bit 0,
/// where the window starts, is always one) that the window decides, for
/// cl100k's pattern or o200k's. Only the first `avail` bytes are text.
#[inline(always)]
pub(super) fn certain_starts(w: &[u8; 64], avail: usize, o200k: bool) -> u64 {
    let c = classify(w);
    let prev = |m: u64| m << 1;
    let next = |m: u64| m >> 1;
    let letter = c.lower | c.upper;
    let white = c.space | c.newline;
    // `[^\s\p{L}\p{N}]` in ASCII, the apostrophe included.
    let punct = !(letter | c.digit | white | c.high);

    // Bytes from `known` on are not ASCII text (or not text at all).
    let known = (c.high.trailing_zeros() as usize).min(avail);
    // A start is certain when the three bytes after it are known...
    let mut limit = known.saturating_sub(3);
    // ...and it is not in a whitespace run that may go on past `known`.
    if known > 0 && white >> (known - 1) & 1 == 1 {
        let before = !white & ((1u64 << (known - 1)) - 1);
        limit = limit.min(64 - before.leading_zeros() as usize);
    }
    if limit <= 1 {
        return 1;
    }

    // What punctuation takes after its run: `[\r\n]*` (cl100k) or
    // `[\r\n/]*` (o200k), from the first CR or LF after it. (A carry
    // through the run would do for cl100k; in o200k `\n/\n` would mark the
    // run twice.) Taken bytes start nothing and are not punctuation below.
    let trailing = if o200k { c.newline | c.slash } else { c.newline };
    let mut taken = c.newline & prev(punct);
    loop {
        let more = taken | (prev(taken) & trailing);
        if more == taken {
            break;
        }
        taken = more;
    }
    let after_taken = prev(taken) & !taken;
    let punct = punct & !taken;

    // Words, and the prefix byte each may take.
    let run_start = letter & !prev(letter);
    let word = if o200k { run_start | (c.upper & prev(c.lower)) } else { run_start };
    let prefixed = run_start & (prev(c.space) | (prev(punct) & !(punct << 2) & !(c.literal_space << 2)));
    let mut starts = 1 | (word & !prefixed) | next(prefixed);

    // `\p{N}{1,3}`: the start of each digit run, then every third digit.
    let mut group = c.digit & !prev(c.digit);
    while group != 0 {
        starts |= group;
        group = (group << 3) & c.digit & (c.digit << 1) & (c.digit << 2);
    }

    // ` ?[^\s\p{L}\p{N}]+`: a literal space before the run starts it.
    starts |= punct & !prev(punct) & !prev(c.literal_space);

    // Whitespace: a run starts a piece where punctuation did not take it.
    starts |= (white & !prev(white) & !taken) | (after_taken & c.space);
    // The last byte of a run, when a space or tab.
    starts |= c.space & !next(white);
    // After a run's last newline, when spaces or tabs follow to its end.
    let mut after_newline = c.space & prev(c.newline);
    while after_newline != 0 {
        let j = after_newline.trailing_zeros();
        after_newline &= after_newline - 1;
        let end = j + (!c.space >> j).trailing_zeros();
        if end < 64 && c.newline >> end & 1 == 0 {
            starts |= 1 << j;
        }
    }

    // Contractions: bytes up to two past the apostrophe are read, so only
    // apostrophes below the limit (at most 61) are looked at.
    let below = (1u64 << limit) - 1;
    if o200k {
        // A word's suffix: the apostrophe's start, and any start inside the
        // suffix, move to the suffix's end.
        // An apostrophe right after another word's suffix follows no word.
        let mut at = c.apostrophe & prev(letter) & next(letter) & below;
        let mut suffix_end = usize::MAX;
        while at != 0 {
            let j = at.trailing_zeros() as usize;
            at &= at - 1;
            let n = contraction_letters(w[j + 1], w[j + 2]);
            if n > 0 && j != suffix_end {
                suffix_end = j + 1 + n;
                starts = (starts & !(((1u64 << suffix_end) - 1) & !((1u64 << j) - 1))) | 1 << suffix_end;
            }
        }
    } else {
        // An apostrophe that starts a piece and the letters it takes; the
        // rest of the letter run is a new piece.
        let mut at = c.apostrophe & starts & next(letter) & below;
        while at != 0 {
            let j = at.trailing_zeros() as usize;
            at &= at - 1;
            let n = contraction_letters(w[j + 1], w[j + 2]);
            if n > 0 && letter >> (j + 1 + n) & 1 == 1 {
                starts |= 1 << (j + 1 + n);
            }
        }
    }
    starts & below
}

/// Hands `s`'s pieces to `sink` window by window, with `end` (the per-piece
/// pre-tokenizer of the same pattern) where a window decides nothing; see
/// the module docs. Returns false when `sink` stopped the loop.
#[inline(always)]
pub(super) fn drive(s: &[u8], o200k: bool, end: impl Fn(&[u8], usize) -> usize, sink: &mut impl super::Sink) -> bool {
    let mut i = 0;
    // After a window that decided nothing, pieces are taken one by one up
    // to `resume`, `skip` bytes on, doubling while windows keep failing
    // (text that is not ASCII), so a failed window costs little.
    let mut resume = 0;
    let mut skip = 64;
    let mut tail = [0u8; 64];
    while i < s.len() {
        if i >= resume {
            let avail = s.len() - i;
            let window: &[u8; 64] = match s.get(i..i + 64) {
                Some(w) => w.try_into().unwrap_or(&tail),
                None => {
                    tail = [0; 64];
                    tail[..avail].copy_from_slice(&s[i..]);
                    &tail
                }
            };
            let mut ends = certain_starts(window, avail, o200k) & !1;
            if ends != 0 {
                let mut a = i;
                while ends != 0 {
                    let b = i + ends.trailing_zeros() as usize;
                    ends &= ends - 1;
                    if !sink.piece(a, b) {
                        return false;
                    }
                    a = b;
                }
                i = a;
                skip = 64;
                continue;
            }
            resume = i + skip;
            skip = (skip * 2).min(1 << 12);
        }
        let e = end(s, i);
        if !sink.piece(i, e) {
            return false;
        }
        i = e;
    }
    true
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The SSE2 classes equal the byte-by-byte ones on any bytes.
        #[test]
        fn classes_match_byte_by_byte(bytes in proptest::collection::vec(any::<u8>(), 64)) {
            let w: &[u8; 64] = bytes.as_slice().try_into().unwrap();
            prop_assert_eq!(classify(w), classify_bytes(w));
        }
    }

    #[test]
    fn classes_of_every_byte_in_every_lane() {
        for b in 0..=255u8 {
            for lane in [0, 15, 16, 31, 47, 63] {
                let mut w = [b'x'; 64];
                w[lane] = b;
                assert_eq!(classify(&w), classify_bytes(&w), "byte {b:#x} lane {lane}");
            }
        }
    }

    struct Spans(Vec<(usize, usize)>);

    impl super::super::Sink for Spans {
        fn piece(&mut self, a: usize, b: usize) -> bool {
            self.0.push((a, b));
            true
        }
    }

    /// Every class boundary the window rules handle, dense: both cases of the
    /// contraction letters, apostrophes, slashes, every ASCII space and
    /// newline, digits, punctuation, and a few non-ASCII characters (a
    /// letter, a mark, a Unicode space, a non-ASCII digit, a symbol) that
    /// end what a window may decide.
    const ALPHABET: &[&str] = &[
        "a", "s", "d", "m", "t", "l", "v", "e", "r", "S", "D", "M", "T", "L", "V", "E", "R", "Q", "'", "'", "/", " ",
        " ", " ", "\t", "\n", "\r", "\u{b}", "\u{c}", "0", "7", ".", ",", "{", "-", "\"", "é", "\u{301}", "\u{a0}",
        "\u{663}", "—", "\0",
    ];

    fn text() -> impl Strategy<Value = String> {
        // Runs of one token too, so words, digit runs and whitespace runs
        // cross the 64-byte windows.
        let token =
            (proptest::sample::select(ALPHABET), 1..5usize).prop_map(|(t, n)| t.repeat(if n == 4 { 20 } else { n }));
        proptest::collection::vec(token, 0..120).prop_map(|v| v.concat())
    }

    fn pieces(s: &str, o200k: bool, windows: bool) -> Vec<(usize, usize)> {
        let mut spans = Spans(Vec::new());
        let end = |s: &[u8], i: usize| if o200k { super::super::o200k(s, i) } else { super::super::cl100k(s, i) };
        if windows {
            drive(s.as_bytes(), o200k, end, &mut spans);
        } else {
            super::super::drive(s.as_bytes(), end, &mut spans);
        }
        spans.0
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, failure_persistence: None, ..ProptestConfig::default() })]
        /// The windows split exactly as the per-piece functions do (which
        /// `pretokenize/tests.rs` holds to fancy-regex), on text built to
        /// put every rule at every offset of a window.
        #[test]
        fn windows_split_as_the_per_piece_functions(s in text()) {
            for o200k in [false, true] {
                prop_assert_eq!(pieces(&s, o200k, true), pieces(&s, o200k, false), "o200k {} on {:?}", o200k, s);
            }
        }
    }

    /// Cases that broke earlier versions of the window rules (each found by
    /// the fancy-regex comparisons), at every offset in a window.
    #[test]
    fn windows_split_hand_picked_cases_at_every_offset() {
        for case in [
            "'L'D'SlaAa",
            "it's's x",
            "it'S'Ll'vex",
            "x''s",
            " 's",
            "'sa'lla'vE'Re",
            ".\n/aaa",
            "{\n/\n0a ",
            "./\n/.y",
            " .aaa",
            "\t.a",
            "..a",
            "a.b",
            " \n \n  x",
            ".\n \nx",
            ".\n\n  y",
            "1234567a",
            "\u{b}a\u{c}.\r\n",
        ] {
            for pad in 0..64 {
                let s = format!("{}{case}{}", "x".repeat(pad), " tail of the text");
                for o200k in [false, true] {
                    assert_eq!(pieces(&s, o200k, true), pieces(&s, o200k, false), "o200k {o200k} on {s:?}");
                }
            }
        }
    }

    #[test]
    fn windows_decide_most_of_english_and_code() {
        // Not a speed test: that the windows, not the fallback, split
        // ordinary ASCII text (a regression to "every window fails" would
        // still split correctly, only slowly).
        let text =
            "The quick brown fox's 12345 jumps over the lazy dog.\n    fn main() { let x = a/b; }\r\n".repeat(20);
        for o200k in [false, true] {
            let mut decided = 0;
            let mut i = 0;
            while i + 64 <= text.len() {
                let w: &[u8; 64] = text.as_bytes()[i..i + 64].try_into().unwrap();
                let ends = certain_starts(w, 64, o200k) & !1;
                assert_ne!(ends, 0, "window at {i}");
                let next = 63 - ends.leading_zeros() as usize;
                decided += next;
                i += next;
            }
            assert!(decided * 10 >= text.len() * 9, "o200k {o200k}: {decided} of {}", text.len());
        }
    }

    #[test]
    fn contraction_letters_case_insensitively() {
        for (b1, b2, n) in [
            (b's', b'x', 1),
            (b'S', b'x', 1),
            (b'l', b'L', 2),
            (b'L', b'x', 0),
            (b'r', b'E', 2),
            (b'v', b'e', 2),
            (b'q', b'e', 0),
        ] {
            assert_eq!(contraction_letters(b1, b2), n, "{}{}", b1 as char, b2 as char);
        }
    }
}

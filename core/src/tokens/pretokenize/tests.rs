//! The hand-written pre-tokenizers must split exactly as fancy-regex does
//! with tiktoken's patterns (the regex engine tiktoken-rs and OpenAI's
//! tiktoken use). The alphabet is chosen so that every branch of every
//! pattern, and every class boundary, comes up often.

use std::sync::LazyLock;

use fancy_regex::Regex;
use proptest::prelude::*;
use proptest::test_runner::Config;

use super::{for_each_piece, Pattern, Sink};
use crate::tokens::Encoding;

fn regex_pieces(re: &Regex, s: &str) -> Vec<(usize, usize)> {
    re.find_iter(s).map(|m| m.unwrap()).map(|m| (m.start(), m.end())).collect()
}

struct Spans(Vec<(usize, usize)>);

impl Sink for Spans {
    fn piece(&mut self, a: usize, b: usize) -> bool {
        self.0.push((a, b));
        true
    }
}

fn ours(p: Pattern, s: &str) -> Vec<(usize, usize)> {
    let mut spans = Spans(Vec::new());
    for_each_piece(p, s, &mut spans);
    spans.0
}

const PATTERNS: [(Pattern, Encoding); 3] = [
    (Pattern::Gpt2, Encoding::R50kBase),
    (Pattern::Cl100k, Encoding::Cl100kBase),
    (Pattern::O200k, Encoding::O200kBase),
];

static REGEXES: LazyLock<Vec<Regex>> =
    LazyLock::new(|| PATTERNS.iter().map(|(_, e)| Regex::new(e.pattern()).unwrap()).collect());

fn compare(s: &str) -> Result<(), TestCaseError> {
    for ((p, _), re) in PATTERNS.iter().zip(REGEXES.iter()) {
        prop_assert_eq!(ours(*p, s), regex_pieces(re, s), "{:?} on {:?}", p, s);
    }
    Ok(())
}

/// Characters from every class the patterns distinguish, with the tricky
/// ones (case-folding `ſ`, marks of each kind, titlecase, modifier letters,
/// numbers that are not digits, Unicode spaces) over-represented.
const ALPHABET: &[char] = &[
    'a',
    'b',
    'e',
    'l',
    'm',
    'r',
    's',
    't',
    'v',
    'd',
    'A',
    'L',
    'R',
    'S',
    'T',
    'V',
    'D',
    'M',
    'E',
    '\'',
    '\'',
    '\'',
    'ſ',
    'ǅ',
    'ʰ',
    '中',
    'ß',
    'É',
    'é',
    '\u{301}',
    '\u{903}',
    '\u{20dd}',
    '0',
    '7',
    '٣',
    'Ⅻ',
    '½',
    ' ',
    ' ',
    ' ',
    '\t',
    '\n',
    '\r',
    '\u{a0}',
    '\u{3000}',
    '\u{85}',
    '\u{2028}',
    '\u{b}',
    '\u{c}',
    '\u{200b}',
    '.',
    ',',
    '!',
    '/',
    '-',
    '_',
    '"',
    '(',
    '😀',
    '\u{1f3fd}',
    '\u{fe0f}',
    '\u{200d}',
    '$',
    '\u{1}',
    '\u{1c}',
];

fn from_alphabet() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(ALPHABET), 0..40).prop_map(|v| v.into_iter().collect())
}

fn any_chars() -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<char>(), 0..24).prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(Config { cases: 20_000, failure_persistence: None, ..Config::default() })]
    #[test]
    fn pieces_match_fancy_regex_on_the_tricky_alphabet(s in from_alphabet()) {
        compare(&s)?;
    }
}

/// Mostly-ASCII text with runs long enough to cross the ASCII fast path's
/// eight-byte scans, and the non-ASCII characters that must make it defer
/// (a letter, a mark or a Unicode space right after an ASCII run, a long s
/// in a contraction, a non-ASCII number after digits).
const ASCII_HEAVY: &str = r"([A-Za-z]{1,24}|[a-z]{1,12}[A-Z]{1,12}|[0-9]{1,5}|[ \t]{1,4}|[\r\n]{1,3}|[!-/:-@\[-`{-~]{1,5}|'[sStTlLrRvVdDmMeE]{1,2}|[éſ\u{301}\u{a0}中٣\u{3000}\u{85}😀]){0,40}";

proptest! {
    #![proptest_config(Config { cases: 10_000, failure_persistence: None, ..Config::default() })]
    #[test]
    fn pieces_match_fancy_regex_on_ascii_heavy_text(s in ASCII_HEAVY) {
        compare(&s)?;
    }
}

proptest! {
    #![proptest_config(Config { cases: 5_000, failure_persistence: None, ..Config::default() })]
    #[test]
    fn pieces_match_fancy_regex_on_any_chars(s in any_chars()) {
        compare(&s)?;
    }

    #[test]
    fn pieces_match_fancy_regex_on_mixed_text(a in from_alphabet(), b in any_chars(), c in "[ -~\\n]{0,30}") {
        compare(&(a + &b + &c))?;
    }
}

#[test]
fn every_code_point_alone_and_in_context() {
    // Each scalar value alone, after a space, between letters, and before an
    // apostrophe suffix: covers every class boundary of the generated table.
    let mut cases = String::new();
    for cp in (0..0x110000u32).step_by(13).filter_map(char::from_u32) {
        cases.clear();
        cases.push(cp);
        cases.push(' ');
        cases.push(cp);
        cases.push_str("a'S\u{301}b");
        cases.push(cp);
        cases.push('\n');
        compare(&cases).unwrap();
    }
}

#[test]
fn hand_picked_cases() {
    for s in [
        "",
        " ",
        "  ",
        "a",
        " a",
        "  a",
        "'s",
        "'S",
        "'ſ",
        "'ll",
        "'LL",
        "'lL",
        "'ve",
        "'re",
        "'x",
        "don't",
        "DON'T",
        "I'm",
        "he'ſ",
        "a\u{301}",
        "\u{301}a",
        "!\u{301}AB ",
        "\u{301}\u{301}",
        "ǅa",
        "Aǅa",
        "ABc",
        "ABC'S",
        "\n\n",
        " \n ",
        "\r\n",
        "x  \n  y",
        "x   ",
        "   x",
        "1234567",
        "a/b//c\n",
        " !!\n\n",
        "\u{a0}word",
        "\u{3000}\u{3000}x",
        "tab\tx",
        "12abc",
        "٣٣٣٣",
    ] {
        compare(s).unwrap();
    }
}

/// As `ASCII_HEAVY`, several times longer (up to about a kilobyte), with
/// digit runs past three and CR/LF/`/` runs after punctuation: every kind
/// of piece meets every other at every offset, as in real text. Written for
/// a block pre-tokenizer that worked on 64-byte windows (issue 36, tried
/// and not kept); it checks the per-piece path on long text all the same.
const LONG_ASCII_HEAVY: &str = r"([A-Za-z]{1,24}|[a-z]{1,12}[A-Z]{1,12}|[0-9]{1,12}|[ \t]{1,6}|[ \r\n/]{1,6}|[!-/:-@\[-`{-~]{1,5}|'[sStTlLrRvVdDmMeE]{1,2}|[éſ\u{301}\u{a0}中٣\u{3000}\u{85}😀]){0,150}";

proptest! {
    #![proptest_config(Config { cases: 3_000, failure_persistence: None, ..Config::default() })]
    #[test]
    fn pieces_match_fancy_regex_on_long_ascii_heavy_text(s in LONG_ASCII_HEAVY) {
        compare(&s)?;
    }
}

/// The code points of each category the patterns tell apart (and the
/// sub-kinds of marks and numbers), from regex-syntax, the crate fancy-regex
/// compiles `\p{..}` with, so that every class of the lookup tables comes up
/// with code points from all over its range, not just the alphabet's few.
static CATEGORIES: LazyLock<Vec<Vec<(u32, u32)>>> = LazyLock::new(|| {
    use regex_syntax::hir::{Class, HirKind};
    [
        r"\p{Lu}",
        r"\p{Ll}",
        r"\p{Lt}",
        r"\p{Lm}",
        r"\p{Lo}",
        r"\p{Mn}",
        r"\p{Mc}",
        r"\p{Me}",
        r"\p{Nd}",
        r"\p{Nl}",
        r"\p{No}",
        r"\s",
        r"[^\p{L}\p{M}\p{N}\s]",
    ]
    .iter()
    .map(|p| match regex_syntax::parse(p).unwrap().kind() {
        HirKind::Class(Class::Unicode(c)) => c.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect(),
        other => panic!("{p} parsed to {other:?}"),
    })
    .collect()
});

/// The `n`th code point (modulo their number) of category `k`.
fn nth_of_category(k: usize, n: u32) -> char {
    let ranges = &CATEGORIES[k % CATEGORIES.len()];
    let total: u32 = ranges.iter().map(|(a, b)| b - a + 1).sum();
    let mut n = n % total;
    for &(a, b) in ranges {
        if n <= b - a {
            // A range spanning the surrogates (in the class of everything
            // else) gives its last code point for them.
            return char::from_u32(a + n).or(char::from_u32(b)).unwrap();
        }
        n -= b - a + 1;
    }
    unreachable!()
}

/// Text of runs of random code points of random categories (a run of one
/// category, as words are, then another), with ASCII spaces, apostrophes
/// and newlines between some.
fn by_category() -> impl Strategy<Value = String> {
    let run = (0..CATEGORIES.len(), proptest::collection::vec(any::<u32>(), 1..6), 0..6usize);
    proptest::collection::vec(run, 0..12).prop_map(|runs| {
        let mut s = String::new();
        for (k, cps, sep) in runs {
            s.extend(cps.into_iter().map(|n| nth_of_category(k, n)));
            s.push_str(["", "", " ", "'s", "\n", "a"][sep]);
        }
        s
    })
}

proptest! {
    #![proptest_config(Config { cases: 10_000, failure_persistence: None, ..Config::default() })]
    /// A wrong class in the lookup tables for any code point shows here
    /// (and in `unicode::tests`, which checks every code point's class).
    #[test]
    fn pieces_match_fancy_regex_on_random_code_points_of_every_category(s in by_category()) {
        compare(&s)?;
    }
}

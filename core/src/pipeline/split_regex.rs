//! The split rules' regexes, compiled once, matched in linear time.
//!
//! HF `tokenizers` runs each `Split` pattern with Oniguruma, a backtracking
//! engine. Here a pattern is matched, in order of preference, by:
//!
//! 1. turnfit's hand-written pre-tokenizer, when the pattern is one of the
//!    patterns it implements (cl100k's, as Llama 3 and Phi-4 write it;
//!    o200k's, as gpt-oss writes it): the same pieces, several times faster.
//! 2. The `regex` crate (a finite automaton: linear in the text) when the
//!    pattern has no look-around.
//! 3. The `regex` crate again when the pattern's only look-around is the
//!    usual ending `|\s+(?!\S)|\s+` (Qwen, DeepSeek and nearly every
//!    byte-level file): the pattern without the look-ahead alternative
//!    finds the same matches, except that a run of two or more whitespace
//!    characters followed by a non-space character gives its last
//!    character back, which is what `\s+(?!\S)` does by backtracking. Only
//!    when the earlier alternatives do not match at the same place, checked
//!    with the anchored prefix pattern. Still linear.
//! 4. fancy-regex (backtracking, like Oniguruma) for any other pattern.
//!    Correct, but without a linear bound; no known file needs it.

use crate::tokens::pretokenize::{for_each_piece, Pattern, Sink};

/// Llama 3's pattern (also Phi-4's and DeepSeek-R1-Distill-Llama's): cl100k's
/// as `tokenizer.json` files write it.
const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// gpt-oss's pattern: o200k's as its `tokenizer.json` writes it.
const GPT_OSS: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
);
const LOOKAHEAD_TAIL: &str = r"|\s+(?!\S)|\s+";

/// A compiled split pattern.
#[derive(Debug)]
pub(crate) enum SplitRegex {
    /// A pattern turnfit's tiktoken pre-tokenizer implements by hand.
    Known(Pattern),
    /// No look-around: one automaton.
    Plain(regex::Regex),
    /// The `\s+(?!\S)|\s+` ending, emulated (see the module comment).
    WhitespaceTail { full: regex::Regex, before: regex::Regex },
    /// Anything else.
    Fancy(Box<fancy_regex::Regex>),
}

impl SplitRegex {
    /// Compiles `pattern`; the error says what the regex engines said.
    pub(crate) fn new(pattern: &str) -> Result<SplitRegex, String> {
        match pattern {
            LLAMA3 => return Ok(SplitRegex::Known(Pattern::Cl100k)),
            GPT_OSS => return Ok(SplitRegex::Known(Pattern::O200k)),
            _ => {}
        }
        if let Ok(re) = regex::Regex::new(pattern) {
            return Ok(SplitRegex::Plain(re));
        }
        if let Some(head) = pattern.strip_suffix(LOOKAHEAD_TAIL) {
            let full = regex::Regex::new(&format!("{head}|\\s+"));
            let before = regex::Regex::new(&format!("\\A(?:{head})"));
            if let (Ok(full), Ok(before)) = (full, before) {
                return Ok(SplitRegex::WhitespaceTail { full, before });
            }
        }
        match fancy_regex::Regex::new(pattern) {
            Ok(re) => Ok(SplitRegex::Fancy(Box::new(re))),
            Err(e) => Err(format!("the split regex {pattern:?} does not compile: {e}")),
        }
    }

    /// Calls `f(start, end)` for each match in `s`, left to right.
    pub(crate) fn for_each_match(&self, s: &str, mut f: impl FnMut(usize, usize)) {
        match self {
            SplitRegex::Known(p) => {
                struct Emit<F>(F);
                impl<F: FnMut(usize, usize)> Sink for Emit<F> {
                    fn piece(&mut self, a: usize, b: usize) -> bool {
                        (self.0)(a, b);
                        true
                    }
                }
                for_each_piece(*p, s, &mut Emit(&mut f));
            }
            SplitRegex::Plain(re) => re.find_iter(s).for_each(|m| f(m.start(), m.end())),
            SplitRegex::WhitespaceTail { full, before } => {
                let mut at = 0;
                while at <= s.len() {
                    let Some(m) = full.find_at(s, at) else { break };
                    let (a, mut b) = (m.start(), m.end());
                    if b < s.len() && gives_back_last_space(&s[a..b]) && before.find(&s[a..]).is_none() {
                        b = a + s[a..b].char_indices().next_back().map_or(0, |(i, _)| i);
                    }
                    f(a, b);
                    at = if b > a { b } else { b + s[b..].chars().next().map_or(1, char::len_utf8) };
                }
            }
            SplitRegex::Fancy(re) => {
                // The same loop as fancy-regex's own iterator; a match that
                // fails (its backtrack limit) ends the matches, as Oniguruma
                // giving up would.
                let mut at = 0;
                while at <= s.len() {
                    let Ok(Some(m)) = re.find_from_pos(s, at) else { break };
                    f(m.start(), m.end());
                    at = if m.end() > m.start() {
                        m.end()
                    } else {
                        m.end() + s[m.end()..].chars().next().map_or(1, char::len_utf8)
                    };
                }
            }
        }
    }
}

/// Whether a match is a whitespace run of two or more characters, which
/// `\s+(?!\S)` would have ended one character early.
fn gives_back_last_space(m: &str) -> bool {
    let mut n = 0;
    for c in m.chars() {
        if !c.is_whitespace() {
            return false;
        }
        n += 1;
    }
    n >= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(re: &SplitRegex, s: &str) -> Vec<String> {
        let mut v = Vec::new();
        re.for_each_match(s, |a, b| v.push(s[a..b].to_string()));
        v
    }

    /// Qwen's pattern: the emulated look-ahead gives fancy-regex's matches
    /// (the backtracking reference) on whitespace in every position.
    #[test]
    fn the_whitespace_tail_matches_the_backtracking_engine() {
        let qwen = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
        let ours = SplitRegex::new(qwen).unwrap();
        assert!(matches!(ours, SplitRegex::WhitespaceTail { .. }));
        let reference = SplitRegex::Fancy(Box::new(fancy_regex::Regex::new(qwen).unwrap()));
        let atoms = [" ", "  ", "\t", "\n", "\r\n", "\u{3000}", "a", "B", "1", "!", "'s", "é", "\u{a0}", "中"];
        let mut seed = 7u64;
        for _ in 0..3000 {
            let mut s = String::new();
            for _ in 0..(seed % 12) {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                s.push_str(atoms[(seed >> 33) as usize % atoms.len()]);
            }
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            assert_eq!(matches(&ours, &s), matches(&reference, &s), "{s:?}");
        }
    }

    #[test]
    fn known_patterns_use_the_hand_written_pre_tokenizers() {
        assert!(matches!(SplitRegex::new(LLAMA3).unwrap(), SplitRegex::Known(Pattern::Cl100k)));
        assert!(matches!(SplitRegex::new(GPT_OSS).unwrap(), SplitRegex::Known(Pattern::O200k)));
        let s = "Hello world's  123456 \n\n  x";
        let fancy = SplitRegex::Fancy(Box::new(fancy_regex::Regex::new(LLAMA3).unwrap()));
        assert_eq!(matches(&SplitRegex::new(LLAMA3).unwrap(), s), matches(&fancy, s));
    }

    #[test]
    fn a_regex_that_does_not_compile_is_refused_with_the_pattern() {
        let e = SplitRegex::new(r"(\p{L}").unwrap_err();
        assert!(e.contains("does not compile") && e.contains(r"(\\p{L}"), "{e}");
    }
}

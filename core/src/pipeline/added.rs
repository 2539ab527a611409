//! Added tokens: strings the pipeline cuts out of the text before anything
//! else, each becoming its one id (HF's `AddedVocabulary`).
//!
//! As HF's `encode(text, add_special_tokens=False)` does by default, special
//! tokens written in the text are recognized: `<|im_end|>` in a message
//! counts as one token, which is what the model sees when a chat template
//! renders it. [`super::FileTokenizer::with_special_text`] makes them
//! ordinary text instead (HF's `split_special_tokens`), the safe choice for
//! text from users. Tokens marked `normalized` are looked for in the
//! normalized text, the others in the text as given, in two passes as HF
//! does; each pass finds the leftmost, then longest, occurrence.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// One added token from the file.
#[derive(Debug, Clone)]
pub(crate) struct AddedToken {
    pub(crate) id: u32,
    pub(crate) content: String,
    pub(crate) special: bool,
    pub(crate) normalized: bool,
    pub(crate) lstrip: bool,
    pub(crate) rstrip: bool,
    pub(crate) single_word: bool,
}

/// The tokens of one pass and their automaton.
#[derive(Debug)]
pub(crate) struct Matcher {
    tokens: Vec<AddedToken>,
    automaton: Option<AhoCorasick>,
}

/// A stretch of text: either an added token's id or text for the rest of
/// the pipeline.
#[derive(Debug, PartialEq)]
pub(crate) enum Segment {
    Token(u32),
    Text(usize, usize),
}

impl Matcher {
    /// `contents` are the strings to look for (the normalized ones already
    /// normalized), in the order of `tokens`.
    pub(crate) fn new(tokens: Vec<AddedToken>, contents: Vec<String>) -> Result<Matcher, String> {
        let keep: Vec<usize> = (0..tokens.len()).filter(|&i| !contents[i].is_empty()).collect();
        let automaton = if keep.is_empty() {
            None
        } else {
            let pats: Vec<&str> = keep.iter().map(|&i| contents[i].as_str()).collect();
            Some(
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(pats)
                    .map_err(|e| format!("the added tokens do not build a matcher: {e}"))?,
            )
        };
        let tokens = keep.into_iter().map(|i| tokens[i].clone()).collect();
        Ok(Matcher { tokens, automaton })
    }

    /// The tokens this pass looks for.
    pub(crate) fn tokens(&self) -> &[AddedToken] {
        &self.tokens
    }

    /// Cuts `s` into segments; `skip_special` leaves special tokens as text.
    pub(crate) fn segments(&self, s: &str, skip_special: bool, out: &mut Vec<Segment>) {
        let Some(ac) = &self.automaton else {
            if !s.is_empty() {
                out.push(Segment::Text(0, s.len()));
            }
            return;
        };
        let mut start_offset = 0;
        for m in ac.find_iter(s) {
            let tok = &self.tokens[m.pattern().as_usize()];
            if skip_special && tok.special {
                continue;
            }
            let (mut start, mut stop) = (m.start(), m.end());
            if tok.single_word {
                let before_ok = start == 0 || !s[..start].chars().next_back().is_some_and(char::is_alphanumeric);
                let after_ok = stop == s.len() || !s[stop..].chars().next().is_some_and(char::is_alphanumeric);
                if !before_ok || !after_ok {
                    continue;
                }
            }
            if tok.lstrip {
                let trimmed = s[..start].trim_end_matches(char::is_whitespace).len();
                start = trimmed.max(start_offset);
            }
            if tok.rstrip {
                stop += s[stop..].len() - s[stop..].trim_start_matches(char::is_whitespace).len();
            }
            if start < start_offset {
                continue; // inside what an earlier token's rstrip took
            }
            if start_offset < start {
                out.push(Segment::Text(start_offset, start));
            }
            out.push(Segment::Token(tok.id));
            start_offset = stop;
        }
        if start_offset < s.len() {
            out.push(Segment::Text(start_offset, s.len()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(id: u32, content: &str) -> AddedToken {
        AddedToken {
            id,
            content: content.into(),
            special: true,
            normalized: false,
            lstrip: false,
            rstrip: false,
            single_word: false,
        }
    }

    #[test]
    fn leftmost_longest_and_the_strip_options() {
        let mut b = tok(2, "<|im_end|>");
        b.lstrip = true;
        b.rstrip = true;
        let m = Matcher::new(vec![tok(1, "<|im"), b.clone()], vec!["<|im".into(), b.content.clone()]).unwrap();
        let mut out = Vec::new();
        m.segments("hi  <|im_end|> x<|im", false, &mut out);
        assert_eq!(out, [Segment::Text(0, 2), Segment::Token(2), Segment::Text(15, 16), Segment::Token(1)]);
        out.clear();
        m.segments("hi <|im_end|>", true, &mut out);
        assert_eq!(out, [Segment::Text(0, 13)], "special tokens as ordinary text");
    }
}

//! Pre-tokenizers: the split stage (HF `pre_tokenizers`).
//!
//! Pieces are byte ranges of one buffer, the normalized text between added
//! tokens; each step splits every piece further. Only `ByteLevel` with
//! `add_prefix_space` changes the text, and it rebuilds the buffer.

use super::split_regex::SplitRegex;
use crate::tokens::pretokenize::Pattern;

/// What a `Split` does with the text its pattern matches (HF's
/// `SplitDelimiterBehavior`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Behavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

/// What a `Split` looks for.
#[derive(Debug)]
pub(crate) enum Matcher {
    Literal(String),
    Regex(SplitRegex),
}

/// One pre-tokenizer step (a `Sequence` is flattened into its steps).
#[derive(Debug)]
pub(crate) enum Step {
    Split {
        matcher: Matcher,
        behavior: Behavior,
        invert: bool,
    },
    /// Bytes become GPT-2's alphabet (done once, on the vocabulary, so here
    /// only the optional space and GPT-2 split remain).
    ByteLevel {
        add_prefix_space: bool,
        use_regex: bool,
    },
    /// Digits apart from the rest, each alone or in runs.
    Digits {
        individual: bool,
    },
    /// SentencePiece's spaces: every `' '` becomes `replacement` (`▁`),
    /// `prepend` decides where a `▁` is put before a piece that lacks one,
    /// and `split` cuts before each `▁` (HF's `Metaspace`).
    Metaspace {
        replacement: char,
        prepend: Prepend,
        split: bool,
    },
}

/// HF's Metaspace `prepend_scheme`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prepend {
    /// Before every piece (also after each added token).
    Always,
    /// Only before the piece at the very start of the text (Llama 2 and
    /// Mistral files since transformers' `legacy=False`).
    First,
    Never,
}

impl Step {
    /// Whether this step leaves pieces as they are (`ByteLevel` without
    /// its options).
    pub(crate) fn is_identity(&self) -> bool {
        matches!(self, Step::ByteLevel { add_prefix_space: false, use_regex: false })
    }
}

/// The whole split stage.
#[derive(Debug, Default)]
pub(crate) struct PreTokenizer {
    pub(crate) steps: Vec<Step>,
}

impl PreTokenizer {
    /// When the stage is one `Isolated` split by a pattern turnfit's
    /// tiktoken pre-tokenizer implements (and steps that change nothing),
    /// that pattern: the pipeline then hands the text to it directly.
    pub(crate) fn known_pattern(&self) -> Option<Pattern> {
        let mut real = self.steps.iter().filter(|s| !s.is_identity());
        match (real.next(), real.next()) {
            (
                Some(Step::Split {
                    matcher: Matcher::Regex(SplitRegex::Known(p)),
                    behavior: Behavior::Isolated,
                    invert: false,
                }),
                None,
            ) => Some(*p),
            _ => None,
        }
    }

    /// The pieces of `text`, as ranges of the returned buffer (which is
    /// `text` itself unless a step added characters). `at_start`: `text`
    /// begins the whole input (HF's `offsets_original().0 == 0`, which
    /// Metaspace's `first` scheme asks).
    pub(crate) fn split(&self, text: &str, at_start: bool) -> (String, Vec<(usize, usize)>) {
        let mut buf = text.to_string();
        let mut pieces = if text.is_empty() { Vec::new() } else { vec![(0, text.len())] };
        // Where in `buf` the piece that starts the input begins, while one does.
        let mut zero = at_start.then_some(0usize);
        for step in &self.steps {
            if step.is_identity() {
                continue;
            }
            let mut next = Vec::with_capacity(pieces.len() * 2);
            match step {
                Step::Split { matcher, behavior, invert } => {
                    for &(a, b) in &pieces {
                        let found = find(matcher, &buf[a..b], *invert);
                        apply(&found, *behavior, a, &mut next);
                    }
                }
                Step::Digits { individual } => {
                    for &(a, b) in &pieces {
                        let found = char_runs(&buf[a..b], char::is_numeric, *individual);
                        let behavior = if *individual { Behavior::Isolated } else { Behavior::Contiguous };
                        apply(&found, behavior, a, &mut next);
                    }
                }
                Step::Metaspace { replacement, prepend, split } => {
                    let first = pieces.first().map(|p| p.0);
                    let rebuilt = metaspace(&buf, &pieces, *replacement, *prepend, zero.filter(|&z| Some(z) == first));
                    zero = zero.filter(|&z| Some(z) == first).map(|_| 0);
                    (buf, pieces) = rebuilt;
                    if *split {
                        let lit = Matcher::Literal(replacement.to_string());
                        for &(a, b) in &pieces {
                            apply(&find(&lit, &buf[a..b], false), Behavior::MergedWithNext, a, &mut next);
                        }
                    } else {
                        next = pieces.clone();
                    }
                }
                Step::ByteLevel { add_prefix_space, use_regex } => {
                    if *add_prefix_space {
                        let first = pieces.first().map(|p| p.0);
                        zero = zero.filter(|&z| Some(z) == first).map(|_| 0);
                        (buf, pieces) = prefix_spaces(&buf, &pieces);
                    }
                    if *use_regex {
                        let gpt2 = SplitRegex::Known(Pattern::Gpt2);
                        for &(a, b) in &pieces {
                            let found = regex_spans(&gpt2, &buf[a..b], false);
                            apply(&found, Behavior::Isolated, a, &mut next);
                        }
                    } else {
                        next = pieces.clone();
                    }
                }
            }
            next.retain(|&(a, b)| b > a);
            pieces = next;
            zero = zero.filter(|&z| pieces.first().is_some_and(|p| p.0 == z));
        }
        (buf, pieces)
    }
}

/// HF's `Metaspace` on each piece: spaces to `replacement`, then one
/// `replacement` before a piece that does not start with it, for every
/// piece (`Always`) or only the one starting the input (`First`, whose
/// start in `buf` is `zero`).
fn metaspace(
    buf: &str,
    pieces: &[(usize, usize)],
    replacement: char,
    prepend: Prepend,
    zero: Option<usize>,
) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(buf.len() + pieces.len() * replacement.len_utf8());
    let mut ranges = Vec::with_capacity(pieces.len());
    for &(a, b) in pieces {
        let start = out.len();
        let piece = &buf[a..b];
        let wanted = match prepend {
            Prepend::Always => true,
            Prepend::First => zero == Some(a),
            Prepend::Never => false,
        };
        if wanted && !piece.is_empty() && !piece.starts_with([' ', replacement]) {
            out.push(replacement);
        }
        for c in piece.chars() {
            out.push(if c == ' ' { replacement } else { c });
        }
        ranges.push((start, out.len()));
    }
    (out, ranges)
}

/// HF's `ByteLevel` puts a space before every piece that does not start
/// with one.
fn prefix_spaces(buf: &str, pieces: &[(usize, usize)]) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(buf.len() + pieces.len());
    let mut ranges = Vec::with_capacity(pieces.len());
    for &(a, b) in pieces {
        let start = out.len();
        if !buf[a..b].starts_with(' ') {
            out.push(' ');
        }
        out.push_str(&buf[a..b]);
        ranges.push((start, out.len()));
    }
    (out, ranges)
}

/// The text cut into (start, end, is_match) spans covering all of it, as
/// HF's `Pattern::find_matches` does.
fn find(matcher: &Matcher, s: &str, invert: bool) -> Vec<(usize, usize, bool)> {
    match matcher {
        Matcher::Regex(re) => regex_spans(re, s, invert),
        Matcher::Literal(lit) => {
            let mut spans = Vec::new();
            let mut prev = 0;
            if !lit.is_empty() {
                for (i, m) in s.match_indices(lit.as_str()) {
                    if prev != i {
                        spans.push((prev, i, invert));
                    }
                    spans.push((i, i + m.len(), !invert));
                    prev = i + m.len();
                }
            }
            if prev != s.len() {
                spans.push((prev, s.len(), invert));
            }
            spans
        }
    }
}

fn regex_spans(re: &SplitRegex, s: &str, invert: bool) -> Vec<(usize, usize, bool)> {
    let mut spans = Vec::new();
    let mut prev = 0;
    re.for_each_match(s, |a, b| {
        if prev != a {
            spans.push((prev, a, invert));
        }
        spans.push((a, b, !invert));
        prev = b;
    });
    if prev != s.len() {
        spans.push((prev, s.len(), invert));
    }
    spans
}

/// Spans of characters that satisfy `is` (one span per character when
/// `each`) and the text between them.
fn char_runs(s: &str, is: fn(char) -> bool, each: bool) -> Vec<(usize, usize, bool)> {
    let mut spans: Vec<(usize, usize, bool)> = Vec::new();
    for (i, c) in s.char_indices() {
        let m = is(c);
        let end = i + c.len_utf8();
        match spans.last_mut() {
            Some(last) if last.2 == m && !(m && each) => last.1 = end,
            _ => spans.push((i, end, m)),
        }
    }
    spans
}

/// Joins spans into pieces by `behavior`, exactly as HF's
/// `NormalizedString::split` folds them, and appends them (offset by
/// `base`) to `out`.
fn apply(spans: &[(usize, usize, bool)], behavior: Behavior, base: usize, out: &mut Vec<(usize, usize)>) {
    let mut acc: Vec<(usize, usize)> = Vec::new();
    match behavior {
        Behavior::Removed => acc.extend(spans.iter().filter(|s| !s.2).map(|s| (s.0, s.1))),
        Behavior::Isolated => acc.extend(spans.iter().map(|s| (s.0, s.1))),
        Behavior::MergedWithPrevious => {
            let mut previous_match = false;
            for &(a, b, m) in spans {
                match acc.last_mut() {
                    Some(last) if m && !previous_match => last.1 = b,
                    _ => acc.push((a, b)),
                }
                previous_match = m;
            }
        }
        Behavior::MergedWithNext => {
            let mut previous_match = false;
            for &(a, b, m) in spans.iter().rev() {
                match acc.last_mut() {
                    Some(last) if m && !previous_match => last.0 = a,
                    _ => acc.push((a, b)),
                }
                previous_match = m;
            }
            acc.reverse();
        }
        Behavior::Contiguous => {
            let mut previous_match = false;
            for (k, &(a, b, m)) in spans.iter().enumerate() {
                match acc.last_mut() {
                    Some(last) if k > 0 && m == previous_match => last.1 = b,
                    _ => acc.push((a, b)),
                }
                previous_match = m;
            }
        }
    }
    out.extend(acc.into_iter().map(|(a, b)| (base + a, base + b)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(steps: Vec<Step>, s: &str) -> Vec<String> {
        let (buf, p) = PreTokenizer { steps }.split(s, true);
        p.iter().map(|&(a, b)| buf[a..b].to_string()).collect()
    }

    fn lit(s: &str, behavior: Behavior) -> Step {
        Step::Split { matcher: Matcher::Literal(s.into()), behavior, invert: false }
    }

    /// The expected pieces are those in HF's own tests of each behaviour.
    #[test]
    fn behaviours_fold_as_hf_does() {
        let s = "The-final--countdown";
        assert_eq!(pieces(vec![lit("-", Behavior::Removed)], s), ["The", "final", "countdown"]);
        assert_eq!(pieces(vec![lit("-", Behavior::Isolated)], s), ["The", "-", "final", "-", "-", "countdown"]);
        assert_eq!(pieces(vec![lit("-", Behavior::MergedWithPrevious)], s), ["The-", "final-", "-", "countdown"]);
        assert_eq!(pieces(vec![lit("-", Behavior::MergedWithNext)], s), ["The", "-final", "-", "-countdown"]);
        assert_eq!(pieces(vec![lit("-", Behavior::Contiguous)], s), ["The", "-", "final", "--", "countdown"]);
    }

    #[test]
    fn digits_and_byte_level_options() {
        assert_eq!(pieces(vec![Step::Digits { individual: true }], "a12b"), ["a", "1", "2", "b"]);
        assert_eq!(pieces(vec![Step::Digits { individual: false }], "a12b"), ["a", "12", "b"]);
        let bl = Step::ByteLevel { add_prefix_space: true, use_regex: true };
        assert_eq!(pieces(vec![bl], "Hello  world"), [" Hello", " ", " world"]);
    }
}

//! Normalizers: the first stage of the pipeline, run on each stretch of text
//! between added tokens (HF `normalizers`).
//!
//! Only the normalizers the open-weight families use are supported; any
//! other type is refused by name when the file is loaded, so a tokenizer
//! that would count differently never loads.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

/// One normalization step.
#[derive(Debug, Clone)]
pub(crate) enum Normalizer {
    /// Unicode canonical composition (Qwen).
    Nfc,
    /// Unicode canonical decomposition.
    Nfd,
    /// Compatibility composition.
    Nfkc,
    /// Compatibility decomposition.
    Nfkd,
    /// Every occurrence of a literal string replaced (SentencePiece-style
    /// files: `" "` to `"▁"`).
    Replace { pattern: String, content: String },
    /// A string put before the text (SentencePiece's dummy prefix).
    Prepend(String),
    /// Steps applied in order.
    Sequence(Vec<Normalizer>),
}

impl Normalizer {
    /// The normalized text; borrowed when nothing changed.
    pub(crate) fn apply<'a>(&self, s: &'a str) -> Cow<'a, str> {
        match self {
            Normalizer::Nfc => compose_if_needed(s, |s| s.nfc().collect()),
            Normalizer::Nfd => compose_if_needed(s, |s| s.nfd().collect()),
            Normalizer::Nfkc => compose_if_needed(s, |s| s.nfkc().collect()),
            Normalizer::Nfkd => compose_if_needed(s, |s| s.nfkd().collect()),
            Normalizer::Replace { pattern, content } => {
                if pattern.is_empty() || !s.contains(pattern.as_str()) {
                    Cow::Borrowed(s)
                } else {
                    Cow::Owned(s.replace(pattern.as_str(), content))
                }
            }
            // HF prepends only to non-empty text.
            Normalizer::Prepend(p) if !s.is_empty() => Cow::Owned(format!("{p}{s}")),
            Normalizer::Prepend(_) => Cow::Borrowed(s),
            Normalizer::Sequence(steps) => {
                let mut out = Cow::Borrowed(s);
                for step in steps {
                    if let Cow::Owned(t) = step.apply(&out) {
                        out = Cow::Owned(t);
                    }
                }
                out
            }
        }
    }
}

/// ASCII text is unchanged by every normalization form, and most text is
/// ASCII: skip the allocation for it.
fn compose_if_needed<'a>(s: &'a str, f: impl Fn(&str) -> String) -> Cow<'a, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    let t = f(s);
    if t == s {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_does_what_hf_does() {
        assert_eq!(Normalizer::Nfc.apply("e\u{301}"), "\u{e9}");
        assert_eq!(Normalizer::Nfd.apply("\u{e9}"), "e\u{301}");
        let r = Normalizer::Replace { pattern: " ".into(), content: "\u{2581}".into() };
        assert_eq!(r.apply("a b"), "a\u{2581}b");
        let seq = Normalizer::Sequence(vec![Normalizer::Prepend("\u{2581}".into()), r]);
        assert_eq!(seq.apply("a b"), "\u{2581}a\u{2581}b");
        assert_eq!(seq.apply(""), "");
    }
}

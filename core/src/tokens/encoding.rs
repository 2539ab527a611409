//! The encodings ctxkit ships: names, pre-tokenization patterns, special
//! tokens and embedded rank files.
//!
//! The rank files are OpenAI's published `.tiktoken` files, byte for byte;
//! `tests/vocab_provenance.rs` checks each against the SHA-256 that OpenAI's
//! tiktoken package pins, so a corrupted or substituted vocabulary fails the
//! build's tests rather than miscounting silently.

use std::fmt;
use std::str::FromStr;

use super::pretokenize::Pattern;
use crate::{Error, ErrorKind, Result};

/// A byte-pair encoding compatible with OpenAI's tiktoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    /// GPT-4, GPT-3.5-turbo, text-embedding-3 and ada-002.
    Cl100kBase,
    /// GPT-4o, GPT-4.1, GPT-5 and the o-series.
    O200kBase,
    /// Codex-era models (text-davinci-002/003, code-davinci).
    P50kBase,
    /// GPT-3 (davinci, curie, ...) and GPT-2; also known as `gpt2`.
    R50kBase,
}

impl Encoding {
    /// Every shipped encoding, in a stable order.
    pub const ALL: [Encoding; 4] = [Encoding::Cl100kBase, Encoding::O200kBase, Encoding::P50kBase, Encoding::R50kBase];

    /// The canonical tiktoken name, e.g. `"cl100k_base"`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
            Encoding::P50kBase => "p50k_base",
            Encoding::R50kBase => "r50k_base",
        }
    }

    /// Parses a canonical name (or the alias `gpt2`); the error names close matches.
    pub fn from_name(name: &str) -> Result<Encoding> {
        crate::text::check_name("encoding name", name)?;
        let wanted = name.trim().to_ascii_lowercase();
        if wanted == "gpt2" {
            return Ok(Encoding::R50kBase);
        }
        if let Some(e) = Encoding::ALL.into_iter().find(|e| e.name() == wanted) {
            return Ok(e);
        }
        let names: Vec<&str> = Encoding::ALL.iter().map(|e| e.name()).collect();
        let close = crate::text::close_matches(&wanted, names.iter().copied(), 3);
        let hint = if close.is_empty() {
            format!("known encodings: {}", names.join(", "))
        } else {
            format!("did you mean {}?", close.join(" or "))
        };
        Err(Error::new(ErrorKind::UnknownEncoding, format!("unknown encoding '{}'; {hint}", crate::text::clip(name))))
    }

    /// The embedded vocabulary: OpenAI's rank file in ctxkit's compact
    /// layout (see `tokens/vocab.rs`; `tests/vocab_files.rs` proves it holds
    /// the same tokens as the `.tiktoken` file next to it).
    pub(crate) fn vocab_file(self) -> &'static [u8] {
        match self {
            Encoding::Cl100kBase => include_bytes!("../../data/cl100k_base.vocab"),
            Encoding::O200kBase => include_bytes!("../../data/o200k_base.vocab"),
            Encoding::P50kBase => include_bytes!("../../data/p50k_base.vocab"),
            Encoding::R50kBase => include_bytes!("../../data/r50k_base.vocab"),
        }
    }

    /// The hand-written pre-tokenizer for this encoding's pattern.
    pub(crate) fn pretokenizer(self) -> Pattern {
        match self {
            Encoding::R50kBase | Encoding::P50kBase => Pattern::Gpt2,
            Encoding::Cl100kBase => Pattern::Cl100k,
            Encoding::O200kBase => Pattern::O200k,
        }
    }

    /// The pre-tokenization pattern, exactly as OpenAI's tiktoken defines it.
    /// [`Self::pretokenizer`] implements it by hand; the tests compare the two.
    #[cfg(test)]
    pub(crate) fn pattern(self) -> &'static str {
        const GPT2: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
        match self {
            Encoding::R50kBase | Encoding::P50kBase => GPT2,
            Encoding::Cl100kBase => {
                r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"
            }
            Encoding::O200kBase => concat!(
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"|\p{N}{1,3}",
                r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
                r"|\s*[\r\n]+",
                r"|\s+(?!\S)",
                r"|\s+",
            ),
        }
    }

    /// Special tokens and their ids, as tiktoken's `openai_public` defines them.
    pub fn special_tokens(self) -> &'static [(&'static str, u32)] {
        match self {
            Encoding::R50kBase | Encoding::P50kBase => &[("<|endoftext|>", 50256)],
            Encoding::Cl100kBase => &[
                ("<|endoftext|>", 100257),
                ("<|fim_prefix|>", 100258),
                ("<|fim_middle|>", 100259),
                ("<|fim_suffix|>", 100260),
                ("<|endofprompt|>", 100276),
            ],
            Encoding::O200kBase => &[("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)],
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Encoding {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Encoding::from_name(s)
    }
}

impl serde::Serialize for Encoding {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Encoding {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Encoding::from_name(&name).map_err(serde::de::Error::custom)
    }
}

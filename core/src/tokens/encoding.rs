//! The encodings turnfit ships: names, pre-tokenization patterns, special
//! tokens and embedded rank files.
//!
//! The rank files are OpenAI's published `.tiktoken` files, byte for byte;
//! `tests/vocab_provenance.rs` checks each against the SHA-256 that OpenAI's
//! tiktoken package pins, so a corrupted or substituted vocabulary fails the
//! build's tests rather than miscounting silently.

use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use super::pretokenize::Pattern;
use crate::{Error, ErrorKind, Result};

/// A byte-pair encoding compatible with OpenAI's tiktoken.
///
/// Three of them reuse another's ranks with their own name and special
/// tokens, exactly as tiktoken's `tiktoken_ext/openai_public.py` defines
/// them: `o200k_harmony` (o200k_base's ranks and pattern, plus the harmony
/// chat-format tokens of the gpt-oss models), `p50k_edit` (p50k_base plus
/// three fill-in-the-middle tokens) and `gpt2` (r50k_base under GPT-2's
/// name). Their vocabulary is embedded once and loaded once per process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    /// GPT-4, GPT-3.5-turbo, text-embedding-3 and ada-002.
    Cl100kBase,
    /// GPT-4o, GPT-4.1, GPT-5 and the o-series.
    O200kBase,
    /// Codex-era models (text-davinci-002/003, code-davinci).
    P50kBase,
    /// GPT-3 (davinci, curie, ...).
    R50kBase,
    /// gpt-oss: o200k_base's ranks plus the harmony format's special tokens.
    O200kHarmony,
    /// The edit models (text-davinci-edit-001, code-davinci-edit-001):
    /// p50k_base's ranks plus the fill-in-the-middle tokens.
    P50kEdit,
    /// GPT-2: r50k_base's ranks under tiktoken's name `gpt2`.
    Gpt2,
}

/// The harmony format's named special tokens (tiktoken's `o200k_harmony`).
/// Ids 200013..=201087 that are not named are `<|reserved_ID|>`.
const HARMONY_NAMED: [(&str, u32); 16] = [
    ("<|endoftext|>", 199999),
    // Listed before `<|reserved_200018|>`, which has the same id: tiktoken
    // decodes 200018 as `<|endofprompt|>`, and so does turnfit (first wins).
    ("<|endofprompt|>", 200018),
    ("<|startoftext|>", 199998),
    ("<|reserved_200000|>", 200000),
    ("<|reserved_200001|>", 200001),
    ("<|return|>", 200002),
    ("<|constrain|>", 200003),
    ("<|reserved_200004|>", 200004),
    ("<|channel|>", 200005),
    ("<|start|>", 200006),
    ("<|end|>", 200007),
    ("<|message|>", 200008),
    ("<|reserved_200009|>", 200009),
    ("<|reserved_200010|>", 200010),
    ("<|reserved_200011|>", 200011),
    ("<|call|>", 200012),
];
const HARMONY_RESERVED: std::ops::RangeInclusive<u32> = 200013..=201087;

/// o200k_harmony's special tokens: the named ones, then every reserved id.
fn harmony_special_tokens() -> &'static [(&'static str, u32)] {
    static NAMES: LazyLock<String> =
        LazyLock::new(|| HARMONY_RESERVED.map(|id| format!("<|reserved_{id}|>")).collect::<String>());
    static TOKENS: LazyLock<Vec<(&'static str, u32)>> = LazyLock::new(|| {
        let names: &'static str = NAMES.as_str();
        let mut out = HARMONY_NAMED.to_vec();
        let mut at = 0;
        for id in HARMONY_RESERVED {
            let len = "<|reserved_|>".len() + id.to_string().len();
            out.push((&names[at..at + len], id));
            at += len;
        }
        out
    });
    TOKENS.as_slice()
}

impl Encoding {
    /// Every shipped encoding, in a stable order.
    pub const ALL: [Encoding; 7] = [
        Encoding::Cl100kBase,
        Encoding::O200kBase,
        Encoding::P50kBase,
        Encoding::R50kBase,
        Encoding::O200kHarmony,
        Encoding::P50kEdit,
        Encoding::Gpt2,
    ];

    /// The canonical tiktoken name, e.g. `"cl100k_base"`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
            Encoding::P50kBase => "p50k_base",
            Encoding::R50kBase => "r50k_base",
            Encoding::O200kHarmony => "o200k_harmony",
            Encoding::P50kEdit => "p50k_edit",
            Encoding::Gpt2 => "gpt2",
        }
    }

    /// Parses a canonical tiktoken name (case and surrounding spaces are
    /// ignored); the error names close matches.
    pub fn from_name(name: &str) -> Result<Encoding> {
        crate::text::check_name("encoding name", name)?;
        let wanted = name.trim().to_ascii_lowercase();
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

    /// The encoding whose rank file this one uses (itself for the four
    /// base encodings).
    pub(crate) fn ranks(self) -> Encoding {
        match self {
            Encoding::O200kHarmony => Encoding::O200kBase,
            Encoding::P50kEdit => Encoding::P50kBase,
            Encoding::Gpt2 => Encoding::R50kBase,
            base => base,
        }
    }

    /// The embedded vocabulary: OpenAI's rank file in turnfit's compact
    /// layout (see `tokens/vocab.rs`; `tests/vocab_files.rs` proves it holds
    /// the same tokens as the `.tiktoken` file next to it).
    pub(crate) fn vocab_file(self) -> &'static [u8] {
        match self.ranks() {
            Encoding::Cl100kBase => include_bytes!("../../data/cl100k_base.vocab"),
            Encoding::O200kBase | Encoding::O200kHarmony => include_bytes!("../../data/o200k_base.vocab"),
            Encoding::P50kBase | Encoding::P50kEdit => include_bytes!("../../data/p50k_base.vocab"),
            Encoding::R50kBase | Encoding::Gpt2 => include_bytes!("../../data/r50k_base.vocab"),
        }
    }

    /// The hand-written pre-tokenizer for this encoding's pattern.
    pub(crate) fn pretokenizer(self) -> Pattern {
        match self.ranks() {
            Encoding::R50kBase | Encoding::P50kBase | Encoding::Gpt2 | Encoding::P50kEdit => Pattern::Gpt2,
            Encoding::Cl100kBase => Pattern::Cl100k,
            Encoding::O200kBase | Encoding::O200kHarmony => Pattern::O200k,
        }
    }

    /// The pre-tokenization pattern, exactly as OpenAI's tiktoken defines it.
    /// [`Self::pretokenizer`] implements it by hand; the tests compare the two.
    #[cfg(test)]
    pub(crate) fn pattern(self) -> &'static str {
        const GPT2: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
        match self.ranks() {
            Encoding::R50kBase | Encoding::P50kBase | Encoding::Gpt2 | Encoding::P50kEdit => GPT2,
            Encoding::Cl100kBase => {
                r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"
            }
            Encoding::O200kBase | Encoding::O200kHarmony => concat!(
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

    /// Special tokens and their ids, as tiktoken's `openai_public` defines
    /// them. o200k_harmony has 1,091, two of them sharing id 200018.
    pub fn special_tokens(self) -> &'static [(&'static str, u32)] {
        match self {
            Encoding::R50kBase | Encoding::P50kBase | Encoding::Gpt2 => &[("<|endoftext|>", 50256)],
            Encoding::P50kEdit => &[
                ("<|endoftext|>", 50256),
                ("<|fim_prefix|>", 50281),
                ("<|fim_middle|>", 50282),
                ("<|fim_suffix|>", 50283),
            ],
            Encoding::O200kHarmony => harmony_special_tokens(),
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

/// An encoding crosses as its name: the schema lists the seven names.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Encoding {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Encoding".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Encoding::ALL.iter().map(|e| e.name()).collect();
        schemars::json_schema!({"type": "string", "enum": names, "description": "A tiktoken encoding name."})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Engine::next_special` relies on this shape.
    #[test]
    fn special_tokens_are_delimited_names_and_unique() {
        for e in Encoding::ALL {
            let specials = e.special_tokens();
            let mut texts: Vec<&str> = specials.iter().map(|(t, _)| *t).collect();
            for t in &texts {
                let name =
                    t.strip_prefix("<|").and_then(|t| t.strip_suffix("|>")).unwrap_or_else(|| panic!("{e}: {t}"));
                assert!(!name.is_empty() && !name.contains("|>") && !name.contains("<|"), "{e}: {t}");
            }
            texts.sort_unstable();
            texts.dedup();
            assert_eq!(texts.len(), specials.len(), "{e}: a special token is listed twice");
        }
    }

    #[test]
    fn harmony_special_tokens_are_tiktokens() {
        let s = Encoding::O200kHarmony.special_tokens();
        assert_eq!(s.len(), 1091);
        let id = |t: &str| s.iter().find(|(x, _)| *x == t).map(|(_, i)| *i);
        assert_eq!(id("<|reserved_200013|>"), Some(200013));
        assert_eq!(id("<|reserved_201087|>"), Some(201087));
        assert_eq!(id("<|reserved_201088|>"), None);
        assert_eq!(id("<|reserved_200012|>"), None, "200012 is <|call|>");
        assert_eq!(id("<|call|>"), Some(200012));
        let ids: std::collections::BTreeSet<u32> = s.iter().map(|(_, i)| *i).collect();
        assert_eq!(ids.len(), 1090, "200018 has two names");
        assert_eq!((ids.first(), ids.last()), (Some(&199998), Some(&201087)));
    }

    #[test]
    fn aliases_share_their_base_ranks() {
        for e in Encoding::ALL {
            assert_eq!(e.vocab_file().as_ptr(), e.ranks().vocab_file().as_ptr(), "{e}");
            assert_eq!(e.pretokenizer(), e.ranks().pretokenizer(), "{e}");
            assert_eq!(e.ranks().ranks(), e.ranks());
        }
        assert_eq!(Encoding::ALL.iter().filter(|e| e.ranks() == **e).count(), 4);
    }
}

//! Exact, OpenAI-compatible token counting.
//!
//! A [`Tokenizer`] is a cheap, `Copy`-sized view of a process-wide encoding
//! (loaded once, on first use, from vocabularies embedded in the binary) plus
//! the caller's choice of how to treat special-token text. It is `Send + Sync`
//! and holds no per-call state, so one instance can serve every thread.
//!
//! Ids are identical to OpenAI's tiktoken for every input: the tests compare
//! against tiktoken-rs on random Unicode and against vectors produced by
//! OpenAI's own Python package.

mod backtrack;
mod bpe;
mod decode;
mod encode_bytes;
mod encoding;
mod engine;
mod piece_cache;
pub(crate) mod pretokenize;
mod special;
mod text_cache;
mod truncate;
mod unicode;
mod vocab;

pub use decode::DecodeMode;
pub use encoding::Encoding;
pub(crate) use engine::thread_slot;
pub use special::{SpecialPolicy, SpecialSet, SpecialToken};
pub use truncate::{TruncateSide, Truncation};

use crate::limits::{self, MAX_TEXT_BYTES};
use crate::Result;
use engine::{Allow, Engine};

/// Empties the calling thread's counting caches (the count and piece caches,
/// keeping their memory, and the long-piece memos; see `piece_cache.rs`) and
/// the short pieces the process's vocabularies recorded as not one token
/// (`vocab.rs`), so the next count costs what a text never seen costs.
/// Counts never depend on the caches; this exists for benchmarks that
/// compare a cold turnfit with peers whose own caches are cleared
/// (bench/node's "cache cleared" columns, `xtask growth`).
#[doc(hidden)]
pub fn clear_thread_caches() {
    engine::clear_thread_scratch();
    engine::forget_recorded_pieces();
}

/// How text that spells a special token (such as `<|endoftext|>`) is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SpecialTokens {
    /// Counted as the ordinary text it is (tiktoken's `encode_ordinary`).
    /// The safe default for untrusted text: a user cannot inject a control token.
    #[default]
    Ordinary,
    /// Every special token of the encoding becomes its single id
    /// (tiktoken's `encode(text, allowed_special="all")`).
    Recognize,
}

/// Result of [`Tokenizer::count_until_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CountLimit {
    /// The exact count when `exceeded` is false; otherwise the count at the
    /// point counting stopped, which is greater than the limit.
    pub tokens: usize,
    /// Whether the text has more tokens than the limit.
    pub exceeded: bool,
}

/// A tokenizer's description (`turnfit_tokenizer_info`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TokenizerInfo {
    /// The encoding.
    pub encoding: Encoding,
    /// Whether special-token text is recognized.
    pub special_tokens: SpecialTokens,
    /// One past the highest token id (tiktoken's `n_vocab`).
    pub vocab_size: usize,
    /// Approximate heap bytes of the loaded vocabulary.
    pub memory_bytes: usize,
    /// The model lookup the tokenizer was made from (`null` when made from an encoding).
    pub model: Option<crate::ModelInfo>,
}

/// An exact tokenizer for one [`Encoding`]. Safe to share across threads.
#[derive(Clone, Copy)]
pub struct Tokenizer {
    engine: &'static Engine,
    special: SpecialTokens,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer").field("encoding", &self.engine.encoding).field("special", &self.special).finish()
    }
}

impl Tokenizer {
    /// A tokenizer for `encoding` treating special-token text as ordinary text.
    /// The first call for an encoding parses its embedded vocabulary (tens of
    /// milliseconds); later calls, from any thread, reuse it.
    pub fn new(encoding: Encoding) -> Result<Tokenizer> {
        Ok(Tokenizer { engine: Engine::get(encoding)?, special: SpecialTokens::Ordinary })
    }

    /// A tokenizer for an encoding given by name (`"o200k_base"`, ...).
    pub fn from_name(name: &str) -> Result<Tokenizer> {
        Tokenizer::new(Encoding::from_name(name)?)
    }

    /// The same tokenizer with a different special-token policy.
    pub fn with_special_tokens(self, special: SpecialTokens) -> Tokenizer {
        Tokenizer { special, ..self }
    }

    /// The encoding this tokenizer implements.
    pub fn encoding(&self) -> Encoding {
        self.engine.encoding
    }

    /// The special-token policy.
    pub fn special_tokens(&self) -> SpecialTokens {
        self.special
    }

    /// One past the highest token id, special tokens included (tiktoken's
    /// `n_vocab`).
    pub fn vocab_size(&self) -> usize {
        self.engine.vocab_size()
    }

    /// Approximate heap bytes held by this encoding's loaded vocabulary
    /// (shared by every tokenizer of the encoding).
    pub fn memory_bytes(&self) -> usize {
        self.engine.heap_bytes()
    }

    /// What `turnfit_tokenizer_info` and the bindings' `info` report;
    /// `model` is the lookup the tokenizer was made from, if any.
    pub fn info(&self, model: Option<&crate::ModelInfo>) -> TokenizerInfo {
        TokenizerInfo {
            encoding: self.encoding(),
            special_tokens: self.special,
            vocab_size: self.vocab_size(),
            memory_bytes: self.memory_bytes(),
            model: model.cloned(),
        }
    }

    fn allow(&self) -> Allow<'static> {
        match self.special {
            SpecialTokens::Ordinary => Allow::None,
            SpecialTokens::Recognize => Allow::All,
        }
    }

    /// Number of tokens in `text`.
    pub fn count(&self, text: &str) -> Result<usize> {
        limits::check("text", text.len(), MAX_TEXT_BYTES)?;
        Ok(self.engine.count(text, self.allow(), usize::MAX)?.0)
    }

    /// Counts tokens but stops as soon as the count passes `limit`, so the
    /// work is proportional to the limit rather than to the text.
    pub fn count_until_limit(&self, text: &str, limit: usize) -> Result<CountLimit> {
        limits::check("text", text.len(), MAX_TEXT_BYTES)?;
        let (tokens, exceeded) = self.engine.count(text, self.allow(), limit)?;
        Ok(CountLimit { tokens, exceeded })
    }

    /// The token ids of `text`.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        limits::check("text", text.len(), MAX_TEXT_BYTES)?;
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        self.engine.encode(text, self.allow(), &mut out)?;
        Ok(out)
    }

    /// Byte length of each token of `ids` (which must be valid ids).
    fn token_lengths(&self, ids: &[u32]) -> Vec<usize> {
        ids.iter().map(|&id| self.engine.token_bytes(id).map_or(0, <[u8]>::len)).collect()
    }

    /// The id of the single token whose bytes are exactly `bytes` (an
    /// ordinary token or a special token's text), tiktoken's
    /// `encode_single_token`. Fails with `UnknownToken` when no token has
    /// these bytes.
    pub fn token_id(&self, bytes: &[u8]) -> Result<u32> {
        self.engine.token_id(bytes).ok_or_else(|| {
            crate::Error::new(
                crate::ErrorKind::UnknownToken,
                format!("{} has no single token for these {} bytes", self.encoding(), bytes.len()),
            )
        })
    }

    /// Every ordinary token (special tokens excluded) as `(id, bytes)`, in id
    /// order: tiktoken's `_mergeable_ranks`, and sorted by bytes its
    /// `token_byte_values()`.
    pub fn ordinary_tokens(&self) -> impl Iterator<Item = (u32, &'static [u8])> + '_ {
        let engine = self.engine;
        (0..engine.ordinary_len() as u32).filter_map(move |id| engine.ordinary_token_bytes(id).map(|b| (id, b)))
    }

    /// Whether `id` is one of the encoding's special tokens.
    pub fn is_special_token(&self, id: u32) -> bool {
        self.engine.is_special(id)
    }
}

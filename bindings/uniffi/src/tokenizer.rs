//! Tokenizers and the model registry.

use std::sync::{Arc, LazyLock};

use crate::{to_json, Result, Text, TokenIds};

/// The shipped encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Encoding {
    /// GPT-4, GPT-3.5-turbo, text-embedding-3 and ada-002.
    Cl100kBase,
    /// GPT-4o, GPT-4.1, GPT-5 and the o-series.
    O200kBase,
    /// Codex-era models.
    P50kBase,
    /// GPT-3 and GPT-2.
    R50kBase,
    /// gpt-oss (o200k_base ranks with the harmony special tokens).
    O200kHarmony,
    /// Legacy edit models (p50k_base ranks with the FIM special tokens).
    P50kEdit,
    /// GPT-2, under tiktoken's name (r50k_base ranks).
    Gpt2,
}

impl From<Encoding> for turnfit::Encoding {
    fn from(e: Encoding) -> Self {
        match e {
            Encoding::Cl100kBase => turnfit::Encoding::Cl100kBase,
            Encoding::O200kBase => turnfit::Encoding::O200kBase,
            Encoding::P50kBase => turnfit::Encoding::P50kBase,
            Encoding::R50kBase => turnfit::Encoding::R50kBase,
            Encoding::O200kHarmony => turnfit::Encoding::O200kHarmony,
            Encoding::P50kEdit => turnfit::Encoding::P50kEdit,
            Encoding::Gpt2 => turnfit::Encoding::Gpt2,
        }
    }
}

impl From<turnfit::Encoding> for Encoding {
    fn from(e: turnfit::Encoding) -> Self {
        match e {
            turnfit::Encoding::Cl100kBase => Encoding::Cl100kBase,
            turnfit::Encoding::O200kBase => Encoding::O200kBase,
            turnfit::Encoding::P50kBase => Encoding::P50kBase,
            turnfit::Encoding::R50kBase => Encoding::R50kBase,
            turnfit::Encoding::O200kHarmony => Encoding::O200kHarmony,
            turnfit::Encoding::P50kEdit => Encoding::P50kEdit,
            turnfit::Encoding::Gpt2 => Encoding::Gpt2,
        }
    }
}

/// Whether special-token text such as `<|endoftext|>` is recognized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum SpecialTokens {
    /// Special-token text is plain text (the default; safe for untrusted text).
    Ordinary,
    /// Every special token of the encoding is recognized as its single id.
    Recognize,
}

impl From<SpecialTokens> for turnfit::SpecialTokens {
    fn from(s: SpecialTokens) -> Self {
        match s {
            SpecialTokens::Ordinary => turnfit::SpecialTokens::Ordinary,
            SpecialTokens::Recognize => turnfit::SpecialTokens::Recognize,
        }
    }
}

/// How `decode` treats token bytes that are not valid UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum DecodeMode {
    /// Replace ill-formed sequences with U+FFFD (tiktoken's `decode`).
    Replace,
    /// Fail with `InvalidUtf8`.
    Strict,
    /// Drop the bytes that are not part of a valid character (Python's
    /// `errors="ignore"`).
    Ignore,
}

impl From<DecodeMode> for turnfit::DecodeMode {
    fn from(m: DecodeMode) -> Self {
        match m {
            DecodeMode::Replace => turnfit::DecodeMode::Replace,
            DecodeMode::Strict => turnfit::DecodeMode::Strict,
            DecodeMode::Ignore => turnfit::DecodeMode::Ignore,
        }
    }
}

/// A set of special-token texts, as tiktoken's `allowed_special` and
/// `disallowed_special` take them.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum SpecialSet {
    /// Every special token of the encoding (tiktoken's `"all"`).
    All,
    /// The texts named; empty means none.
    Only { names: Vec<String> },
}

impl From<SpecialSet> for turnfit::SpecialSet {
    fn from(s: SpecialSet) -> Self {
        match s {
            SpecialSet::All => turnfit::SpecialSet::All,
            SpecialSet::Only { names } => turnfit::SpecialSet::of(names),
        }
    }
}

fn policy(allowed: SpecialSet, disallowed: SpecialSet) -> turnfit::SpecialPolicy {
    turnfit::SpecialPolicy { allowed: allowed.into(), disallowed: disallowed.into() }
}

/// One special token of an encoding.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SpecialToken {
    /// Its text (`<|endoftext|>`).
    pub token: String,
    /// Its id.
    pub id: u32,
}

/// The result of `decodeWithOffsets`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct DecodedWithOffsets {
    /// The decoded text.
    pub text: String,
    /// Per token, where it starts in `text`, in characters (Unicode scalar
    /// values, not UTF-16 units), by tiktoken's rule.
    pub offsets: Vec<u64>,
}

/// Which part of the text `truncate` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum TruncateSide {
    /// The beginning.
    Head,
    /// The end.
    Tail,
    /// Both ends, joined by a marker saying how many tokens were removed.
    Both,
}

/// Where a model profile came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum ModelSource {
    /// The built-in table.
    Builtin,
    /// Registered by the host.
    Host,
    /// Unknown model, counted with the caller's fallback encoding.
    Fallback,
    /// A newer version of a known family, given the family's estimate.
    Family,
}

/// What a model name resolved to.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct ModelInfo {
    /// The name that was asked for.
    pub model: String,
    /// The entry that matched (null for a fallback).
    pub matched: Option<String>,
    /// Where the profile came from.
    pub source: ModelSource,
    /// Vendor family, if known.
    pub family: Option<String>,
    /// Encoding to count with.
    pub encoding: Encoding,
    /// Context window in tokens, if known.
    pub context_window: Option<u64>,
    /// Maximum output tokens, if known.
    pub max_output_tokens: Option<u64>,
    /// Whether counts are exact rather than an estimate.
    pub exact: bool,
}

impl From<turnfit::ModelInfo> for ModelInfo {
    fn from(i: turnfit::ModelInfo) -> Self {
        ModelInfo {
            model: i.model,
            matched: i.matched,
            source: match i.source {
                turnfit::ModelSource::Builtin => ModelSource::Builtin,
                turnfit::ModelSource::Host => ModelSource::Host,
                turnfit::ModelSource::Family => ModelSource::Family,
                _ => ModelSource::Fallback,
            },
            family: i.family,
            encoding: i.encoding.into(),
            context_window: i.context_window,
            max_output_tokens: i.max_output_tokens,
            exact: i.exact,
        }
    }
}

/// A tokenizer's description.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct TokenizerInfo {
    /// The encoding.
    pub encoding: Encoding,
    /// Its name (`o200k_base`).
    pub encoding_name: String,
    /// Whether special tokens are recognized.
    pub special_tokens: SpecialTokens,
    /// Ids in the vocabulary (special tokens included).
    pub vocab_size: u64,
    /// Heap bytes of the encoding's tables (shared by every tokenizer of it).
    pub memory_bytes: u64,
    /// The registry lookup, for tokenizers made from a model name.
    pub model: Option<ModelInfo>,
}

/// The result of `countUntilLimit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct CountLimit {
    /// The exact count when `exceeded` is false; otherwise where counting
    /// stopped (greater than the limit, at most the true count).
    pub tokens: u64,
    /// Whether the text has more tokens than the limit.
    pub exceeded: bool,
}

/// The result of `truncate`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Truncation {
    /// The resulting text.
    pub text: String,
    /// Tokens in `text`, counted again (marker included).
    pub tokens: u64,
    /// Tokens in the input.
    pub original_tokens: u64,
    /// Tokens of the input that are not in `text`.
    pub removed_tokens: u64,
    /// Whether anything was removed.
    pub truncated: bool,
}

fn n(x: usize) -> u64 {
    x as u64
}

fn limit(x: u64) -> usize {
    usize::try_from(x).unwrap_or(usize::MAX)
}

/// An exact tokenizer for one encoding (token-identical to OpenAI's
/// tiktoken). Immutable: share one across any number of threads.
#[derive(uniffi::Object)]
pub struct Tokenizer {
    pub(crate) inner: turnfit::Tokenizer,
    model: Option<turnfit::ModelInfo>,
}

pub(crate) static BUILTIN: LazyLock<turnfit::ModelRegistry> = LazyLock::new(turnfit::ModelRegistry::builtin);

pub(crate) fn registry_or_builtin(r: &Option<Arc<ModelRegistry>>) -> &turnfit::ModelRegistry {
    r.as_deref().map_or(&*BUILTIN, |r| &r.inner)
}

#[uniffi::export]
impl Tokenizer {
    /// A tokenizer for `encoding`. The first one of an encoding in a process
    /// loads its embedded vocabulary; later ones share it.
    #[uniffi::constructor(default(special = None))]
    pub fn new(encoding: Encoding, special: Option<SpecialTokens>) -> Result<Arc<Self>> {
        let inner = turnfit::Tokenizer::new(encoding.into())?;
        Ok(Arc::new(Tokenizer { inner: with_special(inner, special), model: None }))
    }

    /// A tokenizer for an encoding by name (`o200k_base`, `cl100k_base`,
    /// `p50k_base`, `r50k_base`, `gpt2`); an unknown name is
    /// `UnknownEncoding` naming close matches.
    #[uniffi::constructor(default(special = None))]
    pub fn from_name(name: Text, special: Option<SpecialTokens>) -> Result<Arc<Self>> {
        let inner = turnfit::Tokenizer::from_name(&name)?;
        Ok(Arc::new(Tokenizer { inner: with_special(inner, special), model: None }))
    }

    /// A tokenizer for a model name, with the encoding the registry gives
    /// for it (`registry` null: the built-in table). An unknown model is
    /// `UnknownModel` naming close matches, unless `fallback` is given.
    #[uniffi::constructor(default(fallback = None, special = None, registry = None))]
    pub fn for_model(
        model: Text,
        fallback: Option<Encoding>,
        special: Option<SpecialTokens>,
        registry: Option<Arc<ModelRegistry>>,
    ) -> Result<Arc<Self>> {
        let (inner, info) = registry_or_builtin(&registry).tokenizer(&model, fallback.map(Into::into))?;
        Ok(Arc::new(Tokenizer { inner: with_special(inner, special), model: Some(info) }))
    }

    /// The encoding, vocabulary size, memory and model lookup.
    pub fn info(&self) -> TokenizerInfo {
        // Core's shape, converted field by field (the C ABI returns it as JSON).
        let info = self.inner.info(self.model.as_ref());
        TokenizerInfo {
            encoding: info.encoding.into(),
            encoding_name: info.encoding.name().to_owned(),
            special_tokens: match info.special_tokens {
                turnfit::SpecialTokens::Recognize => SpecialTokens::Recognize,
                _ => SpecialTokens::Ordinary,
            },
            vocab_size: n(info.vocab_size),
            memory_bytes: n(info.memory_bytes),
            model: info.model.map(Into::into),
        }
    }

    /// The number of tokens of `text`.
    pub fn count_tokens(&self, text: Text) -> Result<u64> {
        Ok(n(self.inner.count(&text)?))
    }

    /// The number of tokens of UTF-8 `bytes`, read in place (a direct
    /// `ByteBuffer` in Kotlin, `Data` in Swift): no string is built on
    /// either side. Invalid UTF-8 is `InvalidUtf8` with the byte offset.
    pub fn count_tokens_utf8(&self, bytes: &[u8]) -> Result<u64> {
        let text = turnfit::frontend::utf8("bytes", bytes)?;
        Ok(n(self.inner.count(text)?))
    }

    /// Counts, stopping once the count passes `limit` (work proportional to the limit).
    pub fn count_until_limit(&self, text: Text, limit: u64) -> Result<CountLimit> {
        let r = self.inner.count_until_limit(&text, self::limit(limit))?;
        Ok(CountLimit { tokens: n(r.tokens), exceeded: r.exceeded })
    }

    /// The token ids of `text`.
    pub fn encode(&self, text: Text) -> Result<TokenIds> {
        Ok(TokenIds(self.inner.encode(&text)?))
    }

    /// The token ids of UTF-8 `bytes`, read in place.
    pub fn encode_utf8(&self, bytes: &[u8]) -> Result<TokenIds> {
        let text = turnfit::frontend::utf8("bytes", bytes)?;
        Ok(TokenIds(self.inner.encode(text)?))
    }

    /// The text of `ids`. An id outside the vocabulary is `UnknownToken`;
    /// bytes that are not UTF-8 are replaced (`Replace`) or `InvalidUtf8` (`Strict`).
    /// With `Ignore`, those bytes are dropped.
    #[uniffi::method(default(mode = None))]
    pub fn decode(&self, ids: TokenIds, mode: Option<DecodeMode>) -> Result<String> {
        Ok(self.inner.decode(&ids.0, mode.unwrap_or(DecodeMode::Replace).into())?)
    }

    /// The raw bytes of `ids` (may end inside a character).
    pub fn decode_bytes(&self, ids: TokenIds) -> Result<Vec<u8>> {
        Ok(self.inner.decode_bytes(&ids.0)?)
    }

    /// The text of `ids` (`InvalidUtf8` when it is not UTF-8) and each
    /// token's start in characters (tiktoken's `decode_with_offsets`).
    pub fn decode_with_offsets(&self, ids: TokenIds) -> Result<DecodedWithOffsets> {
        let (text, offsets) = self.inner.decode_with_offsets(&ids.0)?;
        Ok(DecodedWithOffsets { text, offsets: offsets.into_iter().map(n).collect() })
    }

    /// The bytes of one token, ordinary or special (tiktoken's
    /// `decode_single_token_bytes`); `UnknownToken` for an id not in the
    /// vocabulary.
    pub fn token_bytes(&self, id: u32) -> Result<Vec<u8>> {
        Ok(self.inner.token_bytes(id)?.to_vec())
    }

    /// The id of the single token whose bytes are exactly `bytes` (tiktoken's
    /// `encode_single_token`); `UnknownToken` when there is none.
    pub fn token_id(&self, bytes: Vec<u8>) -> Result<u32> {
        Ok(self.inner.token_id(&bytes)?)
    }

    /// The ids of any bytes, UTF-8 or not (tiktoken's `_encode_bytes`);
    /// special-token text is ordinary text. For UTF-8 text use `encodeUtf8`.
    pub fn encode_bytes(&self, bytes: Vec<u8>) -> Result<TokenIds> {
        Ok(TokenIds(self.inner.encode_bytes(&bytes)?))
    }

    /// The ids of `text` under tiktoken's special-token rules: `allowed`
    /// become their ids; `disallowed` text fails with `InvalidArgument`,
    /// naming it and its byte offset. The tokenizer's own `special` setting
    /// is not used.
    pub fn encode_special(&self, text: Text, allowed: SpecialSet, disallowed: SpecialSet) -> Result<TokenIds> {
        Ok(TokenIds(self.inner.encode_with(&text, &policy(allowed, disallowed))?))
    }

    /// The number of tokens `encodeSpecial` would return, with the same check.
    pub fn count_tokens_special(&self, text: Text, allowed: SpecialSet, disallowed: SpecialSet) -> Result<u64> {
        Ok(n(self.inner.count_with(&text, &policy(allowed, disallowed))?))
    }

    /// The encoding's special tokens and their ids, in the encoding's order.
    pub fn special_token_list(&self) -> Vec<SpecialToken> {
        self.inner.encoding().special_tokens().iter().map(|&(t, id)| SpecialToken { token: t.to_owned(), id }).collect()
    }

    /// Whether `id` is one of the encoding's special tokens.
    pub fn is_special_token(&self, id: u32) -> bool {
        self.inner.is_special_token(id)
    }

    /// Shortens `text` to at most `max_tokens` tokens on token and character
    /// boundaries. For `Both`, `marker` is a template in which `{removed}`
    /// becomes the number of removed tokens (null: the default marker).
    #[uniffi::method(default(side = None, marker = None))]
    pub fn truncate(
        &self,
        text: Text,
        max_tokens: u64,
        side: Option<TruncateSide>,
        marker: Option<Text>,
    ) -> Result<Truncation> {
        let side = match side {
            Some(TruncateSide::Tail) => turnfit::TruncateSide::Tail,
            Some(TruncateSide::Both) => turnfit::TruncateSide::Both,
            _ => turnfit::TruncateSide::Head,
        };
        let r = self.inner.truncate(&text, limit(max_tokens), side, marker.as_deref())?;
        Ok(Truncation {
            text: r.text,
            tokens: n(r.tokens),
            original_tokens: n(r.original_tokens),
            removed_tokens: n(r.removed_tokens),
            truncated: r.truncated,
        })
    }
}

fn with_special(t: turnfit::Tokenizer, special: Option<SpecialTokens>) -> turnfit::Tokenizer {
    t.with_special_tokens(special.unwrap_or(SpecialTokens::Ordinary).into())
}

/// A set of model profiles: the built-in table plus the host's own entries.
/// Internally synchronized: share one across threads. Registrations on one
/// registry are not visible through another.
#[derive(uniffi::Object)]
pub struct ModelRegistry {
    pub(crate) inner: turnfit::ModelRegistry,
}

#[uniffi::export]
impl ModelRegistry {
    /// A registry holding the built-in table.
    #[uniffi::constructor]
    pub fn new() -> Arc<Self> {
        Arc::new(ModelRegistry { inner: turnfit::ModelRegistry::builtin() })
    }

    /// Adds or replaces profiles: one JSON profile object or an array
    /// (docs/formats.md); returns the number of distinct names registered.
    pub fn register(&self, json: Text) -> Result<u64> {
        Ok(n(self.inner.register_json(&json)?))
    }

    /// Resolves a model name (case-insensitive; exact before the longest
    /// `*` prefix; routing prefixes tried off). Unknown: `UnknownModel`,
    /// unless `fallback` is given.
    #[uniffi::method(default(fallback = None))]
    pub fn lookup(&self, model: Text, fallback: Option<Encoding>) -> Result<ModelInfo> {
        Ok(self.inner.lookup_or(&model, fallback.map(Into::into))?.into())
    }

    /// Every profile as a JSON array, in table order (host entries last).
    pub fn list_json(&self) -> Result<String> {
        to_json(&self.inner.list_json())
    }

    /// Adds or replaces a model known by its own files (issue 50; C's
    /// `turnfit_registry_register_model_files`): `spec_json` is
    /// `{"name", "tokenizer": path, "chat_template"?, "context_window", ...}`
    /// (docs/formats.md, "Model files"). The tokenizer file (an HF
    /// `tokenizer.json`, a GGUF, a tiktoken or Tekken file) and the chat
    /// template beside or inside it are read once; every `fit`, turn and
    /// window using this registry for that name then reports the
    /// template's own count (`exact`), what an on-device runtime
    /// (llama.cpp, MLC, Ollama) is given. Returns the entry. A file that
    /// cannot be read is `Io`; a template that cannot be rendered
    /// `InvalidArgument` naming its construct.
    pub fn register_model_files(&self, spec_json: Text) -> Result<ModelInfo> {
        Ok(turnfit::template::register_model_files_json(&self.inner, &spec_json)?.into())
    }

    /// Adds or replaces one model profile (one JSON profile object; an
    /// array is `InvalidJson`: a counter goes with one model) counted by
    /// the host's own `counter`, for a model whose tokenizer is not public
    /// (issue 34; C's `turnfit_registry_register_counter`). Every window,
    /// `fit`, turn and `countConversation` using this registry for a model
    /// resolving to this entry counts text with it, reported as not exact;
    /// framing and cuts stay the profile's `encoding`'s. The core refuses a
    /// count above the text's bytes plus 64 and a counter re-entering its
    /// counting, and turns the counter's exceptions into `InvalidArgument`
    /// naming the model (see [`HostTokenCounter`]).
    pub fn register_with_counter(&self, profile_json: Text, counter: Arc<dyn HostTokenCounter>) -> Result<()> {
        let count = move |text: &str| -> std::result::Result<usize, String> {
            match counter.count(text.to_owned()) {
                // Beyond usize is refused by the core's bytes+64 check.
                Ok(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
                Err(CounterError::Failed { reason }) => Err(reason),
            }
        };
        Ok(self.inner.register_json_with_counter(&profile_json, count)?)
    }
}

/// A host's own token counter (a Kotlin interface, a Swift protocol), for
/// `ModelRegistry.registerWithCounter`. It is called on the thread of any
/// call counting for its model, possibly on several threads at once, while
/// turnfit holds the window or turn it counts for: it must be thread-safe
/// and must not call back into turnfit (a window it counts for refuses the
/// call with `InvalidArgument`, and so does the core's counting).
#[uniffi::export(with_foreign)]
pub trait HostTokenCounter: Send + Sync {
    /// The number of tokens of `text`. Throwing (`CounterException.Failed`,
    /// or any other exception) fails the call that was counting with
    /// `InvalidArgument`: "the host counter for '<model>' failed: <reason>".
    fn count(&self, text: String) -> std::result::Result<u64, CounterError>;
}

/// A host counter's failure (`CounterException` in Kotlin, `CounterError`
/// in Swift): thrown by the host, it becomes the core's error naming the
/// model and the reason.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Error)]
pub enum CounterError {
    /// The counter could not count; `reason` says why.
    Failed {
        /// Why, in the host's words.
        reason: String,
    },
}

impl std::fmt::Display for CounterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CounterError::Failed { reason } => f.write_str(reason),
        }
    }
}

impl std::error::Error for CounterError {}

/// Any other exception a counter throws (and a failure to convert its
/// result) arrives here from uniffi's generated code: kept as its text
/// (`java.lang.IllegalStateException: ...`), never a panic.
impl From<uniffi::UnexpectedUniFFICallbackError> for CounterError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        CounterError::Failed { reason: e.reason }
    }
}

/// The encoding of an encoding name (`UnknownEncoding` when unknown).
#[uniffi::export]
pub fn encoding_from_name(name: Text) -> Result<Encoding> {
    Ok(turnfit::Encoding::from_name(&name)?.into())
}

/// The name of an encoding (`o200k_base`).
#[uniffi::export]
pub fn encoding_name(encoding: Encoding) -> String {
    turnfit::Encoding::from(encoding).name().to_owned()
}

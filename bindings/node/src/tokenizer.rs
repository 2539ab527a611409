//! `NativeTokenizer`: counting, encoding, decoding, truncation, assembly.
//!
//! Each method has a `...Bytes` twin that takes a `Uint8Array` (checked as
//! UTF-8 by the core, zero-copy). JS strings arrive as UTF-8 through
//! `napi_get_value_string_utf8`, which writes a lone surrogate as U+FFFD,
//! exactly what tiktoken does with one.

use napi::bindgen_prelude::{AbortSignal, AsyncTask, Uint32Array, Uint8Array};
use napi::{Env, Task};
use napi_derive::napi;

use turnfit::{DecodeMode, Encoding, ModelInfo, SpecialPolicy, SpecialTokens, Tokenizer, TruncateSide};

use crate::error::{guard, json, not_counting, to_usize, utf8};
use crate::registry::registry;
use crate::text::JsText;

pub(crate) fn special(recognize: bool) -> SpecialTokens {
    if recognize {
        SpecialTokens::Recognize
    } else {
        SpecialTokens::Ordinary
    }
}

/// An exact tokenizer. Immutable; shareable by every thread and Worker.
#[napi]
pub struct NativeTokenizer {
    inner: Tokenizer,
    model: Option<ModelInfo>,
}

/// `countUntilLimit`'s result.
#[napi(object)]
pub struct CountLimitResult {
    /// The exact count, or where counting stopped (> limit) when exceeded.
    pub tokens: u32,
    /// Whether the text has more tokens than the limit.
    pub exceeded: bool,
}

/// `decodeWithOffsets`'s result.
#[napi(object)]
pub struct DecodedWithOffsets {
    pub text: String,
    /// Per token, where it starts in `text`, in characters (code points).
    pub offsets: Vec<u32>,
}

/// One special token of an encoding.
#[napi(object)]
pub struct SpecialTokenEntry {
    pub token: String,
    pub id: u32,
}

/// `truncate`'s result.
#[napi(object)]
pub struct TruncationResult {
    pub text: String,
    pub tokens: u32,
    pub original_tokens: u32,
    pub removed_tokens: u32,
    pub truncated: bool,
}

fn side(s: &str) -> turnfit::Result<TruncateSide> {
    match s {
        "head" => Ok(TruncateSide::Head),
        "tail" => Ok(TruncateSide::Tail),
        "both" => Ok(TruncateSide::Both),
        other => Err(turnfit::Error::new(
            turnfit::ErrorKind::InvalidArgument,
            format!("side {other:?} is not one of \"head\", \"tail\", \"both\""),
        )),
    }
}

fn n32(n: usize) -> u32 {
    // Text is at most 64 MiB (core limit), so counts fit in u32.
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl NativeTokenizer {
    fn truncate_str(
        &self,
        text: &str,
        max_tokens: f64,
        side_name: &str,
        marker: Option<&str>,
    ) -> turnfit::Result<TruncationResult> {
        let r = self.inner.truncate(text, to_usize(max_tokens), side(side_name)?, marker)?;
        Ok(TruncationResult {
            text: r.text,
            tokens: n32(r.tokens),
            original_tokens: n32(r.original_tokens),
            removed_tokens: n32(r.removed_tokens),
            truncated: r.truncated,
        })
    }
}

#[napi]
impl NativeTokenizer {
    /// A tokenizer for an encoding name (`o200k_base`, ...).
    #[napi(factory)]
    pub fn from_encoding(name: String, recognize_special: bool) -> napi::Result<Self> {
        guard("Tokenizer", || {
            Ok(NativeTokenizer {
                inner: Tokenizer::from_name(&name)?.with_special_tokens(special(recognize_special)),
                model: None,
            })
        })
    }

    /// A tokenizer for a model name through the registry (built-in and
    /// registered models, src/registry.rs); with a
    /// fallback encoding an unknown model counts with it (`exact: false`).
    #[napi(factory)]
    pub fn for_model(model: String, fallback: Option<String>, recognize_special: bool) -> napi::Result<Self> {
        guard("Tokenizer.forModel", || {
            let fallback = fallback.as_deref().map(Encoding::from_name).transpose()?;
            let (t, info) = registry().tokenizer(&model, fallback)?;
            Ok(NativeTokenizer { inner: t.with_special_tokens(special(recognize_special)), model: Some(info) })
        })
    }

    /// `{encoding, special_tokens, vocab_size, memory_bytes, model}` as JSON.
    #[napi]
    pub fn info_json(&self) -> napi::Result<String> {
        guard("info", || json(&self.inner.info(self.model.as_ref())))
    }

    /// This tokenizer as a number for [`count_text`]: its encoding's place
    /// in [`Encoding::ALL`] times two, plus one when special-token text is
    /// recognized. The facade reads it once per `Tokenizer`.
    #[napi]
    pub fn handle(&self) -> u32 {
        let at = Encoding::ALL.iter().position(|&e| e == self.inner.encoding()).unwrap_or(0);
        n32(at) * 2 + u32::from(self.inner.special_tokens() == SpecialTokens::Recognize)
    }

    #[napi]
    pub fn count_bytes(&self, bytes: &[u8]) -> napi::Result<u32> {
        guard("countTokens", || self.inner.count(utf8("text", bytes)?).map(n32))
    }

    #[napi]
    pub fn count_until_limit(
        &self,
        #[napi(ts_arg_type = "string")] text: JsText,
        limit: f64,
    ) -> napi::Result<CountLimitResult> {
        guard("countUntilLimit", || {
            let r = self.inner.count_until_limit(&text, to_usize(limit))?;
            Ok(CountLimitResult { tokens: n32(r.tokens), exceeded: r.exceeded })
        })
    }

    #[napi]
    pub fn count_until_limit_bytes(&self, bytes: &[u8], limit: f64) -> napi::Result<CountLimitResult> {
        guard("countUntilLimit", || {
            let r = self.inner.count_until_limit(utf8("text", bytes)?, to_usize(limit))?;
            Ok(CountLimitResult { tokens: n32(r.tokens), exceeded: r.exceeded })
        })
    }

    #[napi]
    pub fn encode(&self, #[napi(ts_arg_type = "string")] text: JsText) -> napi::Result<Uint32Array> {
        guard("encode", || self.inner.encode(&text).map(Uint32Array::new))
    }

    #[napi]
    pub fn encode_bytes(&self, bytes: &[u8]) -> napi::Result<Uint32Array> {
        guard("encode", || self.inner.encode(utf8("text", bytes)?).map(Uint32Array::new))
    }

    /// Decodes ids; `mode` is `replace` (U+FFFD), `strict` (`invalid_utf8`)
    /// or `ignore` (bytes that are not UTF-8 dropped), as the core names them.
    #[napi]
    pub fn decode(&self, ids: &[u32], mode: String) -> napi::Result<String> {
        guard("decode", || self.inner.decode(ids, DecodeMode::from_name(&mode)?))
    }

    /// The text of `ids` and each token's start in characters (Unicode
    /// scalar values), tiktoken's `decode_with_offsets`.
    #[napi]
    pub fn decode_with_offsets(&self, ids: &[u32]) -> napi::Result<DecodedWithOffsets> {
        guard("decodeWithOffsets", || {
            let (text, offsets) = self.inner.decode_with_offsets(ids)?;
            Ok(DecodedWithOffsets { text, offsets: offsets.into_iter().map(n32).collect() })
        })
    }

    /// The bytes of one token, ordinary or special (`unknown_token` otherwise).
    #[napi]
    pub fn token_bytes(&self, id: u32) -> napi::Result<Uint8Array> {
        guard("tokenBytes", || self.inner.token_bytes(id).map(|b| Uint8Array::new(b.to_vec())))
    }

    /// The id of the single token whose bytes are exactly `bytes`
    /// (`unknown_token` when there is none).
    #[napi]
    pub fn token_id(&self, bytes: &[u8]) -> napi::Result<u32> {
        guard("tokenId", || self.inner.token_id(bytes))
    }

    /// [`Self::token_id`] of a string's UTF-8.
    #[napi]
    pub fn token_id_text(&self, #[napi(ts_arg_type = "string")] text: JsText) -> napi::Result<u32> {
        guard("tokenId", || self.inner.token_id(text.as_bytes()))
    }

    /// The ids of any bytes, UTF-8 or not (tiktoken's `_encode_bytes`);
    /// special-token text is ordinary text.
    #[napi]
    pub fn encode_raw_bytes(&self, bytes: &[u8]) -> napi::Result<Uint32Array> {
        guard("encodeBytes", || self.inner.encode_bytes(bytes).map(Uint32Array::new))
    }

    /// Encodes with tiktoken's `allowed_special` / `disallowed_special`,
    /// given as the core's policy JSON (the facade builds it).
    #[napi]
    pub fn encode_with(&self, text: TextArg, policy: String) -> napi::Result<Uint32Array> {
        guard("encode", || {
            let policy = SpecialPolicy::from_json(&policy)?;
            self.inner.encode_with(utf8("text", &text.0)?, &policy).map(Uint32Array::new)
        })
    }

    /// Counts with the same policy and check as [`Self::encode_with`].
    #[napi]
    pub fn count_with(&self, text: TextArg, policy: String) -> napi::Result<u32> {
        guard("countTokens", || {
            let policy = SpecialPolicy::from_json(&policy)?;
            self.inner.count_with(utf8("text", &text.0)?, &policy).map(n32)
        })
    }

    /// The encoding's special tokens with their ids, in the encoding's order.
    #[napi]
    pub fn special_token_list(&self) -> Vec<SpecialTokenEntry> {
        self.inner
            .encoding()
            .special_tokens()
            .iter()
            .map(|&(token, id)| SpecialTokenEntry { token: token.to_owned(), id })
            .collect()
    }

    /// Whether `id` is one of the encoding's special tokens.
    #[napi]
    pub fn is_special_token(&self, id: u32) -> bool {
        self.inner.is_special_token(id)
    }

    /// Decodes ids to their raw bytes (no UTF-8 check).
    #[napi]
    pub fn decode_bytes(&self, ids: &[u32]) -> napi::Result<Uint8Array> {
        guard("decodeBytes", || self.inner.decode_bytes(ids).map(Uint8Array::new))
    }

    /// `marker`: `None` is the core's default marker; `Some("")` is no marker.
    #[napi]
    pub fn truncate(
        &self,
        #[napi(ts_arg_type = "string")] text: JsText,
        max_tokens: f64,
        side: String,
        marker: Option<String>,
    ) -> napi::Result<TruncationResult> {
        guard("truncate", || self.truncate_str(&text, max_tokens, &side, marker.as_deref()))
    }

    #[napi]
    pub fn truncate_bytes(
        &self,
        bytes: &[u8],
        max_tokens: f64,
        side: String,
        marker: Option<String>,
    ) -> napi::Result<TruncationResult> {
        guard("truncate", || self.truncate_str(utf8("text", bytes)?, max_tokens, &side, marker.as_deref()))
    }

    /// Prompt assembly under a budget (docs/formats.md): JSON in, JSON out.
    #[napi]
    pub fn assemble_json(&self, request: String) -> napi::Result<String> {
        guard("assemble", || turnfit::assemble::assemble_json(&request, &self.inner))
    }

    #[napi(ts_return_type = "Promise<number>")]
    pub fn count_async(&self, text: TextArg, signal: Option<AbortSignal>) -> napi::Result<AsyncTask<TokTask>> {
        not_counting("countTokensAsync")?;
        Ok(AsyncTask::with_optional_signal(TokTask { tok: self.inner, text: text.0, op: TokOp::Count }, signal))
    }

    #[napi(ts_return_type = "Promise<Uint32Array>")]
    pub fn encode_async(&self, text: TextArg, signal: Option<AbortSignal>) -> napi::Result<AsyncTask<TokTask>> {
        not_counting("encodeAsync")?;
        Ok(AsyncTask::with_optional_signal(TokTask { tok: self.inner, text: text.0, op: TokOp::Encode }, signal))
    }
}

/// Text for an async task, owned so it can cross to the libuv pool: a JS
/// string (UTF-8, lone surrogates as U+FFFD) or a `Uint8Array` (copied).
pub struct TextArg(Vec<u8>);

impl napi::bindgen_prelude::TypeName for TextArg {
    fn type_name() -> &'static str {
        "string | Uint8Array"
    }
    fn value_type() -> napi::ValueType {
        napi::ValueType::Unknown
    }
}

impl napi::bindgen_prelude::ValidateNapiValue for TextArg {}

impl napi::bindgen_prelude::FromNapiValue for TextArg {
    #[allow(unsafe_code)]
    unsafe fn from_napi_value(env: napi::sys::napi_env, value: napi::sys::napi_value) -> napi::Result<Self> {
        // SAFETY: `env` and `value` come from napi for this call.
        unsafe {
            if let Ok(s) = String::from_napi_value(env, value) {
                return Ok(TextArg(s.into_bytes()));
            }
            let b = Uint8Array::from_napi_value(env, value)?;
            Ok(TextArg(b.to_vec()))
        }
    }
}

pub enum TokOp {
    Count,
    Encode,
}

pub enum TokOut {
    Count(u32),
    Ids(Vec<u32>),
}

/// `countAsync` / `encodeAsync` on the libuv pool.
pub struct TokTask {
    tok: Tokenizer,
    text: Vec<u8>,
    op: TokOp,
}

impl Task for TokTask {
    type Output = TokOut;
    type JsValue = napi::bindgen_prelude::Either<u32, Uint32Array>;

    fn compute(&mut self) -> napi::Result<TokOut> {
        guard("async", || {
            let text = utf8("text", &self.text)?;
            Ok(match self.op {
                TokOp::Count => TokOut::Count(n32(self.tok.count(text)?)),
                TokOp::Encode => TokOut::Ids(self.tok.encode(text)?),
            })
        })
    }

    fn resolve(&mut self, _env: Env, out: TokOut) -> napi::Result<Self::JsValue> {
        Ok(match out {
            TokOut::Count(n) => napi::bindgen_prelude::Either::A(n),
            TokOut::Ids(ids) => napi::bindgen_prelude::Either::B(Uint32Array::new(ids)),
        })
    }
}

/// Exact prompt tokens of a conversation (OpenAI or Anthropic shape) for a
/// model, with the model's chat framing.
#[napi]
pub fn count_conversation_json(model: String, conversation: String) -> napi::Result<u32> {
    guard("countConversation", || {
        let (acct, _) = turnfit::window::Accountant::for_model(registry(), &model)?;
        let c = turnfit::chat::Conversation::parse(&conversation, None)?;
        acct.conversation(&c).map(n32)
    })
}

/// The registry's entry for `model` (built-in or registered) as JSON.
#[napi]
pub fn lookup_model_json(model: String) -> napi::Result<String> {
    guard("lookupModel", || json(&registry().lookup(&model)?))
}

/// `countTokens` of a JS string, the tokenizer given by
/// [`NativeTokenizer::handle`]: a free function, not a method, because a
/// method's receiver costs more than a whole cached count. napi-rs unwraps
/// `this` (a private-property lookup), checks its type tag (another) and
/// registers the borrow (a global lock and map) on every call: about 0.2 µs,
/// 15% of counting a 20 KB text the core's text cache answers, and half of
/// counting `'hello'` (docs/benchmarks.md, "The two thin rows"). A handle is
/// a number checked here, so a wrong one is an error, never a bad pointer.
#[napi]
pub fn count_text(handle: u32, #[napi(ts_arg_type = "string")] text: JsText) -> napi::Result<u32> {
    guard("countTokens", || {
        let encoding = Encoding::ALL.get((handle / 2) as usize).copied().ok_or_else(|| {
            turnfit::Error::new(turnfit::ErrorKind::InvalidArgument, format!("no tokenizer has handle {handle}"))
        })?;
        let t = Tokenizer::new(encoding)?.with_special_tokens(special(handle % 2 == 1));
        t.count(&text).map(n32)
    })
}

/// The core version (Cargo.toml).
#[napi]
pub fn core_version() -> String {
    turnfit::VERSION.to_owned()
}

/// Benchmark floor: converts a JS string to UTF-8 exactly as `countTokens`
/// does and returns its byte length, so the cost of the napi string
/// conversion can be measured apart from tokenization (bench/node).
#[napi(js_name = "__stringFloor")]
pub fn string_floor(#[napi(ts_arg_type = "string")] text: JsText) -> u32 {
    u32::try_from(text.len()).unwrap_or(u32::MAX)
}

/// Benchmark hook: empties this thread's counting caches, so bench/node can
/// time turnfit on a text it has not seen, beside peers whose caches it
/// clears the same way.
#[napi(js_name = "__clearTokenCaches")]
pub fn clear_token_caches() {
    turnfit::tokens::clear_thread_caches();
}

/// The same floor through napi-rs's own `String` conversion (two walks of the
/// string and a zero-filled buffer), kept so bench/node can show what
/// [`JsText`] saves, side by side.
#[napi(js_name = "__stringFloorNapi")]
pub fn string_floor_napi(text: String) -> u32 {
    u32::try_from(text.len()).unwrap_or(u32::MAX)
}

//! `NativeFileTokenizer`: a tokenizer loaded from a model's own file (an HF
//! `tokenizer.json`, a tiktoken-format file with a split pattern, or a
//! GGUF), the core's `pipeline::FileTokenizer`. The facade (index.js,
//! `FileTokenizer`) checks arguments and converts; this only calls the core.

use napi::bindgen_prelude::{Uint32Array, Uint8Array};
use napi_derive::napi;

use turnfit::pipeline::{FileTokenizer, LoadOptions};

use crate::error::{guard, json};
use crate::text::JsText;
use crate::tokenizer::special;

/// A tokenizer loaded from a file. Immutable; shareable by every thread and Worker.
#[napi]
pub struct NativeFileTokenizer {
    inner: FileTokenizer,
}

#[napi]
impl NativeFileTokenizer {
    /// Loads the file at `path`.
    #[napi(factory)]
    pub fn open(path: String, pattern: Option<String>, recognize_special: bool) -> napi::Result<Self> {
        guard("FileTokenizer", || {
            let t = FileTokenizer::from_file_with(&path, &LoadOptions::with_pattern(pattern))?;
            Ok(NativeFileTokenizer { inner: t.with_special_tokens(special(recognize_special)) })
        })
    }

    /// Loads a file's bytes; `name` stands for the file in errors.
    #[napi(factory)]
    pub fn from_bytes(
        bytes: Uint8Array,
        name: String,
        pattern: Option<String>,
        recognize_special: bool,
    ) -> napi::Result<Self> {
        guard("FileTokenizer.fromBytes", || {
            let t = FileTokenizer::from_bytes_with(&bytes, &name, &LoadOptions::with_pattern(pattern))?;
            Ok(NativeFileTokenizer { inner: t.with_special_tokens(special(recognize_special)) })
        })
    }

    /// The description as JSON (schemas/file-tokenizer-info.json).
    #[napi]
    pub fn info_json(&self) -> napi::Result<String> {
        guard("info", || json(&self.inner.describe()))
    }

    /// The number of tokens of `text`, without BOS/EOS.
    #[napi]
    pub fn count(&self, #[napi(ts_arg_type = "string")] text: JsText) -> napi::Result<u32> {
        guard("countTokens", || self.inner.count(&text).map(|n| u32::try_from(n).unwrap_or(u32::MAX)))
    }

    /// The ids of `text`, with the file's BOS/EOS when `add_special`.
    #[napi]
    pub fn encode(&self, #[napi(ts_arg_type = "string")] text: JsText, add_special: bool) -> napi::Result<Uint32Array> {
        guard("encode", || self.inner.encode_with_special(&text, add_special).map(Uint32Array::new))
    }

    /// The text of `ids` through the file's decoder.
    #[napi]
    pub fn decode(&self, ids: &[u32]) -> napi::Result<String> {
        guard("decode", || self.inner.decode(ids))
    }
}

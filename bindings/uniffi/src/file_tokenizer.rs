//! `FileTokenizer`: a tokenizer loaded from a model's own file (an HF
//! `tokenizer.json`, a tiktoken-format file with a split pattern, or a
//! GGUF), the core's `pipeline::FileTokenizer`: for on-device models whose
//! tokenizer file ships with the app.

use std::sync::Arc;

use turnfit::pipeline::LoadOptions;

use crate::tokenizer::SpecialTokens;
use crate::{Result, Text, TokenIds};

/// A file tokenizer's description.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct FileTokenizerInfo {
    /// The file it came from (its path, or the name given with its bytes).
    pub name: String,
    /// One past the highest id, added tokens included.
    pub vocab_size: u64,
    /// Whether special-token text in the input is recognized.
    pub special_tokens: SpecialTokens,
    /// Whether `encode(text, addSpecial = true)` can add the file's BOS/EOS.
    pub add_special: bool,
    /// GGUF `<architecture>.context_length`.
    pub context_length: Option<u64>,
    /// GGUF `tokenizer.ggml.pre`.
    pub pre: Option<String>,
    /// Whether the file carries a chat template.
    pub has_chat_template: bool,
}

/// A tokenizer loaded from a model's file; ids equal HF `tokenizers`'
/// (llama.cpp's for a GGUF). Immutable: share one across any number of threads.
#[derive(uniffi::Object)]
pub struct FileTokenizer {
    inner: turnfit::pipeline::FileTokenizer,
}

fn options(pattern: Option<Text>) -> LoadOptions {
    LoadOptions::with_pattern(pattern.map(|p| p.0))
}

fn wrap(t: turnfit::pipeline::FileTokenizer, special: Option<SpecialTokens>) -> Arc<FileTokenizer> {
    Arc::new(FileTokenizer { inner: t.with_special_tokens(special.unwrap_or(SpecialTokens::Ordinary).into()) })
}

#[uniffi::export]
impl FileTokenizer {
    /// Loads the file at `path`. `pattern` gives a tiktoken-format file its
    /// split rules (a preset such as `llama3`, or a regex).
    #[uniffi::constructor(default(pattern = None, special = None))]
    pub fn from_file(path: Text, pattern: Option<Text>, special: Option<SpecialTokens>) -> Result<Arc<Self>> {
        let t = turnfit::pipeline::FileTokenizer::from_file_with(&*path, &options(pattern))?;
        Ok(wrap(t, special))
    }

    /// Loads a file's bytes (an app asset, say); `name` stands for the file in errors.
    #[uniffi::constructor(default(pattern = None, special = None))]
    pub fn from_bytes(
        bytes: Vec<u8>,
        name: Text,
        pattern: Option<Text>,
        special: Option<SpecialTokens>,
    ) -> Result<Arc<Self>> {
        let t = turnfit::pipeline::FileTokenizer::from_bytes_with(&bytes, &name, &options(pattern))?;
        Ok(wrap(t, special))
    }

    /// The file, vocabulary size and what the file says besides its tokens.
    pub fn info(&self) -> FileTokenizerInfo {
        let i = self.inner.describe();
        FileTokenizerInfo {
            name: i.name,
            vocab_size: i.vocab_size as u64,
            special_tokens: match i.special_tokens {
                turnfit::SpecialTokens::Recognize => SpecialTokens::Recognize,
                _ => SpecialTokens::Ordinary,
            },
            add_special: i.add_special,
            context_length: i.context_length,
            pre: i.pre,
            has_chat_template: i.has_chat_template,
        }
    }

    /// The number of tokens of `text`, without BOS/EOS.
    pub fn count_tokens(&self, text: Text) -> Result<u64> {
        Ok(self.inner.count(&text)? as u64)
    }

    /// The ids of `text`; with `add_special`, the file's BOS/EOS around them.
    #[uniffi::method(default(add_special = false))]
    pub fn encode(&self, text: Text, add_special: bool) -> Result<TokenIds> {
        Ok(TokenIds(self.inner.encode_with_special(&text, add_special)?))
    }

    /// The text of `ids` through the file's decoder.
    pub fn decode(&self, ids: TokenIds) -> Result<String> {
        Ok(self.inner.decode(&ids.0)?)
    }
}

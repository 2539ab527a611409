//! What a tokenizer loaded from a file reports about itself
//! (`turnfit_file_tokenizer_info`, the bindings' `info()`): one serde type,
//! so the C ABI and every binding give the same fields.

use crate::tokens::SpecialTokens;

use super::FileTokenizer;

/// A file tokenizer's description (`schemas/file-tokenizer-info.json`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileTokenizerInfo {
    /// The file it was loaded from: its path, or the name given with its bytes.
    pub name: String,
    /// One past the highest id, added tokens included.
    pub vocab_size: usize,
    /// Whether special-token text in the input becomes the token's id
    /// (`recognize`, HF `tokenizers`' default) or is counted as the ordinary
    /// text it is (`ordinary`: the safe choice for untrusted text, and the C
    /// ABI's and the bindings' default, as for the OpenAI encodings).
    pub special_tokens: SpecialTokens,
    /// Whether `add_special` can put the file's BOS/EOS around a text (the
    /// file's post-processor is one turnfit applies exactly).
    pub add_special: bool,
    /// The model's context length, when the file says (GGUF
    /// `<architecture>.context_length`); the window a server allocates may be smaller.
    pub context_length: Option<u64>,
    /// llama.cpp's pre-tokenizer name (GGUF `tokenizer.ggml.pre`).
    pub pre: Option<String>,
    /// Whether the file carries a chat template (GGUF `tokenizer.chat_template`).
    pub has_chat_template: bool,
}

impl FileTokenizer {
    /// The tokenizer's description.
    pub fn describe(&self) -> FileTokenizerInfo {
        FileTokenizerInfo {
            name: self.name.clone(),
            vocab_size: self.vocab_size,
            special_tokens: if self.special_as_text { SpecialTokens::Ordinary } else { SpecialTokens::Recognize },
            add_special: self.post.is_ok(),
            context_length: self.info.context_length,
            pre: self.info.pre.clone(),
            has_chat_template: self.info.chat_template.is_some(),
        }
    }

    /// The same tokenizer with special-token text recognized or counted as
    /// ordinary text: the [`SpecialTokens`] spelling of
    /// [`FileTokenizer::with_special_text`], as the OpenAI tokenizers take it.
    pub fn with_special_tokens(self, special: SpecialTokens) -> FileTokenizer {
        self.with_special_text(special == SpecialTokens::Ordinary)
    }
}

//! `--tokenizer FILE` for `count`, `encode` and `decode`: a tokenizer
//! loaded from a model's own file (core's `pipeline::FileTokenizer`: an HF
//! tokenizer.json, a tiktoken-format file with `--pattern`, or a GGUF).
//! Every rule is the core's; this file parses and prints.

use turnfit::pipeline::{FileTokenizer, LoadOptions};

use crate::Fatal;

/// The options every command with `--tokenizer` shares.
#[derive(clap::Args, Default)]
pub(crate) struct FileArgs {
    /// Tokenize with the tokenizer in FILE (an HF tokenizer.json, a Mistral
    /// Tekken file, a tiktoken-format file with --pattern, or a GGUF model
    /// file, of which only the metadata is read) instead of an OpenAI encoding. Special-token text
    /// is recognized, as HF tokenizers does; no BOS/EOS unless --add-special.
    #[arg(long, value_name = "FILE")]
    pub(crate) tokenizer: Option<String>,
    /// Split rules for a tiktoken-format file: llama3, qwen2, gpt-4o,
    /// deepseek-v3, ... (llama.cpp's names; each brings its normalization and
    /// special tokens) or a regex.
    #[arg(long, value_name = "NAME|REGEX", requires = "tokenizer")]
    pub(crate) pattern: Option<String>,
    /// Add the special tokens the file puts around a text (BOS/EOS).
    #[arg(long, requires = "tokenizer")]
    pub(crate) add_special: bool,
}

impl FileArgs {
    /// The tokenizer, when `--tokenizer` was given. Never dropped: the
    /// process exits after one command, and freeing a 150,000-token
    /// vocabulary piece by piece took a fifth of `count`'s time.
    pub(crate) fn load(&self) -> Result<Option<std::mem::ManuallyDrop<FileTokenizer>>, Fatal> {
        let Some(path) = &self.tokenizer else { return Ok(None) };
        let options = LoadOptions::with_pattern(self.pattern.clone());
        Ok(Some(std::mem::ManuallyDrop::new(FileTokenizer::from_file_with(path, &options)?)))
    }
}

//! `--tokenizer FILE` (or `--ollama-model`, `--hf-model`) for `count` and
//! `encode` (`decode` has its own `--tokenizer`): a tokenizer
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
    #[arg(long, value_name = "FILE", group = crate::model_files::GROUP)]
    pub(crate) tokenizer: Option<String>,
    #[command(flatten)]
    pub(crate) locate: crate::model_files::LocateArgs,
    /// Split rules for a tiktoken-format file: llama3, qwen2, gpt-4o,
    /// deepseek-v3, ... (llama.cpp's names; each brings its normalization and
    /// special tokens) or a regex.
    #[arg(long, value_name = "NAME|REGEX", requires = crate::model_files::GROUP)]
    pub(crate) pattern: Option<String>,
    /// Add the special tokens the file puts around a text (BOS/EOS).
    #[arg(long, requires = crate::model_files::GROUP)]
    pub(crate) add_special: bool,
}

impl FileArgs {
    /// The tokenizer file: --tokenizer, or the one --ollama-model or
    /// --hf-model finds.
    pub(crate) fn path(&self) -> Result<Option<String>, Fatal> {
        self.locate.tokenizer(self.tokenizer.as_deref())
    }

    /// The tokenizer, when `--tokenizer` was given. Never dropped: the
    /// process exits after one command, and freeing a 150,000-token
    /// vocabulary piece by piece took a fifth of `count`'s time.
    pub(crate) fn load(&self) -> Result<Option<std::mem::ManuallyDrop<FileTokenizer>>, Fatal> {
        let Some(path) = self.path()? else { return Ok(None) };
        self.load_path(&path).map(Some)
    }

    /// The tokenizer at `path` (found by [`FileArgs::path`]).
    pub(crate) fn load_path(&self, path: &str) -> Result<std::mem::ManuallyDrop<FileTokenizer>, Fatal> {
        let options = LoadOptions::with_pattern(self.pattern.clone());
        Ok(std::mem::ManuallyDrop::new(FileTokenizer::from_file_with(path, &options)?))
    }
}

//! `register_model_files` (issue 50): a model known by its own files
//! becomes a registry entry, so every fit, turn and window that names it
//! counts as its server does, in every binding (one C ABI function,
//! `turnfit_registry_register_model_files`, takes this spec as JSON).

use std::sync::Arc;

use serde::Deserialize;

use super::{ModelTemplate, PromptCounter, RenderOptions, TemplateModel};
use crate::locate::{ModelLocation, ModelPlace};
use crate::models::ModelRegistry;
use crate::pipeline::{FileTokenizer, LoadOptions};
use crate::{CustomModel, Error, ErrorKind, Result};

/// A model by its files: what `register_model_files` takes.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFiles {
    /// The name hosts use for it (`qwen3-local`); not a built-in model's.
    pub name: String,
    /// Path of its tokenizer file: an HF `tokenizer.json` (its chat
    /// template beside it: `chat_template.jinja` or `tokenizer_config.json`)
    /// or a GGUF (its `tokenizer.chat_template`). One of `tokenizer`,
    /// `ollama_model` and `hf_model` names the files.
    #[serde(default)]
    pub tokenizer: String,
    /// An Ollama model name (`qwen3:8b`): its GGUF found in the Ollama
    /// store (see [`crate::locate::ollama`]).
    #[serde(default)]
    pub ollama_model: Option<String>,
    /// The Ollama store folder [default: `$OLLAMA_MODELS`, else
    /// `~/.ollama/models`].
    #[serde(default)]
    pub ollama_models: Option<String>,
    /// A Hugging Face repo id (`Org/Name`, `Org/Name@revision`) in the hub
    /// cache, or a cache repo, snapshot or model folder (see
    /// [`crate::locate::hf`]).
    #[serde(default)]
    pub hf_model: Option<String>,
    /// The hub cache folder [default: `$HF_HUB_CACHE`, else
    /// `$HF_HOME/hub`, else `~/.cache/huggingface/hub`].
    #[serde(default)]
    pub hf_cache: Option<String>,
    /// The chat template's Jinja source, instead of the one found beside
    /// the tokenizer.
    #[serde(default)]
    pub chat_template: Option<String>,
    /// The window the server allocated: Ollama's `num_ctx`, llama.cpp's
    /// `n_ctx`, vLLM's `max_model_len`.
    pub context_window: usize,
    /// The most the reply may take, if the server caps it.
    #[serde(default)]
    pub max_output_tokens: Option<usize>,
    /// Extra template variables (`{"enable_thinking": false}`).
    #[serde(default)]
    pub template_kwargs: serde_json::Map<String, serde_json::Value>,
    /// Split rules for a tiktoken-format tokenizer file (as
    /// `turnfit_tokenizer_from_file`'s `pattern`).
    #[serde(default)]
    pub pattern: Option<String>,
}

/// Registers `files` in `registry` (replacing a host entry of that name):
/// loads the tokenizer, finds the template, renders it once to measure its
/// framing (so a template that cannot render a plain conversation is
/// refused now, not at the first fit). Errors: `InvalidArgument` for a
/// built-in model's name, a zero window, no template found or one that
/// raises; `Io` for a file that cannot be read; the tokenizer loader's
/// kinds for a bad tokenizer file; `LimitExceeded` for a template over
/// [`super::MAX_TEMPLATE_BYTES`].
pub fn register_model_files(registry: &ModelRegistry, files: &ModelFiles) -> Result<crate::ModelInfo> {
    crate::text::check_name("model name", &files.name)?;
    registry.check_not_builtin(&files.name)?;
    CustomModel {
        encoding: None,
        context_window: Some(files.context_window),
        max_output_tokens: files.max_output_tokens,
    }
    .check()?;
    let located = files.locate()?;
    let path = located.tokenizer.as_path();
    let tokenizer = FileTokenizer::from_file_with(path, &LoadOptions::with_pattern(files.pattern.clone()))?;
    let model = match &files.chat_template {
        Some(source) => ModelTemplate::with_source(path, &tokenizer, source, "chat_template")?,
        None => ModelTemplate::for_tokenizer(path, &tokenizer, false)
            .map_err(|e| Error::new(e.kind(), e.message().replace("--chat-template", "chat_template")))?,
    };
    let counter = PromptCounter::new(model, Arc::new(tokenizer))?;
    let options = RenderOptions { kwargs: files.template_kwargs.clone(), ..RenderOptions::default() };
    // Ollama renders with its own Go template (or a renderer) when the
    // manifest has one: the GGUF's is then only the closest known, unless
    // the host gave the template itself.
    let own = matches!(located.host_template, crate::locate::HostTemplate::OllamaOwn(_));
    let model = TemplateModel::new(counter, options).with_exact(files.chat_template.is_some() || !own);
    model
        .register(registry, &files.name, Some(files.context_window as u64), files.max_output_tokens.map(|n| n as u64))
        .map_err(|e| match e.kind() {
            ErrorKind::InvalidArgument | ErrorKind::LimitExceeded => {
                Error::new(e.kind(), format!("model '{}': {}", crate::text::clip(&files.name), e.message()))
            }
            _ => e,
        })?;
    registry.lookup(&files.name)
}

impl ModelFiles {
    /// The tokenizer file the spec names (a path, an Ollama model or a
    /// Hugging Face model); `InvalidArgument` for none or several, the
    /// locator's kinds when the files are not found.
    pub fn locate(&self) -> Result<ModelLocation> {
        let tokenizer = (!self.tokenizer.is_empty()).then_some(self.tokenizer.as_str());
        let place = ModelPlace::from_options(
            tokenizer,
            self.ollama_model.as_deref(),
            self.ollama_models.as_deref(),
            self.hf_model.as_deref(),
            self.hf_cache.as_deref(),
        )?;
        match place {
            Some(ModelPlace::File(p)) if p.as_os_str().to_string_lossy().trim().is_empty() => None,
            other => other,
        }
        .ok_or_else(|| {
            Error::invalid_argument(
                "tokenizer: the model's files are not named (give tokenizer, ollama_model or hf_model)",
            )
        })?
        .locate()
    }
}

/// [`register_model_files`] with the spec as JSON (the C ABI's form).
pub fn register_model_files_json(registry: &ModelRegistry, spec: &str) -> Result<crate::ModelInfo> {
    let files: ModelFiles = crate::json::parse("model files", spec)?;
    register_model_files(registry, &files)
}

//! `--tokenizer FILE [--chat-template FILE]` (or `--ollama-model`,
//! `--hf-model`: model_files.rs) on `preflight`, `fit` and `repair`, and
//! `count --chat`: a model known by its own files (core's
//! `template::TemplateModel`): the prompt is counted as
//! `apply_chat_template(..., tokenize=True)` counts it. Parsing only; the
//! rules are the core's.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use turnfit::pipeline::{FileTokenizer, LoadOptions};
use turnfit::template::{ModelTemplate, PromptCounter, RenderOptions, TemplateModel};

use crate::Fatal;

/// The options `preflight` and `fit` share for a model given by its files.
#[derive(clap::Args, Default)]
pub(crate) struct TemplateArgs {
    /// Count as the model whose tokenizer file this is (an HF tokenizer.json, whose folder holds the chat
    /// template, or a GGUF): the prompt total is its chat template's rendering counted with its vocabulary,
    /// as a server counts it. Needs --context-window (the window the server allocated).
    #[arg(long, value_name = "FILE", group = crate::model_files::GROUP)]
    pub(crate) tokenizer: Option<String>,
    #[command(flatten)]
    pub(crate) locate: crate::model_files::LocateArgs,
    /// Render this Jinja file instead of the model's own template.
    #[arg(long, value_name = "FILE", requires = crate::model_files::GROUP)]
    pub(crate) chat_template: Option<String>,
    /// Extra template variables as a JSON object, e.g. '{"enable_thinking": false}'.
    #[arg(long, value_name = "JSON", requires = crate::model_files::GROUP)]
    pub(crate) template_kwargs: Option<String>,
}

impl TemplateArgs {
    /// The model and the name it is registered under for this run, when
    /// its files were named (--tokenizer, --ollama-model or --hf-model);
    /// `conversation` is the request (its tools pick a config's `tool_use`
    /// template).
    pub(crate) fn load(&self, conversation: &str) -> Result<Option<(TemplateModel, String)>, Fatal> {
        let Some(path) = self.locate.tokenizer(self.tokenizer.as_deref())? else { return Ok(None) };
        let model = load(&path, None, self.chat_template.as_deref(), self.template_kwargs.as_deref(), conversation)?;
        Ok(Some((model, self.locate.run_name(&path))))
    }

    /// Whether the model's files were named.
    pub(crate) fn given(&self) -> bool {
        self.tokenizer.is_some() || self.locate.ollama_model.is_some() || self.locate.hf_model.is_some()
    }
}

/// The model of the tokenizer at `path` (`pattern` for a tiktoken file),
/// with `template` instead of its own when given.
pub(crate) fn load(
    path: &str,
    pattern: Option<&str>,
    template: Option<&str>,
    kwargs: Option<&str>,
    conversation: &str,
) -> Result<TemplateModel, Fatal> {
    let tokenizer = FileTokenizer::from_file_with(path, &LoadOptions::with_pattern(pattern.map(str::to_string)))?;
    let with_tools = serde_json::from_str::<Value>(conversation)
        .ok()
        .and_then(|v| v.get("tools").and_then(Value::as_array).map(|t| !t.is_empty()))
        .unwrap_or(false);
    let model = ModelTemplate::load(Path::new(path), &tokenizer, with_tools, template.map(Path::new))?;
    let counter = PromptCounter::new(model, Arc::new(tokenizer))?;
    let kwargs = match kwargs {
        None => serde_json::Map::new(),
        Some(s) => match serde_json::from_str(s) {
            Ok(Value::Object(m)) => m,
            _ => return Err(Fatal(format!("--template-kwargs: expected a JSON object, got {s:?}"))),
        },
    };
    Ok(TemplateModel::new(counter, RenderOptions { kwargs, ..RenderOptions::default() }))
}

/// The name the model is registered under for one run: its tokenizer file.
pub(crate) fn model_name(path: &str) -> String {
    let name = path.trim();
    let start = name.len().saturating_sub(200);
    let start = (start..=name.len()).find(|&i| name.is_char_boundary(i)).unwrap_or(0);
    format!("file:{}", &name[start..])
}

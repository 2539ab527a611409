//! `--ollama-model NAME [--ollama-models DIR]` and `--hf-model ORG/NAME|DIR
//! [--hf-cache DIR]`: a model's tokenizer file found where its host keeps
//! it (core's `locate`), as alternatives to `--tokenizer FILE` wherever that
//! is accepted. Every option that needs a model's files requires the group
//! `model_files` (one of the three). Parsing only; the rules are the core's.

use turnfit::locate::{HostTemplate, ModelPlace};

use crate::Fatal;

/// The group id of `--tokenizer`, `--ollama-model` and `--hf-model`.
pub(crate) const GROUP: &str = "model_files";

#[derive(clap::Args, Default)]
pub(crate) struct LocateArgs {
    /// Use the model Ollama has pulled under this name (qwen3:8b, llama3.1, hf.co/org/repo:Q4_K_M,
    /// user/model:tag): its GGUF blob in the Ollama store, which holds the tokenizer and chat template.
    /// Ollama may render with its own Go template instead; a note on stderr says so.
    #[arg(long, value_name = "NAME", group = GROUP, conflicts_with_all = ["tokenizer", "hf_model"])]
    pub(crate) ollama_model: Option<String>,
    /// The Ollama store [default: $OLLAMA_MODELS, else ~/.ollama/models].
    #[arg(long, value_name = "DIR", requires = "ollama_model")]
    pub(crate) ollama_models: Option<String>,
    /// Use a Hugging Face model from the local hub cache (Org/Name or Org/Name@revision), or a cache repo
    /// folder (models--Org--Name), snapshot folder or folder holding tokenizer.json. Nothing is downloaded.
    #[arg(long, value_name = "ORG/NAME|DIR", group = GROUP, conflicts_with = "tokenizer")]
    pub(crate) hf_model: Option<String>,
    /// The hub cache [default: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub].
    #[arg(long, value_name = "DIR", requires = "hf_model")]
    pub(crate) hf_cache: Option<String>,
}

impl LocateArgs {
    /// The tokenizer file: `tokenizer` when given, else the one found for
    /// the Ollama or Hugging Face model; `None` when no model is named. A
    /// host that may render with its own template is noted on stderr.
    pub(crate) fn tokenizer(&self, tokenizer: Option<&str>) -> Result<Option<String>, Fatal> {
        let place = ModelPlace::from_options(
            tokenizer,
            self.ollama_model.as_deref(),
            self.ollama_models.as_deref(),
            self.hf_model.as_deref(),
            self.hf_cache.as_deref(),
        )?;
        let Some(place) = place else { return Ok(None) };
        if let ModelPlace::File(_) = place {
            return Ok(tokenizer.map(str::to_string));
        }
        let found = place.locate()?;
        if let HostTemplate::OllamaOwn(note) = &found.host_template {
            eprintln!("turnfit: note: {note}");
        }
        let path = found.tokenizer.to_str().ok_or_else(|| {
            Fatal(format!("{}: the path is not UTF-8; give it with --tokenizer", found.tokenizer.display()))
        })?;
        Ok(Some(path.to_string()))
    }

    /// The name a model is registered under for one run.
    pub(crate) fn run_name(&self, path: &str) -> String {
        match (&self.ollama_model, &self.hf_model) {
            (Some(name), _) => format!("ollama:{}", clipped(name)),
            (_, Some(model)) => format!("hf:{}", clipped(model)),
            _ => crate::chat_model::model_name(path),
        }
    }
}

/// At most the last 200 bytes (a registry name's length is bounded).
fn clipped(name: &str) -> &str {
    let name = name.trim();
    let start = name.len().saturating_sub(200);
    let start = (start..=name.len()).find(|&i| name.is_char_boundary(i)).unwrap_or(0);
    &name[start..]
}

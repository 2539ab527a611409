//! Where a model's files are (issue 50, item 4): the tokenizer file a host
//! already has on disk, found where the host keeps it, so a user can name a
//! model instead of a path. Three places:
//!
//! - a file given (`tokenizer.json` or a GGUF): used as is;
//! - the local Ollama store ([`ollama`]): the model name resolved through
//!   its manifest to the GGUF blob, whose metadata holds the tokenizer and
//!   the Jinja chat template;
//! - the Hugging Face hub cache ([`hf`]): a repo id, a repo folder
//!   (`models--Org--Name`) or a snapshot folder resolved to the snapshot's
//!   `tokenizer.json`, with `tokenizer_config.json` / `chat_template.jinja`
//!   beside it (found there by `template::ModelTemplate`).
//!
//! Nothing is downloaded and no network is used: a model that is not on
//! disk is an error naming what is missing. Names and revisions are
//! validated before any path is built from them, so a name never reaches
//! outside its store (`UnsafePath`).

pub mod hf;
pub mod ollama;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::{Error, ErrorKind, Result};

pub use hf::{default_hf_cache, locate_hf};
pub use ollama::{default_ollama_store, locate_ollama, OllamaName};

/// Which chat template a host renders the prompt with, when it is not
/// certainly the one in the files found (Ollama may use its own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostTemplate {
    /// The files' own Jinja template is what the host renders (the Hugging
    /// Face files as transformers / vLLM use them, a file given).
    Files,
    /// Ollama: the manifest carries a Go template layer
    /// (`application/vnd.ollama.image.template`), a built-in renderer or a
    /// parser; Ollama may render with those instead of the GGUF's Jinja
    /// template, so a count from the GGUF's template may differ from
    /// Ollama's `prompt_eval_count`. The text says which.
    OllamaOwn(String),
}

/// A model's tokenizer file, found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelLocation {
    /// The tokenizer file: an HF `tokenizer.json` (its template files
    /// beside it) or a GGUF (its template inside). Not canonicalized: a hub
    /// snapshot's files are symlinks into `blobs/`, and the template files
    /// are looked for beside this path, in the snapshot.
    pub tokenizer: PathBuf,
    /// What was asked for and where it was found, for messages
    /// (`ollama registry.ollama.ai/library/qwen3:8b: <blob path>`).
    pub origin: String,
    /// Whether the host renders with the files' template.
    pub host_template: HostTemplate,
}

/// One of the three ways to name a model's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelPlace {
    /// A tokenizer file's path.
    File(PathBuf),
    /// An Ollama model name in a store folder (`None`: Ollama's default,
    /// [`default_ollama_store`]).
    Ollama {
        /// The model name (`qwen3:8b`).
        name: String,
        /// The store folder.
        store: Option<PathBuf>,
    },
    /// A Hugging Face repo id (`Org/Name`, `Org/Name@revision`) or a cache,
    /// repo or snapshot folder, in a hub cache (`None`:
    /// [`default_hf_cache`]).
    HuggingFace {
        /// The repo id or folder.
        model: String,
        /// The hub cache root.
        cache: Option<PathBuf>,
    },
}

impl ModelPlace {
    /// The one place named by a front end's options, refusing none or more
    /// than one (`InvalidArgument`). `store` and `cache` without their model
    /// are refused too.
    pub fn from_options(
        tokenizer: Option<&str>,
        ollama_model: Option<&str>,
        ollama_store: Option<&str>,
        hf_model: Option<&str>,
        hf_cache: Option<&str>,
    ) -> Result<Option<ModelPlace>> {
        let given = [tokenizer.is_some(), ollama_model.is_some(), hf_model.is_some()];
        if given.iter().filter(|g| **g).count() > 1 {
            return Err(Error::invalid_argument(
                "a model's files are named one way: a tokenizer file, an Ollama model or a Hugging Face model, not several",
            ));
        }
        if ollama_store.is_some() && ollama_model.is_none() {
            return Err(Error::invalid_argument("an Ollama store folder is given without an Ollama model name"));
        }
        if hf_cache.is_some() && hf_model.is_none() {
            return Err(Error::invalid_argument("a Hugging Face cache folder is given without a Hugging Face model"));
        }
        Ok(match (tokenizer, ollama_model, hf_model) {
            (Some(t), _, _) => Some(ModelPlace::File(PathBuf::from(t))),
            (_, Some(name), _) => {
                Some(ModelPlace::Ollama { name: name.to_string(), store: ollama_store.map(PathBuf::from) })
            }
            (_, _, Some(model)) => {
                Some(ModelPlace::HuggingFace { model: model.to_string(), cache: hf_cache.map(PathBuf::from) })
            }
            _ => None,
        })
    }

    /// Finds the tokenizer file. Errors name what is missing or refused:
    /// `UnsafePath` for a name or revision that would leave its store, `Io`
    /// for a store, cache, blob or snapshot file that is not there,
    /// `UnknownModel` for a model or tag the store does not hold,
    /// `InvalidJson` for a manifest that is not JSON, `InvalidArgument` for
    /// a malformed name or manifest.
    pub fn locate(&self) -> Result<ModelLocation> {
        match self {
            ModelPlace::File(path) => Ok(ModelLocation {
                tokenizer: path.clone(),
                origin: path.display().to_string(),
                host_template: HostTemplate::Files,
            }),
            ModelPlace::Ollama { name, store } => {
                let store = match store {
                    Some(s) => s.clone(),
                    None => default_ollama_store()?,
                };
                locate_ollama(name, &store)
            }
            ModelPlace::HuggingFace { model, cache } => locate_hf(model, cache.as_deref()),
        }
    }
}

/// Largest manifest, config or `refs/` file read: they are a few hundred
/// bytes; a bigger one is not what the host writes.
pub const MAX_METADATA_BYTES: u64 = 1 << 20;

/// `path` as text of at most [`MAX_METADATA_BYTES`]; `Io` when it cannot be
/// read, naming `what`.
fn read_small(path: &Path, what: &str) -> Result<String> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| Error::new(ErrorKind::Io, format!("{what}: {shown}: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_METADATA_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::new(ErrorKind::Io, format!("{what}: {shown}: {e}")))?;
    if bytes.len() as u64 > MAX_METADATA_BYTES {
        return Err(Error::new(
            ErrorKind::LimitExceeded,
            format!("{what}: {shown} is larger than {MAX_METADATA_BYTES} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::new(
            ErrorKind::InvalidUtf8,
            format!("{what}: {shown}: not UTF-8 at byte {}", e.utf8_error().valid_up_to()),
        )
    })
}

/// The names of the entries of `dir` (at most `max`), sorted; empty when it
/// cannot be read. For "the store has" lists in messages.
fn list_names(dir: &Path, max: usize) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> =
        entries.filter_map(|e| e.ok()).take(max).filter_map(|e| e.file_name().into_string().ok()).collect();
    names.sort();
    names
}

/// "; it has: a, b, c" (at most 12, clipped), or nothing.
fn has_list(what: &str, names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = names.iter().take(12).map(|n| crate::text::clip(n).into_owned()).collect();
    let more = if names.len() > 12 { format!(" and {} more", names.len() - 12) } else { String::new() };
    format!("; {what}: {}{more}", shown.join(", "))
}

/// A home folder from `$HOME` (or `%USERPROFILE%`), as Go's
/// `os.UserHomeDir` and Python's `expanduser` find it.
fn home_dir() -> Result<PathBuf> {
    for var in ["HOME", "USERPROFILE"] {
        if let Some(h) = std::env::var_os(var).filter(|h| !h.is_empty()) {
            return Ok(PathBuf::from(h));
        }
    }
    Err(Error::new(
        ErrorKind::Io,
        "no home folder ($HOME is not set) to find the default model store in; give the folder",
    ))
}

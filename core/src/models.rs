//! The model registry: which encoding a model uses, its context window and
//! output limit, and whether ctxkit's counts for it are exact.
//!
//! The built-in table is `data/models.json`, embedded at build time. A name
//! ending in `*` is a prefix; lookups prefer an exact name, then the longest
//! matching prefix, so `gpt-4o-mini-2024-07-18` finds `gpt-4o*` while
//! `gpt-4-turbo-preview` finds `gpt-4-turbo*` rather than `gpt-4*`. Hosts can
//! register new entries or override built-in ones at run time; overrides are
//! local to the registry instance, so two hosts in one process do not see
//! each other's changes.

use std::sync::OnceLock;

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use crate::{json, Encoding, Error, ErrorKind, Result, Tokenizer};

/// One registry entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelProfile {
    /// Exact model name, or a prefix ending in `*`.
    pub name: String,
    /// Vendor family, informational (`openai`, `anthropic`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// Encoding used to count; for `exact: false` models, the estimator.
    pub encoding: Encoding,
    /// Context window in tokens, if known.
    #[serde(default)]
    pub context_window: Option<u64>,
    /// Maximum output tokens, if known.
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    /// Whether counts equal the vendor's tokenizer (true only where the
    /// tokenizer is public, i.e. OpenAI's encodings).
    pub exact: bool,
}

/// Where a lookup's answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelSource {
    /// The embedded table.
    Builtin,
    /// Registered by the host at run time.
    Host,
    /// The model is unknown and the caller's fallback encoding was used.
    Fallback,
}

/// The answer to a lookup: the profile that applies to `model`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelInfo {
    /// The name that was asked for.
    pub model: String,
    /// The entry that matched (`None` for a fallback).
    pub matched: Option<String>,
    /// Where the profile came from.
    pub source: ModelSource,
    /// Vendor family, if known.
    pub family: Option<String>,
    /// Encoding to count with.
    pub encoding: Encoding,
    /// Context window in tokens, if known.
    pub context_window: Option<u64>,
    /// Maximum output tokens, if known.
    pub max_output_tokens: Option<u64>,
    /// Whether counts are exact rather than an estimate.
    pub exact: bool,
}

#[derive(Debug, Clone)]
struct Entry {
    profile: ModelProfile,
    source: ModelSource,
}

#[derive(Deserialize)]
struct Table {
    #[allow(dead_code)]
    schema: u32,
    models: Vec<ModelProfile>,
}

/// A set of model profiles. Cheap to read from many threads; registration
/// takes a short write lock.
#[derive(Debug)]
pub struct ModelRegistry {
    entries: RwLock<Vec<Entry>>,
}

fn builtin_entries() -> Result<&'static Vec<Entry>> {
    static BUILTIN: OnceLock<Result<Vec<Entry>>> = OnceLock::new();
    BUILTIN
        .get_or_init(|| {
            let table: Table = json::parse("built-in models.json", include_str!("../data/models.json"))?;
            table
                .models
                .into_iter()
                .map(|profile| {
                    validate(&profile)?;
                    Ok(Entry { profile, source: ModelSource::Builtin })
                })
                .collect()
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn json_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn validate(p: &ModelProfile) -> Result<()> {
    let stem = p.name.strip_suffix('*').unwrap_or(&p.name);
    if stem.is_empty() || stem.contains('*') || stem.trim() != stem || stem.len() > 256 {
        return Err(Error::invalid_argument(format!(
            "model name '{}' must be 1-256 characters with no surrounding spaces and at most one trailing '*'",
            p.name
        )));
    }
    if p.context_window == Some(0) {
        return Err(Error::invalid_argument(format!("model '{}': context_window must be positive", p.name)));
    }
    Ok(())
}

impl Default for ModelRegistry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl ModelRegistry {
    /// A registry holding the embedded table.
    pub fn builtin() -> ModelRegistry {
        // The embedded table is validated by the tests, so this cannot fail
        // in a released build; an empty registry is the safe answer if it did.
        let entries = builtin_entries().cloned().unwrap_or_default();
        ModelRegistry { entries: RwLock::new(entries) }
    }

    /// Adds `profile`, replacing any entry with the same name.
    pub fn register(&self, mut profile: ModelProfile) -> Result<()> {
        profile.name = profile.name.to_ascii_lowercase();
        validate(&profile)?;
        let mut entries = self.entries.write();
        let entry = Entry { profile, source: ModelSource::Host };
        match entries.iter_mut().find(|e| e.profile.name == entry.profile.name) {
            Some(existing) => *existing = entry,
            None => entries.push(entry),
        }
        Ok(())
    }

    /// Registers one profile object or an array of them, given as JSON.
    /// Every profile is validated before any is registered, and an error
    /// names the offending element. Returns the number of distinct names
    /// registered (a name given twice in one batch counts once; the later
    /// profile wins).
    pub fn register_json(&self, text: &str) -> Result<usize> {
        let doc = json::parse_value("model profile JSON", text)?;
        let items = match doc {
            serde_json::Value::Array(items) => items.into_iter().map(Some).collect(),
            obj @ serde_json::Value::Object(_) => vec![Some(obj)],
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidJson,
                    format!(
                        "model profile JSON must be a profile object or an array of them, not {}",
                        json_type(&other)
                    ),
                ))
            }
        };
        let mut profiles = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            let name = |p: &ModelProfile| {
                if p.name.is_empty() {
                    format!("profile {i}")
                } else {
                    format!("profile {i} ('{}')", p.name)
                }
            };
            let p: ModelProfile = serde_json::from_value(item.unwrap_or_default())
                .map_err(|e| Error::new(ErrorKind::InvalidJson, format!("model profile {i}: {e}")))?;
            validate(&p).map_err(|e| Error::new(e.kind(), format!("{}: {}", name(&p), e.message())))?;
            profiles.push(p);
        }
        let mut names: Vec<String> = profiles.iter().map(|p| p.name.to_ascii_lowercase()).collect();
        names.sort();
        names.dedup();
        for p in profiles {
            self.register(p)?;
        }
        Ok(names.len())
    }

    /// Every entry, with its source, in registration order.
    pub fn list(&self) -> Vec<(ModelProfile, ModelSource)> {
        self.entries.read().iter().map(|e| (e.profile.clone(), e.source)).collect()
    }

    /// Every entry as JSON objects (the profile plus its `source`), the shape
    /// the CLI's `models --json` and the C ABI's registry list share.
    pub fn list_json(&self) -> Vec<serde_json::Value> {
        self.list()
            .into_iter()
            .map(|(p, source)| {
                let mut v = serde_json::to_value(p).unwrap_or_default();
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("source".into(), serde_json::to_value(source).unwrap_or_default());
                }
                v
            })
            .collect()
    }

    /// The profile for `model`. Names are matched case-insensitively, and a
    /// routing prefix is tried off when the full name is unknown
    /// (`openai/gpt-4o`, Bedrock's `us.anthropic.claude-...`). An unknown
    /// model is `UnknownModel`, naming close matches.
    pub fn lookup(&self, model: &str) -> Result<ModelInfo> {
        self.lookup_or(model, None)
    }

    /// Like [`lookup`](Self::lookup), but an unknown model gets `fallback`'s
    /// encoding with unknown limits and `exact: false`.
    pub fn lookup_or(&self, model: &str, fallback: Option<Encoding>) -> Result<ModelInfo> {
        crate::text::check_name("model name", model)?;
        let entries = self.entries.read();
        for candidate in candidates(model) {
            if let Some(e) = best_match(&entries, &candidate) {
                return Ok(ModelInfo {
                    model: model.to_owned(),
                    matched: Some(e.profile.name.clone()),
                    source: e.source,
                    family: e.profile.family.clone(),
                    encoding: e.profile.encoding,
                    context_window: e.profile.context_window,
                    max_output_tokens: e.profile.max_output_tokens,
                    exact: e.profile.exact,
                });
            }
        }
        if let Some(encoding) = fallback {
            return Ok(ModelInfo {
                model: model.to_owned(),
                matched: None,
                source: ModelSource::Fallback,
                family: None,
                encoding,
                context_window: None,
                max_output_tokens: None,
                exact: false,
            });
        }
        let names = entries.iter().map(|e| e.profile.name.trim_end_matches('*'));
        let close = crate::text::close_matches(&model.trim().to_ascii_lowercase(), names, 3);
        let hint = if close.is_empty() {
            "run `ctxkit models` for the list, register the model, or pass a fallback encoding".to_owned()
        } else {
            format!("did you mean {}?", close.join(" or "))
        };
        Err(Error::new(ErrorKind::UnknownModel, format!("unknown model '{}'; {hint}", crate::text::clip(model))))
    }

    /// A tokenizer for `model` (see [`lookup_or`](Self::lookup_or)).
    pub fn tokenizer(&self, model: &str, fallback: Option<Encoding>) -> Result<(Tokenizer, ModelInfo)> {
        let info = self.lookup_or(model, fallback)?;
        Ok((Tokenizer::new(info.encoding)?, info))
    }
}

/// The name as given (lowercased), then with routing prefixes removed.
fn candidates(model: &str) -> Vec<String> {
    let name = model.trim().to_ascii_lowercase();
    let mut out = vec![name.clone()];
    let mut rest = name.rsplit('/').next().unwrap_or(&name).to_owned();
    if rest != name {
        out.push(rest.clone());
    }
    // Bedrock-style "vendor.model" and "region.vendor.model": strip leading
    // alphabetic segments followed by a dot.
    while let Some((head, tail)) = rest.split_once('.') {
        if head.is_empty() || !head.bytes().all(|b| b.is_ascii_alphabetic()) {
            break;
        }
        rest = tail.to_owned();
        out.push(rest.clone());
    }
    out
}

fn best_match<'a>(entries: &'a [Entry], name: &str) -> Option<&'a Entry> {
    if let Some(e) = entries.iter().find(|e| e.profile.name == name) {
        return Some(e);
    }
    entries
        .iter()
        .filter_map(|e| {
            let stem = e.profile.name.strip_suffix('*')?;
            name.starts_with(stem).then_some((stem.len(), e))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, e)| e)
}

#[cfg(test)]
mod tests;

/// The tokenizer a JSON options object selects: a model name (looked up in
/// the built-in registry) wins over an encoding name; neither means
/// cl100k_base. Shared by every options type that carries both fields.
pub fn select_tokenizer(model: Option<&str>, encoding: Option<&str>) -> Result<crate::Tokenizer> {
    match (model, encoding) {
        (Some(m), _) => Ok(ModelRegistry::builtin().tokenizer(m, None)?.0),
        (None, Some(e)) => crate::Tokenizer::from_name(e),
        (None, None) => crate::Tokenizer::new(crate::Encoding::Cl100kBase),
    }
}

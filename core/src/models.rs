//! The model registry: which encoding a model uses, its context window and
//! output limit, and whether turnfit's counts for it are exact.
//!
//! The built-in table is `data/models.json`, embedded at build time, with the
//! provider documentation each family's limits come from. A lookup lowercases
//! the name and tries, in order:
//!
//! 1. **An exact name** (`gpt-4o`, `davinci-002`).
//! 2. **The longest prefix entry** (a name ending in `*`) that ends on a
//!    name boundary: the rest of the name is empty or starts with a
//!    separator (`-`, `.`, `:`, `@`, `/`). So `gpt-4o*` takes
//!    `gpt-4o-2024-08-06` and `gpt-4o-mini`, `claude-sonnet-4-5*` takes
//!    `claude-sonnet-4-5-20250929` and `claude-sonnet-4-5@20250929`, while
//!    `gpt-40`, `gpt-45` and `gpt-4oo` match nothing. A separator followed by
//!    a version number continues the version rather than ending the name:
//!    `.` and any digit (`gpt-4.5` is not a `gpt-4`, `gpt-5.2` is not a
//!    `gpt-5`), `-` and a one- or two-digit number that ends the name or a
//!    segment (`claude-opus-4-7` is not a `claude-opus-4`; dates such as
//!    `-0613` or `-2024-08-06` and sizes such as `-16k` do end the name). A
//!    stem that itself ends in a separator (`acme-*`) takes any continuation.
//! 3. The same two steps on the name without its routing prefix:
//!    `openai/gpt-4o`, `meta-llama/llama-3.1-8b-instruct`, Bedrock's
//!    `anthropic.claude-...` and `us.anthropic.claude-...`, and on a
//!    fine-tuned name's base model: `ft:gpt-4o-mini-2024-07-18:org::id` is
//!    `gpt-4o-mini-2024-07-18`, the legacy `davinci:ft-org-2023-...` is
//!    `davinci`.
//! 4. **A family fallback**: the families whose data declares
//!    `newer_versions` patterns (Anthropic's `claude-{opus|sonnet|haiku}-{v}`,
//!    Google's `gemini-{v}-{pro|flash|flash-lite}`, OpenAI's `gpt-5.{d}`)
//!    resolve a newer version than the table knows (`claude-opus-5`,
//!    `gemini-3-pro`) to the family's estimate, with `source: "family"`,
//!    the pattern as `matched`, and `exact: false`. `{v}` is a version of one
//!    digit with an optional `.`/`-` and minor digit, so `claude-opus-40` is
//!    not one. Families without patterns (Meta, Mistral, DeepSeek, Qwen,
//!    whose names vary by host too much to guess) make an unknown version
//!    unknown.
//!
//! Anything else is `UnknownModel`, naming close matches, unless the caller
//! passed a fallback encoding. Hosts can register new entries or override
//! built-in ones at run time; overrides are local to the registry instance,
//! so two hosts in one process do not see each other's changes.

use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use crate::{json, Encoding, Error, ErrorKind, Result, Tokenizer};

mod counter;
mod prompt;
pub use counter::{
    check_not_counting, in_host_counter, Counter, HostCountFn, HostCounter, HOST_COUNT_SLACK, MAX_CHARS_PER_TOKEN,
};
pub use prompt::{PromptModel, TurnOrder};

/// One registry entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ModelSource {
    /// The embedded table.
    Builtin,
    /// Registered by the host at run time.
    Host,
    /// Not in the table, but a newer version of a family that declares
    /// `newer_versions` patterns: the family's estimate, `exact: false`.
    Family,
    /// The model is unknown and the caller's fallback encoding was used.
    Fallback,
}

impl ModelSource {
    /// The JSON name: `builtin`, `host`, `family` or `fallback`.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelSource::Builtin => "builtin",
            ModelSource::Host => "host",
            ModelSource::Family => "family",
            ModelSource::Fallback => "fallback",
        }
    }
}

/// One registry entry as listed (`turnfit_registry_list`, `models --json`):
/// the profile's fields, then where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RegistryEntry {
    /// The registered profile.
    #[serde(flatten)]
    pub profile: ModelProfile,
    /// Where it came from (`builtin` or `host`).
    pub source: ModelSource,
}

/// The answer to a lookup: the profile that applies to `model`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ModelInfo {
    /// The name that was asked for.
    pub model: String,
    /// The entry that matched: a name, a prefix ending in `*`, or for a
    /// family fallback the family's pattern (`None` for a fallback encoding).
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

/// A model's figures given by the caller rather than the registry: the
/// `encoding`, `context_window` and `max_output_tokens` fields of fit
/// options and window budgets, and the CLI's `--encoding`,
/// `--context-window` and `--max-output` (see [`ModelRegistry::resolve`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CustomModel {
    /// Encoding to count with when the registry does not know the model.
    pub encoding: Option<Encoding>,
    /// Context window in tokens, replacing the registry's.
    pub context_window: Option<usize>,
    /// Maximum output tokens, replacing the registry's.
    pub max_output_tokens: Option<usize>,
}

impl CustomModel {
    /// `InvalidArgument` for a zero figure or one above
    /// [`crate::limits::MAX_BUDGET_TOKENS`], naming the field.
    pub fn check(&self) -> Result<()> {
        use crate::limits::MAX_BUDGET_TOKENS;
        for (name, v) in [("context_window", self.context_window), ("max_output_tokens", self.max_output_tokens)] {
            match v {
                Some(0) => return Err(Error::invalid_argument(format!("{name} must be positive"))),
                Some(n) if n > MAX_BUDGET_TOKENS => {
                    return Err(Error::invalid_argument(format!(
                        "{name} is {n} tokens; the limit is {MAX_BUDGET_TOKENS} (MAX_BUDGET_TOKENS)"
                    )))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
struct Entry {
    profile: ModelProfile,
    source: ModelSource,
    /// The host's own counter, for a host entry registered with one.
    counter: Option<HostCounter>,
    /// The counter is turnfit's own (a model's tokenizer file), which runs
    /// without the host: a front end may release its interpreter lock.
    native: bool,
    /// Framing constants for a host entry, replacing the name's: the
    /// accountant's framing in its serde form (kept as JSON so this module
    /// does not depend on the window's types). Set for a model known by its
    /// chat template, whose framing is measured from it.
    framing: Option<serde_json::Value>,
    /// The model's own prompt counter (its chat template and tokenizer),
    /// for a model registered from its files: fits, turns and windows
    /// report its count of the request as their totals.
    prompt: Option<Arc<dyn PromptModel>>,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
struct Table {
    #[allow(dead_code)]
    schema: u32,
    #[allow(dead_code)]
    notes: String,
    families: Vec<FamilyDecl>,
    models: Vec<ModelProfile>,
}

/// A vendor family in the built-in table: where its figures come from, and
/// how a newer version than the table knows is estimated, if at all.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
struct FamilyDecl {
    family: String,
    /// The provider documentation the family's names and limits come from.
    #[allow(dead_code)]
    source: Vec<String>,
    /// Patterns for newer versions and the estimate they get.
    #[serde(default)]
    newer_versions: Option<NewerVersions>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
struct NewerVersions {
    patterns: Vec<String>,
    encoding: Encoding,
    context_window: Option<u64>,
    max_output_tokens: Option<u64>,
}

/// One part of a `newer_versions` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// `{a|b|c}`: one of these.
    OneOf(Vec<String>),
    /// `{d}`: one digit 1-9.
    Digit,
    /// `{v}`: a digit 1-9, optionally followed by `.` or `-` and a digit.
    Version,
}

#[derive(Debug, Clone)]
struct FamilyPattern {
    text: String,
    parts: Vec<Part>,
    family: String,
    estimate: NewerVersions,
}

fn parse_pattern(text: &str) -> Result<Vec<Part>> {
    let bad = |why: &str| Error::internal(format!("models.json: pattern '{text}': {why}"));
    let mut parts = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('{') {
            let end = after.find('}').ok_or_else(|| bad("unclosed '{'"))?;
            let inner = &after[..end];
            parts.push(match inner {
                "v" => Part::Version,
                "d" => Part::Digit,
                _ if inner.contains('|') && !inner.split('|').any(str::is_empty) => {
                    Part::OneOf(inner.split('|').map(str::to_owned).collect())
                }
                _ => return Err(bad("expected {v}, {d} or {a|b|...}")),
            });
            rest = &after[end + 1..];
        } else {
            let end = rest.find('{').unwrap_or(rest.len());
            parts.push(Part::Literal(rest[..end].to_owned()));
            rest = &rest[end..];
        }
    }
    match parts.first() {
        Some(Part::Literal(l)) if !l.is_empty() => Ok(parts),
        _ => Err(bad("must start with literal text")),
    }
}

/// Whether `name` is `parts` followed by a name boundary.
fn matches_parts(parts: &[Part], name: &str) -> bool {
    let Some((first, more)) = parts.split_first() else {
        return at_boundary("", name);
    };
    let digit = |s: &str, i: usize, lo: u8| s.as_bytes().get(i).is_some_and(|b| (lo..=b'9').contains(b));
    let mut heads: Vec<usize> = Vec::new();
    match first {
        Part::Literal(l) => heads.extend(name.starts_with(l.as_str()).then_some(l.len())),
        Part::OneOf(options) => heads.extend(options.iter().filter(|o| name.starts_with(o.as_str())).map(String::len)),
        Part::Digit => heads.extend(digit(name, 0, b'1').then_some(1)),
        Part::Version => {
            if digit(name, 0, b'1') {
                if matches!(name.as_bytes().get(1), Some(b'.' | b'-')) && digit(name, 2, b'0') {
                    heads.push(3);
                }
                heads.push(1);
            }
        }
    }
    heads.into_iter().any(|n| matches_parts(more, &name[n..]))
}

/// Separators that end a model name's stem.
const SEPARATORS: &[u8] = b"-.:@/";

/// Whether a prefix entry `stem` applies to a name that continues with
/// `rest` (see the module docs).
fn at_boundary(stem: &str, rest: &str) -> bool {
    let Some(&first) = rest.as_bytes().first() else { return true };
    if stem.as_bytes().last().is_some_and(|c| SEPARATORS.contains(c)) {
        return true;
    }
    if !SEPARATORS.contains(&first) {
        return false;
    }
    let after = &rest.as_bytes()[1..];
    let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
    let continues_version = match first {
        b'.' => digits > 0,
        b'-' => (1..=2).contains(&digits) && after.get(digits).is_none_or(|c| SEPARATORS.contains(c)),
        _ => false,
    };
    !continues_version
}

/// A set of model profiles. Cheap to read from many threads; registration
/// takes a short write lock.
#[derive(Debug)]
pub struct ModelRegistry {
    entries: RwLock<Vec<Entry>>,
    families: &'static [FamilyPattern],
}

struct Builtin {
    entries: Vec<Entry>,
    families: Vec<FamilyPattern>,
}

fn builtin() -> Result<&'static Builtin> {
    static BUILTIN: OnceLock<Result<Builtin>> = OnceLock::new();
    BUILTIN
        .get_or_init(|| {
            let table: Table = json::parse("built-in models.json", include_str!("../data/models.json"))?;
            let mut families = Vec::new();
            for f in &table.families {
                for text in f.newer_versions.iter().flat_map(|n| &n.patterns) {
                    families.push(FamilyPattern {
                        text: text.clone(),
                        parts: parse_pattern(text)?,
                        family: f.family.clone(),
                        estimate: f.newer_versions.clone().unwrap_or_else(|| unreachable!("iterating its patterns")),
                    });
                }
            }
            let entries = table
                .models
                .into_iter()
                .map(|profile| {
                    validate(&profile)?;
                    if !table.families.iter().any(|f| Some(&f.family) == profile.family.as_ref()) {
                        return Err(Error::internal(format!(
                            "models.json: '{}' has an undeclared family",
                            profile.name
                        )));
                    }
                    Ok(Entry {
                        profile,
                        source: ModelSource::Builtin,
                        counter: None,
                        native: false,
                        framing: None,
                        prompt: None,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Builtin { entries, families })
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn builtin_entries() -> Result<&'static Vec<Entry>> {
    builtin().map(|b| &b.entries)
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
        let families = builtin().map(|b| b.families.as_slice()).unwrap_or_default();
        ModelRegistry { entries: RwLock::new(entries), families }
    }

    /// Adds `profile`, replacing any entry with the same name (and its
    /// counter, if it had one).
    pub fn register(&self, profile: ModelProfile) -> Result<()> {
        self.register_entry(profile, None, None, None, false)
    }

    /// Adds `profile` with the host's own counter `count` (text in, tokens
    /// or a reason out): every window, fit and turn for a model this entry
    /// resolves counts text with it (framing stays the model's), for a
    /// model whose tokenizer is not public. `count` runs on the caller's
    /// thread while turnfit holds what it counts for; it must not call
    /// back into turnfit (such a call is refused, see
    /// [`check_not_counting`]). Its failures, panics and absurd counts are
    /// errors naming the model, never a panic.
    pub fn register_with_counter(
        &self,
        profile: ModelProfile,
        count: impl Fn(&str) -> std::result::Result<usize, String> + Send + Sync + 'static,
    ) -> Result<()> {
        let counter = HostCounter::new(&profile.name, count);
        self.register_entry(profile, Some(counter), None, None, false)
    }

    /// [`register_with_counter`](Self::register_with_counter) with framing
    /// constants (the accountant's, as JSON) for the entry, for a counter
    /// of turnfit's own (a tokenizer file: it never calls the host, so
    /// [`Self::has_host_counters`] does not count it).
    pub(crate) fn register_with_counter_and_framing(
        &self,
        profile: ModelProfile,
        count: impl Fn(&str) -> std::result::Result<usize, String> + Send + Sync + 'static,
        framing: serde_json::Value,
        prompt: Option<Arc<dyn PromptModel>>,
    ) -> Result<()> {
        let counter = HostCounter::new(&profile.name, count);
        self.register_entry(profile, Some(counter), Some(framing), prompt, true)
    }

    /// The prompt counter registered with the host entry a resolved model
    /// matched, if any (a model registered from its files).
    pub fn prompt_model(&self, info: &ModelInfo) -> Option<Arc<dyn PromptModel>> {
        if info.source != ModelSource::Host {
            return None;
        }
        let matched = info.matched.as_deref()?;
        self.entries.read().iter().find(|e| e.profile.name == matched).and_then(|e| e.prompt.clone())
    }

    /// `InvalidArgument` when `name` is a built-in entry's name or stem
    /// (`gpt-4o` for `gpt-4o*`): a model registered from its files gets a
    /// name of its own, so a built-in model's counts never silently change.
    /// A more specific name (`llama3.1:8b`, which `llama3.1*` would take)
    /// is allowed: the host's exact entry wins for that name only.
    pub fn check_not_builtin(&self, name: &str) -> Result<()> {
        let lower = name.trim().to_ascii_lowercase();
        let stem = lower.trim_end_matches('*');
        if builtin_entries()?.iter().any(|e| e.profile.name.trim_end_matches('*') == stem) {
            return Err(Error::invalid_argument(format!(
                "'{}' is a built-in model's name; register the model's files under a name of their own (e.g. \
                 '{}-local')",
                crate::text::clip(name),
                crate::text::clip(lower.trim_end_matches('*'))
            )));
        }
        Ok(())
    }

    /// The framing registered with the host entry a resolved model matched,
    /// if any (JSON, see [`Self::register_with_counter_and_framing`]).
    pub(crate) fn host_framing(&self, info: &ModelInfo) -> Option<serde_json::Value> {
        if info.source != ModelSource::Host {
            return None;
        }
        let matched = info.matched.as_deref()?;
        self.entries.read().iter().find(|e| e.profile.name == matched).and_then(|e| e.framing.clone())
    }

    /// [`register_with_counter`](Self::register_with_counter) with the
    /// profile given as JSON: one profile object (an array is refused: a
    /// counter belongs to one model).
    pub fn register_json_with_counter(
        &self,
        text: &str,
        count: impl Fn(&str) -> std::result::Result<usize, String> + Send + Sync + 'static,
    ) -> Result<()> {
        let doc = json::parse_value("model profile JSON", text)?;
        if !doc.is_object() {
            return Err(Error::new(
                ErrorKind::InvalidJson,
                format!("a model registered with a counter is one profile object, not {}", json_type(&doc)),
            ));
        }
        let p: ModelProfile = json::from_value("model profile", doc)?;
        self.register_with_counter(p, count)
    }

    /// The host counter for a resolved model: the one registered with the
    /// host entry it matched, if any.
    pub fn host_counter(&self, info: &ModelInfo) -> Option<HostCounter> {
        if info.source != ModelSource::Host {
            return None;
        }
        let matched = info.matched.as_deref()?;
        self.entries.read().iter().find(|e| e.profile.name == matched).and_then(|e| e.counter.clone())
    }

    /// Whether any entry has a counter that calls the host (a front end
    /// that releases its interpreter lock during a call keeps it instead,
    /// since the counter needs it). A model registered from its files
    /// counts with turnfit's own tokenizer and does not count here.
    pub fn has_host_counters(&self) -> bool {
        self.entries.read().iter().any(|e| e.counter.is_some() && !e.native)
    }

    fn register_entry(
        &self,
        mut profile: ModelProfile,
        counter: Option<HostCounter>,
        framing: Option<serde_json::Value>,
        prompt: Option<Arc<dyn PromptModel>>,
        native: bool,
    ) -> Result<()> {
        profile.name = profile.name.to_ascii_lowercase();
        validate(&profile)?;
        let mut entries = self.entries.write();
        let entry = Entry { profile, source: ModelSource::Host, counter, native, framing, prompt };
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
            let p: ModelProfile = json::from_value(&format!("model profile {i}"), item.unwrap_or_default())?;
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

    /// Every entry as [`RegistryEntry`] (the profile plus its `source`), the
    /// shape the CLI's `models --json` and the C ABI's registry list share.
    pub fn list_json(&self) -> Vec<RegistryEntry> {
        self.list().into_iter().map(|(profile, source)| RegistryEntry { profile, source }).collect()
    }

    /// The profile for `model`, by the rules in the module docs. An unknown
    /// model is `UnknownModel`, naming close matches.
    pub fn lookup(&self, model: &str) -> Result<ModelInfo> {
        self.lookup_or(model, None)
    }

    /// Like [`lookup`](Self::lookup), but an unknown model gets `fallback`'s
    /// encoding with unknown limits and `exact: false`.
    pub fn lookup_or(&self, model: &str, fallback: Option<Encoding>) -> Result<ModelInfo> {
        crate::text::check_name("model name", model)?;
        let entries = self.entries.read();
        let candidates = candidates(model);
        let info = |matched: String, source, family, encoding, context_window, max_output_tokens, exact| ModelInfo {
            model: model.to_owned(),
            matched: Some(matched),
            source,
            family,
            encoding,
            context_window,
            max_output_tokens,
            exact,
        };
        for candidate in &candidates {
            if let Some(e) = best_match(&entries, candidate) {
                let p = &e.profile;
                return Ok(info(
                    p.name.clone(),
                    e.source,
                    p.family.clone(),
                    p.encoding,
                    p.context_window,
                    p.max_output_tokens,
                    p.exact,
                ));
            }
        }
        for candidate in &candidates {
            if let Some(f) = self.families.iter().find(|f| matches_parts(&f.parts, candidate)) {
                let n = &f.estimate;
                return Ok(info(
                    f.text.clone(),
                    ModelSource::Family,
                    Some(f.family.clone()),
                    n.encoding,
                    n.context_window,
                    n.max_output_tokens,
                    false,
                ));
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
            "run `turnfit models` for the list, register the model, or pass a fallback encoding (a custom model: its \
             encoding and context_window)"
                .to_owned()
        } else {
            format!("did you mean {}?", close.join(" or "))
        };
        Err(Error::new(ErrorKind::UnknownModel, format!("unknown model '{}'; {hint}", crate::text::clip(model))))
    }

    /// The profile for `model` with the caller's custom figures: `custom`'s
    /// encoding is the fallback for a model the registry does not know (as
    /// in [`lookup_or`](Self::lookup_or)), and its context window and
    /// output limit, when given, replace the registry's (an Azure
    /// deployment or a local model with its own limits). An unknown model
    /// without an encoding is `UnknownModel`, naming close matches; a zero
    /// or absurd figure (above [`crate::limits::MAX_BUDGET_TOKENS`]) is
    /// `InvalidArgument` naming the field.
    pub fn resolve(&self, model: &str, custom: &CustomModel) -> Result<ModelInfo> {
        custom.check()?;
        let mut info = self.lookup_or(model, custom.encoding)?;
        if let Some(n) = custom.context_window {
            info.context_window = Some(n as u64);
        }
        if let Some(n) = custom.max_output_tokens {
            info.max_output_tokens = Some(n as u64);
        }
        Ok(info)
    }

    /// A tokenizer for `model` (see [`lookup_or`](Self::lookup_or)).
    pub fn tokenizer(&self, model: &str, fallback: Option<Encoding>) -> Result<(Tokenizer, ModelInfo)> {
        let info = self.lookup_or(model, fallback)?;
        Ok((Tokenizer::new(info.encoding)?, info))
    }
}

/// The name as given (lowercased), then without routing prefixes, then the
/// base model of a fine-tuned name.
fn candidates(model: &str) -> Vec<String> {
    let name = model.trim().to_ascii_lowercase();
    let mut out = vec![name.clone()];
    let mut rest = name.rsplit('/').next().unwrap_or(&name).to_owned();
    if rest != name {
        out.push(rest.clone());
    }
    // Bedrock-style "vendor.model" and "region.vendor.model" ("us-gov."):
    // strip leading segments of letters and '-' followed by a dot.
    while let Some((head, tail)) = rest.split_once('.') {
        if head.is_empty() || !head.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-') {
            break;
        }
        rest = tail.to_owned();
        out.push(rest.clone());
    }
    // Fine-tuned: "ft:BASE:org:suffix:id" and the legacy "BASE:ft-org-date".
    for i in 0..out.len() {
        let base = match out[i].strip_prefix("ft:") {
            Some(after) => after.split(':').next().unwrap_or(after),
            None => match out[i].split_once(":ft-") {
                Some((base, _)) => base,
                None => continue,
            },
        };
        if !base.is_empty() {
            out.push(base.to_owned());
        }
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
            let rest = name.strip_prefix(stem)?;
            at_boundary(stem, rest).then_some((stem.len(), e))
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
    select_tokenizer_in(&ModelRegistry::builtin(), model, encoding)
}

/// As [`select_tokenizer`], looking the model up in `registry`, so a model
/// the host registered works in skills and handoff options as in a window.
pub fn select_tokenizer_in(
    registry: &ModelRegistry,
    model: Option<&str>,
    encoding: Option<&str>,
) -> Result<crate::Tokenizer> {
    match (model, encoding) {
        (Some(m), _) => Ok(registry.tokenizer(m, None)?.0),
        (None, Some(e)) => crate::Tokenizer::from_name(e),
        (None, None) => crate::Tokenizer::new(crate::Encoding::Cl100kBase),
    }
}

//! Handoffs: what one agent passes to the next when it hands over a task.
//!
//! A handoff is a small JSON object, `{version, task_summary, key_outputs,
//! metadata: {from_agent, to_agent, created_at, trace_id, ...},
//! custom_fields}`, validated strictly so that a malformed one fails where
//! it is produced, not three agents later. The camelCase spellings
//! (`taskSummary`, `keyOutputs`, `customFields`, `fromAgent`, ...) are read
//! too, and an absent `version` is the current one, so the JSON a typed
//! record in another language writes is accepted as it is. It renders as a delimited prompt
//! block (optionally under a token budget, shortening key outputs and
//! saying so), and the conversation handed over with it can be filtered
//! ([`filter`]).
//!
//! Round trip: [`Handoff::to_value`] writes the fields in a fixed order and
//! keeps every custom field and extra metadata field with its value.

mod filter;
mod render;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::limits::MAX_HANDOFF_BYTES;
use crate::{json, Error, ErrorKind, Result};

pub use filter::{filter, filter_json, FilterChange, FilterMode, FilterOptions, FilterResult};
pub use render::{RenderFormat, RenderOptions, RenderResult, ShortenedOutput};

/// The handoff format versions this library reads.
pub const SUPPORTED_VERSIONS: &[&str] = &["1.0"];

/// One key output: a plain string, or `{"label", "content"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum KeyOutput {
    /// A plain string.
    Text(String),
    /// Labelled content (a file name, a URL, a result name).
    Labeled {
        /// What the content is.
        label: String,
        /// The content.
        content: String,
    },
}

impl KeyOutput {
    /// The content text.
    pub fn content(&self) -> &str {
        match self {
            KeyOutput::Text(s) => s,
            KeyOutput::Labeled { content, .. } => content,
        }
    }
    /// The label, if any.
    pub fn label(&self) -> Option<&str> {
        match self {
            KeyOutput::Text(_) => None,
            KeyOutput::Labeled { label, .. } => Some(label),
        }
    }
}

/// Who handed over to whom, when, under which trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Metadata {
    /// The agent handing over.
    pub from_agent: String,
    /// The agent taking over.
    pub to_agent: String,
    /// RFC 3339 timestamp (`2026-03-01T12:00:00Z`).
    pub created_at: String,
    /// Trace id linking the agents' spans, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// Any other metadata fields, kept as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A validated handoff.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Handoff {
    /// Format version (one of [`SUPPORTED_VERSIONS`]).
    pub version: String,
    /// What the task is and where it stands.
    pub task_summary: String,
    /// Results the next agent needs.
    pub key_outputs: Vec<KeyOutput>,
    /// Provenance.
    pub metadata: Metadata,
    /// Host-defined fields, kept as given.
    pub custom_fields: Map<String, Value>,
}

fn bad(path: &str, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidJson, format!("handoff{path}: {what}"))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn req_str(obj: &Map<String, Value>, key: &str, path: &str) -> Result<String> {
    match obj.get(key) {
        None => Err(bad(path, format!("missing required field '{key}'"))),
        Some(Value::String(s)) if s.trim().is_empty() => Err(bad(&format!("{path}.{key}"), "must not be empty")),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(bad(&format!("{path}.{key}"), format!("must be a string, not {}", type_name(v)))),
    }
}

/// Whether `s` is an RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r.clone()).is_some_and(|x| x.iter().all(u8::is_ascii_digit));
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(99);
    if b.len() < 20 || !digits(0..4) || b[4] != b'-' || !digits(5..7) || b[7] != b'-' || !digits(8..10) {
        return false;
    }
    if !matches!(b[10], b'T' | b't' | b' ')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let (month, day, hour, min, sec) = (num(5..7), num(8..10), num(11..13), num(14..16), num(17..19));
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return false;
    }
    let mut i = 19;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match &b[i..] {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', ..] if b.len() - i == 6 => {
            digits(i + 1..i + 3)
                && b[i + 3] == b':'
                && digits(i + 4..i + 6)
                && num(i + 1..i + 3) <= 23
                && num(i + 4..i + 6) <= 59
        }
        _ => false,
    }
}

impl Handoff {
    /// Parses and validates a handoff. The size is checked first
    /// ([`MAX_HANDOFF_BYTES`], `LimitExceeded`); every schema problem is
    /// `InvalidJson` naming the field (`handoff.metadata.created_at: ...`).
    pub fn parse(text: &str) -> Result<Handoff> {
        crate::limits::check("handoff", text.len(), MAX_HANDOFF_BYTES)?;
        let v = json::parse_value("handoff", text)?;
        Handoff::from_value(v)
    }

    /// Validates a parsed JSON value as a handoff.
    pub fn from_value(v: Value) -> Result<Handoff> {
        let Value::Object(mut obj) = v else {
            return Err(bad("", format!("must be an object, not {}", type_name(&v))));
        };
        canonical_names(&mut obj, TOP_ALIASES, "")?;
        for key in obj.keys() {
            if !["version", "task_summary", "key_outputs", "metadata", "custom_fields"].contains(&key.as_str()) {
                return Err(bad("", format!("unknown field '{key}' (put host data in 'custom_fields')")));
            }
        }
        // Absent means the current version (the design documents' handoffs
        // carry none); a version that is given must be one we read.
        if !obj.contains_key("version") {
            obj.insert("version".into(), Value::String(SUPPORTED_VERSIONS[0].into()));
        }
        let version = req_str(&obj, "version", "")?;
        if !SUPPORTED_VERSIONS.contains(&version.as_str()) {
            return Err(bad(
                ".version",
                format!("unsupported version '{version}'; supported: {}", SUPPORTED_VERSIONS.join(", ")),
            ));
        }
        let task_summary = req_str(&obj, "task_summary", "")?;
        let key_outputs = match obj.remove("key_outputs") {
            None => return Err(bad("", "missing required field 'key_outputs' (use [] for none)")),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| key_output(item, &format!(".key_outputs[{i}]")))
                .collect::<Result<Vec<_>>>()?,
            Some(v) => return Err(bad(".key_outputs", format!("must be an array, not {}", type_name(&v)))),
        };
        let metadata = match obj.remove("metadata") {
            None => return Err(bad("", "missing required field 'metadata'")),
            Some(Value::Object(m)) => metadata(m)?,
            Some(v) => return Err(bad(".metadata", format!("must be an object, not {}", type_name(&v)))),
        };
        let custom_fields = match obj.remove("custom_fields") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(v) => return Err(bad(".custom_fields", format!("must be an object, not {}", type_name(&v)))),
        };
        Ok(Handoff { version, task_summary, key_outputs, metadata, custom_fields })
    }

    /// The handoff as JSON (normalized: fixed field order, `custom_fields`
    /// always present, extra metadata fields after the known ones).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The handoff as compact JSON.
    pub fn to_json(&self) -> Result<String> {
        json::to_string(self)
    }
}

fn key_output(v: Value, path: &str) -> Result<KeyOutput> {
    match v {
        Value::String(s) => Ok(KeyOutput::Text(s)),
        Value::Object(o) => {
            for key in o.keys() {
                if key != "label" && key != "content" {
                    return Err(bad(
                        path,
                        format!("unknown field '{key}' (a key output is a string or {{\"label\", \"content\"}})"),
                    ));
                }
            }
            let label = req_str(&o, "label", path)?;
            let content = match o.get("content") {
                None => return Err(bad(path, "missing required field 'content'")),
                Some(Value::String(s)) => s.clone(),
                Some(v) => {
                    return Err(bad(&format!("{path}.content"), format!("must be a string, not {}", type_name(v))))
                }
            };
            Ok(KeyOutput::Labeled { label, content })
        }
        other => Err(bad(
            path,
            format!("must be a string or an object with 'label' and 'content', not {}", type_name(&other)),
        )),
    }
}

/// camelCase spellings accepted for the top-level fields (the JSON a
/// Haskell `deriving (FromJSON, ToJSON)` record or a JavaScript host
/// writes). Output is always snake_case.
const TOP_ALIASES: &[(&str, &str)] =
    &[("task_summary", "taskSummary"), ("key_outputs", "keyOutputs"), ("custom_fields", "customFields")];
/// camelCase spellings accepted inside `metadata`.
const METADATA_ALIASES: &[(&str, &str)] =
    &[("from_agent", "fromAgent"), ("to_agent", "toAgent"), ("created_at", "createdAt"), ("trace_id", "traceId")];

/// Renames each camelCase key to its snake_case name. Both spellings of
/// one field is an error: which one is meant cannot be guessed.
fn canonical_names(obj: &mut Map<String, Value>, aliases: &[(&str, &str)], path: &str) -> Result<()> {
    for (snake, camel) in aliases {
        if let Some(v) = obj.remove(*camel) {
            if obj.contains_key(*snake) {
                return Err(bad(
                    path,
                    format!("'{snake}' and '{camel}' are two spellings of one field; give only one"),
                ));
            }
            obj.insert((*snake).to_owned(), v);
        }
    }
    Ok(())
}

fn metadata(mut m: Map<String, Value>) -> Result<Metadata> {
    let p = ".metadata";
    canonical_names(&mut m, METADATA_ALIASES, p)?;
    let from_agent = req_str(&m, "from_agent", p)?;
    let to_agent = req_str(&m, "to_agent", p)?;
    let created_at = req_str(&m, "created_at", p)?;
    if !is_rfc3339(&created_at) {
        return Err(bad(
            ".metadata.created_at",
            format!("'{created_at}' is not an RFC 3339 date-time (e.g. 2026-03-01T12:00:00Z)"),
        ));
    }
    let trace_id = match m.get("trace_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => return Err(bad(".metadata.trace_id", format!("must be a string, not {}", type_name(v)))),
    };
    for k in ["from_agent", "to_agent", "created_at", "trace_id"] {
        m.remove(k);
    }
    Ok(Metadata { from_agent, to_agent, created_at, trace_id, extra: m })
}

#[cfg(test)]
mod tests;

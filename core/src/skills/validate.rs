//! The skill header read from front-matter, and the Agent Skills rules
//! (<https://agentskills.io/specification>) checked against it. Problems are
//! diagnostics on the one skill, never a failure of the whole set.

use serde::Serialize;
use serde_json::{Map, Value};

use super::frontmatter::kind_name;
use super::Layout;

/// How bad a diagnostic is. Any `Error` makes the skill invalid (left out
/// of the index); warnings are informational.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(rename = "DiagnosticSeverity"))]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The skill is invalid.
    Error,
    /// The skill is usable; something is unusual.
    Warning,
}

/// One finding about one skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Stable code: a validation rule (`name_format`, `description_length`,
    /// ...) or, when the file could not be loaded, the error kind
    /// (`unsafe_path`, `io`, `limit_exceeded`, `invalid_utf8`, `invalid_json`).
    pub code: String,
    /// What is wrong, naming the field or path.
    pub message: String,
}

impl Diagnostic {
    pub(crate) fn error(code: &str, message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Error, code: code.into(), message: message.into() }
    }
    pub(crate) fn warning(code: &str, message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Warning, code: code.into(), message: message.into() }
    }
}

/// Longest skill name (Agent Skills rule).
pub const MAX_NAME_CHARS: usize = 64;
/// Longest description (Agent Skills rule).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest `compatibility` (Agent Skills rule).
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// Longest `label` or `category` of a flat skill.
pub const MAX_LABEL_CHARS: usize = 64;

/// The fields of a skill's front-matter that turnfit understands.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SkillHeader {
    /// `name` (folder layout) or the file stem (flat layout).
    pub name: String,
    /// What the skill does and when to use it.
    pub description: String,
    /// Display label (`label`, either layout; the skill can be requested by
    /// it); None when absent.
    pub label: Option<String>,
    /// `category`, else `metadata.category` (either layout).
    pub category: Option<String>,
    /// `license`.
    pub license: Option<String>,
    /// `compatibility`: environment requirements.
    pub compatibility: Option<String>,
    /// `allowed-tools`: a space-separated string or a list, as a list.
    pub allowed_tools: Vec<String>,
    /// `metadata`: string keys to string values, in file order.
    pub metadata: Map<String, Value>,
}

/// Checks the Agent Skills name rule: 1-64 characters of lowercase ASCII
/// letters, digits and hyphens, not starting or ending with a hyphen, no
/// two hyphens in a row. Returns the problem, if any.
pub fn name_problem(name: &str) -> Option<(&'static str, String)> {
    let n = name.chars().count();
    if n == 0 {
        return Some(("name_length", "name is empty".into()));
    }
    if n > MAX_NAME_CHARS {
        return Some(("name_length", format!("name is {n} characters; the limit is {MAX_NAME_CHARS}")));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')) {
        return Some((
            "name_format",
            format!(
                "name '{name}' contains '{}'; only lowercase letters, digits and hyphens are allowed",
                c.escape_debug()
            ),
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Some(("name_format", format!("name '{name}' must not start or end with a hyphen")));
    }
    if name.contains("--") {
        return Some(("name_format", format!("name '{name}' must not contain consecutive hyphens")));
    }
    None
}

struct Reader<'a> {
    map: &'a Map<String, Value>,
    diags: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn string(&mut self, key: &str) -> Option<String> {
        match self.map.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(v) => {
                self.diags
                    .push(Diagnostic::error("field_type", format!("'{key}' must be a string, not {}", kind_name(v))));
                None
            }
        }
    }

    fn bounded(&mut self, key: &str, max: usize) -> Option<String> {
        let s = self.string(key)?;
        let n = s.chars().count();
        if n == 0 || s.trim().is_empty() {
            self.diags
                .push(Diagnostic::error(&format!("{}_empty", key.replace('-', "_")), format!("'{key}' is empty")));
        } else if n > max {
            self.diags.push(Diagnostic::error(
                &format!("{}_length", key.replace('-', "_")),
                format!("'{key}' is {n} characters; the limit is {max}"),
            ));
        }
        Some(s)
    }
}

/// Reads and checks a header. `entry` is the folder name (folder layout) or
/// file stem (flat layout) that the skill's name must equal.
pub(crate) fn header(map: &Map<String, Value>, entry: &str, layout: Layout) -> (SkillHeader, Vec<Diagnostic>) {
    let mut r = Reader { map, diags: Vec::new() };
    let known: &[&str] = match layout {
        // `label` and `category` are not Agent Skills fields, but skills
        // written for the flat layout use them: kept, with a warning.
        Layout::Folder => {
            &["name", "description", "license", "compatibility", "allowed-tools", "metadata", "label", "category"]
        }
        Layout::Flat => {
            &["name", "label", "description", "category", "license", "compatibility", "allowed-tools", "metadata"]
        }
    };
    let name = match (r.string("name"), layout) {
        (Some(n), _) => {
            if let Some((code, msg)) = name_problem(&n) {
                r.diags.push(Diagnostic::error(code, msg));
            } else if n != entry {
                r.diags.push(Diagnostic::error(
                    "name_mismatch",
                    format!(
                        "name '{n}' does not match its {} '{entry}'",
                        if layout == Layout::Folder { "folder" } else { "file name" }
                    ),
                ));
            }
            n
        }
        (None, Layout::Folder) => {
            if !map.contains_key("name") {
                if map.get("label").is_some_and(Value::is_string) {
                    // The flat layout's front-matter in a folder: usable,
                    // but not portable to other Agent Skills readers.
                    r.diags.push(Diagnostic::warning(
                        "name_missing",
                        format!(
                            "'name' is missing (the Agent Skills format requires it); the folder name '{entry}' is used"
                        ),
                    ));
                } else {
                    r.diags.push(Diagnostic::error("name_missing", "required field 'name' is missing"));
                }
            }
            entry.to_owned()
        }
        (None, Layout::Flat) => {
            if let Some((code, msg)) = name_problem(entry) {
                r.diags.push(Diagnostic::error(code, format!("file name: {msg}")));
            }
            entry.to_owned()
        }
    };
    let description = r.bounded("description", MAX_DESCRIPTION_CHARS);
    if description.is_none() && !map.contains_key("description") {
        r.diags.push(Diagnostic::error("description_missing", "required field 'description' is missing"));
    }
    let label = r.bounded("label", MAX_LABEL_CHARS);
    let license = r.string("license");
    let compatibility = r.bounded("compatibility", MAX_COMPATIBILITY_CHARS);
    let allowed_tools = match map.get("allowed-tools") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        Some(v) => {
            r.diags.push(Diagnostic::error(
                "field_type",
                format!("'allowed-tools' must be a space-separated string or a list of strings, not {}", kind_name(v)),
            ));
            Vec::new()
        }
    };
    let metadata = match map.get("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => {
            for (k, v) in m {
                if !v.is_string() {
                    r.diags.push(Diagnostic::error(
                        "field_type",
                        format!("'metadata.{k}' must be a string, not {} (quote it)", kind_name(v)),
                    ));
                }
            }
            m.clone()
        }
        Some(v) => {
            r.diags
                .push(Diagnostic::error("field_type", format!("'metadata' must be a mapping, not {}", kind_name(v))));
            Map::new()
        }
    };
    let top_category = r.bounded("category", MAX_LABEL_CHARS);
    let meta_category = metadata.get("category").and_then(Value::as_str).map(str::to_owned);
    if layout == Layout::Folder {
        for (key, hint) in [("label", ""), ("category", "; 'metadata.category' is the portable place")] {
            if map.contains_key(key) {
                r.diags.push(Diagnostic::warning(
                    "not_in_spec",
                    format!("'{key}' is not an Agent Skills field; turnfit keeps it, other readers ignore it{hint}"),
                ));
            }
        }
    }
    if let (Some(a), Some(b)) = (&top_category, &meta_category) {
        if a != b {
            r.diags.push(Diagnostic::warning(
                "category_conflict",
                format!("'category' is '{a}' and 'metadata.category' is '{b}'; '{a}' is used"),
            ));
        }
    }
    let category = top_category.or(meta_category);
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            r.diags.push(Diagnostic::warning(
                "unknown_field",
                format!("field '{key}' is not part of the skill format and is ignored"),
            ));
        }
    }
    let h = SkillHeader {
        name,
        description: description.unwrap_or_default(),
        label,
        category,
        license,
        compatibility,
        allowed_tools,
        metadata,
    };
    (h, r.diags)
}

//! Front-matter: the YAML block between `---` lines at the top of a skill
//! file. Discovery reads only this block (at most
//! [`MAX_FRONTMATTER_BYTES`]), so listing a folder never reads bodies, and
//! parses it with serde-saphyr under a budget sized for front-matter:
//! shallow, few nodes, aliases bounded so an alias bomb stops early.

use std::io::{BufRead, BufReader, Read};

use serde_json::{Map, Value};

use crate::limits::{
    MAX_FRONTMATTER_ALIASES, MAX_FRONTMATTER_ALIAS_EVENTS, MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH,
    MAX_FRONTMATTER_NODES,
};
use crate::{Error, ErrorKind, Result};

const NO_FRONTMATTER: &str = "has no front-matter (the file must start with a '---' line)";

/// Whether `e` is [`read_block`]'s "no front-matter" error.
pub(crate) fn is_missing(e: &Error) -> bool {
    e.kind() == ErrorKind::InvalidYaml && e.message().ends_with(NO_FRONTMATTER)
}

/// The raw block and where the body starts (a byte offset in the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    pub yaml: String,
    pub body_offset: u64,
}

fn is_fence(line: &[u8], closing: bool) -> bool {
    let t = line.strip_suffix(b"\n").unwrap_or(line);
    let t = t.strip_suffix(b"\r").unwrap_or(t);
    let t = t.trim_ascii_end();
    t == b"---" || (closing && t == b"...")
}

/// Reads the front-matter block from the start of `reader`. `rel` names the
/// file in messages. No opening `---` is `InvalidYaml` ("no front-matter"),
/// a block over the size cap `LimitExceeded`, bytes that are not UTF-8
/// `InvalidUtf8`, and a missing closing line `InvalidYaml`.
pub(crate) fn read_block(reader: impl Read, rel: &str) -> Result<Block> {
    // One line past the cap is enough to see the closing fence of a block
    // exactly at the cap; nothing further is ever read.
    let cap = (MAX_FRONTMATTER_BYTES + 8) as u64;
    let mut r = BufReader::new(reader.take(cap + 3 + 8));
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line).map_err(|e| Error::new(ErrorKind::Io, format!("'{rel}': {e}")))?;
    let mut offset = line.len() as u64;
    let first = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
    if !is_fence(first, false) || !line.ends_with(b"\n") {
        return Err(Error::new(ErrorKind::InvalidYaml, format!("'{rel}' {NO_FRONTMATTER}")));
    }
    let mut yaml = Vec::new();
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line).map_err(|e| Error::new(ErrorKind::Io, format!("'{rel}': {e}")))?;
        if n == 0 {
            if yaml.len() > MAX_FRONTMATTER_BYTES {
                break;
            }
            return Err(Error::new(ErrorKind::InvalidYaml, format!("'{rel}': front-matter has no closing '---' line")));
        }
        offset += n as u64;
        if is_fence(&line, true) {
            break;
        }
        yaml.extend_from_slice(&line);
        if yaml.len() > MAX_FRONTMATTER_BYTES {
            break;
        }
    }
    crate::limits::check(&format!("front-matter of '{rel}'"), yaml.len(), MAX_FRONTMATTER_BYTES)?;
    let yaml = String::from_utf8(yaml).map_err(|e| {
        Error::new(
            ErrorKind::InvalidUtf8,
            format!("front-matter of '{rel}' is not valid UTF-8 at byte offset {}", e.utf8_error().valid_up_to()),
        )
    })?;
    Ok(Block { yaml, body_offset: offset })
}

fn options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_FRONTMATTER_DEPTH;
    budget.flow_nesting_limit = MAX_FRONTMATTER_DEPTH;
    budget.max_nodes = MAX_FRONTMATTER_NODES;
    budget.max_aliases = MAX_FRONTMATTER_ALIASES;
    budget.max_anchors = MAX_FRONTMATTER_ALIASES;
    budget.max_documents = 1;
    budget.max_events = 4 * MAX_FRONTMATTER_NODES;
    budget.max_total_scalar_bytes = MAX_FRONTMATTER_BYTES;
    budget.max_recorded_anchor_events = MAX_FRONTMATTER_ALIAS_EVENTS;
    budget.max_recorded_anchor_bytes = MAX_FRONTMATTER_BYTES;
    let mut o = serde_saphyr::Options::default();
    o.budget = Some(budget);
    o.alias_limits.max_total_replayed_events = MAX_FRONTMATTER_ALIAS_EVENTS;
    o.alias_limits.max_replay_stack_depth = MAX_FRONTMATTER_DEPTH;
    o.strict_booleans = true;
    o.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    o.merge_keys = serde_saphyr::MergeKeyPolicy::Error;
    o
}

/// Parses a front-matter block into a JSON object. A budget breach (depth,
/// nodes, aliases) is `LimitExceeded`; malformed YAML, or a block that is
/// not a mapping, is `InvalidYaml` (the status for malformed structured
/// input) with the parser's line and column.
pub(crate) fn parse(yaml: &str, rel: &str) -> Result<Map<String, Value>> {
    let value: Value = serde_saphyr::from_str_with_options(yaml, options()).map_err(|e| {
        let inner = e.without_snippet();
        use serde_saphyr::Error as E;
        let kind = match inner {
            E::Budget { .. }
            | E::AliasReplayCounterOverflow { .. }
            | E::AliasReplayLimitExceeded { .. }
            | E::AliasExpansionLimitExceeded { .. }
            | E::AliasReplayStackDepthExceeded { .. } => ErrorKind::LimitExceeded,
            // The scanner's flow-nesting guard (`[[[[...`) reports this way.
            e if e.to_string().starts_with("recursion limit exceeded") => ErrorKind::LimitExceeded,
            _ => ErrorKind::InvalidYaml,
        };
        let msg = inner.to_string().replace('\n', " ");
        Error::new(kind, format!("front-matter of '{rel}': {msg}"))
    })?;
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Err(Error::new(ErrorKind::InvalidYaml, format!("front-matter of '{rel}' is empty"))),
        other => Err(Error::new(
            ErrorKind::InvalidYaml,
            format!("front-matter of '{rel}' must be a mapping, not {}", kind_name(&other)),
        )),
    }
}

pub(crate) fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

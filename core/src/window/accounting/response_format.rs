//! The `response_format` `json_schema` section OpenAI adds to the prompt for
//! structured output. The layout is the one openai/harmony documents for
//! "Structured output" (docs/format.md): `# Response Formats`, `## {name}`,
//! an optional `// {description}` line, then the schema as JSON, at the end
//! of the system (developer) message.
//!
//! Checked against billed usage (docs/accuracy.md, tuning set only):
//! - the schema's `title` keywords are not billed: a schema with no
//!   descriptions (pydantic's `title` on every property) is billed exactly
//!   its title-less compact JSON plus a constant;
//! - the section joins the first system or developer message after a blank
//!   line (a message ending in `.` merges with the `\n\n`, one ending in a
//!   word does not, and the billed figures differ by exactly that token);
//!   with no such message it is a system message of its own.
//!
//! What else OpenAI does to the schema is not known: beyond the rules above
//! the recorded requests are billed between 11 under and 8 over, varying
//! with the schema (descriptions, `anyOf`, defaults) in no way found yet.
//! [`RESPONSE_FORMAT_EXTRA`] is fitted so that none is counted under by
//! more than 3.

use serde_json::{Map, Value};

/// Tokens added to every structured-output section on top of its text:
/// fitted on the tuning set as the smallest constant leaving no request
/// counted more than 3 under billed (the most common residual is 3).
pub const RESPONSE_FORMAT_EXTRA: usize = 8;

/// The section text for a `response_format` value, or None when it is not
/// a `json_schema` format.
pub(super) fn section(rf: &Value) -> Option<String> {
    if rf.get("type").and_then(Value::as_str) != Some("json_schema") {
        return None;
    }
    let js = rf.get("json_schema")?;
    let name = js.get("name").and_then(Value::as_str).unwrap_or("");
    let mut out = format!("# Response Formats\n\n## {name}\n\n");
    if let Some(d) = js.get("description").and_then(Value::as_str) {
        out.push_str(&format!("// {d}\n"));
    }
    if let Some(schema) = js.get("schema") {
        out.push_str(&without_titles(schema).to_string());
    }
    Some(out)
}

/// `schema` with every `title` keyword removed. Keys of `properties`,
/// `$defs`, `definitions` and `patternProperties` are names, not keywords:
/// a property called `title` stays.
pub(super) fn without_titles(schema: &Value) -> Value {
    match schema {
        Value::Object(o) => {
            let mut out = Map::new();
            for (k, v) in o {
                if k == "title" && v.is_string() {
                    continue;
                }
                let v = if matches!(k.as_str(), "properties" | "$defs" | "definitions" | "patternProperties") {
                    match v {
                        Value::Object(named) => {
                            Value::Object(named.iter().map(|(n, s)| (n.clone(), without_titles(s))).collect())
                        }
                        other => other.clone(),
                    }
                } else {
                    without_titles(v)
                };
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(without_titles).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_go_property_names_stay() {
        let rf: Value = serde_json::from_str(
            r#"{"type":"json_schema","json_schema":{"name":"Book","schema":{"title":"Book","type":"object",
            "properties":{"title":{"title":"Title","type":"string"}},"required":["title"]}}}"#,
        )
        .unwrap();
        assert_eq!(
            section(&rf).unwrap(),
            "# Response Formats\n\n## Book\n\n{\"type\":\"object\",\"properties\":{\"title\":{\"type\":\"string\"}},\"required\":[\"title\"]}"
        );
        assert!(section(&serde_json::json!({"type": "json_object"})).is_none());
    }
}

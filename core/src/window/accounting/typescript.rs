//! OpenAI's TypeScript-like rendering of function tools, as the model sees
//! them: a `# Tools` section with `namespace functions { ... }`, one
//! `type name = (_: { ... }) => any;` per function, descriptions as `//`
//! comments. The rules follow the renderer OpenAI publishes with its
//! harmony format (openai/harmony); the counts it gives were checked
//! against billed usage (docs/accuracy.md).

use serde_json::{Map, Value};

use crate::chat::Tool;

/// The named definitions a schema's local `$ref`s point into (`$defs`, or
/// the older `definitions`), and the names being expanded (a recursive
/// definition renders as `any` the second time instead of looping).
#[derive(Clone, Copy)]
struct Defs<'a> {
    defs: Option<&'a Map<String, Value>>,
    open: &'a [&'a str],
}

impl<'a> Defs<'a> {
    fn of(root: &'a Value) -> Defs<'a> {
        let defs = root.get("$defs").or_else(|| root.get("definitions")).and_then(Value::as_object);
        Defs { defs, open: &[] }
    }

    /// The definition `s` refers to (`#/$defs/Name` or `#/definitions/Name`),
    /// unless it is already being expanded.
    fn target(&self, s: &Value) -> Option<(&'a str, &'a Value)> {
        let r = s.get("$ref")?.as_str()?;
        let name = r.strip_prefix("#/$defs/").or_else(|| r.strip_prefix("#/definitions/"))?;
        let (key, def) = self.defs?.get_key_value(name)?;
        (!self.open.contains(&key.as_str())).then_some((key.as_str(), def))
    }
}

/// The `# Tools` section for `tools`.
pub(super) fn render(tools: &[Tool]) -> String {
    let mut lines = vec!["## functions\n".to_owned(), "namespace functions {\n".to_owned()];
    for t in tools {
        for l in t.description.as_deref().unwrap_or("").lines() {
            lines.push(format!("// {l}"));
        }
        if t.parameters.is_null() {
            lines.push(format!("type {} = () => any;\n", t.name));
        } else {
            lines.push(format!("type {} = (_: {}) => any;\n", t.name, ty(&t.parameters, "", Defs::of(&t.parameters))));
        }
    }
    lines.push("} // namespace functions".to_owned());
    format!("# Tools\n\n{}", lines.join("\n"))
}

/// Whether a tool's parameters hold an object nested in a property
/// (directly, as array items, or through a local `$ref`): a shape whose
/// rendering is not resolved (see `EstimateReason::NestedToolSchema`).
pub(super) fn has_nested_object(parameters: &Value) -> bool {
    let defs = Defs::of(parameters);
    let props = parameters.get("properties").and_then(Value::as_object);
    props.is_some_and(|p| p.values().any(|v| is_object(v, defs, 0)))
}

/// Whether `s` (resolving `$ref`s and array items) is an object with
/// properties. `depth` bounds recursion through self-referring schemas.
fn is_object(s: &Value, defs: Defs<'_>, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    if let Some((_, def)) = defs.target(s) {
        return is_object(def, defs, depth + 1);
    }
    let typed_object = s.get("type").and_then(Value::as_str) == Some("object");
    if typed_object && s.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty()) {
        return true;
    }
    let items = s.get("items").is_some_and(|i| is_object(i, defs, depth + 1));
    let variants = ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| s.get(*k).and_then(Value::as_array))
        .any(|vs| vs.iter().any(|v| is_object(v, defs, depth + 1)));
    items || variants
}

fn is_enum(s: &Value) -> bool {
    s.get("enum").and_then(Value::as_array).is_some_and(|a| !a.is_empty())
}

fn default_comment(d: &Value, s: &Value) -> String {
    match d {
        Value::String(v) if !is_enum(s) => format!("default: \"{v}\""),
        Value::String(v) => format!("default: {v}"),
        other => format!("default: {other}"),
    }
}

/// The TypeScript type of schema `s`, nested properties indented by `indent`.
/// A local `$ref` is rendered as the definition it names (with the
/// referring schema's own keywords, such as a `description`, on top):
/// harmony's renderer leaves it `any`, but OpenAI bills the expanded type
/// (tool schemas from pydantic models with nested models were 57 tokens
/// under billed before; see docs/accuracy.md).
fn ty(s: &Value, indent: &str, defs: Defs<'_>) -> String {
    if let Some((name, def)) = defs.target(s) {
        let mut merged = def.clone();
        if let (Some(m), Some(own)) = (merged.as_object_mut(), s.as_object()) {
            for (k, v) in own.iter().filter(|(k, _)| k.as_str() != "$ref") {
                m.insert(k.clone(), v.clone());
            }
        }
        let open: Vec<&str> = defs.open.iter().copied().chain([name]).collect();
        return ty(&merged, indent, Defs { defs: defs.defs, open: &open });
    }
    let Some(obj) = s.as_object() else {
        return "any".into();
    };
    if let Some(variants) = obj.get("oneOf").and_then(Value::as_array) {
        let deeper = format!("{indent}   ");
        return variants.iter().map(|v| format!("\n{indent} | {}", ty(v, &deeper, defs))).collect();
    }
    if obj.get("type").is_some_and(Value::is_array) {
        // A union `type` (`["string", "null"]`, what strict-mode schemas use
        // for an optional field) is billed as if the schema were written
        // out as compact JSON after the property's comments: harmony's
        // renderer writes `string | null`, 21 tokens fewer than OpenAI
        // bills for the one such schema recorded (docs/accuracy.md).
        return s.to_string();
    }
    match obj.get("type").and_then(Value::as_str) {
        Some("object") => {
            let mut out = String::new();
            if let Some(d) = obj.get("description").and_then(Value::as_str) {
                out.push_str(&format!("{indent}// {d}\n"));
            }
            out.push_str("{\n");
            let required: Vec<&str> = obj
                .get("required")
                .and_then(Value::as_array)
                .map_or_else(Vec::new, |r| r.iter().filter_map(Value::as_str).collect());
            let empty = serde_json::Map::new();
            let props = obj.get("properties").and_then(Value::as_object).unwrap_or(&empty);
            let deeper = format!("{indent}    ");
            for (key, v) in props {
                if let Some(t) = v.get("title").and_then(Value::as_str) {
                    out.push_str(&format!("{indent}// {t}\n{indent}//\n"));
                }
                let one_of = v.get("oneOf").is_some();
                if !one_of {
                    if let Some(d) = v.get("description").and_then(Value::as_str) {
                        out.push_str(&format!("{indent}// {d}\n"));
                    }
                }
                if let Some(ex) = v.get("examples").and_then(Value::as_array).filter(|e| !e.is_empty()) {
                    out.push_str(&format!("{indent}// Examples:\n"));
                    for e in ex.iter().filter_map(Value::as_str) {
                        out.push_str(&format!("{indent}// - \"{e}\"\n"));
                    }
                }
                let opt = if required.contains(&key.as_str()) { "" } else { "?" };
                out.push_str(&format!("{indent}{key}{opt}: {},", ty(v, &deeper, defs)));
                if let (false, Some(d)) = (one_of, v.get("default")) {
                    out.push_str(&format!(" // {}", default_comment(d, v)));
                }
                out.push('\n');
            }
            out.push_str(&format!("{indent}}}"));
            out
        }
        Some("string") => {
            let values: Vec<String> = obj
                .get("enum")
                .and_then(Value::as_array)
                .map_or_else(Vec::new, |e| e.iter().filter_map(Value::as_str).map(|v| format!("\"{v}\"")).collect());
            if values.is_empty() {
                "string".into()
            } else {
                values.join(" | ")
            }
        }
        Some("number" | "integer") => "number".into(),
        Some("boolean") => "boolean".into(),
        Some("array") => match obj.get("items") {
            Some(items) => format!("{}[]", ty(items, indent, defs)),
            None => "Array<any>".into(),
        },
        _ => "any".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(parameters: Value) -> Tool {
        Tool { name: "f".into(), description: None, parameters, raw: Value::Null }
    }

    #[test]
    fn nested_objects_are_found_through_items_and_refs() {
        let flat = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array",
                          "items": {"type": "string"}}}});
        assert!(!has_nested_object(&flat));
        let direct = json!({"properties": {"o": {"type": "object", "properties": {"x": {"type": "string"}}}}});
        assert!(has_nested_object(&direct));
        let via_ref = json!({"$defs": {"E": {"type": "object", "properties": {"n": {"type": "string"}}}},
                             "properties": {"es": {"type": "array", "items": {"$ref": "#/$defs/E"}}}});
        assert!(has_nested_object(&via_ref));
        // A self-referring definition ends.
        let looped = json!({"$defs": {"L": {"type": "array", "items": {"$ref": "#/$defs/L"}}},
                            "properties": {"l": {"$ref": "#/$defs/L"}}});
        assert!(!has_nested_object(&looped));
        assert!(!has_nested_object(&Value::Null));
    }

    /// A union `type` is written as the schema's compact JSON.
    #[test]
    fn union_type_is_rendered_as_json() {
        let p = json!({"type": "object", "properties": {"t": {"description": "d", "type": ["string", "null"]}},
                       "required": ["t"]});
        let out = render(&[tool(p)]);
        assert!(out.contains("// d\nt: {\"description\":\"d\",\"type\":[\"string\",\"null\"]},\n"), "{out}");
    }
}

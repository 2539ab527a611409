//! Section content given as JSON, rendered as prompt text. Hosts hand over
//! the state they already hold (lists of constraints, a user profile, an
//! execution record), so the rendering is fixed and documented rather than
//! left to each host: the same value always gives the same text.
//!
//! - a string is written as is;
//! - `null` is nothing; `true`, `false` and numbers are their JSON text;
//! - a list is one `- ` line per item;
//! - an object is one `key: value` line per key, in the order given;
//! - a list or object inside another is written on the lines below its
//!   bullet or key, indented by two spaces, except that an object in a
//!   list starts on the bullet's line (`- key: value`, the other keys
//!   under it); an empty one is `[]` or `{}`;
//! - a string of several lines keeps its lines, the later ones indented to
//!   the depth of the first.

use serde_json::Value;

/// The text of a section whose content is `v`.
pub fn render(v: &Value) -> String {
    let mut out = Vec::new();
    match v {
        Value::Array(items) if !items.is_empty() => list(items, 0, &mut out),
        Value::Object(map) if !map.is_empty() => object(map, 0, &mut out),
        Value::Array(_) | Value::Object(_) | Value::Null => {}
        scalar => out.push(scalar_text(scalar)),
    }
    out.join("\n")
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn pad(depth: usize) -> String {
    "  ".repeat(depth)
}

/// Pushes `first` + the lines of `text`, continuation lines indented to `depth`.
fn push_lines(first: String, text: &str, depth: usize, out: &mut Vec<String>) {
    let mut lines = text.split('\n');
    out.push(format!("{first}{}", lines.next().unwrap_or("")).trim_end().to_owned());
    for l in lines {
        out.push(format!("{}{l}", pad(depth)).trim_end().to_owned());
    }
}

fn nested(v: &Value, head: String, depth: usize, out: &mut Vec<String>) {
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push(head.trim_end().to_owned());
            list(items, depth + 1, out);
        }
        Value::Object(map) if !map.is_empty() => {
            out.push(head.trim_end().to_owned());
            object(map, depth + 1, out);
        }
        Value::Array(_) => out.push(format!("{head}[]")),
        Value::Object(_) => out.push(format!("{head}{{}}")),
        scalar => push_lines(head, &scalar_text(scalar), depth + 1, out),
    }
}

fn list(items: &[Value], depth: usize, out: &mut Vec<String>) {
    for item in items {
        match item {
            // An object's first key goes on the bullet line, the others
            // under it (as YAML writes a list of mappings).
            Value::Object(map) if !map.is_empty() => {
                let first = out.len();
                object(map, depth + 1, out);
                out[first] = format!("{}- {}", pad(depth), &out[first][2 * (depth + 1)..]);
            }
            _ => nested(item, format!("{}- ", pad(depth)), depth, out),
        }
    }
}

fn object(map: &serde_json::Map<String, Value>, depth: usize, out: &mut Vec<String>) {
    for (k, v) in map {
        nested(v, format!("{}{k}: ", pad(depth)), depth, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_lists_objects_and_nesting() {
        assert_eq!(render(&json!("plain\ntext")), "plain\ntext");
        assert_eq!(render(&json!(null)), "");
        assert_eq!(render(&json!(3)), "3");
        assert_eq!(render(&json!(true)), "true");
        assert_eq!(render(&json!([])), "");
        assert_eq!(render(&json!(["a", 1, null])), "- a\n- 1\n-");
        assert_eq!(render(&json!({"b": "x", "a": 2})), "b: x\na: 2", "keys in the order given");
        let v = json!({
            "workflow_id": "wf-7",
            "constraints": ["no network", {"max_depth": 5}],
            "empty": [],
            "user": {"name": "Ada", "prefs": {}},
            "note": "line one\nline two"
        });
        assert_eq!(
            render(&v),
            "workflow_id: wf-7\nconstraints:\n  - no network\n  - max_depth: 5\nempty: []\nuser:\n  name: Ada\n  prefs: {}\nnote: line one\n  line two"
        );
        assert_eq!(render(&json!([["x", "y"], {"k": "v", "j": "w"}])), "-\n  - x\n  - y\n- k: v\n  j: w");
    }

    #[test]
    fn deep_nesting_renders_without_recursion_trouble_at_the_json_limit() {
        // serde_json refuses nesting past 128 levels, so the renderer never
        // sees deeper input; 120 levels render one line per level.
        let mut v = json!("leaf");
        for _ in 0..120 {
            v = json!([v]);
        }
        let text = render(&v);
        assert_eq!(text.lines().count(), 120);
        assert!(text.ends_with("- leaf"));
    }
}

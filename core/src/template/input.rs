//! What a template sees: the conversation's JSON turned into template values
//! the way transformers hands them to jinja2 (`_plain_template_data`, then
//! `_alias_reasoning_fields`), plus one rule of llama.cpp's: a `content: null`
//! is rendered as an empty string. Keys keep their order, as Python dicts do.

use minijinja::Value;
use serde_json::Value as Json;

/// Names a message's reasoning may come under; transformers fills the first
/// (`reasoning_content`) and `thinking` (gpt-oss's templates read it) from
/// whichever is set first.
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// A JSON value as Python's `json.loads` would give it: numbers written with
/// a `.` or an exponent are floats, others integers (of any size up to i128).
pub(super) fn to_value(json: &Json) -> Value {
    match json {
        Json::Null => Value::from(()),
        Json::Bool(b) => Value::from(*b),
        Json::Number(n) => {
            let text = n.to_string();
            if text.contains(['.', 'e', 'E']) {
                Value::from(text.parse::<f64>().unwrap_or(f64::NAN))
            } else if let Ok(i) = text.parse::<i128>() {
                Value::from(i)
            } else {
                Value::from(text.parse::<f64>().unwrap_or(f64::NAN))
            }
        }
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::from(items.iter().map(to_value).collect::<Vec<_>>()),
        Json::Object(map) => map_value(map.iter().map(|(k, v)| (Value::from(k.as_str()), to_value(v)))),
    }
}

/// One message as the template sees it: `content: null` becomes `""`
/// (llama.cpp's rendering; jinja2 would print `None`), and the reasoning is
/// aliased as transformers does: `{"thinking": r, **message,
/// "reasoning_content": r}`, which keeps an existing key where it was.
pub(super) fn message_value(message: &Json) -> Value {
    let Json::Object(map) = message else { return to_value(message) };
    let reasoning = REASONING_FIELDS.iter().find_map(|k| map.get(*k).filter(|v| !v.is_null()));
    let mut pairs: Vec<(String, Value)> = Vec::with_capacity(map.len() + 2);
    if let Some(r) = reasoning {
        pairs.push(("thinking".into(), to_value(r)));
    }
    for (k, v) in map {
        let value = if k == "content" && v.is_null() { Value::from("") } else { to_value(v) };
        match pairs.iter_mut().find(|(name, _)| name == k) {
            Some(slot) => slot.1 = value,
            None => pairs.push((k.clone(), value)),
        }
    }
    if let Some(r) = reasoning {
        match pairs.iter_mut().find(|(name, _)| name == "reasoning_content") {
            Some(slot) => slot.1 = to_value(r),
            None => pairs.push(("reasoning_content".into(), to_value(r))),
        }
        if let Some(slot) = pairs.iter_mut().find(|(name, _)| name == "thinking") {
            slot.1 = to_value(r);
        }
    }
    map_value(pairs.into_iter().map(|(k, v)| (Value::from(k), v)))
}

/// A map value that keeps its keys in the order given.
pub(super) fn map_value(pairs: impl Iterator<Item = (Value, Value)>) -> Value {
    Value::from(pairs.collect::<indexmap::IndexMap<Value, Value>>())
}

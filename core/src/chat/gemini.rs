//! Gemini `generateContent` codec: a request's `contents`, its
//! `systemInstruction` and its `tools[].functionDeclarations`.
//!
//! Every entry of `contents` is one [`Message`]: role `user` (or no role)
//! is the user, `model` is the assistant. A `functionCall` part is a tool
//! call and a `functionResponse` part is a result, so Gemini has Anthropic's
//! shape: the model's calls are answered by parts of the next user content.
//!
//! **Pairing.** A call or a response that carries an `id` is named by it.
//! One without an `id` is named by its function `name`, and the window pairs
//! per occurrence (`window::pairing`): a response answers the nearest earlier
//! call of its name that is still unanswered, the earliest of a turn first.
//! That is "by name and order within the round". Repeating a name is how
//! id-less Gemini histories look, so `validate` does not report it as a
//! reused id. A response without an `id` answering a call that has one is an
//! orphan: send the call's `id` back.
//!
//! Both camelCase and snake_case keys are read (`functionCall` or
//! `function_call`), as the API's JSON mapping accepts both; everything is
//! written back as given. `generationConfig`, `toolConfig`, `safetySettings`
//! and `cachedContent` are kept untouched in the envelope.
//!
//! Counting is an estimate: Gemini's tokenizer is not public, so the model
//! registry counts Gemini models with a proxy encoding (docs/formats.md).

use serde_json::{json, Map, Value};

use super::{
    bad, block_text, image_size, pdf_pages, str_field, Conversation, Format, Message, Part, Role, Tool, ToolCall,
};
use crate::Result;

/// The value of `camel` (or its snake_case spelling `snake`) in `obj`.
fn get<'a>(obj: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    obj.get(camel).or_else(|| obj.get(snake)).filter(|v| !v.is_null())
}

pub(super) fn parse(doc: Value) -> Result<Conversation> {
    let Value::Object(mut obj) = doc else {
        return Err(bad("", "must be an object with 'contents' or an array of contents"));
    };
    // The key's slot in the envelope, absent or not, so a document read
    // without it and the one written back (which has it) read the same
    // (a `chat_codecs` finding, issue 33's forced-format seeds).
    let items = match Some(obj.entry("contents").or_insert(Value::Null).take()) {
        Some(Value::Array(items)) => items,
        Some(Value::Null) | None => Vec::new(),
        Some(_) => return Err(bad("contents", "must be an array")),
    };
    let sys_key = if obj.contains_key("system_instruction") { "system_instruction" } else { "systemInstruction" };
    let raw_system = obj.get_mut(sys_key).map(Value::take).filter(|v| !v.is_null());
    let system = match &raw_system {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Object(o)) => Some(system_text(o, sys_key)?),
        Some(_) => return Err(bad(sys_key, "must be a content object or a string")),
    };
    let tools = tools(obj.get("tools"))?;
    let messages = items.into_iter().enumerate().map(|(i, m)| message(m, i)).collect::<Result<Vec<_>>>()?;
    Ok(Conversation { format: Format::Gemini, system, messages, tools, envelope: Some(obj), raw_system })
}

/// A bare array of contents, read as a request holding only them.
pub(super) fn parse_bare(items: Vec<Value>) -> Result<Conversation> {
    let messages = items.into_iter().enumerate().map(|(i, m)| message(m, i)).collect::<Result<Vec<_>>>()?;
    Ok(Conversation {
        format: Format::Gemini,
        system: None,
        messages,
        tools: Vec::new(),
        envelope: None,
        raw_system: None,
    })
}

fn system_text(o: &Map<String, Value>, key: &str) -> Result<String> {
    let mut texts = Vec::new();
    match o.get("parts") {
        None | Some(Value::Null) => {}
        Some(Value::Array(parts)) => {
            for (j, p) in parts.iter().enumerate() {
                let path = format!("{key}.parts[{j}]");
                let p = p.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
                match str_field(p, "text", &path)? {
                    Some(t) => texts.push(t),
                    None => return Err(bad(&path, "system instruction parts must be text")),
                }
            }
        }
        Some(_) => return Err(bad(key, "'parts' must be an array")),
    }
    Ok(texts.join("\n"))
}

pub(super) fn message(raw: Value, i: usize) -> Result<Message> {
    let path = format!("contents[{i}]");
    let obj = raw.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
    let role = match str_field(obj, "role", &path)? {
        // A single-turn request may leave the role out: it is the user's.
        None | Some("user") => Role::User,
        Some("model") => Role::Assistant,
        // Older SDKs send functionResponse parts under role "function".
        Some("function" | "tool") => Role::User,
        Some(other) => return Err(bad(&path, format!("unknown role '{other}' (Gemini contents are user or model)"))),
    };
    let mut m = Message::new(role, None, Vec::new(), Vec::new(), None, Value::Null);
    match obj.get("parts") {
        None | Some(Value::Null) => {}
        Some(Value::Array(parts)) => {
            for (j, p) in parts.iter().enumerate() {
                part(p, &format!("{path}.parts[{j}]"), &mut m)?;
            }
        }
        Some(_) => return Err(bad(&path, "'parts' must be an array")),
    }
    m.raw = raw;
    Ok(m)
}

fn part(p: &Value, path: &str, m: &mut Message) -> Result<()> {
    let obj = p.as_object().ok_or_else(|| bad(path, "must be an object"))?;
    if let Some(call) = get(obj, "functionCall", "function_call") {
        let c = call.as_object().ok_or_else(|| bad(path, "functionCall must be an object"))?;
        let name = str_field(c, "name", path)?.ok_or_else(|| bad(path, "functionCall has no 'name'"))?;
        let id = str_field(c, "id", path)?.unwrap_or(name);
        let arguments = c.get("args").filter(|v| !v.is_null()).map_or_else(String::new, Value::to_string);
        m.tool_calls.push(ToolCall { id: id.to_owned(), name: name.to_owned(), arguments });
        return Ok(());
    }
    if let Some(resp) = get(obj, "functionResponse", "function_response") {
        let r = resp.as_object().ok_or_else(|| bad(path, "functionResponse must be an object"))?;
        let name = str_field(r, "name", path)?.ok_or_else(|| bad(path, "functionResponse has no 'name'"))?;
        let id = str_field(r, "id", path)?.unwrap_or(name);
        let response = r.get("response").filter(|v| !v.is_null());
        if response.is_some_and(|v| !v.is_object()) {
            return Err(bad(path, "functionResponse 'response' must be an object"));
        }
        let is_error =
            response.and_then(|v| v.as_object()).is_some_and(|o| o.contains_key("error") && !o.contains_key("output"));
        m.parts.push(Part::ToolResult {
            id: id.to_owned(),
            text: response.map_or_else(String::new, response_text),
            is_error,
        });
        return Ok(());
    }
    let thought = obj.get("thought").and_then(Value::as_bool) == Some(true);
    if let Some(text) = obj.get("text").filter(|v| !v.is_null()) {
        let text = text.as_str().ok_or_else(|| bad(path, "'text' must be a string"))?.to_owned();
        m.parts.push(if thought { Part::Thinking(text) } else { Part::Text(text) });
        return Ok(());
    }
    if let Some(blob) = get(obj, "inlineData", "inline_data") {
        let b = blob.as_object().ok_or_else(|| bad(path, "inlineData must be an object"))?;
        let mime = get(b, "mimeType", "mime_type").and_then(Value::as_str).unwrap_or_default();
        let data = str_field(b, "data", path)?.unwrap_or_default();
        m.parts.push(media(mime, Some(data)));
        return Ok(());
    }
    if let Some(file) = get(obj, "fileData", "file_data") {
        let f = file.as_object().ok_or_else(|| bad(path, "fileData must be an object"))?;
        let mime = get(f, "mimeType", "mime_type").and_then(Value::as_str).unwrap_or_default();
        m.parts.push(media(mime, None));
        return Ok(());
    }
    if let Some(code) = get(obj, "executableCode", "executable_code") {
        m.parts.push(Part::Block { kind: "executableCode".into(), text: block_text(code) });
        return Ok(());
    }
    if let Some(out) = get(obj, "codeExecutionResult", "code_execution_result") {
        m.parts.push(Part::Block { kind: "codeExecutionResult".into(), text: block_text(out) });
        return Ok(());
    }
    // A part holding only a thought signature (or nothing turnfit knows):
    // an unknown part is counted by its text, a bare signature by nothing.
    let kind = obj.keys().find(|k| !matches!(k.as_str(), "thought" | "thoughtSignature" | "thought_signature"));
    if let Some(kind) = kind {
        m.parts.push(Part::Block { kind: kind.clone(), text: block_text(p) });
    }
    Ok(())
}

/// An inline or referenced file, by its MIME type: an image (sized from its
/// header when the data is inline), a PDF (pages counted when inline), or an
/// attachment estimate.
fn media(mime: &str, data: Option<&str>) -> Part {
    if mime.starts_with("image/") {
        let (width, height) = data.and_then(image_size).map_or((None, None), |(w, h)| (Some(w), Some(h)));
        return Part::Image { detail: None, width, height };
    }
    match (mime, data) {
        ("application/pdf", Some(d)) => Part::Pdf { pages: pdf_pages(d) },
        (m, _) if m.starts_with("audio/") => Part::Attachment("audio"),
        (m, _) if m.starts_with("video/") => Part::Attachment("video"),
        _ => Part::Attachment("file"),
    }
}

/// The text a function response carries: the value of a one-key response
/// whose value is a string (`{"result": "..."}`), else the response as
/// compact JSON, which is what the model is shown.
fn response_text(v: &Value) -> String {
    if let Some(o) = v.as_object() {
        if let (1, Some(Value::String(s))) = (o.len(), o.values().next()) {
            return s.clone();
        }
    }
    v.to_string()
}

fn tools(v: Option<&Value>) -> Result<Vec<Tool>> {
    let list = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(bad("tools", "must be an array")),
    };
    let mut out = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let path = format!("tools[{i}]");
        let obj = entry.as_object().ok_or_else(|| bad(&path, "must be an object"))?;
        let key =
            if obj.contains_key("function_declarations") { "function_declarations" } else { "functionDeclarations" };
        match obj.get(key) {
            Some(Value::Array(decls)) => {
                for (j, d) in decls.iter().enumerate() {
                    out.push(declaration(d, &format!("{path}.{key}[{j}]"))?);
                }
            }
            Some(Value::Null) | None => {
                // A built-in tool (googleSearch, codeExecution, urlContext...):
                // named by its key, counted by what it holds.
                let name = obj.keys().next().cloned().unwrap_or_default();
                out.push(Tool { name, description: None, parameters: Value::Null, raw: entry.clone() });
            }
            Some(_) => return Err(bad(&path, format!("'{key}' must be an array"))),
        }
    }
    Ok(out)
}

fn declaration(d: &Value, path: &str) -> Result<Tool> {
    let obj = d.as_object().ok_or_else(|| bad(path, "must be an object"))?;
    let name = str_field(obj, "name", path)?.ok_or_else(|| bad(path, "has no 'name'"))?.to_owned();
    let description = str_field(obj, "description", path)?.map(str::to_owned);
    let parameters = get(obj, "parameters", "parameters_json_schema")
        .or_else(|| obj.get("parametersJsonSchema"))
        .cloned()
        .unwrap_or(Value::Null);
    Ok(Tool { name, description, parameters, raw: d.clone() })
}

/// Writes the tool views back into the request's `tools`: every entry as
/// given while its declarations are still the views, in order; a declaration
/// no longer among the views is left out (an entry left empty goes), and
/// views that were not there are added as one `functionDeclarations` entry.
pub(super) fn write_tools(original: Option<&Value>, views: &[Tool]) -> Option<Value> {
    let mut next = 0;
    let mut out = Vec::new();
    for entry in original.and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]) {
        let key = ["functionDeclarations", "function_declarations"]
            .into_iter()
            .find(|k| entry.get(k).is_some_and(Value::is_array));
        match key {
            Some(key) => {
                let decls = entry[key].as_array().map(Vec::as_slice).unwrap_or(&[]);
                let kept: Vec<Value> = decls
                    .iter()
                    .filter(|d| {
                        let keep = views.get(next).is_some_and(|t| &t.raw == *d);
                        next += usize::from(keep);
                        keep
                    })
                    .cloned()
                    .collect();
                if kept.len() == decls.len() {
                    out.push(entry.clone());
                } else if !kept.is_empty() {
                    let mut e = entry.clone();
                    e[key] = Value::Array(kept);
                    out.push(e);
                }
            }
            None if views.get(next).is_some_and(|t| &t.raw == entry) => {
                next += 1;
                out.push(entry.clone());
            }
            None => {}
        }
    }
    if next < views.len() {
        out.push(json!({"functionDeclarations": views[next..].iter().map(|t| t.raw.clone()).collect::<Vec<_>>()}));
    }
    match original {
        None | Some(Value::Null) if out.is_empty() => original.cloned(),
        _ => Some(Value::Array(out)),
    }
}

/// The function-call part of `call` that `id` names: the one with that
/// `id`, or else the first id-less call of that name.
fn call_part<'a>(call: &'a Message, id: &str) -> Option<&'a Map<String, Value>> {
    let parts = call.raw.get("parts")?.as_array()?;
    let calls: Vec<&Map<String, Value>> = parts
        .iter()
        .filter_map(|p| p.as_object().and_then(|o| get(o, "functionCall", "function_call")).and_then(Value::as_object))
        .collect();
    let by_id = calls.iter().find(|c| c.get("id").and_then(Value::as_str) == Some(id));
    by_id
        .or_else(|| calls.iter().find(|c| c.get("id").is_none() && c.get("name").and_then(Value::as_str) == Some(id)))
        .copied()
}

/// The `functionResponse` part answering the unanswered call `id` of
/// message `call`: the call's name, its `id` when the call has one, and
/// `text` as the response's `error` (the key Gemini documents for a
/// failure).
pub(super) fn synthetic_response(call: &Message, id: &str, text: &str) -> Value {
    let c = call_part(call, id);
    let name = c.and_then(|c| c.get("name")).and_then(Value::as_str).unwrap_or(id);
    let mut fr = Map::new();
    if let Some(own) = c.and_then(|c| c.get("id")).filter(|v| v.is_string()) {
        fr.insert("id".into(), own.clone());
    }
    fr.insert("name".into(), Value::String(name.to_owned()));
    fr.insert("response".into(), json!({"error": text}));
    json!({"functionResponse": fr})
}

/// Writes `text` as a `functionResponse` part's response, keeping its
/// shape: a one-key response keeps its key, any other becomes
/// `{"output": text}`.
pub(super) fn set_response(part: &mut Value, text: &str) {
    let key = if part.get("function_response").is_some() { "function_response" } else { "functionResponse" };
    let Some(fr) = part.get_mut(key).and_then(Value::as_object_mut) else { return };
    let slot = fr.entry("response").or_insert(Value::Null);
    match slot.as_object_mut() {
        Some(o) if o.len() == 1 => {
            if let Some(v) = o.values_mut().next() {
                *v = Value::String(text.to_owned());
            }
        }
        _ => *slot = json!({"output": text}),
    }
}

/// Whether a part is a function response (a result) or, with `calls`, a
/// function call too.
pub(super) fn is_tool_part(p: &Value, calls: bool) -> bool {
    let Some(o) = p.as_object() else { return false };
    get(o, "functionResponse", "function_response").is_some()
        || (calls && get(o, "functionCall", "function_call").is_some())
}

#[cfg(test)]
mod tests;

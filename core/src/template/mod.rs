//! Chat templates: the Jinja text a model ships (in `tokenizer_config.json`
//! or a GGUF's `tokenizer.chat_template`) that turns messages into the prompt
//! the model is actually sent. Rendered with minijinja to the same bytes as
//! transformers' `apply_chat_template(..., tokenize=False)` (jinja2 with
//! `trim_blocks`, `lstrip_blocks`, loop controls, its own `tojson`,
//! `raise_exception`, `strftime_now` and the `{% generation %}` tag).
//!
//! Templates are untrusted input (they arrive inside model files downloaded
//! from anywhere; an unsandboxed jinja2 was remote code execution,
//! CVE-2024-34359). The environment here has no loader (no `include` or
//! `import` of files), no environment variables and no host objects: a
//! template sees plain data only. Its work and the memory it allocates are
//! bounded by minijinja's fuel, macro recursion by a depth limit and the
//! output by a byte cap; each overrun is an error naming the limit.

mod clock;
mod count;
mod files;
mod input;
mod model;
mod pyjson;
mod register;
mod source;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod tests_count;
#[cfg(test)]
mod tests_register;

use std::cell::Cell;
use std::io;
use std::rc::Rc;

use minijinja::syntax::SyntaxConfig;
use minijinja::value::ValueKind as ValueKindJ;
use minijinja::{AutoEscape, Environment, ErrorKind as JinjaKind, UndefinedBehavior, Value};
use serde_json::Value as Json;

use crate::{Error, ErrorKind, Result};

pub use count::PromptCounter;
pub use files::{read_limited, ModelTemplate, MAX_TEMPLATE_BYTES};
pub use model::TemplateModel;
pub use register::{register_model_files, register_model_files_json, ModelFiles};

/// Bounds on one render. The defaults fit every template of llama.cpp's
/// collection on conversations of megabytes.
#[derive(Clone, Debug)]
pub struct RenderLimits {
    /// minijinja fuel: about one unit per instruction and per 64 bytes of data
    /// the template creates. `None`: [`RenderLimits::BASE_FUEL`] plus one unit
    /// per 4 bytes of the conversation's JSON, so long conversations render
    /// and a hostile template still stops within about 64 MB + 16x the input.
    pub fuel: Option<u64>,
    /// Nested macro calls and recursive loops.
    pub max_recursion: usize,
    /// Bytes of rendered output.
    pub max_output_bytes: usize,
}

impl RenderLimits {
    /// Fuel every render gets before the per-input share.
    pub const BASE_FUEL: u64 = 1_000_000;
}

impl Default for RenderLimits {
    fn default() -> Self {
        RenderLimits { fuel: None, max_recursion: 64, max_output_bytes: 16 << 20 }
    }
}

/// What a template is rendered with, beyond the messages.
#[derive(Clone, Debug, Default)]
pub struct RenderOptions {
    /// The tools list (OpenAI's function schemas), passed as `tools`; `None`
    /// passes `None`, as transformers does without tools.
    pub tools: Option<Json>,
    /// `add_generation_prompt`: end with the assistant's header.
    pub add_generation_prompt: bool,
    /// `bos_token` as the tokenizer's config names it.
    pub bos_token: Option<String>,
    /// `eos_token` as the tokenizer's config names it.
    pub eos_token: Option<String>,
    /// Extra template variables (`enable_thinking`, `reasoning_effort`, ...),
    /// passed as transformers passes `apply_chat_template`'s extra kwargs.
    pub kwargs: serde_json::Map<String, Json>,
    /// A fixed civil time ("2024-07-26T10:00:00") for `strftime_now`; `None`
    /// reads the local clock.
    pub fixed_now: Option<String>,
    /// Work, recursion and output bounds.
    pub limits: RenderLimits,
}

/// A parsed chat template, ready to render many conversations.
#[derive(Clone)]
pub struct ChatTemplate {
    env: Environment<'static>,
}

const NAME: &str = "chat_template";

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChatTemplate")
    }
}

impl ChatTemplate {
    /// Parses `source`. A syntax error or a tag minijinja does not know is an
    /// `InvalidArgument` naming the line.
    pub fn new(source: &str) -> Result<ChatTemplate> {
        let mut env = Environment::new();
        // jinja2's settings in transformers: trim_blocks, lstrip_blocks, and
        // no trailing newline kept (jinja2's default).
        let syntax = SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(false)
            .build()
            .map_err(|e| convert(e, 0))?;
        env.set_syntax(syntax);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_undefined_behavior(UndefinedBehavior::Lenient);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        // Nothing of the host: no `debug` dump of the environment.
        env.remove_global("debug");
        env.add_filter("tojson", pyjson::tojson);
        env.add_function("raise_exception", |message: String| -> std::result::Result<Value, minijinja::Error> {
            Err(minijinja::Error::new(JinjaKind::InvalidOperation, format!("{RAISED}{message}")))
        });
        env.add_filter(source::MARKUP_CONCAT, |_: Value| -> std::result::Result<Value, minijinja::Error> {
            Err(minijinja::Error::new(
                JinjaKind::InvalidOperation,
                "unsupported: `|safe +` (jinja2 HTML-escapes a plain string added to a Markup string; turnfit does not reproduce that escaping)",
            ))
        });
        // jinja2: None is not iterable (an undefined value is, as empty).
        env.add_test("iterable", |v: Value| v.kind() != ValueKindJ::None && v.try_iter().is_ok());
        env.add_template_owned(NAME, source::prepare(source)).map_err(|e| convert(e, 0))?;
        Ok(ChatTemplate { env })
    }

    /// Renders `messages` (a JSON array of message objects) to the prompt text.
    pub fn render(&self, messages: &Json, options: &RenderOptions) -> Result<String> {
        let Json::Array(list) = messages else {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "chat template: messages must be a JSON array of message objects",
            ));
        };
        if let Some(bad) = list.iter().position(|m| !m.is_object()) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("chat template: message {bad} is not a JSON object"),
            ));
        }
        let input_bytes = serde_json::to_string(messages).map(|s| s.len()).unwrap_or(0)
            + options.tools.as_ref().and_then(|t| serde_json::to_string(t).ok()).map_or(0, |s| s.len());
        let fuel = options.limits.fuel.unwrap_or(RenderLimits::BASE_FUEL + input_bytes as u64 / 4);

        let mut env = self.env.clone();
        env.set_fuel(Some(fuel));
        env.set_recursion_limit(options.limits.max_recursion);
        let fixed_now = options.fixed_now.clone();
        env.add_function("strftime_now", move |format: String| clock::format_now(fixed_now.as_deref(), &format));

        let mut ctx: Vec<(Value, Value)> = vec![
            ("messages".into(), Value::from(list.iter().map(input::message_value).collect::<Vec<_>>())),
            ("tools".into(), options.tools.as_ref().map_or(Value::from(()), input::to_value)),
            ("documents".into(), Value::from(())),
            ("add_generation_prompt".into(), Value::from(options.add_generation_prompt)),
        ];
        for (name, token) in [("bos_token", &options.bos_token), ("eos_token", &options.eos_token)] {
            if let Some(token) = token {
                ctx.push((name.into(), Value::from(token.as_str())));
            }
        }
        for (k, v) in &options.kwargs {
            ctx.push((Value::from(k.as_str()), input::to_value(v)));
        }
        let ctx = input::map_value(ctx.into_iter());

        let template = env.get_template(NAME).map_err(|e| convert(e, fuel))?;
        let overflow = Rc::new(Cell::new(false));
        let mut out =
            CappedOutput { buf: Vec::new(), cap: options.limits.max_output_bytes, overflow: overflow.clone() };
        let result = template.render_captured_to(ctx, &mut out);
        if overflow.get() {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("chat template output exceeds the limit of {} bytes", options.limits.max_output_bytes),
            ));
        }
        result.map_err(|e| convert(e, fuel))?;
        String::from_utf8(out.buf).map_err(|_| Error::internal("chat template output is not UTF-8"))
    }
}

/// Marks a `raise_exception` call's message in the error chain.
const RAISED: &str = "\u{0}raise_exception: ";

/// The render's output, refused past `cap` bytes.
struct CappedOutput {
    buf: Vec<u8>,
    cap: usize,
    overflow: Rc<Cell<bool>>,
}

impl io::Write for CappedOutput {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > self.cap {
            self.overflow.set(true);
            return Err(io::Error::other("chat template output limit"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A minijinja error as turnfit's: which limit or construct, and where.
fn convert(e: minijinja::Error, fuel: u64) -> Error {
    let line = e.line().map(|l| format!(" (template line {l})")).unwrap_or_default();
    let detail = e.detail().unwrap_or("").to_string();
    if let Some(message) = detail.strip_prefix(RAISED) {
        return Error::new(
            ErrorKind::InvalidArgument,
            format!("the chat template refused the conversation: {message}{line}"),
        );
    }
    let (kind, message) = match e.kind() {
        JinjaKind::OutOfFuel => (
            ErrorKind::LimitExceeded,
            format!("chat template exceeded its work limit ({fuel} fuel: instructions and data created); a loop or data too large"),
        ),
        JinjaKind::InvalidOperation if detail.contains("recursion limit") => {
            (ErrorKind::DepthExceeded, format!("chat template recursion exceeds the limit: {detail}"))
        }
        JinjaKind::SyntaxError if detail.contains("maximum recursion") => {
            (ErrorKind::DepthExceeded, format!("chat template nests too deeply to parse: {detail}"))
        }
        JinjaKind::SyntaxError => (ErrorKind::InvalidArgument, format!("chat template syntax error: {detail}")),
        JinjaKind::UnknownFilter | JinjaKind::UnknownTest | JinjaKind::UnknownFunction | JinjaKind::UnknownMethod => {
            (ErrorKind::InvalidArgument, format!("chat template uses something not supported here: {e}"))
        }
        _ => (ErrorKind::InvalidArgument, format!("chat template failed: {e}")),
    };
    // Nested errors (a failure inside a macro) carry the real cause.
    let mut message = message;
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        let text = cause.to_string();
        if let Some(at) = text.find(RAISED) {
            return Error::new(
                ErrorKind::InvalidArgument,
                format!("the chat template refused the conversation: {}{line}", &text[at + RAISED.len()..]),
            );
        }
        message.push_str(&format!("; caused by: {text}"));
        source = cause.source();
    }
    Error::new(kind, format!("{message}{line}"))
}

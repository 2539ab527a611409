//! A model known by its own files (tokenizer + chat template) in preflight
//! and fit: the prompt's total is the template's count
//! ([`PromptCounter::ids`]), not OpenAI's constants.
//!
//! Windows and compaction count per message. For them the model is
//! registered as a host entry whose text counter is its tokenizer and whose
//! framing is measured from its template: each message's overhead is
//! rendered with and without that message, the fixed part of the prompt
//! (a BOS, a default system prompt, a date header) and the generation
//! prompt are what one user message leaves over, the tool block what a
//! tools list adds. Those per-message figures are close, not exact (a
//! template may render a message differently by position), so the totals
//! preflight and fit report are the template's count of the whole
//! conversation, and fit shrinks its budget by what the count exceeds until
//! the rendered prompt fits.

use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::{PromptCounter, RenderOptions};
use crate::chat::{Conversation, Format};
use crate::models::{ModelProfile, ModelRegistry, PromptModel, TurnOrder};
use crate::turn::{Reply, SummarizerCall, TurnReport};
use crate::window::{Budget, FitOptions, Framing, Preflight, ToolStyle, Window};
use crate::{Encoding, Error, ErrorKind, Result};

/// A model counted with its own tokenizer and chat template.
#[derive(Debug, Clone)]
pub struct TemplateModel {
    counter: PromptCounter,
    /// Template variables (`enable_thinking`, ...) and the clock.
    options: RenderOptions,
    /// The order of roles the template enforces.
    order: TurnOrder,
    /// Whether the server renders with this template ([`PromptModel::exact`]).
    exact: bool,
}

impl TemplateModel {
    /// The model of `counter`, rendered with `options`' kwargs and clock
    /// (its tools and generation prompt are set per request).
    pub fn new(counter: PromptCounter, options: RenderOptions) -> TemplateModel {
        let mut model = TemplateModel { counter, options, order: TurnOrder::default(), exact: true };
        model.order = model.probe_order();
        model
    }

    /// The order of roles the template enforces, found by rendering: two
    /// user messages in a row, and an assistant message before any user's,
    /// each refused while a lone user message renders. A template that
    /// refuses even that enforces nothing we can keep, so nothing is
    /// assumed.
    fn probe_order(&self) -> TurnOrder {
        let user = |c: &str| json!({"role": "user", "content": c});
        if self.count(&json!([user("Hello.")]), None, true).is_err() {
            return TurnOrder::default();
        }
        let refused = |messages: Json| self.count(&messages, None, true).is_err();
        TurnOrder {
            alternate: refused(json!([user("Hello."), user("Are you there?")])),
            user_first: refused(json!([{"role": "assistant", "content": "Hello."}, user("Hi.")])),
        }
    }

    /// The order of roles the template enforces ([`TurnOrder`]).
    pub fn turn_order(&self) -> TurnOrder {
        self.order
    }

    /// The model, its counts marked exact or not: `false` when the server
    /// is known to render with another template (an Ollama model with a Go
    /// template layer), so fits report `exact: false`.
    pub fn with_exact(mut self, exact: bool) -> TemplateModel {
        self.exact = exact;
        self
    }

    /// The joined template and tokenizer.
    pub fn counter(&self) -> &PromptCounter {
        &self.counter
    }

    /// Prompt tokens of an OpenAI Chat request (a message array, or an
    /// object with `messages` and `tools`), with the generation prompt, as
    /// a server counts them.
    pub fn count_request(&self, body: &Json) -> Result<usize> {
        Ok(self.request_ids(body, true)?.len())
    }

    /// The prompt's ids for an OpenAI Chat request (see
    /// [`TemplateModel::count_request`]), with or without the generation
    /// prompt.
    pub fn request_ids(&self, body: &Json, add_generation_prompt: bool) -> Result<Vec<u32>> {
        let (messages, tools) = split_request(body)?;
        let options = RenderOptions { tools: tools.cloned(), add_generation_prompt, ..self.options.clone() };
        self.counter.ids(messages, &options)
    }

    fn count(&self, messages: &Json, tools: Option<Json>, add_generation_prompt: bool) -> Result<usize> {
        let options = RenderOptions { tools, add_generation_prompt, ..self.options.clone() };
        self.counter.count(messages, &options)
    }

    /// Per-message framing measured from the template (see the module
    /// doc). A figure the template refuses to render (a template that
    /// allows no system message or no tool calls) keeps OpenAI's constant.
    pub fn framing(&self) -> Result<Framing> {
        let tok = self.counter.tokenizer();
        let text = |s: &str| tok.count(s);
        let user = |c: &str| json!({"role": "user", "content": c});
        let assistant = |c: &str| json!({"role": "assistant", "content": c});
        let mut f = Framing::for_encoding(Encoding::O200kBase);
        f.tool_style = ToolStyle::Json;
        f.tokens_per_name = 0;

        let one = json!([user("Hello there.")]);
        let two = json!([user("Hello there."), assistant("Hi, how can I help?")]);
        let three = json!([user("Hello there."), assistant("Hi, how can I help?"), user("Count to three.")]);
        let (n1, n2, n3) =
            (self.count(&one, None, false)?, self.count(&two, None, false)?, self.count(&three, None, false)?);
        let per_assistant = n2.saturating_sub(n1 + text("Hi, how can I help?")? + text("assistant")?);
        let per_user = n3.saturating_sub(n2 + text("Count to three.")? + text("user")?);
        f.tokens_per_message = per_assistant.max(per_user);
        // What one user message leaves over, and the generation prompt:
        // charged once per request.
        let fixed = n1.saturating_sub(f.tokens_per_message + text("user")? + text("Hello there.")?);
        let primed = self.count(&one, None, true)?;
        f.reply_priming = fixed + primed.saturating_sub(n1);

        let tool = json!({"type": "function", "function": {"name": "get_weather", "description": "Get the weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city."}}, "required": ["city"]}}});
        if let Ok(with_tools) = self.count(&one, Some(json!([tool])), false) {
            let delta = with_tools as i64 - n1 as i64 - text(&tool.to_string())? as i64;
            (f.tools_in_system, f.tools_own_system) = (delta, delta);
        }
        let call = json!([user("Hello there."), {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}]);
        let empty = json!([user("Hello there."), assistant("")]);
        if let (Ok(with_call), Ok(without)) = (self.count(&call, None, false), self.count(&empty, None, false)) {
            let args = text("get_weather")? + text("{\"city\": \"Paris\"}")?;
            f.tokens_per_tool_call = with_call.saturating_sub(without + args);
        }
        Ok(f)
    }

    /// Registers the model as `name` in `registry`: its tokenizer counts
    /// text, its measured framing frames messages, `context_window` is the
    /// window the server allocated (Ollama's `num_ctx`, llama.cpp's
    /// `n_ctx`, vLLM's `max_model_len`). The entry carries the model itself
    /// ([`PromptModel`]), so every fit, turn and window for `name` reports
    /// the template's count as its totals (`exact: true`); the per-message
    /// counts that decide what to cut are the measured framing's.
    pub fn register(
        &self,
        registry: &ModelRegistry,
        name: &str,
        context_window: Option<u64>,
        max_output_tokens: Option<u64>,
    ) -> Result<()> {
        let profile = ModelProfile {
            name: name.to_string(),
            family: None,
            encoding: Encoding::O200kBase,
            context_window,
            max_output_tokens,
            exact: self.exact,
        };
        let framing = self.framing()?;
        let tok = self.counter.tokenizer_arc();
        let framing = serde_json::to_value(framing).map_err(|e| Error::internal(format!("framing: {e}")))?;
        let prompt: Arc<dyn PromptModel> = Arc::new(self.clone());
        registry.register_with_counter_and_framing(
            profile,
            move |s| tok.count(s).map_err(|e| e.to_string()),
            framing,
            Some(prompt),
        )
    }

    /// Preflight of an OpenAI Chat `conversation` for `name` (registered
    /// with [`TemplateModel::register`]): the window's own preflight, whose
    /// `prompt_tokens` and verdict are the template's count (`exact: true`)
    /// for such a model.
    pub fn preflight(
        &self,
        registry: &ModelRegistry,
        name: &str,
        conversation: &str,
        budget: Budget,
    ) -> Result<Preflight> {
        parse_openai(conversation)?;
        let mut window = Window::for_model(registry, name, budget)?;
        window.load(Conversation::parse(conversation, Some(Format::OpenAi))?)?;
        window.preflight(None)
    }

    /// One fit of an OpenAI Chat `conversation` for the model registered as
    /// `options.model` ([`TemplateModel::register`]): the ordinary turn
    /// ([`crate::turn::run`]), whose totals are the template's count and
    /// which tightens until the rendered prompt fits.
    pub fn fit(
        &self,
        registry: &ModelRegistry,
        conversation: &str,
        options: &FitOptions,
        summarizer: Option<&mut dyn FnMut(&SummarizerCall) -> Reply>,
    ) -> Result<(Conversation, TurnReport)> {
        parse_openai(conversation)?;
        crate::turn::run(registry, conversation, options, summarizer)
    }
}

impl PromptModel for TemplateModel {
    fn count_request(&self, request: &Json) -> Result<usize> {
        TemplateModel::count_request(self, request)
    }

    fn turn_order(&self) -> TurnOrder {
        self.order
    }

    fn exact(&self) -> bool {
        self.exact
    }
}

/// `messages` and `tools` of an OpenAI Chat request or a bare message array.
fn split_request(body: &Json) -> Result<(&Json, Option<&Json>)> {
    match body {
        Json::Array(_) => Ok((body, None)),
        Json::Object(map) => {
            let messages = map.get("messages").ok_or_else(|| {
                Error::new(ErrorKind::InvalidArgument, "chat template: the request has no \"messages\"")
            })?;
            Ok((messages, map.get("tools").filter(|t| !t.is_null())))
        }
        _ => Err(Error::new(
            ErrorKind::InvalidArgument,
            "chat template: expected an array of messages or an object with \"messages\"",
        )),
    }
}

/// The conversation as JSON, refused unless it is OpenAI Chat (what chat
/// templates render: `role`/`content` messages with `tool_calls`).
fn parse_openai(text: &str) -> Result<Json> {
    let c = Conversation::parse(text, None)?;
    if c.format != Format::OpenAi {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "a chat template renders OpenAI Chat messages; this conversation is {} (convert it first)",
                c.format.as_str()
            ),
        ));
    }
    serde_json::from_str(text).map_err(|e| Error::new(ErrorKind::InvalidJson, format!("conversation: {e}")))
}

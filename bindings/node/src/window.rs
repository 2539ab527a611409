//! `NativeWindow` and `fit`: conversations, options and reports cross as
//! JSON text (the facade parses and stringifies), so new fields in the core's
//! options need no change here.

use std::sync::Arc;

use napi::bindgen_prelude::{AbortSignal, AsyncTask};
use napi::{Env, Task};
use napi_derive::napi;
use parking_lot::Mutex;

use turnfit::chat::Conversation;
use turnfit::events::{Event, Observer};
use turnfit::window::{fit_json_in, Budget, Policy, Window};

use crate::error::{guard, json, not_counting, to_usize};
use crate::registry::registry;

/// A conversation bound to a model and a budget. Calls on one window are
/// serialized by a mutex, so async compaction on the pool is safe.
#[napi]
pub struct NativeWindow {
    pub(crate) inner: Arc<Mutex<Window>>,
    /// Events the core raised (JSON lines), taken by the facade after each
    /// call: they may be raised on the libuv pool (`compactAsync`), where JS
    /// cannot run, so they are delivered on the JS thread.
    events: Arc<Mutex<Vec<String>>>,
}

use turnfit::frontend::parse_options as parse_opt;

fn compact(w: &Mutex<Window>, policy: Option<&str>) -> turnfit::Result<String> {
    let policy: Policy = parse_opt("policy", policy)?;
    json(&w.lock().compact(&policy)?)
}

#[napi]
impl NativeWindow {
    /// `budget`: JSON `{context_window, reserved_output, trigger_ratio, target_ratio}`.
    #[napi(constructor)]
    pub fn new(model: String, budget: Option<String>) -> napi::Result<Self> {
        guard("ContextWindow", || {
            let budget: Budget = parse_opt("budget", budget.as_deref())?;
            let w = Window::for_model(registry(), &model, budget)?;
            Ok(NativeWindow { inner: Arc::new(Mutex::new(w)), events: Arc::default() })
        })
    }

    #[napi]
    pub fn load(&self, conversation: String) -> napi::Result<()> {
        guard("load", || {
            let c = Conversation::parse(&conversation, None)?;
            self.inner.lock().load(c)
        })
    }

    /// Appends one message (JSON in the conversation's shape); returns its tokens.
    #[napi]
    pub fn push(&self, message: String) -> napi::Result<u32> {
        guard("push", || self.inner.lock().push_json(&message).map(|n| u32::try_from(n).unwrap_or(u32::MAX)))
    }

    #[napi]
    pub fn preflight(&self, new_input: Option<String>) -> napi::Result<String> {
        guard("preflight", || {
            let w = self.inner.lock();
            let m = new_input.as_deref().map(|t| w.conversation().parse_message(t)).transpose()?;
            json(&w.preflight(m.as_ref())?)
        })
    }

    #[napi]
    pub fn validate(&self) -> napi::Result<String> {
        guard("validate", || json(&self.inner.lock().validate()))
    }

    #[napi]
    pub fn repair(&self, synthetic_result: Option<String>) -> napi::Result<String> {
        guard("repair", || json(&self.inner.lock().repair(synthetic_result.as_deref())?))
    }

    #[napi]
    pub fn conversation(&self) -> napi::Result<String> {
        guard("conversation", || self.inner.lock().conversation().to_json())
    }

    #[napi]
    pub fn message_tokens(&self) -> napi::Result<Vec<u32>> {
        guard("messageTokens", || {
            Ok(self.inner.lock().message_tokens().iter().map(|&n| u32::try_from(n).unwrap_or(u32::MAX)).collect())
        })
    }

    #[napi]
    pub fn compact(&self, policy: Option<String>) -> napi::Result<String> {
        guard("compact", || compact(&self.inner, policy.as_deref()))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn compact_async(
        &self,
        policy: Option<String>,
        signal: Option<AbortSignal>,
    ) -> napi::Result<AsyncTask<JsonTask>> {
        not_counting("compactAsync")?;
        let w = Arc::clone(&self.inner);
        Ok(AsyncTask::with_optional_signal(JsonTask(Some(Box::new(move || compact(&w, policy.as_deref())))), signal))
    }

    #[napi]
    pub fn apply_summary(&self, id: String, summary: String) -> napi::Result<String> {
        guard("applySummary", || json(&self.inner.lock().apply_summary(&id, &summary)?))
    }

    /// Starts (or stops, dropping what is queued) collecting the window's events.
    #[napi]
    pub fn set_events(&self, on: bool) -> napi::Result<()> {
        not_counting("setEvents")?;
        let observer = if on {
            let queue = Arc::clone(&self.events);
            Observer::new(move |e: &Event| queue.lock().push(e.to_json()))
        } else {
            Observer::none()
        };
        self.inner.lock().set_observer(observer);
        if !on {
            self.events.lock().clear();
        }
        Ok(())
    }

    /// The events raised since the last take, oldest first, as JSON text.
    #[napi]
    pub fn take_events(&self) -> Vec<String> {
        std::mem::take(&mut *self.events.lock())
    }

    #[napi]
    pub fn calibrate(&self, reported_prompt_tokens: f64) -> napi::Result<f64> {
        guard("calibrate", || self.inner.lock().calibrate(to_usize(reported_prompt_tokens)))
    }
}

/// A JSON-producing core call on the libuv pool (fit, compaction, skills).
pub struct JsonTask(pub(crate) Option<Box<dyn FnOnce() -> turnfit::Result<String> + Send>>);

impl Task for JsonTask {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        let f = self.0.take();
        guard("async", || match f {
            Some(f) => f(),
            None => Err(turnfit::Error::new(turnfit::ErrorKind::Internal, "task ran twice")),
        })
    }

    fn resolve(&mut self, _env: Env, out: String) -> napi::Result<String> {
        Ok(out)
    }
}

/// `fitJson`: the conversation text is passed to the core untouched (key
/// order and summary ids depend on it). Returns `{conversation, report}`
/// with the conversation as text and the report as JSON text.
#[napi(object)]
pub struct FitJsonResult {
    pub conversation: String,
    pub report: String,
}

fn fit(conversation: &str, options: &str) -> turnfit::Result<FitJsonResult> {
    let (c, report) = fit_json_in(registry(), conversation, options)?;
    Ok(FitJsonResult { conversation: c, report: json(&report)? })
}

#[napi]
pub fn fit_json_native(conversation: String, options: String) -> napi::Result<FitJsonResult> {
    guard("fit", || fit(&conversation, &options))
}

/// `fitAsync`: resolves to `[conversation, report]` JSON text, joined by a NUL
/// (JSON text never contains a raw NUL), split by the facade.
#[napi(ts_return_type = "Promise<string>")]
pub fn fit_json_async(
    conversation: String,
    options: String,
    signal: Option<AbortSignal>,
) -> napi::Result<AsyncTask<JsonTask>> {
    not_counting("fitAsync")?;
    Ok(AsyncTask::with_optional_signal(
        JsonTask(Some(Box::new(move || {
            let r = fit(&conversation, &options)?;
            Ok(format!("{}\0{}", r.conversation, r.report))
        }))),
        signal,
    ))
}

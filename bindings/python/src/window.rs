//! Context windows, the stateless `fit`, conversation counting and repair.
//! Conversations, options and reports cross as JSON text.

use std::sync::Arc;

use parking_lot::Mutex;
use pyo3::prelude::*;

use turnfit::chat::Conversation;
use turnfit::events::{Event, Observer};
use turnfit::window::{fit_json_in, repair, validate, Accountant, Budget, Policy, Window as Core};

use crate::tokenizer::{registry, Tokenizer};
use crate::{guard, guard_detached, to_json, Text, DETACH_BYTES};

use turnfit::frontend::parse_options as parse;

/// A conversation bound to a model and a token budget, with cached
/// per-message counts. Calls on one window are serialized by a mutex, so it
/// may be shared by threads.
#[pyclass(frozen, module = "turnfit._native")]
pub struct Window {
    pub(crate) inner: Mutex<Core>,
    /// Events the core raised (JSON lines), taken by the facade after each
    /// call: calls run with the GIL released, where Python cannot run, so
    /// the handler is called once the call is back on the Python thread.
    events: Arc<Mutex<Vec<String>>>,
}

#[pymethods]
impl Window {
    #[new]
    #[pyo3(signature = (model, budget_json=None))]
    fn new(model: Text, budget_json: Option<Text>) -> PyResult<Self> {
        let w = guard("ContextWindow", || {
            let budget: Budget = parse("budget", budget_json.as_deref())?;
            Core::for_model(registry(), &model, budget)
        })?;
        Ok(Window { inner: Mutex::new(w), events: Arc::default() })
    }

    /// Replaces the conversation (OpenAI or Anthropic JSON), counting every message once.
    fn load(&self, py: Python<'_>, conversation_json: Text) -> PyResult<()> {
        guard_detached(py, conversation_json.len() >= DETACH_BYTES, "load", || {
            let c = Conversation::parse(&conversation_json, None)?;
            self.inner.lock().load(c)
        })
    }

    /// Appends one message (JSON in the window's format); returns its tokens.
    fn push(&self, py: Python<'_>, message_json: Text) -> PyResult<usize> {
        guard_detached(py, message_json.len() >= DETACH_BYTES, "push", || self.inner.lock().push_json(&message_json))
    }

    /// Appends one message, compacting first under `policy_json` when it would
    /// take the window past its trigger; returns `{"tokens", "compacted"}` as JSON.
    /// A multi-scale window's folds go to `summarizer` (called with the
    /// fold request's JSON, returning the summary text) when given; an
    /// exception or a non-text reply falls back to the digest, as a turn's
    /// summarizer does. The GIL is held throughout then.
    #[pyo3(signature = (message_json, policy_json=None, summarizer=None))]
    fn add(
        &self,
        py: Python<'_>,
        message_json: Text,
        policy_json: Option<Text>,
        summarizer: Option<Py<PyAny>>,
    ) -> PyResult<String> {
        let Some(summarizer) = summarizer else {
            return guard_detached(py, true, "add_message", || {
                let policy: Policy = parse("policy", policy_json.as_deref())?;
                to_json(&self.inner.lock().add_json(&message_json, &policy)?)
            });
        };
        guard("add_message", || {
            let policy: Policy = parse("policy", policy_json.as_deref())?;
            let mut w = self.inner.lock();
            let m = w.conversation().parse_message(&message_json)?;
            let mut ask = |r: &turnfit::window::FoldRequest| -> Option<String> {
                let j = to_json(r).ok()?;
                summarizer.bind(py).call1((j,)).ok()?.extract::<String>().ok()
            };
            to_json(&w.add_with(m, &policy, &mut ask)?)
        })
    }

    /// Removes the last message; returns it as JSON, or None when empty.
    fn pop(&self) -> PyResult<Option<String>> {
        guard("pop", || {
            let m = self.inner.lock().pop();
            m.map(|m| to_json(m.raw())).transpose()
        })
    }

    #[pyo3(signature = (new_input_json=None))]
    fn preflight(&self, new_input_json: Option<Text>) -> PyResult<String> {
        guard("preflight", || {
            let w = self.inner.lock();
            let m = new_input_json.as_deref().map(|t| w.conversation().parse_message(t)).transpose()?;
            to_json(&w.preflight(m.as_ref())?)
        })
    }

    fn validate(&self) -> PyResult<String> {
        guard("validate", || to_json(&self.inner.lock().validate()))
    }

    #[pyo3(signature = (synthetic_result=None))]
    fn repair(&self, synthetic_result: Option<Text>) -> PyResult<String> {
        guard("repair", || to_json(&self.inner.lock().repair(synthetic_result.as_deref())?))
    }

    fn conversation(&self) -> PyResult<String> {
        guard("conversation", || self.inner.lock().conversation().to_json())
    }

    fn message_tokens(&self) -> PyResult<Vec<usize>> {
        guard("message_tokens", || Ok(self.inner.lock().message_tokens().to_vec()))
    }

    fn __len__(&self) -> PyResult<usize> {
        guard("__len__", || Ok(self.inner.lock().message_tokens().len()))
    }

    #[pyo3(signature = (policy_json=None))]
    fn compact(&self, py: Python<'_>, policy_json: Option<Text>) -> PyResult<String> {
        guard_detached(py, true, "compact", || {
            let policy: Policy = parse("policy", policy_json.as_deref())?;
            to_json(&self.inner.lock().compact(&policy)?)
        })
    }

    fn apply_summary(&self, id: Text, summary: Text) -> PyResult<String> {
        guard("apply_summary", || to_json(&self.inner.lock().apply_summary(&id, &summary)?))
    }

    /// Starts (or stops, dropping what is queued) collecting the window's events.
    fn set_events(&self, on: bool) -> PyResult<()> {
        let observer = if on {
            let queue = Arc::clone(&self.events);
            Observer::new(move |e: &Event| queue.lock().push(e.to_json()))
        } else {
            Observer::none()
        };
        guard("set_events", || {
            self.inner.lock().set_observer(observer);
            Ok(())
        })?;
        if !on {
            self.events.lock().clear();
        }
        Ok(())
    }

    /// The events raised since the last take, oldest first, as JSON text.
    fn take_events(&self) -> Vec<String> {
        std::mem::take(&mut *self.events.lock())
    }

    fn calibrate(&self, reported_prompt_tokens: usize) -> PyResult<f64> {
        guard("calibrate", || self.inner.lock().calibrate(reported_prompt_tokens))
    }
}

/// `(conversation_json, report_json)`: the stateless fit (docs/formats.md).
#[pyfunction]
fn _fit_json(py: Python<'_>, conversation_json: Text, options_json: Text) -> PyResult<(String, String)> {
    guard_detached(py, true, "fit", || {
        let (c, report) = fit_json_in(registry(), &conversation_json, &options_json)?;
        Ok((c, to_json(&report)?))
    })
}

/// `(conversation, report)`: the stateless fit with both given back as
/// Python objects, built from the core's values instead of written as JSON
/// and parsed again by `json.loads` (the same objects).
#[pyfunction]
fn _fit(py: Python<'_>, conversation_json: Text, options_json: Text) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    fit_objects(
        py,
        || {
            turnfit::window::fit_json_value(registry(), &conversation_json, &options_json)
                .map(|(v, r)| (v, r, Vec::new()))
        },
        &[],
    )
}

/// Runs a core fit with the GIL released and gives its conversation and
/// report back as Python objects (`_fit` and `_fit_value`).
/// `inputs`: the input's messages, for those the core kept unedited (see
/// `dumps::loads_reusing`); `run` gives the result's origins with it.
fn fit_objects<'py, R: serde::Serialize>(
    py: Python<'py>,
    run: impl FnOnce() -> turnfit::Result<(serde_json::Value, R, Vec<Option<usize>>)> + Send,
    inputs: &[Option<Bound<'py, PyAny>>],
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let (value, report, origins) = guard_detached(py, true, "fit", || {
        let (v, report, origins) = run()?;
        let report = serde_json::to_value(&report)
            .map_err(|e| turnfit::Error::new(turnfit::ErrorKind::Internal, format!("serializing JSON: {e}")))?;
        Ok((v, report, origins))
    })?;
    let (out, report_obj) = crate::dumps::with_gc_paused(py, || {
        Ok((
            crate::dumps::loads_reusing(py, &value, &origins, inputs)?.unbind(),
            crate::dumps::loads_value(py, &report)?.unbind(),
        ))
    })?;
    // The values are freed with the GIL released (on a big transcript,
    // thousands of allocations).
    py.detach(move || drop((value, report, origins)));
    Ok((out, report_obj))
}

/// `_fit` on the conversation object itself: its dicts, lists and strings
/// become the core's document directly (`dumps::value_of`), with no JSON
/// text written or read (issue 36). `None` when the conversation is not
/// plain (the caller then calls `_fit` with the text, as before).
/// `options` is written with `dumps` (the facade's `_dumps`) after the
/// conversation is read, the order in which the text path writes them, so
/// the same error comes first.
#[pyfunction]
fn _fit_value(
    py: Python<'_>,
    conversation: &Bound<'_, PyAny>,
    options: &Bound<'_, PyAny>,
    dumps: &Bound<'_, PyAny>,
) -> PyResult<Option<(Py<PyAny>, Py<PyAny>)>> {
    let Some(read) = crate::dumps::value_of(conversation)? else { return Ok(None) };
    let options_json = Text(crate::str_arg(&dumps.call1((options,))?, "options")?);
    let (doc, text_len) = (read.doc, read.len);
    fit_objects(
        py,
        move || turnfit::window::fit_value_origins(registry(), doc, text_len, &options_json),
        &read.messages,
    )
    .map(Some)
}

/// The prompt tokens of a whole conversation for `model` (framing included).
#[pyfunction]
fn _count_conversation(py: Python<'_>, conversation_json: Text, model: Text) -> PyResult<usize> {
    guard_detached(py, conversation_json.len() >= DETACH_BYTES, "count_conversation", || {
        let (acct, _) = Accountant::for_model(registry(), &model)?;
        acct.conversation(&Conversation::parse(&conversation_json, None)?)
    })
}

/// Structural issues of a conversation as a JSON array.
#[pyfunction]
fn _validate_json(conversation_json: Text) -> PyResult<String> {
    guard("validate", || to_json(&validate(&Conversation::parse(&conversation_json, None)?)))
}

/// `{"issues", "conversation", "changes"}` as JSON: the stateless repair.
#[pyfunction]
#[pyo3(signature = (conversation_json, model, synthetic_result=None))]
fn _repair_json(conversation_json: Text, model: Text, synthetic_result: Option<Text>) -> PyResult<String> {
    guard("repair", || {
        let (acct, _) = Accountant::for_model(registry(), &model)?;
        let c = Conversation::parse(&conversation_json, None)?;
        let r = repair(&c, synthetic_result.as_deref(), &acct)?;
        to_json(&serde_json::json!({
            "issues": validate(&c),
            "conversation": r.conversation.to_value(),
            "changes": r.changes,
        }))
    })
}

/// Prompt assembly from prioritized sections under a budget (JSON in and out).
#[pyfunction]
fn _assemble_json(tokenizer: &Tokenizer, request_json: Text) -> PyResult<String> {
    let t = tokenizer.inner;
    guard("assemble", || turnfit::assemble::assemble_json(&request_json, &t))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Window>()?;
    m.add_function(wrap_pyfunction!(_fit_json, m)?)?;
    m.add_function(wrap_pyfunction!(_fit, m)?)?;
    m.add_function(wrap_pyfunction!(_fit_value, m)?)?;
    m.add_function(wrap_pyfunction!(_count_conversation, m)?)?;
    m.add_function(wrap_pyfunction!(_validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(_repair_json, m)?)?;
    m.add_function(wrap_pyfunction!(_assemble_json, m)?)?;
    Ok(())
}

//! Turns (core `turnfit::turn`): the state machine the Python facade
//! drives, so a summarizer may be a plain callable or a coroutine
//! function. Nothing here calls Python: the facade calls the host's model
//! between `call` and `resume`, outside any lock.

use parking_lot::Mutex;
use pyo3::prelude::*;

use turnfit::turn::{FailReason, Reply, Turn as Core};
use turnfit::window::FitOptions;

use crate::tokenizer::registry;
use crate::{guard, guard_detached, to_json, Text, DETACH_BYTES};

/// A turn in progress (see `turnfit.fit_turn`).
#[pyclass(frozen, module = "turnfit._native")]
pub struct Turn {
    inner: Mutex<Option<Core>>,
}

fn finished() -> turnfit::Error {
    turnfit::Error::new(turnfit::ErrorKind::InvalidArgument, "the turn was finished")
}

#[pymethods]
impl Turn {
    #[new]
    fn new(py: Python<'_>, conversation_json: Text, options_json: Text) -> PyResult<Self> {
        let t = guard_detached(py, conversation_json.len() >= DETACH_BYTES, "fit_turn", || {
            let o: FitOptions = turnfit::frontend::parse_options("options", Some(&options_json))?;
            Core::start(registry(), &conversation_json, &o)
        })?;
        Ok(Turn { inner: Mutex::new(Some(t)) })
    }

    /// The waiting summarizer request as JSON, or None.
    fn call(&self) -> PyResult<Option<String>> {
        guard("fit_turn", || {
            let g = self.inner.lock();
            let t = g.as_ref().ok_or_else(finished)?;
            t.call().map(to_json).transpose()
        })
    }

    /// The summarizer's text for the waiting request.
    fn resume(&self, py: Python<'_>, summary: Text) -> PyResult<()> {
        guard_detached(py, summary.len() >= DETACH_BYTES, "fit_turn", || {
            self.inner.lock().as_mut().ok_or_else(finished)?.resume(Reply::Summary(summary.to_string()))
        })
    }

    /// The summarizer failed: `reason` is `error`, `timeout`, `not_text` or `invalid_utf8`.
    fn fail(&self, reason: Text, message: Text) -> PyResult<()> {
        guard("fit_turn", || {
            let reason = FailReason::from_name(&reason)?;
            self.inner
                .lock()
                .as_mut()
                .ok_or_else(finished)?
                .resume(Reply::Failed { reason, message: message.to_string() })
        })
    }

    /// `(conversation_json or None, report_json)`: the conversation only
    /// when the turn changed it (a session's host sends its own messages
    /// otherwise, and nothing is written); the turn is then finished.
    fn finish_changed(&self, py: Python<'_>) -> PyResult<(Option<String>, String)> {
        guard_detached(py, true, "fit_turn", || {
            let t = self.inner.lock().take().ok_or_else(finished)?;
            let (c, report) = t.finish()?;
            let text = if report.changed { Some(c.to_json()?) } else { None };
            Ok((text, to_json(&report)?))
        })
    }

    /// `(conversation_json, report_json)`; the turn is then finished.
    fn finish(&self, py: Python<'_>) -> PyResult<(String, String)> {
        guard_detached(py, true, "fit_turn", || {
            let t = self.inner.lock().take().ok_or_else(finished)?;
            let (c, report) = t.finish()?;
            Ok((c.to_json()?, to_json(&report)?))
        })
    }
}

/// A fit session (core `turnfit::turn::FitSession`, see
/// `turnfit.FitSession`): a history kept parsed and counted between turns,
/// so a step reads and counts only its new messages.
#[pyclass(frozen, module = "turnfit._native")]
pub struct FitSession {
    inner: Mutex<turnfit::turn::FitSession>,
}

#[pymethods]
impl FitSession {
    #[new]
    #[pyo3(signature = (conversation_json, format=None))]
    fn new(py: Python<'_>, conversation_json: Text, format: Option<Text>) -> PyResult<Self> {
        let s = guard_detached(py, conversation_json.len() >= DETACH_BYTES, "FitSession", || {
            let format = match format {
                Some(f) => Some(turnfit::frontend::parse_json("format", &serde_json::Value::from(&*f).to_string())?),
                None => None,
            };
            turnfit::turn::FitSession::new(&conversation_json, format)
        })?;
        Ok(FitSession { inner: Mutex::new(s) })
    }

    /// Keeps the first `keep` messages and appends `new_messages_json` (a
    /// JSON array of messages).
    fn update(&self, py: Python<'_>, keep: usize, new_messages_json: Text) -> PyResult<()> {
        guard_detached(py, new_messages_json.len() >= DETACH_BYTES, "FitSession", || {
            self.inner.lock().update(keep, &new_messages_json).map(|_| ())
        })
    }

    /// The messages held.
    fn __len__(&self) -> usize {
        self.inner.lock().len()
    }

    /// This step's turn on the held history (driven like `Turn`).
    fn turn(&self, py: Python<'_>, options_json: Text) -> PyResult<Turn> {
        let t = guard_detached(py, true, "FitSession", || {
            let o: FitOptions = turnfit::frontend::parse_options("options", Some(&options_json))?;
            self.inner.lock().start(registry(), &o)
        })?;
        Ok(Turn { inner: Mutex::new(Some(t)) })
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Turn>()?;
    m.add_class::<FitSession>()?;
    m.add_class::<WindowTurn>()
}

/// A turn on a window (see `ContextWindow.fit_turn`): started from the
/// window's counted history; the window's lock is not held while the
/// host's model runs, and the result is applied only if the window did not
/// change meanwhile.
#[pyclass(frozen, module = "turnfit._native")]
pub struct WindowTurn {
    window: Py<crate::window::Window>,
    inner: Mutex<Option<turnfit::turn::WindowTurn>>,
}

#[pymethods]
impl WindowTurn {
    #[new]
    fn new(py: Python<'_>, window: Py<crate::window::Window>, options_json: Text) -> PyResult<Self> {
        let w = window.get();
        let t = guard_detached(py, true, "fit_turn", || {
            let o: FitOptions = turnfit::frontend::parse_options("options", Some(&options_json))?;
            turnfit::turn::WindowTurn::start_in(registry(), &w.inner.lock(), &o)
        })?;
        Ok(WindowTurn { window, inner: Mutex::new(Some(t)) })
    }

    fn call(&self) -> PyResult<Option<String>> {
        guard("fit_turn", || {
            let g = self.inner.lock();
            g.as_ref().ok_or_else(finished)?.call().map(to_json).transpose()
        })
    }

    fn resume(&self, summary: Text) -> PyResult<()> {
        guard("fit_turn", || {
            self.inner.lock().as_mut().ok_or_else(finished)?.resume(Reply::Summary(summary.to_string()))
        })
    }

    fn fail(&self, reason: Text, message: Text) -> PyResult<()> {
        guard("fit_turn", || {
            let reason = FailReason::from_name(&reason)?;
            self.inner
                .lock()
                .as_mut()
                .ok_or_else(finished)?
                .resume(Reply::Failed { reason, message: message.to_string() })
        })
    }

    /// The report as JSON; the window has taken the result.
    fn finish(&self, py: Python<'_>) -> PyResult<String> {
        let w = self.window.get();
        guard_detached(py, true, "fit_turn", || {
            let t = self.inner.lock().take().ok_or_else(finished)?;
            to_json(&t.finish(&mut w.inner.lock())?)
        })
    }
}

//! `NativeTurn` (core `turnfit::turn::Turn` and `WindowTurn`): the state
//! machine the facade's `fitTurn` and `ContextWindow.fitTurn` drive, so the
//! host's summarizer may be an async function.
//! Nothing here calls JS: the facade awaits the summarizer between `call`
//! and `resume`/`fail`, with no lock held. JSON text in and out.

use napi_derive::napi;
use parking_lot::Mutex;

use std::sync::Arc;

use turnfit::turn::{AnyTurn, FailReason, Reply, Turn, WindowTurn};
use turnfit::window::{FitOptions, Window};

use crate::error::{guard, json};
use crate::registry::registry;

/// A turn in progress (see `fitTurn` in index.js).
#[napi]
pub struct NativeTurn {
    inner: Mutex<Option<Kind>>,
}

/// A turn on a conversation, or on a window (kept beside the turn: it
/// takes the result when the turn finishes; its lock is not held in between).
type Kind = AnyTurn<Arc<Mutex<Window>>>;

#[napi]
impl NativeTurn {
    /// `options`: JSON text of the fit options (`model` required).
    #[napi(constructor)]
    pub fn new(conversation: String, options: String) -> napi::Result<Self> {
        guard("fitTurn", || {
            let o: FitOptions = turnfit::frontend::parse_options("options", Some(&options))?;
            let t = Turn::start(registry(), &conversation, &o)?;
            Ok(NativeTurn { inner: Mutex::new(Some(Kind::Conversation(Box::new(t)))) })
        })
    }

    /// A turn on `window`; `options`: JSON text of the fit options without
    /// what the window holds (`policy`, `summarizer`, `trigger_messages`).
    #[napi(factory)]
    pub fn on_window(window: &crate::window::NativeWindow, options: String) -> napi::Result<Self> {
        guard("fitTurn", || {
            let o: FitOptions = turnfit::frontend::parse_options("options", Some(&options))?;
            let w = window.inner.clone();
            let t = WindowTurn::start_in(registry(), &w.lock(), &o)?;
            Ok(NativeTurn { inner: Mutex::new(Some(Kind::Window(Box::new(t), w))) })
        })
    }

    /// This step's turn on `session`'s held history (core
    /// `FitSession::start`); `options`: JSON text of the fit options. The
    /// turn holds its own copy: the session may take the next update while
    /// this turn's summarizer runs.
    #[napi(factory)]
    pub fn on_session(session: &crate::session::NativeFitSession, options: String) -> napi::Result<Self> {
        guard("FitSession", || {
            let o: FitOptions = turnfit::frontend::parse_options("options", Some(&options))?;
            let t = session.inner.lock().start(registry(), &o)?;
            Ok(NativeTurn { inner: Mutex::new(Some(Kind::Conversation(Box::new(t)))) })
        })
    }

    /// The waiting summarizer request as JSON text, or null.
    #[napi]
    pub fn call(&self) -> napi::Result<Option<String>> {
        guard("fitTurn", || {
            let g = self.inner.lock();
            let t = g.as_ref().ok_or_else(Kind::finished)?;
            t.call().map(json).transpose()
        })
    }

    /// The summarizer's text for the waiting request.
    #[napi]
    pub fn resume(&self, summary: String) -> napi::Result<()> {
        guard("fitTurn", || self.inner.lock().as_mut().ok_or_else(Kind::finished)?.resume(Reply::Summary(summary)))
    }

    /// The summarizer failed: `reason` is `error`, `timeout`, `not_text` or `invalid_utf8`.
    #[napi]
    pub fn fail(&self, reason: String, message: String) -> napi::Result<()> {
        guard("fitTurn", || {
            let reason = FailReason::from_name(&reason)?;
            self.inner.lock().as_mut().ok_or_else(Kind::finished)?.resume(Reply::Failed { reason, message })
        })
    }

    /// `{conversation, report}` as JSON text (on a window: the window's
    /// conversation, having taken the result); the turn is then finished.
    #[napi]
    pub fn finish(&self) -> napi::Result<crate::FitJsonResult> {
        guard("fitTurn", || match self.inner.lock().take().ok_or_else(Kind::finished)? {
            Kind::Conversation(t) => {
                let (c, report) = t.finish()?;
                Ok(crate::FitJsonResult { conversation: c.to_json()?, report: json(&report)? })
            }
            Kind::Window(t, w) => {
                let mut w = w.lock();
                let report = t.finish(&mut w)?;
                Ok(crate::FitJsonResult { conversation: w.conversation().to_json()?, report: json(&report)? })
            }
        })
    }

    /// `{conversation, report}` as JSON text, `conversation` only when the
    /// turn changed the history (a session's host sends its own messages
    /// otherwise, and nothing is serialized); the turn is then finished.
    /// A turn on a conversation only.
    #[napi]
    pub fn finish_changed(&self) -> napi::Result<FitChangedResult> {
        guard("FitSession", || match self.inner.lock().take().ok_or_else(Kind::finished)? {
            Kind::Conversation(t) => {
                let (c, report) = t.finish()?;
                let conversation = if report.changed { Some(c.to_json()?) } else { None };
                Ok(FitChangedResult { conversation, report: json(&report)? })
            }
            Kind::Window(..) => Err(turnfit::Error::new(
                turnfit::ErrorKind::InvalidArgument,
                "finishChanged: a window turn finishes with finish",
            )),
        })
    }
}

/// A session step's result: the conversation's JSON text when the turn
/// changed it, and the report's.
#[napi(object)]
pub struct FitChangedResult {
    pub conversation: Option<String>,
    pub report: String,
}

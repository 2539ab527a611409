//! `NativeTurn` (core `turnfit::turn::Turn`): the state machine the facade's
//! `fitTurn` drives, so the host's summarizer may be an async function.
//! Nothing here calls JS: the facade awaits the summarizer between `call`
//! and `resume`/`fail`, with no lock held. JSON text in and out.

use napi_derive::napi;
use parking_lot::Mutex;

use turnfit::turn::{FailReason, Reply, Turn};
use turnfit::window::FitOptions;
use turnfit::ModelRegistry;

use crate::error::{guard, json};

/// A turn in progress (see `fitTurn` in index.js).
#[napi]
pub struct NativeTurn {
    inner: Mutex<Option<Turn>>,
}

fn finished() -> turnfit::Error {
    turnfit::Error::new(turnfit::ErrorKind::InvalidArgument, "the turn was finished")
}

#[napi]
impl NativeTurn {
    /// `options`: JSON text of the fit options (`model` required).
    #[napi(constructor)]
    pub fn new(conversation: String, options: String) -> napi::Result<Self> {
        guard("fitTurn", || {
            let o: FitOptions = turnfit::frontend::parse_options("options", Some(&options))?;
            let t = Turn::start(&ModelRegistry::builtin(), &conversation, &o)?;
            Ok(NativeTurn { inner: Mutex::new(Some(t)) })
        })
    }

    /// The waiting summarizer request as JSON text, or null.
    #[napi]
    pub fn call(&self) -> napi::Result<Option<String>> {
        guard("fitTurn", || {
            let g = self.inner.lock();
            let t = g.as_ref().ok_or_else(finished)?;
            t.call().map(json).transpose()
        })
    }

    /// The summarizer's text for the waiting request.
    #[napi]
    pub fn resume(&self, summary: String) -> napi::Result<()> {
        guard("fitTurn", || self.inner.lock().as_mut().ok_or_else(finished)?.resume(Reply::Summary(summary)))
    }

    /// The summarizer failed: `reason` is `error`, `timeout`, `not_text` or `invalid_utf8`.
    #[napi]
    pub fn fail(&self, reason: String, message: String) -> napi::Result<()> {
        guard("fitTurn", || {
            let reason = FailReason::from_name(&reason)?;
            self.inner.lock().as_mut().ok_or_else(finished)?.resume(Reply::Failed { reason, message })
        })
    }

    /// `{conversation, report}` as JSON text; the turn is then finished.
    #[napi]
    pub fn finish(&self) -> napi::Result<crate::FitJsonResult> {
        guard("fitTurn", || {
            let t = self.inner.lock().take().ok_or_else(finished)?;
            let (c, report) = t.finish()?;
            Ok(crate::FitJsonResult { conversation: c.to_json()?, report: json(&report)? })
        })
    }
}

//! `NativeFitSession` (core `turnfit::turn::FitSession`, issue 52): a
//! history kept parsed and counted between turns, so an adapter step reads
//! and counts only its new messages. The facade's `FitSession` drives it;
//! a step's turn is a `NativeTurn` (see `NativeTurn.onSession`) holding its
//! own copy of the history, so the session's lock is not held while the
//! host's summarizer runs. JSON text in and out, conversion only.

use napi_derive::napi;
use parking_lot::Mutex;

use turnfit::chat::Format;
use turnfit::turn::FitSession;

use crate::error::{guard, to_usize};

/// A fit session (see `FitSession` in index.js).
#[napi]
pub struct NativeFitSession {
    pub(crate) inner: Mutex<FitSession>,
}

#[napi]
impl NativeFitSession {
    /// `conversation`: JSON text in any format `fit` takes; `format`: a
    /// format name (`"openai"`, `"ai_sdk"`, ...) to force it, or null.
    #[napi(constructor)]
    pub fn new(conversation: String, format: Option<String>) -> napi::Result<Self> {
        guard("FitSession", || {
            let format: Option<Format> = match format {
                Some(f) => Some(turnfit::frontend::parse_json("format", &serde_json::Value::from(f).to_string())?),
                None => None,
            };
            Ok(NativeFitSession { inner: Mutex::new(FitSession::new(&conversation, format)?) })
        })
    }

    /// Keeps the first `keep` messages (a non-negative integer, checked by
    /// the facade) and appends `newMessages` (JSON text of an array of
    /// messages in the session's format). On an error nothing changes.
    #[napi]
    pub fn update(&self, keep: f64, new_messages: String) -> napi::Result<()> {
        guard("FitSession", || self.inner.lock().update(to_usize(keep), &new_messages).map(|_| ()))
    }

    /// The messages held.
    #[napi(getter)]
    pub fn length(&self) -> u32 {
        u32::try_from(self.inner.lock().len()).unwrap_or(u32::MAX)
    }
}

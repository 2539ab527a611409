//! Events for logging (core/src/events.rs) through a foreign callback
//! interface: a Kotlin or Swift `EventListener` set on a `ContextWindow`,
//! `CircuitBreaker`, `Tracer` or `SkillSet` receives each event's kind and
//! its payload as JSON (docs/formats.md, "Events"), on the thread that made
//! the call, before that call returns.
//!
//! A listener that throws: uniffi catches the exception at the boundary and
//! hands it here as an error, which is dropped. The call that raised the
//! event has already done its work, so failing it would report a change as
//! not made; the remaining events of that call are still delivered. A
//! listener that must not lose its own failures catches them itself.

use std::cell::RefCell;
use std::sync::Arc;

use turnfit::events::{Event, Observer};

use crate::TurnfitError;

/// Receives a handle's events. Implemented in Kotlin (an interface) or
/// Swift (a protocol).
#[uniffi::export(with_foreign)]
pub trait EventListener: Send + Sync {
    /// One event: `kind` is its stable name (`compacted`, `repaired`,
    /// `budget_crossed`, `breaker_state_changed`, `span_repeated`,
    /// `span_overdue`, `skill_skipped`, `span_finished`), `payload_json` the event as one
    /// JSON object with `kind` first (schemas/event.json). Called on the
    /// thread of the call that raised it; the handle may be called back.
    /// An exception thrown here is caught and dropped (the call completes).
    fn on_event(&self, kind: String, payload_json: String) -> Result<(), TurnfitError>;
}

/// How a listener's exception reaches Rust: caught by uniffi's generated
/// code, turned into this error, then dropped by [`deliver`].
impl From<uniffi::UnexpectedUniFFICallbackError> for TurnfitError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        TurnfitError::Internal(format!("event listener threw: {}", e.reason))
    }
}

/// Hands one event to `listener`, dropping what it throws (module docs).
pub(crate) fn deliver(listener: &dyn EventListener, e: &Event) {
    let _dropped = listener.on_event(e.kind().name().to_owned(), e.to_json());
}

/// An observer delivering straight to `listener`: for the handles whose core
/// emits with no lock held (breakers, tracers, skill discovery).
pub(crate) fn direct(listener: Option<Arc<dyn EventListener>>) -> Observer {
    match listener {
        Some(l) => Observer::new(move |e: &Event| deliver(&*l, e)),
        None => Observer::none(),
    }
}

thread_local! {
    /// Events a window raised during the current call on this thread.
    static PENDING: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
}

/// An observer that queues events on the calling thread. A window's core
/// emits while the binding's mutex is held, so the events wait for
/// [`take_pending`] after the lock is released: a listener may then call the
/// window back without deadlocking. The queue is thread-local, so each call
/// delivers exactly the events it raised, on its own thread.
pub(crate) fn queued() -> Observer {
    Observer::new(|e: &Event| PENDING.with(|p| p.borrow_mut().push(e.clone())))
}

/// The events queued by [`queued`] on this thread, oldest first.
pub(crate) fn take_pending() -> Vec<Event> {
    PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()))
}

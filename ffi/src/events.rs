//! Events for logging at the C ABI: one host callback per handle, the way
//! rustls-ffi takes a log callback (a plain function pointer plus a user
//! pointer, data valid only during the call). The core decides what an event
//! is and builds its JSON (`turnfit_core::events`); this file only stores the
//! callback and calls it.
//!
//! Reentrancy is made safe rather than forbidden: no lock of the handle is
//! held while the callback runs. The core's breakers and tracers already
//! emit after releasing their lock; a window's lock is held by this layer,
//! so its events are queued while the lock is held and delivered once it is
//! released (by [`WindowGuard`]'s drop), still on the caller's thread and
//! before the call returns.

use std::ffi::{c_char, c_void};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use turnfit_core::events::{Event, EventKind, Observer};
use turnfit_core::window::Window;

use crate::args;
use crate::boundary::guard;
use crate::error::turnfit_error;
use crate::recovery::turnfit_breaker;
use crate::skills::turnfit_skills;
use crate::status::turnfit_status;
use crate::trace::turnfit_tracer;
use crate::window::turnfit_window;

/// Event kind `compacted`: a window compaction was applied.
pub const TURNFIT_EVENT_COMPACTED: u32 = 1;
/// Event kind `repaired`: a window repair changed the conversation.
pub const TURNFIT_EVENT_REPAIRED: u32 = 2;
/// Event kind `budget_crossed`: a load, push, replace or repair moved the
/// window's verdict up (past the trigger, or past the limit).
pub const TURNFIT_EVENT_BUDGET_CROSSED: u32 = 3;
/// Event kind `breaker_state_changed`: a breaker key changed state.
pub const TURNFIT_EVENT_BREAKER_STATE_CHANGED: u32 = 4;
/// Event kind `span_repeated`: a span was folded into the previous record.
pub const TURNFIT_EVENT_SPAN_REPEATED: u32 = 5;
/// Event kind `span_overdue`: an open span was first seen past its deadline.
pub const TURNFIT_EVENT_SPAN_OVERDUE: u32 = 6;
/// Event kind `skill_skipped`: skill discovery skipped an entry.
pub const TURNFIT_EVENT_SKILL_SKIPPED: u32 = 7;
/// Event kind `span_finished`: a span ended (a tool call finished, failed,
/// timed out or was cancelled); sent by a tracer whose config has
/// `"span_finished_events": true`, the payload the execution's record.
pub const TURNFIT_EVENT_SPAN_FINISHED: u32 = 8;

/// An event callback: `user` is the pointer given with it, `kind` a
/// `TURNFIT_EVENT_*` number (new kinds may be added: ignore unknown ones),
/// `payload` one line of JSON (docs/formats.md, "Events"; its `kind` field
/// is the kind's name), `payload_len` bytes long and NUL-terminated.
///
/// The contract for every setter:
/// - **Threads:** called synchronously on the thread that made the call that
///   raised the event, before that call returns; never from another thread.
///   A handle shared by threads calls it from each of them, so `user` must
///   be safe to use from those threads.
/// - **Lifetime:** never called after the handle's `_free`. After a setter
///   replaces or clears it, it is not called again by calls that start
///   later; a call already under way on another thread may still deliver to
///   it until that call returns. `user` must stay valid until then.
/// - **Payload:** valid only during the call; copy it to keep it.
/// - **Reentrancy:** no lock of the handle is held while the callback runs,
///   so it may call any turnfit function, on that handle too (an event raised
///   by such a call is delivered to the callback nested, on the same
///   thread). It must not free the handle that raised the event.
/// - **Unwinding:** the callback must not unwind (a C++ exception, a
///   longjmp) into turnfit: that is undefined behaviour. Catch inside.
pub type turnfit_event_callback =
    Option<unsafe extern "C" fn(user: *mut c_void, kind: u32, payload: *const c_char, payload_len: usize)>;

/// A callback and its user pointer.
#[derive(Clone, Copy)]
pub(crate) struct Callback {
    f: unsafe extern "C" fn(*mut c_void, u32, *const c_char, usize),
    user: *mut c_void,
}

// SAFETY: the pointers are only passed back to the host's callback, on the
// threads that call the handle; the header makes `user` the host's to keep
// usable from those threads (like rustls-ffi's userdata).
unsafe impl Send for Callback {}
// SAFETY: as above; the callback never touches `user` itself.
unsafe impl Sync for Callback {}

impl Callback {
    fn new(f: turnfit_event_callback, user: *mut c_void) -> Option<Callback> {
        f.map(|f| Callback { f, user })
    }

    /// Calls the host with the event's kind and JSON (NUL-terminated).
    fn deliver(&self, e: &Event) {
        let mut json = e.to_json();
        let len = json.len();
        json.push('\0');
        // SAFETY: the host's callback, with its own user pointer; the
        // payload lives until the call returns, as documented.
        unsafe { (self.f)(self.user, e.kind().number(), json.as_ptr().cast(), len) }
    }

    /// An observer delivering straight to the host (for handles whose core
    /// emits with no lock held).
    fn observer(self) -> Observer {
        Observer::new(move |e: &Event| self.deliver(e))
    }
}

/// A window behind its mutex, with the events raised under the lock queued
/// for delivery after it is released.
pub(crate) struct ObservedWindow {
    window: Mutex<Window>,
    queue: Arc<Mutex<Vec<Event>>>,
    callback: Mutex<Option<Callback>>,
}

impl ObservedWindow {
    pub(crate) fn new(window: Window) -> ObservedWindow {
        ObservedWindow { window: Mutex::new(window), queue: Arc::default(), callback: Mutex::new(None) }
    }

    /// Locks the window; events it raises are delivered when the guard drops.
    pub(crate) fn lock(&self) -> WindowGuard<'_> {
        WindowGuard { guard: Some(self.window.lock()), owner: self }
    }

    fn set_callback(&self, cb: Option<Callback>) {
        let mut w = self.window.lock();
        let observer = match cb {
            Some(_) => {
                let queue = self.queue.clone();
                Observer::new(move |e: &Event| queue.lock().push(e.clone()))
            }
            None => Observer::none(),
        };
        w.set_observer(observer);
        *self.callback.lock() = cb;
    }
}

/// The lock on a window; dropping it releases the lock, then delivers the
/// events the locked call raised.
pub(crate) struct WindowGuard<'a> {
    guard: Option<MutexGuard<'a, Window>>,
    owner: &'a ObservedWindow,
}

impl Deref for WindowGuard<'_> {
    type Target = Window;
    fn deref(&self) -> &Window {
        self.guard.as_deref().expect("the guard is held until drop")
    }
}

impl DerefMut for WindowGuard<'_> {
    fn deref_mut(&mut self) -> &mut Window {
        self.guard.as_deref_mut().expect("the guard is held until drop")
    }
}

impl Drop for WindowGuard<'_> {
    fn drop(&mut self) {
        // Taken while the window is still locked, so another thread's call
        // cannot take this call's events (or hand it its own).
        let events = std::mem::take(&mut *self.owner.queue.lock());
        drop(self.guard.take());
        if events.is_empty() {
            return;
        }
        let cb = *self.owner.callback.lock();
        if let Some(cb) = cb {
            for e in &events {
                cb.deliver(e);
            }
        }
    }
}

/// The name of an event kind (`"compacted"`, ... as in the payload's `kind`
/// field), or `"unrecognized"` for a number this library does not define.
/// The returned string is static and NUL-terminated; never free it.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn turnfit_event_kind_name(kind: u32) -> *const c_char {
    let name = crate::boundary::guard_value("turnfit_event_kind_name", "unrecognized\0", || {
        match EventKind::ALL.iter().find(|k| k.number() == kind) {
            Some(EventKind::Compacted) => "compacted\0",
            Some(EventKind::Repaired) => "repaired\0",
            Some(EventKind::BudgetCrossed) => "budget_crossed\0",
            Some(EventKind::BreakerStateChanged) => "breaker_state_changed\0",
            Some(EventKind::SpanRepeated) => "span_repeated\0",
            Some(EventKind::SpanOverdue) => "span_overdue\0",
            Some(EventKind::SkillSkipped) => "skill_skipped\0",
            Some(EventKind::SpanFinished) => "span_finished\0",
            None => "unrecognized\0",
        }
    });
    name.as_ptr().cast()
}

/// Sets the window's event callback (kinds `compacted`, `repaired`,
/// `budget_crossed`), replacing any earlier one; `callback` NULL clears it.
/// See `turnfit_event_callback` for threads, lifetime, reentrancy and
/// unwinding. Thread-safe (waits for a call under way on another thread).
///
/// Errors: `NULL_ARGUMENT` (window).
///
/// # Safety
/// `window` is live; `callback` is NULL or a function valid until the
/// window is freed or the callback replaced, as is `user` for it; `err` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_set_event_callback(
    window: *mut turnfit_window,
    callback: turnfit_event_callback,
    user: *mut c_void,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_set_event_callback", err, || {
        // SAFETY: per the contract above.
        let w = unsafe { args::handle(window.cast_const(), "window")? };
        w.inner.set_callback(Callback::new(callback, user));
        Ok(())
    })
}

/// Sets the breaker's event callback (kind `breaker_state_changed`),
/// replacing any earlier one; `callback` NULL clears it. A call already
/// under way on another thread may still deliver to the old callback until
/// it returns. See `turnfit_event_callback`. Thread-safe.
///
/// Errors: `NULL_ARGUMENT` (breaker).
///
/// # Safety
/// As `turnfit_window_set_event_callback`, for `breaker`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_set_event_callback(
    breaker: *mut turnfit_breaker,
    callback: turnfit_event_callback,
    user: *mut c_void,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_breaker_set_event_callback", err, || {
        // SAFETY: per the contract above.
        let b = unsafe { args::handle(breaker.cast_const(), "breaker")? };
        b.inner.set_observer(Callback::new(callback, user).map_or_else(Observer::none, Callback::observer));
        Ok(())
    })
}

/// Sets the tracer's event callback (kinds `span_repeated`,
/// `span_overdue`, and `span_finished` when the tracer's config has
/// `span_finished_events`), replacing any earlier one; `callback` NULL clears it. A
/// call already under way on another thread may still deliver to the old
/// callback until it returns. See `turnfit_event_callback`. Thread-safe.
///
/// Errors: `NULL_ARGUMENT` (tracer).
///
/// # Safety
/// As `turnfit_window_set_event_callback`, for `tracer`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tracer_set_event_callback(
    tracer: *mut turnfit_tracer,
    callback: turnfit_event_callback,
    user: *mut c_void,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tracer_set_event_callback", err, || {
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(tracer.cast_const(), "tracer")? };
        t.inner.set_observer(Callback::new(callback, user).map_or_else(Observer::none, Callback::observer));
        Ok(())
    })
}

/// `turnfit_skills_open`, delivering one `skill_skipped` event per entry of
/// the root that discovery skipped (the same entries as the listing's
/// `ignored`), in name order, after discovery and before this returns. A
/// failed open delivers nothing. `callback` may be NULL (then this is
/// `turnfit_skills_open`). The callback is not kept: the handle raises no
/// later events. See `turnfit_event_callback`.
///
/// Errors: as `turnfit_skills_open`: `IO`, `LIMIT_EXCEEDED`, `INVALID_JSON`,
/// `UNKNOWN_MODEL`, `UNKNOWN_ENCODING`, `INVALID_UTF8`, `NULL_ARGUMENT`,
/// `INVALID_ARGUMENT` (empty root).
///
/// # Safety
/// As `turnfit_skills_open`; `callback` is NULL or a function valid for the
/// duration of this call, as is `user` for it.
#[no_mangle]
pub unsafe extern "C" fn turnfit_skills_open_with_events(
    root: *const c_char,
    root_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    callback: turnfit_event_callback,
    user: *mut c_void,
    out_skills: *mut *mut turnfit_skills,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_skills_open_with_events", err, || {
        let observer = Callback::new(callback, user).map_or_else(Observer::none, Callback::observer);
        // SAFETY: per the contract above.
        unsafe { crate::skills::open(root, root_len, options_json, options_json_len, &observer, out_skills) }
    })
}

#[cfg(test)]
#[path = "../tests/events.rs"]
mod tests;

//! Agent call stacks. A `turnfit_callstack` is immutable: entering an agent
//! returns a new handle and leaves the old one valid and unchanged, so
//! parallel branches of a workflow each hold their own stack. Handles may be
//! shared by any number of threads.

use std::ffi::c_char;

use turnfit_core::callstack::CallStack;
use turnfit_core::limits::{MAX_AGENT_NAME_BYTES, MAX_JSON_BYTES};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::turnfit_error;
use crate::status::turnfit_status;
use crate::strings::json_string;
use crate::strings::turnfit_string;

/// An immutable agent call stack. Thread-safe.
pub struct turnfit_callstack {
    inner: CallStack,
}

fn boxed(inner: CallStack) -> *mut turnfit_callstack {
    Box::into_raw(Box::new(turnfit_callstack { inner }))
}

/// The default maximum depth of a call stack (the core's
/// `callstack::DEFAULT_MAX_DEPTH`): pass it to `turnfit_callstack_new` for
/// the usual limit.
pub const TURNFIT_CALLSTACK_DEFAULT_MAX_DEPTH: usize = 5;

/// Creates an empty stack allowing `max_depth` agents (at least 1; use
/// `TURNFIT_CALLSTACK_DEFAULT_MAX_DEPTH` for the default). On success
/// `*out_stack` owns a handle to release with `turnfit_callstack_free`.
/// Errors: `INVALID_ARGUMENT` (0: since ABI 2, as in the core and in
/// `turnfit_callstack_from_json`; it used to select the default),
/// `LIMIT_EXCEEDED` (over 1,000,000), `NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
/// `out_stack` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_callstack_new(
    max_depth: usize,
    out_stack: *mut *mut turnfit_callstack,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_callstack_new", err, || {
        let dst = out(out_stack, "out_stack")?;
        dst.write(boxed(CallStack::new(max_depth)?));
        Ok(())
    })
}

/// Rebuilds a stack from its JSON form `{"agents": [...], "max_depth": n}`
/// (docs/formats.md, "Call stack"), checking every entry as
/// `turnfit_callstack_enter` does. Errors: `INVALID_JSON`, `CYCLE_DETECTED`,
/// `DEPTH_EXCEEDED`, `INVALID_ARGUMENT`, `LIMIT_EXCEEDED`, `INVALID_UTF8`,
/// `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: input `schemas/callstack.json`.
///
/// # Safety
/// `json` is valid for `json_len` bytes (or NULL with length 0);
/// `out_stack` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_callstack_from_json(
    json: *const c_char,
    json_len: usize,
    out_stack: *mut *mut turnfit_callstack,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_callstack_from_json", err, || {
        let dst = out(out_stack, "out_stack")?;
        // SAFETY: per the contract above.
        let text = unsafe { args::text(json, json_len, "json", MAX_JSON_BYTES) }?;
        dst.write(boxed(CallStack::from_json(text)?));
        Ok(())
    })
}

/// Enters `agent` from the top of `stack`: on success `*out_stack` owns a
/// NEW handle one frame deeper (free it with `turnfit_callstack_free`);
/// `stack` itself is unchanged and stays valid. Errors: `CYCLE_DETECTED`
/// (the agent is already on the stack, including a self-handoff; the
/// message carries the chain, e.g. "planner -> coder -> planner"),
/// `DEPTH_EXCEEDED` (the stack is full; the message carries the chain),
/// `INVALID_ARGUMENT` (empty name or a control character),
/// `LIMIT_EXCEEDED` (a name over 256 bytes), `INVALID_UTF8`,
/// `NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
/// `stack` is a live handle; `agent` is valid for `agent_len` bytes;
/// `out_stack` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_callstack_enter(
    stack: *const turnfit_callstack,
    agent: *const c_char,
    agent_len: usize,
    out_stack: *mut *mut turnfit_callstack,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_callstack_enter", err, || {
        let dst = out(out_stack, "out_stack")?;
        // SAFETY: per the contract above.
        let (s, agent) =
            unsafe { (args::handle(stack, "stack")?, args::text(agent, agent_len, "agent", MAX_AGENT_NAME_BYTES)?) };
        dst.write(boxed(s.inner.enter(agent)?));
        Ok(())
    })
}

/// The stack as JSON: `{"agents": [...], "depth": n, "max_depth": m}`,
/// outermost agent first. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/callstack.json`.
///
/// # Safety
/// `stack` is a live handle; `out_json` is valid for a write; `err` is NULL
/// or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_callstack_to_json(
    stack: *const turnfit_callstack,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_callstack_to_json", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let s = unsafe { args::handle(stack, "stack") }?;
        dst.write(json_string(&s.inner.to_json_value())?);
        Ok(())
    })
}

/// Releases a stack handle. Stacks entered from it stay valid (frames are
/// shared and reference-counted). `turnfit_callstack_free(NULL)` does
/// nothing. The caller must ensure no other thread still uses the handle.
///
/// # Safety
/// `stack` is NULL or a live handle from turnfit that has not been freed.
#[no_mangle]
pub unsafe extern "C" fn turnfit_callstack_free(stack: *mut turnfit_callstack) {
    crate::boundary::guard_void("turnfit_callstack_free", || {
        if !stack.is_null() {
            // SAFETY: created by `Box::into_raw` in `boxed`.
            drop(unsafe { Box::from_raw(stack) });
        }
    })
}

#[cfg(test)]
mod default_depth_tests {
    #[test]
    fn the_macro_is_the_core_default() {
        assert_eq!(super::TURNFIT_CALLSTACK_DEFAULT_MAX_DEPTH, turnfit_core::callstack::DEFAULT_MAX_DEPTH);
    }
}

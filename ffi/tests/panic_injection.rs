//! Panic injection (`cargo test -p turnfit-ffi --features panic-inject`):
//! every function the header declares is made to panic inside its panic
//! boundary, and must turn that into `TURNFIT_STATUS_PANIC` with an error
//! naming itself, or, when it returns no status (the `_free` functions,
//! `turnfit_error_code`/`_message`, `turnfit_status_name`,
//! `turnfit_clock_now_us`), return normally. Nothing may unwind out of an
//! exported function. The list of functions is read from include/turnfit.h,
//! so a new function without an entry in `calls()` fails this test.
//!
//! A unit-test module of the ffi crate (this crate has no rlib; see lib.rs).
//! With the panic hit first thing inside the boundary, no argument is looked
//! at, so every argument is zero (NULL pointers, zero lengths).
#![allow(unused_unsafe, clippy::let_unit_value, clippy::unit_arg)]

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::boundary::inject;
use crate::*;

/// A zero of any argument type: NULL, 0 or false.
fn z<T>() -> T {
    // SAFETY: only used for pointer, integer and bool parameters, for which
    // all-zero bytes are a valid value.
    unsafe { std::mem::zeroed() }
}

enum Call {
    /// Returns a status and takes `turnfit_error **err` last.
    Status(fn(*mut *mut turnfit_error) -> turnfit_status),
    /// Runs inside a boundary but returns no status.
    NoStatus(fn()),
    /// Returns a static value and runs no code that could panic.
    NoBoundary(fn()),
}

fn calls() -> Vec<(&'static str, Call)> {
    vec![
        ("turnfit_callstack_new", Call::Status(|err| unsafe { turnfit_callstack_new(z(), z(), err) })),
        ("turnfit_callstack_from_json", Call::Status(|err| unsafe { turnfit_callstack_from_json(z(), z(), z(), err) })),
        ("turnfit_callstack_enter", Call::Status(|err| unsafe { turnfit_callstack_enter(z(), z(), z(), z(), err) })),
        ("turnfit_callstack_to_json", Call::Status(|err| unsafe { turnfit_callstack_to_json(z(), z(), err) })),
        (
            "turnfit_callstack_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_callstack_free(z()) };
            }),
        ),
        (
            "turnfit_error_code",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_error_code(z()) };
            }),
        ),
        (
            "turnfit_error_message",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_error_message(z(), z()) };
            }),
        ),
        (
            "turnfit_error_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_error_free(z()) };
            }),
        ),
        ("turnfit_handoff_validate", Call::Status(|err| unsafe { turnfit_handoff_validate(z(), z(), z(), err) })),
        ("turnfit_handoff_render", Call::Status(|err| unsafe { turnfit_handoff_render(z(), z(), z(), z(), z(), err) })),
        (
            "turnfit_handoff_render_in",
            Call::Status(|err| unsafe { turnfit_handoff_render_in(z(), z(), z(), z(), z(), z(), err) }),
        ),
        ("turnfit_handoff_filter", Call::Status(|err| unsafe { turnfit_handoff_filter(z(), z(), z(), z(), z(), err) })),
        (
            "turnfit_recovery_classify",
            Call::Status(|err| unsafe { turnfit_recovery_classify(z(), z(), z(), z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_recovery_classify_in",
            Call::Status(|err| unsafe {
                turnfit_recovery_classify_in(z(), z(), z(), z(), z(), z(), z(), z(), z(), z(), err)
            }),
        ),
        ("turnfit_recovery_backoff", Call::Status(|err| unsafe { turnfit_recovery_backoff(z(), z(), z(), err) })),
        ("turnfit_breaker_new", Call::Status(|err| unsafe { turnfit_breaker_new(z(), z(), z(), err) })),
        (
            "turnfit_breaker_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_breaker_free(z()) };
            }),
        ),
        ("turnfit_breaker_allow", Call::Status(|err| unsafe { turnfit_breaker_allow(z(), z(), z(), z(), z(), err) })),
        (
            "turnfit_breaker_record_success_state",
            Call::Status(|err| unsafe { turnfit_breaker_record_success_state(z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_breaker_record_failure_state",
            Call::Status(|err| unsafe { turnfit_breaker_record_failure_state(z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_breaker_record_success",
            Call::Status(|err| unsafe { turnfit_breaker_record_success(z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_breaker_record_failure",
            Call::Status(|err| unsafe { turnfit_breaker_record_failure(z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_breaker_record_failure_in",
            Call::Status(|err| unsafe { turnfit_breaker_record_failure_in(z(), z(), z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_breaker_failure_counts",
            Call::Status(|err| unsafe { turnfit_breaker_failure_counts(z(), z(), err) }),
        ),
        ("turnfit_breaker_state", Call::Status(|err| unsafe { turnfit_breaker_state(z(), z(), z(), z(), z(), err) })),
        ("turnfit_registry_new", Call::Status(|err| unsafe { turnfit_registry_new(z(), err) })),
        (
            "turnfit_registry_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_registry_free(z()) };
            }),
        ),
        (
            "turnfit_registry_register",
            Call::Status(|err| unsafe { turnfit_registry_register(z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_registry_lookup",
            Call::Status(|err| unsafe { turnfit_registry_lookup(z(), z(), z(), z(), z(), z(), err) }),
        ),
        ("turnfit_registry_list", Call::Status(|err| unsafe { turnfit_registry_list(z(), z(), err) })),
        (
            "turnfit_registry_register_counter",
            Call::Status(|err| unsafe { turnfit_registry_register_counter(z(), z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_registry_register_model_files",
            Call::Status(|err| unsafe { turnfit_registry_register_model_files(z(), z(), z(), z(), err) }),
        ),
        ("turnfit_skills_open", Call::Status(|err| unsafe { turnfit_skills_open(z(), z(), z(), z(), z(), err) })),
        (
            "turnfit_skills_open_in",
            Call::Status(|err| unsafe { turnfit_skills_open_in(z(), z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_skills_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_skills_free(z()) };
            }),
        ),
        ("turnfit_skills_list", Call::Status(|err| unsafe { turnfit_skills_list(z(), z(), err) })),
        ("turnfit_skills_body", Call::Status(|err| unsafe { turnfit_skills_body(z(), z(), z(), z(), err) })),
        (
            "turnfit_skills_render_index",
            Call::Status(|err| unsafe { turnfit_skills_render_index(z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_status_kind_name",
            Call::NoStatus(|| {
                let _ = turnfit_status_kind_name(z());
            }),
        ),
        (
            "turnfit_status_name",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_status_name(z()) };
            }),
        ),
        ("turnfit_string_free_parts", Call::NoStatus(|| unsafe { turnfit_string_free_parts(z(), z()) })),
        (
            "turnfit_string_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_string_free(z()) };
            }),
        ),
        (
            "turnfit_tokens_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_tokens_free(z()) };
            }),
        ),
        ("turnfit_tokenizer_new", Call::Status(|err| unsafe { turnfit_tokenizer_new(z(), z(), z(), z(), err) })),
        (
            "turnfit_tokenizer_new_for_model",
            Call::Status(|err| unsafe { turnfit_tokenizer_new_for_model(z(), z(), z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_tokenizer_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_tokenizer_free(z()) };
            }),
        ),
        (
            "turnfit_file_tokenizer_open",
            Call::Status(|err| unsafe { turnfit_file_tokenizer_open(z(), z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_file_tokenizer_from_bytes",
            Call::Status(|err| unsafe {
                turnfit_file_tokenizer_from_bytes(z(), z(), z(), z(), z(), z(), z(), z(), err)
            }),
        ),
        (
            "turnfit_file_tokenizer_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_file_tokenizer_free(z()) };
            }),
        ),
        ("turnfit_file_tokenizer_info", Call::Status(|err| unsafe { turnfit_file_tokenizer_info(z(), z(), err) })),
        (
            "turnfit_file_tokenizer_count",
            Call::Status(|err| unsafe { turnfit_file_tokenizer_count(z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_file_tokenizer_encode",
            Call::Status(|err| unsafe { turnfit_file_tokenizer_encode(z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_file_tokenizer_decode",
            Call::Status(|err| unsafe { turnfit_file_tokenizer_decode(z(), z(), z(), z(), err) }),
        ),
        ("turnfit_tokenizer_info", Call::Status(|err| unsafe { turnfit_tokenizer_info(z(), z(), err) })),
        ("turnfit_tokenizer_count", Call::Status(|err| unsafe { turnfit_tokenizer_count(z(), z(), z(), z(), err) })),
        (
            "turnfit_tokenizer_count_until_limit",
            Call::Status(|err| unsafe { turnfit_tokenizer_count_until_limit(z(), z(), z(), z(), z(), z(), err) }),
        ),
        ("turnfit_tokenizer_encode", Call::Status(|err| unsafe { turnfit_tokenizer_encode(z(), z(), z(), z(), err) })),
        (
            "turnfit_tokenizer_token_bytes",
            Call::Status(|err| unsafe { turnfit_tokenizer_token_bytes(z(), z(), z(), err) }),
        ),
        (
            "turnfit_tokenizer_decode_bytes",
            Call::Status(|err| unsafe { turnfit_tokenizer_decode_bytes(z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_tokenizer_token_id",
            Call::Status(|err| unsafe { turnfit_tokenizer_token_id(z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_tokenizer_encode_bytes",
            Call::Status(|err| unsafe { turnfit_tokenizer_encode_bytes(z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_tokenizer_decode_with_offsets",
            Call::Status(|err| unsafe { turnfit_tokenizer_decode_with_offsets(z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_tokenizer_encode_special",
            Call::Status(|err| unsafe { turnfit_tokenizer_encode_special(z(), z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_tokenizer_special_tokens",
            Call::Status(|err| unsafe { turnfit_tokenizer_special_tokens(z(), z(), err) }),
        ),
        (
            "turnfit_tokenizer_decode",
            Call::Status(|err| unsafe { turnfit_tokenizer_decode(z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_tokenizer_truncate",
            Call::Status(|err| unsafe {
                turnfit_tokenizer_truncate(z(), z(), z(), z(), z(), z(), z(), z(), z(), z(), err)
            }),
        ),
        ("turnfit_assemble", Call::Status(|err| unsafe { turnfit_assemble(z(), z(), z(), z(), err) })),
        ("turnfit_toolset_report", Call::Status(|err| unsafe { turnfit_toolset_report(z(), z(), z(), z(), err) })),
        ("turnfit_toolset_select", Call::Status(|err| unsafe { turnfit_toolset_select(z(), z(), z(), z(), z(), err) })),
        (
            "turnfit_clock_now_us",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_clock_now_us() };
            }),
        ),
        ("turnfit_tracer_new", Call::Status(|err| unsafe { turnfit_tracer_new(z(), z(), z(), err) })),
        (
            "turnfit_tracer_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_tracer_free(z()) };
            }),
        ),
        (
            "turnfit_tracer_start",
            Call::Status(|err| unsafe { turnfit_tracer_start(z(), z(), z(), z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_tracer_end",
            Call::Status(|err| unsafe { turnfit_tracer_end(z(), z(), z(), z(), z(), z(), z(), err) }),
        ),
        (
            "turnfit_tracer_end_with",
            Call::Status(|err| unsafe { turnfit_tracer_end_with(z(), z(), z(), z(), z(), z(), err) }),
        ),
        ("turnfit_tracer_overdue", Call::Status(|err| unsafe { turnfit_tracer_overdue(z(), z(), z(), err) })),
        ("turnfit_tracer_expire", Call::Status(|err| unsafe { turnfit_tracer_expire(z(), z(), z(), err) })),
        ("turnfit_tracer_export", Call::Status(|err| unsafe { turnfit_tracer_export(z(), z(), z(), err) })),
        ("turnfit_tracer_span", Call::Status(|err| unsafe { turnfit_tracer_span(z(), z(), z(), err) })),
        (
            "turnfit_window_set_event_callback",
            Call::Status(|err| unsafe { turnfit_window_set_event_callback(z(), None, z(), err) }),
        ),
        (
            "turnfit_breaker_set_event_callback",
            Call::Status(|err| unsafe { turnfit_breaker_set_event_callback(z(), None, z(), err) }),
        ),
        (
            "turnfit_tracer_set_event_callback",
            Call::Status(|err| unsafe { turnfit_tracer_set_event_callback(z(), None, z(), err) }),
        ),
        (
            "turnfit_skills_open_with_events",
            Call::Status(|err| unsafe { turnfit_skills_open_with_events(z(), z(), z(), z(), None, z(), z(), err) }),
        ),
        (
            "turnfit_event_kind_name",
            Call::NoStatus(|| {
                let _ = turnfit_event_kind_name(z());
            }),
        ),
        (
            "turnfit_version",
            Call::NoBoundary(|| {
                let _ = turnfit_version();
            }),
        ),
        (
            "turnfit_abi_version",
            Call::NoBoundary(|| {
                let _ = turnfit_abi_version();
            }),
        ),
        ("turnfit_window_new", Call::Status(|err| unsafe { turnfit_window_new(z(), z(), z(), z(), z(), z(), err) })),
        (
            "turnfit_window_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_window_free(z()) };
            }),
        ),
        ("turnfit_window_load", Call::Status(|err| unsafe { turnfit_window_load(z(), z(), z(), err) })),
        ("turnfit_window_push", Call::Status(|err| unsafe { turnfit_window_push(z(), z(), z(), z(), err) })),
        ("turnfit_window_preflight", Call::Status(|err| unsafe { turnfit_window_preflight(z(), z(), z(), z(), err) })),
        ("turnfit_window_calibrate", Call::Status(|err| unsafe { turnfit_window_calibrate(z(), z(), z(), err) })),
        ("turnfit_window_validate", Call::Status(|err| unsafe { turnfit_window_validate(z(), z(), err) })),
        ("turnfit_window_repair", Call::Status(|err| unsafe { turnfit_window_repair(z(), z(), z(), z(), err) })),
        ("turnfit_window_conversation", Call::Status(|err| unsafe { turnfit_window_conversation(z(), z(), err) })),
        ("turnfit_window_compact", Call::Status(|err| unsafe { turnfit_window_compact(z(), z(), z(), z(), err) })),
        (
            "turnfit_window_apply_summary",
            Call::Status(|err| unsafe { turnfit_window_apply_summary(z(), z(), z(), z(), z(), z(), err) }),
        ),
        ("turnfit_fit", Call::Status(|err| unsafe { turnfit_fit(z(), z(), z(), z(), z(), z(), z(), err) })),
        ("turnfit_turn_start", Call::Status(|err| unsafe { turnfit_turn_start(z(), z(), z(), z(), z(), z(), err) })),
        ("turnfit_turn_call", Call::Status(|err| unsafe { turnfit_turn_call(z(), z(), z(), err) })),
        ("turnfit_turn_resume", Call::Status(|err| unsafe { turnfit_turn_resume(z(), z(), z(), z(), z(), z(), err) })),
        ("turnfit_turn_finish", Call::Status(|err| unsafe { turnfit_turn_finish(z(), z(), z(), err) })),
        (
            "turnfit_turn_free",
            Call::NoStatus(|| {
                let _ = unsafe { turnfit_turn_free(z()) };
            }),
        ),
        (
            "turnfit_turn_run",
            Call::Status(|err| unsafe { turnfit_turn_run(z(), z(), z(), z(), z(), None, z(), z(), z(), err) }),
        ),
        (
            "turnfit_window_turn_start",
            Call::Status(|err| unsafe { turnfit_window_turn_start(z(), z(), z(), z(), z(), err) }),
        ),
        ("turnfit_window_turn_finish", Call::Status(|err| unsafe { turnfit_window_turn_finish(z(), z(), z(), err) })),
        (
            "turnfit_window_turn_run",
            Call::Status(|err| unsafe { turnfit_window_turn_run(z(), z(), z(), z(), None, z(), z(), err) }),
        ),
    ]
}

/// The names of the functions include/turnfit.h declares.
fn declared() -> BTreeSet<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/turnfit.h");
    let header = std::fs::read_to_string(path).unwrap();
    let mut names = BTreeSet::new();
    for line in header.lines() {
        let t = line.trim_start();
        if t.starts_with('*') || t.starts_with('/') || t.starts_with('#') {
            continue;
        }
        let mut rest = t;
        while let Some(i) = rest.find("turnfit_") {
            let tail = &rest[i..];
            let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
            if tail[end..].starts_with('(') {
                names.insert(tail[..end].to_owned());
            }
            rest = &tail[end..];
        }
    }
    names
}

#[test]
fn the_table_covers_every_declared_function() {
    let declared = declared();
    assert!(declared.len() >= 60, "header parse found only {} functions", declared.len());
    let table: BTreeSet<String> = calls().iter().map(|(n, _)| (*n).to_owned()).collect();
    let uncovered: Vec<_> = declared.difference(&table).collect();
    assert!(uncovered.is_empty(), "no panic-injection entry for {uncovered:?}: add them to calls()");
    let stale: Vec<_> = table.difference(&declared).collect();
    assert!(stale.is_empty(), "entries for functions the header does not declare: {stale:?}");
}

#[test]
fn every_exported_function_turns_an_injected_panic_into_a_status() {
    let mut failures = Vec::new();
    for (name, call) in calls() {
        inject::select(Some(name));
        let before = inject::fired();
        let outcome = match call {
            Call::Status(f) => {
                let mut err: *mut turnfit_error = std::ptr::null_mut();
                match catch_unwind(AssertUnwindSafe(|| f(&mut err))) {
                    Err(_) => Err("unwound out of the function".to_owned()),
                    Ok(status) if status != turnfit_status::Panic => Err(format!("returned {status:?}, not Panic")),
                    Ok(_) if err.is_null() => Err("no error object".to_owned()),
                    Ok(_) => {
                        let mut len = 0;
                        let msg = unsafe { std::ffi::CStr::from_ptr(turnfit_error_message(err, &mut len)) }
                            .to_string_lossy()
                            .into_owned();
                        let code = unsafe { turnfit_error_code(err) };
                        unsafe { turnfit_error_free(err) };
                        let expected = format!("{name}: panicked: injected panic in {name}");
                        if msg != expected {
                            Err(format!("message {msg:?}, expected {expected:?}"))
                        } else if code != turnfit_status::Panic {
                            Err(format!("error code {code:?}"))
                        } else {
                            Ok(())
                        }
                    }
                }
            }
            Call::NoStatus(f) => catch_unwind(f).map_err(|_| "unwound out of the function".to_owned()),
            Call::NoBoundary(f) => catch_unwind(f).map_err(|_| "unwound out of the function".to_owned()),
        };
        inject::select(None);
        let fired = inject::fired() - before;
        let outcome = outcome.and_then(|()| match (name, fired) {
            ("turnfit_version" | "turnfit_abi_version", 0) => Ok(()),
            ("turnfit_version" | "turnfit_abi_version", n) => {
                Err(format!("{n} injected panics in a boundary-free function"))
            }
            (_, 1) => Ok(()),
            // The boundary names another function, or none was reached.
            (_, n) => Err(format!("injection fired {n} times (does its boundary pass the right name?)")),
        });
        if let Err(e) = outcome {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "panic injection failures:\n{}", failures.join("\n"));
}

#[test]
fn without_a_selection_nothing_is_injected() {
    inject::select(None);
    let before = inject::fired();
    let mut reg = std::ptr::null_mut();
    assert_eq!(unsafe { turnfit_registry_new(&mut reg, std::ptr::null_mut()) }, turnfit_status::Ok);
    unsafe { turnfit_registry_free(reg) };
    assert_eq!(inject::fired(), before);
}

//! Selective tool sets: per-agent allowlists over a tool registry and what
//! each agent's set costs. Stateless: the registry travels as JSON.

use std::ffi::c_char;

use turnfit_core::limits::{MAX_JSON_BYTES, MAX_KEY_BYTES};
use turnfit_core::toolset::{report_json, select_json};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::turnfit_error;
use crate::registry::{registry_or_builtin, turnfit_registry};
use crate::status::turnfit_status;
use crate::strings::json_string;
use crate::strings::turnfit_string;

/// The token cost of a tool registry and of each agent's allowlisted set.
/// `request_json` is `{"model": "gpt-4o", "tools": [...], "allowlists":
/// {"agent": ["tool", "prefix*"]}}` (docs/formats.md, "Tool sets"); tools in
/// the OpenAI, legacy-functions or Anthropic shape. `*out_json` receives
/// `{"model", "exact", "tool_count", "full_tokens", "agents": [{"agent",
/// "tools", "tokens", "saved_tokens", "percent_of_full"}]}`. `registry` may
/// be NULL for the built-in model table. Errors: `INVALID_JSON`,
/// `INVALID_ARGUMENT` (duplicate tool, an allowlist entry matching no tool),
/// `UNKNOWN_MODEL`, `LIMIT_EXCEEDED`, `INVALID_UTF8`, `NULL_ARGUMENT`.
/// Thread-safe.
///
/// JSON: request `schemas/toolset-request.json`; result `schemas/toolset-report.json`.
///
/// # Safety
/// `registry` is NULL or live; `request_json` is valid for its length;
/// `out_json` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_toolset_report(
    registry: *const turnfit_registry,
    request_json: *const c_char,
    request_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_toolset_report", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (registry, text) = unsafe {
            (registry_or_builtin(registry), args::text(request_json, request_json_len, "request_json", MAX_JSON_BYTES)?)
        };
        dst.write(json_string(&report_json(registry, text)?)?);
        Ok(())
    })
}

/// `agent`'s tool definitions: a JSON array holding each allowlisted tool
/// of `request_json` (as for `turnfit_toolset_report`) exactly as given, in
/// registry order, ready to send as the request's `tools`. An agent without
/// an allowlist is `INVALID_ARGUMENT`. Other errors as for
/// `turnfit_toolset_report`. Thread-safe.
///
/// Errors: `INVALID_JSON`, `INVALID_ARGUMENT`, `LIMIT_EXCEEDED`, `INVALID_UTF8`, `NULL_ARGUMENT`.
///
/// JSON: request `schemas/toolset-request.json`.
///
/// # Safety
/// Text arguments are valid for their lengths; `out_json` is valid for a
/// write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_toolset_select(
    request_json: *const c_char,
    request_json_len: usize,
    agent: *const c_char,
    agent_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_toolset_select", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (text, agent) = unsafe {
            (
                args::text(request_json, request_json_len, "request_json", MAX_JSON_BYTES)?,
                args::text(agent, agent_len, "agent", MAX_KEY_BYTES)?,
            )
        };
        dst.write(json_string(&select_json(text, agent)?)?);
        Ok(())
    })
}

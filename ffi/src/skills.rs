//! Skill sets. A `turnfit_skills` handle holds the headers discovered under
//! one root and caches bodies as they are requested; it is immutable apart
//! from that cache (one mutex per skill), so any number of threads may use
//! one handle at once.

use std::ffi::c_char;

use std::path::Path;

use turnfit_core::events::Observer;
use turnfit_core::limits::MAX_JSON_BYTES;
use turnfit_core::skills::{IndexOptions, SkillSet};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::{turnfit_error, FfiError};
use crate::registry::{registry_or_builtin, turnfit_registry};
use crate::status::turnfit_status;
use crate::strings::{json_string, turnfit_string};

/// The skills of one folder: headers, diagnostics and a body cache.
/// Thread-safe.
pub struct turnfit_skills {
    pub(crate) inner: SkillSet,
}

/// Discovers the skills directly under `root` (a UTF-8 path): folders
/// holding `SKILL.md` or `skill.md` (Agent Skills) and `<name>.md` files
/// (in `auto`, a `.md` without front-matter such as a README is skipped).
/// Only front-matter is read; bodies are read on request. `options_json` is
/// `{"model", "encoding", "layout": "auto"|"nested"|"folder"|"flat"}` (docs/formats.md,
/// every field optional; `(NULL, 0)` for the defaults: both layouts,
/// cl100k_base). A skill that cannot be read or breaks the format rules does
/// not fail the call: it is listed with diagnostics. On success
/// `*out_skills` owns a handle to release with `turnfit_skills_free`.
/// Errors: `IO` (the root is missing, not a directory, unreadable),
/// `LIMIT_EXCEEDED` (more than 1024 entries), `INVALID_JSON`,
/// `UNKNOWN_MODEL`, `UNKNOWN_ENCODING`, `INVALID_UTF8`, `NULL_ARGUMENT`.
/// Thread-safe.
///
/// JSON: `options_json` `schemas/skills-open-options.json`.
///
/// # Safety
/// Text arguments are valid for their lengths (or NULL with length 0);
/// `out_skills` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_skills_open(
    root: *const c_char,
    root_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_skills: *mut *mut turnfit_skills,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_skills_open", err, || {
        // SAFETY: per the contract above.
        unsafe { open(root, root_len, options_json, options_json_len, &Observer::none(), out_skills) }
    })
}

/// As `turnfit_skills_open`, with an options `model` looked up in `registry`
/// (NULL: the built-in table), so a model registered on a registry handle
/// counts skills as it counts a window (new, no ABI bump). Errors: as for
/// `turnfit_skills_open`.
///
/// # Safety
/// `registry` is NULL or live; the rest as for `turnfit_skills_open`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_skills_open_in(
    registry: *const turnfit_registry,
    root: *const c_char,
    root_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_skills: *mut *mut turnfit_skills,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_skills_open_in", err, || {
        // SAFETY: per the contract above.
        unsafe { open_in(registry, root, root_len, options_json, options_json_len, &Observer::none(), out_skills) }
    })
}

/// The body of `turnfit_skills_open` and `turnfit_skills_open_with_events`.
///
/// # Safety
/// As `turnfit_skills_open`.
pub(crate) unsafe fn open(
    root: *const c_char,
    root_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    observer: &Observer,
    out_skills: *mut *mut turnfit_skills,
) -> Result<(), FfiError> {
    // SAFETY: forwarded contract; a NULL registry is the built-in table.
    unsafe { open_in(std::ptr::null(), root, root_len, options_json, options_json_len, observer, out_skills) }
}

/// [`open`] with the registry an options `model` is looked up in.
///
/// # Safety
/// `registry` is NULL or live; the rest as `turnfit_skills_open`.
unsafe fn open_in(
    registry: *const turnfit_registry,
    root: *const c_char,
    root_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    observer: &Observer,
    out_skills: *mut *mut turnfit_skills,
) -> Result<(), FfiError> {
    let dst = out(out_skills, "out_skills")?;
    // SAFETY: per the contract above.
    let (registry, root, options) = unsafe {
        (
            registry_or_builtin(registry),
            args::text(root, root_len, "root", MAX_JSON_BYTES)?,
            args::opt_text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
        )
    };
    if root.is_empty() {
        return Err(FfiError::invalid("root is empty"));
    }
    let set = SkillSet::open_json_in(registry, Path::new(root), options, observer)?;
    dst.write(Box::into_raw(Box::new(turnfit_skills { inner: set })));
    Ok(())
}

/// Releases a skill set. `turnfit_skills_free(NULL)` does nothing. The
/// caller must ensure no other thread still uses the handle.
///
/// # Safety
/// `skills` is NULL or a live handle from `turnfit_skills_open`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_skills_free(skills: *mut turnfit_skills) {
    crate::boundary::guard_void("turnfit_skills_free", || {
        if !skills.is_null() {
            // SAFETY: created by `Box::into_raw` in `turnfit_skills_open`.
            drop(unsafe { Box::from_raw(skills) });
        }
    })
}

/// Every discovered skill as JSON (docs/formats.md, "Skill listing"):
/// headers, `valid`, diagnostics, `header_tokens`, `body_bytes`, and
/// `body_tokens` for bodies already loaded (null before), plus the entries
/// that were ignored. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/skills-list.json`.
///
/// # Safety
/// `skills` is live; `out_json` is valid for a write; `err` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_skills_list(
    skills: *const turnfit_skills,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_skills_list", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let s = unsafe { args::handle(skills, "skills") }?;
        dst.write(json_string(&s.inner.listing())?);
        Ok(())
    })
}

/// The body of skill `name` (folder name, file stem, or front-matter
/// `name` or `label`) as JSON `{"name", "text", "tokens"}`, read on
/// the first request and cached. The file must still be the one discovery
/// checked. Errors: `UNSAFE_PATH` (a name with `..`, a separator, NUL, a
/// backslash or a drive letter; or a skill whose file leaves the root),
/// `INVALID_ARGUMENT` (no such skill), `IO` (the file was replaced or
/// changed since discovery), `LIMIT_EXCEEDED`, `INVALID_UTF8`,
/// `INVALID_JSON` (a skill whose front-matter could not be read).
/// Thread-safe.
///
/// JSON: result `schemas/skill-body.json`.
///
/// # Safety
/// `skills` is live; `name` is valid for its length; `out_json` is valid
/// for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_skills_body(
    skills: *const turnfit_skills,
    name: *const c_char,
    name_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_skills_body", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (s, name) = unsafe { (args::handle(skills, "skills")?, args::name(name, name_len, "name", "skill name")?) };
        let body = s.inner.body(name)?;
        dst.write(json_string(&*body)?);
        Ok(())
    })
}

/// Renders the skills index for a system prompt. `options_json` is
/// `{"budget", "scores", "categories", "preamble", "min_description_tokens"}`
/// (docs/formats.md; `(NULL, 0)` for no budget, category order). The result
/// is JSON `{"text", "tokens", "budget", "included", "shortened",
/// "omitted"}`: every valid skill is either included (whole or shortened)
/// or listed as omitted, and invalid skills are listed as omitted with
/// reason `invalid`. Errors: `DOES_NOT_FIT` (the preamble alone is over the
/// budget), `INVALID_JSON`, `INVALID_ARGUMENT` (a score that is not
/// finite), `LIMIT_EXCEEDED` (options over 64 MiB), `INVALID_UTF8`,
/// `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: `options_json` `schemas/skills-index-options.json`; result `schemas/skills-index.json`.
///
/// # Safety
/// `skills` is live; `options_json` is valid for its length (or NULL with
/// length 0); `out_json` is valid for a write; `err` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_skills_render_index(
    skills: *const turnfit_skills,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_skills_render_index", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (s, options) = unsafe {
            (
                args::handle(skills, "skills")?,
                args::opt_text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
            )
        };
        let options: IndexOptions = args::opt_json("options_json", options)?;
        dst.write(json_string(&s.inner.render_index(&options)?)?);
        Ok(())
    })
}

//! Model registry handles. A registry is internally synchronized: lookups
//! from many threads run in parallel, and registration takes a short write
//! lock, so one handle may be shared by every thread of the host.

use std::ffi::c_char;

use std::sync::LazyLock;

use turnfit_core::limits::MAX_JSON_BYTES;
use turnfit_core::{frontend, Encoding, ModelRegistry};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::turnfit_error;
use crate::status::turnfit_status;
use crate::strings::{json_string, turnfit_string};

/// A set of model profiles: the built-in table plus the host's own entries.
/// Thread-safe; registration on one handle is not visible through another.
pub struct turnfit_registry {
    inner: ModelRegistry,
}

static BUILTIN: LazyLock<ModelRegistry> = LazyLock::new(ModelRegistry::builtin);

/// The registry behind `ptr`, or the shared read-only built-in one for NULL.
///
/// # Safety
/// `ptr` is NULL or a live registry handle.
pub(crate) unsafe fn registry_or_builtin<'a>(ptr: *const turnfit_registry) -> &'a ModelRegistry {
    // SAFETY: per the contract.
    unsafe { ptr.as_ref() }.map_or(&*BUILTIN, |r| &r.inner)
}

/// Creates a registry holding the built-in model table. On success
/// `*out_registry` owns a handle to release with `turnfit_registry_free`. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// # Safety
/// `out_registry` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_registry_new(
    out_registry: *mut *mut turnfit_registry,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_registry_new", err, || {
        let dst = out(out_registry, "out_registry")?;
        dst.write(Box::into_raw(Box::new(turnfit_registry { inner: ModelRegistry::builtin() })));
        Ok(())
    })
}

/// Releases a registry. `turnfit_registry_free(NULL)` does nothing. Tokenizers
/// made from it stay valid. The caller must ensure no other thread still
/// uses the handle.
///
/// # Safety
/// `registry` is NULL or a live handle from `turnfit_registry_new`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_registry_free(registry: *mut turnfit_registry) {
    crate::boundary::guard_void("turnfit_registry_free", || {
        if !registry.is_null() {
            // SAFETY: created by `Box::into_raw` in `turnfit_registry_new`.
            drop(unsafe { Box::from_raw(registry) });
        }
    })
}

/// Adds or replaces model profiles. `json` is one profile object or an array
/// of them (schema in docs/formats.md): `{"name": "acme-*", "encoding":
/// "o200k_base", "context_window": 32000, "max_output_tokens": 4096,
/// "exact": false, "family": "acme"}`, where a trailing `*` makes the name a
/// prefix; names are stored lowercase. All profiles are validated before any
/// is registered, and an error names the offending element.
/// `*out_registered` receives the number of distinct names registered (a name
/// given twice counts once; the later profile wins). `registry` must be a
/// handle from `turnfit_registry_new`: the built-in table is read-only.
/// Thread-safe.
///
/// Errors: `INVALID_JSON` (malformed, unknown field, unknown encoding),
/// `INVALID_ARGUMENT` (empty name, zero context window), `LIMIT_EXCEEDED`,
/// `NULL_ARGUMENT`, `INVALID_UTF8`.
///
/// JSON: `json` `schemas/model-profile.json`.
///
/// # Safety
/// `registry` is a live handle; `json` is valid for `json_len` bytes (or NULL
/// with length 0); `out_registered` is valid for a write; `err` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_registry_register(
    registry: *mut turnfit_registry,
    json: *const c_char,
    json_len: usize,
    out_registered: *mut usize,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_registry_register", err, || {
        let dst = out(out_registered, "out_registered")?;
        // SAFETY: per the contract above.
        let (r, text) =
            unsafe { (args::handle(registry, "registry")?, args::text(json, json_len, "json", MAX_JSON_BYTES)?) };
        dst.write(r.inner.register_json(text)?);
        Ok(())
    })
}

/// Looks a model up and returns its profile as JSON. Names are matched
/// case-insensitively: an exact name, then the longest `*` prefix that ends on
/// a name boundary (`gpt-4o*` takes `gpt-4o-mini`, not `gpt-4oo`), then the
/// same without a routing prefix (`openai/gpt-4o`, `us.anthropic.claude-...`)
/// and for a fine-tuned name its base model (`ft:gpt-4o-mini-...:org::id`),
/// then a family's pattern for newer versions (`claude-opus-5`: the family
/// estimate, `"source": "family"`, `"exact": false`); docs/formats.md has the
/// rules. The result is `{"model", "matched",
/// "source": "builtin"|"host"|"family"|"fallback", "family", "encoding",
/// "context_window", "max_output_tokens", "exact"}`. `registry` may be NULL
/// for the built-in table. When the model is unknown and `fallback_encoding`
/// is not empty, the answer uses it with unknown limits and `"exact": false`;
/// otherwise the call fails with `UNKNOWN_MODEL`, naming close matches.
/// Thread-safe.
///
/// Errors: `UNKNOWN_MODEL`, `UNKNOWN_ENCODING` (a fallback that is not an
/// encoding), `INVALID_ARGUMENT` (a name over 256 bytes, refused from its
/// length before it is read), `INVALID_UTF8`, `NULL_ARGUMENT`.
///
/// JSON: result `schemas/model-info.json`.
///
/// # Safety
/// `registry` is NULL or a live handle; text arguments are valid for their
/// lengths (or NULL with length 0); `out_json` is valid for a write; `err` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_registry_lookup(
    registry: *const turnfit_registry,
    model: *const c_char,
    model_len: usize,
    fallback_encoding: *const c_char,
    fallback_encoding_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_registry_lookup", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (model, fallback, registry) = unsafe {
            (
                args::name(model, model_len, "model", "model name")?,
                args::opt_name(fallback_encoding, fallback_encoding_len, "fallback_encoding", "encoding name")?,
                registry_or_builtin(registry),
            )
        };
        let fallback = fallback.map(Encoding::from_name).transpose()?;
        let info = registry.lookup_or(model, fallback)?;
        dst.write(json_string(&info)?);
        Ok(())
    })
}

/// Lists every profile as a JSON array of `{"name", "family", "encoding",
/// "context_window", "max_output_tokens", "exact", "source"}` in table order
/// (host entries last). `registry` may be NULL for the built-in table.
/// Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/registry-list.json`.
///
/// # Safety
/// `registry` is NULL or a live handle; `out_json` is valid for a write;
/// `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_registry_list(
    registry: *const turnfit_registry,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_registry_list", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let registry = unsafe { registry_or_builtin(registry) };
        let text = frontend::to_json(&registry.list_json())?;
        dst.write(turnfit_string::from_string(text));
        Ok(())
    })
}

//! Model registry handles. A registry is internally synchronized: lookups
//! from many threads run in parallel, and registration takes a short write
//! lock, so one handle may be shared by every thread of the host.

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

use turnfit_core::limits::MAX_JSON_BYTES;
use turnfit_core::{frontend, Encoding, ModelRegistry};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::{turnfit_error, FfiError};
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

/// A host counter (see `turnfit_registry_register_counter`): counts the
/// `text_len` bytes at `text` (UTF-8, not NUL-terminated, valid only during
/// the call) and returns 0 with the number of tokens in `*out_tokens`, or
/// returns any other value for a failure, optionally with a message: up to
/// `message_capacity` bytes of UTF-8 written at `message` (the buffer is
/// zeroed before the call; the message ends at its first NUL or at the
/// capacity; invalid UTF-8 is replaced). The contract:
/// - **Threads:** it is called on the thread of any call that counts for its
///   model (`turnfit_fit`, windows, turns), possibly on several threads at
///   once: `user_data` must be safe to use from all of them.
/// - **Reentrancy:** it runs while turnfit holds what it counts for, so it
///   must not call turnfit: every function returning a status fails with
///   `INVALID_ARGUMENT` ("called from inside a host counter") without
///   running, instead of waiting on a lock forever; the `_free` functions,
///   `turnfit_error_code`/`_message` and the static lookups
///   (`turnfit_version`, `turnfit_status_name`, ...) still work (it must not
///   free a handle the counting call is using).
/// - **Counts:** above the text's bytes plus 64 is refused (`INVALID_ARGUMENT`
///   naming the model): a tokenizer makes at most one token a byte, plus a
///   few special ones.
/// - **Unwinding:** it must not unwind (a C++ exception, a longjmp) into
///   turnfit: that is undefined behaviour. Catch inside and return non-zero.
pub type turnfit_count_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        text: *const c_char,
        text_len: usize,
        out_tokens: *mut usize,
        message: *mut c_char,
        message_capacity: usize,
    ) -> i32,
>;

/// Releases a host counter's `user_data` (see
/// `turnfit_registry_register_counter` for when it runs): called once, on
/// the thread releasing the counter's last holder, possibly while turnfit
/// holds the registry's lock (an entry replaced), so it must not call
/// turnfit.
pub type turnfit_free_user_data_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// Bytes of the message buffer a host counter may fill.
const COUNT_MESSAGE_BYTES: usize = 256;

type CountFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut usize, *mut c_char, usize) -> i32;

/// A C counter with its user data; releases the user data with
/// `free_user_data` when the last holder (the registry entry, a window or
/// turn counting with it) drops it, unless registration failed (`armed`
/// cleared: the user data stays the caller's).
struct HostCount {
    f: CountFn,
    user: *mut c_void,
    free: turnfit_free_user_data_fn,
    armed: AtomicBool,
}

// SAFETY: `user` is only passed back to the host's own functions, on the
// threads that count for the model, and to `free_user_data` once;
// `turnfit_count_fn`'s contract makes the host's user data safe to use from
// every thread using the registry (as rustls-ffi's userdata), so the
// pointer may move between threads and be shared.
unsafe impl Send for HostCount {}
// SAFETY: as above; turnfit never reads or writes through `user` itself.
unsafe impl Sync for HostCount {}

impl HostCount {
    /// Calls the host; its failure becomes the core's "failed: ..." text.
    fn count(&self, text: &str) -> Result<usize, String> {
        let mut tokens = 0usize;
        let mut message = [0u8; COUNT_MESSAGE_BYTES];
        // SAFETY: the host's function with its own user data, per
        // `turnfit_count_fn`'s contract; `text` and both out-buffers live
        // across the call.
        let code = unsafe {
            (self.f)(
                self.user,
                text.as_ptr().cast(),
                text.len(),
                &mut tokens,
                message.as_mut_ptr().cast(),
                message.len(),
            )
        };
        if code == 0 {
            return Ok(tokens);
        }
        let end = message.iter().position(|&b| b == 0).unwrap_or(message.len());
        let message = String::from_utf8_lossy(&message[..end]);
        Err(if message.is_empty() { format!("it returned {code}") } else { format!("it returned {code}: {message}") })
    }
}

impl Drop for HostCount {
    fn drop(&mut self) {
        if let (true, Some(free)) = (*self.armed.get_mut(), self.free) {
            // SAFETY: the host's release function for its own user data,
            // called once: this is the last holder.
            unsafe { free(self.user) }
        }
    }
}

/// Clears a registration's `armed` flag unless the registration succeeded,
/// also when the core unwinds: on failure the user data stays the caller's.
struct Disarm(Arc<HostCount>, bool);

impl Drop for Disarm {
    fn drop(&mut self) {
        if !self.1 {
            self.0.armed.store(false, Ordering::Relaxed);
        }
    }
}

/// Adds or replaces one model profile with the host's own counter, for a
/// model whose tokenizer is not public (issue 34; Python's
/// `register_model(profile, count=f)`). `profile_json` is one profile object
/// as for `turnfit_registry_register` (an array is refused: a counter goes
/// with one model). Every `turnfit_fit`, window and turn using this registry
/// for a model that resolves to this entry counts text by calling
/// `count(user_data, ...)` (see `turnfit_count_fn`); framing (per message,
/// reply priming, tool constants) stays the model's, and cuts are made in
/// the profile's `encoding`, so that should be the closest public one.
/// Registering the name again, with or without a counter, replaces it.
///
/// Ownership of `user_data`: on success, turnfit holds it until the entry's
/// last holder is released (the entry replaced or the registry freed, and
/// every window and turn made for the model from it freed), then calls
/// `free_user_data(user_data)` once, on the thread releasing it (never, if
/// `free_user_data` is NULL). On failure it is not kept and
/// `free_user_data` is not called. `registry` must be a handle from
/// `turnfit_registry_new`: the built-in table is read-only. Thread-safe.
///
/// Errors: `NULL_ARGUMENT` (`registry`, `count`, or `profile_json` with a
/// length), `INVALID_JSON` (malformed, unknown field, unknown encoding, an
/// array), `INVALID_ARGUMENT` (empty name, zero context window),
/// `LIMIT_EXCEEDED`, `INVALID_UTF8`.
///
/// JSON: `profile_json` `schemas/model-profile.json`.
///
/// # Safety
/// `registry` is a live handle; `profile_json` is valid for
/// `profile_json_len` bytes (or NULL with length 0); `count` follows
/// `turnfit_count_fn`'s contract with `user_data` until `free_user_data`
/// runs; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_registry_register_counter(
    registry: *mut turnfit_registry,
    profile_json: *const c_char,
    profile_json_len: usize,
    count: turnfit_count_fn,
    user_data: *mut c_void,
    free_user_data: turnfit_free_user_data_fn,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_registry_register_counter", err, || {
        // SAFETY: per the contract above.
        let (r, text) = unsafe {
            (
                args::handle(registry, "registry")?,
                args::text(profile_json, profile_json_len, "profile_json", MAX_JSON_BYTES)?,
            )
        };
        let f = count.ok_or_else(|| FfiError::new(turnfit_status::NullArgument, "count is NULL"))?;
        let host = Arc::new(HostCount { f, user: user_data, free: free_user_data, armed: AtomicBool::new(true) });
        let mut kept = Disarm(host.clone(), false);
        r.inner.register_json_with_counter(text, move |t| host.count(t))?;
        kept.1 = true;
        Ok(())
    })
}

/// Adds or replaces a model known by its own files (issue 50): its
/// tokenizer file, its chat template and the window its server allocated.
/// `spec_json` is `{"name": "qwen3-local", "tokenizer": PATH,
/// "context_window": N, "max_output_tokens": N?, "chat_template": TEXT?,
/// "template_kwargs": {...}?, "pattern": TEXT?}` (docs/formats.md): the
/// tokenizer is an HF `tokenizer.json` (the template is taken from
/// `chat_template.jinja` or `tokenizer_config.json` beside it) or a GGUF
/// (its `tokenizer.chat_template`), unless `chat_template` gives the
/// Jinja source. Then every `turnfit_fit`, turn and window using this
/// registry for `name` counts as the server does: totals are the template
/// rendered and tokenized (`exact: true`), and a fit tightens until the
/// rendered prompt fits. The model's conversations must be OpenAI Chat.
/// `*out_json` receives the entry as `turnfit_registry_lookup` gives it.
/// `registry` must be a handle from `turnfit_registry_new`. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`, `INVALID_UTF8`, `INVALID_JSON` (malformed,
/// unknown field, `context_window` missing), `INVALID_ARGUMENT` (a
/// built-in model's name, a zero window, no template found, a template
/// that raises or does not parse), `IO` (a file that cannot be read),
/// `LIMIT_EXCEEDED` (a template over 1 MiB, a spec over the JSON limit),
/// and the tokenizer loader's statuses for a bad tokenizer file.
/// Instead of `tokenizer`, `ollama_model` (an Ollama model name, its GGUF
/// found in the store `ollama_models`) or `hf_model` (a Hugging Face repo
/// id in the hub cache `hf_cache`, or a folder) name the files; nothing is
/// downloaded. Not found: `IO`, `UNKNOWN_MODEL`, `UNSAFE_PATH` (a name
/// that would leave its store), `INVALID_JSON` (a manifest that is not
/// JSON), `INVALID_ARGUMENT` (a manifest with no model layer, a bad name).
///
/// JSON: `spec_json` docs/formats.md ("Model files"); result
/// `schemas/model-info.json`.
///
/// # Safety
/// `registry` is a live handle; `spec_json` is valid for `spec_json_len`
/// bytes (or NULL with length 0); `out_json` is valid for a write; `err` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_registry_register_model_files(
    registry: *mut turnfit_registry,
    spec_json: *const c_char,
    spec_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_registry_register_model_files", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (r, text) = unsafe {
            (args::handle(registry, "registry")?, args::text(spec_json, spec_json_len, "spec_json", MAX_JSON_BYTES)?)
        };
        let info = turnfit_core::template::register_model_files_json(&r.inner, text)?;
        dst.write(json_string(&info)?);
        Ok(())
    })
}

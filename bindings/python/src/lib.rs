//! `turnfit._native`: the PyO3 layer of the Python package `turnfit`.
//!
//! Conversion only, like `ffi/`: Python values become core arguments, core
//! results become Python values, core errors become `TurnfitError` subclasses,
//! and a panic becomes `InternalError` (never PyO3's `PanicException`).
//! Structured data crosses as JSON text; the Python facade
//! (`python/turnfit/__init__.py`) turns it into dicts and lists with the
//! standard `json` module. `fit` is the exception (issue 36): a plain
//! conversation is walked into the core's JSON values and the result built
//! from them (`dumps::value_of`, `dumps::loads_value`), the same values and
//! objects without the text. Every behaviour lives in the `turnfit` crate.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// The extension's Rust allocations go to mimalloc, not glibc's malloc
/// (Python's own objects are untouched: they come from Python's allocator).
/// `fit` on a long transcript builds and frees hundreds of thousands of
/// small values; glibc's allocator was about 18% of the samples of a 44 MB
/// `fit` and made its time grow faster than the input. With mimalloc one
/// `fit` of the 44 MB transcript took 206 ms of CPU against 360 ms, and
/// 50 against 67 ms at 12 MB, for 12% more peak RSS (324 against 290 MB);
/// see docs/benchmarks.md, "Python: `fit` vs `trim_messages`"
/// (`bash bench/python/allocator.sh` builds the wheel both ways and
/// measures). Only this wheel does it: the C library leaves the allocator
/// to its host (and to the sanitizers and valgrind its tests run under).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod agents;
mod dumps;
mod file_tokenizer;
mod tokenizer;
mod turn;
mod utf8_view;
mod window;

pyo3::create_exception!(turnfit, TurnfitError, PyException, "Base class of every error turnfit reports.");
pyo3::create_exception!(turnfit, InvalidArgumentError, TurnfitError, "An argument is outside its documented domain.");
pyo3::create_exception!(
    turnfit,
    InvalidUtf8Error,
    TurnfitError,
    "Input bytes are not valid UTF-8 (the message gives the offset)."
);
pyo3::create_exception!(turnfit, UnknownEncodingError, TurnfitError, "The encoding name is not one turnfit ships.");
pyo3::create_exception!(turnfit, UnknownModelError, TurnfitError, "The model name is not in the registry.");
pyo3::create_exception!(turnfit, UnknownTokenError, TurnfitError, "A token id is not in the encoding's vocabulary.");
pyo3::create_exception!(turnfit, LimitExceededError, TurnfitError, "An input exceeds a documented limit.");
pyo3::create_exception!(
    turnfit,
    InvalidJsonError,
    TurnfitError,
    "JSON input could not be parsed or does not match its schema."
);
pyo3::create_exception!(
    turnfit,
    InvalidYamlError,
    TurnfitError,
    "YAML input (a skill's front-matter) could not be parsed or is not the expected shape."
);
pyo3::create_exception!(turnfit, DoesNotFitError, TurnfitError, "What must be kept does not fit the budget.");
pyo3::create_exception!(turnfit, IoError, TurnfitError, "A file could not be read.");
pyo3::create_exception!(
    turnfit,
    UnsafePathError,
    TurnfitError,
    "A path was refused (escapes its root, NUL, drive letter...)."
);
pyo3::create_exception!(
    turnfit,
    CycleDetectedError,
    TurnfitError,
    "An agent call stack would re-enter an agent already on it."
);
pyo3::create_exception!(
    turnfit,
    DepthExceededError,
    TurnfitError,
    "An agent call stack would exceed its maximum depth."
);
pyo3::create_exception!(
    turnfit,
    InternalError,
    TurnfitError,
    "An invariant inside turnfit broke (a bug), including a panic."
);

/// The exception class of each core error kind, with its `.kind` spelling.
fn class_of(py: Python<'_>, kind: turnfit::ErrorKind) -> Bound<'_, pyo3::types::PyType> {
    use turnfit::ErrorKind as K;
    match kind {
        K::InvalidArgument => py.get_type::<InvalidArgumentError>(),
        K::InvalidUtf8 => py.get_type::<InvalidUtf8Error>(),
        K::UnknownEncoding => py.get_type::<UnknownEncodingError>(),
        K::UnknownModel => py.get_type::<UnknownModelError>(),
        K::UnknownToken => py.get_type::<UnknownTokenError>(),
        K::LimitExceeded => py.get_type::<LimitExceededError>(),
        K::InvalidJson => py.get_type::<InvalidJsonError>(),
        K::InvalidYaml => py.get_type::<InvalidYamlError>(),
        K::DoesNotFit => py.get_type::<DoesNotFitError>(),
        K::Io => py.get_type::<IoError>(),
        K::UnsafePath => py.get_type::<UnsafePathError>(),
        K::CycleDetected => py.get_type::<CycleDetectedError>(),
        K::DepthExceeded => py.get_type::<DepthExceededError>(),
        K::Internal => py.get_type::<InternalError>(),
        _ => py.get_type::<TurnfitError>(),
    }
}

/// A core error as the matching Python exception, `.kind` set on the instance.
pub(crate) fn to_py(e: turnfit::Error) -> PyErr {
    Python::attach(|py| {
        let cls = class_of(py, e.kind());
        match cls.call1((e.message(),)) {
            Ok(inst) => {
                let _ = inst.setattr("kind", e.kind().as_str());
                PyErr::from_value(inst)
            }
            Err(err) => err,
        }
    })
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".into())
}

/// Runs `f` inside the panic boundary: `Err` becomes its exception class, a
/// panic becomes `InternalError` with the panic's message.
/// A call made from inside a host counter (see `register_model`) is
/// refused with the core's error before it runs: the counter runs while
/// turnfit holds the window or turn it counts for.
pub(crate) fn guard<T>(what: &str, f: impl FnOnce() -> turnfit::Result<T>) -> PyResult<T> {
    turnfit::models::check_not_counting(what).map_err(to_py)?;
    drop(take_interrupt());
    let r = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py(e)),
        Err(p) => Err(to_py(turnfit::Error::new(
            turnfit::ErrorKind::Internal,
            format!("{what}: panic inside turnfit: {}", panic_message(&*p)),
        ))),
    };
    // An interrupt raised inside a host counter is the host's, not a
    // failed count: it propagates as it was raised, whatever the core made
    // of the counter's failure.
    match take_interrupt() {
        Some(interrupt) => Err(interrupt),
        None => r,
    }
}

thread_local! {
    /// A `BaseException` that is not an `Exception` (KeyboardInterrupt,
    /// SystemExit, a cancellation) raised by a host counter during the
    /// current call, to re-raise when the call returns.
    static INTERRUPT: std::cell::RefCell<Option<PyErr>> = const { std::cell::RefCell::new(None) };
}

/// Keeps `e` to re-raise when the call running the host counter returns
/// (the core sees only a failed count and stops counting).
pub(crate) fn stash_interrupt(e: PyErr) {
    INTERRUPT.with(|i| {
        let mut i = i.borrow_mut();
        if i.is_none() {
            *i = Some(e);
        }
    });
}

fn take_interrupt() -> Option<PyErr> {
    INTERRUPT.with(|i| i.borrow_mut().take())
}

/// [`guard`] with the GIL released when `detach` is true (long calls), so
/// other Python threads run meanwhile. `f` must not touch Python objects.
pub(crate) fn guard_detached<T: Send>(
    py: Python<'_>,
    detach: bool,
    what: &str,
    f: impl FnOnce() -> turnfit::Result<T> + Send,
) -> PyResult<T> {
    turnfit::models::check_not_counting(what).map_err(to_py)?;
    // A host counter needs the GIL: a call that may run one keeps it, so
    // no other thread can hold the GIL while waiting on this call's lock.
    if detach && !tokenizer::registry().has_host_counters() {
        let r = py.detach(|| catch_unwind(AssertUnwindSafe(f)));
        match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(to_py(e)),
            Err(p) => Err(to_py(turnfit::Error::new(
                turnfit::ErrorKind::Internal,
                format!("{what}: panic inside turnfit: {}", panic_message(&*p)),
            ))),
        }
    } else {
        guard(what, f)
    }
}

/// Inputs at least this long are processed with the GIL released. Below it
/// the call takes microseconds and releasing the GIL would cost more than it
/// gives.
pub(crate) const DETACH_BYTES: usize = 4096;

/// Text in: `str` (lone surrogates become U+FFFD exactly as tiktoken does:
/// a UTF-16 round trip with `surrogatepass` then `replace`) or `bytes`
/// (checked UTF-8; invalid bytes are `InvalidUtf8Error` with the offset).
/// Anything else is `TypeError`.
pub(crate) fn text_arg<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, str>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return match utf8_view::utf8_of(s) {
            Ok(c) => Ok(c),
            Err(_) => {
                let fixed = s
                    .call_method1("encode", ("utf-16", "surrogatepass"))?
                    .call_method1("decode", ("utf-16", "replace"))?;
                let fixed = fixed.cast::<PyString>()?;
                Ok(Cow::Owned(fixed.to_cow()?.into_owned()))
            }
        };
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        // Zero-copy: the core reads the bytes object's buffer.
        return guard(what, || turnfit::frontend::utf8(what, b.as_bytes()).map(Cow::Borrowed));
    }
    Err(PyTypeError::new_err(format!("{what} must be str or bytes, not {}", obj.get_type().name()?)))
}

/// Like [`text_arg`] for arguments that are `str` only (names, JSON text).
pub(crate) fn str_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if obj.is_instance_of::<PyString>() {
        Ok(text_arg(obj, what)?.into_owned())
    } else {
        Err(PyTypeError::new_err(format!("{what} must be str, not {}", obj.get_type().name()?)))
    }
}

/// A `str` argument with lone surrogates replaced as in [`text_arg`]
/// (conversations, options, names). Anything else is `TypeError`.
pub(crate) struct Text(pub String);

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Text {
    type Error = PyErr;
    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        str_arg(&obj, "argument").map(Text)
    }
}

/// `json.loads(text)`: results cross as JSON and become dicts and lists.
pub(crate) fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.getattr("loads")?.call1((text,))
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> turnfit::Result<String> {
    turnfit::frontend::to_json(v)
}

/// The crate version (as in Cargo.toml).
#[pyfunction]
fn version() -> &'static str {
    turnfit::VERSION
}

/// Every core error kind with the name of its exception class, for the
/// exhaustive mapping test.
#[pyfunction]
fn _error_kinds(py: Python<'_>) -> PyResult<Vec<(String, String)>> {
    turnfit::ErrorKind::ALL.iter().map(|&k| Ok((k.as_str().to_owned(), class_of(py, k).name()?.to_string()))).collect()
}

/// Test hook: raises the exception for a core error of `kind` (the mapping
/// under test is the one every call uses).
#[pyfunction]
fn _raise_kind(kind: &str) -> PyResult<()> {
    let k = turnfit::ErrorKind::ALL
        .iter()
        .copied()
        .find(|k| k.as_str() == kind)
        .ok_or_else(|| PyTypeError::new_err(format!("no error kind {kind}")))?;
    guard("_raise_kind", || Err(turnfit::Error::new(k, format!("raised for a test: {kind}"))))
}

/// Test hook: panics inside the panic boundary (with the GIL released when
/// `detached`), to show a panic surfaces as `InternalError`.
#[pyfunction]
#[pyo3(signature = (detached=false))]
fn _panic(py: Python<'_>, detached: bool) -> PyResult<()> {
    guard_detached(py, detached, "_panic", || -> turnfit::Result<()> {
        panic!("test panic from turnfit._native._panic")
    })
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TurnfitError", py.get_type::<TurnfitError>())?;
    py.get_type::<TurnfitError>().setattr("kind", py.None())?;
    for &k in turnfit::ErrorKind::ALL.iter() {
        let cls = class_of(py, k);
        cls.setattr("kind", k.as_str())?;
        m.add(cls.name()?.to_string(), cls)?;
    }
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(dumps::_dumps_plain, m)?)?;
    m.add_function(wrap_pyfunction!(dumps::_plain_json_len, m)?)?;
    m.add_function(wrap_pyfunction!(_error_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(_raise_kind, m)?)?;
    m.add_function(wrap_pyfunction!(_panic, m)?)?;
    tokenizer::register(m)?;
    file_tokenizer::register(m)?;
    window::register(m)?;
    turn::register(m)?;
    agents::register(m)?;
    Ok(())
}

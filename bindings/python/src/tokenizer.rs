//! `Tokenizer`: exact counting, encoding, decoding and truncation.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use turnfit::{
    DecodeMode, Encoding, ModelInfo, ModelRegistry, SpecialPolicy, SpecialSet, SpecialTokens, Tokenizer as Core,
    TruncateSide,
};

use crate::{guard, guard_detached, str_arg, text_arg, to_json, DETACH_BYTES};

static REGISTRY: std::sync::LazyLock<ModelRegistry> = std::sync::LazyLock::new(ModelRegistry::builtin);

pub(crate) fn registry() -> &'static ModelRegistry {
    &REGISTRY
}

pub(crate) fn special_from(s: &str) -> PyResult<SpecialTokens> {
    match s {
        "ordinary" => Ok(SpecialTokens::Ordinary),
        "recognize" => Ok(SpecialTokens::Recognize),
        other => Err(PyValueError::new_err(format!("special_tokens must be 'ordinary' or 'recognize', not {other:?}"))),
    }
}

/// An exact tokenizer for one encoding (token-identical to OpenAI's
/// tiktoken). Immutable; share one instance between threads freely.
#[pyclass(frozen, module = "turnfit._native")]
pub struct Tokenizer {
    pub(crate) inner: Core,
    model: Option<ModelInfo>,
}

#[pymethods]
impl Tokenizer {
    #[new]
    #[pyo3(signature = (encoding, *, special_tokens="ordinary"))]
    fn new(encoding: &Bound<'_, PyAny>, special_tokens: &str) -> PyResult<Self> {
        let name = str_arg(encoding, "encoding")?;
        let special = special_from(special_tokens)?;
        let inner = guard("Tokenizer", || Core::from_name(&name))?.with_special_tokens(special);
        Ok(Tokenizer { inner, model: None })
    }

    /// A tokenizer for a model name, using the encoding the registry gives it;
    /// with `fallback_encoding`, an unknown model uses that encoding instead of
    /// raising `UnknownModelError` (and `model_info["exact"]` is false).
    #[staticmethod]
    #[pyo3(signature = (model, *, fallback_encoding=None, special_tokens="ordinary"))]
    fn for_model(model: &Bound<'_, PyAny>, fallback_encoding: Option<&str>, special_tokens: &str) -> PyResult<Self> {
        let model = str_arg(model, "model")?;
        let special = special_from(special_tokens)?;
        let (inner, info) = guard("Tokenizer.for_model", || {
            let fallback = fallback_encoding.map(Encoding::from_name).transpose()?;
            registry().tokenizer(&model, fallback)
        })?;
        Ok(Tokenizer { inner: inner.with_special_tokens(special), model: Some(info) })
    }

    /// The encoding's name (`"o200k_base"`, ...).
    #[getter]
    fn encoding(&self) -> &'static str {
        self.inner.encoding().name()
    }

    /// `"ordinary"` or `"recognize"`.
    #[getter]
    fn special_tokens(&self) -> &'static str {
        match self.inner.special_tokens() {
            SpecialTokens::Recognize => "recognize",
            _ => "ordinary",
        }
    }

    /// One past the highest token id (tiktoken's `n_vocab`).
    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    /// Approximate heap bytes of the loaded vocabulary (shared per encoding).
    #[getter]
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }

    /// The registry entry (dict) for tokenizers made by `for_model`, else None.
    #[getter]
    fn model_info<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match &self.model {
            None => Ok(None),
            Some(m) => crate::loads(py, &guard("Tokenizer.model_info", || to_json(m))?).map(Some),
        }
    }

    /// The id of the single token whose bytes are exactly `token` (bytes, or
    /// str as UTF-8; special-token text included). `UnknownTokenError` when
    /// no single token has these bytes.
    fn token_id(&self, token: &Bound<'_, PyAny>) -> PyResult<u32> {
        let t = self.inner;
        if let Ok(b) = token.cast::<PyBytes>() {
            return guard("token_id", || t.token_id(b.as_bytes()));
        }
        let s = str_arg(token, "token")?;
        guard("token_id", || t.token_id(s.as_bytes()))
    }

    /// The encoding's special tokens as `(text, id)` pairs.
    fn special_token_list(&self) -> Vec<(&'static str, u32)> {
        self.inner.encoding().special_tokens().to_vec()
    }

    /// The number of tokens in `text` (str or UTF-8 bytes).
    fn count_tokens(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<usize> {
        let text = text_arg(text, "text")?;
        let t = self.inner;
        guard_detached(py, text.len() >= DETACH_BYTES, "count_tokens", || t.count(&text))
    }

    /// `(tokens, exceeded)`: counting stops once the count passes `limit`;
    /// `tokens` is exact when not exceeded, else greater than `limit`.
    fn count_until_limit(&self, py: Python<'_>, text: &Bound<'_, PyAny>, limit: usize) -> PyResult<(usize, bool)> {
        let text = text_arg(text, "text")?;
        let t = self.inner;
        let r =
            guard_detached(py, text.len() >= DETACH_BYTES, "count_until_limit", || t.count_until_limit(&text, limit))?;
        Ok((r.tokens, r.exceeded))
    }

    /// The token ids of `text` as a list of ints.
    fn encode<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let ids = self.encode_vec(py, text)?;
        PyList::new(py, ids)
    }

    /// The token ids of `text` as an `array('I')` (4 bytes per id, no
    /// Python int per token).
    fn encode_array<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let ids = self.encode_vec(py, text)?;
        let bytes = PyBytes::new_with(py, ids.len() * 4, |buf| {
            for (chunk, id) in buf.chunks_exact_mut(4).zip(&ids) {
                chunk.copy_from_slice(&id.to_ne_bytes());
            }
            Ok(())
        })?;
        py.import("array")?.getattr("array")?.call1(("I", bytes))
    }

    /// The ids of several texts, encoded on one thread each with the GIL
    /// released (the facade's `encode_batch` uses this).
    fn encode_batch(&self, py: Python<'_>, texts: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<Vec<u32>>> {
        let texts: Vec<String> =
            texts.iter().map(|t| text_arg(t, "text").map(|c| c.into_owned())).collect::<PyResult<_>>()?;
        let t = self.inner;
        guard_detached(py, true, "encode_batch", || texts.iter().map(|s| t.encode(s)).collect())
    }

    /// The text of `ids`. `errors` is `"replace"` (U+FFFD for bytes that are
    /// not UTF-8, as tiktoken), `"ignore"` (drop them) or `"strict"`
    /// (`InvalidUtf8Error`).
    #[pyo3(signature = (ids, errors="replace"))]
    fn decode(&self, py: Python<'_>, ids: &Bound<'_, PyAny>, errors: &str) -> PyResult<String> {
        let mode = DecodeMode::from_name(errors).map_err(|_| {
            PyValueError::new_err(format!("errors must be 'replace', 'ignore' or 'strict', not {errors:?}"))
        })?;
        let ids = ids_arg(ids)?;
        let t = self.inner;
        guard_detached(py, ids.len() >= DETACH_BYTES / 4, "decode", || t.decode(&ids, mode))
    }

    /// The exact bytes of `ids` (no UTF-8 requirement).
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids_arg(ids)?;
        let t = self.inner;
        let bytes = guard_detached(py, ids.len() >= DETACH_BYTES / 4, "decode_bytes", || t.decode_bytes(&ids))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The bytes of one token id, ordinary or special (tiktoken's
    /// `decode_single_token_bytes`); `UnknownTokenError` for an id not in
    /// the vocabulary.
    fn token_bytes<'py>(&self, py: Python<'py>, id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids_arg(pyo3::types::PyTuple::new(py, [id])?.as_any())?;
        let t = self.inner;
        let bytes = guard("token_bytes", || t.token_bytes(ids[0]))?;
        Ok(PyBytes::new(py, bytes))
    }

    /// `(text, offsets)`: the text of `ids` (`InvalidUtf8Error` when it is
    /// not UTF-8) and the character offset where each token starts
    /// (tiktoken's `decode_with_offsets`).
    fn decode_with_offsets(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<(String, Vec<usize>)> {
        let ids = ids_arg(ids)?;
        let t = self.inner;
        guard_detached(py, ids.len() >= DETACH_BYTES / 4, "decode_with_offsets", || t.decode_with_offsets(&ids))
    }

    /// The ids of `data` (bytes, UTF-8 or not), as tiktoken's
    /// `_encode_bytes` gives them; special-token text is plain text.
    fn encode_bytes<'py>(&self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let Ok(b) = data.cast::<PyBytes>() else {
            return Err(PyTypeError::new_err(format!("data must be bytes, not {}", data.get_type().name()?)));
        };
        let bytes = b.as_bytes();
        let t = self.inner;
        let ids = guard_detached(py, bytes.len() >= DETACH_BYTES, "encode_bytes", || t.encode_bytes(bytes))?;
        PyList::new(py, ids)
    }

    /// The ids of `text` with tiktoken's special-token rules:
    /// `allowed_special` and `disallowed_special` are each `"all"` or an
    /// iterable of strings; disallowed text raises `InvalidArgumentError`.
    #[pyo3(signature = (text, allowed_special, disallowed_special))]
    fn encode_special<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        allowed_special: &Bound<'py, PyAny>,
        disallowed_special: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let policy = SpecialPolicy {
            allowed: set_arg(allowed_special, "allowed_special")?,
            disallowed: set_arg(disallowed_special, "disallowed_special")?,
        };
        let text = text_arg(text, "text")?;
        let t = self.inner;
        let ids = guard_detached(py, text.len() >= DETACH_BYTES, "encode_special", || t.encode_with(&text, &policy))?;
        PyList::new(py, ids)
    }

    /// Every ordinary token as a dict `{bytes: id}` (tiktoken's
    /// `_mergeable_ranks`).
    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let d = pyo3::types::PyDict::new(py);
        for (id, bytes) in self.inner.ordinary_tokens() {
            d.set_item(PyBytes::new(py, bytes), id)?;
        }
        Ok(d)
    }

    /// Whether `id` is one of the encoding's special tokens.
    fn is_special_token(&self, id: u32) -> bool {
        self.inner.is_special_token(id)
    }

    /// Cuts `text` to at most `max_tokens` tokens on token and character
    /// boundaries (`side`: `"head"`, `"tail"` or `"both"`, joined by
    /// `marker`, where `{removed}` becomes the number of removed tokens).
    /// Returns a dict: `text`, `tokens`, `original_tokens`,
    /// `removed_tokens`, `truncated`.
    #[pyo3(signature = (text, max_tokens, side="both", marker=None))]
    fn truncate<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'_, PyAny>,
        max_tokens: usize,
        side: &str,
        marker: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let side = match side {
            "head" => TruncateSide::Head,
            "tail" => TruncateSide::Tail,
            "both" => TruncateSide::Both,
            other => {
                return Err(PyValueError::new_err(format!("side must be 'head', 'tail' or 'both', not {other:?}")))
            }
        };
        let text = text_arg(text, "text")?;
        let marker = marker.map(|m| str_arg(m, "marker")).transpose()?;
        let t = self.inner;
        let json = guard_detached(py, text.len() >= DETACH_BYTES, "truncate", || {
            to_json(&t.truncate(&text, max_tokens, side, marker.as_deref())?)
        })?;
        crate::loads(py, &json)
    }

    fn __repr__(&self) -> String {
        format!("Tokenizer({:?}, special_tokens={:?})", self.encoding(), self.special_tokens())
    }
}

impl Tokenizer {
    fn encode_vec(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        let text = text_arg(text, "text")?;
        let t = self.inner;
        guard_detached(py, text.len() >= DETACH_BYTES, "encode", || t.encode(&text))
    }
}

/// Token ids in: any iterable of ints (list, tuple, `array('I')`). An int
/// outside 0..2^32 is `UnknownTokenError` like any other id not in the
/// vocabulary; a non-int is `TypeError`.
pub(crate) fn ids_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    if obj.is_instance_of::<pyo3::types::PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err("ids must be a sequence of ints, not str or bytes"));
    }
    let mut out = Vec::with_capacity(obj.len().unwrap_or(0));
    for item in obj.try_iter()? {
        let item = item?;
        if !item.is_instance_of::<pyo3::types::PyInt>() {
            return Err(PyTypeError::new_err(format!("token ids must be int, not {}", item.get_type().name()?)));
        }
        match item.extract::<u32>() {
            Ok(v) => out.push(v),
            Err(_) => {
                let i = out.len();
                return Err(crate::to_py(turnfit::Error::new(
                    turnfit::ErrorKind::UnknownToken,
                    format!("token id {item} at index {i} is not in the vocabulary"),
                )));
            }
        }
    }
    Ok(out)
}

/// A special-token set in: `"all"` or an iterable of str.
fn set_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<SpecialSet> {
    if let Ok(s) = obj.cast::<pyo3::types::PyString>() {
        return match s.to_cow()?.as_ref() {
            "all" => Ok(SpecialSet::All),
            other => Err(PyValueError::new_err(format!("{what} must be 'all' or a set of str, not {other:?}"))),
        };
    }
    let mut names = Vec::new();
    for item in obj.try_iter()? {
        names.push(str_arg(&item?, what)?);
    }
    Ok(SpecialSet::of(names))
}

/// The registry entry of `model` as JSON (see docs/formats.md); with
/// `fallback_encoding` an unknown model is reported as estimated.
#[pyfunction]
#[pyo3(signature = (model, fallback_encoding=None))]
fn _lookup_model_json(model: &Bound<'_, PyAny>, fallback_encoding: Option<&str>) -> PyResult<String> {
    let model = str_arg(model, "model")?;
    guard("lookup_model", || {
        let fallback = fallback_encoding.map(Encoding::from_name).transpose()?;
        to_json(&registry().lookup_or(&model, fallback)?)
    })
}

/// Registers model profiles (a JSON object or array, docs/formats.md) in
/// the binding's registry; returns how many names were registered. With
/// `count`, a callable `count(text) -> int`, the one profile is registered
/// with it as the host counter: the core calls it for every text it
/// counts for that model (this converts the call and its result only).
#[pyfunction]
#[pyo3(signature = (profile_json, count=None))]
fn _register_model(profile_json: crate::Text, count: Option<Bound<'_, PyAny>>) -> PyResult<usize> {
    let Some(count) = count else {
        return guard("register_model", || registry().register_json(&profile_json));
    };
    if !count.is_callable() {
        return Err(PyTypeError::new_err(format!("count must be callable, not {}", count.get_type().name()?)));
    }
    let f: Py<PyAny> = count.unbind();
    let counter = move |text: &str| -> Result<usize, String> {
        Python::attach(|py| {
            let r = f.bind(py).call1((text,)).map_err(|e| {
                let name = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "exception".into());
                // `str()` of the host's exception may itself raise.
                let why = e.value(py).str().map(|s| s.to_string_lossy().into_owned());
                let msg = format!("{name}: {}", why.unwrap_or_else(|_| "<unprintable>".into()));
                // KeyboardInterrupt, SystemExit...: the host's, re-raised
                // when the call returns (issue 48).
                if !e.is_instance_of::<pyo3::exceptions::PyException>(py) {
                    crate::stash_interrupt(e);
                }
                msg
            })?;
            let type_name = || r.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            if r.is_instance_of::<pyo3::types::PyBool>() || !r.is_instance_of::<pyo3::types::PyInt>() {
                return Err(format!("it returned {}, not an int", type_name()));
            }
            r.extract::<usize>().map_err(|_| format!("it returned {r}, not a non-negative int"))
        })
    };
    guard("register_model", || registry().register_json_with_counter(&profile_json, counter).map(|()| 1))
}

/// Registers a model by its files (the spec as JSON, docs/formats.md
/// "Model files") in the binding's registry; returns its entry as JSON.
#[pyfunction]
fn _register_model_files(spec_json: crate::Text) -> PyResult<String> {
    guard("register_model", || to_json(&turnfit::template::register_model_files_json(registry(), &spec_json)?))
}

/// Every registry entry as JSON.
#[pyfunction]
fn _list_models_json() -> PyResult<String> {
    guard("list_models", || to_json(&registry().list_json()))
}

/// The names of the encodings turnfit ships.
#[pyfunction]
fn list_encodings() -> Vec<&'static str> {
    Encoding::ALL.iter().map(|e| e.name()).collect()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tokenizer>()?;
    m.add_function(wrap_pyfunction!(_lookup_model_json, m)?)?;
    m.add_function(wrap_pyfunction!(_list_models_json, m)?)?;
    m.add_function(wrap_pyfunction!(_register_model, m)?)?;
    m.add_function(wrap_pyfunction!(_register_model_files, m)?)?;
    m.add_function(wrap_pyfunction!(list_encodings, m)?)?;
    Ok(())
}

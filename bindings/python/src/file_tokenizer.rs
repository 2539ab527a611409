//! `FileTokenizer`: a tokenizer loaded from a model's own file (an HF
//! `tokenizer.json`, a tiktoken-format file with a split pattern, or a GGUF),
//! the core's `pipeline::FileTokenizer`. Counting and encoding release the
//! GIL on long texts, as `Tokenizer` does.

use pyo3::prelude::*;
use pyo3::types::PyList;

use turnfit::pipeline::{FileTokenizer as Core, LoadOptions};

use crate::tokenizer::{ids_arg, special_from};
use crate::{guard, guard_detached, text_arg, to_json, DETACH_BYTES};

/// A tokenizer loaded from a model's file: `FileTokenizer(path)` reads an HF
/// `tokenizer.json`, a GGUF (metadata only, any size) or, with `pattern`, a
/// tiktoken-format file. Ids equal HF `tokenizers`' (llama.cpp's for a
/// GGUF). Special-token text counts as ordinary text unless
/// `special_tokens="recognize"`. Immutable; share it between threads.
#[pyclass(frozen, module = "turnfit._native")]
pub struct FileTokenizer {
    inner: Core,
}

#[pymethods]
impl FileTokenizer {
    #[new]
    #[pyo3(signature = (path, *, pattern=None, special_tokens="ordinary"))]
    fn new(py: Python<'_>, path: std::path::PathBuf, pattern: Option<String>, special_tokens: &str) -> PyResult<Self> {
        let special = special_from(special_tokens)?;
        let o = LoadOptions::with_pattern(pattern);
        let inner = guard_detached(py, true, "FileTokenizer", || Core::from_file_with(&path, &o))?;
        Ok(FileTokenizer { inner: inner.with_special_tokens(special) })
    }

    /// A tokenizer from the bytes of a file; `name` stands for the file in
    /// errors and in `info`.
    #[staticmethod]
    #[pyo3(signature = (data, name="<bytes>", *, pattern=None, special_tokens="ordinary"))]
    fn from_bytes(
        py: Python<'_>,
        data: &[u8],
        name: &str,
        pattern: Option<String>,
        special_tokens: &str,
    ) -> PyResult<Self> {
        let special = special_from(special_tokens)?;
        let o = LoadOptions::with_pattern(pattern);
        let inner = guard_detached(py, true, "FileTokenizer.from_bytes", || Core::from_bytes_with(data, name, &o))?;
        Ok(FileTokenizer { inner: inner.with_special_tokens(special) })
    }

    /// The file it came from.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// One past the highest id, added tokens included.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    /// `{"name", "vocab_size", "special_tokens", "add_special",
    /// "context_length", "pre", "has_chat_template"}`
    /// (schemas/file-tokenizer-info.json).
    #[getter]
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::loads(py, &guard("FileTokenizer.info", || to_json(&self.inner.describe()))?)
    }

    /// The number of tokens of `text`, without BOS/EOS.
    fn count_tokens(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<usize> {
        let text = text_arg(text, "text")?;
        let t = &self.inner;
        guard_detached(py, text.len() >= DETACH_BYTES, "count_tokens", || t.count(&text))
    }

    /// The ids of `text`; with `add_special`, the file's BOS/EOS around them
    /// (HF's `add_special_tokens=True`).
    #[pyo3(signature = (text, add_special=false))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        add_special: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = text_arg(text, "text")?;
        let t = &self.inner;
        let ids =
            guard_detached(py, text.len() >= DETACH_BYTES, "encode", || t.encode_with_special(&text, add_special))?;
        PyList::new(py, ids)
    }

    /// The text of `ids`, through the file's decoder (U+FFFD for bytes that
    /// are not UTF-8, as HF's `decode`). `UnknownTokenError` for an id the
    /// file does not define.
    fn decode(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<String> {
        let ids = ids_arg(ids)?;
        let t = &self.inner;
        guard_detached(py, ids.len() >= DETACH_BYTES / 4, "decode", || t.decode(&ids))
    }

    fn __repr__(&self) -> String {
        format!("FileTokenizer({:?})", self.inner.name())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FileTokenizer>()
}

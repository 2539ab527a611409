//! `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` for plain
//! values, written in Rust.
//!
//! Every structured argument crosses to the core as JSON text, and the
//! standard library's encoder escapes a string one code point at a time: on a
//! 12 MB agent transcript it was a quarter of `turnfit.fit` (issue 36). This
//! writes the same text byte for byte for the values a conversation is made
//! of (`dict` with `str` keys, `list`, `tuple`, `str`, `int`, `float`, `bool`,
//! `None`, exact types only) and gives up (returns `None`) on anything else:
//! a subclass, another type, a non-`str` key, a string with lone surrogates,
//! or nesting deeper than [`MAX_DEPTH`] (which also stops a circular
//! reference). The caller then runs `json.dumps` itself, so every case that
//! is not plain keeps exactly its old behaviour, errors included. Conversion
//! only: the text is the one `json.dumps` makes, and the core reads it as
//! before.
//!
//! `fit` skips the text altogether: [`value_of`] walks the same plain values
//! into the `serde_json::Value` the core would read from that text (with the
//! text's length, for the size limit), and [`loads_value`] builds the
//! result's objects from the core's values as `json.loads` would.

use std::fmt::Write as _;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyModule, PyString, PyTuple};

use crate::utf8_view::utf8_of;

/// Deeper than this, give up (the core refuses far shallower documents, and
/// `json.dumps` reports a circular reference or recursion as it did).
const MAX_DEPTH: usize = 200;

/// The JSON text of `value` as `json.dumps(value, ensure_ascii=False,
/// separators=(",", ":"))` writes it, or `None` when `value` is not plain.
#[pyfunction]
pub(crate) fn _dumps_plain(value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let mut out = String::new();
    Ok(write(value, &mut out, 0)?.then_some(out))
}

/// Appends `v`'s JSON to `out`; `false` when `v` is not plain.
fn write(v: &Bound<'_, PyAny>, out: &mut String, depth: usize) -> PyResult<bool> {
    if depth > MAX_DEPTH {
        return Ok(false);
    }
    if v.is_exact_instance_of::<PyString>() {
        // Lone surrogates: not plain (json.dumps writes them; the core's
        // text conversion then replaces them, as before).
        let Ok(s) = utf8_of(v.cast::<PyString>()?) else { return Ok(false) };
        string(&s, out);
    } else if v.is_none() {
        out.push_str("null");
    } else if v.is_exact_instance_of::<PyBool>() {
        out.push_str(if v.is_truthy()? { "true" } else { "false" });
    } else if v.is_exact_instance_of::<PyInt>() {
        match v.extract::<i64>() {
            Ok(n) => {
                let _ = write!(out, "{n}");
            }
            // int.__repr__, as json.dumps writes any int.
            Err(_) => out.push_str(&v.repr()?.to_cow()?),
        }
    } else if v.is_exact_instance_of::<PyFloat>() {
        let f: f64 = v.extract()?;
        // json.dumps's float rules with allow_nan=True (the default).
        if f.is_nan() {
            out.push_str("NaN");
        } else if f.is_infinite() {
            out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
        } else {
            out.push_str(&v.repr()?.to_cow()?);
        }
    } else if v.is_exact_instance_of::<PyList>() {
        out.push('[');
        for (i, item) in v.cast::<PyList>()?.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if !write(&item, out, depth + 1)? {
                return Ok(false);
            }
        }
        out.push(']');
    } else if v.is_exact_instance_of::<PyTuple>() {
        out.push('[');
        for (i, item) in v.cast::<PyTuple>()?.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if !write(&item, out, depth + 1)? {
                return Ok(false);
            }
        }
        out.push(']');
    } else if v.is_exact_instance_of::<PyDict>() {
        out.push('{');
        for (i, (k, item)) in v.cast::<PyDict>()?.iter().enumerate() {
            if !k.is_exact_instance_of::<PyString>() {
                return Ok(false);
            }
            let Ok(key) = utf8_of(k.cast::<PyString>()?) else { return Ok(false) };
            if i > 0 {
                out.push(',');
            }
            string(&key, out);
            out.push(':');
            if !write(&item, out, depth + 1)? {
                return Ok(false);
            }
        }
        out.push('}');
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// `s` as a JSON string, escaped as the standard library's C encoder does
/// with `ensure_ascii=False`: `"` and `\`, `\b \f \n \r \t`, other controls
/// below U+0020 as `\u00xx` (lowercase hex); everything else as is.
fn string(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Eight bytes at a time while none needs escaping (most text).
        if let Some(w) = bytes.get(i..i + 8) {
            if !needs_escape(u64::from_le_bytes(w.try_into().unwrap_or([0; 8]))) {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        i += 1;
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        let at = i - 1;
        out.push_str(&s[start..at]);
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                out.push_str("\\u00");
                out.push(HEX[usize::from(b >> 4)] as char);
                out.push(HEX[usize::from(b & 0xf)] as char);
            }
        }
        start = i;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Whether any of the eight bytes in `w` is below 0x20, `"` or `\`
/// (the classic SWAR tests: a byte below `n` borrows in `w - n`; a zero
/// byte of `w ^ c` is a byte equal to `c`).
#[inline(always)]
fn needs_escape(w: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(LO * n) & !x & HI;
    below(w, 0x20) | below(w ^ (LO * u64::from(b'"')), 1) | below(w ^ (LO * u64::from(b'\\')), 1) != 0
}

/// Nesting deeper than this is sent as text (see [`value_of`]): the core
/// reads at most [`turnfit::limits::MAX_JSON_DEPTH`] levels, and its text
/// reader says where a document goes deeper.
const VALUE_MAX_DEPTH: usize = 100;

/// A plain value as the `serde_json::Value` the core reads from the JSON
/// text `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`
/// writes of it, without the text (issue 36: on a 44 MB transcript writing
/// that text cost 80 ms and the core's reading it again about a quarter of
/// `fit`), with the text's length (the core holds it to the same size
/// limit). `None` for anything [`_dumps_plain`] would not write, for a
/// float that is not finite (`json.dumps` writes `NaN`, which the core
/// refuses as JSON), an `int` whose `repr` fails, nesting deeper than
/// [`VALUE_MAX_DEPTH`], and more than `MAX_MESSAGES` messages: the caller
/// then sends the text as before, so those cases keep their old errors,
/// message for message. Numbers are kept as the text `json.dumps` writes
/// (`repr`), as the core keeps them from text.
pub(crate) fn value_of<'py>(v: &Bound<'py, PyAny>) -> PyResult<Option<Read<'py>>> {
    let mut w = Walk { len: 0, tuples: 0, messages: Vec::new() };
    let Some(value) = w.value(v, 0, true)? else { return Ok(None) };
    // Over the message limit: the text reader's error says where.
    if turnfit::chat::Conversation::over_message_limit(&value) {
        return Ok(None);
    }
    Ok(Some(Read { doc: value, len: w.len, messages: w.messages }))
}

/// A conversation [`value_of`] read.
pub(crate) struct Read<'py> {
    /// The core's document.
    pub(crate) doc: serde_json::Value,
    /// The length of its JSON text.
    pub(crate) len: usize,
    /// The input's messages (the items of a top-level list or tuple, or of
    /// the one under the top-level dict's `"messages"`), each where
    /// `json.loads` of its JSON text makes an equal object: it holds no
    /// tuple (which would come back a list). [`loads_reusing`] hands these
    /// back for the messages the core kept unedited. They are read here,
    /// with the GIL held, before the core runs without it: a host thread
    /// that mutates a message while `fit` runs gets that object back as it
    /// then is, where a copy would show the message as read.
    pub(crate) messages: Vec<Option<Bound<'py, PyAny>>>,
}

/// Test hook: the length [`value_of`] gives the core for `v` (that of
/// `json.dumps(v, ensure_ascii=False, separators=(",", ":"))` in UTF-8),
/// or `None` when `v` is not plain.
#[pyfunction]
pub(crate) fn _plain_json_len(v: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    let mut w = Walk { len: 0, tuples: 0, messages: Vec::new() };
    Ok(w.value(v, 0, false)?.map(|_| w.len))
}

/// [`value_of`]'s walk: the JSON text's length so far, the tuples seen,
/// and the messages' objects.
struct Walk<'py> {
    len: usize,
    tuples: usize,
    messages: Vec<Option<Bound<'py, PyAny>>>,
}

impl<'py> Walk<'py> {
    fn string(&mut self, s: &str) -> serde_json::Value {
        // Counted while the string is in cache from the copy.
        let value = serde_json::Value::String(s.to_owned());
        self.len += s.len() + 2 + string_extra(s);
        value
    }

    fn number(&mut self, n: serde_json::Number) -> serde_json::Value {
        self.len += n.as_str().len();
        serde_json::Value::Number(n)
    }

    /// The items of a list or tuple; `messages`: they are the messages
    /// (each is recorded in `self.messages`).
    fn items(
        &mut self,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        n: usize,
        depth: usize,
        messages: bool,
    ) -> PyResult<Option<serde_json::Value>> {
        let mut out = Vec::with_capacity(n);
        self.len += 2 + n.saturating_sub(1);
        if messages {
            self.messages.reserve(n);
        }
        for item in items {
            let tuples = self.tuples;
            let Some(x) = self.value(&item, depth + 1, false)? else { return Ok(None) };
            out.push(x);
            if messages {
                self.messages.push((self.tuples == tuples).then_some(item));
            }
        }
        Ok(Some(serde_json::Value::Array(out)))
    }

    /// `messages`: `v`, if a list or tuple, holds the messages.
    fn value(&mut self, v: &Bound<'py, PyAny>, depth: usize, messages: bool) -> PyResult<Option<serde_json::Value>> {
        use serde_json::Value;
        if depth > VALUE_MAX_DEPTH {
            return Ok(None);
        }
        Ok(Some(if v.is_exact_instance_of::<PyString>() {
            let Ok(s) = utf8_of(v.cast::<PyString>()?) else { return Ok(None) };
            self.string(&s)
        } else if v.is_none() {
            self.len += 4;
            Value::Null
        } else if v.is_exact_instance_of::<PyBool>() {
            let b = v.is_truthy()?;
            self.len += if b { 4 } else { 5 };
            Value::Bool(b)
        } else if v.is_exact_instance_of::<PyInt>() {
            match v.extract::<i64>() {
                Ok(n) => self.number(n.into()),
                // int.__repr__, as json.dumps writes any int.
                Err(_) => match v.repr().ok().and_then(|r| r.to_cow().ok()?.parse().ok()) {
                    Some(n) => self.number(n),
                    None => return Ok(None),
                },
            }
        } else if v.is_exact_instance_of::<PyFloat>() {
            let f: f64 = v.extract()?;
            if !f.is_finite() {
                return Ok(None);
            }
            // float.__repr__, as json.dumps writes a finite float.
            match v.repr()?.to_cow()?.parse() {
                Ok(n) => self.number(n),
                Err(_) => return Ok(None),
            }
        } else if v.is_exact_instance_of::<PyList>() {
            let list = v.cast::<PyList>()?;
            return self.items(list.iter(), list.len(), depth, messages);
        } else if v.is_exact_instance_of::<PyTuple>() {
            let tuple = v.cast::<PyTuple>()?;
            self.tuples += 1;
            return self.items(tuple.iter(), tuple.len(), depth, messages);
        } else if v.is_exact_instance_of::<PyDict>() {
            let dict = v.cast::<PyDict>()?;
            let mut map = serde_json::Map::with_capacity(dict.len());
            // `{}`, the commas, and a colon a key.
            self.len += 2 + dict.len().saturating_sub(1) + dict.len();
            for (k, item) in dict.iter() {
                if !k.is_exact_instance_of::<PyString>() {
                    return Ok(None);
                }
                let Ok(key) = utf8_of(k.cast::<PyString>()?) else { return Ok(None) };
                self.len += key.len() + 2 + string_extra(&key);
                // The top-level `messages` holds the messages.
                let messages = depth == 0 && key == "messages";
                let Some(x) = self.value(&item, depth + 1, messages)? else { return Ok(None) };
                // A dict's keys are distinct: nothing is replaced.
                map.insert(key.into_owned(), x);
            }
            Value::Object(map)
        } else {
            return Ok(None);
        }))
    }
}

/// The bytes [`string`] adds to `s` by escaping: 1 for `"`, `\` and the
/// five controls with a short escape, 5 for any other control (`\u00xx`).
/// Sixteen bytes at a time with SSE2 (every x86-64 CPU has it): on a 44 MB
/// transcript a byte-wise count was 3% of `fit`.
fn string_extra(s: &str) -> usize {
    let bytes = s.as_bytes();
    #[cfg(target_arch = "x86_64")]
    let (mut extra, done) = string_extra_sse2(bytes);
    #[cfg(not(target_arch = "x86_64"))]
    let (mut extra, done) = (0, 0);
    for &b in &bytes[done..] {
        extra += byte_extra(b);
    }
    extra
}

/// What escaping adds to one byte.
#[inline(always)]
fn byte_extra(b: u8) -> usize {
    match b {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
        0..=0x1f => 5,
        _ => 0,
    }
}

/// [`string_extra`] over the whole 16-byte blocks of `bytes`: the extra
/// bytes, and how many bytes were counted. Each byte's extra (0, 1 or 5)
/// is added lane by lane and the lanes summed every 48 blocks (48 * 5 <
/// 256), with no branch and no popcount (not in the x86-64 baseline).
#[cfg(target_arch = "x86_64")]
fn string_extra_sse2(bytes: &[u8]) -> (usize, usize) {
    use std::arch::x86_64::*;
    let blocks = bytes.len() / 16;
    let mut extra = 0usize;
    // SAFETY: SSE2 is part of the x86-64 baseline; every load reads 16
    // bytes inside `bytes` (block `i < blocks`), unaligned loads allowed.
    unsafe {
        let (x1f, quote, backslash) = (_mm_set1_epi8(0x1f), _mm_set1_epi8(b'"' as i8), _mm_set1_epi8(b'\\' as i8));
        let (eight, vtab, zero) = (_mm_set1_epi8(8), _mm_set1_epi8(0x0b), _mm_setzero_si128());
        let (one, four, five) = (_mm_set1_epi8(1), _mm_set1_epi8(4), _mm_set1_epi8(5));
        let mut start = 0;
        while start < blocks {
            let end = (start + 48).min(blocks);
            let mut acc = zero;
            for i in start..end {
                let v = _mm_loadu_si128(bytes.as_ptr().add(i * 16).cast::<__m128i>());
                // Controls (bytes up to 0x1f, unsigned): 5; the short-escape
                // ones (0x08..=0x0d but 0x0b) 4 less; `"` and `\`: 1.
                let ctrl = _mm_cmpeq_epi8(_mm_min_epu8(v, x1f), v);
                let t = _mm_sub_epi8(v, eight);
                let short = _mm_andnot_si128(_mm_cmpeq_epi8(v, vtab), _mm_cmpeq_epi8(_mm_min_epu8(t, five), t));
                let qb = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
                let w = _mm_sub_epi8(_mm_and_si128(ctrl, five), _mm_and_si128(short, four));
                acc = _mm_add_epi8(acc, _mm_or_si128(w, _mm_and_si128(qb, one)));
            }
            // Sum the 16 lanes (two 64-bit halves of byte sums).
            let sums = _mm_sad_epu8(acc, zero);
            extra += (_mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums))) as usize;
            start = end;
        }
    }
    (extra, blocks * 16)
}

/// Runs `f` (which builds fresh objects from core values) with Python's
/// cyclic GC paused, then collects the youngest generation once.
///
/// Why a library touches the GC (issue 36): a 44 MB transcript's result is
/// about 70,000 new dicts and lists. Each 700 of them start a young
/// collection, each ten of those a middle one, and every ten middle ones
/// let a full collection run over the host's whole heap: in a process
/// holding the LangChain copy of the transcript, 100-220 ms of a 600 ms
/// `fit` went to full collections that could free nothing `fit` made. The
/// objects built here are a tree of new containers, so no cycle forms while
/// it is built; the GIL is held from pause to resume and no Python code runs
/// in between, so no other thread sees the GC paused; a GC the host had
/// disabled stays disabled. The one young collection afterwards visits the
/// new objects once (what the skipped ones would have done) and is counted
/// in `fit`'s time, not left to the host's next allocation.
pub(crate) fn with_gc_paused<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    /// Resumes the GC when dropped, so an error or a panic in `f` cannot
    /// leave it paused.
    struct Resume<'py>(Bound<'py, PyModule>);
    impl Drop for Resume<'_> {
        fn drop(&mut self) {
            let _ = self.0.call_method0("enable");
        }
    }
    let gc = py.import("gc")?;
    if !gc.call_method0("isenabled")?.is_truthy()? {
        return f();
    }
    gc.call_method0("disable")?;
    let resume = Resume(gc);
    let out = f()?;
    // Before resuming: the first allocation after it would start the same
    // young collection by itself (the allocation count is past the
    // threshold), and one is enough.
    resume.0.call_method1("collect", (0,))?;
    drop(resume);
    Ok(out)
}

/// `json.loads` of the JSON `v` is written as, built from the value itself:
/// `dict` (keys in order), `list`, `str`, `bool`, `None`, and numbers by
/// `json.loads`'s rule on their text (kept as written): a fraction or an
/// exponent makes a `float` (correctly rounded, as `float()` is; out of
/// range is infinity, as there), anything else an `int`.
pub(crate) fn loads_value<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    // One `str` a distinct key, as json.loads's key memo does: a
    // transcript repeats a handful of keys tens of thousands of times.
    build(py, v, &mut std::collections::HashMap::new())
}

/// [`loads_value`] of a fitted conversation, with the host's own object
/// for each message the core kept unedited: `origins[i]` is the index of
/// the input message that output message `i` is
/// (`turnfit::window::fit_value_origins`), and `inputs[j]` the input
/// message `j` when `json.loads` of its text would make an equal object
/// ([`Read::messages`]). The same values `loads_value` builds, without
/// building a copy of every message `fit` kept whole (issue 36); the
/// decision of which messages are unedited is the core's. The messages are
/// a bare list or the top-level `"messages"` (OpenAI and Anthropic, the
/// only formats with origins); anything else, or a count that does not
/// match, is built in full.
pub(crate) fn loads_reusing<'py>(
    py: Python<'py>,
    v: &serde_json::Value,
    origins: &[Option<usize>],
    inputs: &[Option<Bound<'py, PyAny>>],
) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    /// The messages: the host's own object where there is one.
    fn messages<'py, 'v>(
        py: Python<'py>,
        items: &'v [serde_json::Value],
        origins: &[Option<usize>],
        inputs: &[Option<Bound<'py, PyAny>>],
        keys: &mut std::collections::HashMap<&'v str, Bound<'py, PyString>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let objs = items
            .iter()
            .enumerate()
            .map(|(i, item)| match origins.get(i).copied().flatten().and_then(|j| inputs.get(j)?.as_ref()) {
                Some(own) => Ok(own.clone()),
                None => build(py, item, keys),
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, objs)?.into_any())
    }
    let mut keys = std::collections::HashMap::new();
    match v {
        Value::Array(items) if origins.len() == items.len() => messages(py, items, origins, inputs, &mut keys),
        Value::Object(map)
            if map.get("messages").and_then(Value::as_array).is_some_and(|m| m.len() == origins.len()) =>
        {
            let dict = PyDict::new(py);
            for (k, item) in map {
                let key = keys.entry(k.as_str()).or_insert_with(|| PyString::new(py, k)).clone();
                let obj = match item {
                    Value::Array(items) if k == "messages" => messages(py, items, origins, inputs, &mut keys)?,
                    _ => build(py, item, &mut keys)?,
                };
                dict.set_item(key, obj)?;
            }
            Ok(dict.into_any())
        }
        _ => build(py, v, &mut keys),
    }
}

fn build<'py, 'v>(
    py: Python<'py>,
    v: &'v serde_json::Value,
    keys: &mut std::collections::HashMap<&'v str, Bound<'py, PyString>>,
) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::IntoPyObjectExt;
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_bound_py_any(py)?,
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Number(n) => {
            let text = n.to_string();
            if text.contains(['.', 'e', 'E']) {
                text.parse::<f64>().unwrap_or(f64::NAN).into_bound_py_any(py)?
            } else if let Ok(i) = text.parse::<i64>() {
                i.into_bound_py_any(py)?
            } else {
                py.get_type::<PyInt>().call1((text,))?
            }
        }
        Value::Array(items) => {
            // Made at its final size (appending grows it several times).
            let objs = items.iter().map(|item| build(py, item, keys)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, objs)?.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, item) in map {
                let key = keys.entry(k.as_str()).or_insert_with(|| PyString::new(py, k)).clone();
                dict.set_item(key, build(py, item, keys)?)?;
            }
            dict.into_any()
        }
    })
}

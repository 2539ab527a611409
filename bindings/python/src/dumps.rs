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

use std::fmt::Write as _;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

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

/// `json.loads` of the JSON `v` is written as, built from the value itself:
/// `dict` (keys in order), `list`, `str`, `bool`, `None`, and numbers by
/// `json.loads`'s rule on their text (kept as written): a fraction or an
/// exponent makes a `float` (correctly rounded, as `float()` is; out of
/// range is infinity, as there), anything else an `int`.
pub(crate) fn loads_value<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
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
            let list = PyList::empty(py);
            for item in items {
                list.append(loads_value(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, item) in map {
                dict.set_item(PyString::new(py, k), loads_value(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

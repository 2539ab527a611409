//! The `tojson` filter exactly as transformers defines it for chat templates:
//! Python's `json.dumps(x, ensure_ascii=..., indent=..., separators=...,
//! sort_keys=...)`, byte for byte. Templates print tool schemas and tool-call
//! arguments with it, so any difference (a space after `,`, `\u00e9` against
//! `é`, `1.0` against `1`) changes the prompt and its token count.

use minijinja::value::{Kwargs, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};

/// How `json.dumps` lays out its output.
struct Style {
    ensure_ascii: bool,
    /// `None`: one line; `Some(s)`: one item per line, `s` per level.
    indent: Option<String>,
    item_sep: String,
    key_sep: String,
    sort_keys: bool,
}

/// Nesting deeper than this is refused (Python's own limit is its recursion
/// limit, about 1000; templates never come near either).
const MAX_DEPTH: usize = 256;

/// The filter: `{{ x | tojson }}`, `{{ x | tojson(indent=4) }}`,
/// `{{ x | tojson(ensure_ascii=True) }}`. Charges one fuel per 64 bytes of
/// output, as minijinja does for the strings it makes itself.
pub(super) fn tojson(state: &State, value: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    let indent: Option<Value> = kwargs.get("indent")?;
    let separators: Option<Value> = kwargs.get("separators")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let indent = match indent {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) if v.kind() == ValueKind::Number => {
            let n = i64::try_from(v.clone())?;
            Some(" ".repeat(usize::try_from(n.clamp(0, 64)).unwrap_or(0)))
        }
        Some(v) if v.kind() == ValueKind::String => Some(v.as_str().unwrap_or("").to_string()),
        Some(v) => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson: indent must be a number or a string, not {}", v.kind()),
            ));
        }
    };
    let (item_sep, key_sep) = match separators {
        Some(v) if !v.is_none() => {
            let parts: Vec<Value> = v.try_iter()?.collect();
            match parts.as_slice() {
                [a, b] if a.as_str().is_some() && b.as_str().is_some() => {
                    (a.as_str().unwrap_or_default().to_string(), b.as_str().unwrap_or_default().to_string())
                }
                _ => return Err(Error::new(ErrorKind::InvalidOperation, "tojson: separators must be two strings")),
            }
        }
        // Python's defaults: no space before a newline when indenting.
        _ if indent.is_some() => (",".to_string(), ": ".to_string()),
        _ => (", ".to_string(), ": ".to_string()),
    };
    let style = Style {
        ensure_ascii: ensure_ascii.unwrap_or(false),
        indent,
        item_sep,
        key_sep,
        sort_keys: sort_keys.unwrap_or(false),
    };
    let mut out = String::new();
    write_value(&mut out, value, &style, 0)?;
    state.consume_fuel(out.len() as u64 / 64)?;
    Ok(Value::from(out))
}

fn write_value(out: &mut String, value: &Value, style: &Style, depth: usize) -> Result<(), Error> {
    if depth > MAX_DEPTH {
        return Err(Error::new(ErrorKind::InvalidOperation, format!("tojson: nesting deeper than {MAX_DEPTH} levels")));
    }
    match value.kind() {
        ValueKind::None => out.push_str("null"),
        ValueKind::Undefined => {
            return Err(Error::new(ErrorKind::UndefinedError, "tojson: an undefined value is not JSON serializable"));
        }
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => write_number(out, value)?,
        ValueKind::String => write_string(out, value.as_str().unwrap_or(""), style.ensure_ascii),
        // jinja2's map/select/reject return generators, which json.dumps
        // refuses (TypeError); transformers fails there, so does this.
        ValueKind::Iterable => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "tojson: a lazy sequence (a generator in jinja2, from map/select/reject without |list) is not JSON serializable",
            ));
        }
        ValueKind::Seq => {
            let items: Vec<Value> = value.try_iter()?.collect();
            write_container(out, style, depth, '[', ']', items.len(), |out, i| {
                write_value(out, &items[i], style, depth + 1)
            })?;
        }
        ValueKind::Map => {
            let mut keys: Vec<Value> = value.try_iter()?.collect();
            if style.sort_keys {
                keys.sort();
            }
            write_container(out, style, depth, '{', '}', keys.len(), |out, i| {
                write_key(out, &keys[i], style)?;
                out.push_str(&style.key_sep);
                write_value(out, &value.get_item(&keys[i])?, style, depth + 1)
            })?;
        }
        kind => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson: a value of kind {kind} is not JSON serializable"),
            ));
        }
    }
    Ok(())
}

/// `[`/`{`, the items, `]`/`}`: on one line, or one item per line with the
/// indent repeated per level (Python prints an empty container as `[]`/`{}`).
fn write_container(
    out: &mut String,
    style: &Style,
    depth: usize,
    open: char,
    close: char,
    len: usize,
    mut item: impl FnMut(&mut String, usize) -> Result<(), Error>,
) -> Result<(), Error> {
    out.push(open);
    if len == 0 {
        out.push(close);
        return Ok(());
    }
    for i in 0..len {
        if i > 0 {
            out.push_str(&style.item_sep);
        }
        if let Some(indent) = &style.indent {
            out.push('\n');
            out.push_str(&indent.repeat(depth + 1));
        }
        item(out, i)?;
    }
    if let Some(indent) = &style.indent {
        out.push('\n');
        out.push_str(&indent.repeat(depth));
    }
    out.push(close);
    Ok(())
}

/// Python converts non-string keys: `True` -> "true", `None` -> "null",
/// numbers as their repr.
fn write_key(out: &mut String, key: &Value, style: &Style) -> Result<(), Error> {
    match key.kind() {
        ValueKind::String => write_string(out, key.as_str().unwrap_or(""), style.ensure_ascii),
        ValueKind::Bool | ValueKind::None | ValueKind::Number => {
            let mut text = String::new();
            write_value(&mut text, key, style, 0)?;
            write_string(out, &text, style.ensure_ascii);
        }
        kind => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson: keys must be str, int, float, bool or None, not {kind}"),
            ))
        }
    }
    Ok(())
}

fn write_number(out: &mut String, value: &Value) -> Result<(), Error> {
    if value.is_integer() {
        // Integers print in full, as Python's int does.
        out.push_str(&value.to_string());
        return Ok(());
    }
    let f = f64::try_from(value.clone())?;
    out.push_str(&float_repr(f));
    Ok(())
}

/// Python's `float.__repr__` (what json.dumps prints): the shortest digits that
/// round-trip, in fixed notation when the decimal exponent is in -4..16 (with
/// ".0" on whole numbers), otherwise as `1e+16` / `1.5e-05`.
pub(super) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "d.ddde<exp>".
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    let decpt = exp + 1; // digits are 0.d1d2... x 10^decpt
    let n = digits.len() as i32;
    if decpt > -4 && decpt <= 16 {
        let body = if decpt <= 0 {
            format!("0.{}{}", "0".repeat((-decpt) as usize), digits)
        } else if decpt >= n {
            format!("{}{}.0", digits, "0".repeat((decpt - n) as usize))
        } else {
            format!("{}.{}", &digits[..decpt as usize], &digits[decpt as usize..])
        };
        format!("{sign}{body}")
    } else {
        let mant = if n == 1 { digits.clone() } else { format!("{}.{}", &digits[..1], &digits[1..]) };
        let e = decpt - 1;
        format!("{sign}{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    }
}

/// A JSON string as Python's encoder writes it: `\"`, `\\`, `\n`, `\r`, `\t`,
/// `\b`, `\f`, other controls as `\u00XX`; with `ensure_ascii`, everything
/// outside printable ASCII (DEL included) as `\uXXXX`, in surrogate pairs above
/// U+FFFF, lowercase hex.
fn write_string(out: &mut String, s: &str, ensure_ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => push_u(out, c as u32),
            c if ensure_ascii && !(' '..='~').contains(&c) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    push_u(out, u32::from(*unit));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn push_u(out: &mut String, unit: u32) {
    out.push_str(&format!("\\u{unit:04x}"));
}

#[cfg(test)]
mod tests {
    use super::float_repr;

    #[test]
    fn floats_print_as_python_repr() {
        for (f, want) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (123456789.125, "123456789.125"),
            (1.5e-7, "1.5e-07"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ] {
            assert_eq!(float_repr(f), want, "{f}");
        }
    }
}

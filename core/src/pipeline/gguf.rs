//! GGUF metadata: the tokenizer keys of a llama.cpp model file, read by
//! seeking through the header and key-value section only.
//!
//! A GGUF file is a header (magic, version, tensor count, key count), the
//! key-value pairs, the tensor descriptions, then gigabytes of tensors. Only
//! the first two are read: the reader stops after the last key, so a 40 GB
//! model costs the few megabytes of its vocabulary. Every declared length
//! and count is checked against the bytes the file really has left before
//! anything is allocated, so memory is bounded by the file's size however
//! the header lies; values this module does not keep (arrays of other
//! keys) are skipped by seeking.

use std::io::{Read, Seek, SeekFrom};

use rustc_hash::FxHashMap;

use crate::{Error, ErrorKind, Result};

/// A kept metadata value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    Strings(Vec<String>),
    Floats(Vec<f32>),
    Ints(Vec<i64>),
    /// An array of a type nothing here needs (kept as its length only).
    Skipped(u64),
}

/// The kept keys of a GGUF file.
#[derive(Debug, Default)]
pub(crate) struct Metadata {
    pub(crate) kv: FxHashMap<String, Value>,
}

impl Metadata {
    pub(crate) fn str(&self, key: &str) -> Option<&str> {
        match self.kv.get(key) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn int(&self, key: &str) -> Option<i128> {
        match self.kv.get(key) {
            Some(Value::Int(i)) => Some(*i),
            _ => None,
        }
    }

    pub(crate) fn bool(&self, key: &str) -> Option<bool> {
        match self.kv.get(key) {
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }
}

/// Whether `bytes` start like a GGUF file.
pub(crate) fn looks_like(bytes: &[u8]) -> bool {
    bytes.starts_with(b"GGUF")
}

/// Whether a key is one the tokenizer needs (everything else is skipped).
fn wanted(key: &str) -> bool {
    key.starts_with("tokenizer.") || key == "general.architecture" || key.ends_with(".context_length")
}

struct Reader<R> {
    r: R,
    pos: u64,
    len: u64,
    file: String,
}

impl<R: Read + Seek> Reader<R> {
    fn bad(&self, what: impl std::fmt::Display) -> Error {
        Error::new(ErrorKind::InvalidArgument, format!("{}: {what} (at byte {})", self.file, self.pos))
    }

    /// Fails unless `n` more bytes exist.
    fn need(&self, n: u64, what: &str) -> Result<()> {
        if n > self.len - self.pos {
            return Err(self.bad(format_args!(
                "{what} declares {n} bytes but the file has {} left (truncated or corrupt)",
                self.len - self.pos
            )));
        }
        Ok(())
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        self.need(N as u64, what)?;
        let mut b = [0u8; N];
        self.r.read_exact(&mut b).map_err(|e| self.bad(format_args!("{what}: {e}")))?;
        self.pos += N as u64;
        Ok(b)
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.bytes(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.bytes(what)?))
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        self.need(n, what)?;
        let n = i64::try_from(n).map_err(|_| self.bad(format_args!("{what} is too long")))?;
        self.r.seek(SeekFrom::Current(n)).map_err(|e| self.bad(format_args!("{what}: {e}")))?;
        self.pos += n as u64;
        Ok(())
    }

    fn string(&mut self, what: &str) -> Result<String> {
        let n = self.u64(what)?;
        self.need(n, what)?;
        let mut b = vec![0u8; n as usize];
        self.r.read_exact(&mut b).map_err(|e| self.bad(format_args!("{what}: {e}")))?;
        let at = self.pos;
        self.pos += n;
        String::from_utf8(b).map_err(|e| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!("{}: {what} is not UTF-8 (at byte {})", self.file, at + e.utf8_error().valid_up_to() as u64),
            )
        })
    }

    /// The size of a scalar of GGUF type `t`, or `None` for strings and arrays.
    fn scalar_size(t: u32) -> Option<u64> {
        match t {
            0 | 1 | 7 => Some(1),
            2 | 3 => Some(2),
            4..=6 => Some(4),
            10..=12 => Some(8),
            _ => None,
        }
    }

    fn scalar(&mut self, t: u32, what: &str) -> Result<Value> {
        Ok(match t {
            0 => Value::Int(self.bytes::<1>(what)?[0] as i128),
            1 => Value::Int(self.bytes::<1>(what)?[0] as i8 as i128),
            2 => Value::Int(u16::from_le_bytes(self.bytes(what)?) as i128),
            3 => Value::Int(i16::from_le_bytes(self.bytes(what)?) as i128),
            4 => Value::Int(self.u32(what)? as i128),
            5 => Value::Int(i32::from_le_bytes(self.bytes(what)?) as i128),
            6 => Value::Float(f32::from_le_bytes(self.bytes(what)?) as f64),
            7 => match self.bytes::<1>(what)?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => return Err(self.bad(format_args!("{what} is a boolean of value {b}"))),
            },
            10 => Value::Int(self.u64(what)? as i128),
            11 => Value::Int(i64::from_le_bytes(self.bytes(what)?) as i128),
            12 => Value::Float(f64::from_le_bytes(self.bytes(what)?)),
            _ => return Err(self.bad(format_args!("{what} has unknown type {t}"))),
        })
    }

    fn value(&mut self, t: u32, keep: bool, what: &str) -> Result<Value> {
        match t {
            8 if keep => Ok(Value::Str(self.string(what)?)),
            8 => {
                let n = self.u64(what)?;
                self.skip(n, what).map(|()| Value::Skipped(0))
            }
            9 => self.array(keep, what),
            _ if keep => self.scalar(t, what),
            _ => {
                let size = Self::scalar_size(t).ok_or_else(|| self.bad(format_args!("{what} has unknown type {t}")))?;
                self.skip(size, what).map(|()| Value::Skipped(0))
            }
        }
    }

    fn array(&mut self, keep: bool, what: &str) -> Result<Value> {
        let t = self.u32(what)?;
        let n = self.u64(what)?;
        // Every element takes at least one byte (a string, eight): a count
        // the rest of the file cannot hold is refused before allocating.
        let least = match t {
            8 => 8,
            9 => return Err(self.bad(format_args!("{what} is an array of arrays"))),
            _ => {
                Self::scalar_size(t).ok_or_else(|| self.bad(format_args!("{what} has elements of unknown type {t}")))?
            }
        };
        let total = n.checked_mul(least).ok_or_else(|| self.bad(format_args!("{what} declares {n} elements")))?;
        self.need(total, what)?;
        if !keep {
            if t == 8 {
                for _ in 0..n {
                    let len = self.u64(what)?;
                    self.skip(len, what)?;
                }
            } else {
                self.skip(total, what)?;
            }
            return Ok(Value::Skipped(n));
        }
        let n = n as usize;
        Ok(match t {
            8 => {
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(self.string(what)?);
                }
                Value::Strings(v)
            }
            6 => {
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(f32::from_le_bytes(self.bytes(what)?));
                }
                Value::Floats(v)
            }
            _ => {
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    match self.scalar(t, what)? {
                        Value::Int(i) => {
                            v.push(i64::try_from(i).map_err(|_| self.bad(format_args!("{what}: {i} out of range")))?)
                        }
                        Value::Bool(b) => v.push(b as i64),
                        _ => return Err(self.bad(format_args!("{what}: not an integer array"))),
                    }
                }
                Value::Ints(v)
            }
        })
    }
}

/// Reads the metadata of the GGUF file `r` of `len` bytes; `file` names it
/// in errors.
pub(crate) fn read<R: Read + Seek>(r: R, len: u64, file: &str) -> Result<Metadata> {
    let mut rd = Reader { r, pos: 0, len, file: file.to_string() };
    let magic = rd.bytes::<4>("the magic")?;
    if &magic != b"GGUF" {
        return Err(rd.bad("not a GGUF file (no GGUF magic)"));
    }
    let version = rd.u32("the version")?;
    if !(2..=3).contains(&version) {
        return Err(rd.bad(format_args!("GGUF version {version} (versions 2 and 3 are read)")));
    }
    let _tensors = rd.u64("the tensor count")?;
    let n_kv = rd.u64("the key count")?;
    // A key-value pair takes at least 8 (key length) + 4 (type) + 1 bytes.
    rd.need(n_kv.saturating_mul(13), "the key count")?;
    let mut meta = Metadata { kv: FxHashMap::default() };
    for i in 0..n_kv {
        let key = rd.string(&format!("key {i}"))?;
        let t = rd.u32(&format!("the type of {key}"))?;
        let keep = wanted(&key);
        let v = rd.value(t, keep, &key)?;
        if keep {
            meta.kv.insert(key, v);
        }
    }
    Ok(meta)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes a GGUF header with `kv` (key, type, value bytes) and claims
    /// `tensors` tensors that are not there.
    pub(crate) fn gguf(kv: &[(&str, u32, Vec<u8>)]) -> Vec<u8> {
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend(7u64.to_le_bytes());
        b.extend((kv.len() as u64).to_le_bytes());
        for (k, t, v) in kv {
            b.extend((k.len() as u64).to_le_bytes());
            b.extend(k.as_bytes());
            b.extend(t.to_le_bytes());
            b.extend(v);
        }
        b
    }

    pub(crate) fn s(v: &str) -> Vec<u8> {
        let mut b = (v.len() as u64).to_le_bytes().to_vec();
        b.extend(v.as_bytes());
        b
    }

    pub(crate) fn strings(v: &[&str]) -> Vec<u8> {
        let mut b = 8u32.to_le_bytes().to_vec();
        b.extend((v.len() as u64).to_le_bytes());
        for x in v {
            b.extend(s(x));
        }
        b
    }

    fn read_bytes(b: &[u8]) -> Result<Metadata> {
        read(std::io::Cursor::new(b), b.len() as u64, "m.gguf")
    }

    #[test]
    fn keeps_the_tokenizer_keys_and_skips_the_rest() {
        let b = gguf(&[
            ("general.architecture", 8, s("llama")),
            ("general.tags", 9, strings(&["a", "b"])),
            ("llama.context_length", 4, 131072u32.to_le_bytes().to_vec()),
            ("llama.rope.freq_base", 6, 5e5f32.to_le_bytes().to_vec()),
            ("tokenizer.ggml.model", 8, s("gpt2")),
            ("tokenizer.ggml.tokens", 9, strings(&["a", "b", "ab"])),
            ("tokenizer.ggml.add_bos_token", 7, vec![1]),
        ]);
        let m = read_bytes(&b).unwrap();
        assert_eq!(m.str("general.architecture"), Some("llama"));
        assert_eq!(m.int("llama.context_length"), Some(131072));
        assert_eq!(m.bool("tokenizer.ggml.add_bos_token"), Some(true));
        assert_eq!(m.kv.get("tokenizer.ggml.tokens"), Some(&Value::Strings(vec!["a".into(), "b".into(), "ab".into()])));
        assert!(!m.kv.contains_key("general.tags") && !m.kv.contains_key("llama.rope.freq_base"));
    }

    #[test]
    fn lying_headers_are_errors_before_any_allocation() {
        let good = gguf(&[("tokenizer.ggml.tokens", 9, strings(&["a", "b"]))]);
        for cut in [0, 3, 4, 8, 20, good.len() - 1] {
            let e = read_bytes(&good[..cut]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "cut at {cut}: {e}");
            assert!(e.message().starts_with("m.gguf: "), "{e}");
        }
        // A string of 2^60 bytes, an array of 2^61 strings, 2^62 keys.
        let mut huge_str = s("x");
        huge_str[..8].copy_from_slice(&(1u64 << 60).to_le_bytes());
        let e = read_bytes(&gguf(&[("tokenizer.chat_template", 8, huge_str)])).unwrap_err();
        assert!(e.message().contains("declares 1152921504606846976 bytes"), "{e}");
        let mut huge_arr = 8u32.to_le_bytes().to_vec();
        huge_arr.extend((1u64 << 61).to_le_bytes());
        let e = read_bytes(&gguf(&[("tokenizer.ggml.tokens", 9, huge_arr)])).unwrap_err();
        assert!(e.message().contains("tokenizer.ggml.tokens"), "{e}");
        let mut many = gguf(&[]);
        many[16..24].copy_from_slice(&(1u64 << 62).to_le_bytes());
        assert!(read_bytes(&many).unwrap_err().message().contains("the key count"));
        let mut v1 = good.clone();
        v1[4..8].copy_from_slice(&1u32.to_le_bytes());
        assert!(read_bytes(&v1).unwrap_err().message().contains("GGUF version 1"));
        let e = read_bytes(&gguf(&[("tokenizer.x", 99, vec![0; 8])])).unwrap_err();
        assert!(e.message().contains("unknown type 99"), "{e}");
        let e = read_bytes(&gguf(&[("tokenizer.x", 7, vec![2])])).unwrap_err();
        assert!(e.message().contains("boolean"), "{e}");
        let mut half = 1u64.to_le_bytes().to_vec();
        half.push(0xC3); // the first byte of a two-byte character, alone
        let e = read_bytes(&gguf(&[("tokenizer.x", 8, half)])).unwrap_err();
        assert!(e.message().contains("not UTF-8"), "{e}");
    }
}

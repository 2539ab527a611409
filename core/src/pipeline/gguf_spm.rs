//! A `llama`-type GGUF vocabulary (`tokenizer.ggml.model == "llama"`:
//! Llama 2, Mistral v1-v3, Phi-3) with llama.cpp's rules, the ids
//! `llama_tokenize` gives for the file.
//!
//! llama.cpp cuts control, unknown and user-defined tokens out of the text
//! (as for byte-level files), then for every stretch of text in between
//! puts a space before it when `tokenizer.ggml.add_space_prefix` (default
//! true: after every special token too, not only at the start), writes
//! spaces as `▁`, and merges by score (`spm.rs`). There is no other split.

use rustc_hash::FxHashMap;

use super::decode::Decoder;
use super::gguf::{Metadata, Value};
use super::normalize::Normalizer;
use super::split::PreTokenizer;
use super::spm::Spm;
use super::{added, FileInfo, FileTokenizer, Model, Parts, Post};
use crate::{Error, ErrorKind, Result};

fn bad(file: &str, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidArgument, format!("{file}: {what}"))
}

const UNKNOWN: i64 = 2;
const CONTROL: i64 = 3;
const USER_DEFINED: i64 = 4;

/// `tokens` and `types` are the file's checked arrays; `info` what it says
/// besides.
pub(crate) fn load(
    meta: &Metadata,
    tokens: &[String],
    types: &[i64],
    info: FileInfo,
    file: &str,
) -> Result<FileTokenizer> {
    let scores: Vec<f32> = match meta.kv.get("tokenizer.ggml.scores") {
        Some(Value::Floats(s)) if s.len() == tokens.len() => s.clone(),
        Some(Value::Floats(s)) => {
            return Err(bad(
                file,
                format_args!("tokenizer.ggml.scores has {} entries for {} tokens", s.len(), tokens.len()),
            ))
        }
        Some(_) => return Err(bad(file, "tokenizer.ggml.scores is not an array of f32")),
        // llama.cpp scores every token 0 when the file has none.
        None => vec![0.0; tokens.len()],
    };
    let mut ids: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
    ids.reserve(tokens.len());
    let mut strings = Vec::with_capacity(tokens.len());
    let mut added = Vec::new();
    let mut max_len = 0;
    for (i, t) in tokens.iter().enumerate() {
        let id = i as u32;
        // llama.cpp's `token_to_id`: every token, the last of a text wins.
        ids.insert(t.as_bytes().into(), id);
        max_len = max_len.max(t.len());
        let kind = types.get(i).copied().unwrap_or(1);
        if matches!(kind, CONTROL | USER_DEFINED | UNKNOWN) && !t.is_empty() {
            added.push(added::AddedToken {
                id,
                content: t.clone(),
                special: kind != USER_DEFINED,
                normalized: false,
                lstrip: false,
                rstrip: false,
                single_word: false,
            });
        }
        strings.push((id, t.clone().into_bytes()));
    }
    // llama.cpp's `byte_to_token`: `<0xXX>`, else the byte as a one-byte
    // token; a byte with neither makes llama.cpp throw while tokenizing, so
    // such a file is refused here.
    let mut byte_ids = [u32::MAX; 256];
    for (b, slot) in byte_ids.iter_mut().enumerate() {
        let hex = format!("<0x{b:02X}>");
        *slot = ids.get(hex.as_bytes()).or_else(|| ids.get(&[b as u8][..])).copied().ok_or_else(|| {
            bad(file, format_args!("no byte token {hex}, which a SentencePiece-style vocabulary needs"))
        })?;
    }
    let add_space_prefix = meta.bool("tokenizer.ggml.add_space_prefix").unwrap_or(true);
    let escape = Normalizer::Replace { pattern: " ".into(), content: "\u{2581}".into() };
    let normalizer =
        if add_space_prefix { Normalizer::Sequence(vec![Normalizer::Prepend(" ".into()), escape]) } else { escape };
    let special_id = |flag: &str, default_on: bool, key: &str, default_id: u32| -> Result<Option<u32>> {
        if !meta.bool(flag).unwrap_or(default_on) {
            return Ok(None);
        }
        match meta.int(key) {
            Some(i) if i >= 0 && (i as usize) < tokens.len() => Ok(Some(i as u32)),
            Some(i) => Err(bad(file, format_args!("{key} is {i}, not a token"))),
            None if (default_id as usize) < tokens.len() => Ok(Some(default_id)),
            None => Err(bad(file, format_args!("{key} is missing and token {default_id} does not exist"))),
        }
    };
    // llama.cpp's defaults for this vocabulary type: BOS 1 added, EOS 2 not.
    let bos = special_id("tokenizer.ggml.add_bos_token", true, "tokenizer.ggml.bos_token_id", 1)?;
    let eos = special_id("tokenizer.ggml.add_eos_token", false, "tokenizer.ggml.eos_token_id", 2)?;
    let post = Ok(Post { prefix: bos.into_iter().collect(), suffix: eos.into_iter().collect() });
    let mut steps = vec![
        Decoder::Replace { pattern: "\u{2581}".into(), content: " ".into() },
        Decoder::ByteFallback,
        Decoder::Fuse,
    ];
    if add_space_prefix {
        steps.push(Decoder::Strip { content: ' ', start: 1, stop: 0 });
    }
    let mut t = Parts {
        name: file,
        normalizer: Some(normalizer),
        pre: PreTokenizer::default(),
        model: Model::Spm(Box::new(Spm { ids, scores, byte_ids, max_len })),
        strings,
        added,
        post,
        decoder: Some(Decoder::Sequence(steps)),
    }
    .assemble()?;
    t.info = info;
    Ok(t)
}

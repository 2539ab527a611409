//! A tokenizer from a GGUF file's metadata (`gguf.rs`), with llama.cpp's
//! rules: the ids `llama_tokenize` gives for the file.
//!
//! A GGUF stores tokens, merges, token types and BOS/EOS flags but not the
//! split regex: `tokenizer.ggml.pre` names it, and llama.cpp maps the name
//! to hard-coded rules (`src/llama-vocab.cpp`). `presets::llama_cpp` has
//! those rules as llama.cpp writes them, which are not always HF's: its
//! contractions are ASCII-only (`'[sS]`, not `(?i:'s)`), and it does not
//! normalize Qwen's text to NFC, so a Qwen GGUF and Qwen's tokenizer.json
//! rightly differ on decomposed text (docs/architecture.md).
//!
//! Token types map to added tokens as llama.cpp partitions text: control
//! and unknown tokens are special (recognized in text only when special
//! text is parsed), user-defined tokens always are.

use super::bpe::{Bpe, Units};
use super::gguf::{Metadata, Value};
use super::split::PreTokenizer;
use super::{added, byte_level, decode, gguf_spm, presets, FileInfo, FileTokenizer, Model, Parts, Post};
use crate::{Error, ErrorKind, Result};

fn bad(file: &str, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidArgument, format!("{file}: {what}"))
}

const CONTROL: i64 = 3;
const USER_DEFINED: i64 = 4;
const UNKNOWN: i64 = 2;

pub(crate) fn load(meta: Metadata, file: &str) -> Result<FileTokenizer> {
    let model = meta
        .str("tokenizer.ggml.model")
        .ok_or_else(|| bad(file, "tokenizer.ggml.model is missing: no tokenizer in this GGUF"))?;
    if model != "gpt2" && model != "llama" {
        return Err(bad(
            file,
            format_args!(
                "tokenizer.ggml.model {model:?} is not supported yet (byte-level BPE, \"gpt2\", and SentencePiece-style BPE, \"llama\", load)"
            ),
        ));
    }
    let Some(Value::Strings(tokens)) = meta.kv.get("tokenizer.ggml.tokens") else {
        return Err(bad(file, "tokenizer.ggml.tokens is missing or not an array of strings"));
    };
    let types: &[i64] = match meta.kv.get("tokenizer.ggml.token_type") {
        Some(Value::Ints(t)) if t.len() == tokens.len() => t,
        Some(Value::Ints(t)) => {
            return Err(bad(
                file,
                format_args!("tokenizer.ggml.token_type has {} entries for {} tokens", t.len(), tokens.len()),
            ))
        }
        Some(_) => return Err(bad(file, "tokenizer.ggml.token_type is not an integer array")),
        None => &[],
    };
    if tokens.len() >= u32::MAX as usize {
        return Err(bad(file, "too many tokens"));
    }
    let pre_name = meta.str("tokenizer.ggml.pre").unwrap_or("default");
    let arch = meta.str("general.architecture");
    let context_length =
        arch.and_then(|a| meta.int(&format!("{a}.context_length"))).and_then(|n| u64::try_from(n).ok());
    let info = FileInfo {
        chat_template: meta.str("tokenizer.chat_template").map(str::to_string),
        context_length,
        pre: Some(pre_name.to_string()),
    };
    if model == "llama" {
        return gguf_spm::load(&meta, tokens, types, info, file);
    }
    let preset = presets::llama_cpp(pre_name).ok_or_else(|| {
        bad(
            file,
            format_args!(
                "tokenizer.ggml.pre {pre_name:?} is not one turnfit implements ({})",
                presets::LLAMA_CPP_NAMES
            ),
        )
    })?;
    let Some(Value::Strings(merges)) = meta.kv.get("tokenizer.ggml.merges") else {
        return Err(bad(file, "tokenizer.ggml.merges is missing or not an array of strings"));
    };
    let table = byte_level::char_table();
    let mut ids: rustc_hash::FxHashMap<&str, u32> = rustc_hash::FxHashMap::default();
    let mut vocab = rustc_hash::FxHashMap::default();
    let mut strings = Vec::with_capacity(tokens.len());
    let mut added = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let id = i as u32;
        ids.insert(t.as_str(), id);
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
            continue;
        }
        match byte_level::decode_str(t, &table) {
            Some(b) => {
                strings.push((id, b.clone()));
                vocab.insert(b.into_boxed_slice(), id);
            }
            None => strings.push((id, t.clone().into_bytes())),
        }
    }
    let mut merge_map = rustc_hash::FxHashMap::default();
    for (rank, m) in merges.iter().enumerate() {
        // llama.cpp splits at the first space after the first character.
        let cut = m.char_indices().skip(1).find(|&(_, c)| c == ' ').map(|(i, _)| i);
        let Some(cut) = cut else {
            return Err(bad(
                file,
                format_args!("tokenizer.ggml.merges[{rank}] {m:?} is not two tokens apart by a space"),
            ));
        };
        let (a, b) = (&m[..cut], &m[cut + 1..]);
        let id = |t: &str| {
            ids.get(t).copied().ok_or_else(|| {
                bad(file, format_args!("tokenizer.ggml.merges[{rank}] names {t:?}, which is not a token"))
            })
        };
        let joined = format!("{a}{b}");
        let (ia, ib) = (id(a)?, id(b)?);
        let new = ids.get(joined.as_str()).copied().ok_or_else(|| {
            bad(file, format_args!("tokenizer.ggml.merges[{rank}] makes {joined:?}, which is not a token"))
        })?;
        // llama.cpp keeps the first rank of a pair listed twice.
        merge_map.entry((ia, ib)).or_insert((rank as u32, new));
    }
    let mut byte_ids = [u32::MAX; 256];
    for (b, slot) in byte_ids.iter_mut().enumerate() {
        *slot = vocab.get(&[b as u8][..]).copied().ok_or_else(|| {
            bad(
                file,
                format_args!(
                    "no token for byte 0x{b:02X} ({:?}), which a byte-level vocabulary needs",
                    byte_level::byte_to_char(b as u8)
                ),
            )
        })?;
    }
    let bpe = Bpe {
        units: Units::Bytes,
        vocab,
        merges: merge_map,
        byte_ids,
        fallback: None,
        unk: None,
        fuse_unk: false,
        ignore_merges: preset.ignore_merges,
        metaspace_runs: false,
    };
    let flag_id = |flag: &str, default: bool, id_key: &str| -> Result<Option<u32>> {
        if !meta.bool(flag).unwrap_or(default) {
            return Ok(None);
        }
        match meta.int(id_key) {
            Some(i) if i >= 0 && (i as usize) < tokens.len() => Ok(Some(i as u32)),
            Some(i) => Err(bad(file, format_args!("{id_key} is {i}, not a token"))),
            None => Ok(None),
        }
    };
    let bos = flag_id("tokenizer.ggml.add_bos_token", preset.add_bos, "tokenizer.ggml.bos_token_id")?;
    let eos = flag_id("tokenizer.ggml.add_eos_token", false, "tokenizer.ggml.eos_token_id")?;
    let post = Ok(Post { prefix: bos.into_iter().collect(), suffix: eos.into_iter().collect() });
    let mut t = Parts {
        name: file,
        normalizer: None,
        pre: PreTokenizer { steps: preset.steps },
        model: Model::Bpe(Box::new(bpe)),
        strings,
        added,
        post,
        decoder: Some(decode::Decoder::ByteLevel),
    }
    .assemble()?;
    t.info = info;
    Ok(t)
}

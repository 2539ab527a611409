//! Shared plumbing for the tokenizer benchmarks: one uniform handle over
//! turnfit and its peers, and loading of the generated input files.
//!
//! Engines (exact versions are pinned in `bench/Cargo.toml`):
//! - `turnfit`      — this project (`turnfit::Tokenizer`, ordinary text).
//! - `tiktoken-rs` — `tiktoken_rs::CoreBPE::encode_ordinary` (the reference
//!   for the correctness check; it vendors OpenAI's tiktoken core).
//! - `bpe-openai`  — GitHub's `bpe` crate family (`bpe_openai::Tokenizer`).
//! - `tiktoken`    — the crates.io crate `tiktoken` 4.x (goliajp), `CoreBpe`.
//!
//! Every engine is asked for *ordinary* text: special-token text such as
//! `<|endoftext|>` is not recognized (none of the inputs contain any).

use std::path::PathBuf;

/// Engine names, in the column order used by every table.
pub const ENGINES: [&str; 4] = ["turnfit", "tiktoken-rs", "bpe-openai", "tiktoken"];

/// Encodings benchmarked.
pub const ENCODINGS: [&str; 2] = ["cl100k_base", "o200k_base"];

/// Input files (without `.txt`), in row order.
pub const INPUTS: [&str; 7] =
    ["prose", "code", "multilingual", "base64", "a", "random_letters", "spaces"];

/// A loaded encoding of one engine.
pub enum Loaded {
    /// turnfit (process-wide engine, built on first `Tokenizer::new`).
    Turnfit(turnfit::Tokenizer),
    /// tiktoken-rs, a freshly constructed `CoreBPE` (not the singleton).
    TiktokenRs(Box<tiktoken_rs::CoreBPE>),
    /// bpe-openai (process-wide `LazyLock`, built on first access).
    BpeOpenai(&'static bpe_openai::Tokenizer),
    /// tiktoken 4.x, a freshly constructed `CoreBpe` (not the cached global).
    Tiktoken(Box<tiktoken::CoreBpe>),
}

/// Loads `encoding` (`"cl100k_base"` or `"o200k_base"`) for `engine`.
/// Panics on an unknown name.
pub fn load(engine: &str, encoding: &str) -> Loaded {
    let o200k = match encoding {
        "cl100k_base" => false,
        "o200k_base" => true,
        other => panic!("unknown encoding {other}"),
    };
    match engine {
        "turnfit" => {
            let enc = if o200k { turnfit::Encoding::O200kBase } else { turnfit::Encoding::Cl100kBase };
            Loaded::Turnfit(turnfit::Tokenizer::new(enc).expect("turnfit tokenizer"))
        }
        "tiktoken-rs" => Loaded::TiktokenRs(Box::new(
            if o200k { tiktoken_rs::o200k_base() } else { tiktoken_rs::cl100k_base() }
                .expect("tiktoken-rs encoding"),
        )),
        "bpe-openai" => {
            Loaded::BpeOpenai(if o200k { bpe_openai::o200k_base() } else { bpe_openai::cl100k_base() })
        }
        "tiktoken" => Loaded::Tiktoken(Box::new(if o200k {
            tiktoken::encoding::o200k_base()
        } else {
            tiktoken::encoding::cl100k_base()
        })),
        other => panic!("unknown engine {other}"),
    }
}

impl Loaded {
    /// Number of tokens in `text` via the engine's cheapest counting API.
    #[inline]
    pub fn count(&self, text: &str) -> usize {
        match self {
            Loaded::Turnfit(t) => t.count(text).expect("turnfit count"),
            // count_ordinary == encode_ordinary(text).len() in 0.12.1.
            Loaded::TiktokenRs(t) => t.count_ordinary(text),
            Loaded::BpeOpenai(t) => t.count(text),
            // Zero-alloc counting path of tiktoken 4.x.
            Loaded::Tiktoken(t) => t.count(text),
        }
    }

    /// The token ids of `text` (materialized).
    #[inline]
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match self {
            Loaded::Turnfit(t) => t.encode(text).expect("turnfit encode"),
            Loaded::TiktokenRs(t) => t.encode_ordinary(text),
            Loaded::BpeOpenai(t) => t.encode(text),
            Loaded::Tiktoken(t) => t.encode(text),
        }
    }
}

/// Directory holding the generated inputs: `$TURNFIT_BENCH_INPUTS`, else
/// `bench/inputs` (next to this crate's Cargo.toml).
pub fn inputs_dir() -> PathBuf {
    match std::env::var_os("TURNFIT_BENCH_INPUTS") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/inputs")),
    }
}

/// Reads every input file; panics with the command that generates them when
/// one is missing.
pub fn load_inputs() -> Vec<(&'static str, String)> {
    let dir = inputs_dir();
    INPUTS
        .iter()
        .map(|name| {
            let path = dir.join(format!("{name}.txt"));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "cannot read benchmark input {} ({e}).\nGenerate the inputs first:\n    \
                     python3 bench/gen_inputs.py bench/inputs\n(from the repository root; or set \
                     TURNFIT_BENCH_INPUTS to a directory made by `python3 bench/gen_inputs.py DIR`)",
                    path.display()
                )
            });
            (*name, text)
        })
        .collect()
}

/// Process memory from `/proc/self/statm`: (resident bytes, resident
/// anonymous bytes = resident minus file-backed/shared). `None` off Linux.
pub fn statm() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let f: Vec<u64> = s.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    // Assumes 4 KiB pages (`getconf PAGESIZE` on the benchmark machine: 4096).
    let page = 4096u64;
    let (resident, shared) = (*f.get(1)?, *f.get(2)?);
    Some((resident * page, (resident - shared) * page))
}

/// CPU time consumed by the calling thread, in nanoseconds
/// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`). Unlike wall time it does not
/// advance while the thread waits for a core, so it is far less sensitive to
/// other load on a shared machine. Every engine benchmarked here tokenizes on
/// the calling thread only, so nothing is missed.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant
    // Linux supports. The return value is checked.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The 1-, 5- and 15-minute load averages from /proc/loadavg, as text.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

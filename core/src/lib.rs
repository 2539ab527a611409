//! turnfit: the deterministic context-engineering core for LLM agents.
//!
//! Everything behavioural lives in this crate; the C ABI (`turnfit-ffi`), the
//! CLI and the language bindings only convert types and errors. The crate has
//! no `unsafe` and never touches the network: vocabularies and the model
//! registry are embedded at build time.
//!
//! The entry points: [`Tokenizer`] (exact, OpenAI-compatible token counting),
//! [`ModelRegistry`] (model name to encoding and limits), [`window`] (the
//! stateful window, pre-flight, validation, repair, compaction and `fit`),
//! and the agent primitives ([`skills`], [`handoff`], [`callstack`],
//! [`recovery`], [`trace`], [`toolset`], [`assemble`]). [`limits`] holds
//! the documented input limits as constants.
//!
//! Each public item has one path: `window`'s files are private modules whose
//! API `window` re-exports. The hidden `frontend` module serves turnfit's own
//! front ends (the C ABI, the CLI, the bindings) and carries no semver
//! promise.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// Every type a public signature reaches can be named from outside: the
// submodules of `window` are private, so a type it forgets to re-export
// would otherwise be usable but unnameable.
#![warn(unnameable_types)]

pub mod assemble;
pub mod callstack;
pub mod chat;
mod error;
pub mod events;
#[doc(hidden)]
pub mod frontend;
pub mod handoff;
mod json;
pub mod limits;
pub mod locate;
pub mod models;
pub mod pipeline;
pub mod recovery;
#[cfg(feature = "schema")]
pub mod schema;
pub mod skills;
pub mod template;
mod text;
pub mod tokens;
pub mod toolset;
pub mod trace;
pub mod turn;
pub mod window;

pub use error::{Error, ErrorKind, Result};
pub use models::{CustomModel, ModelInfo, ModelProfile, ModelRegistry, ModelSource, RegistryEntry};
pub use tokens::{
    CountLimit, DecodeMode, Encoding, SpecialPolicy, SpecialSet, SpecialToken, SpecialTokens, Tokenizer, TokenizerInfo,
    TruncateSide, Truncation,
};

/// The crate version, as in Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

//! The Node.js binding of turnfit (napi-rs v3): conversion only, like `ffi/`.
//!
//! Every behaviour lives in the core crate. This crate turns JS strings,
//! `Uint8Array`s and numbers into core arguments, core results into JS values
//! or JSON text, and core errors into JS errors whose message starts with
//! `turnfit:<kind>: ` (see [`error`]); the hand-written facade (`index.js`)
//! turns that prefix into a `TurnfitError` with `code = <kind>`. The classes
//! here are the facade's private natives (`Native*`); users never see them.
#![deny(unsafe_code)]

mod agents;
mod error;
mod file_tokenizer;
mod registry;
mod session;
mod text;
mod tokenizer;
mod turn;
mod window;

pub use agents::*;
pub use error::panic_for_test;
pub use registry::*;
pub use session::*;
pub use tokenizer::*;
pub use turn::*;
pub use window::*;

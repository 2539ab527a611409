//! Context-window management: accounting, and (in progress) the stateful
//! window, pre-flight checks, validation and repair, and compaction.

pub mod accounting;

pub use accounting::{Accountant, Framing};

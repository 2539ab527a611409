//! Context-window management: accounting, and (in progress) the stateful
//! window, pre-flight checks, validation and repair, and compaction.

pub mod accounting;
mod bm25;
pub mod compact;
pub mod digest;
pub mod fit;
mod pairing;
pub mod repair;
pub mod state;
pub mod summarize;
pub mod summary_prompt;
pub mod tool_outputs;
pub mod validate;

pub use accounting::{Accountant, Framing};
pub use compact::{compact, Compacted, Policy, Strategy};
pub use fit::{fit, fit_json, FitOptions, FitReport};
pub use repair::{repair, Action, Change, Repaired};
pub use state::{Budget, CompactOutcome, CompactReport, Preflight, Verdict, Window};
pub use tool_outputs::{clear_old_tool_results, truncate_tool_outputs};
pub use validate::{validate, Issue, IssueKind};

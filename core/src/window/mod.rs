//! Context-window management: accounting, the stateful window, pre-flight
//! checks, validation and repair, and compaction (rounds, observation
//! masking, dropping or summarizing).

pub mod accounting;
mod bm25;
pub mod compact;
pub mod digest;
pub mod fit;
pub mod manifest;
mod mask;
mod pairing;
pub mod repair;
mod rounds;
pub mod state;
pub mod summarize;
pub mod summary_prompt;
pub mod tool_outputs;
pub mod validate;

pub use accounting::{Accountant, EstimateReason, Framing};
pub use compact::{compact, Compacted, Policy, Strategy, SummaryRole};
pub use fit::{fit, fit_in, fit_json, fit_json_in, FitOptions, FitReport};
pub use manifest::{Action, Change, Protected, Reason};
pub use mask::MaskOptions;
pub use repair::{repair, Repaired};
pub use state::{Budget, CompactOutcome, CompactReport, Preflight, Verdict, Window};
pub use tool_outputs::{clear_old_tool_results, truncate_tool_outputs};
pub use validate::{validate, Issue, IssueKind};

//! Context-window management: accounting, the stateful window, pre-flight
//! checks, validation and repair, and compaction (rounds, observation
//! masking, dropping or summarizing).
//!
//! The submodules are private: every public item is re-exported here, so
//! each has one path (`turnfit::window::Policy`, never also
//! `turnfit::window::compact::Policy`) and the files can be split or merged
//! without breaking callers.

mod accounting;
mod alternation;
mod bm25;
pub(crate) mod carry;
mod compact;
mod digest;
mod fit;
mod manifest;
mod mask;
mod pairing;
mod rendered;
mod repair;
mod rounds;
mod state;
mod strategy;
mod summarize;
mod summary_message;
mod summary_prompt;
mod tiers;
mod tool_outputs;
mod validate;

pub use accounting::{Accountant, EstimateReason, Framing, ImageRule, ToolStyle};
pub use carry::{fingerprint, Carried, Carry, CarryIgnored, CarryIgnoredReason};
pub(crate) use compact::Counted;
pub use compact::{Compacted, Policy, Strategy};
pub use digest::layout::Coverage as DigestCoverage;
pub use digest::{build as build_digest, round_starts, Digest, DigestOptions, Section as DigestSection};
pub use fit::{
    fit, fit_in, fit_json, fit_json_in, fit_json_value, fit_value_in, fit_value_origins, FitOptions, FitReport,
};
pub(crate) use fit::{
    start_parsed as start_fit_parsed, start_parsed_cached as start_fit_parsed_cached,
    start_resolved as start_fit_resolved, Head as FitHead, Started,
};
pub use manifest::{Change, ChangeKind, Protected, Reason, Shortfall, ShortfallReason};
pub use mask::MaskOptions;
pub use rendered::MAX_FIT_PASSES;
pub(crate) use rendered::{has_prompt_model, tighten as tighten_rendered};
pub use repair::{repair, Repaired, DEFAULT_SYNTHETIC_RESULT};
pub use state::{Added, Budget, CompactOutcome, CompactReport, Preflight, Verdict, Window};
pub use strategy::compact;
pub use summarize::{
    apply_summary, compact_with_digest, request_summary, Pending, SummarizerOptions, SummaryRequest, DEFAULT_TEMPLATE,
};
pub(crate) use summarize::{digest_summary, transcript_lines, Begun};
pub use summary_message::{SummaryRole, DEFAULT_LABEL};
pub(crate) use summary_prompt::build as build_summary_prompt;
pub use tiers::{FoldRequest, MultiScale, Tier, TierReport, HISTORICAL_HEADING, SESSION_HEADING, TIERS_LABEL};
pub use tool_outputs::{clear_old_tool_results, truncate_tool_outputs, DEFAULT_CLEARED};
pub use validate::{validate, Issue, IssueKind};

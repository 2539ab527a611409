//! `compact`, the one-call entry: the policy's strategy picks the way.
//! Dropping strategies run the ladder (`compact`); `summarize` runs the
//! summarize protocol (`summarize`) with the deterministic digest as the
//! summary. Kept above both so that neither imports the other.

use std::borrow::Cow;

use super::compact::{compact_prepared, cut_to_fit, prepare, Compacted, Policy, Prepared, Strategy};
use super::summarize::{begin, digest_summary, Begun};
use super::Accountant;
use crate::chat::Conversation;
use crate::Result;

/// Compacts `c` under `policy`, counting with `acct`. For
/// [`Strategy::Summarize`] the summary is the deterministic digest; use
/// `request_summary` and `apply_summary` (or a turn, `turnfit::turn`) for
/// the host's own summary.
pub fn compact(c: &Conversation, policy: &Policy, acct: &Accountant) -> Result<Compacted> {
    let p = prepare(Cow::Borrowed(c), policy, acct)?;
    compact_from(p, policy, acct)
}

/// The ladder on a prepared copy, by the policy's strategy.
pub(super) fn compact_from(mut p: Prepared, policy: &Policy, acct: &Accountant) -> Result<Compacted> {
    if policy.strategy == Strategy::Summarize {
        return match begin(p, policy, acct)? {
            Begun::Summarize(pending) => digest_summary(*pending, policy, acct),
            Begun::Done(c) => Ok(*c),
        };
    }
    cut_to_fit(&mut p, policy, acct, 0)?;
    compact_prepared(p, policy, acct)
}

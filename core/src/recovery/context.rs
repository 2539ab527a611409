//! Who an error happened to: the agent, the workflow and free-form metadata
//! a host hands in with an error (document 000's `ErrorContext`).
//!
//! Classification echoes it back beside the verdict, so the one value a
//! host logs or routes on carries both what went wrong and where; the
//! breakers and the tracer count failures per agent and per workflow from it,
//! so "which agent keeps failing" is a lookup, not a log search.
//!
//! Ids are 1 to [`MAX_KEY_BYTES`] bytes (they become map keys in the counts);
//! metadata is a JSON object of any values (it is echoed, never kept).
//! Anything else is refused with `InvalidArgument` / `LimitExceeded`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::limits::{self, MAX_KEY_BYTES};
use crate::{Error, Result};

/// The agent, workflow and metadata an error came with. Every field is
/// optional; an empty context is the same as none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct ErrorContext {
    /// The agent that met the error (`narrator`, `supervisor`).
    pub agent_id: Option<String>,
    /// The workflow (run, session) it belongs to.
    pub workflow_id: Option<String>,
    /// Anything else the host wants carried with the error.
    pub metadata: Option<Map<String, Value>>,
}

impl ErrorContext {
    /// Parses a context from JSON (`{"agent_id", "workflow_id", "metadata"}`,
    /// each optional) and checks it.
    pub fn from_json(text: &str) -> Result<ErrorContext> {
        let c: ErrorContext = crate::json::parse("error context", text)?;
        c.validate()?;
        Ok(c)
    }

    /// Checks the ids: present ids are 1 to [`MAX_KEY_BYTES`] bytes.
    pub fn validate(&self) -> Result<()> {
        for (what, id) in [("agent_id", &self.agent_id), ("workflow_id", &self.workflow_id)] {
            if let Some(id) = id {
                if id.is_empty() {
                    return Err(Error::invalid_argument(format!(
                        "error context {what} is empty; leave it out instead"
                    )));
                }
                limits::check(&format!("error context {what}"), id.len(), MAX_KEY_BYTES)?;
            }
        }
        Ok(())
    }

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.agent_id.is_none() && self.workflow_id.is_none() && self.metadata.is_none()
    }
}

/// Bounded counts of failures per agent and per workflow: the part of the
/// breakers' and the tracer's stats document 000 keeps as `error_counts`.
///
/// At most [`MAX_COUNTED_IDS`] distinct ids are kept per map; a failure under
/// an id beyond that is counted in `unattributed`, never dropped, so the
/// totals stay right even when a host mints an id per call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FailureCounts {
    /// Failures per agent id.
    pub by_agent: BTreeMap<String, u64>,
    /// Failures per workflow id.
    pub by_workflow: BTreeMap<String, u64>,
    /// Failures whose agent or workflow id could not be given its own entry
    /// (the map already held [`MAX_COUNTED_IDS`] ids).
    pub unattributed: u64,
}

/// Distinct agent ids (and, separately, workflow ids) counted.
pub const MAX_COUNTED_IDS: usize = 1024;

impl FailureCounts {
    /// Counts one failure under the context's agent and workflow (a context
    /// without ids counts nowhere: there is nobody to attribute it to).
    pub fn add(&mut self, agent_id: Option<&str>, workflow_id: Option<&str>) {
        let mut lost = false;
        for (map, id) in [(&mut self.by_agent, agent_id), (&mut self.by_workflow, workflow_id)] {
            let Some(id) = id else { continue };
            if let Some(n) = map.get_mut(id) {
                *n += 1;
            } else if map.len() < MAX_COUNTED_IDS {
                map.insert(id.to_owned(), 1);
            } else {
                lost = true;
            }
        }
        if lost {
            self.unattributed += 1;
        }
    }
}

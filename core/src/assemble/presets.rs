//! Template sets and depth limits that ship with turnfit. `builtin` is the
//! default; `context_engine` is the ContextEngine design's (seed document
//! 003): its four templates with the context keys it requires, its depth
//! table (minimal 0 turns / 0 events, standard 3 / 5, comprehensive 10 /
//! 20) and its section names (`conversation_history`, `recent_events`).

use serde::{Deserialize, Serialize};

use super::{DepthLimit, Template};

/// A named set of templates, depth limits and generated-section names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// `problem_solving`, `conversation`, `analysis`, `general` over
    /// `task`/`history`/`data` sections; depths 2/5, 6/20, all.
    #[default]
    Builtin,
    /// The ContextEngine design's templates, depths and section names.
    ContextEngine,
}

fn t(name: &str, required: &[&str], order: &[&str]) -> Template {
    Template {
        name: name.to_owned(),
        required: required.iter().map(|s| (*s).to_owned()).collect(),
        order: order.iter().map(|s| (*s).to_owned()).collect(),
        optional: Vec::new(),
    }
}

/// `t` with the optional keys of document 003's table.
fn with_optional(mut t: Template, optional: &[&str]) -> Template {
    t.optional = optional.iter().map(|s| (*s).to_owned()).collect();
    t
}

impl Preset {
    /// The preset's templates, in the order `"template": "auto"` tries them.
    pub fn templates(self) -> Vec<Template> {
        match self {
            Preset::Builtin => vec![
                t(
                    "problem_solving",
                    &["task"],
                    &["role", "task", "context", "constraints", "history", "events", "output_format"],
                ),
                t("conversation", &["history"], &["role", "persona", "context", "history", "events", "task"]),
                t("analysis", &["task", "data"], &["role", "task", "data", "context", "events", "output_format"]),
                t("general", &[], &[]),
            ],
            // Required keys first, then the optional ones the design lists,
            // in its order; other sections follow as given.
            Preset::ContextEngine => vec![
                with_optional(
                    t(
                        "problem_solving",
                        &["problem_statement", "objective"],
                        &["problem_statement", "objective", "constraints", "assumptions", "recent_events"],
                    ),
                    &["constraints", "assumptions", "recent_events"],
                ),
                with_optional(
                    t(
                        "conversation",
                        &["query", "conversation_history"],
                        &["query", "conversation_history", "user_context", "recent_events"],
                    ),
                    &["user_context", "recent_events"],
                ),
                with_optional(
                    t("analysis", &["query"], &["query", "relevant_memory", "execution_state"]),
                    &["relevant_memory", "execution_state"],
                ),
                // "All available context".
                with_optional(t("general", &["query"], &["query"]), &["*"]),
            ],
        }
    }

    /// (turns, events) for `minimal`, `standard`, `comprehensive`.
    pub fn depths(self) -> [DepthLimit; 3] {
        let d = |turns, events| DepthLimit { turns, events };
        match self {
            Preset::Builtin => [d(Some(2), Some(5)), d(Some(6), Some(20)), d(None, None)],
            Preset::ContextEngine => [d(Some(0), Some(0)), d(Some(3), Some(5)), d(Some(10), Some(20))],
        }
    }

    /// Names of the sections made from `history` and `events`.
    pub fn section_names(self) -> (&'static str, &'static str) {
        match self {
            Preset::Builtin => ("history", "events"),
            Preset::ContextEngine => ("conversation_history", "recent_events"),
        }
    }
}

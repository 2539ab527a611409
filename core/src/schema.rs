//! JSON Schemas of every JSON shape that crosses the C ABI, generated from
//! the serde types that read and write them (so a shape comes from one
//! place). Behind the `schema` feature: only `xtask schemas` turns it on, and
//! it writes one file per shape under `schemas/` (drift-checked by
//! `xtask schemas --check`). The shapes' names are the files' stems and stay
//! stable: bindings generate their types from those files.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};

/// Where the committed schemas say they live (`$id` is this plus the file name).
pub const ID_BASE: &str = "https://example.invalid/turnfit/schemas/";

/// One JSON shape: its file stem, what carries it, and its schema.
pub struct Shape {
    /// File stem under `schemas/` (`fit-options` -> `schemas/fit-options.json`).
    pub name: &'static str,
    /// The C functions (and CLI commands) that take or return it.
    pub used_by: &'static str,
    /// The generated schema, `$id` included.
    pub schema: Schema,
}

/// A shape the library reads: what deserializing accepts (defaults make
/// fields optional).
fn input<T: JsonSchema>(name: &'static str, used_by: &'static str) -> Shape {
    shape::<T>(SchemaSettings::draft2020_12().for_deserialize(), name, used_by)
}

/// A shape the library writes: what serializing produces (fields it skips
/// when empty are optional).
fn output<T: JsonSchema>(name: &'static str, used_by: &'static str) -> Shape {
    shape::<T>(SchemaSettings::draft2020_12().for_serialize(), name, used_by)
}

fn shape<T: JsonSchema>(settings: SchemaSettings, name: &'static str, used_by: &'static str) -> Shape {
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    schema.insert("$id".into(), format!("{ID_BASE}{name}.json").into());
    if !used_by.is_empty() {
        let what = format!("Used by: {used_by}.");
        let text = match schema.get("description").and_then(|d| d.as_str()) {
            Some(d) => format!("{d}\n\n{what}"),
            None => what,
        };
        schema.insert("description".into(), text.into());
    }
    Shape { name, used_by, schema }
}

/// Every shape, in a fixed order.
pub fn shapes() -> Vec<Shape> {
    use crate::{assemble, callstack, handoff, models, recovery, skills, tokens, toolset, trace, window};
    use std::collections::BTreeMap;
    vec![
        // Tokenizer and registry.
        output::<tokens::TokenizerInfo>("tokenizer-info", "turnfit_tokenizer_info"),
        output::<crate::pipeline::FileTokenizerInfo>("file-tokenizer-info", "turnfit_file_tokenizer_info"),
        input::<tokens::SpecialPolicy>("special-policy", "turnfit_tokenizer_encode_special (policy_json)"),
        output::<Vec<tokens::SpecialToken>>("special-tokens", "turnfit_tokenizer_special_tokens"),
        input::<ProfileInput>("model-profile", "turnfit_registry_register"),
        output::<models::ModelInfo>("model-info", "turnfit_registry_lookup, turnfit models NAME --json"),
        output::<Vec<models::RegistryEntry>>(
            "registry-list",
            "turnfit_registry_list, turnfit models --json (one entry per line)",
        ),
        // Conversations and the window.
        input::<crate::chat::ConversationDoc>(
            "conversation",
            "turnfit_window_load, turnfit_window_push, turnfit_window_conversation, turnfit_fit",
        ),
        input::<window::Budget>("window-budget", "turnfit_window_new (budget_json)"),
        output::<window::Preflight>("preflight-report", "turnfit_window_preflight, turnfit preflight"),
        output::<Vec<window::Issue>>("validation-issues", "turnfit_window_validate"),
        output::<Vec<window::Change>>("repair-changes", "turnfit_window_repair"),
        input::<window::Policy>("compaction-policy", "turnfit_window_compact (policy_json), fit options' policy"),
        output::<window::CompactOutcome>("compact-result", "turnfit_window_compact"),
        output::<window::CompactReport>("compact-report", "turnfit_window_apply_summary"),
        input::<window::FitOptions>("fit-options", "turnfit_fit (options_json), turnfit fit"),
        output::<window::FitReport>("fit-report", "turnfit_fit (out_report)"),
        output::<crate::turn::TurnReport>(
            "turn-report",
            "turnfit_turn_finish and turnfit_turn_run (out_report), turnfit fit --report",
        ),
        output::<crate::turn::SummarizerCall>("summarizer-call", "turnfit_turn_call (the waiting request)"),
        // Assembly, skills, handoffs.
        input::<assemble::Request>("assemble-request", "turnfit_assemble, turnfit assemble"),
        output::<assemble::Assembled>("assemble-result", "turnfit_assemble, turnfit assemble"),
        input::<skills::OpenOptions>("skills-open-options", "turnfit_skills_open (options_json)"),
        output::<skills::Listing>("skills-list", "turnfit_skills_list, turnfit skills list --json"),
        output::<skills::Body>("skill-body", "turnfit_skills_body, turnfit skills show --json"),
        input::<skills::IndexOptions>("skills-index-options", "turnfit_skills_render_index (options_json)"),
        output::<skills::IndexResult>("skills-index", "turnfit_skills_render_index, turnfit skills list --budget"),
        output::<handoff::Handoff>(
            "handoff",
            "turnfit_handoff_validate (result; its input may also spell names in camelCase), turnfit handoff check",
        ),
        input::<handoff::RenderOptions>("handoff-render-options", "turnfit_handoff_render (options_json)"),
        output::<handoff::RenderResult>("handoff-render-result", "turnfit_handoff_render"),
        input::<handoff::FilterOptions>("handoff-filter-options", "turnfit_handoff_filter (options_json)"),
        output::<handoff::FilterResult>("handoff-filter-result", "turnfit_handoff_filter"),
        input::<callstack::CallStackJson>("callstack", "turnfit_callstack_to_json, turnfit_callstack_from_json"),
        // Recovery.
        input::<recovery::ClassifyRequest>("classify-request", "turnfit classify"),
        input::<BTreeMap<String, String>>("classify-headers", "turnfit_recovery_classify (headers_json)"),
        output::<recovery::Classification>(
            "classification",
            "turnfit_recovery_classify, turnfit_recovery_classify_in, turnfit classify",
        ),
        input::<recovery::BackoffRequest>("backoff-request", "turnfit_recovery_backoff"),
        output::<recovery::RetryDecision>("backoff-decision", "turnfit_recovery_backoff"),
        input::<recovery::BreakerConfig>("breaker-config", "turnfit_breaker_new (config_json)"),
        output::<recovery::BreakerSnapshot>("breaker-state", "turnfit_breaker_state"),
        input::<recovery::ErrorContext>(
            "error-context",
            "turnfit_recovery_classify_in, turnfit_breaker_record_failure_in (context_json)",
        ),
        output::<recovery::FailureCounts>("failure-counts", "turnfit_breaker_failure_counts"),
        // Tracing and tool sets.
        input::<trace::TracerConfig>("tracer-config", "turnfit_tracer_new (config_json)"),
        input::<trace::SpanInfo>("span-info", "turnfit_tracer_start (info_json)"),
        input::<trace::SpanEnd>("span-end", "turnfit_tracer_end_with (end_json)"),
        output::<trace::Overdue>("tracer-overdue", "turnfit_tracer_overdue, turnfit_tracer_expire"),
        output::<trace::TraceExport>("trace-export", "turnfit_tracer_export"),
        output::<Option<trace::SpanRecord>>("span-record", "turnfit_tracer_span (a record, or null)"),
        input::<toolset::ToolsetRequest>("toolset-request", "turnfit_toolset_report, turnfit_toolset_select"),
        output::<toolset::ToolsetReport>("toolset-report", "turnfit_toolset_report"),
        // Events (docs/formats.md, "Events").
        output::<crate::events::Event>(
            "event",
            "the payload of turnfit_event_callback (turnfit_window_set_event_callback, turnfit_breaker_set_event_callback, turnfit_tracer_set_event_callback, turnfit_skills_open_with_events)",
        ),
    ]
}

/// `turnfit_registry_register` takes one profile or an array of them
/// (`ModelRegistry::register_json`).
#[derive(JsonSchema)]
#[allow(dead_code)] // only its schema is used
#[serde(untagged)]
enum ProfileInput {
    One(crate::ModelProfile),
    Many(Vec<crate::ModelProfile>),
}

//! JSON Schemas of every JSON shape that crosses the C ABI, generated from
//! the serde types that read and write them (so a shape comes from one
//! place). Behind the `schema` feature: only `xtask schemas` turns it on, and
//! it writes one file per shape under `schemas/` (drift-checked by
//! `xtask schemas --check`). The shapes' names are the files' stems and stay
//! stable: bindings generate their types from those files.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};

/// Where the committed schemas say they live (`$id` is this plus the file name).
pub const ID_BASE: &str = "https://example.invalid/ctxkit/schemas/";

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
        output::<tokens::TokenizerInfo>("tokenizer-info", "ctxkit_tokenizer_info"),
        input::<tokens::SpecialPolicy>("special-policy", "ctxkit_tokenizer_encode_special (policy_json)"),
        output::<Vec<tokens::SpecialToken>>("special-tokens", "ctxkit_tokenizer_special_tokens"),
        input::<ProfileInput>("model-profile", "ctxkit_registry_register"),
        output::<models::ModelInfo>("model-info", "ctxkit_registry_lookup, ctxkit models NAME --json"),
        output::<Vec<models::RegistryEntry>>(
            "registry-list",
            "ctxkit_registry_list, ctxkit models --json (one entry per line)",
        ),
        // Conversations and the window.
        input::<crate::chat::ConversationDoc>(
            "conversation",
            "ctxkit_window_load, ctxkit_window_push, ctxkit_window_conversation, ctxkit_fit",
        ),
        input::<window::Budget>("window-budget", "ctxkit_window_new (budget_json)"),
        output::<window::Preflight>("preflight-report", "ctxkit_window_preflight, ctxkit preflight"),
        output::<Vec<window::Issue>>("validation-issues", "ctxkit_window_validate"),
        output::<Vec<window::Change>>("repair-changes", "ctxkit_window_repair"),
        input::<window::Policy>("compaction-policy", "ctxkit_window_compact (policy_json), fit options' policy"),
        output::<window::CompactOutcome>("compact-result", "ctxkit_window_compact"),
        output::<window::CompactReport>("compact-report", "ctxkit_window_apply_summary"),
        input::<window::FitOptions>("fit-options", "ctxkit_fit (options_json), ctxkit fit"),
        output::<window::FitReport>("fit-report", "ctxkit_fit (out_report), ctxkit fit --report"),
        // Assembly, skills, handoffs.
        input::<assemble::Request>("assemble-request", "ctxkit_assemble, ctxkit assemble"),
        output::<assemble::Assembled>("assemble-result", "ctxkit_assemble, ctxkit assemble"),
        input::<skills::OpenOptions>("skills-open-options", "ctxkit_skills_open (options_json)"),
        output::<skills::Listing>("skills-list", "ctxkit_skills_list, ctxkit skills list --json"),
        output::<skills::Body>("skill-body", "ctxkit_skills_body, ctxkit skills show --json"),
        input::<skills::IndexOptions>("skills-index-options", "ctxkit_skills_render_index (options_json)"),
        output::<skills::IndexResult>("skills-index", "ctxkit_skills_render_index, ctxkit skills list --budget"),
        output::<handoff::Handoff>(
            "handoff",
            "ctxkit_handoff_validate (result; its input may also spell names in camelCase), ctxkit handoff check",
        ),
        input::<handoff::RenderOptions>("handoff-render-options", "ctxkit_handoff_render (options_json)"),
        output::<handoff::RenderResult>("handoff-render-result", "ctxkit_handoff_render"),
        input::<handoff::FilterOptions>("handoff-filter-options", "ctxkit_handoff_filter (options_json)"),
        output::<handoff::FilterResult>("handoff-filter-result", "ctxkit_handoff_filter"),
        input::<callstack::CallStackJson>("callstack", "ctxkit_callstack_to_json, ctxkit_callstack_from_json"),
        // Recovery.
        input::<recovery::ClassifyRequest>("classify-request", "ctxkit classify"),
        input::<BTreeMap<String, String>>("classify-headers", "ctxkit_recovery_classify (headers_json)"),
        output::<recovery::Classification>("classification", "ctxkit_recovery_classify, ctxkit classify"),
        input::<recovery::BackoffRequest>("backoff-request", "ctxkit_recovery_backoff"),
        output::<recovery::RetryDecision>("backoff-decision", "ctxkit_recovery_backoff"),
        input::<recovery::BreakerConfig>("breaker-config", "ctxkit_breaker_new (config_json)"),
        output::<recovery::BreakerSnapshot>("breaker-state", "ctxkit_breaker_state"),
        // Tracing and tool sets.
        input::<trace::TracerConfig>("tracer-config", "ctxkit_tracer_new (config_json)"),
        input::<trace::SpanInfo>("span-info", "ctxkit_tracer_start (info_json)"),
        input::<trace::SpanEnd>("span-end", "ctxkit_tracer_end_with (end_json)"),
        output::<trace::Overdue>("tracer-overdue", "ctxkit_tracer_overdue, ctxkit_tracer_expire"),
        output::<trace::TraceExport>("trace-export", "ctxkit_tracer_export"),
        input::<toolset::ToolsetRequest>("toolset-request", "ctxkit_toolset_report, ctxkit_toolset_select"),
        output::<toolset::ToolsetReport>("toolset-report", "ctxkit_toolset_report"),
        // Events (docs/formats.md, "Events").
        output::<crate::events::Event>(
            "event",
            "the payload of ctxkit_event_callback (ctxkit_window_set_event_callback, ctxkit_breaker_set_event_callback, ctxkit_tracer_set_event_callback, ctxkit_skills_open_with_events)",
        ),
    ]
}

/// `ctxkit_registry_register` takes one profile or an array of them
/// (`ModelRegistry::register_json`).
#[derive(JsonSchema)]
#[allow(dead_code)] // only its schema is used
#[serde(untagged)]
enum ProfileInput {
    One(crate::ModelProfile),
    Many(Vec<crate::ModelProfile>),
}

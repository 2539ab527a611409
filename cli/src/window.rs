//! `turnfit preflight` and `turnfit repair`: read a conversation, hand it to
//! the core's window, print what the core says.

use std::process::ExitCode;

use turnfit::chat::{Conversation, Format};
use turnfit::window::{repair, validate, Accountant, Budget, Window};
use turnfit::ModelRegistry;

use crate::out::outln;
use crate::{input, Fatal};

#[derive(clap::Args)]
pub(crate) struct Common {
    /// Conversation JSON (OpenAI Chat, OpenAI Responses, Anthropic, Gemini, Bedrock Converse or AI SDK ModelMessage shape); "-" for standard input.
    #[arg(value_name = "FILE")]
    file: String,
    /// Model whose encoding, framing and limits apply.
    #[arg(long, value_name = "NAME", default_value = "gpt-4o")]
    model: String,
    /// Input format; detected when not given.
    #[arg(long, value_name = "openai|anthropic|responses|gemini|bedrock|ai_sdk")]
    format: Option<String>,
    #[command(flatten)]
    custom: CustomModelArgs,
}

/// A model the registry does not know, or different limits for one it does.
#[derive(clap::Args)]
pub(crate) struct CustomModelArgs {
    /// Encoding to count with when the registry does not know --model (an Azure deployment, a local model):
    /// cl100k_base, o200k_base, p50k_base, r50k_base, o200k_harmony, p50k_edit, gpt2.
    #[arg(long, value_name = "NAME")]
    encoding: Option<String>,
    /// The model's context window in tokens, replacing the registry's (a custom model needs it unless
    /// --max-tokens is given).
    #[arg(long, value_name = "N")]
    context_window: Option<usize>,
    /// The model's maximum output tokens, replacing the registry's (the reserved output defaults from it).
    #[arg(long, value_name = "N")]
    max_output: Option<usize>,
}

impl CustomModelArgs {
    pub(crate) fn custom(&self) -> Result<turnfit::CustomModel, Fatal> {
        let custom = turnfit::CustomModel {
            encoding: self.encoding.as_deref().map(turnfit::Encoding::from_name).transpose()?,
            context_window: self.context_window,
            max_output_tokens: self.max_output,
        };
        custom.check()?;
        Ok(custom)
    }
}

/// The token budget: shared by `preflight` and `fit`.
#[derive(clap::Args)]
pub(crate) struct BudgetArgs {
    /// Budget for prompt plus reserved output [default: the model's context window].
    #[arg(long, value_name = "N")]
    max_tokens: Option<usize>,
    /// Tokens to keep free for the reply [default: the model's max output, at most a quarter of the budget].
    #[arg(long, value_name = "N")]
    reserve_output: Option<usize>,
    /// Count text as characters / N (a ported host's estimate, e.g. 4 for `len(text) // 4`) instead of the
    /// model's encoding; counts are then estimates.
    #[arg(long, value_name = "N")]
    chars_per_token: Option<f64>,
}

#[derive(clap::Args)]
pub(crate) struct PreflightArgs {
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    budget: BudgetArgs,
    /// The prompt tokens the provider billed for this conversation: calibrate
    /// (an estimated model's figures are scaled by reported / counted).
    #[arg(long, value_name = "N", conflicts_with = crate::model_files::GROUP)]
    reported_prompt_tokens: Option<usize>,
    #[command(flatten)]
    template: crate::chat_model::TemplateArgs,
}

#[derive(clap::Args)]
pub(crate) struct RepairArgs {
    #[command(flatten)]
    common: Common,
    /// Text of synthetic results for unanswered tool calls.
    #[arg(long, value_name = "TEXT")]
    synthetic_result: Option<String>,
    /// Write the manifest here instead of standard error.
    #[arg(long, value_name = "FILE")]
    report: Option<String>,
    #[command(flatten)]
    template: crate::chat_model::TemplateArgs,
}

/// Writes a report as pretty JSON to `path`, or to standard error.
fn write_report(path: Option<&str>, value: &impl serde::Serialize) -> Result<(), Fatal> {
    let text = serde_json::to_string_pretty(value).map_err(|e| Fatal(e.to_string()))?;
    match path {
        Some(path) => std::fs::write(path, text + "\n").map_err(|e| Fatal(format!("{path}: {e}"))),
        None => {
            eprintln!("{text}");
            Ok(())
        }
    }
}

/// Registers a template model for one run: its window is --context-window
/// (or the budget), which a model known by its files must be given.
fn register(
    model: &turnfit::template::TemplateModel,
    registry: &ModelRegistry,
    name: &str,
    custom: &CustomModelArgs,
    budget: usize,
) -> Result<(), Fatal> {
    let window = custom.context_window.or((budget > 0).then_some(budget)).ok_or_else(|| {
        Fatal("a model given by its files (--tokenizer, --ollama-model, --hf-model) needs --context-window N: the window the server allocated (Ollama's num_ctx, llama.cpp's n_ctx, vLLM's max_model_len)".into())
    })?;
    model.register(registry, name, Some(window as u64), custom.max_output.map(|n| n as u64))?;
    Ok(())
}

/// A model given by its files takes the place of an encoding and of a
/// characters-per-token estimate: it counts as its server does.
fn exclusive(
    template: &crate::chat_model::TemplateArgs,
    custom: &CustomModelArgs,
    cpt: Option<f64>,
) -> Result<(), Fatal> {
    if template.given() && (custom.encoding.is_some() || cpt.is_some()) {
        return Err(Fatal(
            "a model given by its files (--tokenizer, --ollama-model, --hf-model) takes the place of --encoding and --chars-per-token".into(),
        ));
    }
    Ok(())
}

fn load_text(c: &Common, text: &str) -> Result<Conversation, Fatal> {
    let format = c.format.as_deref().map(Format::from_name).transpose()?;
    Conversation::parse(text, format).map_err(|e| Fatal(format!("{}: {e}", c.file)))
}

pub(crate) fn preflight(args: PreflightArgs) -> Result<ExitCode, Fatal> {
    let custom = args.common.custom.custom()?;
    exclusive(&args.template, &args.common.custom, args.budget.chars_per_token)?;
    let text = input::read_text(&args.common.file).map_err(Fatal)?;
    let model = args.template.load(&text)?;
    let conversation = match model {
        Some(_) => None,
        None => Some(load_text(&args.common, &text)?),
    };
    let budget = Budget {
        context_window: args.budget.max_tokens.or(custom.context_window).unwrap_or(0),
        reserved_output: args.budget.reserve_output,
        encoding: custom.encoding,
        max_output_tokens: custom.max_output_tokens,
        chars_per_token: args.budget.chars_per_token,
        ..Budget::default()
    };
    if let Some((model, name)) = &model {
        let registry = ModelRegistry::builtin();
        register(model, &registry, name, &args.common.custom, budget.context_window)?;
        let report =
            model.preflight(&registry, name, &text, budget).map_err(|e| Fatal(format!("{}: {e}", args.common.file)))?;
        outln!("{}", serde_json::to_string_pretty(&report).map_err(|e| Fatal(e.to_string()))?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut window = Window::for_model(&ModelRegistry::builtin(), &args.common.model, budget)?;
    window.load(conversation.expect("parsed when no template model"))?;
    if let Some(n) = args.reported_prompt_tokens {
        window.calibrate(n)?;
    }
    let report = window.preflight(None)?;
    outln!("{}", serde_json::to_string_pretty(&report).map_err(|e| Fatal(e.to_string()))?);
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn repair_cmd(args: RepairArgs) -> Result<ExitCode, Fatal> {
    let custom = args.common.custom.custom()?;
    exclusive(&args.template, &args.common.custom, None)?;
    let text = input::read_text(&args.common.file).map_err(Fatal)?;
    let conversation = load_text(&args.common, &text)?;
    // A model given by its files counts as on fit: registered for this run
    // with its tokenizer, its template's framing and --context-window.
    let acct = match args.template.load(&text)? {
        Some((model, name)) => {
            let registry = ModelRegistry::builtin();
            register(&model, &registry, &name, &args.common.custom, 0)?;
            Accountant::for_model(&registry, &name)?.0
        }
        None => Accountant::for_info(&ModelRegistry::builtin().resolve(&args.common.model, &custom)?)?,
    };
    let before = validate(&conversation);
    let repaired = repair(&conversation, args.synthetic_result.as_deref(), &acct)?;
    let after = validate(&repaired.conversation);
    outln!("{}", repaired.conversation.to_json()?);
    let manifest = serde_json::json!({
        "issues_before": before,
        "changes": repaired.changes,
        "issues_after": after,
    });
    write_report(args.report.as_deref(), &manifest)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub(crate) struct FitArgs {
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    budget: BudgetArgs,
    /// Which rounds to keep (a round: an assistant message with its tool results, or a lone message).
    #[arg(long, value_enum, default_value = "recency")]
    strategy: StrategyArg,
    /// Keep the first N user messages (the task); 0 keeps none.
    #[arg(long, value_name = "N", default_value_t = 1)]
    keep_first: usize,
    /// Keep the newest N rounds.
    #[arg(long, value_name = "N", default_value_t = 1)]
    keep_last_rounds: usize,
    /// Keep the newest N user turns besides the latest, and the latest turn whole.
    #[arg(long, value_name = "N", default_value_t = 0, alias = "keep-last-turns")]
    keep_last: usize,
    /// Keep the newest N messages (rounded out to whole rounds).
    #[arg(long, value_name = "N", default_value_t = 0)]
    keep_last_messages: usize,
    /// Never mask the newest N tool results.
    #[arg(long, value_name = "N", default_value_t = 3)]
    mask_keep_last: usize,
    /// Never mask the results of this tool (repeatable).
    #[arg(long, value_name = "TOOL")]
    mask_exclude: Vec<String>,
    /// Do not mask older tool results (go from truncation straight to dropping rounds).
    #[arg(long)]
    no_mask: bool,
    /// Compact to N prompt tokens once the trigger fires (below it nothing changes).
    #[arg(long, value_name = "N")]
    target_tokens: Option<usize>,
    /// Compact to this fraction of --max-tokens (reserved output included) once the trigger fires, 0 to 1.
    #[arg(long, value_name = "R")]
    target_ratio: Option<f64>,
    /// With a target: compact once prompt plus reserved output reach this fraction of --max-tokens [default: 0.8].
    #[arg(long, value_name = "R")]
    trigger_ratio: Option<f64>,
    /// Cut every tool output longer than N tokens first, by structure: head and tail lines, and the error,
    /// failure, traceback and test-summary lines between them [default: when the history is over its target,
    /// a quarter of the prompt limit, the newest round included]; 0 never cuts tool outputs.
    #[arg(long, value_name = "N")]
    tool_output_max: Option<usize>,
    /// Cut every tool output longer than N bytes of UTF-8 first, before --tool-output-max (head and tail kept,
    /// marker included, never inside a character; e.g. 10000 for a 10 KB cap).
    #[arg(long, value_name = "N")]
    tool_output_max_bytes: Option<usize>,
    /// Write the report (manifest, before/after figures) here instead of standard error.
    #[arg(long, value_name = "FILE")]
    report: Option<String>,
    /// With --strategy summarize: tokens the digest may take [default: the summary's budget].
    #[arg(long, value_name = "N")]
    digest_max_tokens: Option<usize>,
    /// With --strategy summarize: the summary's role (system: OpenAI only; Anthropic summaries join a user message).
    #[arg(long, value_enum, default_value = "user")]
    summary_role: SummaryRoleArg,
    /// With --strategy summarize: the summary's first line [default: "[Summary of earlier conversation]"].
    #[arg(long, value_name = "TEXT")]
    summary_label: Option<String>,
    /// With --strategy summarize: digest sections, comma-separated [default: all].
    #[arg(long, value_name = "LIST", value_enum, value_delimiter = ',')]
    digest_sections: Option<Vec<SectionArg>>,
    /// Compact also when the history holds more than N messages, whatever its tokens.
    #[arg(long, value_name = "N")]
    trigger_messages: Option<usize>,
    /// When compaction runs, keep only what is protected (system, task, pins, --keep-last-*) and drop or
    /// summarize the rest, with no token target: e.g. --keep-last-messages 10 --keep-only-protected.
    #[arg(long)]
    keep_only_protected: bool,
    /// System and developer messages may be dropped or summarized like any other message (they are kept by
    /// default; a top-level system prompt always is).
    #[arg(long)]
    no_keep_system: bool,
    /// With --strategy summarize: the host's model as a command run with `sh -c`, the prompt on its standard
    /// input, the summary on its standard output (e.g. 'llm -m gpt-4o-mini'); a failing, silent or late
    /// command makes the digest summarize, as the report says [default: the digest].
    #[arg(long, value_name = "CMD")]
    summarizer_cmd: Option<String>,
    /// With --summarizer-cmd: the summarizer's model (its encoding counts the requests, its window bounds them).
    #[arg(long, value_name = "MODEL")]
    summarizer_model: Option<String>,
    /// With --summarizer-cmd: the summarizer's context window in tokens.
    #[arg(long, value_name = "N")]
    summarizer_window: Option<usize>,
    /// With --summarizer-cmd: milliseconds one request may take [default: 120000; 0: no limit].
    #[arg(long, value_name = "MS")]
    summarizer_timeout_ms: Option<u64>,
    #[command(flatten)]
    template: crate::chat_model::TemplateArgs,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SectionArg {
    Requests,
    Actions,
    State,
    Facts,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SummaryRoleArg {
    User,
    System,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum StrategyArg {
    Recency,
    Relevance,
    Hybrid,
    Summarize,
}

pub(crate) fn fit_cmd(args: FitArgs) -> Result<ExitCode, Fatal> {
    use turnfit::window::{DigestOptions, DigestSection};
    use turnfit::window::{FitOptions, MaskOptions, Policy, Strategy, SummaryRole};
    let strategy = match args.strategy {
        StrategyArg::Recency => Strategy::Recency,
        StrategyArg::Relevance => Strategy::Relevance,
        StrategyArg::Hybrid => Strategy::Hybrid,
        // The CLI calls no model: the summary is the deterministic digest.
        StrategyArg::Summarize => Strategy::Summarize,
    };
    let text = input::read_text(&args.common.file).map_err(Fatal)?;
    let custom = args.common.custom.custom()?;
    exclusive(&args.template, &args.common.custom, args.budget.chars_per_token)?;
    let template = args.template.load(&text)?;
    let model_name = match &template {
        Some((_, name)) => name.clone(),
        None => args.common.model.clone(),
    };
    let options = FitOptions {
        model: model_name.clone(),
        encoding: custom.encoding,
        context_window: custom.context_window,
        max_output_tokens: custom.max_output_tokens,
        max_tokens: args.budget.max_tokens,
        reserve_output: args.budget.reserve_output,
        chars_per_token: args.budget.chars_per_token,
        format: args.common.format.as_deref().map(Format::from_name).transpose()?,
        api: None,
        target_ratio: args.target_ratio,
        trigger_ratio: args.trigger_ratio,
        trigger_messages: args.trigger_messages,
        summarizer: turnfit::window::SummarizerOptions {
            model: args.summarizer_model.clone(),
            context_window: args.summarizer_window,
            timeout_ms: args.summarizer_timeout_ms,
            ..Default::default()
        },
        policy: Policy {
            strategy,
            keep_only_protected: args.keep_only_protected,
            keep_system: !args.no_keep_system,
            keep_first: args.keep_first,
            keep_last_rounds: args.keep_last_rounds,
            keep_last_turns: args.keep_last,
            keep_last_messages: args.keep_last_messages,
            target_tokens: args.target_tokens.unwrap_or(0),
            mask: MaskOptions {
                enabled: !args.no_mask,
                keep_last: args.mask_keep_last,
                exclude_tools: args.mask_exclude,
                ..MaskOptions::default()
            },
            tool_output_max: args.tool_output_max,
            tool_output_max_bytes: args.tool_output_max_bytes,
            summary_role: match args.summary_role {
                SummaryRoleArg::User => SummaryRole::User,
                SummaryRoleArg::System => SummaryRole::System,
            },
            summary_label: args.summary_label,
            digest: DigestOptions {
                max_tokens: args.digest_max_tokens.unwrap_or(0),
                sections: match &args.digest_sections {
                    None => DigestSection::ALL.to_vec(),
                    Some(list) => list
                        .iter()
                        .map(|s| match s {
                            SectionArg::Requests => DigestSection::Requests,
                            SectionArg::Actions => DigestSection::Actions,
                            SectionArg::State => DigestSection::State,
                            SectionArg::Facts => DigestSection::Facts,
                        })
                        .collect(),
                },
            },
            ..Policy::default()
        },
        carry: None,
    };
    // One turn: the host's command summarizes when given, else the digest
    // (the report then says `no_summarizer` only if a span was summarized).
    let registry = turnfit::ModelRegistry::builtin();
    let mut host = args
        .summarizer_cmd
        .as_deref()
        .map(|cmd| move |call: &turnfit::turn::SummarizerCall| crate::summarizer::run(cmd, call));
    let summarizer = host.as_mut().map(|f| f as &mut dyn FnMut(&turnfit::turn::SummarizerCall) -> turnfit::turn::Reply);
    let result = match template.as_ref().map(|(model, _)| model) {
        Some(model) => {
            register(model, &registry, &model_name, &args.common.custom, args.budget.max_tokens.unwrap_or(0))?;
            model.fit(&registry, &text, &options, summarizer)
        }
        None => turnfit::turn::run(&registry, &text, &options, summarizer),
    };
    let (conversation, report) = result.map_err(|e| Fatal(format!("{}: {e}", args.common.file)))?;
    outln!("{}", conversation.to_json()?);
    // A summarizer that failed is said on stderr, not only in the report.
    if let Some(fb) = report.summary.as_ref().and_then(|s| s.fallback.as_ref()) {
        if args.summarizer_cmd.is_some() {
            eprintln!("turnfit: warning: the digest summarized instead of the summarizer command: {}", fb.detail);
        }
    }
    write_report(args.report.as_deref(), &report)?;
    Ok(ExitCode::SUCCESS)
}

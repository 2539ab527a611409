//! `turnfit backoff`, `turnfit trace` and `turnfit callstack`: the retry
//! schedule, tool telemetry and agent call-stack checks from the command
//! line. Arguments become the core's policy, tracer config and stack; the
//! decisions and figures are the core's.

use std::process::ExitCode;

use turnfit::callstack::{CallStack, DEFAULT_MAX_DEPTH};
use turnfit::recovery::{BackoffPolicy, Jitter};
use turnfit::trace::replay_json;
use turnfit::ErrorKind;

use crate::out::outln;
use crate::{input, Fatal};

#[derive(Clone, Copy, clap::ValueEnum)]
enum JitterArg {
    Full,
    None,
}

#[derive(clap::Args)]
pub(crate) struct BackoffArgs {
    /// Failures so far, the one just seen included (1 after the first call failed).
    #[arg(long, value_name = "N")]
    failed: u32,
    /// Ceiling of the first retry's delay, ms.
    #[arg(long, value_name = "MS", default_value_t = BackoffPolicy::default().base_ms)]
    base_ms: u64,
    /// No computed delay exceeds this, ms.
    #[arg(long, value_name = "MS", default_value_t = BackoffPolicy::default().cap_ms)]
    cap_ms: u64,
    /// Attempts in total, the first call included.
    #[arg(long, value_name = "N", default_value_t = BackoffPolicy::default().max_attempts)]
    max_attempts: u32,
    /// full: uniform below the ceiling; none: the ceiling itself (1, 2, 4 s with --base-ms 1000).
    #[arg(long, value_enum, default_value = "full")]
    jitter: JitterArg,
    /// Seed of the jitter.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
    /// The server's hint (a classification's retry_after_ms).
    #[arg(long, value_name = "MS")]
    retry_after_ms: Option<u64>,
}

pub(crate) fn backoff(a: BackoffArgs) -> Result<ExitCode, Fatal> {
    let policy = BackoffPolicy {
        base_ms: a.base_ms,
        cap_ms: a.cap_ms,
        max_attempts: a.max_attempts,
        jitter: match a.jitter {
            JitterArg::Full => Jitter::Full,
            JitterArg::None => Jitter::None,
        },
        ..BackoffPolicy::default()
    };
    let d = policy.decide(a.failed, a.seed, a.retry_after_ms)?;
    outln!("{}", serde_json::to_string(&d).map_err(|e| Fatal(e.to_string()))?);
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub(crate) struct TraceArgs {
    /// Span events, a JSON array (tests/vectors/README.md, "trace"): ["start", tool,
    /// info, input_bytes, at_us], ["end", n, outcome, output_bytes, error, at_us],
    /// ["expire", at_us]; "-" for standard input.
    #[arg(value_name = "EVENTS")]
    events: String,
    /// Tracer config JSON, e.g. '{"collapse": false, "default_timeout_ms": 10000}'.
    #[arg(long, value_name = "JSON", default_value = "")]
    config: String,
}

pub(crate) fn trace(a: TraceArgs) -> Result<ExitCode, Fatal> {
    let events = input::read_text(&a.events).map_err(Fatal)?;
    let r = replay_json(&a.config, &events).map_err(|e| Fatal(format!("{}: {e}", a.events)))?;
    outln!("{}", serde_json::to_string_pretty(&r).map_err(|e| Fatal(e.to_string()))?);
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub(crate) struct CallStackArgs {
    /// Agents entered in order, the outermost caller first.
    #[arg(value_name = "AGENT", required = true)]
    agents: Vec<String>,
    /// The maximum depth of a new stack.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_DEPTH, conflicts_with = "stack")]
    max_depth: usize,
    /// Start from this stack (its JSON, as printed; "-" for standard input) instead of an empty one.
    #[arg(long, value_name = "FILE")]
    stack: Option<String>,
}

/// Prints the stack after entering every agent, or, when an entry is a
/// cycle or goes past the maximum depth, `{"error", "message"}` and exit 1
/// (a refusal the caller acts on, not a failure of the command).
pub(crate) fn callstack(a: CallStackArgs) -> Result<ExitCode, Fatal> {
    let mut stack = match &a.stack {
        Some(path) => {
            let text = input::read_text(path).map_err(Fatal)?;
            CallStack::from_json(&text).map_err(|e| Fatal(format!("{path}: {e}")))?
        }
        None => CallStack::new(a.max_depth)?,
    };
    for agent in &a.agents {
        stack = match stack.enter(agent) {
            Ok(s) => s,
            Err(e) if matches!(e.kind(), ErrorKind::CycleDetected | ErrorKind::DepthExceeded) => {
                let refusal = serde_json::json!({"error": e.kind().as_str(), "message": e.message()});
                outln!("{refusal}");
                return Ok(ExitCode::from(1));
            }
            Err(e) => return Err(e.into()),
        };
    }
    outln!("{}", serde_json::to_string(&stack.to_json_value()).map_err(|e| Fatal(e.to_string()))?);
    Ok(ExitCode::SUCCESS)
}

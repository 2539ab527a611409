//! Replaying a recorded sequence of span events on a fresh tracer: what the
//! CLI's `turnfit trace` runs, so a host's log of starts and ends can be
//! turned into per-tool metrics and records offline, with the same rules as
//! a live tracer. The event shape is the conformance vectors' (see
//! tests/vectors/README.md): `["start", tool, info, input_bytes, at_us]`,
//! `["end", n, outcome, output_bytes, error, at_us]` (n: the n-th start,
//! 1-based) and `["expire", at_us]`.

use serde::Serialize;
use serde_json::Value;

use super::{interrupted_results, InterruptedResult, Outcome, SpanInfo, TraceExport, Tracer, TracerConfig};
use crate::limits::{self, MAX_OPEN_SPANS};
use crate::{Error, Result};

/// What a replay produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Replay {
    /// The tracer's export as of the last event's time.
    pub export: TraceExport,
    /// Synthetic results for the calls `expire` events ended.
    pub interrupted_results: Vec<InterruptedResult>,
    /// Events the tracer refused: `[index, kind, message]`.
    pub event_errors: Vec<(usize, String, String)>,
}

fn bad(i: usize, what: &str) -> Error {
    Error::new(crate::ErrorKind::InvalidJson, format!("trace event {i}: {what}"))
}

fn num(i: usize, e: &[Value], k: usize, what: &str) -> Result<u64> {
    e.get(k).and_then(Value::as_u64).ok_or_else(|| bad(i, &format!("{what} (element {k}) is not a whole number")))
}

/// Replays `events` (a JSON array) on a tracer built from `config`. Malformed
/// events are `InvalidJson` naming the event; events the tracer refuses (an
/// unknown span, an empty tool name) are listed in `event_errors` and the
/// replay goes on, as a live host would.
pub fn replay(config: TracerConfig, events: &Value) -> Result<Replay> {
    let t = Tracer::new(config)?;
    let list =
        events.as_array().ok_or_else(|| Error::new(crate::ErrorKind::InvalidJson, "trace events must be an array"))?;
    limits::check_items("trace events", list.len(), 16 * MAX_OPEN_SPANS)?;
    let (mut ids, mut interrupted, mut event_errors, mut last) = (Vec::new(), Vec::new(), Vec::new(), 0u64);
    for (i, e) in list.iter().enumerate() {
        let e = e.as_array().ok_or_else(|| bad(i, "not an array"))?;
        let result = match e.first().and_then(Value::as_str) {
            Some("start") => {
                let tool = e.get(1).and_then(Value::as_str).ok_or_else(|| bad(i, "tool is not a string"))?;
                let info: SpanInfo = match e.get(2) {
                    None | Some(Value::Null) => SpanInfo::default(),
                    Some(v) => crate::json::from_value("info", v.clone()).map_err(|x| bad(i, x.message()))?,
                };
                let (bytes, at) = (num(i, e, 3, "input_bytes")?, num(i, e, 4, "at_us")?);
                last = last.max(at);
                let r = t.start(tool, info, bytes, at);
                ids.push(r.as_ref().ok().copied());
                r.map(|_| ())
            }
            Some("end") => {
                let n = num(i, e, 1, "n")? as usize;
                let outcome: Outcome = crate::json::from_value("outcome", e.get(2).cloned().unwrap_or(Value::Null))
                    .map_err(|x| bad(i, x.message()))?;
                let (bytes, at) = (num(i, e, 3, "output_bytes")?, num(i, e, 5, "at_us")?);
                let error = match e.get(4) {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.as_str()),
                    Some(_) => return Err(bad(i, "error is not a string or null")),
                };
                last = last.max(at);
                let id = ids.get(n.wrapping_sub(1)).copied().flatten().unwrap_or(u64::MAX);
                t.end(id, outcome, bytes, error, at)
            }
            Some("expire") => {
                let at = num(i, e, 1, "at_us")?;
                last = last.max(at);
                interrupted.extend(interrupted_results(&t.expire(at)));
                Ok(())
            }
            _ => return Err(bad(i, "the first element must be \"start\", \"end\" or \"expire\"")),
        };
        if let Err(x) = result {
            event_errors.push((i, x.kind().as_str().to_owned(), x.message().to_owned()));
        }
    }
    Ok(Replay { export: t.export(last), interrupted_results: interrupted, event_errors })
}

/// [`replay`] from JSON texts: the tracer config (empty for the defaults)
/// and the events array.
pub fn replay_json(config: &str, events: &str) -> Result<Replay> {
    let config: TracerConfig =
        if config.trim().is_empty() { TracerConfig::default() } else { crate::json::parse("tracer config", config)? };
    replay(config, &crate::json::parse_value("trace events", events)?)
}

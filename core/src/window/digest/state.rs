//! Where the work stands at the end of the span: the files created or
//! edited, the last outcome of every shell command run more than once (the
//! test command, the reproduction script), and the errors no later run of the
//! same call has cleared.

use rustc_hash::FxHashMap;

use super::outcome::shorten;
use super::rounds::Analysis;

/// A call made more than once, with its last outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeated {
    /// What was run, shortened.
    pub shown: String,
    /// How often.
    pub times: usize,
    /// The last outcome: `ok`, `error: <line>`, or `no result`.
    pub last: String,
}

/// An error not followed by a success of the same call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenError {
    /// Index into the analysis' calls.
    pub call: usize,
    /// Tool name and key arguments.
    pub shown: String,
    /// The error line.
    pub line: String,
}

/// The state at the end of the span.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Files created or edited, in order of first change.
    pub files: Vec<String>,
    /// Calls run more than once, in order of first run.
    pub repeated: Vec<Repeated>,
    /// Errors still open, oldest first.
    pub open_errors: Vec<OpenError>,
}

/// Renders a call for the state lines: the command, or tool and arguments.
pub fn call_label(name: &str, shown: &str, command: bool) -> String {
    if command || shown.is_empty() {
        format!("`{}`", if shown.is_empty() { name } else { shown })
    } else {
        format!("{name} `{shown}`")
    }
}

/// Works out the state from the analysis.
pub fn state(a: &Analysis) -> State {
    let mut s = State::default();
    let mut by_key: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    let mut order: Vec<&str> = Vec::new();
    for (k, c) in a.calls.iter().enumerate() {
        for f in &c.view.writes {
            if !s.files.contains(f) {
                s.files.push(f.clone());
            }
        }
        let entry = by_key.entry(c.view.key.as_str()).or_default();
        if entry.is_empty() {
            order.push(c.view.key.as_str());
        }
        entry.push(k);
    }
    for key in order {
        let runs = &by_key[key];
        let last = &a.calls[runs[runs.len() - 1]];
        let label = call_label(&last.name, &last.view.shown, last.view.command.is_some());
        if runs.len() > 1 && last.view.command.is_some() {
            let outcome = match &last.outcome {
                None => "no result".to_owned(),
                Some(o) if o.error => format!("error: {}", o.line.as_deref().unwrap_or("(no message)")),
                Some(o) => match &o.line {
                    Some(l) => format!("ok: {}", shorten(l, 80)),
                    None => "ok".to_owned(),
                },
            };
            s.repeated.push(Repeated { shown: label, times: runs.len(), last: outcome });
        }
    }
    // An error stays open unless a later run of the same call succeeded: the
    // same command, or the same tool with the same key arguments (a retried
    // `book_reservation` with corrected payment is the same call).
    let mut pending: FxHashMap<(String, String), usize> = FxHashMap::default();
    for (k, c) in a.calls.iter().enumerate() {
        let key = match &c.view.command {
            Some(cmd) => (String::new(), cmd.clone()),
            None => (c.name.clone(), c.view.shown.clone()),
        };
        match &c.outcome {
            Some(o) if o.error => {
                pending.insert(key, k);
            }
            Some(_) => {
                pending.remove(&key);
            }
            None => {}
        }
    }
    for k in pending.into_values() {
        let c = &a.calls[k];
        let line = c.outcome.as_ref().and_then(|o| o.line.clone()).unwrap_or_else(|| "(no message)".to_owned());
        s.open_errors.push(OpenError {
            call: k,
            shown: call_label(&c.name, &c.view.shown, c.view.command.is_some()),
            line,
        });
    }
    s.open_errors.sort_by_key(|e| e.call);
    s
}

//! The facts worth carrying over: well-formed paths, URLs and identifiers
//! seen in tool arguments and results, ranked by how often and how late they
//! occur (what the agent keeps coming back to, and what it touched last).

use rustc_hash::FxHashMap;

use super::grammar::{scan, Kind};
use super::rounds::Analysis;

/// One fact and where it was seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    /// Path, URL or identifier.
    pub kind: Kind,
    /// The fact, verbatim.
    pub text: String,
    /// Occurrences in the span.
    pub count: usize,
    /// The last round it was seen in.
    pub last: usize,
    score: f64,
}

/// Ranked facts per kind, best first. `exclude` are paths already reported
/// elsewhere (files changed).
pub fn facts(a: &Analysis, exclude: &[String]) -> Vec<Fact> {
    let mut found = Vec::new();
    let mut seen: FxHashMap<(Kind, String), usize> = FxHashMap::default();
    let mut all: Vec<Fact> = Vec::new();
    for (round, text) in &a.sources {
        found.clear();
        scan(text, &mut found);
        for (kind, s) in found.drain(..) {
            if kind == Kind::Path && exclude.contains(&s) {
                continue;
            }
            match seen.get(&(kind, s.clone())) {
                Some(&k) => {
                    all[k].count += 1;
                    all[k].last = *round;
                }
                None => {
                    seen.insert((kind, s.clone()), all.len());
                    all.push(Fact { kind, text: s, count: 1, last: *round, score: 0.0 });
                }
            }
        }
    }
    let rounds = a.rounds.len().max(1) as f64;
    for f in &mut all {
        // Frequency, weighted up to twice for the most recent rounds.
        f.score = f.count as f64 * (1.0 + (f.last + 1) as f64 / rounds);
    }
    all.sort_by(|x, y| {
        x.kind.cmp(&y.kind).then(y.score.total_cmp(&x.score)).then(y.last.cmp(&x.last)).then(x.text.cmp(&y.text))
    });
    all
}

//! The skills index: one line per valid skill for a system prompt, ranked,
//! under a token budget. Skills that do not fit whole are shortened (their
//! description cut, marked with `…`) or left out, and every one of those is
//! reported: nothing is cut silently.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{SkillHeader, SkillSet};
use crate::{Error, ErrorKind, Result, TruncateSide};

/// How to render the index (JSON at the C ABI).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IndexOptions {
    /// Token budget for the whole text; None means no limit.
    #[serde(default)]
    pub budget: Option<usize>,
    /// Host-given relevance per skill name, highest first; skills without a
    /// score rank as 0. When given, scores decide the order.
    #[serde(default)]
    pub scores: Option<HashMap<String, f64>>,
    /// Category order (earlier ranks higher); unlisted categories follow
    /// alphabetically, skills without a category last.
    #[serde(default)]
    pub categories: Option<Vec<String>>,
    /// Text written before the entries (counted against the budget).
    #[serde(default)]
    pub preamble: Option<String>,
    /// Shortest description worth keeping, in tokens (default 8): a skill
    /// whose description would be cut below this is left out instead.
    #[serde(default)]
    pub min_description_tokens: Option<usize>,
}

/// A skill whose description was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Shortened {
    /// Skill name.
    pub name: String,
    /// Tokens of its full entry.
    pub original_tokens: usize,
    /// Tokens of the entry as written.
    pub tokens: usize,
}

/// A skill left out of the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Omitted {
    /// Skill name.
    pub name: String,
    /// `budget` (did not fit) or `invalid` (has error diagnostics or could
    /// not be read).
    pub reason: &'static str,
    /// Tokens its full entry would have taken (0 when invalid).
    pub tokens: usize,
}

/// The rendered index and what happened to each skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IndexResult {
    /// The index text.
    pub text: String,
    /// Tokens of `text`, counted exactly.
    pub tokens: usize,
    /// The budget applied (null for none).
    pub budget: Option<usize>,
    /// Skills written in full or shortened, in rank order.
    pub included: Vec<String>,
    /// Skills whose description was cut.
    pub shortened: Vec<Shortened>,
    /// Skills left out.
    pub omitted: Vec<Omitted>,
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn prefix(name: &str, h: &SkillHeader) -> String {
    let mut p = format!("- {name}");
    if let Some(label) = h.label.as_deref().filter(|l| *l != name) {
        p.push_str(&format!(" ({})", one_line(label)));
    }
    if let Some(c) = &h.category {
        p.push_str(&format!(" [{}]", one_line(c)));
    }
    p.push_str(": ");
    p
}

/// One index entry; `description` replaces the header's when given.
pub(crate) fn entry_line(name: &str, h: &SkillHeader, description: Option<&str>) -> String {
    format!("{}{}\n", prefix(name, h), description.map_or_else(|| one_line(&h.description), str::to_owned))
}

pub(crate) fn render(set: &SkillSet, o: &IndexOptions) -> Result<IndexResult> {
    let tok = set.tokenizer;
    let min_desc = o.min_description_tokens.unwrap_or(8);
    let mut omitted = Vec::new();
    let mut ranked = Vec::new();
    for s in &set.skills {
        match (&s.header, s.is_valid()) {
            (Some(h), true) => ranked.push((s.name.as_str(), h)),
            _ => omitted.push(Omitted { name: s.name.clone(), reason: "invalid", tokens: 0 }),
        }
    }
    if let Some(scores) = &o.scores {
        for (k, v) in scores {
            if !v.is_finite() {
                return Err(Error::invalid_argument(format!("score of '{k}' is not a finite number")));
            }
        }
        let score = |n: &str| scores.get(n).copied().unwrap_or(0.0);
        ranked.sort_by(|a, b| score(b.0).total_cmp(&score(a.0)).then(a.0.cmp(b.0)));
    } else {
        let order = o.categories.clone().unwrap_or_default();
        let key = |h: &SkillHeader| match &h.category {
            Some(c) => match order.iter().position(|x| x == c) {
                Some(i) => (0, i, String::new()),
                None => (1, 0, c.clone()),
            },
            None => (2, 0, String::new()),
        };
        ranked.sort_by(|a, b| key(a.1).cmp(&key(b.1)).then(a.0.cmp(b.0)));
    }
    let preamble =
        o.preamble.clone().map(|p| if p.is_empty() || p.ends_with('\n') { p } else { p + "\n" }).unwrap_or_default();
    let budget = o.budget.unwrap_or(usize::MAX);
    let pre_tokens = tok.count(&preamble)?;
    if pre_tokens > budget {
        return Err(Error::new(
            ErrorKind::DoesNotFit,
            format!("the preamble alone is {pre_tokens} tokens; the budget is {budget}"),
        ));
    }
    // Entries are counted one by one (the estimate that drives choices),
    // then the whole text is counted exactly and trimmed if joining lines
    // changed the total.
    let mut used = pre_tokens;
    let mut lines: Vec<(String, String, usize)> = Vec::new(); // (name, line, full tokens)
    let mut shortened = Vec::new();
    for (name, h) in ranked {
        let full = entry_line(name, h, None);
        let full_tokens = tok.count(&full)?;
        let room = budget - used;
        if full_tokens <= room {
            used += full_tokens;
            lines.push((name.to_owned(), full, full_tokens));
            continue;
        }
        match shorten(tok, name, h, room, min_desc)? {
            Some((line, t)) => {
                used += t;
                shortened.push(Shortened { name: name.to_owned(), original_tokens: full_tokens, tokens: t });
                lines.push((name.to_owned(), line, full_tokens));
            }
            None => omitted.push(Omitted { name: name.to_owned(), reason: "budget", tokens: full_tokens }),
        }
    }
    loop {
        let text = format!("{preamble}{}", lines.iter().map(|l| l.1.as_str()).collect::<String>());
        let tokens = tok.count(&text)?;
        if tokens <= budget || lines.is_empty() {
            let included = lines.iter().map(|l| l.0.clone()).collect();
            return Ok(IndexResult { text, tokens, budget: o.budget, included, shortened, omitted });
        }
        let (name, _, full) = lines.pop().expect("non-empty");
        shortened.retain(|s| s.name != name);
        omitted.push(Omitted { name, reason: "budget", tokens: full });
    }
}

/// The entry with its description cut to fit `room`, or None when the
/// description would be shorter than `min_desc` tokens.
fn shorten(
    tok: crate::Tokenizer,
    name: &str,
    h: &SkillHeader,
    room: usize,
    min_desc: usize,
) -> Result<Option<(String, usize)>> {
    let fixed = tok.count(&format!("{}…\n", prefix(name, h)))?;
    let desc = one_line(&h.description);
    let mut allot = room.saturating_sub(fixed);
    while allot >= min_desc.max(1) {
        let cut = tok.truncate(&desc, allot, TruncateSide::Head, None)?;
        let line = entry_line(name, h, Some(&format!("{}…", cut.text.trim_end())));
        let t = tok.count(&line)?;
        if t <= room {
            return Ok(Some((line, t)));
        }
        allot -= (t - room).min(allot);
    }
    Ok(None)
}

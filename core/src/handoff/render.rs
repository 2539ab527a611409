//! A handoff as a prompt block for the receiving agent:
//!
//! ```text
//! <handoff version="1.0" from="planner" to="coder" created_at="..." trace_id="...">
//! ## Task
//! ...
//!
//! ## Key outputs
//! - [label] content
//!
//! ## Custom fields
//! {"priority":"high"}
//! </handoff>
//! ```
//!
//! The delimiters are unambiguous: attribute values are escaped, and a
//! `</handoff` inside any text is written `<\/handoff` so content cannot
//! close the block early. Under a budget, custom fields go first (the
//! last one first, only as many as needed: they are host extras, the key
//! outputs are the work handed over). Then key outputs are shortened (each
//! cut keeps its head and tail and says how many tokens were cut), smallest needs
//! served first, and when room runs out the largest are omitted (the block
//! says how many, room permitting); both are reported. What the shares
//! leave is then spent on the joined text, smallest output first, so an
//! output that fits beside the others is never dropped. The task summary and metadata are never cut: when they alone
//! do not fit, the call fails with `DoesNotFit`.

use serde::{Deserialize, Serialize};

use super::Handoff;
use crate::{Error, ErrorKind, Result, Tokenizer, TruncateSide};

/// How to render (JSON at the C ABI).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RenderOptions {
    /// Token budget for the block; None means no limit.
    #[serde(default)]
    pub budget: Option<usize>,
    /// Count with this model's encoding.
    #[serde(default)]
    pub model: Option<String>,
    /// Count with this encoding when no model is given (default `cl100k_base`).
    #[serde(default)]
    pub encoding: Option<String>,
    /// Write `custom_fields` into the block (default true).
    #[serde(default)]
    pub include_custom_fields: Option<bool>,
    /// The text's layout (default `block`). Budgets, cuts and the omission
    /// note work the same in every format.
    #[serde(default)]
    pub format: Option<RenderFormat>,
}

/// The layout of a rendered handoff.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RenderFormat {
    /// `<handoff ...>` ... `</handoff>`: delimited so content cannot end it
    /// early, metadata as escaped attributes. The default: a receiving
    /// model (and a host parsing the prompt) can tell where it ends.
    #[default]
    Block,
    /// The Haskell design's `toPromptText` layout (seed document 004):
    /// `=== Context from Previous Agent ===`, `Task:`, `Key Outputs:`,
    /// `Metadata:`, a closing rule. Plain text, not delimited (a key output
    /// holding the closing rule reads as the end), so it is opt-in for hosts
    /// whose prompts already use it.
    PromptText,
}

impl RenderOptions {
    /// The tokenizer these options select.
    pub fn tokenizer(&self) -> Result<Tokenizer> {
        self.tokenizer_in(&crate::ModelRegistry::builtin())
    }

    /// The tokenizer these options select, `model` looked up in `registry`.
    pub fn tokenizer_in(&self, registry: &crate::ModelRegistry) -> Result<Tokenizer> {
        crate::models::select_tokenizer_in(registry, self.model.as_deref(), self.encoding.as_deref())
    }
}

/// A key output that was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShortenedOutput {
    /// Index in `key_outputs`.
    pub index: usize,
    /// Tokens of its full line.
    pub original_tokens: usize,
    /// Tokens of the line as written.
    pub tokens: usize,
}

/// The rendered block and what was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RenderResult {
    /// The prompt block.
    pub text: String,
    /// Tokens of `text`, counted exactly.
    pub tokens: usize,
    /// The budget applied (null for none).
    pub budget: Option<usize>,
    /// Key outputs that were shortened.
    pub shortened: Vec<ShortenedOutput>,
    /// Indexes of key outputs left out entirely.
    pub omitted: Vec<usize>,
    /// Custom fields left out to fit the budget (they go first, before any
    /// key output is cut), in their original order.
    pub omitted_custom_fields: Vec<String>,
}

fn attr(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Keeps text from closing the block.
fn guard(s: &str) -> String {
    // Case-insensitive, so `</HANDOFF>` is neutralized as well.
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (i, _) in lower.match_indices("</handoff") {
        out.push_str(&s[last..i]);
        out.push_str("<\\/");
        last = i + 2;
    }
    out.push_str(&s[last..]);
    out
}

fn line(h: &Handoff, i: usize, content: &str, fmt: RenderFormat) -> String {
    let g = |s: &str| if fmt == RenderFormat::Block { guard(s) } else { s.to_string() };
    match h.key_outputs[i].label() {
        Some(l) => format!("- [{}] {}\n", g(l), g(content)),
        None => format!("- {}\n", g(content)),
    }
}

/// Water-filling of `room` tokens over outputs of `full` tokens each: the
/// smallest are served whole first, the rest share what is left equally.
///
/// While some output's share is below its `least` (too little of it would
/// be left to write), the largest output gets nothing and the shares are
/// computed again without it: as the smallest are served first, the
/// largest is the one omitted when room runs out. Without this, two long
/// outputs that each got half of a small room were both omitted, though
/// the shorter one alone would have fit cut.
fn allot_outputs(full: &[usize], least: &[usize], room: usize) -> Vec<usize> {
    let n = full.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (full[i], i));
    let mut allot = vec![0usize; n];
    loop {
        let mut left = room;
        for (k, &i) in order.iter().enumerate() {
            allot[i] = full[i].min(left / (order.len() - k));
            left -= allot[i];
        }
        if !order.iter().any(|&i| allot[i] < full[i] && allot[i] < least[i]) {
            return allot;
        }
        // `order` is by size: the last is the largest.
        if let Some(i) = order.pop() {
            allot[i] = 0;
        }
    }
}

/// The fewest tokens of an output's content worth writing cut: the cut
/// marker and a few tokens of the content.
fn cut_floor(tok: Tokenizer) -> Result<usize> {
    Ok(tok.count(&CUT.replace("{removed}", "99999"))? + 4)
}

/// The line that stands for `omitted` outputs left out.
fn omission_note(omitted: usize) -> String {
    format!("- [{omitted} more key output{} omitted for length]\n", if omitted == 1 { "" } else { "s" })
}

/// The heading written before the first key output (none in `prompt_text`,
/// whose `Key Outputs:` line is always there).
fn outputs_heading(fmt: RenderFormat) -> &'static str {
    match fmt {
        RenderFormat::Block => "\n## Key outputs\n",
        RenderFormat::PromptText => "",
    }
}

fn assemble(h: &Handoff, outputs: &[Option<String>], custom: bool, note: bool, fmt: RenderFormat) -> String {
    match fmt {
        RenderFormat::Block => assemble_block(h, outputs, custom, note),
        RenderFormat::PromptText => assemble_prompt_text(h, outputs, custom, note),
    }
}

/// The `prompt_text` layout: the design's `toPromptText` lines (its blank
/// line after the outputs included), metadata as `key=value` pairs, custom
/// fields as one JSON line when written.
fn assemble_prompt_text(h: &Handoff, outputs: &[Option<String>], custom: bool, note: bool) -> String {
    let m = &h.metadata;
    let mut t = String::from("=== Context from Previous Agent ===\nTask: ");
    t.push_str(h.task_summary.trim_end());
    t.push_str("\nKey Outputs:\n");
    for l in outputs.iter().flatten() {
        t.push_str(l);
    }
    let omitted = outputs.iter().filter(|o| o.is_none()).count();
    if note && omitted > 0 {
        t.push_str(&omission_note(omitted));
    }
    t.push_str(&format!("\nMetadata: from={} to={} created_at={}", m.from_agent, m.to_agent, m.created_at));
    if let Some(id) = &m.trace_id {
        t.push_str(&format!(" trace_id={id}"));
    }
    t.push('\n');
    if custom && !h.custom_fields.is_empty() {
        t.push_str("Custom Fields: ");
        t.push_str(&serde_json::to_string(&h.custom_fields).unwrap_or_default());
        t.push('\n');
    }
    t.push_str("===================================\n");
    t
}

fn assemble_block(h: &Handoff, outputs: &[Option<String>], custom: bool, note: bool) -> String {
    let m = &h.metadata;
    let mut t = format!(
        "<handoff version=\"{}\" from=\"{}\" to=\"{}\" created_at=\"{}\"",
        attr(&h.version),
        attr(&m.from_agent),
        attr(&m.to_agent),
        attr(&m.created_at)
    );
    if let Some(id) = &m.trace_id {
        t.push_str(&format!(" trace_id=\"{}\"", attr(id)));
    }
    t.push_str(">\n## Task\n");
    t.push_str(guard(h.task_summary.trim_end()).as_str());
    t.push('\n');
    let omitted = outputs.iter().filter(|o| o.is_none()).count();
    if outputs.iter().any(Option::is_some) || (note && omitted > 0) {
        t.push_str("\n## Key outputs\n");
        for l in outputs.iter().flatten() {
            t.push_str(l);
        }
        if note && omitted > 0 {
            t.push_str(&omission_note(omitted));
        }
    }
    if custom && !h.custom_fields.is_empty() {
        t.push_str("\n## Custom fields\n");
        t.push_str(&guard(&serde_json::to_string(&h.custom_fields).unwrap_or_default()));
        t.push('\n');
    }
    t.push_str("</handoff>\n");
    t
}

const CUT: &str = " [… {removed} tokens cut …] ";

impl Handoff {
    /// Renders the prompt block under `options` (see the module docs).
    pub fn render(&self, options: &RenderOptions) -> Result<RenderResult> {
        self.render_in(&crate::ModelRegistry::builtin(), options)
    }

    /// As [`Handoff::render`], an options `model` looked up in `registry`.
    pub fn render_in(&self, registry: &crate::ModelRegistry, options: &RenderOptions) -> Result<RenderResult> {
        let tok = options.tokenizer_in(registry)?;
        let custom = options.include_custom_fields.unwrap_or(true) && !self.custom_fields.is_empty();
        let fmt = options.format.unwrap_or_default();
        let full_text = |h: &Handoff, custom: bool| {
            let lines: Vec<Option<String>> =
                (0..h.key_outputs.len()).map(|i| Some(line(h, i, h.key_outputs[i].content(), fmt))).collect();
            assemble(h, &lines, custom, false, fmt)
        };
        let text = full_text(self, custom);
        let tokens = tok.count(&text)?;
        let result = |text, tokens, omitted_custom_fields| RenderResult {
            text,
            tokens,
            budget: options.budget,
            shortened: vec![],
            omitted: vec![],
            omitted_custom_fields,
        };
        let budget = match options.budget {
            Some(b) if tokens > b => b,
            _ => return Ok(result(text, tokens, vec![])),
        };
        // Custom fields are host extras: they go before any key output is
        // cut, the last one first, and only as many as the budget needs.
        let mut trimmed = self.clone();
        let mut dropped = Vec::new();
        if custom {
            while let Some(name) = trimmed.custom_fields.keys().next_back().cloned() {
                trimmed.custom_fields.remove(&name);
                dropped.insert(0, name);
                let text = full_text(&trimmed, !trimmed.custom_fields.is_empty());
                let tokens = tok.count(&text)?;
                if tokens <= budget {
                    return Ok(result(text, tokens, dropped));
                }
            }
        }
        let mut r = trimmed.render_outputs(tok, budget, fmt)?;
        r.omitted_custom_fields = dropped;
        Ok(r)
    }

    /// The block without custom fields, key outputs shortened or omitted
    /// to fit `budget`.
    ///
    /// The omission note is the last thing placed: outputs are allotted,
    /// cut and omitted as if it did not exist, and it is written only when
    /// the result with it still fits. So the note never takes the room of an
    /// output (or part of one) that fits without it; when it does not fit,
    /// `omitted` still lists what was left out.
    fn render_outputs(&self, tok: Tokenizer, budget: usize, fmt: RenderFormat) -> Result<RenderResult> {
        let custom = false;
        let n = self.key_outputs.len();
        let full: Vec<String> = (0..n).map(|i| line(self, i, self.key_outputs[i].content(), fmt)).collect();
        let fixed = tok.count(&assemble(self, &vec![None; n], custom, false, fmt))?;
        // The section heading appears once any output is written.
        let heading = tok.count(outputs_heading(fmt))?;
        if fixed > budget {
            return Err(Error::new(
                ErrorKind::DoesNotFit,
                format!("the handoff's task summary and metadata alone take {fixed} tokens; the budget is {budget}"),
            ));
        }
        let full_tokens: Vec<usize> = full.iter().map(|l| tok.count(l)).collect::<Result<_>>()?;
        let mut room = (budget - fixed).saturating_sub(heading);
        let mut least = self.least_useful(tok, fmt)?;
        let mut allot = allot_outputs(&full_tokens, &least, room);
        let done = |text, tokens, shortened, omitted| RenderResult {
            text,
            tokens,
            budget: Some(budget),
            shortened,
            omitted,
            omitted_custom_fields: vec![],
        };
        loop {
            let mut lines: Vec<Option<String>> = vec![None; n];
            let mut shortened = Vec::new();
            let mut omitted = Vec::new();
            for i in 0..n {
                if allot[i] >= full_tokens[i] {
                    lines[i] = Some(full[i].clone());
                    continue;
                }
                match self.cut_line(tok, i, allot[i], fmt)? {
                    Some((l, t)) => {
                        shortened.push(ShortenedOutput { index: i, original_tokens: full_tokens[i], tokens: t });
                        lines[i] = Some(l);
                    }
                    None => omitted.push(i),
                }
            }
            // A cut can come out longer than its estimate: an output that
            // could not use its share needs more, so share again with that
            // known (no other output keeps room it was allotted instead).
            if let Some(&i) = omitted.iter().find(|&&i| allot[i] > 0) {
                least[i] = least[i].max(allot[i] + 1);
                allot = allot_outputs(&full_tokens, &least, room);
                continue;
            }
            let text = assemble(self, &lines, custom, false, fmt);
            let tokens = tok.count(&text)?;
            if tokens <= budget {
                let (text, tokens) = self.fill_leftover(
                    tok,
                    budget,
                    fmt,
                    (text, tokens),
                    &full,
                    &full_tokens,
                    &mut lines,
                    &mut shortened,
                    &mut omitted,
                )?;
                if !omitted.is_empty() {
                    let noted = assemble(self, &lines, custom, true, fmt);
                    let noted_tokens = tok.count(&noted)?;
                    if noted_tokens <= budget {
                        return Ok(done(noted, noted_tokens, shortened, omitted));
                    }
                }
                return Ok(done(text, tokens, shortened, omitted));
            }
            // Joining lines cost more than their separate counts: share
            // out less room and try again (re-allotting rather than cutting
            // one output further, which could starve it while another
            // output kept its whole share).
            if room == 0 {
                // Unreachable in practice: with no room every output is
                // omitted and the text is the fixed part, which fits.
                return Ok(done(text, tokens, shortened, omitted));
            }
            room = room.saturating_sub(tokens - budget);
            allot = allot_outputs(&full_tokens, &least, room);
        }
    }

    /// Spends what the shares left over, on the text as joined. The shares
    /// are sums of separate line counts, and a joined text can count a
    /// token less than its parts (a newline merging with the next line's
    /// dash), so an output whose share fell short by that token was
    /// dropped though the block had room for it whole (issue 53, seed 004).
    /// Smallest first, as the shares are served: each output not written
    /// whole is tried whole, then each omitted one is tried cut to what is
    /// left; a change is kept only when the joined text still fits.
    #[allow(clippy::too_many_arguments)]
    fn fill_leftover(
        &self,
        tok: Tokenizer,
        budget: usize,
        fmt: RenderFormat,
        current: (String, usize),
        full: &[String],
        full_tokens: &[usize],
        lines: &mut [Option<String>],
        shortened: &mut Vec<ShortenedOutput>,
        omitted: &mut Vec<usize>,
    ) -> Result<(String, usize)> {
        let (mut text, mut tokens) = current;
        let mut order: Vec<usize> = (0..full.len()).collect();
        order.sort_by_key(|&i| (full_tokens[i], i));
        for &i in &order {
            if tokens >= budget {
                break;
            }
            if lines[i].as_deref() == Some(full[i].as_str()) {
                continue;
            }
            let before = lines[i].replace(full[i].clone());
            let t = assemble(self, lines, false, false, fmt);
            let n = tok.count(&t)?;
            if n <= budget {
                (text, tokens) = (t, n);
                shortened.retain(|s| s.index != i);
                omitted.retain(|&j| j != i);
            } else {
                lines[i] = before;
            }
        }
        for &i in &order {
            if tokens >= budget || !omitted.contains(&i) {
                continue;
            }
            // The line's own count is a bound on what it adds; the joined
            // text decides.
            let mut room = budget - tokens;
            while let Some((l, lt)) = self.cut_line(tok, i, room, fmt)? {
                lines[i] = Some(l);
                let t = assemble(self, lines, false, false, fmt);
                let n = tok.count(&t)?;
                if n <= budget {
                    (text, tokens) = (t, n);
                    omitted.retain(|&j| j != i);
                    shortened.push(ShortenedOutput { index: i, original_tokens: full_tokens[i], tokens: lt });
                    shortened.sort_by_key(|s| s.index);
                    break;
                }
                lines[i] = None;
                room = lt.min(room).saturating_sub((n - budget).max(1));
            }
        }
        Ok((text, tokens))
    }

    /// For each output, the fewest tokens its line can be cut to and still
    /// be written ([`Self::cut_line`] gives up below it).
    fn least_useful(&self, tok: Tokenizer, fmt: RenderFormat) -> Result<Vec<usize>> {
        let least = cut_floor(tok)?;
        (0..self.key_outputs.len()).map(|i| Ok(tok.count(&line(self, i, "", fmt))? + least)).collect()
    }

    /// Output `i` cut to at most `room` tokens for its whole line, keeping
    /// its head and tail (a log's last lines matter as much as its first),
    /// or None when too little of it would fit to be useful.
    fn cut_line(&self, tok: Tokenizer, i: usize, room: usize, fmt: RenderFormat) -> Result<Option<(String, usize)>> {
        let content = self.key_outputs[i].content();
        let overhead = tok.count(&line(self, i, "", fmt))?;
        let least = cut_floor(tok)?;
        let mut keep = room.saturating_sub(overhead);
        while keep >= least {
            let cut = tok.truncate(content, keep, TruncateSide::Both, Some(CUT))?;
            let l = line(self, i, &cut.text, fmt);
            let t = tok.count(&l)?;
            if t <= room {
                return Ok(Some((l, t)));
            }
            keep -= (t - room).min(keep);
        }
        Ok(None)
    }
}

//! Prompt assembly: build a prompt from prioritized sections under a token
//! budget.
//!
//! Sections are filled by priority (highest first). The first section that
//! does not fit whole is cut to what remains, and sections after it are
//! left out. Everything left out or cut is reported; nothing is cut
//! silently. Templates say which sections must be present and in what order
//! they are rendered; `depth` says how many history turns and events go in.
//! Section content may be any JSON value, rendered by [`value::render`], so
//! a host can pass the state it holds instead of formatting it first.
//! [`Preset`]s bundle templates, depth limits and section names: the
//! defaults, and the ContextEngine design's own (seed document 003).

mod presets;
pub mod value;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::{Error, ErrorKind, Result, Tokenizer, TruncateSide};

pub use presets::Preset;

/// One piece of the prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Section {
    /// Name, e.g. `task`; also its heading.
    pub name: String,
    /// Content: a string, or any JSON value (rendered by [`value::render`]).
    pub text: Value,
    /// Higher goes in first.
    #[serde(default)]
    pub priority: i32,
    /// A section cut below this is left out instead (0: no minimum).
    #[serde(default)]
    pub min_tokens: usize,
    /// Cap on the section's own tokens (it is cut, head kept, beyond it).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// The assembly fails rather than leave this section out or cut it
    /// below `min_tokens`.
    #[serde(default)]
    pub required: bool,
}

/// Which sections a kind of prompt needs and their order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Template {
    /// Template name.
    pub name: String,
    /// Sections that must be given.
    #[serde(default)]
    pub required: Vec<String>,
    /// Rendering order; sections not listed follow in the order given.
    #[serde(default)]
    pub order: Vec<String>,
    /// Sections the template uses when given (document 003's optional
    /// keys); `"*"` means any section. A section that `required`,
    /// `optional` and `order` all leave out is still rendered and is listed
    /// in the result's `unnamed_sections`. A template that names no section
    /// at all takes any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub optional: Vec<String>,
}

impl Template {
    /// Whether the template names `section` (or takes any).
    pub fn names(&self, section: &str) -> bool {
        let listed = |l: &[String]| l.iter().any(|n| n == section);
        let nothing = self.required.is_empty() && self.order.is_empty() && self.optional.is_empty();
        nothing
            || self.optional.iter().any(|n| n == "*")
            || listed(&self.required)
            || listed(&self.optional)
            || listed(&self.order)
    }
}

/// How much history and how many events go in, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Depth {
    /// The preset's smallest depth (built-in: 2 turns, 5 events).
    Minimal,
    /// The preset's usual depth (built-in: 6 turns, 20 events).
    #[default]
    Standard,
    /// The preset's largest depth (built-in: everything).
    Comprehensive,
}

/// The newest `turns` history items and `events` events go in (None: all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DepthLimit {
    /// History items taken (None or absent: all).
    #[serde(default)]
    pub turns: Option<usize>,
    /// Events taken (None or absent: all).
    #[serde(default)]
    pub events: Option<usize>,
}

/// A depth by name, or limits given directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum DepthChoice {
    /// `"minimal"`, `"standard"`, `"comprehensive"` (limits from the preset
    /// or `depth_limits`).
    Named(Depth),
    /// `{"turns": n, "events": m}`.
    Limits(DepthLimit),
}

impl Default for DepthChoice {
    fn default() -> Self {
        DepthChoice::Named(Depth::Standard)
    }
}

impl<'de> Deserialize<'de> for DepthChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let v = Value::deserialize(d)?;
        match &v {
            Value::String(_) => serde_json::from_value(v).map(DepthChoice::Named).map_err(|_| {
                D::Error::custom(
                    "depth must be \"minimal\", \"standard\", \"comprehensive\" or {\"turns\", \"events\"}",
                )
            }),
            Value::Object(_) => {
                serde_json::from_value(v).map(DepthChoice::Limits).map_err(|e| D::Error::custom(format!("depth: {e}")))
            }
            _ => Err(D::Error::custom("depth must be a name or {\"turns\", \"events\"}")),
        }
    }
}

/// Limits replacing the preset's for some named depths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DepthLimits {
    /// Replaces `minimal`.
    #[serde(default)]
    pub minimal: Option<DepthLimit>,
    /// Replaces `standard`.
    #[serde(default)]
    pub standard: Option<DepthLimit>,
    /// Replaces `comprehensive`.
    #[serde(default)]
    pub comprehensive: Option<DepthLimit>,
}

/// An assembly request (the JSON that `turnfit_assemble` and `turnfit
/// assemble` take).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Templates, depth limits and section names to start from.
    #[serde(default)]
    pub preset: Preset,
    /// A template of the preset or of `templates`, or `auto`: the first
    /// template (host templates first, then the preset's in order) whose
    /// required sections are all present. Absent: `general` with the
    /// built-in preset, `auto` with any other.
    #[serde(default)]
    pub template: Option<String>,
    /// Host templates, added to the preset's (same name replaces one).
    #[serde(default)]
    pub templates: Vec<Template>,
    /// Token budget for the whole prompt.
    pub budget: usize,
    /// How many history turns and events go in.
    #[serde(default)]
    pub depth: DepthChoice,
    /// Replaces the preset's limits for named depths.
    #[serde(default)]
    pub depth_limits: DepthLimits,
    /// Name of the section made from `history` (preset's by default).
    #[serde(default)]
    pub history_section: Option<String>,
    /// Name of the section made from `events` (preset's by default).
    #[serde(default)]
    pub events_section: Option<String>,
    /// The sections.
    #[serde(default)]
    pub sections: Vec<Section>,
    /// More sections as `name: content`, in the order given, priority 0
    /// (the host's own state; an entry that renders empty, such as `null`
    /// or `[]`, is absent).
    #[serde(default)]
    pub context: Map<String, Value>,
    /// History turns, oldest first; the newest ones (by depth) become the
    /// history section.
    #[serde(default)]
    pub history: Vec<Value>,
    /// Events, oldest first; the newest ones (by depth) become the events
    /// section.
    #[serde(default)]
    pub events: Vec<Value>,
    /// Event kinds to keep (ContextEngine's AgentMind `filters`, e.g.
    /// `["solution", "error", "decision"]`), applied before the depth
    /// limit: the section holds the newest matching events, up to the
    /// depth's count. An event's kind is its `kind`, `type` or
    /// `event_type` field (the first that is a string) for an object, the
    /// text before its first `:` for a string; matched exactly, case
    /// insensitive. Absent or empty: every event.
    #[serde(default)]
    pub event_filters: Vec<String>,
}

/// Most entries `event_filters` may hold.
pub const MAX_EVENT_FILTERS: usize = 256;

/// An event's kind for `event_filters` (see [`Request::event_filters`]).
fn event_kind(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) => ["kind", "type", "event_type"].iter().find_map(|k| o.get(*k).and_then(Value::as_str)),
        Value::String(s) => s.split_once(':').map(|(k, _)| k.trim()),
        _ => None,
    }
}

/// The events `filters` keeps, in order (all of them for no filters).
fn filter_events<'a>(events: &'a [Value], filters: &[String]) -> Result<Vec<&'a Value>> {
    if filters.len() > MAX_EVENT_FILTERS {
        return Err(Error::new(
            crate::ErrorKind::LimitExceeded,
            format!("event_filters has {} entries; the limit is {MAX_EVENT_FILTERS}", filters.len()),
        ));
    }
    if let Some(i) = filters.iter().position(|f| f.trim().is_empty()) {
        return Err(Error::invalid_argument(format!("event_filters[{i}] is empty")));
    }
    if filters.is_empty() {
        return Ok(events.iter().collect());
    }
    let wanted = |k: &str| filters.iter().any(|f| f.trim().eq_ignore_ascii_case(k.trim()));
    Ok(events.iter().filter(|e| event_kind(e).is_some_and(wanted)).collect())
}

/// What happened to one section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SectionReport {
    /// Section name.
    pub name: String,
    /// `included`, `truncated` or `omitted`.
    pub status: &'static str,
    /// Tokens of the section as given.
    pub original_tokens: usize,
    /// Tokens of the section as rendered (0 when omitted).
    pub tokens: usize,
}

/// The assembled prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Assembled {
    /// The prompt text.
    pub text: String,
    /// Its tokens (at most the budget).
    pub tokens: usize,
    /// The budget.
    pub budget: usize,
    /// The template used (the one chosen, with `auto`).
    pub template: String,
    /// Every section, in rendering order, with what happened to it.
    pub sections: Vec<SectionReport>,
    /// Sections given that the chosen template does not name (see
    /// [`Template::optional`]), in the order given: rendered all the same,
    /// reported so a misspelt or unexpected key is not silent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unnamed_sections: Vec<String>,
}

/// The built-in preset's templates.
pub fn builtin_templates() -> Vec<Template> {
    Preset::Builtin.templates()
}

fn render(name: &str, text: &str) -> String {
    format!("## {name}\n{}\n\n", text.trim_end())
}

/// One history item or event: a string as is, anything else as a list entry.
fn item_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => value::render(&Value::Array(vec![other.clone()])),
    }
}

/// A section's content as text.
struct Prepared {
    name: String,
    text: String,
    priority: i32,
    min_tokens: usize,
    max_tokens: Option<usize>,
    required: bool,
}

fn prepare(req: &Request) -> Result<Vec<Prepared>> {
    let mut out: Vec<Prepared> = req
        .sections
        .iter()
        .map(|s| Prepared {
            name: s.name.clone(),
            text: value::render(&s.text),
            priority: s.priority,
            min_tokens: s.min_tokens,
            max_tokens: s.max_tokens,
            required: s.required,
        })
        .collect();
    for (name, v) in &req.context {
        let text = value::render(v);
        if text.trim().is_empty() {
            continue; // null, [], {} or "": the host has nothing for it
        }
        if out.iter().any(|s| &s.name == name) {
            return Err(Error::invalid_argument(format!(
                "section '{name}' is given twice (in 'sections' and in 'context')"
            )));
        }
        out.push(Prepared { name: name.clone(), text, priority: 0, min_tokens: 0, max_tokens: None, required: false });
    }
    let limit = match req.depth {
        DepthChoice::Limits(l) => l,
        DepthChoice::Named(d) => {
            let preset = req.preset.depths();
            let (given, i) = match d {
                Depth::Minimal => (req.depth_limits.minimal, 0),
                Depth::Standard => (req.depth_limits.standard, 1),
                Depth::Comprehensive => (req.depth_limits.comprehensive, 2),
            };
            given.unwrap_or(preset[i])
        }
    };
    let (h_default, e_default) = req.preset.section_names();
    let h_name = req.history_section.as_deref().unwrap_or(h_default);
    let e_name = req.events_section.as_deref().unwrap_or(e_default);
    if h_name == e_name {
        return Err(Error::invalid_argument(format!("history_section and events_section are both '{h_name}'")));
    }
    // Filters apply before the depth limit: the newest matching events.
    let history: Vec<&Value> = req.history.iter().collect();
    let events = filter_events(&req.events, &req.event_filters)?;
    for (name, items, n, priority) in [(h_name, &history, limit.turns, 40), (e_name, &events, limit.events, 30)] {
        let take = items.len().min(n.unwrap_or(usize::MAX));
        if take > 0 && !out.iter().any(|s| s.name == name) {
            let text = items[items.len() - take..].iter().map(|v| item_text(v)).collect::<Vec<_>>().join("\n");
            out.push(Prepared {
                name: name.to_owned(),
                text,
                priority,
                min_tokens: 0,
                max_tokens: None,
                required: false,
            });
        }
    }
    for s in &out {
        if s.name.trim().is_empty() {
            return Err(Error::invalid_argument("every section needs a name"));
        }
    }
    Ok(out)
}

fn present(t: &Template, sections: &[Prepared]) -> bool {
    t.required.iter().all(|name| sections.iter().any(|s| &s.name == name && !s.text.trim().is_empty()))
}

/// The templates in the order `auto` tries them: the host's, then the
/// preset's that the host did not replace.
fn templates(req: &Request) -> Result<Vec<Template>> {
    let mut all: Vec<Template> = Vec::new();
    for t in &req.templates {
        if t.name == "auto" {
            return Err(Error::invalid_argument("'auto' is reserved and cannot name a template"));
        }
        match all.iter_mut().find(|x| x.name == t.name) {
            Some(slot) => *slot = t.clone(),
            None => all.push(t.clone()),
        }
    }
    for t in req.preset.templates() {
        if !all.iter().any(|x| x.name == t.name) {
            all.push(t);
        }
    }
    Ok(all)
}

fn choose<'a>(req: &Request, all: &'a [Template], sections: &[Prepared]) -> Result<&'a Template> {
    let default = if req.preset == Preset::Builtin { "general" } else { "auto" };
    let wanted = req.template.as_deref().unwrap_or(default);
    if wanted == "auto" {
        return all.iter().find(|t| present(t, sections)).ok_or_else(|| {
            let needs: Vec<String> =
                all.iter().map(|t| format!("{} needs {}", t.name, t.required.join(" + "))).collect();
            let given: Vec<&str> = sections.iter().map(|s| s.name.as_str()).collect();
            Error::invalid_argument(format!(
                "no template has all its required sections ({}); sections given: {}",
                needs.join("; "),
                if given.is_empty() { "none".to_owned() } else { given.join(", ") }
            ))
        });
    }
    let template = all.iter().find(|t| t.name == wanted).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|t| t.name.as_str()).collect();
        Error::invalid_argument(format!("unknown template '{wanted}'; known: {}, auto", names.join(", ")))
    })?;
    for name in &template.required {
        if !sections.iter().any(|s| &s.name == name && !s.text.trim().is_empty()) {
            return Err(Error::invalid_argument(format!("template '{}' requires a '{name}' section", template.name)));
        }
    }
    Ok(template)
}

/// Assembles the prompt described by `req`, counting with `tok`.
pub fn assemble(req: &Request, tok: &Tokenizer) -> Result<Assembled> {
    let mut sections = prepare(req)?;
    let all = templates(req)?;
    let template = choose(req, &all, &sections)?;
    // Required by the template means required here too.
    for s in &mut sections {
        if template.required.contains(&s.name) {
            s.required = true;
        }
    }
    // Apply each section's own cap first.
    let mut texts: Vec<String> = Vec::with_capacity(sections.len());
    let mut originals = Vec::with_capacity(sections.len());
    for s in &sections {
        originals.push(tok.count(&render(&s.name, &s.text))?);
        let text = match s.max_tokens {
            Some(max) => tok.truncate(&s.text, max, TruncateSide::Head, None)?.text,
            None => s.text.clone(),
        };
        texts.push(text);
    }
    // Rendered sections are counted one by one; joined, their boundaries
    // can tokenize differently, so the whole is counted again and the fill
    // re-run with a tighter budget until it fits (rarely more than once).
    let mut effective = req.budget;
    loop {
        let (text, tokens, reports) = fill(req, template, &sections, &texts, &originals, effective, tok)?;
        if tokens <= req.budget {
            return Ok(Assembled {
                text,
                tokens,
                budget: req.budget,
                template: template.name.clone(),
                sections: reports,
                unnamed_sections: sections
                    .iter()
                    .filter(|s| !template.names(&s.name))
                    .map(|s| s.name.clone())
                    .collect(),
            });
        }
        effective = effective.saturating_sub((tokens - req.budget).max(1));
    }
}

#[allow(clippy::too_many_arguments)]
fn fill(
    req: &Request,
    template: &Template,
    sections: &[Prepared],
    capped: &[String],
    originals: &[usize],
    budget: usize,
    tok: &Tokenizer,
) -> Result<(String, usize, Vec<SectionReport>)> {
    let mut texts = capped.to_vec();
    let mut by_priority: Vec<usize> = (0..sections.len()).collect();
    by_priority.sort_by_key(|&i| (std::cmp::Reverse(sections[i].priority), i));
    let mut status = vec!["omitted"; sections.len()];
    let mut used = 0usize;
    let mut full = false;
    for &i in &by_priority {
        let s = &sections[i];
        let whole = tok.count(&render(&s.name, &texts[i]))?;
        if !full && used + whole <= budget {
            used += whole;
            status[i] = if texts[i] != s.text { "truncated" } else { "included" };
            continue;
        }
        // The first section that does not fit whole is cut to what is left.
        if !full {
            full = true;
            let header = tok.count(&render(&s.name, ""))?;
            let room = budget.saturating_sub(used + header);
            if room > 0 && room >= s.min_tokens.max(1) {
                let cut = tok.truncate(&texts[i], room, TruncateSide::Head, None)?;
                texts[i] = cut.text;
                used += tok.count(&render(&s.name, &texts[i]))?;
                status[i] = "truncated";
                continue;
            }
        }
        if s.required {
            return Err(Error::new(
                ErrorKind::DoesNotFit,
                format!(
                    "required section '{}' ({whole} tokens) does not fit the budget of {}; {used} tokens are taken by higher-priority sections",
                    s.name, req.budget
                ),
            ));
        }
    }
    // Render in template order, then the rest in the order given.
    let mut order: Vec<usize> =
        template.order.iter().filter_map(|n| sections.iter().position(|s| &s.name == n)).collect();
    let rest: Vec<usize> = (0..sections.len()).filter(|i| !order.contains(i)).collect();
    order.extend(rest);
    let mut text = String::new();
    let mut reports = Vec::new();
    for i in order {
        let included = status[i] != "omitted";
        if included {
            text.push_str(&render(&sections[i].name, &texts[i]));
        }
        reports.push(SectionReport {
            name: sections[i].name.clone(),
            status: status[i],
            original_tokens: originals[i],
            tokens: if included { tok.count(&render(&sections[i].name, &texts[i]))? } else { 0 },
        });
    }
    let text = text.trim_end().to_owned();
    let tokens = tok.count(&text)?;
    Ok((text, tokens, reports))
}

#[cfg(test)]
mod tests;

/// [`assemble`] with the request given as JSON and the result returned as
/// JSON (the C ABI's form); the caller's tokenizer does the counting.
pub fn assemble_json(request_json: &str, tok: &Tokenizer) -> Result<String> {
    let req: Request = crate::json::parse("assembly request", request_json)?;
    crate::json::to_string(&assemble(&req, tok)?)
}

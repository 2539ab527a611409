//! Prompt assembly: build a prompt from prioritized sections under a token
//! budget.
//!
//! Sections are filled by priority (highest first). The first section that
//! does not fit whole is cut to what remains, and sections after it are
//! left out. Everything left out or cut is reported; nothing is cut
//! silently. Templates say which sections must be present and in what order
//! they are rendered; `depth` says how many history turns and events go in.

use serde::{Deserialize, Serialize};

use crate::{Error, ErrorKind, Result, Tokenizer, TruncateSide};

/// One piece of the prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    /// Name, e.g. `task`; also its heading.
    pub name: String,
    /// Content.
    pub text: String,
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
}

/// How much history and how many events go in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Depth {
    /// The last 2 turns and 5 events.
    Minimal,
    /// The last 6 turns and 20 events.
    #[default]
    Standard,
    /// Everything.
    Comprehensive,
}

impl Depth {
    fn limits(self) -> (usize, usize) {
        match self {
            Depth::Minimal => (2, 5),
            Depth::Standard => (6, 20),
            Depth::Comprehensive => (usize::MAX, usize::MAX),
        }
    }
}

/// An assembly request (the JSON that `ctxkit_assemble` takes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Built-in (`problem_solving`, `conversation`, `analysis`, `general`)
    /// or one of `templates`.
    #[serde(default = "general")]
    pub template: String,
    /// Host templates, added to the built-ins (same name replaces one).
    #[serde(default)]
    pub templates: Vec<Template>,
    /// Token budget for the whole prompt.
    pub budget: usize,
    /// How many history turns and events go in.
    #[serde(default)]
    pub depth: Depth,
    /// The sections.
    #[serde(default)]
    pub sections: Vec<Section>,
    /// History turns, oldest first; the newest ones (by depth) become the
    /// `history` section.
    #[serde(default)]
    pub history: Vec<String>,
    /// Events, oldest first; the newest ones (by depth) become `events`.
    #[serde(default)]
    pub events: Vec<String>,
}

fn general() -> String {
    "general".to_owned()
}

/// What happened to one section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
pub struct Assembled {
    /// The prompt text.
    pub text: String,
    /// Its tokens (at most the budget).
    pub tokens: usize,
    /// The budget.
    pub budget: usize,
    /// Every section, in rendering order, with what happened to it.
    pub sections: Vec<SectionReport>,
}

/// The built-in templates.
pub fn builtin_templates() -> Vec<Template> {
    let t = |name: &str, required: &[&str], order: &[&str]| Template {
        name: name.to_owned(),
        required: required.iter().map(|s| (*s).to_owned()).collect(),
        order: order.iter().map(|s| (*s).to_owned()).collect(),
    };
    vec![
        t(
            "problem_solving",
            &["task"],
            &["role", "task", "context", "constraints", "history", "events", "output_format"],
        ),
        t("conversation", &["history"], &["role", "persona", "context", "history", "events", "task"]),
        t("analysis", &["task", "data"], &["role", "task", "data", "context", "events", "output_format"]),
        t("general", &[], &[]),
    ]
}

fn render(name: &str, text: &str) -> String {
    format!("## {name}\n{}\n\n", text.trim_end())
}

/// Assembles the prompt described by `req`, counting with `tok`.
pub fn assemble(req: &Request, tok: &Tokenizer) -> Result<Assembled> {
    let mut templates = builtin_templates();
    for t in &req.templates {
        match templates.iter_mut().find(|x| x.name == t.name) {
            Some(slot) => *slot = t.clone(),
            None => templates.push(t.clone()),
        }
    }
    let template = templates.iter().find(|t| t.name == req.template).ok_or_else(|| {
        let names: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
        Error::invalid_argument(format!("unknown template '{}'; known: {}", req.template, names.join(", ")))
    })?;

    let mut sections = req.sections.clone();
    let (turns, events) = req.depth.limits();
    for (name, items, n, priority) in [("history", &req.history, turns, 40), ("events", &req.events, events, 30)] {
        if !items.is_empty() && !sections.iter().any(|s| s.name == name) {
            let take = items.len().min(n);
            let text = items[items.len() - take..].join("\n");
            sections.push(Section {
                name: name.to_owned(),
                text,
                priority,
                min_tokens: 0,
                max_tokens: None,
                required: false,
            });
        }
    }
    for s in &sections {
        if s.name.trim().is_empty() {
            return Err(Error::invalid_argument("every section needs a name"));
        }
    }
    for name in &template.required {
        if !sections.iter().any(|s| &s.name == name && !s.text.trim().is_empty()) {
            return Err(Error::invalid_argument(format!("template '{}' requires a '{name}' section", template.name)));
        }
    }
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
            return Ok(Assembled { text, tokens, budget: req.budget, sections: reports });
        }
        effective = effective.saturating_sub((tokens - req.budget).max(1));
    }
}

#[allow(clippy::too_many_arguments)]
fn fill(
    req: &Request,
    template: &Template,
    sections: &[Section],
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

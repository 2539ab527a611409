//! Selective tool sets: a registry of tool definitions with per-agent
//! allowlists, and what each agent's set costs in prompt tokens.
//!
//! Every tool definition sent with a request is paid for on every turn. A
//! reviewer agent that only reads files does not need the 40 tools of the
//! coding agent; giving each agent only its own tools is often the cheapest
//! context saving there is. [`ToolRegistry::report`] shows how much, counting
//! with the window's [`Accountant::tools`] (OpenAI's published tool-definition
//! constants), so the figures agree with `preflight`.
//!
//! Definitions are accepted in the OpenAI `tools` shape (`{"type":
//! "function", "function": {"name", "description", "parameters"}}`), the
//! legacy `functions` shape (`{"name", "description", "parameters"}`) and the
//! Anthropic shape (`{"name", "description", "input_schema"}`), and are
//! handed back exactly as given. Allowlist entries are tool names or
//! prefixes ending in `*` (`"fs_*"`); an entry that matches nothing is an
//! error, so a typo does not silently leave an agent without a tool.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::Tool;
use crate::limits::{self, MAX_KEY_BYTES, MAX_TOOLS, MAX_TOOLSET_AGENTS};
use crate::window::Accountant;
use crate::{Error, ErrorKind, ModelRegistry, Result};

/// Tool definitions plus allowlists.
#[derive(Debug, Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Tool>,
    index: HashMap<String, usize>,
    allow: BTreeMap<String, Vec<usize>>,
}

/// The input of [`report_json`] and [`select_json`]: `{"model", "tools",
/// "allowlists"}`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ToolsetRequest {
    /// Model whose accounting is used (report only; default `gpt-4o`).
    #[serde(default)]
    pub model: Option<String>,
    /// Tool definitions in any of the accepted shapes.
    pub tools: Vec<Value>,
    /// Agent name to tool names or `prefix*` patterns; `null` means every
    /// tool (document 002's `allowed_tools = None`).
    #[serde(default)]
    pub allowlists: BTreeMap<String, Option<Vec<String>>>,
    /// The order of an agent's tools: `registry` (default) or `allowlist`.
    #[serde(default)]
    pub order: ToolOrder,
}

/// The order of an agent's tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ToolOrder {
    /// The order the tools were registered in, whatever the allowlist's: every
    /// agent sending a tool sends it at the same place, so agents that share
    /// a prefix of tools share the provider's prompt cache for it.
    #[default]
    Registry,
    /// The allowlist's order (document 002's): each entry's tools where the
    /// entry stands (a `prefix*` entry's in registry order), a tool named
    /// twice at its first place.
    Allowlist,
}

/// One agent's tool set and its cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentToolset {
    /// The agent.
    pub agent: String,
    /// Its tools, in registry order.
    pub tools: Vec<String>,
    /// Prompt tokens of its tool definitions.
    pub tokens: usize,
    /// Tokens saved against sending the full set.
    pub saved_tokens: usize,
    /// `tokens` as a percentage of the full set's (0 when the full set is free).
    pub percent_of_full: f64,
}

/// Token cost of the full set and of each agent's set.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolsetReport {
    /// The model counted for.
    pub model: String,
    /// Whether the model's counts are exact (OpenAI encodings) or estimated.
    pub exact: bool,
    /// Number of tools registered.
    pub tool_count: usize,
    /// Prompt tokens of all tool definitions.
    pub full_tokens: usize,
    /// Each agent with an allowlist, by name.
    pub agents: Vec<AgentToolset>,
}

fn parse_tool(raw: Value, i: usize) -> Result<Tool> {
    let path = format!("tools[{i}]");
    let bad = |what: &str| Error::new(ErrorKind::InvalidJson, format!("{path}: {what}"));
    let obj = raw.as_object().ok_or_else(|| bad("must be an object"))?;
    let (f, params_key) = match obj.get("function") {
        Some(Value::Object(f)) => (f, "parameters"),
        Some(_) => return Err(bad("'function' must be an object")),
        None if obj.contains_key("input_schema") => (obj, "input_schema"),
        None => (obj, "parameters"),
    };
    let name = match f.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(bad("'name' must be a string")),
        None => return Err(bad("has no 'name'")),
    };
    if name.is_empty() {
        return Err(Error::invalid_argument(format!("{path}: tool name is empty")));
    }
    limits::check(&format!("{path} name"), name.len(), MAX_KEY_BYTES)?;
    let description = match f.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(bad("'description' must be a string")),
    };
    let parameters = match f.get(params_key) {
        None | Some(Value::Null) => Value::Null,
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err(bad(&format!("'{params_key}' must be a JSON-schema object"))),
    };
    Ok(Tool { name, description, parameters, raw })
}

impl ToolRegistry {
    /// A registry of `tools` (definitions in any accepted shape). Errors:
    /// `InvalidJson` (not a definition), `InvalidArgument` (empty or
    /// duplicate name), `LimitExceeded` (over [`MAX_TOOLS`] tools, a name
    /// over [`MAX_KEY_BYTES`]).
    pub fn new(tools: Vec<Value>) -> Result<ToolRegistry> {
        limits::check_items("tools", tools.len(), MAX_TOOLS)?;
        let mut reg = ToolRegistry::default();
        for (i, raw) in tools.into_iter().enumerate() {
            let t = parse_tool(raw, i)?;
            if let Some(&first) = reg.index.get(&t.name) {
                return Err(Error::invalid_argument(format!(
                    "tools[{i}]: tool '{}' is already defined at tools[{first}]",
                    t.name
                )));
            }
            reg.index.insert(t.name.clone(), i);
            reg.tools.push(t);
        }
        Ok(reg)
    }

    /// The registered tools, in order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Sets `agent`'s allowlist (replacing any earlier one). Each entry is a
    /// tool name or a `prefix*` pattern and must match at least one tool.
    /// The agent's tools are in registry order.
    pub fn allow(&mut self, agent: &str, entries: &[String]) -> Result<()> {
        self.allow_ordered(agent, Some(entries), ToolOrder::Registry)
    }

    /// [`ToolRegistry::allow`] with `None` for every tool and a choice of
    /// order.
    pub fn allow_ordered(&mut self, agent: &str, entries: Option<&[String]>, order: ToolOrder) -> Result<()> {
        if agent.is_empty() {
            return Err(Error::invalid_argument("allowlist agent name is empty"));
        }
        limits::check("allowlist agent name", agent.len(), MAX_KEY_BYTES)?;
        if !self.allow.contains_key(agent) {
            limits::check_items("allowlists", self.allow.len() + 1, MAX_TOOLSET_AGENTS)?;
        }
        let Some(entries) = entries else {
            self.allow.insert(agent.to_owned(), (0..self.tools.len()).collect());
            return Ok(());
        };
        limits::check_items(&format!("allowlist of '{agent}'"), entries.len(), MAX_TOOLS)?;
        let mut chosen = vec![false; self.tools.len()];
        let mut in_order = Vec::new();
        for e in entries {
            let matched: Vec<usize> = match e.strip_suffix('*') {
                Some(prefix) => (0..self.tools.len()).filter(|&i| self.tools[i].name.starts_with(prefix)).collect(),
                None => self.index.get(e.as_str()).copied().into_iter().collect(),
            };
            if matched.is_empty() {
                return Err(Error::invalid_argument(format!(
                    "allowlist of '{agent}': '{e}' matches no tool{}",
                    self.suggest(e)
                )));
            }
            for i in matched {
                if !chosen[i] {
                    in_order.push(i);
                }
                chosen[i] = true;
            }
        }
        let list = match order {
            ToolOrder::Registry => chosen.iter().enumerate().filter(|(_, &c)| c).map(|(i, _)| i).collect(),
            ToolOrder::Allowlist => in_order,
        };
        self.allow.insert(agent.to_owned(), list);
        Ok(())
    }

    fn suggest(&self, name: &str) -> String {
        let best = self
            .tools
            .iter()
            .map(|t| (strsim::jaro_winkler(&t.name, name.trim_end_matches('*')), &t.name))
            .filter(|(s, _)| *s > 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        best.map_or_else(String::new, |(_, n)| format!(" (did you mean '{n}'?)"))
    }

    /// The agents with an allowlist, by name.
    pub fn agents(&self) -> Vec<&str> {
        self.allow.keys().map(String::as_str).collect()
    }

    /// `agent`'s tools, in the order its allowlist was set with (registry
    /// order unless [`ToolOrder::Allowlist`]). An agent without an allowlist is
    /// `InvalidArgument` (an agent gets no tools by accident, never all).
    pub fn tools_for(&self, agent: &str) -> Result<Vec<&Tool>> {
        let list = self.allow.get(agent).ok_or_else(|| {
            Error::invalid_argument(format!(
                "agent '{agent}' has no allowlist; known agents: {}",
                self.agents().join(", ")
            ))
        })?;
        Ok(list.iter().map(|&i| &self.tools[i]).collect())
    }

    /// `agent`'s tool definitions exactly as they were given.
    pub fn definitions_for(&self, agent: &str) -> Result<Vec<Value>> {
        Ok(self.tools_for(agent)?.into_iter().map(|t| t.raw.clone()).collect())
    }

    /// The token cost of the full set and of every agent's set.
    pub fn report(&self, acct: &Accountant, model: &str, exact: bool) -> Result<ToolsetReport> {
        let full = acct.tools(&self.tools)?;
        let mut agents = Vec::with_capacity(self.allow.len());
        for (agent, list) in &self.allow {
            let set: Vec<Tool> = list.iter().map(|&i| self.tools[i].clone()).collect();
            let tokens = acct.tools(&set)?;
            agents.push(AgentToolset {
                agent: agent.clone(),
                tools: set.into_iter().map(|t| t.name).collect(),
                tokens,
                saved_tokens: full.saturating_sub(tokens),
                percent_of_full: if full == 0 { 0.0 } else { (tokens as f64 * 1000.0 / full as f64).round() / 10.0 },
            });
        }
        Ok(ToolsetReport { model: model.to_owned(), exact, tool_count: self.tools.len(), full_tokens: full, agents })
    }
}

fn registry_from(text: &str) -> Result<(ToolRegistry, Option<String>)> {
    let r: ToolsetRequest = crate::json::parse("toolset request", text)?;
    limits::check_items("allowlists", r.allowlists.len(), MAX_TOOLSET_AGENTS)?;
    let mut reg = ToolRegistry::new(r.tools)?;
    for (agent, entries) in &r.allowlists {
        reg.allow_ordered(agent, entries.as_deref(), r.order)?;
    }
    Ok((reg, r.model))
}

/// The cost report for a JSON [`ToolsetRequest`], counted for its `model`
/// (default `gpt-4o`) as `registry` resolves it.
pub fn report_json(registry: &ModelRegistry, text: &str) -> Result<ToolsetReport> {
    let (reg, model) = registry_from(text)?;
    let model = model.unwrap_or_else(|| "gpt-4o".to_owned());
    let (acct, info) = Accountant::for_model(registry, &model)?;
    reg.report(&acct, &model, info.exact)
}

/// `agent`'s tool definitions (a JSON array, each exactly as given) from a
/// JSON [`ToolsetRequest`].
pub fn select_json(text: &str, agent: &str) -> Result<Vec<Value>> {
    registry_from(text)?.0.definitions_for(agent)
}

#[cfg(test)]
mod tests;

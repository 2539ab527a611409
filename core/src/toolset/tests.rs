use serde_json::json;

use super::*;
use crate::chat::Conversation;

fn weather_openai() -> Value {
    json!({"type": "function", "function": {"name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {"type": "object", "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            "unit": {"type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"]}}})
}

fn weather_anthropic() -> Value {
    let f = &weather_openai()["function"];
    json!({"name": f["name"], "description": f["description"], "input_schema": f["parameters"]})
}

fn simple(name: &str, desc: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "description": desc,
        "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "File path"}}}}})
}

fn gpt4o() -> Accountant {
    Accountant::for_model(&ModelRegistry::builtin(), "gpt-4o").unwrap().0
}

#[test]
fn the_weather_tool_costs_what_the_guide_implies() {
    // OpenAI's guide: the weather conversation is 101 tokens for gpt-4o with
    // its tool; its messages alone are what preflight counts without it.
    let messages = json!([
        {"role": "system", "content": "You are a helpful assistant that can answer to questions about the weather."},
        {"role": "user", "content": "What's the weather like in San Francisco?"}]);
    let acct = gpt4o();
    let without = acct.conversation(&Conversation::parse(&messages.to_string(), None).unwrap()).unwrap();
    let reg = ToolRegistry::new(vec![weather_openai()]).unwrap();
    let r = reg.report(&acct, "gpt-4o", true).unwrap();
    assert_eq!(r.full_tokens, 101 - without);
    // The Anthropic shape of the same definition costs the same.
    let a = ToolRegistry::new(vec![weather_anthropic()]).unwrap();
    assert_eq!(a.report(&acct, "gpt-4o", true).unwrap().full_tokens, r.full_tokens);
}

#[test]
fn each_agent_pays_for_its_own_tools_only() {
    let tools = vec![
        weather_openai(),
        simple("fs_read", "Read a file"),
        simple("fs_write", "Write a file"),
        simple("run_tests", "Run the test suite and report failures"),
    ];
    let mut reg = ToolRegistry::new(tools).unwrap();
    reg.allow("reviewer", &["fs_read".into()]).unwrap();
    reg.allow("coder", &["fs_*".into(), "run_tests".into(), "fs_read".into()]).unwrap();
    reg.allow("idle", &[]).unwrap();
    let acct = gpt4o();
    let r = reg.report(&acct, "gpt-4o", true).unwrap();
    assert_eq!(r.tool_count, 4);
    assert_eq!(r.agents.iter().map(|a| a.agent.as_str()).collect::<Vec<_>>(), ["coder", "idle", "reviewer"]);
    let coder = &r.agents[0];
    assert_eq!(coder.tools, ["fs_read", "fs_write", "run_tests"]);
    let subset: Vec<Tool> = reg.tools_for("coder").unwrap().into_iter().cloned().collect();
    assert_eq!(coder.tokens, acct.tools(&subset).unwrap());
    assert_eq!(coder.saved_tokens, r.full_tokens - coder.tokens);
    assert!(r.agents[2].tokens < coder.tokens && coder.tokens < r.full_tokens);
    assert_eq!((r.agents[1].tokens, r.agents[1].saved_tokens), (0, r.full_tokens));
    let pct = coder.tokens as f64 * 100.0 / r.full_tokens as f64;
    assert!((coder.percent_of_full - pct).abs() <= 0.05);
    // Definitions come back exactly as given.
    assert_eq!(reg.definitions_for("reviewer").unwrap(), vec![simple("fs_read", "Read a file")]);
}

#[test]
fn mistakes_are_reported_with_the_name() {
    let mut reg = ToolRegistry::new(vec![simple("fs_read", "r"), simple("fs_write", "w")]).unwrap();
    let e = reg.allow("coder", &["fs_raed".into()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("'fs_raed' matches no tool (did you mean 'fs_read'?)"), "{e}");
    assert_eq!(reg.allow("coder", &["net_*".into()]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let e = reg.tools_for("nobody").unwrap_err();
    assert!(e.message().contains("agent 'nobody' has no allowlist"), "{e}");
    assert_eq!(reg.allow("", &[]).unwrap_err().kind(), ErrorKind::InvalidArgument);

    let e = ToolRegistry::new(vec![simple("a", "x"), simple("a", "y")]).unwrap_err();
    assert!(e.message().contains("tools[1]: tool 'a' is already defined at tools[0]"), "{e}");
    for (bad, kind) in [
        (json!(5), ErrorKind::InvalidJson),
        (json!({"type": "function", "function": 3}), ErrorKind::InvalidJson),
        (json!({"description": "no name"}), ErrorKind::InvalidJson),
        (json!({"name": ""}), ErrorKind::InvalidArgument),
        (json!({"name": "x", "input_schema": "nope"}), ErrorKind::InvalidJson),
        (json!({"name": "x".repeat(MAX_KEY_BYTES + 1)}), ErrorKind::LimitExceeded),
    ] {
        assert_eq!(ToolRegistry::new(vec![bad.clone()]).unwrap_err().kind(), kind, "{bad}");
    }
}

#[test]
fn tool_count_limit_at_and_past() {
    let tools = |n: usize| (0..n).map(|i| json!({"name": format!("t{i}")})).collect::<Vec<_>>();
    assert_eq!(ToolRegistry::new(tools(MAX_TOOLS)).unwrap().tools().len(), MAX_TOOLS);
    assert_eq!(ToolRegistry::new(tools(MAX_TOOLS + 1)).unwrap_err().kind(), ErrorKind::LimitExceeded);
}

#[test]
fn agent_count_limit_at_and_past() {
    let mut reg = ToolRegistry::new(vec![json!({"name": "t"})]).unwrap();
    for i in 0..MAX_TOOLSET_AGENTS {
        reg.allow(&format!("a{i}"), &["t".into()]).unwrap();
    }
    // Replacing an existing allowlist is fine at the limit; a new agent is not.
    reg.allow("a0", &[]).unwrap();
    assert_eq!(reg.allow("one-more", &[]).unwrap_err().kind(), ErrorKind::LimitExceeded);
}

#[test]
fn json_entry_points() {
    let req = json!({"model": "gpt-4", "tools": [simple("fs_read", "Read a file"), weather_anthropic()],
        "allowlists": {"reviewer": ["fs_read"]}});
    let r = report_json(&ModelRegistry::builtin(), &req.to_string()).unwrap();
    assert_eq!((r.model.as_str(), r.exact, r.agents.len()), ("gpt-4", true, 1));
    let picked = select_json(&req.to_string(), "reviewer").unwrap();
    assert_eq!(picked, vec![simple("fs_read", "Read a file")]);
    let unknown_model = json!({"model": "no-such-model", "tools": []});
    assert_eq!(
        report_json(&ModelRegistry::builtin(), &unknown_model.to_string()).unwrap_err().kind(),
        ErrorKind::UnknownModel
    );
    assert_eq!(select_json(r#"{"tools": [], "agents": {}}"#, "x").unwrap_err().kind(), ErrorKind::InvalidJson);
}

#[test]
fn allowlist_order_and_every_tool_on_request() {
    let tools = vec![simple("a_read", "Read"), simple("b_write", "Write"), simple("c_run", "Run")];
    let req = |allow: Value, order: Option<&str>| {
        let mut r = serde_json::json!({"tools": tools, "allowlists": {"x": allow}});
        if let Some(o) = order {
            r["order"] = o.into();
        }
        r.to_string()
    };
    let names = |text: &str| -> Vec<String> {
        select_json(text, "x").unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
    };
    let entries = serde_json::json!(["c_run", "a_read", "c_run"]);
    // Registry order by default (shared prompt-cache prefixes); the document's
    // allowlist order on request, a repeat at its first place.
    assert_eq!(names(&req(entries.clone(), None)), ["a_read", "c_run"]);
    assert_eq!(names(&req(entries, Some("allowlist"))), ["c_run", "a_read"]);
    assert_eq!(names(&req(serde_json::json!(["c_run", "*"]), Some("allowlist"))), ["c_run", "a_read", "b_write"]);
    // null: every tool (document 002's None), in registry order.
    assert_eq!(names(&req(Value::Null, None)), ["a_read", "b_write", "c_run"]);
    assert_eq!(names(&req(Value::Null, Some("allowlist"))), ["a_read", "b_write", "c_run"]);
    // An empty list is still no tools; an unknown order is refused.
    assert!(names(&req(serde_json::json!([]), None)).is_empty());
    assert_eq!(select_json(&req(Value::Null, Some("alphabetical")), "x").unwrap_err().kind(), ErrorKind::InvalidJson);
}

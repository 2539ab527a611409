use proptest::prelude::*;

use super::*;
use crate::Encoding;
use serde_json::{json, Value};

fn tok() -> Tokenizer {
    Tokenizer::new(Encoding::O200kBase).unwrap()
}

fn sec(name: &str, text: &str, priority: i32) -> Section {
    Section {
        name: name.into(),
        text: Value::String(text.into()),
        priority,
        min_tokens: 0,
        max_tokens: None,
        required: false,
    }
}

fn req(template: &str, budget: usize, sections: Vec<Section>) -> Request {
    Request { template: Some(template.into()), budget, sections, ..Request::default() }
}

#[test]
fn template_requirements_and_order() {
    let err = assemble(&req("problem_solving", 100, vec![sec("context", "c", 1)]), &tok()).unwrap_err();
    assert!(err.message().contains("requires a 'task' section"), "{err}");
    let err = assemble(&req("nope", 100, vec![]), &tok()).unwrap_err();
    assert!(err.message().contains("unknown template 'nope'") && err.message().contains("analysis"), "{err}");
    let r = assemble(
        &req(
            "problem_solving",
            500,
            vec![sec("output_format", "JSON", 1), sec("task", "Fix the bug", 9), sec("role", "You are an engineer", 5)],
        ),
        &tok(),
    )
    .unwrap();
    let names: Vec<&str> = r.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["role", "task", "output_format"], "template order, not priority order");
    assert!(r.text.starts_with("## role\nYou are an engineer\n\n## task\nFix the bug"), "{}", r.text);
    let host = Request {
        templates: vec![Template {
            name: "triage".into(),
            required: vec!["ticket".into()],
            order: vec![],
            optional: vec![],
        }],
        ..req("triage", 100, vec![])
    };
    assert!(assemble(&host, &tok()).unwrap_err().message().contains("'ticket'"));
}

#[test]
fn lowest_priority_section_is_cut_and_the_rest_left_out() {
    let big = "word ".repeat(300);
    let r = assemble(&req("general", 120, vec![sec("a", "alpha", 9), sec("b", &big, 5), sec("c", "gamma", 1)]), &tok())
        .unwrap();
    let status: Vec<(&str, &str)> = r.sections.iter().map(|s| (s.name.as_str(), s.status)).collect();
    assert_eq!(status, [("a", "included"), ("b", "truncated"), ("c", "omitted")]);
    assert!(r.tokens <= 120);
    let mut required = sec("c", &big, 1);
    required.required = true;
    let err =
        assemble(&req("general", 120, vec![sec("a", "alpha", 9), sec("b", &big, 5), required]), &tok()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DoesNotFit);
    assert!(err.message().contains("required section 'c'"), "{err}");
}

#[test]
fn depth_chooses_history_and_events() {
    let history: Vec<String> = (0..10).map(|i| format!("turn {i}")).collect();
    let events: Vec<String> = (0..30).map(|i| format!("event {i}")).collect();
    for (depth, first_turn, first_event) in [
        (Depth::Minimal, "turn 8", "event 25"),
        (Depth::Standard, "turn 4", "event 10"),
        (Depth::Comprehensive, "turn 0", "event 0"),
    ] {
        let r = Request {
            depth: DepthChoice::Named(depth),
            history: history.iter().map(|h| json!(h)).collect(),
            events: events.iter().map(|e| json!(e)).collect(),
            ..req("conversation", 10_000, vec![])
        };
        let out = assemble(&r, &tok()).unwrap();
        assert!(out.text.contains(&format!("## history\n{first_turn}\n")), "{depth:?}: {}", out.text);
        assert!(out.text.contains(&format!("## events\n{first_event}\n")), "{depth:?}");
    }
    let err = assemble(&req("conversation", 100, vec![]), &tok()).unwrap_err();
    assert!(err.message().contains("'history'"), "{err}");
}

fn parse(v: Value) -> Request {
    crate::json::parse("assembly request", &v.to_string()).unwrap()
}

/// The ContextEngine design's state (seed document 003), as a host's
/// `get_llm_context` would return it.
fn engine_request(depth: &str) -> Value {
    json!({
        "preset": "context_engine", "budget": 2000, "depth": depth,
        "context": {
            "query": "Why does the nightly export fail?",
            "problem_statement": "The nightly export job fails with a timeout.",
            "objective": "solve",
            "constraints": ["no schema changes", "finish before 06:00 UTC"],
            "assumptions": [],
            "user_context": {"name": "Ada", "role": "SRE", "prefs": {"verbosity": "terse"}},
            "execution_state": {"workflow_id": "wf-7", "recursion_depth": 1, "constraints": null}
        },
        "history": (1..=12).map(|i| json!(format!("turn {i}"))).collect::<Vec<_>>(),
        "events": (1..=25).map(|i| json!({"event": format!("e{i}"), "ok": i % 2 == 0})).collect::<Vec<_>>()
    })
}

#[test]
fn the_context_engine_preset_takes_the_documents_sections_depths_and_names() {
    let t = tok();
    // Explicit problem_solving: the document's required keys, not 'task'.
    let mut v = engine_request("standard");
    v["template"] = json!("problem_solving");
    let r = assemble(&parse(v), &t).unwrap();
    assert_eq!(r.template, "problem_solving");
    let names: Vec<&str> = r.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        &names[..4],
        ["problem_statement", "objective", "constraints", "recent_events"],
        "the template's order first ('assumptions' is empty, so absent)"
    );
    assert!(r.text.contains("## constraints\n- no schema changes\n- finish before 06:00 UTC\n"), "{}", r.text);
    assert!(r.text.contains("## user_context\nname: Ada\nrole: SRE\nprefs:\n  verbosity: terse\n"), "{}", r.text);
    // standard: 3 turns and 5 events, under the document's section names.
    assert!(r.text.contains("## conversation_history\nturn 10\nturn 11\nturn 12"), "{}", r.text);
    assert!(!r.text.contains("turn 9\n"));
    assert!(r.text.contains("## recent_events\n- event: e21\n  ok: false\n- event: e22"), "{}", r.text);
    assert_eq!(r.text.matches("- event: ").count(), 5);
    // comprehensive: 10 and 20; minimal: none at all.
    let r = assemble(&parse(engine_request("comprehensive")), &t).unwrap();
    assert!(r.text.contains("## conversation_history\nturn 3\n") && !r.text.contains("turn 2\n"), "{}", r.text);
    assert_eq!(r.text.matches("- event: ").count(), 20);
    let r = assemble(&parse(engine_request("minimal")), &t).unwrap();
    assert!(!r.text.contains("conversation_history") && !r.text.contains("recent_events"), "{}", r.text);
}

#[test]
fn auto_picks_the_first_template_whose_required_sections_are_present() {
    let t = tok();
    // Absent template with a non-default preset means auto.
    let r = assemble(&parse(engine_request("standard")), &t).unwrap();
    assert_eq!(r.template, "problem_solving");
    let mut v = engine_request("standard");
    v["context"].as_object_mut().unwrap().remove("objective");
    assert_eq!(assemble(&parse(v.clone()), &t).unwrap().template, "conversation", "query + history");
    v["depth"] = json!("minimal");
    assert_eq!(assemble(&parse(v.clone()), &t).unwrap().template, "analysis", "no history at depth minimal");
    v["context"] = json!({"objective": "x"});
    let err = assemble(&parse(v.clone()), &t).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(
        err.message().contains("general needs query") && err.message().contains("sections given: objective"),
        "{err}"
    );
    // Host templates are tried first.
    v["template"] = json!("auto");
    v["templates"] = json!([{"name": "goal_only", "required": ["objective"]}]);
    assert_eq!(assemble(&parse(v.clone()), &t).unwrap().template, "goal_only");
    v["templates"] = json!([{"name": "auto"}]);
    assert!(assemble(&parse(v), &t).unwrap_err().message().contains("reserved"));
    // The built-in preset's default stays 'general'.
    let r = assemble(&parse(json!({"budget": 50, "context": {"task": "fix it"}})), &t).unwrap();
    assert_eq!(r.template, "general");
    let r = assemble(&parse(json!({"budget": 50, "template": "auto", "context": {"task": "fix it"}})), &t).unwrap();
    assert_eq!(r.template, "problem_solving");
}

#[test]
fn depth_limits_and_section_names_are_options() {
    let t = tok();
    let base = json!({"budget": 1000, "template": "general",
        "history": ["h1", "h2", "h3", "h4"], "events": ["e1", "e2", "e3"]});
    let with = |extra: Value| {
        let mut v = base.clone();
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        assemble(&parse(v), &t).unwrap().text
    };
    assert_eq!(with(json!({"depth": {"turns": 1, "events": 2}})), "## history\nh4\n\n## events\ne2\ne3");
    assert_eq!(with(json!({"depth": {"turns": 0}})), "## events\ne1\ne2\ne3", "events absent: all");
    assert_eq!(
        with(json!({"depth": "minimal", "depth_limits": {"minimal": {"turns": 3, "events": 1}}})),
        "## history\nh2\nh3\nh4\n\n## events\ne3"
    );
    assert_eq!(
        with(json!({"depth": {"turns": 1, "events": 1}, "history_section": "chat", "events_section": "timeline"})),
        "## chat\nh4\n\n## timeline\ne3"
    );
    let bad = |extra: Value| {
        let mut v = base.clone();
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        crate::json::parse::<Request>("assembly request", &v.to_string()).and_then(|r| assemble(&r, &t)).unwrap_err()
    };
    assert_eq!(bad(json!({"depth": "deep"})).kind(), ErrorKind::InvalidJson);
    assert_eq!(bad(json!({"depth": {"turns": -1}})).kind(), ErrorKind::InvalidJson);
    assert_eq!(bad(json!({"depth": {"rounds": 1}})).kind(), ErrorKind::InvalidJson);
    assert_eq!(bad(json!({"depth": 3})).kind(), ErrorKind::InvalidJson);
    assert_eq!(bad(json!({"preset": "nope"})).kind(), ErrorKind::InvalidJson);
    assert!(bad(json!({"history_section": "x", "events_section": "x"})).message().contains("both 'x'"));
    assert!(bad(json!({"sections": [{"name": "a", "text": "x"}], "context": {"a": 1}}))
        .message()
        .contains("given twice"));
}

#[test]
fn json_section_content_is_rendered_and_counted() {
    let t = tok();
    let v = json!({"budget": 200, "sections": [
        {"name": "facts", "text": {"workflow_id": "wf-7", "steps": ["a", "b"]}, "priority": 1},
        {"name": "n", "text": 42},
        {"name": "none", "text": null}]});
    let r = assemble(&parse(v), &t).unwrap();
    assert_eq!(r.text, "## facts\nworkflow_id: wf-7\nsteps:\n  - a\n  - b\n\n## n\n42\n\n## none");
    assert_eq!(r.tokens, t.count(&r.text).unwrap());
    // A required section whose value renders empty is missing.
    let v = json!({"budget": 200, "template": "problem_solving", "context": {"task": []}});
    assert!(assemble(&parse(v), &t).unwrap_err().message().contains("requires a 'task'"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn budget_is_respected_and_priority_order_holds(
        parts in proptest::collection::vec(("[a-z]{1,8}", "[a-z .\n]{0,400}", -5i32..5), 1..8),
        budget in 0usize..400,
    ) {
        let mut seen = std::collections::HashSet::new();
        let sections: Vec<Section> = parts.into_iter().filter(|(n, _, _)| seen.insert(n.clone()))
            .map(|(n, t, p)| sec(&n, &t, p)).collect();
        let r = assemble(&req("general", budget, sections.clone()), &tok()).unwrap();
        prop_assert!(r.tokens <= budget);
        prop_assert_eq!(r.tokens, tok().count(&r.text).unwrap());
        // No included section has lower priority than one left out or cut,
        // except the single cut section itself.
        let status = |name: &str| r.sections.iter().find(|s| s.name == name).unwrap().status;
        for a in &sections {
            for b in &sections {
                if a.priority > b.priority && status(&b.name) != "omitted" {
                    prop_assert_eq!(status(&a.name), "included", "{} ({}) vs {} ({})", a.name, a.priority, b.name, b.priority);
                }
            }
        }
        prop_assert!(r.sections.iter().filter(|s| s.status == "truncated").count() <= 1);
    }
}

#[test]
fn optional_keys_and_unnamed_sections_are_reported() {
    let tok = Tokenizer::new(Encoding::O200kBase).unwrap();
    let req = |template: Value| -> Request {
        serde_json::from_value(serde_json::json!({
            "budget": 200,
            "template": "triage",
            "templates": [template],
            "context": {"ticket": "Login fails", "severity": "high", "sevreity_note": "typo"},
        }))
        .unwrap()
    };
    // required + optional name two sections; the third is rendered and reported.
    let a =
        assemble(&req(serde_json::json!({"name": "triage", "required": ["ticket"], "optional": ["severity"]})), &tok)
            .unwrap();
    assert_eq!(a.unnamed_sections, ["sevreity_note"]);
    assert!(a.text.contains("sevreity_note"));
    // "*" takes any; a template naming nothing takes any.
    let any = assemble(&req(serde_json::json!({"name": "triage", "required": ["ticket"], "optional": ["*"]})), &tok);
    assert!(any.unwrap().unnamed_sections.is_empty());
    let bare = assemble(&req(serde_json::json!({"name": "triage"})), &tok).unwrap();
    assert!(bare.unnamed_sections.is_empty());
    // Document 003's table: problem_solving does not name conversation history.
    let r: Request = serde_json::from_value(serde_json::json!({
        "preset": "context_engine", "template": "problem_solving", "budget": 300, "depth": "standard",
        "context": {"problem_statement": "p", "objective": "o", "assumptions": "a", "world_model": "w"},
        "history": ["hi"],
    }))
    .unwrap();
    assert_eq!(assemble(&r, &tok).unwrap().unnamed_sections, ["world_model", "conversation_history"]);
}

/// Issue 34 (seed 003): AgentMind's `filters` keep the events of the named
/// kinds before the depth limit, so a depth of 5 is the newest 5 matching
/// events, not the matches among the newest 5.
#[test]
fn event_filters_apply_before_the_depth_limit() {
    let events: Vec<Value> = (1..=30)
        .map(|i| {
            let kind = if i % 3 == 0 { "decision" } else { "tool_call" };
            json!({"event": format!("e{i}"), "kind": kind})
        })
        .collect();
    let base = json!({"preset": "context_engine", "template": "analysis", "budget": 2000, "depth": "standard",
                      "context": {"query": "q"}, "events": events});
    let run = |extra: Value| {
        let mut r = base.clone();
        r.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let req: Request = crate::json::parse("request", &r.to_string()).unwrap();
        assemble(&req, &tok())
    };
    let listed = |text: &str| -> Vec<String> {
        text.lines().filter_map(|l| l.strip_prefix("- event: ")).map(str::to_owned).collect()
    };
    // No filter: the newest 5 events of any kind.
    assert_eq!(listed(&run(json!({})).unwrap().text), ["e26", "e27", "e28", "e29", "e30"]);
    // Decisions only: the newest 5 decisions (filters before the limit).
    let r = run(json!({"event_filters": ["decision"]})).unwrap();
    assert_eq!(listed(&r.text), ["e18", "e21", "e24", "e27", "e30"]);
    // Case-insensitive; string events by the text before ':'; `type` too.
    let mixed = json!({"events": ["Error: disk full", "note: fine", {"type": "error", "event": "x"}, 7],
                       "event_filters": ["ERROR"]});
    let t = run(mixed).unwrap().text;
    assert!(t.contains("Error: disk full") && t.contains("event: x") && !t.contains("note: fine"), "{t}");
    // Nothing matches: no events section.
    let r = run(json!({"event_filters": ["solution"]})).unwrap();
    assert!(!r.sections.iter().any(|s| s.name == "recent_events"), "{:?}", r.sections);
    // Bad input: an empty filter, too many filters, not strings.
    let e = run(json!({"event_filters": [""]})).unwrap_err();
    assert!(e.kind() == crate::ErrorKind::InvalidArgument && e.message().contains("event_filters[0]"), "{e}");
    let many: Vec<String> = (0..=MAX_EVENT_FILTERS).map(|i| format!("k{i}")).collect();
    let e = run(json!({ "event_filters": many })).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::LimitExceeded, "{e}");
    let r: crate::Result<Request> =
        crate::json::parse("request", &json!({"budget": 10, "event_filters": [1]}).to_string());
    assert_eq!(r.unwrap_err().kind(), crate::ErrorKind::InvalidJson);
}

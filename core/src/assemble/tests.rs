use proptest::prelude::*;

use super::*;
use crate::Encoding;

fn tok() -> Tokenizer {
    Tokenizer::new(Encoding::O200kBase).unwrap()
}

fn sec(name: &str, text: &str, priority: i32) -> Section {
    Section { name: name.into(), text: text.into(), priority, min_tokens: 0, max_tokens: None, required: false }
}

fn req(template: &str, budget: usize, sections: Vec<Section>) -> Request {
    Request {
        template: template.into(),
        templates: vec![],
        budget,
        depth: Depth::Standard,
        sections,
        history: vec![],
        events: vec![],
    }
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
        templates: vec![Template { name: "triage".into(), required: vec!["ticket".into()], order: vec![] }],
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
        let r =
            Request { depth, history: history.clone(), events: events.clone(), ..req("conversation", 10_000, vec![]) };
        let out = assemble(&r, &tok()).unwrap();
        assert!(out.text.contains(&format!("## history\n{first_turn}\n")), "{depth:?}: {}", out.text);
        assert!(out.text.contains(&format!("## events\n{first_event}\n")), "{depth:?}");
    }
    let err = assemble(&req("conversation", 100, vec![]), &tok()).unwrap_err();
    assert!(err.message().contains("'history'"), "{err}");
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

use proptest::prelude::{prop_assert, prop_assert_eq, proptest};

use super::*;

fn stack(agents: &[&str], max: usize) -> CallStack {
    let mut s = CallStack::new(max).unwrap();
    for a in agents {
        s = s.enter(a).unwrap();
    }
    s
}

#[test]
fn cycle_error_carries_the_whole_chain() {
    let s = stack(&["planner", "coder", "reviewer"], 5);
    let e = s.enter("planner").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CycleDetected);
    assert!(e.message().contains("planner -> coder -> reviewer -> planner"), "{e}");
    // The stack that refused is unchanged.
    assert_eq!(s.chain(), "planner -> coder -> reviewer");
}

#[test]
fn a_self_handoff_is_a_cycle() {
    let s = stack(&["planner", "coder"], 5);
    let e = s.enter("coder").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CycleDetected);
    assert!(e.message().contains("planner -> coder -> coder"), "{e}");
}

#[test]
fn default_depth_is_five_and_the_error_names_the_chain() {
    let mut s = CallStack::default();
    for a in ["a", "b", "c", "d", "e"] {
        s = s.enter(a).unwrap();
    }
    assert_eq!(s.depth(), DEFAULT_MAX_DEPTH);
    let e = s.enter("f").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DepthExceeded);
    assert!(e.message().contains("a -> b -> c -> d -> e -> f"), "{e}");
    assert!(e.message().contains("maximum of 5"), "{e}");
}

#[test]
fn branches_are_independent() {
    let root = stack(&["planner"], 5);
    let left = root.enter("coder").unwrap();
    let right = root.enter("tester").unwrap();
    // Each branch may call what the other holds.
    let left2 = left.enter("tester").unwrap();
    let right2 = right.enter("coder").unwrap();
    assert_eq!(left2.chain(), "planner -> coder -> tester");
    assert_eq!(right2.chain(), "planner -> tester -> coder");
    assert_eq!(root.chain(), "planner");
    assert!(!root.contains("coder"));
    assert!(left.contains("coder") && !left.contains("tester"));
    assert_eq!(left2.parent().chain(), "planner -> coder");
    assert_eq!(root.parent().depth(), 0);
    assert_eq!(root.parent().parent().chain(), "(empty)");
}

#[test]
fn parallel_threads_share_a_stack_safely() {
    let root = stack(&["planner"], 10);
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let root = root.clone();
            std::thread::spawn(move || {
                let mut s = root;
                for j in 0..5 {
                    s = s.enter(&format!("worker-{i}-{j}")).unwrap();
                }
                assert_eq!(s.enter("planner").unwrap_err().kind(), ErrorKind::CycleDetected);
                s.depth()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 6);
    }
    assert_eq!(root.depth(), 1);
}

#[test]
fn depth_100_000_enters_checks_and_drops_without_recursion() {
    let n = 100_000;
    let mut s = CallStack::new(n).unwrap();
    for i in 0..n {
        s = s.enter(&format!("agent-{i}")).unwrap();
    }
    assert_eq!(s.depth(), n);
    assert!(s.contains("agent-0") && s.contains("agent-99999") && !s.contains("agent-100000"));
    assert_eq!(s.enter("agent-50000").unwrap_err().kind(), ErrorKind::CycleDetected);
    assert_eq!(s.enter("one-more").unwrap_err().kind(), ErrorKind::DepthExceeded);
    assert_eq!(s.agents().len(), n);
    // Debug formatting walks the chain with a loop too.
    assert!(format!("{s:?}").ends_with("\"agent-99999\"], max_depth: 100000 }"));
    // Dropping the only reference frees the whole chain on a small stack:
    // run it on a thread with 256 KiB so a recursive drop would overflow.
    let t = std::thread::Builder::new().stack_size(256 * 1024).spawn(move || drop(s)).unwrap();
    t.join().unwrap();
}

#[test]
fn a_shared_tail_survives_dropping_one_branch() {
    let base = stack(&["a", "b", "c"], 10);
    let branch = base.enter("d").unwrap();
    drop(base);
    assert_eq!(branch.chain(), "a -> b -> c -> d");
    let parent = branch.parent();
    drop(branch);
    assert_eq!(parent.chain(), "a -> b -> c");
}

#[test]
fn names_and_limits_are_checked() {
    let s = CallStack::default();
    assert_eq!(s.enter("").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(s.enter("a\nb").unwrap_err().kind(), ErrorKind::InvalidArgument);
    let at = "x".repeat(MAX_AGENT_NAME_BYTES);
    assert!(s.enter(&at).is_ok());
    let past = "x".repeat(MAX_AGENT_NAME_BYTES + 1);
    assert_eq!(s.enter(&past).unwrap_err().kind(), ErrorKind::LimitExceeded);
    assert_eq!(CallStack::new(0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert!(CallStack::new(MAX_CALLSTACK_DEPTH).is_ok());
    assert_eq!(CallStack::new(MAX_CALLSTACK_DEPTH + 1).unwrap_err().kind(), ErrorKind::LimitExceeded);
}

#[test]
fn json_round_trip_rechecks_the_chain() {
    let s = stack(&["planner", "coder"], 4);
    let j = crate::json::to_string(&s.to_json_value()).unwrap();
    assert_eq!(j, r#"{"agents":["planner","coder"],"depth":2,"max_depth":4}"#);
    let back = CallStack::from_json(&j).unwrap();
    assert_eq!(back.chain(), s.chain());
    assert_eq!(back.max_depth(), 4);
    let e = CallStack::from_json(r#"{"agents":["a","b","a"]}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CycleDetected);
    let e = CallStack::from_json(r#"{"agents":["a","b","c"],"max_depth":2}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DepthExceeded);
    assert_eq!(CallStack::from_json(r#"{"agent":[]}"#).unwrap_err().kind(), ErrorKind::InvalidJson);
}

proptest! {
    /// `contains` and `enter` agree with a plain list model, whatever the
    /// names (few distinct letters make repeats, and so cycles, common).
    #[test]
    fn agrees_with_a_list_model(names in proptest::collection::vec("[a-e]{1,2}", 0..40), max in 1usize..30) {
        let mut s = CallStack::new(max).unwrap();
        let mut model: Vec<String> = Vec::new();
        for n in &names {
            match s.enter(n) {
                Ok(next) => {
                    prop_assert!(!model.contains(n) && model.len() < max);
                    model.push(n.clone());
                    s = next;
                }
                Err(e) if e.kind() == ErrorKind::CycleDetected => prop_assert!(model.contains(n)),
                Err(e) => {
                    prop_assert_eq!(e.kind(), ErrorKind::DepthExceeded);
                    prop_assert!(!model.contains(n) && model.len() == max);
                }
            }
            prop_assert_eq!(s.agents(), model.iter().map(String::as_str).collect::<Vec<_>>());
        }
        for n in ["a", "b", "c", "d", "e", "aa", "zz"] {
            prop_assert_eq!(s.contains(n), model.iter().any(|m| m == n));
        }
    }
}

//! Target `turn_session` (issue 52): a fit session against the stateless
//! turn. Input: four knob bytes (where the history is first cut, the keep
//! of an edit step as a share of the history, the budget, the strategy),
//! then the conversation JSON. The session starts on the first messages,
//! takes the rest in an appending step, then an edit step (keep a share,
//! re-append the rest); after each step its turn must equal `turn::run` on
//! the same history (request and report), or fail with the same error.
//! Never panics and never fails `Internal`.

use serde_json::{json, Value};
use turnfit::turn::FitSession;
use turnfit::window::FitOptions;
use turnfit::{ErrorKind, ModelRegistry};

use super::common::{text, Knobs};

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let cut = k.byte() as usize;
    let share = k.byte() as usize;
    let budget = 300 + 40 * k.byte() as usize;
    let strategy = ["recency", "summarize", "hybrid", "relevance"][k.byte() as usize % 4];
    let conversation = text(k.rest());
    let Some(messages) = serde_json::from_str::<Value>(&conversation).ok().and_then(|v| v.as_array().cloned()) else {
        return;
    };
    let options = json!({"model": "gpt-4o", "max_tokens": budget * 4, "reserve_output": budget,
                         "policy": {"strategy": strategy}});
    let o: FitOptions = turnfit::frontend::parse_options("options", Some(&options.to_string())).unwrap();
    let reg = ModelRegistry::builtin();
    let cut = cut.min(messages.len());
    let mut session = match FitSession::new(&Value::Array(messages[..cut].to_vec()).to_string(), None) {
        Ok(s) => s,
        Err(e) => {
            assert_ne!(e.kind(), ErrorKind::Internal, "{e}");
            return;
        }
    };
    let keep = messages.len() * share / 256;
    for held in [cut, keep] {
        let held = held.min(session.len());
        if let Err(e) = session.update(held, &Value::Array(messages[held..].to_vec()).to_string()) {
            assert_ne!(e.kind(), ErrorKind::Internal, "{e}");
            return;
        }
        let whole = Value::Array(messages.clone()).to_string();
        let a = turnfit::turn::run(&reg, &whole, &o, None)
            .map(|(c, r)| (c.to_json().unwrap(), turnfit::frontend::to_json(&r).unwrap()));
        let b = session
            .start(&reg, &o)
            .and_then(|t| t.finish())
            .map(|(c, r)| (c.to_json().unwrap(), turnfit::frontend::to_json(&r).unwrap()));
        match (a, b) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "a session's turn differs from the stateless one ({options})"),
            (Err(a), Err(b)) => {
                assert_ne!(a.kind(), ErrorKind::Internal, "{a}");
                assert_eq!((a.kind(), a.to_string()), (b.kind(), b.to_string()));
            }
            (a, b) => panic!("stateless {:?} but session {:?}", a.err(), b.err()),
        }
    }
}

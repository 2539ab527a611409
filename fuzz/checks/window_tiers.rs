//! Target `window_tiers` (issue 53): a multi-scale window fed a conversation
//! one `add` at a time. Input: two bytes of context window (at least 256),
//! three bytes of tier shares, one flag byte (bit 0: a host summarizer that
//! answers with text of the byte-given length), then the conversation JSON.
//! Never panics and never fails with `Internal`; after every accepted add
//! the window is within its limit and each message is either still there or
//! counted as folded; a refused add leaves the window as it was; the
//! rendered conversation, loaded into a fresh window, reads back the same
//! summaries (the context message's parser).

use turnfit::chat::Conversation;
use turnfit::window::{Budget, MultiScale, Policy, Window, TIERS_LABEL};
use turnfit::{ErrorKind, ModelRegistry};

use super::common::{text, Knobs};

fn window(cw: usize, ms: MultiScale) -> Option<Window> {
    let budget =
        Budget { context_window: cw, reserved_output: Some(cw / 8), multi_scale: Some(ms), ..Budget::default() };
    Window::for_model(&ModelRegistry::builtin(), "gpt-4o", budget).ok()
}

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let cw = (k.u16() as usize).max(256);
    let shares = [k.byte().max(1) as usize, k.byte().max(1) as usize, k.byte().max(1) as usize];
    let flags = k.byte();
    let Ok(c) = Conversation::parse(&text(k.rest()), None) else { return };
    let room = cw - cw / 8;
    let sum: usize = shares.iter().sum();
    let part = |s: usize| (room * s / sum) as i64;
    let ms = MultiScale {
        immediate_tokens: part(shares[0]),
        session_tokens: part(shares[1]),
        historical_tokens: part(shares[2]),
    };
    let Some(mut w) = window(cw, ms) else { return };
    let mut added = 0;
    for m in c.messages {
        let before = w.message_tokens().to_vec();
        let reply = "summary ".repeat(usize::from(flags >> 1));
        let r = w.add_with(m, &Policy::default(), &mut |_| (flags & 1 == 1).then(|| reply.clone()));
        match r {
            Ok(_) => added += 1,
            Err(e) => {
                assert_ne!(e.kind(), ErrorKind::Internal, "{e}");
                assert_eq!(w.message_tokens(), &before[..], "a refused add changed the window");
                if e.kind() != ErrorKind::DoesNotFit {
                    return; // another format, a message over the limits
                }
                continue;
            }
        }
        let p = w.preflight(None).expect("preflight");
        assert!(p.prompt_tokens + p.reserved_output <= p.limit, "{p:?}");
        let t = p.tiers.expect("tiers");
        let ctx = w.conversation().messages.iter().filter(|m| m.text().starts_with(TIERS_LABEL)).count();
        assert!(ctx <= 1 + added, "context messages");
        assert!(t.messages_folded + w.message_tokens().len() >= added, "{t:?}");
    }
    let Ok(json) = w.conversation().to_json() else { return };
    let t = w.preflight(None).expect("preflight").tiers.expect("tiers");
    let Some(mut v) = window(cw, ms) else { return };
    if v.load(Conversation::parse(&json, None).expect("the window's own output parses")).is_ok() {
        let u = v.preflight(None).expect("preflight").tiers.expect("tiers");
        assert_eq!((u.session_tokens, u.historical_tokens), (t.session_tokens, t.historical_tokens));
    }
}

//! Special tokens allowed and refused by set: tiktoken's
//! `encode(text, allowed_special=..., disallowed_special=...)`.
//!
//! [`SpecialTokens`](super::SpecialTokens) is the all-or-none switch a
//! tokenizer carries. A [`SpecialPolicy`] is the per-call form tiktoken users
//! write: which special tokens become their ids, and which, when their text
//! appears, make the call fail rather than encode a control token by accident
//! (tiktoken's default: every special token is refused).

use std::collections::BTreeSet;

use super::engine::Allow;
use super::Tokenizer;
use crate::limits::{self, MAX_NAME_BYTES, MAX_SPECIAL_SET, MAX_TEXT_BYTES};
use crate::{Error, ErrorKind, Result};

/// A set of special-token texts: every special token of the encoding, or
/// the ones named (tiktoken's `"all"` or a set of strings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecialSet {
    /// Every special token of the encoding.
    All,
    /// The strings named; empty means none.
    Only(BTreeSet<String>),
}

impl SpecialSet {
    /// The empty set.
    pub fn none() -> SpecialSet {
        SpecialSet::Only(BTreeSet::new())
    }

    /// The set of these strings.
    pub fn of<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> SpecialSet {
        SpecialSet::Only(names.into_iter().map(Into::into).collect())
    }
}

impl<'de> serde::Deserialize<'de> for SpecialSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            List(Vec<String>),
        }
        match Raw::deserialize(d).map_err(|_| serde::de::Error::custom("expected \"all\" or an array of strings"))? {
            Raw::Word(w) if w == "all" => Ok(SpecialSet::All),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "expected \"all\" or an array of strings, not the string '{}'",
                crate::text::clip(&w)
            ))),
            Raw::List(v) => Ok(SpecialSet::Only(v.into_iter().collect())),
        }
    }
}

/// One special token as listed by `turnfit_tokenizer_special_tokens`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpecialToken {
    /// Its text, e.g. `<|endoftext|>`.
    pub token: String,
    /// Its id.
    pub id: u32,
}

/// `"all"` or an array of strings, as the Deserialize impl above reads it.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for SpecialSet {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SpecialSet".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "\"all\", or an array of special-token strings.",
            "anyOf": [{"const": "all"}, {"type": "array", "items": {"type": "string"}}]
        })
    }
}

/// Which special tokens [`Tokenizer::encode_with`] recognizes and which it
/// refuses, with tiktoken's rules:
///
/// - `allowed`: special tokens whose text becomes their single id. Strings
///   in it that are not special tokens of the encoding have no effect.
/// - `disallowed`: strings whose presence in the text is an error
///   (`InvalidArgument`, naming the string and its byte offset). `All`
///   means every special token not in `allowed`. Strings that are not
///   special tokens are searched for too, as literal text, as tiktoken does.
///
/// The default is tiktoken's: nothing allowed, everything disallowed, so
/// `encode_with(text, &SpecialPolicy::default())` fails on any special-token
/// text. `{allowed: none, disallowed: none}` is ordinary encoding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, default)]
pub struct SpecialPolicy {
    /// tiktoken's `allowed_special`.
    #[serde(rename = "allowed_special")]
    pub allowed: SpecialSet,
    /// tiktoken's `disallowed_special`.
    #[serde(rename = "disallowed_special")]
    pub disallowed: SpecialSet,
}

impl Default for SpecialPolicy {
    fn default() -> Self {
        SpecialPolicy { allowed: SpecialSet::none(), disallowed: SpecialSet::All }
    }
}

impl SpecialPolicy {
    /// Special-token text is ordinary text, never an error
    /// (`allowed_special=set(), disallowed_special=()`).
    pub fn ordinary() -> SpecialPolicy {
        SpecialPolicy { allowed: SpecialSet::none(), disallowed: SpecialSet::none() }
    }

    /// Every special token is recognized (`allowed_special="all"`).
    pub fn all() -> SpecialPolicy {
        SpecialPolicy { allowed: SpecialSet::All, disallowed: SpecialSet::none() }
    }

    /// Parses `{"allowed_special": "all" | [names], "disallowed_special":
    /// "all" | [names]}`; a missing field takes tiktoken's default (`[]` and
    /// `"all"`). Each set holds at most [`MAX_SPECIAL_SET`] names of at most
    /// [`MAX_NAME_BYTES`] bytes (`LimitExceeded`); anything else malformed is
    /// `InvalidJson`.
    pub fn from_json(text: &str) -> Result<SpecialPolicy> {
        let p: SpecialPolicy = crate::json::parse("special-token policy", text)?;
        p.check()?;
        Ok(p)
    }

    /// Checks the sizes [`Self::from_json`] documents.
    pub fn check(&self) -> Result<()> {
        for (what, set) in [("allowed_special", &self.allowed), ("disallowed_special", &self.disallowed)] {
            if let SpecialSet::Only(names) = set {
                limits::check_items(what, names.len(), MAX_SPECIAL_SET)?;
                if let Some(long) = names.iter().find(|n| n.len() > MAX_NAME_BYTES) {
                    limits::check(&format!("a name in {what}"), long.len(), MAX_NAME_BYTES)?;
                }
            }
        }
        Ok(())
    }
}

impl From<super::SpecialTokens> for SpecialPolicy {
    fn from(s: super::SpecialTokens) -> SpecialPolicy {
        match s {
            super::SpecialTokens::Ordinary => SpecialPolicy::ordinary(),
            super::SpecialTokens::Recognize => SpecialPolicy::all(),
        }
    }
}

impl Tokenizer {
    /// The token ids of `text` under `policy` (tiktoken's `encode` with
    /// `allowed_special` and `disallowed_special`; the tokenizer's own
    /// [`SpecialTokens`](super::SpecialTokens) setting is not used). Fails
    /// with `InvalidArgument` when the text contains a disallowed string,
    /// naming the leftmost one (at one offset, the longest) and its byte
    /// offset.
    pub fn encode_with(&self, text: &str, policy: &SpecialPolicy) -> Result<Vec<u32>> {
        limits::check("text", text.len(), MAX_TEXT_BYTES)?;
        let allow = self.check_special(text, policy)?;
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        self.engine.encode(text, allow, &mut out)?;
        Ok(out)
    }

    /// The number of tokens [`Self::encode_with`] would return, with the
    /// same check.
    pub fn count_with(&self, text: &str, policy: &SpecialPolicy) -> Result<usize> {
        limits::check("text", text.len(), MAX_TEXT_BYTES)?;
        let allow = self.check_special(text, policy)?;
        Ok(self.engine.count(text, allow, usize::MAX)?.0)
    }

    /// The encoding's special tokens as a JSON array of `{"token", "id"}`
    /// in the encoding's order (o200k_harmony: the named tokens, then the
    /// reserved ones; `<|endofprompt|>` and `<|reserved_200018|>` share an id).
    pub fn special_tokens_json(&self) -> Result<String> {
        let list: Vec<_> = self
            .encoding()
            .special_tokens()
            .iter()
            .map(|&(token, id)| SpecialToken { token: token.to_owned(), id })
            .collect();
        crate::json::to_string(&list)
    }

    /// Runs tiktoken's check for disallowed text and returns what the
    /// engine should recognize.
    fn check_special<'p>(&self, text: &str, policy: &'p SpecialPolicy) -> Result<Allow<'p>> {
        policy.check()?;
        let allow = match &policy.allowed {
            SpecialSet::All => Allow::All,
            SpecialSet::Only(s) if s.is_empty() => Allow::None,
            SpecialSet::Only(s) => Allow::Only(s),
        };
        // "all" is every special token the allowed set leaves out: the
        // engine's own scan for special tokens finds them.
        let refused = match (&policy.disallowed, &policy.allowed) {
            (SpecialSet::All, SpecialSet::All) => None,
            (SpecialSet::All, SpecialSet::Only(s)) if s.is_empty() => Some(Allow::All),
            (SpecialSet::All, SpecialSet::Only(s)) => Some(Allow::AllBut(s)),
            (SpecialSet::Only(_), _) => None,
        };
        let found = match (&policy.disallowed, refused) {
            (SpecialSet::Only(names), _) => leftmost(text, names)?,
            (_, Some(refused)) => self.engine.next_special(text, refused).map(|(at, len, _)| (at, len)),
            (_, None) => None,
        };
        if let Some((at, len)) = found {
            let token = &text[at..at + len];
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "text contains the disallowed special token '{}' at byte offset {at}; \
                     allow it to encode it as a special token, or remove it from the \
                     disallowed set to encode it as ordinary text",
                    crate::text::clip(token)
                ),
            ));
        }
        Ok(allow)
    }
}

/// The leftmost occurrence of any of `names` in `text` as (offset, length);
/// at one offset the longest name wins (tiktoken's rule: its compiled
/// pattern is an alternation tried longest first). One Aho-Corasick
/// automaton over the whole set, so the scan is linear in the text whatever
/// the set's size: issue 33, cause G, measured a search per name (4,096
/// names of 256 bytes over 1 MiB took ~7 s). Building the automaton is
/// linear in the set's bytes (at most 4,096 x 256, 1 MiB). An empty name
/// matches at offset 0, as it did when each name was searched for.
fn leftmost(text: &str, names: &BTreeSet<String>) -> Result<Option<(usize, usize)>> {
    // The empty name is found at offset 0, unless a longer name starts there.
    let empty = names.contains("");
    let names: Vec<&str> = names.iter().map(String::as_str).filter(|n| !n.is_empty()).collect();
    if names.is_empty() {
        return Ok(empty.then_some((0, 0)));
    }
    let ac = aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
        .build(&names)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("the disallowed set could not be compiled: {e}")))?;
    let found = ac.find(text).map(|m| (m.start(), m.len()));
    Ok(match found {
        Some((0, len)) => Some((0, len)),
        _ if empty => Some((0, 0)),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Encoding;

    fn cl100k() -> Tokenizer {
        Tokenizer::new(Encoding::Cl100kBase).unwrap()
    }

    fn policy(allowed: SpecialSet, disallowed: SpecialSet) -> SpecialPolicy {
        SpecialPolicy { allowed, disallowed }
    }

    /// tiktoken's tests/test_encoding.py::test_special_token.
    #[test]
    fn tiktoken_special_token_test() {
        let t = cl100k();
        let (eot, fip, fim) = (100257, 100258, 100259);
        let text = "<|endoftext|> hello <|fim_prefix|>";
        assert!(!t.encode_with(text, &SpecialPolicy::ordinary()).unwrap().contains(&eot));
        for disallowed in [SpecialSet::All, SpecialSet::of(["<|endoftext|>"]), SpecialSet::of(["<|fim_prefix|>"])] {
            let e = t.encode_with(text, &policy(SpecialSet::none(), disallowed)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        }
        let text = "<|endoftext|> hello <|fim_prefix|> there <|fim_middle|>";
        let has = |p: &SpecialPolicy| {
            let ids = t.encode_with(text, p).unwrap();
            [eot, fip, fim].map(|x| ids.contains(&x))
        };
        assert_eq!(has(&SpecialPolicy::ordinary()), [false; 3]);
        assert_eq!(has(&policy(SpecialSet::All, SpecialSet::none())), [true; 3]);
        assert_eq!(has(&policy(SpecialSet::All, SpecialSet::All)), [true; 3]);
        let only = |s: &str| policy(SpecialSet::of([s]), SpecialSet::none());
        assert_eq!(has(&only("<|fim_prefix|>")), [false, true, false]);
        assert_eq!(has(&only("<|endoftext|>")), [true, false, false]);
        assert_eq!(has(&only("<|fim_middle|>")), [false, false, true]);
    }

    #[test]
    fn the_error_names_the_leftmost_disallowed_text() {
        let t = cl100k();
        let text = "a <|fim_prefix|> b <|endoftext|>";
        let e = t.encode_with(text, &SpecialPolicy::default()).unwrap_err();
        assert!(e.message().contains("'<|fim_prefix|>' at byte offset 2"), "{e}");
        // Allowed tokens are not refused by "all"; the next one is.
        let p = policy(SpecialSet::of(["<|fim_prefix|>"]), SpecialSet::All);
        let e = t.encode_with(text, &p).unwrap_err();
        assert!(e.message().contains("'<|endoftext|>' at byte offset 19"), "{e}");
        // Explicit sets are searched as text, special or not; at one offset the longest wins.
        let p = policy(SpecialSet::none(), SpecialSet::of(["b", "b <", "zzz"]));
        let e = t.encode_with(text, &p).unwrap_err();
        assert!(e.message().contains("'b <' at byte offset 17"), "{e}");
        assert_eq!(t.count_with(text, &p).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    /// Issue 33, cause G: the scan answers as a search per name did, over
    /// overlapping names, names that are prefixes of others, multi-byte
    /// text and the empty name (random sets, checked against that search).
    #[test]
    fn one_automaton_finds_what_a_search_per_name_found() {
        fn per_name(text: &str, names: &BTreeSet<String>) -> Option<(usize, usize)> {
            let mut best: Option<(usize, usize)> = None;
            for name in names {
                if let Some(at) = text.find(name.as_str()) {
                    if best.is_none_or(|(b, l)| at < b || (at == b && name.len() > l)) {
                        best = Some((at, name.len()));
                    }
                }
            }
            best
        }
        let alphabet = ["a", "b", "<|", "|>", "é", "ab", "ba"];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..2000 {
            let word = |len: usize, next: &mut dyn FnMut(usize) -> usize| {
                (0..len).map(|_| alphabet[next(alphabet.len())]).collect::<String>()
            };
            let text = word(next(12), &mut next);
            let names: BTreeSet<String> = (0..next(6)).map(|_| word(next(4), &mut next)).collect();
            assert_eq!(leftmost(&text, &names).unwrap(), per_name(&text, &names), "{text:?} {names:?}");
        }
        // The documented maximum set: 4,096 names of 256 bytes.
        let names: BTreeSet<String> =
            (0..MAX_SPECIAL_SET).map(|i| format!("<{i:04}>{}", "x".repeat(MAX_NAME_BYTES - 6))).collect();
        let mut text = "ab <> ".repeat(20_000);
        let name = names.iter().nth(4000).unwrap().clone();
        text.push_str(&name);
        assert_eq!(leftmost(&text, &names).unwrap(), Some((120_000, MAX_NAME_BYTES)));
    }

    #[test]
    fn allowed_names_that_are_not_special_do_nothing() {
        let t = cl100k();
        let p = policy(SpecialSet::of(["hello", "<|nope|>"]), SpecialSet::none());
        assert_eq!(t.encode_with("hello <|nope|>", &p).unwrap(), t.encode("hello <|nope|>").unwrap());
    }

    #[test]
    fn policies_agree_with_the_switch() {
        let t = cl100k();
        let text = "x<|endoftext|>y<|fim_suffix|>";
        let r = t.with_special_tokens(crate::SpecialTokens::Recognize);
        assert_eq!(t.encode_with(text, &SpecialPolicy::all()).unwrap(), r.encode(text).unwrap());
        assert_eq!(t.encode_with(text, &SpecialPolicy::ordinary()).unwrap(), t.encode(text).unwrap());
        assert_eq!(t.count_with(text, &SpecialPolicy::all()).unwrap(), r.count(text).unwrap());
        assert_eq!(SpecialPolicy::from(crate::SpecialTokens::Recognize), SpecialPolicy::all());
    }

    #[test]
    fn json_policies_and_bad_json() {
        assert_eq!(SpecialPolicy::from_json("{}").unwrap(), SpecialPolicy::default());
        let p = SpecialPolicy::from_json(r#"{"allowed_special": "all", "disallowed_special": []}"#).unwrap();
        assert_eq!(p, SpecialPolicy::all());
        let p = SpecialPolicy::from_json(r#"{"allowed_special": ["<|endoftext|>"]}"#).unwrap();
        assert_eq!(p.allowed, SpecialSet::of(["<|endoftext|>"]));
        assert_eq!(p.disallowed, SpecialSet::All);
        for bad in [
            r#"{"allowed_special": "some"}"#,
            r#"{"allowed_special": [1]}"#,
            r#"{"allowed": []}"#,
            r#"{"allowed_special": "all", "allowed_special": "all"}"#,
            "[",
            "",
        ] {
            assert_eq!(SpecialPolicy::from_json(bad).unwrap_err().kind(), ErrorKind::InvalidJson, "{bad}");
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let e = SpecialPolicy::from_json(&format!(r#"{{"allowed_special": {deep}}}"#)).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::LimitExceeded | ErrorKind::InvalidJson), "{e}");
        let many: Vec<String> = (0..=MAX_SPECIAL_SET).map(|i| format!("\"<|t{i}|>\"")).collect();
        let e = SpecialPolicy::from_json(&format!(r#"{{"disallowed_special": [{}]}}"#, many.join(","))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded);
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        let e = SpecialPolicy::from_json(&format!(r#"{{"allowed_special": ["{long}"]}}"#)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    }

    #[test]
    fn special_token_list_as_json() {
        let t = cl100k();
        let v: serde_json::Value = serde_json::from_str(&t.special_tokens_json().unwrap()).unwrap();
        assert_eq!(v[0], serde_json::json!({"token": "<|endoftext|>", "id": 100257}));
        assert_eq!(v.as_array().unwrap().len(), 5);
        let h = Tokenizer::new(Encoding::O200kHarmony).unwrap();
        let v: serde_json::Value = serde_json::from_str(&h.special_tokens_json().unwrap()).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 1091);
    }
}

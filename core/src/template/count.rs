//! The prompt's token ids as a server computes them: transformers'
//! `apply_chat_template(messages, tools=tools, add_generation_prompt=True,
//! tokenize=True, sanitize_control_tokens=True)`, which vLLM sends.
//!
//! Two rules make those ids differ from encoding the rendered text:
//! - **Control tokens typed by a user stay text.** A `<|im_end|>` inside a
//!   message, a tool schema or a template kwarg is wrapped in private-use
//!   markers before rendering; after rendering, a marked token is encoded
//!   with no added token recognized, and the text on either side of a
//!   marker is encoded on its own. The template's own control-token text
//!   (literals, `bos_token`) is not marked, so it becomes one special token.
//!   Marking the input, not re-scanning the output, is what tells the two
//!   apart even when a template splits or trims a message.
//! - **The BOS is counted once.** The rendered text is encoded with
//!   `add_special_tokens=False`: a BOS the template writes (Llama 3.x,
//!   Gemma 3) is the only one; encoding the text with the tokenizer's
//!   default would add a second.
//!
//! Control tokens, as transformers 5.23 chooses them: every special added
//! token, plus the added tokens listed in `tokenizer_config.json`'s
//! `chat_control_tokens`, or, without that list, the non-whitespace added
//! tokens that occur in the template's text (here: its source without
//! `{# comments #}`; transformers looks at its literal strings).

use std::collections::HashMap;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use serde_json::Value as Json;

use super::{ChatTemplate, ModelTemplate, RenderOptions};
use crate::pipeline::FileTokenizer;
use crate::{Error, ErrorKind, Result};

/// transformers' `_CONTROL_TOKEN_START` and `_CONTROL_TOKEN_END`.
const START: char = '\u{F0000}';
const END: char = '\u{F0001}';

/// A model's template and tokenizer joined: renders a conversation and
/// gives the ids the server would be sent.
#[derive(Debug, Clone)]
pub struct PromptCounter {
    template: ChatTemplate,
    model: ModelTemplate,
    tokenizer: Arc<FileTokenizer>,
    /// Matches the control tokens in input strings (none: no control tokens).
    control: Option<AhoCorasick>,
    /// Every added token's content and id, for the marked pieces.
    added: HashMap<String, u32>,
    newline_ids: Vec<u32>,
}

impl PromptCounter {
    /// Parses `model`'s template and works out its control tokens from
    /// `tokenizer`'s added tokens.
    pub fn new(model: ModelTemplate, tokenizer: Arc<FileTokenizer>) -> Result<PromptCounter> {
        let template = ChatTemplate::new(&model.source)
            .map_err(|e| Error::new(e.kind(), format!("{}: {}", model.origin, e.message())))?;
        let literal = template_text(&model.source);
        let listed = model.chat_control_tokens.as_ref();
        let mut control: Vec<String> = tokenizer
            .added_tokens()
            .filter(|&(_, content, special)| {
                special
                    || match listed {
                        Some(list) => list.iter().any(|t| t == content),
                        None => !content.chars().all(char::is_whitespace) && literal.contains(content),
                    }
            })
            .map(|(_, content, _)| content.to_string())
            .collect();
        control.sort();
        control.dedup();
        let control = if control.is_empty() {
            None
        } else {
            Some(
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&control)
                    .map_err(|e| Error::internal(format!("control-token matcher: {e}")))?,
            )
        };
        let added = tokenizer.added_tokens().map(|(id, content, _)| (content.to_string(), id)).collect();
        let newline_ids = tokenizer.encode("\n")?;
        Ok(PromptCounter { template, model, tokenizer, control, added, newline_ids })
    }

    /// The template and where it came from.
    pub fn model(&self) -> &ModelTemplate {
        &self.model
    }

    /// The tokenizer the ids are of.
    pub fn tokenizer(&self) -> &FileTokenizer {
        &self.tokenizer
    }

    /// The tokenizer, shared.
    pub fn tokenizer_arc(&self) -> Arc<FileTokenizer> {
        self.tokenizer.clone()
    }

    /// The prompt text (as `apply_chat_template(..., tokenize=False)`), with
    /// the model's `bos_token`/`eos_token` unless `options` names them.
    pub fn render(&self, messages: &Json, options: &RenderOptions) -> Result<String> {
        self.template.render(messages, &self.with_tokens(options))
    }

    /// The prompt's ids, as `apply_chat_template(..., tokenize=True,
    /// sanitize_control_tokens=True)`. An empty conversation is refused, as
    /// transformers refuses it.
    pub fn ids(&self, messages: &Json, options: &RenderOptions) -> Result<Vec<u32>> {
        if messages.as_array().is_some_and(Vec::is_empty) {
            return Err(Error::new(ErrorKind::InvalidArgument, "chat template: the conversation has no messages"));
        }
        let mut marked = self.with_tokens(options);
        marked.tools = marked.tools.as_ref().map(|t| self.mark(t));
        marked.kwargs = marked.kwargs.iter().map(|(k, v)| (k.clone(), self.mark(v))).collect();
        let text = self.template.render(&self.mark(messages), &marked)?;
        self.encode_marked(&text)
    }

    /// The number of prompt tokens ([`PromptCounter::ids`]' length).
    pub fn count(&self, messages: &Json, options: &RenderOptions) -> Result<usize> {
        Ok(self.ids(messages, options)?.len())
    }

    fn with_tokens(&self, options: &RenderOptions) -> RenderOptions {
        let mut o = options.clone();
        o.bos_token = o.bos_token.or_else(|| self.model.bos_token.clone());
        o.eos_token = o.eos_token.or_else(|| self.model.eos_token.clone());
        o
    }

    /// transformers' `mark_control_tokens`: every string value (not keys),
    /// stripped of markers, with each control token wrapped in them.
    fn mark(&self, value: &Json) -> Json {
        match value {
            Json::String(s) => {
                let clean: String = s.chars().filter(|&c| c != START && c != END).collect();
                let Some(ac) = &self.control else { return Json::String(clean) };
                let mut out = String::with_capacity(clean.len());
                let mut last = 0;
                for m in ac.find_iter(&clean) {
                    out.push_str(&clean[last..m.start()]);
                    out.push(START);
                    out.push_str(&clean[m.start()..m.end()]);
                    out.push(END);
                    last = m.end();
                }
                out.push_str(&clean[last..]);
                Json::String(out)
            }
            Json::Array(items) => Json::Array(items.iter().map(|v| self.mark(v)).collect()),
            Json::Object(map) => Json::Object(map.iter().map(|(k, v)| (k.clone(), self.mark(v))).collect()),
            other => other.clone(),
        }
    }

    /// transformers' `encode_marked_chat`: the text before the first marker
    /// encoded as is; after it, each marked token as plain text and each
    /// stretch between markers on its own (lone markers only cut the text).
    fn encode_marked(&self, chat: &str) -> Result<Vec<u32>> {
        let pieces = split_marked(chat, |t| self.added.contains_key(t));
        let mut ids = self.tokenizer.encode(pieces.first().map_or("", |p| p.1))?;
        for &(as_text, piece) in pieces.iter().skip(1) {
            if piece.is_empty() {
                continue;
            }
            let piece_ids = self.encode_piece(piece, as_text)?;
            if as_text && self.added.get(piece).is_some_and(|id| piece_ids.contains(id)) {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("cannot keep {piece:?} as text: the tokenizer makes that token from plain text"),
                ));
            }
            ids.extend(piece_ids);
        }
        Ok(ids)
    }

    /// One piece after the first, encoded after a newline that is then
    /// removed (so SentencePiece-style tokenizers add no prefix space), as
    /// transformers does.
    fn encode_piece(&self, piece: &str, as_text: bool) -> Result<Vec<u32>> {
        let encode = |s: &str| if as_text { self.tokenizer.encode_plain(s) } else { self.tokenizer.encode(s) };
        let ids = encode(&format!("\n{piece}"))?;
        if ids.starts_with(&self.newline_ids) {
            return Ok(ids[self.newline_ids.len()..].to_vec());
        }
        encode(piece)
    }
}

/// `chat` cut at its markers into `(marked, text)` pieces: the first piece
/// is the text before any marker; a marker pair around an added token's
/// content is a marked piece; a lone marker only ends a piece.
fn split_marked(chat: &str, is_added: impl Fn(&str) -> bool) -> Vec<(bool, &str)> {
    let mut pieces = Vec::new();
    let mut start = 0; // where the current text piece begins
    let mut i = 0;
    while let Some(off) = chat[i..].find([START, END]) {
        let at = i + off;
        let c = chat[at..].chars().next().unwrap_or(START);
        let after = at + c.len_utf8();
        if c == START {
            if let Some(rel) = chat[after..].find(END) {
                let inner = &chat[after..after + rel];
                if !inner.contains(START) && is_added(inner) {
                    pieces.push((false, &chat[start..at]));
                    pieces.push((true, inner));
                    i = after + rel + END.len_utf8();
                    start = i;
                    continue;
                }
            }
        }
        pieces.push((false, &chat[start..at]));
        i = after;
        start = i;
    }
    pieces.push((false, &chat[start..]));
    pieces
}

/// The template's text with `{# comments #}` removed: where its control
/// tokens are looked for.
fn template_text(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(open) = rest.find("{#") {
        out.push_str(&rest[..open]);
        match rest[open..].find("#}") {
            Some(close) => rest = &rest[open + close + 2..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_marked_pairs_and_lone_markers() {
        let added = |t: &str| t == "<a>";
        let s = format!("x{START}<a>{END}y{START}zz{END}w{END}");
        let pieces = split_marked(&s, added);
        assert_eq!(pieces, [(false, "x"), (true, "<a>"), (false, "y"), (false, "zz"), (false, "w"), (false, "")]);
        assert_eq!(split_marked("plain", added), [(false, "plain")]);
    }

    #[test]
    fn template_text_drops_comments() {
        assert_eq!(template_text("a{# <x> #}b{# open"), "ab");
    }
}

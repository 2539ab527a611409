//! The deterministic extractive digest used when the host provides no
//! summary: the facts an agent most often needs again (file paths, URLs,
//! identifiers, numbers, commands, tool names) plus each turn's request and
//! last statement, within a token cap. Same input, same digest, always.

use crate::chat::{Message, Role};
use crate::{Result, Tokenizer, TruncateSide};

#[derive(Default)]
struct Facts {
    tools: Vec<String>,
    paths: Vec<String>,
    urls: Vec<String>,
    identifiers: Vec<String>,
    numbers: Vec<String>,
    commands: Vec<String>,
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !s.is_empty() && v.len() < 64 && !v.iter().any(|x| x == s) {
        v.push(s.to_owned());
    }
}

fn trim_word(w: &str) -> &str {
    w.trim_matches(|c: char| {
        matches!(
            c,
            '(' | ')' | '[' | ']' | '{' | '}' | '"' | '\'' | ',' | ';' | ':' | '.' | '!' | '?' | '`' | '<' | '>'
        )
    })
}

fn classify(facts: &mut Facts, text: &str) {
    // `code spans` that look like commands.
    for (k, span) in text.split('`').enumerate() {
        if k % 2 == 1 && span.contains(' ') && span.len() <= 120 && !span.contains('\n') {
            push_unique(&mut facts.commands, span.trim());
        }
    }
    for line in text.lines() {
        if let Some(cmd) = line.trim_start().strip_prefix("$ ") {
            push_unique(&mut facts.commands, cmd.trim());
        }
    }
    for raw in text.split_whitespace() {
        let w = trim_word(raw);
        if w.starts_with("http://") || w.starts_with("https://") {
            push_unique(&mut facts.urls, w);
        } else if (w.contains('/') && w.chars().any(char::is_alphanumeric) && !w.contains("//") && w.len() > 2)
            || (w.len() > 3 && w.contains('.') && has_extension(w))
        {
            push_unique(&mut facts.paths, w);
        } else if w.contains("::") || (w.contains('_') && w.chars().any(char::is_alphabetic)) || is_camel(w) {
            push_unique(&mut facts.identifiers, w);
        } else if w.chars().filter(char::is_ascii_digit).count() >= 2
            && w.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '%' | '-'))
        {
            push_unique(&mut facts.numbers, w);
        }
    }
}

fn has_extension(w: &str) -> bool {
    const EXT: &[&str] = &[
        "rs", "py", "md", "json", "toml", "yaml", "yml", "ts", "js", "c", "h", "go", "java", "kt", "txt", "sh", "html",
        "css",
    ];
    w.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && EXT.contains(&ext))
}

fn is_camel(w: &str) -> bool {
    let b = w.as_bytes();
    w.chars().all(char::is_alphanumeric) && b.windows(2).any(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase())
}

fn first_sentence(text: &str, max_chars: usize) -> String {
    let t = text.trim();
    let end = t.find(['.', '?', '!', '\n']).map_or(t.len(), |i| i + 1);
    let s: String = t[..end].chars().take(max_chars).collect();
    s.trim().to_owned()
}

fn last_sentence(text: &str, max_chars: usize) -> String {
    let t = text.trim().trim_end_matches(['.', '?', '!']);
    let start = t.rfind(['.', '?', '!', '\n']).map_or(0, |i| i + 1);
    let s: String = t[start..].trim().chars().take(max_chars).collect();
    s
}

/// A digest of `messages` (grouped into `turns` by start index) in at most
/// `max_tokens` tokens.
pub fn digest(messages: &[Message], turn_starts: &[usize], tok: &Tokenizer, max_tokens: usize) -> Result<String> {
    let mut facts = Facts::default();
    for m in messages {
        for c in &m.tool_calls {
            push_unique(&mut facts.tools, &c.name);
            classify(&mut facts, &c.arguments);
        }
        classify(&mut facts, &m.text());
    }
    let mut out = format!("Summary of {} earlier messages (extractive digest, no model was called):\n", messages.len());
    let lists = [
        ("Tools used", &facts.tools),
        ("Files", &facts.paths),
        ("URLs", &facts.urls),
        ("Commands", &facts.commands),
        ("Identifiers", &facts.identifiers),
        ("Numbers", &facts.numbers),
    ];
    for (label, items) in lists {
        if !items.is_empty() {
            out.push_str(&format!("- {label}: {}\n", items.join(", ")));
        }
    }
    for (k, &start) in turn_starts.iter().enumerate() {
        let end = turn_starts.get(k + 1).copied().unwrap_or(messages.len());
        let turn = &messages[start..end];
        let asked = turn.iter().find(|m| m.role == Role::User).map(|m| first_sentence(&m.text(), 160));
        let last = turn
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.text().trim().is_empty())
            .map(|m| last_sentence(&m.text(), 200));
        match (asked, last) {
            (Some(a), Some(l)) if !a.is_empty() => {
                out.push_str(&format!("- Turn {}: asked \"{a}\"; ended with \"{l}\"\n", k + 1))
            }
            (Some(a), _) if !a.is_empty() => out.push_str(&format!("- Turn {}: asked \"{a}\"\n", k + 1)),
            (_, Some(l)) => out.push_str(&format!("- Turn {}: ended with \"{l}\"\n", k + 1)),
            _ => {}
        }
    }
    Ok(tok.truncate(&out, max_tokens, TruncateSide::Head, None)?.text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::Conversation;
    use crate::Encoding;

    #[test]
    fn keeps_paths_urls_identifiers_numbers_commands_tools_and_last_statements() {
        let c = Conversation::parse(
            r#"[{"role":"user","content":"Fix src/parser.rs, see https://example.com/issue/42. It fails 37 of 2600 tests."},
                {"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"run_tests","arguments":"{\"filter\":\"parser::tests\"}"}}]},
                {"role":"tool","tool_call_id":"a","content":"test parser::tests::nested_braces ... FAILED"},
                {"role":"assistant","content":"Run `cargo test -p core` again. The bug is in parse_item."}]"#,
            None,
        )
        .unwrap();
        let tok = Tokenizer::new(Encoding::O200kBase).unwrap();
        let d = digest(&c.messages, &[0], &tok, 500).unwrap();
        for needle in [
            "src/parser.rs",
            "https://example.com/issue/42",
            "2600",
            "run_tests",
            "parser::tests::nested_braces",
            "cargo test -p core",
            "parse_item",
            "The bug is in parse_item",
        ] {
            assert!(d.contains(needle), "{needle} missing from:\n{d}");
        }
        assert_eq!(digest(&c.messages, &[0], &tok, 500).unwrap(), d, "deterministic");
        let short = digest(&c.messages, &[0], &tok, 20).unwrap();
        assert!(tok.count(&short).unwrap() <= 20);
    }
}

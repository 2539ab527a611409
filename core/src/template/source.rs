//! Template source as minijinja reads it. HF's `{% generation %}` ...
//! `{% endgeneration %}` (transformers' AssistantTracker extension, which only
//! marks the assistant's tokens and renders its body unchanged) becomes an
//! always-true `if` block with the same whitespace markers, so trimming
//! around it is the same as jinja2's.
//!
//! `"text"|safe + x`: in jinja2 a `|safe` string is a Markup, and Markup `+`
//! a plain string HTML-escapes the plain one (functionary v3.1 prints its tool
//! schemas as `{&#34;name&#34;: ...}` that way). minijinja does not escape, so
//! that filter is renamed to one that refuses when it runs, naming the
//! construct, instead of rendering different bytes; templates that never
//! reach it render as usual.

use std::sync::OnceLock;

use regex::Regex;

/// The filter `|safe +` becomes; registered in mod.rs to fail with a message.
pub(super) const MARKUP_CONCAT: &str = "turnfit_markup_concat";

fn tags() -> &'static (Regex, Regex, Regex) {
    static TAGS: OnceLock<(Regex, Regex, Regex)> = OnceLock::new();
    TAGS.get_or_init(|| {
        let open = Regex::new(r"\{%([-+]?)\s*generation\s*([-+]?)%\}").expect("valid regex");
        let close = Regex::new(r"\{%([-+]?)\s*endgeneration\s*([-+]?)%\}").expect("valid regex");
        let markup = Regex::new(r"\|\s*safe(\s*\+)").expect("valid regex");
        (open, close, markup)
    })
}

/// The source with the generation tags and `|safe +` replaced.
pub(super) fn prepare(source: &str) -> String {
    let (open, close, markup) = tags();
    let s = open.replace_all(source, "{%${1} if true ${2}%}");
    let s = close.replace_all(&s, "{%${1} endif ${2}%}");
    markup.replace_all(&s, format!("|{MARKUP_CONCAT}${{1}}").as_str()).into_owned()
}

//! What counts as a fact: the grammars for paths, URLs and identifiers, and
//! the scanner that finds them in text.
//!
//! The old digest classified whitespace-separated words by a few character
//! tests, so it kept fragments such as `script_name>.py`, `inputting/reading`,
//! `n/a` and `obj["td_field`. Here every fact must match a grammar as a whole:
//! a model handed a fact should be able to use it as is (open the path, fetch
//! the URL, grep the identifier). A candidate is taken from one word (text
//! between whitespace) after trimming the punctuation that surrounds words in
//! prose and code; anything with placeholder marks (`<`, `>`, `{`, `}`, `$`,
//! `*`, `...`) or unbalanced quotes and brackets is refused.

/// The kind of a fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A file or directory path.
    Path,
    /// An http(s) URL.
    Url,
    /// A code identifier: dotted, `::`-separated, snake_case or camelCase.
    Identifier,
}

/// File extensions accepted on a bare file name (no `/`): a bare `a.b` is
/// more often an attribute access than a file, so it needs a known extension.
const BARE_EXTENSIONS: &[&str] = &[
    "c",
    "cc",
    "cfg",
    "cjs",
    "conf",
    "cpp",
    "cs",
    "css",
    "csv",
    "diff",
    "dockerfile",
    "env",
    "go",
    "gradle",
    "h",
    "hpp",
    "hs",
    "html",
    "ini",
    "ipynb",
    "java",
    "js",
    "json",
    "jsonl",
    "jsx",
    "kt",
    "kts",
    "lock",
    "log",
    "lua",
    "md",
    "mjs",
    "mk",
    "patch",
    "php",
    "pl",
    "proto",
    "py",
    "pyi",
    "pyx",
    "r",
    "rb",
    "rs",
    "rst",
    "scala",
    "sh",
    "sql",
    "svg",
    "swift",
    "toml",
    "ts",
    "tsx",
    "txt",
    "vue",
    "xml",
    "yaml",
    "yml",
    "zig",
];

/// Characters that mark a template or an elision, never part of a real fact.
fn is_placeholder(s: &str) -> bool {
    s.contains(['<', '>', '{', '}', '$', '*', '…', '|', '\\', '`'])
        || s.contains("...")
        || s.contains("path/to/")
        || s.contains("/path/to")
}

/// Quotes and brackets pair up, in order.
pub fn balanced(s: &str) -> bool {
    let mut stack = Vec::new();
    let mut quote: Option<char> = None;
    for c in s.chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '{' => stack.push(c),
            ')' | ']' | '}' => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.pop() != Some(open) {
                    return false;
                }
            }
            _ => {}
        }
    }
    stack.is_empty() && quote.is_none()
}

fn is_segment_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '@' | ',' | '=')
}

/// The extension of a file name, if it has one made of letters and digits
/// with at least one letter (so `1.5` and `v2.0` have none).
fn extension(name: &str) -> Option<&str> {
    let (stem, ext) = name.rsplit_once('.')?;
    let stem = stem.trim_start_matches('.');
    (!stem.is_empty()
        && (1..=10).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic()))
    .then_some(ext)
}

/// A path: segments of `[A-Za-z0-9._+@,=-]` separated by `/`, optionally
/// rooted (`/`, `./`, `../`, `~/`). A relative path without a root must end
/// in a file name with an extension (so `inputting/reading`, `n/a` and
/// `start/end` are words, not paths); a bare file name needs a known
/// extension (`card.py`, not `self.value`).
pub fn is_path(s: &str) -> bool {
    if s.len() < 3 || s.len() > 240 || is_placeholder(s) || s.contains("//") {
        return false;
    }
    let (rooted, rest) = if let Some(r) = s.strip_prefix("~/") {
        (true, r)
    } else if let Some(r) = s.strip_prefix('/') {
        (true, r)
    } else if s.starts_with("./") || s.starts_with("../") {
        (true, s)
    } else {
        (false, s)
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.is_empty() {
        return false;
    }
    let segments: Vec<&str> = rest.split('/').collect();
    for seg in &segments {
        if seg.is_empty() || !seg.chars().all(is_segment_char) {
            return false;
        }
        if seg.chars().all(|c| c == '.') && !matches!(*seg, "." | "..") {
            return false;
        }
        if seg.starts_with(['-', ',', '=']) {
            return false;
        }
    }
    if !segments.iter().any(|seg| seg.chars().any(|c| c.is_ascii_alphabetic())) {
        return false; // `/2/3`, dates and ratios
    }
    let last = segments[segments.len() - 1];
    if rooted {
        // `/usr/bin`, `./build`, `~/x`: the root says it is a path; a lone
        // `/word` is as often prose ("and/or" split oddly) as a directory,
        // so one segment needs an extension.
        return segments.len() >= 2 || extension(last).is_some();
    }
    if segments.len() >= 2 {
        return extension(last).is_some();
    }
    extension(last).is_some_and(|e| BARE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

fn is_url_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~:/?#[]@!&'()*+,;=%".contains(c)
}

/// An http(s) URL: a scheme, a host with a dot (or `localhost`), an
/// optional port, then URL characters with balanced brackets.
pub fn is_url(s: &str) -> bool {
    let rest = match s.strip_prefix("https://").or_else(|| s.strip_prefix("http://")) {
        Some(r) => r,
        None => return false,
    };
    if s.len() > 400 || is_placeholder(s) || !s.chars().all(is_url_char) || !balanced(s) || s.contains('\'') {
        return false;
    }
    let host_port = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host_port.split(':').next().unwrap_or("");
    if let Some(port) = host_port.split_once(':').map(|(_, p)| p) {
        if port.is_empty() || port.len() > 5 || !port.chars().all(|c| c.is_ascii_digit()) {
            return false;
        }
    }
    let labels_ok = host.split('.').all(|l| {
        !l.is_empty()
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    });
    labels_ok
        && (host == "localhost"
            || host
                .rsplit('.')
                .next()
                .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphanumeric()))
                && host.contains('.'))
}

fn is_ident_word(w: &str) -> bool {
    let mut chars = w.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An identifier worth keeping: words of `[A-Za-z_][A-Za-z0-9_]*` joined by
/// `.` or `::`, with something that marks it as code (a separator, an
/// underscore inside, or a lower-to-upper case change), at least 4
/// characters, and not a file name (those are paths).
pub fn is_identifier(s: &str) -> bool {
    if s.len() < 4 || s.len() > 120 || s.starts_with(['.', ':']) || s.ends_with(['.', ':']) {
        return false;
    }
    let words: Vec<&str> = s.split("::").flat_map(|p| p.split('.')).collect();
    if !words.iter().all(|w| is_ident_word(w)) || s.contains(":::") {
        return false;
    }
    if s.contains('.') && extension(s).is_some_and(|e| BARE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str())) {
        return false;
    }
    // `td_field`, `__init__`, `_serialize`: underscores mark code.
    let inner_underscore = words.iter().any(|w| w.trim_matches('_').contains('_'))
        || words.iter().any(|w| w.starts_with('_') && w.trim_start_matches('_').len() >= 3);
    let camel = s.as_bytes().windows(2).any(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase());
    words.len() >= 2 || inner_underscore || camel
}

/// Trims what surrounds a fact in prose and code: quotes, brackets,
/// trailing sentence punctuation, a `:line:col` suffix on a path. Only
/// brackets that are unbalanced in the word are trimmed from its ends, so a
/// URL that ends in `(disambiguation)` keeps it.
fn trim_word(w: &str) -> &str {
    let mut s = w;
    loop {
        let before = s.len();
        s = s.trim_start_matches(['"', '\'', '`', ',', ';', '(', '[', '{', '<', '=']);
        s = s.trim_end_matches(['"', '\'', '`', ',', ';', '.', ':', '!', '?', '>']);
        for (open, close) in [('(', ')'), ('[', ']'), ('{', '}')] {
            if s.ends_with(close) && s.matches(close).count() > s.matches(open).count() {
                s = &s[..s.len() - 1];
            }
        }
        if s.len() == before {
            return s;
        }
    }
}

/// Drops a `:12` or `:12:5` suffix (compiler and grep locations).
fn strip_location(s: &str) -> &str {
    let mut s = s;
    for _ in 0..2 {
        if let Some((head, tail)) = s.rsplit_once(':') {
            if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) {
                s = head;
            }
        }
    }
    s
}

/// Every well-formed fact in `text`, in order of appearance. Each fact is a
/// substring of `text`.
pub fn scan(text: &str, out: &mut Vec<(Kind, String)>) {
    for raw in text.split(|c: char| c.is_whitespace()) {
        if raw.len() < 3 || raw.len() > 400 {
            continue;
        }
        if let Some(at) = raw.find("http://").or_else(|| raw.find("https://")) {
            let run: &str = &raw[at..];
            let end = run.find(|c: char| !is_url_char(c)).unwrap_or(run.len());
            let url = trim_word(&run[..end]);
            if is_url(url) {
                out.push((Kind::Url, url.to_owned()));
            }
            continue;
        }
        let w = trim_word(raw);
        let loc = strip_location(w);
        if is_path(loc) {
            out.push((Kind::Path, loc.to_owned()));
            continue;
        }
        // grep and compiler output: `path:line:text`.
        if let Some((head, tail)) = w.split_once(':') {
            if tail.starts_with(|c: char| c.is_ascii_digit()) && is_path(head) {
                out.push((Kind::Path, head.to_owned()));
                continue;
            }
        }
        if w.contains('/') || w.contains(['<', '>', '{', '}', '$']) {
            continue; // malformed paths and placeholders are not mined for identifiers
        }
        // Identifiers inside code: maximal runs of identifier characters and
        // separators, e.g. `obj["td_field` gives `td_field`, and
        // `super().__init__(**kwargs` gives `__init__`.
        let mut start = None;
        let bytes = w.as_bytes();
        for i in 0..=bytes.len() {
            let c = bytes.get(i).copied();
            let inside = c.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b':');
            match (inside, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    let run = w[s..i].trim_matches(['.', ':']);
                    if is_identifier(run) {
                        out.push((Kind::Identifier, run.to_owned()));
                    }
                    start = None;
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        for good in [
            "src/parser.rs",
            "/usr/lib/python3/dist-packages",
            "./build",
            "../x/y.txt",
            "~/notes.md",
            "reproduce.py",
            "astropy/io/fits/card.py",
            "tests/test_card.py",
            "/tmp/out.log",
            "Cargo.toml",
            "docs/v1.2/index.html",
        ] {
            assert!(is_path(good), "{good}");
        }
        for bad in [
            "script_name>.py",
            "<script_name>.py",
            "inputting/reading",
            "n/a",
            "start/end",
            "and/or",
            "self.value",
            "1.5/2.0",
            "/",
            "//",
            "a//b.py",
            "path/to/file.py",
            "src/{name}.rs",
            "src/*.rs",
            "foo/.../bar.py",
            "$HOME/x.py",
            "e.g",
            "/word",
            "10/20/30",
            "src/ok.rs…",
        ] {
            assert!(!is_path(bad), "{bad}");
        }
    }

    #[test]
    fn urls() {
        for good in [
            "https://example.com",
            "http://dicom.nema.org/medical/dicom/current/output/chtml/part03/sect_C.7.6.3.html",
            "https://en.wikipedia.org/wiki/Foo_(bar)",
            "http://localhost:8080/api",
            "https://github.com/a/b/issues/42?x=1#c",
        ] {
            assert!(is_url(good), "{good}");
        }
        for bad in [
            "https://",
            "https://localhost:port",
            "https://example",
            "https://ex ample.com",
            "https://example.com/{id}",
            "https://example.com/a(b",
            "ftp://example.com/x",
            "https://example.com/...",
            "https://-bad.com",
        ] {
            assert!(!is_url(bad), "{bad}");
        }
    }

    #[test]
    fn identifiers() {
        for good in
            ["td_field", "parse_item", "parser::tests::nested", "np.float64", "TimeDelta", "__init__", "getValue"]
        {
            assert!(is_identifier(good), "{good}");
        }
        for bad in [
            "obj[\"td_field",
            "print(td_field.serialize(\"td_field",
            "4:td_field",
            "super().__init__(**kwargs",
            "_serialize(self,",
            "word",
            "Hello",
            "abc",
            "card.py",
            "a::",
            "x.",
            "9abc_def",
            "a:::b",
        ] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn balance() {
        assert!(balanced("f(a[1], \"x)\")"));
        assert!(!balanced("obj[\"td_field"));
        assert!(!balanced("super().__init__(**kwargs"));
        assert!(!balanced("a)("));
        assert!(!balanced("'open"));
    }

    #[test]
    fn scanning_the_bad_examples_of_the_issue_yields_only_well_formed_facts() {
        let text = "python <script_name>.py inputting/reading n/a start/end \
            Attributes](http://dicom.nema.org/medical/dicom/current/output/chtml/part03/sect_C.7.6.3.html, \
            obj[\"td_field print(td_field.serialize(\"td_field 4:td_field super().__init__(**kwargs \
            _serialize(self, see astropy/io/fits/card.py:1294: and https://example.com/a_(b).";
        let mut out = Vec::new();
        scan(text, &mut out);
        let got: Vec<String> = out.iter().map(|(k, s)| format!("{k:?}:{s}")).collect();
        assert_eq!(
            got,
            [
                "Url:http://dicom.nema.org/medical/dicom/current/output/chtml/part03/sect_C.7.6.3.html",
                "Identifier:td_field",
                "Identifier:td_field.serialize",
                "Identifier:td_field",
                "Identifier:__init__",
                "Identifier:_serialize",
                "Path:astropy/io/fits/card.py",
                "Url:https://example.com/a_(b)",
            ]
        );
        for (_, s) in &out {
            assert!(balanced(s) && text.contains(s.as_str()), "{s}");
        }
    }
}

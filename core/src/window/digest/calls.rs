//! Reading a tool call: its key arguments for the action log, the shell
//! command it runs (if any), and the files it creates or edits.
//!
//! Agents edit files in two ways: editor tools (`str_replace_editor`,
//! `edit_file`, `write_file`, `create`, Claude's `Edit`/`Write`) that name the
//! file in an argument, and shell commands (`cat > f`, `sed -i`, `tee`,
//! `touch`, SWE-agent's `create f`). Both are recognized here; only targets
//! that match the path grammar are kept.

use serde_json::Value;

use super::grammar::is_path;
use super::outcome::shorten;

/// Arguments shown in the action log, most telling first.
const KEY_ARGS: &[&str] = &[
    "command",
    "cmd",
    "path",
    "file_path",
    "filepath",
    "filename",
    "file",
    "target_file",
    "pattern",
    "query",
    "search_term",
    "regex",
    "url",
    "directory",
    "dir",
    "name",
];

/// Argument names that hold the file an editor tool writes.
const PATH_ARGS: &[&str] = &["path", "file_path", "filepath", "filename", "file", "target_file", "notebook_path"];

/// Editor sub-commands that read rather than write (`str_replace_editor`).
const READ_SUBCOMMANDS: &[&str] = &["view", "read", "show", "list", "undo_edit"];

/// What the digest needs from one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallView {
    /// Key arguments, shortened, for the action log.
    pub shown: String,
    /// The shell command the call runs, whitespace-normalized, if it is one.
    pub command: Option<String>,
    /// What identifies a repeat of this call.
    pub key: String,
    /// Files the call creates or edits.
    pub writes: Vec<String>,
    /// Decoded string values of the arguments (where facts are looked for).
    pub strings: Vec<String>,
}

fn is_shell(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "bash"
            | "shell"
            | "sh"
            | "zsh"
            | "terminal"
            | "execute_bash"
            | "execute_command"
            | "execute_shell"
            | "run_command"
            | "run_shell_command"
            | "run_terminal_cmd"
            | "local_shell"
            | "exec"
            | "run"
            | "cmd"
            | "command"
            | "powershell"
            | "container.exec"
    ) || n.ends_with("_bash")
        || n.ends_with("shell")
}

fn is_editor(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["edit", "write", "create", "replace", "patch", "insert", "append", "save"].iter().any(|w| n.contains(w))
}

fn strings_of(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings_of(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings_of(x, out)),
        _ => {}
    }
}

fn unquote(s: &str) -> &str {
    s.trim_matches(['"', '\''])
}

/// Files a shell command writes: redirection targets, `tee`, `touch`,
/// `sed -i`, the destination of `cp`/`mv`, SWE-agent's `create`.
pub fn shell_writes(command: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |t: &str| {
        let t = unquote(t);
        if is_path(t) && t != "/dev/null" && !out.iter().any(|x| x == t) {
            out.push(t.to_owned());
        }
    };
    for segment in command.split(['\n', ';', '|', '&']) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        for (k, w) in words.iter().enumerate() {
            if let Some(target) = w.strip_prefix(">>").or_else(|| w.strip_prefix('>')) {
                if !target.is_empty() {
                    push(target);
                } else if let Some(next) = words.get(k + 1) {
                    push(next);
                }
            } else if let Some(rest) = w.strip_prefix("1>").or_else(|| w.strip_prefix("2>")) {
                if !rest.is_empty() && !rest.starts_with('&') {
                    push(rest.trim_start_matches('>'));
                }
            }
        }
        let Some(&program) = words.first() else { continue };
        let args: Vec<&str> = words[1..].iter().copied().take_while(|w| !w.starts_with('>')).collect();
        let operands: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with('-')).collect();
        match program {
            "tee" | "touch" | "create" => operands.iter().for_each(|a| push(a)),
            "sed" | "perl" if args.iter().any(|a| a.starts_with("-i") || *a == "-pi") => {
                if let Some(last) = operands.last() {
                    push(last);
                }
            }
            "cp" | "mv" | "install" if operands.len() >= 2 => push(operands[operands.len() - 1]),
            _ => {}
        }
    }
    out
}

/// Reads one call.
pub fn view(name: &str, arguments: &str) -> CallView {
    let parsed: Option<Value> = serde_json::from_str(arguments).ok();
    let mut strings = Vec::new();
    match &parsed {
        Some(v) => strings_of(v, &mut strings),
        None => strings.push(arguments.to_owned()),
    }
    let obj = parsed.as_ref().and_then(Value::as_object);
    let get = |k: &str| obj.and_then(|o| o.get(k)).and_then(Value::as_str);
    let sub = get("command").map(str::trim).filter(|c| !c.contains(char::is_whitespace));
    let editor =
        is_editor(name) || (sub.is_some() && obj.is_some_and(|o| PATH_ARGS.iter().any(|k| o.contains_key(*k))));
    let command = if editor && !is_shell(name) {
        None
    } else if let Some(c) = get("command").or_else(|| get("cmd")).or_else(|| get("script")) {
        Some(c.split_whitespace().collect::<Vec<_>>().join(" "))
    } else if is_shell(name) {
        match (&parsed, obj) {
            (Some(Value::String(s)), _) => Some(s.split_whitespace().collect::<Vec<_>>().join(" ")),
            (None, _) => Some(arguments.split_whitespace().collect::<Vec<_>>().join(" ")),
            _ => None,
        }
    } else {
        None
    };
    let mut writes = Vec::new();
    if let Some(c) = &command {
        writes = shell_writes(c);
    } else if editor && !sub.is_some_and(|s| READ_SUBCOMMANDS.contains(&s)) {
        if let Some(p) = PATH_ARGS.iter().find_map(|k| get(k)) {
            if is_path(p) {
                writes.push(p.to_owned());
            }
        }
    }
    let shown = match (&command, obj) {
        (Some(c), _) => shorten(c, 90),
        (None, Some(o)) => {
            let mut parts: Vec<String> = Vec::new();
            for k in KEY_ARGS {
                if let Some(s) = o.get(*k).and_then(Value::as_str) {
                    parts.push(shorten(s, 70));
                }
                if parts.len() == 2 {
                    break;
                }
            }
            if parts.is_empty() {
                // Some other scalar argument says more than nothing.
                if let Some((k, v)) = o.iter().find(|(_, v)| v.is_string() || v.is_number()) {
                    parts.push(format!("{k}={}", shorten(&v.to_string(), 50)));
                }
            }
            parts.join(" ")
        }
        (None, None) => shorten(arguments, 70),
    };
    let key = match &command {
        Some(c) => c.clone(),
        None => format!("{name} {}", parsed.map_or_else(|| arguments.trim().to_owned(), |v| v.to_string())),
    };
    CallView { shown: shown.replace('`', "'"), command, key, writes, strings }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_write_targets() {
        assert_eq!(shell_writes("cat > src/a.py <<'EOF'\nx\nEOF"), ["src/a.py"]);
        assert_eq!(shell_writes("echo hi >> notes.md && python run.py 2>&1 | tee out.log"), ["notes.md", "out.log"]);
        assert_eq!(shell_writes("sed -i 's/a/b/' astropy/io/fits/card.py"), ["astropy/io/fits/card.py"]);
        assert_eq!(shell_writes("create reproduce.py"), ["reproduce.py"]);
        assert_eq!(shell_writes("cp a.py b/c.py; touch x.txt"), ["b/c.py", "x.txt"]);
        assert!(shell_writes("python x.py > /dev/null; ls -la; grep -r foo src/").is_empty());
        assert!(shell_writes("echo > <file>.py").is_empty(), "placeholders are not files");
    }

    #[test]
    fn editor_and_shell_calls() {
        let v =
            view("str_replace_editor", r#"{"command":"create","path":"/repo/reproduce.py","file_text":"print(1)"}"#);
        assert_eq!(v.writes, ["/repo/reproduce.py"]);
        assert_eq!(v.command, None);
        assert_eq!(v.shown, "create /repo/reproduce.py");
        let v = view("str_replace_editor", r#"{"command":"view","path":"/repo/a.py"}"#);
        assert!(v.writes.is_empty());
        let v = view("bash", r#"{"command":"cd /repo &&  python  reproduce.py"}"#);
        assert_eq!(v.command.as_deref(), Some("cd /repo && python reproduce.py"));
        assert_eq!(v.key, "cd /repo && python reproduce.py");
        let v = view("Edit", r#"{"file_path":"src/lib.rs","old_string":"a","new_string":"b"}"#);
        assert_eq!(v.writes, ["src/lib.rs"]);
        let v = view("grep", r#"{"pattern":"fn main","path":"src"}"#);
        assert_eq!(v.shown, "src fn main");
        assert!(v.writes.is_empty() && v.command.is_none());
        let v = view("bash", "ls -la `pwd`");
        assert_eq!(v.command.as_deref(), Some("ls -la `pwd`"));
        assert_eq!(v.shown, "ls -la 'pwd'");
    }
}

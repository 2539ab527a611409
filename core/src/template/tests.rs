//! Unit tests of the renderer: jinja2/transformers semantics case by case,
//! and hostile templates (each must end in a specific error, promptly, within
//! the limits). The collection-wide comparison with transformers is
//! core/tests/chat_templates.rs.

use serde_json::json;

use super::*;

fn render(source: &str, messages: Json) -> Result<String> {
    ChatTemplate::new(source)?.render(&messages, &RenderOptions::default())
}

fn one(source: &str) -> Result<String> {
    render(source, json!([{"role": "user", "content": "hi"}]))
}

#[test]
fn renders_messages_with_trim_and_lstrip_blocks() {
    let t = "{% for m in messages %}\n  {{ m.role }}: {{ m.content }}\n{% endfor %}\n";
    let out = render(t, json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": null}])).unwrap();
    // lstrip_blocks removes the indent before a tag, trim_blocks the newline
    // after it; jinja2 drops the template's final newline.
    assert_eq!(out, "  user: hi\n  assistant: \n");
}

#[test]
fn tojson_is_python_json_dumps() {
    let data = "{% set d = {'b': [1, 2.0, 'é😀', none, true], 'a': {}} %}";
    assert_eq!(one(&format!("{data}{{{{ d | tojson }}}}")).unwrap(), r#"{"b": [1, 2.0, "é😀", null, true], "a": {}}"#);
    assert_eq!(
        one(&format!("{data}{{{{ d | tojson(ensure_ascii=true) }}}}")).unwrap(),
        r#"{"b": [1, 2.0, "\u00e9\ud83d\ude00", null, true], "a": {}}"#
    );
    assert_eq!(
        one(&format!("{data}{{{{ d | tojson(indent=2, sort_keys=true) }}}}")).unwrap(),
        "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2.0,\n    \"é😀\",\n    null,\n    true\n  ]\n}"
    );
    assert_eq!(
        one(&format!("{data}{{{{ d.b | tojson(separators=[',', ':']) }}}}")).unwrap(),
        r#"[1,2.0,"é😀",null,true]"#
    );
    assert_eq!(one("{{ 'a\"\\\\\n\t\u{1}\u{7f}' | tojson }}").unwrap(), "\"a\\\"\\\\\\n\\t\\u0001\u{7f}\"");
    assert_eq!(one("{{ '\u{7f}' | tojson(ensure_ascii=true) }}").unwrap(), "\"\\u007f\"");
}

#[test]
fn conversation_numbers_keep_their_python_type() {
    let t = "{{ messages[0].args | tojson }}";
    let out = render(
        t,
        json!([{"role": "user", "args": {"i": 3, "f": 3.0, "e": 1e20, "big": 123456789012345678901234567890u128}}]),
    )
    .unwrap();
    assert_eq!(out, r#"{"i": 3, "f": 3.0, "e": 1e+20, "big": 123456789012345678901234567890}"#);
}

#[test]
fn null_content_is_an_empty_string_and_reasoning_is_aliased() {
    let t = "{% for m in messages %}[{{ m.content }}|{{ m.reasoning_content }}|{{ m.thinking }}]{{ m | tojson }}{% endfor %}";
    let out = render(t, json!([{"role": "assistant", "content": null, "reasoning": "r"}])).unwrap();
    assert_eq!(
        out,
        r#"[|r|r]{"thinking": "r", "role": "assistant", "content": "", "reasoning": "r", "reasoning_content": "r"}"#
    );
}

#[test]
fn template_variables_and_helpers() {
    let t = ChatTemplate::new(
        "{{ bos_token }}{% if add_generation_prompt %}gen{% endif %}{{ enable_thinking }}{{ tools | length }}{{ strftime_now('%d %b %Y') }}{{ eos_token }}",
    )
    .unwrap();
    let mut options = RenderOptions {
        tools: Some(json!([{"type": "function"}])),
        add_generation_prompt: true,
        bos_token: Some("<s>".into()),
        eos_token: Some("</s>".into()),
        fixed_now: Some("2024-07-26T10:00:00".into()),
        ..RenderOptions::default()
    };
    options.kwargs.insert("enable_thinking".into(), json!(false));
    assert_eq!(t.render(&json!([]), &options).unwrap(), "<s>genFalse126 Jul 2024</s>");
    // Without a fixed time: the local date (format as a year, checked loosely).
    let local =
        ChatTemplate::new("{{ strftime_now('%Y') }}").unwrap().render(&json!([]), &RenderOptions::default()).unwrap();
    assert!(local.len() == 4 && local.starts_with('2'), "{local}");
}

#[test]
fn python_methods_and_loop_controls() {
    let t = "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}{{ m.content.strip().upper() }}{% for k, v in m.items() %}{{ k }}{% endfor %}{% endfor %}";
    assert_eq!(
        render(t, json!([{"role": "user", "content": "  hi "}, {"role": "x", "content": "no"}])).unwrap(),
        "HIrolecontent"
    );
}

#[test]
fn generation_tag_renders_its_body() {
    let t = "{% for m in messages %}{%- generation -%}\n[{{ m.content }}]\n{%- endgeneration -%}{% endfor %}";
    assert_eq!(one(t).unwrap(), "[hi]");
}

#[test]
fn raise_exception_is_a_refusal_with_the_message() {
    let e = one("{% if messages[0].role == 'user' %}{{ raise_exception('System role first, please') }}{% endif %}")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("refused the conversation: System role first, please"), "{}", e.message());
}

#[test]
fn syntax_errors_name_the_line() {
    let e = ChatTemplate::new("ok\n{% for m in messages %}\n{{ m.content }").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("syntax error") && e.message().contains("line 3"), "{}", e.message());
    let e = ChatTemplate::new("{% frobnicate %}").unwrap_err();
    assert!(e.message().contains("syntax error"), "{}", e.message());
}

#[test]
fn markup_concatenation_is_refused_by_name() {
    let e = one("{{ 'a'|safe + messages[0].content }}").unwrap_err();
    assert!(e.message().contains("|safe +"), "{}", e.message());
    // `|safe` alone is fine.
    assert_eq!(one("{{ messages[0].content|safe }}").unwrap(), "hi");
}

// ---- hostile templates -------------------------------------------------

#[test]
fn endless_loops_run_out_of_fuel() {
    let e = one("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    assert!(e.message().contains("work limit"), "{}", e.message());
    // Recursive loop over a self-referencing structure: bounded too.
    let e = one("{% for m in messages * 100000 recursive %}{{ loop(messages * 100000) }}{% endfor %}").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded | ErrorKind::DepthExceeded), "{e}");
}

#[test]
fn deep_recursion_is_refused() {
    let e = one("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DepthExceeded, "{e}");
    assert!(e.message().contains("recursion"), "{}", e.message());
    // Nesting in the source itself: the parser's limit.
    let deep = "{% if true %}".repeat(5000);
    let e = ChatTemplate::new(&deep).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DepthExceeded | ErrorKind::InvalidArgument), "{e}");
}

#[test]
fn huge_output_and_huge_values_are_refused() {
    // Output: the byte cap (fuel set high so the cap is what stops it).
    let t = ChatTemplate::new("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}").unwrap();
    let options = RenderOptions {
        limits: RenderLimits { fuel: Some(u64::MAX / 2), max_output_bytes: 1 << 20, ..RenderLimits::default() },
        ..RenderOptions::default()
    };
    let e = t.render(&json!([]), &options).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    assert!(e.message().contains("output exceeds the limit of 1048576 bytes"), "{}", e.message());
    // With default limits the same template runs out of fuel first.
    assert_eq!(t.render(&json!([]), &RenderOptions::default()).unwrap_err().kind(), ErrorKind::LimitExceeded);
    // Doubling a string held in a namespace: fuel charges the data, so memory
    // stays bounded (2^60 bytes would be asked for otherwise).
    let e = one("{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    let e = one("{{ 'a' * 1000000000000 }}").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded | ErrorKind::InvalidArgument), "{e}");
    // A repeated list is lazy (its length costs nothing); joining it is not.
    assert_eq!(one("{{ (messages * 100000000) | length }}").unwrap(), "100000000");
    let e = one("{{ (messages * 100000000) | join(',') }}").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded | ErrorKind::InvalidArgument), "{e}");
}

#[test]
fn no_host_objects_files_or_environment() {
    // Python's escape routes lead nowhere: attributes of plain data are
    // undefined (printing nothing), and going further is an error.
    for probe in [
        "{{ messages.__class__ }}",
        "{{ ''.__class__.__mro__ }}",
        "{{ messages[0].__dict__ }}",
        "{{ range.__globals__ }}",
        "{{ namespace.__init__.__globals__['os'] }}",
        "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
        "{{ lipsum.__globals__ }}",
        "{{ self.__init__.__globals__ }}",
        "{{ config }}{{ request }}{{ environ }}{{ env }}",
        "{{ raise_exception.__globals__ }}",
        "{{ dict.__base__.__subclasses__() }}",
    ] {
        match one(probe) {
            Ok(out) => assert!(out.is_empty(), "{probe} printed {out:?}"),
            Err(e) => assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{probe}: {e}"),
        }
    }
    // No loader: include, import and extends find nothing.
    for probe in ["{% include '/etc/passwd' %}", "{% import '/etc/passwd' as p %}", "{% extends '/etc/passwd' %}"] {
        let e = one(probe).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{probe}: {e}");
    }
    // No debug dump of the environment.
    assert!(one("{{ debug() }}").is_err());
}

#[test]
fn messages_must_be_an_array_of_objects() {
    let t = ChatTemplate::new("x").unwrap();
    assert_eq!(
        t.render(&json!({"role": "user"}), &RenderOptions::default()).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let e = t.render(&json!([{"role": "user"}, "text"]), &RenderOptions::default()).unwrap_err();
    assert!(e.message().contains("message 1"), "{}", e.message());
}

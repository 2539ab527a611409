use serde_json::json;

use super::*;

fn render(source: &str, messages: Json) -> Result<String> {
    ChatTemplate::new(source)?.render(&messages, &RenderOptions::default())
}

#[test]
fn renders_messages_with_trim_and_lstrip_blocks() {
    let t = "{% for m in messages %}\n  {{ m.role }}: {{ m.content }}\n{% endfor %}";
    let out = render(t, json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": null}])).unwrap();
    assert_eq!(out, "  user: hi\n  assistant: \n");
}

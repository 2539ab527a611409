//! Golden tests from OpenAI's counting guide, whose figures were confirmed
//! against the API by its authors.

use super::*;

fn acct(model_encoding: Encoding) -> Accountant {
    Accountant::new(Tokenizer::new(model_encoding).unwrap(), Framing::for_encoding(model_encoding))
}

const JARGON: &str = r#"[
 {"role": "system", "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
 {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
 {"role": "system", "name": "example_assistant", "content": "Things working well together will increase revenue."},
 {"role": "system", "name": "example_user", "content": "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
 {"role": "system", "name": "example_assistant", "content": "Let's talk later when we're less busy about how to do better."},
 {"role": "user", "content": "This late pivot means we don't have time to boil the ocean for the client deliverable."}
]"#;

const WEATHER: &str = r#"{"messages": [
  {"role": "system", "content": "You are a helpful assistant that can answer to questions about the weather."},
  {"role": "user", "content": "What's the weather like in San Francisco?"}],
 "tools": [{"type": "function", "function": {"name": "get_current_weather",
   "description": "Get the current weather in a given location",
   "parameters": {"type": "object", "properties": {
     "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
     "unit": {"type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"]}},
   "required": ["location"]}}}]}"#;

#[test]
fn guide_messages_example_gpt4o_124_gpt4_129() {
    let c = Conversation::parse(JARGON, None).unwrap();
    assert_eq!(acct(Encoding::O200kBase).conversation(&c).unwrap(), 124);
    assert_eq!(acct(Encoding::Cl100kBase).conversation(&c).unwrap(), 129);
}

#[test]
fn guide_tools_example_gpt4o_101_gpt4_105() {
    let c = Conversation::parse(WEATHER, None).unwrap();
    assert_eq!(acct(Encoding::O200kBase).conversation(&c).unwrap(), 101);
    assert_eq!(acct(Encoding::Cl100kBase).conversation(&c).unwrap(), 105);
}

#[test]
fn tool_calls_and_results_are_counted() {
    let a = acct(Encoding::O200kBase);
    let t = Tokenizer::new(Encoding::O200kBase).unwrap();
    let c = Conversation::parse(
        r#"[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"src/main.rs\"}"}}]}]"#,
        None,
    )
    .unwrap();
    let expected = 3
        + t.count("assistant").unwrap()
        + t.count("read_file").unwrap()
        + t.count("{\"path\":\"src/main.rs\"}").unwrap()
        + t.count("functions.read_file").unwrap()
        + a.framing().tokens_per_tool_call;
    assert_eq!(a.message(&c.messages[0]).unwrap(), expected);
}

#[test]
fn image_tile_formula() {
    assert_eq!(image_tokens(Some("low"), Some(4096), Some(4096)), 85);
    // OpenAI's examples: 1024x1024 high -> 765; 2048x4096 high -> 1105.
    assert_eq!(image_tokens(Some("high"), Some(1024), Some(1024)), 765);
    assert_eq!(image_tokens(Some("high"), Some(2048), Some(4096)), 1105);
    assert_eq!(image_tokens(None, None, None), 765);
    assert_eq!(image_tokens(Some("auto"), Some(512), Some(512)), 255);
}

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
        + a.framing().tokens_per_tool_call
        // A compact string member (`"path":"..."`): 1 more (measured).
        + 1;
    assert_eq!(a.message(&c.messages[0]).unwrap(), expected);
}

/// The +1 for a compact string member is one per call, and only for one:
/// numbers and spaced JSON cost their text.
#[test]
fn compact_string_member_costs_one_per_call() {
    let a = acct(Encoding::O200kBase);
    let t = Tokenizer::new(Encoding::O200kBase).unwrap();
    let call = |args: &str| {
        let body = serde_json::json!([{"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": args}}]}]);
        let c = Conversation::parse(&body.to_string(), None).unwrap();
        a.message(&c.messages[0]).unwrap() - t.count(args).unwrap()
    };
    let base = call(r#"{"n":2}"#);
    assert_eq!(call(r#"{"q": "x"}"#), base);
    assert_eq!(call(r#"{"q":"x"}"#), base + 1);
    assert_eq!(call(r#"{"q":"x","r":"y","s":"z"}"#), base + 1);
}

/// A forced `tool_choice` costs the reply's recipient ` to=functions.{name}`
/// plus a constant: a longer name costs more.
#[test]
fn forced_tool_choice_costs_its_recipient() {
    let a = acct(Encoding::O200kBase);
    let t = Tokenizer::new(Encoding::O200kBase).unwrap();
    let body = |choice: &str| {
        let mut v: serde_json::Value = serde_json::from_str(WEATHER).unwrap();
        v["tool_choice"] = serde_json::from_str(choice).unwrap();
        a.conversation(&Conversation::parse(&v.to_string(), None).unwrap()).unwrap()
    };
    let auto = body(r#""auto""#);
    let forced = body(r#"{"type":"function","function":{"name":"get_current_weather"}}"#);
    let recipient = t.count(" to=functions.get_current_weather").unwrap();
    assert_eq!(forced, auto + recipient + a.framing().forced_tool_choice as usize);
}

/// Shapes whose rendering is not fully known make the request an estimate
/// on an exact model: structured output, parallel calls, nested tool
/// schemas. A plain tool request is exact; Anthropic framing reports none
/// (its counts are estimates per model).
#[test]
fn estimate_reasons_per_request() {
    let a = acct(Encoding::O200kBase);
    let reasons = |body: &str| a.estimate_reasons(&Conversation::parse(body, None).unwrap());
    assert!(reasons(WEATHER).is_empty());
    let structured = r#"{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema",
        "json_schema":{"name":"A","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}"#;
    assert_eq!(reasons(structured), vec![EstimateReason::StructuredOutput]);
    let json_object = r#"{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}"#;
    assert!(reasons(json_object).is_empty());
    let parallel = r#"[{"role":"assistant","content":null,"tool_calls":[
          {"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}},
          {"id":"c2","type":"function","function":{"name":"b","arguments":"{}"}}]}]"#;
    assert_eq!(reasons(parallel), vec![EstimateReason::ParallelToolCalls]);
    let nested = r#"{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f",
        "parameters":{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"string"}}}}}}}]}"#;
    assert_eq!(reasons(nested), vec![EstimateReason::NestedToolSchema]);
    let claude = Accountant::new(
        Tokenizer::new(Encoding::O200kBase).unwrap(),
        Framing::for_model("claude-sonnet-4-5", Encoding::O200kBase),
    );
    assert!(claude.estimate_reasons(&Conversation::parse(parallel, None).unwrap()).is_empty());
}

/// An image whose size cannot be read is an estimate (issue 36, hold-out
/// set 2: OpenLLMetry's test_vision #0, gpt-4-vision-preview, a URL image
/// of 800x400 billed 438 and counted 778 as exact). At `detail: low` the
/// size does not matter: exact.
#[test]
fn image_of_unknown_size_is_an_estimate() {
    let (a, _) = Accountant::for_model(&crate::ModelRegistry::builtin(), "gpt-4-vision-preview").unwrap();
    let body = |detail: &str| {
        format!(
            r#"{{"model":"gpt-4-vision-preview","messages":[{{"role":"user","content":[{{"type":"text","text":"What is in this image?"}},{{"type":"image_url","image_url":{{"url":"https://source.unsplash.com/8xznAGy4HcY/800x400"{detail}}}}}]}}]}}"#
        )
    };
    let reasons = a.estimate_reasons(&Conversation::parse(&body(""), None).unwrap());
    assert!(!reasons.is_empty(), "counted as exact");
    assert_eq!(format!("{reasons:?}"), "[ImageSize]");
    let low = Conversation::parse(&body(r#","detail":"low""#), None).unwrap();
    assert!(a.estimate_reasons(&low).is_empty());
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

/// gpt-5-mini and gpt-5-nano bill 1.2 and 1.5 per 32-pixel patch (the
/// pricing page's calculator; measured on a 640x480 image: 360 and 450).
#[test]
fn gpt5_small_models_patch_multipliers() {
    let image = |model: &str| {
        Accountant::new(Tokenizer::new(Encoding::O200kBase).unwrap(), Framing::for_model(model, Encoding::O200kBase))
            .image(None, Some(640), Some(480))
    };
    assert_eq!(image("gpt-5-mini"), 360);
    assert_eq!(image("gpt-5-nano-2025-08-07"), 450);
    assert_eq!(image("gpt-4.1-mini"), 486);
}

/// gpt-5's hidden prompt is charged with tools only: measured, a request
/// without tools is billed its messages alone (tests/fixtures/billing).
#[test]
fn gpt5_hidden_prompt_only_with_tools() {
    let a =
        Accountant::new(Tokenizer::new(Encoding::O200kBase).unwrap(), Framing::for_model("gpt-5", Encoding::O200kBase));
    let bare = Conversation::parse(r#"[{"role":"user","content":"hi"}]"#, None).unwrap();
    let plain = acct(Encoding::O200kBase);
    // gpt-5's reply priming is 2, not 3 (issue 36: plain-text requests 1 over).
    assert_eq!(a.conversation(&bare).unwrap(), plain.conversation(&bare).unwrap() - 1);
    let tools = Conversation::parse(WEATHER, None).unwrap();
    assert_eq!(a.conversation(&tools).unwrap(), plain.conversation(&tools).unwrap() + GPT5_HIDDEN_PROMPT - 1);
}

/// A `name` on a tool message is not billed (measured on the tuning set).
#[test]
fn tool_message_name_is_not_billed() {
    let a = acct(Encoding::O200kBase);
    let with = r#"[{"role":"tool","tool_call_id":"c1","name":"read_file","content":"ok"}]"#;
    let without = r#"[{"role":"tool","tool_call_id":"c1","content":"ok"}]"#;
    let count = |s: &str| a.message(&Conversation::parse(s, None).unwrap().messages[0]).unwrap();
    assert_eq!(count(with), count(without));
}

/// Two calls in one message are counted as one `multi_tool_use.parallel`
/// call wrapping both (plus each result's `functions.{name}` author), with
/// the estimate's margin on the wrapped call.
#[test]
fn parallel_calls_are_one_wrapped_call() {
    let a = acct(Encoding::O200kBase);
    let t = Tokenizer::new(Encoding::O200kBase).unwrap();
    let c = Conversation::parse(
        r#"[{"role":"assistant","content":null,"tool_calls":[
          {"id":"c1","type":"function","function":{"name":"a","arguments":"{\"x\":1}"}},
          {"id":"c2","type":"function","function":{"name":"b","arguments":"{\"y\":2}"}}]}]"#,
        None,
    )
    .unwrap();
    let wrapped = r#"{"tool_uses":[{"recipient_name":"functions.a","parameters":{"x":1}},{"recipient_name":"functions.b","parameters":{"y":2}}]}"#;
    let expected = 3
        + t.count("assistant").unwrap()
        + t.count("multi_tool_use.parallel").unwrap()
        + t.count(wrapped).unwrap()
        + (t.count(wrapped).unwrap() * PARALLEL_MARGIN_PERCENT).div_ceil(100)
        + a.framing().tokens_per_tool_call
        + t.count("functions.a").unwrap()
        + t.count("functions.b").unwrap();
    assert_eq!(a.message(&c.messages[0]).unwrap(), expected);
}

/// Anthropic does not bill an earlier turn's thinking (documented); Claude
/// Opus 4.5 and later keep it. A turn with a tool call keeps its thinking.
#[test]
fn anthropic_turn_thinking_is_not_billed() {
    let body = |content: &str| {
        format!(
            r#"{{"model":"m","max_tokens":1,"messages":[{{"role":"user","content":"hi"}},{{"role":"assistant","content":{content}}},{{"role":"user","content":"and?"}}]}}"#
        )
    };
    let with = body(
        r#"[{"type":"thinking","thinking":"Let me think about this greeting.","signature":"x"},{"type":"text","text":"Hello"}]"#,
    );
    let without = body(r#"[{"type":"text","text":"Hello"}]"#);
    let count = |model: &str, b: &str| {
        let a = Accountant::new(
            Tokenizer::new(Encoding::O200kBase).unwrap(),
            Framing::for_model(model, Encoding::O200kBase),
        );
        a.conversation(&Conversation::parse(b, Some(crate::chat::Format::Anthropic)).unwrap()).unwrap()
    };
    assert_eq!(count("claude-sonnet-4-5", &with), count("claude-sonnet-4-5", &without));
    assert!(count("claude-opus-4-5", &with) > count("claude-opus-4-5", &without));
    let tool = body(
        r#"[{"type":"thinking","thinking":"Call it.","signature":"x"},{"type":"tool_use","id":"t1","name":"f","input":{}}]"#,
    );
    let tool_bare = body(r#"[{"type":"tool_use","id":"t1","name":"f","input":{}}]"#);
    assert!(count("claude-sonnet-4-5", &tool) > count("claude-sonnet-4-5", &tool_bare));
}

/// Anthropic counts a long run of one character at a token per 3 characters
/// at least (its tokenizer does not merge runs as OpenAI's encodings do);
/// OpenAI counts are untouched, short runs and whitespace too.
#[test]
fn anthropic_repeated_runs_cost_a_token_per_three_characters() {
    let claude = Accountant::new(
        Tokenizer::new(Encoding::O200kBase).unwrap(),
        Framing::for_model("claude-opus-4-6", Encoding::O200kBase),
    );
    let t = Tokenizer::new(Encoding::O200kBase).unwrap();
    let run = "a".repeat(3000);
    let text = format!("Summarise this: {run}");
    let part = Part::Text(text.clone());
    assert_eq!(claude.part(&part).unwrap(), t.count(&text).unwrap() + 1000 - t.count(&run).unwrap());
    assert_eq!(acct(Encoding::O200kBase).part(&part).unwrap(), t.count(&text).unwrap());
    let short = Part::Text("a".repeat(63));
    assert_eq!(claude.part(&short).unwrap(), t.count(&"a".repeat(63)).unwrap());
    let spaces = Part::Text(" ".repeat(500));
    assert_eq!(claude.part(&spaces).unwrap(), t.count(&" ".repeat(500)).unwrap());
    let dashes = "-".repeat(64);
    assert_eq!(repeated_runs(&format!("xx{dashes}yy")), vec![dashes.as_str()]);
    assert!(repeated_runs(&format!("xx{}yy", &dashes[1..])).is_empty());
    assert_eq!(repeated_runs(&format!("é{}", "é".repeat(70))), vec!["é".repeat(71).as_str()]);
}

/// The legacy `functions` parameter (and `function_call`) is the same tool
/// block as `tools` of type function: it was counted as no tools at all
/// (56-67 under on gpt-3.5-turbo / gpt-4, issue 36). Measured on gpt-fn's
/// recordings: its properties' `title`s are not billed, and a forcing
/// `function_call` costs its recipient plus [`LEGACY_FORCED_FUNCTION`].
#[test]
fn legacy_functions_count_like_tools() {
    let tools: Value = serde_json::from_str(WEATHER).unwrap();
    let defs: Vec<Value> = tools["tools"].as_array().unwrap().iter().map(|t| t["function"].clone()).collect();
    let messages = tools["messages"].clone();
    let legacy = |functions: &Value, call: Value| {
        let body = serde_json::json!({"messages": messages, "functions": functions, "function_call": call});
        Conversation::parse(&body.to_string(), Some(crate::chat::Format::OpenAi)).unwrap()
    };
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let a = acct(enc);
        let t = Tokenizer::new(enc).unwrap();
        let with_tools = a.conversation(&Conversation::parse(WEATHER, None).unwrap()).unwrap();
        let auto = legacy(&Value::from(defs.clone()), "auto".into());
        assert_eq!(a.conversation(&auto).unwrap(), with_tools, "{enc:?}");
        assert!(a.estimate_reasons(&auto).is_empty());
        // Property titles are not billed for legacy functions.
        let mut titled = Value::from(defs.clone());
        titled[0]["parameters"]["properties"]["location"]["title"] = "Location".into();
        assert_eq!(a.conversation(&legacy(&titled, "auto".into())).unwrap(), with_tools, "{enc:?}");
        // `function_call` naming a function forces it.
        let forced = legacy(&Value::from(defs.clone()), serde_json::json!({"name": "get_current_weather"}));
        let recipient = t.count(" to=functions.get_current_weather").unwrap() as i64;
        assert_eq!(a.conversation(&forced).unwrap() as i64, with_tools as i64 + recipient + LEGACY_FORCED_FUNCTION);
    }
    // An entry that is not a function object is counted as its JSON, an
    // estimate (not refused: such requests were counted before).
    let odd = serde_json::json!([{"description": "no name"}]);
    let bad = legacy(&odd, "auto".into());
    let a = acct(Encoding::O200kBase);
    let t = Tokenizer::new(Encoding::O200kBase).unwrap();
    let plain = Conversation::parse(&serde_json::json!({"messages": messages}).to_string(), None).unwrap();
    assert_eq!(a.conversation(&bad).unwrap(), a.conversation(&plain).unwrap() + t.count(&odd.to_string()).unwrap());
    assert_eq!(a.estimate_reasons(&bad), vec![EstimateReason::OtherToolType]);
    let err = bad.defined_tools().unwrap_err();
    assert!(err.to_string().contains("functions[0]"), "{err}");
}

/// Tool shapes the tuning set does not measure make the request an
/// estimate (issue 36: each was counted `exact: true` and over).
#[test]
fn unmeasured_tool_shapes_are_estimates() {
    let a = acct(Encoding::O200kBase);
    let reasons = |tools: Value, extra: Value| {
        let mut body = serde_json::json!({"messages": [{"role": "user", "content": "hi"}], "tools": tools});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        a.estimate_reasons(&Conversation::parse(&body.to_string(), Some(crate::chat::Format::OpenAi)).unwrap())
    };
    let f = |name: &str, description: &str, strict: Option<bool>| {
        let mut v = serde_json::json!({"type": "function", "function": {"name": name, "description": description,
            "parameters": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}});
        if let Some(s) = strict {
            v["function"]["strict"] = s.into();
        }
        v
    };
    let none = Value::Null;
    assert!(reasons(serde_json::json!([f("a", "one line", None), f("b", "two\nlines", Some(true))]), none.clone())
        .is_empty());
    let bare = serde_json::json!([{"type": "function", "function": {"name": "ping", "description": "",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": false}}}]);
    assert_eq!(reasons(bare, none.clone()), vec![EstimateReason::BareTool]);
    let no_params = serde_json::json!([{"type": "function", "function": {"name": "ping"}}]);
    assert_eq!(reasons(no_params, none.clone()), vec![EstimateReason::BareTool]);
    let allowed = serde_json::json!({"tool_choice": {"type": "allowed_tools", "mode": "auto",
        "tools": [{"type": "function", "function": {"name": "a"}}]}});
    assert_eq!(reasons(serde_json::json!([f("a", "d", None)]), allowed), vec![EstimateReason::AllowedTools]);
    let mcp = serde_json::json!([f("a", "d", None), {"type": "custom", "custom": {"name": "raw", "description": "d"}}]);
    assert_eq!(reasons(mcp, none.clone()), vec![EstimateReason::OtherToolType]);
    let long = serde_json::json!([f("a", "one\ntwo\nthree", None)]);
    assert_eq!(reasons(long, none.clone()), vec![EstimateReason::LongDescription]);
    let forced = serde_json::json!({"tool_choice": {"type": "function", "function": {"name": "out"}}});
    let mixed = serde_json::json!([f("a", "d", None), f("out", "d", Some(true))]);
    assert_eq!(reasons(mixed.clone(), forced.clone()), vec![EstimateReason::MixedStrictForced]);
    // Not forced, or all strict: measured.
    assert!(reasons(mixed, none).is_empty());
    assert!(reasons(serde_json::json!([f("a", "d", Some(true)), f("out", "d", Some(true))]), forced).is_empty());
}

/// Anthropic structured output costs its schema plus a hidden prompt
/// (fitted; the schema alone was 131-145 under billed, issue 36).
#[test]
fn anthropic_structured_output_adds_its_prompt() {
    let claude = Accountant::new(
        Tokenizer::new(Encoding::O200kBase).unwrap(),
        Framing::for_model("claude-sonnet-4-5", Encoding::O200kBase),
    );
    let t = Tokenizer::new(Encoding::O200kBase).unwrap();
    let format = serde_json::json!({"type": "json_schema", "schema": {"type": "object", "properties": {"t": {"type": "number"}}}});
    let count = |extra: Value| {
        let mut body = serde_json::json!({"model": "claude-sonnet-4-5", "max_tokens": 10,
                                          "messages": [{"role": "user", "content": "75 degrees F."}]});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        claude
            .conversation(&Conversation::parse(&body.to_string(), Some(crate::chat::Format::Anthropic)).unwrap())
            .unwrap()
    };
    let plain = count(serde_json::json!({}));
    let expected = plain + t.count(&format.to_string()).unwrap() + ANTHROPIC_STRUCTURED_OUTPUT_PROMPT;
    assert_eq!(count(serde_json::json!({"output_format": format})), expected);
    assert_eq!(count(serde_json::json!({"output_config": {"format": format}})), expected);
}

/// Issue 36, OpenAI Responses: recorded requests (tests/fixtures/billing/
/// openai-responses.jsonl, tuning side) with the input tokens they were
/// billed.
mod responses {
    use super::*;
    use crate::chat::Format;

    fn count(model: &str, body: &str) -> (usize, Vec<EstimateReason>) {
        let (a, _) = Accountant::for_model(&crate::ModelRegistry::builtin(), model).unwrap();
        let c = Conversation::parse(body, Some(Format::Responses)).unwrap();
        (a.conversation(&c).unwrap(), a.estimate_reasons(&c))
    }

    /// o3-mini, one user message (pydantic-ai test_openai_responses_thinking_part_iter #0):
    /// billed 13; the guide's 3-token reply priming made it 14.
    #[test]
    fn reasoning_model_reply_priming_is_two() {
        let body = r#"{"include":["reasoning.encrypted_content"],"input":[{"content":"How do I cross the street?","role":"user"}],"model":"o3-mini","reasoning":{"effort":"high","summary":"detailed"},"stream":true}"#;
        assert_eq!(count("o3-mini", body), (13, vec![]));
        // The same conversation as a Chat request: the same rule.
        let chat = r#"{"model":"o3-mini","messages":[{"role":"user","content":"How do I cross the street?"}]}"#;
        let (a, _) = Accountant::for_model(&crate::ModelRegistry::builtin(), "o3-mini").unwrap();
        assert_eq!(a.conversation(&Conversation::parse(chat, None).unwrap()).unwrap(), 13);
    }

    /// gpt-5.4 with one tool (langchain-openai test_agent_loop #0): billed 53;
    /// counted 137 with gpt-5's hidden prompt, which Responses does not bill,
    /// and 54 with the Chat rule for a block without a system message.
    #[test]
    fn gpt5_tools_without_hidden_prompt() {
        let body = r#"{"input":[{"content":"What is the weather in San Francisco, CA?","role":"user","type":"message"}],"model":"gpt-5.4","stream":false,"tools":[{"description":"Get the weather for a location.","name":"get_weather","parameters":{"properties":{"location":{"type":"string"}},"required":["location"],"type":"object"},"type":"function"}]}"#;
        assert_eq!(count("gpt-5.4", body), (53, vec![]));
    }

    /// Described function tools on reasoning models are exact (issue 36).
    /// gpt-5-mini, pydantic-ai test_tool_choice_matrix[auto-openai_responses] #0:
    /// billed 50, counted 51 before. gpt-5.4 with `instructions`
    /// (test_cross_provider_capability_replay[openai-responses-gpt-5.4-anthropic-claude-sonnet-4-5] #0):
    /// billed 109, counted 107 before (the block joined the instructions).
    #[test]
    fn reasoning_model_tool_block() {
        let auto = r#"{"include":["reasoning.encrypted_content"],"input":[{"content":"What's the weather in Paris?","role":"user"}],"model":"gpt-5-mini","stream":false,"tool_choice":"auto","tools":[{"description":"Get the current weather for a city.","name":"get_weather","parameters":{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"strict":true,"type":"function"}]}"#;
        assert_eq!(count("gpt-5-mini", auto), (50, vec![]));
        let instructions = r#"{"include":["reasoning.encrypted_content"],"input":[{"content":"Can I get a refund on order-123?","role":"user"}],"instructions":"The following capabilities are deferred and can be loaded using the `load_capability` tool:\n- refunds: Refund policy tools.","model":"gpt-5.4","reasoning":{"context":"all_turns"},"stream":false,"tool_choice":"auto","tools":[{"description":"Load a capability to access its full instructions and tools.","name":"load_capability","parameters":{"additionalProperties":false,"description":"Typed arguments for a `load_capability` tool call.","properties":{"id":{"description":"The id of the capability to load.","type":"string"}},"required":["id"],"type":"object"},"strict":true,"type":"function"}]}"#;
        assert_eq!(count("gpt-5.4", instructions), (109, vec![]));
    }

    /// A forced function in Responses on a reasoning model does not add its
    /// recipient (pydantic-ai test_tool_choice_matrix[list_single-openai_responses] #0,
    /// gpt-5-mini: billed 68, counted 80 before); still an estimate.
    #[test]
    fn reasoning_model_forced_function() {
        let body = r#"{"include":["reasoning.encrypted_content"],"input":[{"content":"What's the weather in Paris?","role":"user"}],"model":"gpt-5-mini","stream":false,"tool_choice":{"name":"get_weather","type":"function"},"tools":[{"description":"Get weather for a city","name":"get_weather","parameters":{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"strict":true,"type":"function"},{"description":"Get time in a timezone","name":"get_time","parameters":{"additionalProperties":false,"properties":{"timezone":{"type":"string"}},"required":["timezone"],"type":"object"},"strict":true,"type":"function"}]}"#;
        let (n, reasons) = count("gpt-5-mini", body);
        assert_eq!(n, 69);
        assert_eq!(reasons, vec![EstimateReason::UnmeasuredResponses]);
    }

    /// A call item given with its `id` that no answer followed is the
    /// current turn's, even with a user message after it: its stored
    /// reasoning is attached (pydantic-ai
    /// test_openai_responses_history_with_combined_tool_call_id #0, gpt-5:
    /// billed 103, counted 93).
    #[test]
    fn unanswered_stored_call_is_the_current_turn() {
        let body = r#"{"include":["reasoning.encrypted_content"],"input":[{"content":"What is the largest city in the user country?","role":"user"},{"arguments":"{}","call_id":"call_ZWkVhdUjupo528U9dqgFeRkH","id":"fc_68477f0bb8e4819cba6d781e174d77f8001fd29e2d5573f7","name":"get_user_country","type":"function_call"},{"call_id":"call_ZWkVhdUjupo528U9dqgFeRkH","output":"Mexico","type":"function_call_output"},{"content":"What is the largest city in the user country?","role":"user"}],"model":"gpt-5","stream":false,"tool_choice":"required","tools":[{"description":"The final response which ends this conversation","name":"final_result","parameters":{"additionalProperties":false,"properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"type":"object"},"strict":true,"type":"function"}]}"#;
        assert_eq!(count("gpt-5", body).1, vec![EstimateReason::ReasoningItem]);
    }

    /// gpt-5, an assistant message replayed between a user and a system
    /// message (pydantic-ai test_unsupported_model_calls_the_tool_the_announcement_revealed #0):
    /// billed 97; without the assistant's channel tokens it was 5 under.
    #[test]
    fn reasoning_model_assistant_message_channel() {
        let body = r#"{"include":["reasoning.encrypted_content"],"input":[{"content":"Call lookup_refund_policy with order_id order-123. Do not answer directly.","role":"user"},{"content":"I will load the refund capability.","role":"assistant"},{"content":"The following tool(s) are now available: `lookup_refund_policy`","role":"system"}],"model":"gpt-5","stream":false,"tool_choice":"auto","tools":[{"description":"Look up the refund policy for an order.","name":"lookup_refund_policy","parameters":{"additionalProperties":false,"properties":{"order_id":{"type":"string"}},"required":["order_id"],"type":"object"},"strict":true,"type":"function"}]}"#;
        assert_eq!(count("gpt-5", body), (97, vec![]));
    }

    fn with_reasoning(model: &str, reasoning: serde_json::Value, after: serde_json::Value) -> String {
        serde_json::json!({"model": model, "input": [
            {"role": "user", "content": "How do I cross the street?"},
            reasoning,
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Look both ways."}]},
            after,
        ]})
        .to_string()
    }

    /// o3-mini replaying an earlier turn's reasoning item by `id` after its
    /// answer (pydantic-ai test_openai_responses_model_thinking_part #1 as
    /// recorded at df14088, 2025-04; Responses hold-out set 2): billed 424,
    /// counted 419. Counted as exact before.
    #[test]
    fn replayed_reasoning_by_id_is_an_estimate() {
        let body = serde_json::json!({"model": "o3-mini", "reasoning": {"effort": "high", "summary": "detailed"},
            "input": [{"role": "user", "content": "How do I cross the street?"},
                {"role": "assistant", "content": "Look both ways."},
                {"type": "reasoning", "id": "rs_68034841ab2881918a8c210e3d988b9208c845d2be9bcdd8",
                 "summary": [{"type": "summary_text", "text": "Crossing safely."}]},
                {"role": "user", "content": "And a river?"}]});
        let (_, reasons) = count("o3-mini", &body.to_string());
        assert!(!reasons.is_empty(), "counted as exact");
    }

    /// A replayed reasoning item's summary is not billed, and an earlier
    /// turn's reasoning is dropped (measured: pydantic-ai
    /// test_openai_responses_model_thinking_part #1, gpt-5, billed 314 with
    /// a 3,813-character summary and 13,176 characters of encrypted
    /// reasoning replayed; counted 4,297 before).
    #[test]
    fn earlier_turn_reasoning_and_summary_not_billed() {
        let item = serde_json::json!({"type": "reasoning", "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "The user asks how to cross a street. ".repeat(40)}],
            "encrypted_content": "gAAAAB".repeat(500)});
        let user = serde_json::json!({"role": "user", "content": "And a river?"});
        let with = with_reasoning("gpt-5", item.clone(), user.clone());
        let mut without: serde_json::Value = serde_json::from_str(&with).unwrap();
        without["input"].as_array_mut().unwrap().remove(1);
        let (n, reasons) = count("gpt-5", &with);
        assert_eq!(n, count("gpt-5", &without.to_string()).0);
        // An estimate all the same: the second Responses hold-out had one
        // such request 5 under (issue 36).
        assert_eq!(reasons, vec![EstimateReason::ReasoningItem]);
        // A model that keeps earlier turns' reasoning (asked to, here):
        // counted (by the encrypted length), and an estimate.
        let mut keep: serde_json::Value = serde_json::from_str(&with).unwrap();
        keep["reasoning"] = serde_json::json!({"context": "all_turns"});
        let (k, reasons) = count("gpt-5", &keep.to_string());
        assert_eq!(k, n + 4 + 3000usize.div_ceil(4));
        assert_eq!(reasons, vec![EstimateReason::ReasoningItem]);
    }

    /// The current turn's reasoning (a tool loop: no user message after
    /// it) is billed, but its size is the provider's: an estimate, and its
    /// summary is still not counted.
    #[test]
    fn current_turn_reasoning_is_an_estimate() {
        let item = serde_json::json!({"type": "reasoning", "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Plan the call. ".repeat(100)}], "encrypted_content": "Z".repeat(400)});
        let body = serde_json::json!({"model": "gpt-5", "input": [
            {"role": "user", "content": "Weather?"}, item,
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "sunny"}]})
        .to_string();
        let (n, reasons) = count("gpt-5", &body);
        assert_eq!(reasons, vec![EstimateReason::ReasoningItem]);
        let mut without: serde_json::Value = serde_json::from_str(&body).unwrap();
        without["input"].as_array_mut().unwrap().remove(1);
        // Framed as a message, plus 400 / 4 for the encrypted reasoning.
        assert_eq!(n, count("gpt-5", &without.to_string()).0 + 4 + 100);
    }

    /// `instructions: ""`, images and server-side items are not measured:
    /// estimates.
    #[test]
    fn unmeasured_shapes_are_estimates() {
        let empty = r#"{"model":"gpt-4o","instructions":"","input":"Hi"}"#;
        assert_eq!(count("gpt-4o", empty).1, vec![EstimateReason::UnmeasuredResponses]);
        let server = r#"{"model":"gpt-4o","input":[{"role":"user","content":"Hi"},{"type":"web_search_call","id":"ws","status":"completed"}]}"#;
        assert_eq!(count("gpt-4o", server).1, vec![EstimateReason::ServerItem]);
        let plain = r#"{"model":"gpt-4o","instructions":"Be brief.","input":"Hi"}"#;
        assert!(count("gpt-4o", plain).1.is_empty());
    }
}

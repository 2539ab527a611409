//! Issue 53: the Chat `tool_choice` shapes and Responses function tools on
//! gpt-4o models, each from a recording of billing set 3's fit part
//! (tests/fixtures/billing/*-3.jsonl; docs/accuracy.md has the check part).

use super::*;
use crate::chat::Format;

fn count(model: &str, body: &str, format: Format) -> (usize, Vec<EstimateReason>) {
    let (a, _) = Accountant::for_model(&crate::ModelRegistry::builtin(), model).unwrap();
    let c = Conversation::parse(body, Some(format)).unwrap();
    (a.conversation(&c).unwrap(), a.estimate_reasons(&c))
}

/// A forced function with `parallel_tool_calls: false` on gpt-4o (mirascope
/// 2.8.2 test_structured_output_resume_stream/tool/openai_gpt_4o_completions #0):
/// billed 109, counted 111 before; without the switch it costs 2 more.
#[test]
fn forced_function_without_parallel_calls() {
    let body = r#"{"messages":[{"content":"Always respond to the user's query using the __mirascope_formatted_output_tool__ tool for structured output.","role":"system"},{"content":"Choose a lucky number between 1 and 10","role":"user"}],"model":"gpt-4o","parallel_tool_calls":false,"stream":true,"stream_options":{"include_usage":true},"tool_choice":{"function":{"name":"__mirascope_formatted_output_tool__"},"type":"function"},"tools":[{"function":{"description":"Use this tool to extract data in int format for a final response.","name":"__mirascope_formatted_output_tool__","parameters":{"additionalProperties":false,"properties":{"output":{"title":"Output","type":"integer"}},"required":["output"],"type":"object"},"strict":true},"type":"function"}]}"#;
    assert_eq!(count("gpt-4o", body, Format::OpenAi), (109, vec![]));
    let parallel = body.replace(r#""parallel_tool_calls":false,"#, "");
    assert_eq!(count("gpt-4o", &parallel, Format::OpenAi).0, 109 + FORCED_SERIAL_LESS as usize);
}

/// A forced function in Chat on a reasoning model carries no recipient, as
/// in Responses (pydantic-ai test_tool_choice_matrix[list_single-openai] #0,
/// gpt-5-mini): billed 150, counted 163 before, 153 now (3 over, as the
/// same test's unforced requests are 2 over); an estimate.
#[test]
fn forced_function_on_reasoning_model_in_chat() {
    let body = r#"{"messages":[{"content":"What's the weather in Paris?","role":"user"}],"model":"gpt-5-mini","stream":false,"tool_choice":{"function":{"name":"get_weather"},"type":"function"},"tools":[{"function":{"description":"Get weather for a city","name":"get_weather","parameters":{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"strict":true},"type":"function"},{"function":{"description":"Get time in a timezone","name":"get_time","parameters":{"additionalProperties":false,"properties":{"timezone":{"type":"string"}},"required":["timezone"],"type":"object"},"strict":true},"type":"function"}]}"#;
    let (n, reasons) = count("gpt-5-mini", body, Format::OpenAi);
    assert_eq!(n, 153);
    assert_eq!(reasons, vec![EstimateReason::ForcedOnReasoningModel]);
    // Unforced, the same tools count the same and are exact.
    let auto = body.replace(r#""tool_choice":{"function":{"name":"get_weather"},"type":"function"},"#, "");
    assert_eq!(count("gpt-5-mini", &auto, Format::OpenAi), (153, vec![]));
}

/// `tool_choice: "required"` counts as `auto` and is an estimate on gpt-4o
/// (not measured on the fit part); on a reasoning model it is exact.
#[test]
fn required_tool_choice_is_an_estimate_on_gpt_4o() {
    let body = |model: &str, choice: &str| {
        serde_json::json!({"model": model, "tool_choice": choice,
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Get weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]})
        .to_string()
    };
    let (auto, none) = count("gpt-4o", &body("gpt-4o", "auto"), Format::OpenAi);
    assert!(none.is_empty());
    assert_eq!(
        count("gpt-4o", &body("gpt-4o", "required"), Format::OpenAi),
        (auto, vec![EstimateReason::RequiredToolChoice])
    );
    assert!(count("gpt-5-mini", &body("gpt-5-mini", "required"), Format::OpenAi).1.is_empty());
}

/// Responses function tools on gpt-4o models without instructions or a
/// system item are exact (mirascope 2.8.2 test_model_call_with_tools #0,
/// gpt-4o-mini: billed 65, counted 66, an estimate before); with
/// `instructions`, a system item, an undescribed function or another model
/// family they stay estimates.
#[test]
fn responses_function_tools_on_gpt_4o() {
    let body = r#"{"input":[{"content":"What's the weather like in San Francisco?","role":"user"}],"model":"gpt-4o-mini","tools":[{"description":"Get the current weather in a given location.","name":"get_current_weather","parameters":{"additionalProperties":false,"properties":{"location":{"title":"Location","type":"string"},"unit":{"default":"fahrenheit","title":"Unit","type":"string"}},"required":["location"],"type":"object"},"strict":false,"type":"function"}]}"#;
    assert_eq!(count("gpt-4o-mini", body, Format::Responses), (66, vec![]));
    let unmeasured = vec![EstimateReason::UnmeasuredResponses];
    let instructions = body.replacen('{', r#"{"instructions":"Be brief.","#, 1);
    assert_eq!(count("gpt-4o-mini", &instructions, Format::Responses).1, unmeasured);
    let system = body.replace(r#""input":["#, r#""input":[{"content":"Be brief.","role":"developer"},"#);
    assert_eq!(count("gpt-4o-mini", &system, Format::Responses).1, unmeasured);
    let undescribed = body.replace(r#""description":"Get the current weather in a given location.","#, "");
    assert_eq!(count("gpt-4o-mini", &undescribed, Format::Responses).1, unmeasured);
    let gpt_41 = body.replace("gpt-4o-mini", "gpt-4.1");
    assert_eq!(count("gpt-4.1", &gpt_41, Format::Responses).1, unmeasured);
}

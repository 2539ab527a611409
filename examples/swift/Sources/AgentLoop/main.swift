// An agent loop with turnfit from Swift: a window that tracks the budget as
// tool results arrive, a pre-flight check before each model call, two-phase
// summarization when the window fills up, tool spans, and a call stack that
// refuses a handoff cycle. No model is called: the "model" and the "tool" are
// stand-ins. The same steps as examples/kotlin/AgentLoop.kt.
import Turnfit
import Foundation

func jsonObject(_ text: String) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
}

func jsonString(_ s: String) -> String {
    let data = try! JSONSerialization.data(withJSONObject: [s])
    let array = String(decoding: data, as: UTF8.self)
    return String(array.dropFirst().dropLast())  // ["..."] -> "..."
}

let window = try ContextWindow(model: "gpt-4o", budgetJson: #"{"context_window": 3000, "reserved_output": 500}"#)
let tracer = try Tracer()
try window.load(conversationJson: #"""
    [{"role": "system", "content": "You are a careful coding agent."},
     {"role": "user", "content": "Find why the tests fail in src/parser.rs and fix it."}]
    """#)
var summaries = 0
for round in 1...20 {
    let p = try window.preflight()
    print("round \(round): \(p.promptTokens) prompt tokens, \(Int(p.utilization * 100))% used, \(p.verdict)")
    if p.verdict != .fits {
        let outcome = jsonObject(try window.compact(policyJson: #"{"strategy": "summarize"}"#))
        if outcome["status"] as? String == "needs_summary", let r = outcome["request"] as? [String: Any],
           let id = r["id"] as? String {
            // Here a real host sends r["prompt"] to its model.
            let summary = "Rounds so far ran cargo test repeatedly; failures are in parser::tests."
            _ = try window.applySummary(id: id, summary: summary)
            summaries += 1
            print("  summary applied; now \(try window.preflight().promptTokens) tokens")
        }
    }
    let callId = "call_\(round)"
    _ = try window.push(messageJson: #"{"role": "assistant", "content": null, "tool_calls": [{"id": "\#(callId)", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}]}"#)
    let span = try tracer.start(tool: "run_tests", nowUs: clockNowUs(), infoJson: #"{"tool_call_id": "\#(callId)"}"#, inputBytes: 2)
    let output = String(repeating: "test parser::tests::case_\(round) ... FAILED\n", count: 10)
    try tracer.endWith(spanId: span, outcome: .failed, nowUs: clockNowUs(),
                       endJson: #"{"output_bytes": \#(output.utf8.count), "error": "exit status 101", "error_category": "tool_error"}"#)
    _ = try window.push(messageJson: #"{"role": "tool", "tool_call_id": "\#(callId)", "content": \#(jsonString(output))}"#)
}
print("summaries applied: \(summaries); issues: \(try window.validate())")
let export = jsonObject(try tracer.exportJson(nowUs: clockNowUs()))
if let tools = export["tools"] as? [[String: Any]], let first = tools.first {
    print("run_tests spans: \(first["count"] ?? 0), errors \(first["errors"] ?? 0)")
}

let stack = try CallStack(maxDepth: 5).enter(agent: "planner").enter(agent: "coder")
print("call stack: \(stack.agents().joined(separator: " -> "))")
do {
    _ = try stack.enter(agent: "planner")
    print("handoff back to planner was allowed (unexpected)")
} catch let e as TurnfitError {
    print("handoff refused (\(e.kind)): \(e)")
}

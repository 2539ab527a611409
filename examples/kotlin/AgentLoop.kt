// An agent loop with turnfit from Kotlin: a window that tracks the budget as
// tool results arrive, a pre-flight check before each model call, two-phase
// summarization when the window fills up, tool spans, and a call stack that
// refuses a handoff cycle, with the window's events logged through a
// listener. No model is called: the "model" and the "tool"
// are stand-ins. Built and run by bindings/uniffi/test.sh.
import dev.turnfit.CallStack
import dev.turnfit.ContextWindow
import dev.turnfit.TurnfitException
import dev.turnfit.SpanOutcome
import dev.turnfit.Tracer
import dev.turnfit.Verdict
import dev.turnfit.clockNowUs
import dev.turnfit.eventListener
import dev.turnfit.kind

fun main() {
    ContextWindow("gpt-4o", """{"context_window": 3000, "reserved_output": 500}""").use { window ->
        Tracer().use { tracer ->
            // Events arrive on this thread before the call that raised them returns.
            window.setEventListener(eventListener { kind, json -> println("  event $kind: $json") })
            window.load(
                """[{"role": "system", "content": "You are a careful coding agent."},
                    {"role": "user", "content": "Find why the tests fail in src/parser.rs and fix it."}]""",
            )
            var summaries = 0
            for (round in 1..20) {
                val p = window.preflight()
                println("round $round: ${p.promptTokens} prompt tokens, ${"%.0f".format(p.utilization * 100)}% used, ${p.verdict}")
                if (p.verdict != Verdict.FITS) {
                    val outcome = window.compact("""{"strategy": "summarize"}""")
                    val request = com.google.gson.JsonParser.parseString(outcome).asJsonObject
                    if (request["status"].asString == "needs_summary") {
                        val r = request["request"].asJsonObject
                        // Here a real host sends r["prompt"] to its model.
                        val summary = "Rounds so far ran cargo test repeatedly; failures are in parser::tests."
                        window.applySummary(r["id"].asString, summary)
                        summaries++
                        println("  summary applied (${r["messages"].asJsonArray.size()} messages replaced); now ${window.preflight().promptTokens} tokens")
                    }
                }
                val callId = "call_$round"
                window.push("""{"role": "assistant", "content": null, "tool_calls": [{"id": "$callId", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}]}""")
                val span = tracer.start("run_tests", clockNowUs(), """{"tool_call_id": "$callId"}""", 2UL)
                val output = "test parser::tests::case_$round ... FAILED\n".repeat(10)
                tracer.end(span, SpanOutcome.FAILED, clockNowUs(), output.length.toULong(), "exit status 101")
                window.push("""{"role": "tool", "tool_call_id": "$callId", "content": ${com.google.gson.Gson().toJson(output)}}""")
            }
            println("summaries applied: $summaries; issues: ${window.validate()}")
            val tools = com.google.gson.JsonParser.parseString(tracer.exportJson(clockNowUs())).asJsonObject["tools"].asJsonArray
            println("run_tests spans: ${tools[0].asJsonObject["count"]}, errors ${tools[0].asJsonObject["errors"]}")
        }
    }
    CallStack(5UL).use { root ->
        val stack = root.enter("planner").enter("coder")
        println("call stack: ${stack.agents().joinToString(" -> ")}")
        try {
            stack.enter("planner")
            println("handoff back to planner was allowed (unexpected)")
        } catch (e: TurnfitException.CycleDetected) {
            println("handoff refused (${e.kind}): ${e.message}")
        }
    }
}

"""An agent loop with turnfit: exact pre-flight before every model call,
compaction when the window fills up (tool calls never separated from their
results), a call-stack guard on hand-offs, retry decisions from provider
errors, and tool telemetry. The "model" is a stub that asks for tools; turnfit
never calls an LLM or the network.

    python examples/python/agent_loop.py
"""

import json
import random

import turnfit

MODEL = "gpt-4o"
rng = random.Random(3)

window = turnfit.ContextWindow(MODEL, context_window=12_000, reserved_output=1_000)
window.load([
    {"role": "system", "content": "You are a coding agent. Use tools; answer when the tests pass."},
    {"role": "user", "content": "Fix the failing test in tests/test_dates.py."},
])
tracer = turnfit.Tracer()
breaker = turnfit.CircuitBreaker(failure_threshold=3, cool_down_ms=30_000)
stack = turnfit.CallStack(4).enter("planner").enter("coder")

compactions = 0
for step in range(1, 41):
    if step % 8 == 0:  # the supervisor checks in: a new user turn
        window.push({"role": "user", "content": f"Status after step {step}? Keep going."})
    pf = window.preflight()
    if pf["verdict"] != "fits":
        r = window.compact({"tool_output_max": 800})
        compactions += 1
        rep = r["report"]
        print(f"step {step:2}: {pf['verdict']} at {pf['prompt_tokens']} tokens -> compacted "
              f"{rep['tokens_before']} -> {rep['tokens_after']}")
    # The model asks for a tool (stubbed), the tool runs (stubbed), turnfit records it.
    call_id = f"call_{step}"
    tool = rng.choice(["read_file", "run_tests", "grep"])
    window.push({"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": tool, "arguments": json.dumps({"step": step})}}]})
    span = tracer.start(tool, {"tool_call_id": call_id, "agent_id": stack.current}, 20)
    output = "\n".join(f"{tool}: line {i} value={rng.randrange(10**6)}" for i in range(rng.choice([5, 30, 300])))
    tracer.end(span, "success", len(output))
    window.push({"role": "tool", "tool_call_id": call_id, "content": output})

    if step == 20:  # a provider error in the middle: classify and decide
        err = turnfit.classify("openai", 429, '{"error": {"message": "Rate limit reached", "type": "requests"}}',
                              {"retry-after-ms": "1500"})
        decision = turnfit.backoff(policy={}, failed_attempts=1, seed=step, retry_after_ms=err.get("retry_after_ms"))
        breaker.record_failure("openai")
        print(f"step {step:2}: provider error {err['category']}, retryable={err['retryable']} -> {decision}")

assert window.validate() == [], "the history is structurally valid"
try:
    stack.enter("planner")
except turnfit.CycleDetectedError as e:
    print(f"hand-off refused: {e}")
m = {x["tool"]: x["count"] for x in tracer.metrics()}
print(f"done: {len(window)} messages, {window.preflight()['prompt_tokens']} prompt tokens, "
      f"{compactions} compactions, tool calls {m}")
assert compactions > 0

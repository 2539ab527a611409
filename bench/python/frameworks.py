"""Per-step overhead of turnfit's OpenAI Agents SDK and pydantic-ai adapters on the
same replayed loop as their tests (mini-swe-agent on astroid #1866, 98 rounds, the
fake model re-emitting the recorded turns, the budget a third of the final size),
beside the framework's own answer:

- OpenAI Agents SDK: no filter; turnfit's InputFilter; the SDK's SessionSettings(limit=N)
  with an SQLiteSession (the SDK's only built-in history limit: a session read cut to
  the last N items, applied when a run starts), N the most items whose tail fits the
  budget at the end of the loop; the loop is one run, so it never trims inside it;
- pydantic-ai: no processor; turnfit's HistoryProcessor (pydantic-ai has no built-in
  history limit or summarizer: its docs show hand-written processors).

Each setting runs the whole loop REPS times (default 5); the figure is the median
wall time of a loop divided by its model calls, and the adapter's own time per call
(median over every call of every repetition). Also, from one more run with every input
counted: the inputs over the budget and the summarizer's calls (a callable here, so the
times are turnfit's and the framework's, not a model's).

    target/python/venv-test/bin/python bench/python/frameworks.py [REPS]
"""

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python" / "tests"))

import turnfit  # noqa: E402
import turnfit.openai_agents as toa  # noqa: E402
import turnfit.pydantic_ai as tpa  # noqa: E402
from framework_loop import load, responses_items, responses_tools  # noqa: E402

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
MODEL = "gpt-4o"
TRAJ = load()


def timed(fn: Any, sink: List[float]) -> Any:
    """Wrap an async callable, recording its duration."""

    async def call(*args: Any) -> Any:
        t0 = time.perf_counter()
        out = await fn(*args)
        sink.append(time.perf_counter() - t0)
        return out

    return call


# --- OpenAI Agents SDK -------------------------------------------------------

def agents_loop(make_filter: Callable[[], Any], session: Any = None) -> Dict[str, Any]:
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    budget = turnfit.count_conversation({"instructions": TRAJ["system"], "input": responses_items(TRAJ),
                                         "tools": responses_tools(TRAJ)}, MODEL) // 3

    def message(text: str) -> Any:
        return ResponseOutputMessage(id="m", type="message", role="assistant", status="completed",
                                     content=[ResponseOutputText(type="output_text", text=text, annotations=[])])

    class Replay(Model):
        def __init__(self) -> None:
            self.step, self.over = 0, 0

        async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                               tracing, **k):
            defs = [{"type": "function", "name": t.name, "description": t.description, "parameters": t.params_json_schema}
                    for t in tools]
            n = turnfit.count_conversation({"instructions": system_instructions, "input": input, "tools": defs},
                                           MODEL) if CHECK else 0
            self.over += n > budget
            if self.step < len(TRAJ["rounds"]):
                text, calls, _ = TRAJ["rounds"][self.step]
                out = ([message(text)] if text else []) + [ResponseFunctionToolCall(
                    type="function_call", call_id=c["id"], name="bash", arguments=c["function"]["arguments"]) for c in calls]
            else:
                out = [message("done")]
            self.step += 1
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *a, **k):
            raise NotImplementedError

    outputs = [o for _, calls, outs in TRAJ["rounds"] for o in outs]

    @function_tool
    def bash(command: str) -> str:
        """Execute a bash command."""
        return outputs.pop(0)

    model = Replay()
    f = make_filter()
    spent: List[float] = []
    config = RunConfig(call_model_input_filter=timed(f, spent) if f else None, tracing_disabled=True)
    agent = Agent(name="swe", instructions=TRAJ["system"], tools=[bash], model=model)
    SUMMARIES[0] = 0
    t0 = time.perf_counter()
    asyncio.run(Runner.run(agent, TRAJ["task"], run_config=config, session=session() if session else None, max_turns=200))
    return {"wall": time.perf_counter() - t0, "calls": model.step, "adapter": spent, "over": model.over,
            "summaries": SUMMARIES[0]}


# --- pydantic-ai ---------------------------------------------------------------

def pydantic_loop(make_proc: Callable[[], Any]) -> Dict[str, Any]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    state = {"step": 0, "over": 0}
    outputs = [o for _, calls, outs in TRAJ["rounds"] for o in outs]

    def model(messages: List[Any], info: Any) -> Any:
        if CHECK:
            n = turnfit.count_conversation(tpa.to_chat(messages, info.instructions), MODEL)
            state["over"] += n > BUDGET_CHAT
        k = state["step"]
        state["step"] += 1
        if k >= len(TRAJ["rounds"]):
            return ModelResponse(parts=[TextPart("done")])
        text, calls, _ = TRAJ["rounds"][k]
        return ModelResponse(parts=([TextPart(text)] if text else []) + [
            ToolCallPart(tool_name="bash", args=c["function"]["arguments"], tool_call_id=c["id"]) for c in calls])

    proc = make_proc()
    spent: List[float] = []
    from pydantic_ai.capabilities import ProcessHistory

    agent = Agent(FunctionModel(model), system_prompt=TRAJ["system"],
                  capabilities=[ProcessHistory(timed(proc, spent))] if proc else [])

    @agent.tool_plain
    def bash(command: str) -> str:
        """Execute a bash command."""
        return outputs.pop(0)

    from pydantic_ai.usage import UsageLimits

    SUMMARIES[0] = 0
    t0 = time.perf_counter()
    agent.run_sync(TRAJ["task"], usage_limits=UsageLimits(request_limit=200))
    return {"wall": time.perf_counter() - t0, "calls": state["step"], "adapter": spent, "over": state["over"],
            "summaries": SUMMARIES[0]}


def chat_budget() -> int:
    msgs = [{"role": "system", "content": TRAJ["system"]}, {"role": "user", "content": TRAJ["task"]}]
    for text, calls, outs in TRAJ["rounds"]:
        msgs.append({"role": "assistant", "content": text or None, "tool_calls": calls})
        msgs += [{"role": "tool", "tool_call_id": c["id"], "content": o} for c, o in zip(calls, outs)]
    return turnfit.count_conversation(msgs, MODEL) // 3


BUDGET_CHAT = chat_budget()
CHECK = False
SUMMARIES = [0]


def summary(name: str, runs: List[Dict[str, Any]], base: float) -> str:
    per_step = statistics.median(r["wall"] / r["calls"] for r in runs) * 1e3
    spent = [t for r in runs for t in r["adapter"]]
    own = f"{statistics.median(spent) * 1e3:.2f}" if spent else "-"
    return (f"| {name} | {runs[0]['calls']} | {per_step:.2f} | {per_step / base:.2f}x | {own} | {runs[0]['over']} "
            f"| {runs[0]['summaries']} |")


def main() -> None:
    global CHECK
    from agents import SQLiteSession
    from agents.memory import SessionSettings

    items_budget = 0
    # The largest N whose last-N items fit the budget at the end of the loop (the best
    # an item count can do for this run).
    full = responses_items(TRAJ)
    ab = turnfit.count_conversation({"instructions": TRAJ["system"], "input": full, "tools": responses_tools(TRAJ)}, MODEL) // 3
    for n in range(1, len(full)):
        if turnfit.count_conversation({"instructions": TRAJ["system"], "input": full[-n:], "tools": responses_tools(TRAJ)}, MODEL) > ab:
            break
        items_budget = n

    def summarize(request: Any) -> str:
        SUMMARIES[0] += 1
        return "Summary: the agent is fixing _infer_str_format_call in astroid."

    settings = {
        "agents: no filter": (lambda: None, None),
        "agents: turnfit InputFilter": (lambda: toa.InputFilter(MODEL, max_tokens=ab, reserve_output=0, summarize=summarize), None),
        f"agents: SessionSettings(limit={items_budget})": (
            lambda: None, lambda: SQLiteSession("bench", session_settings=SessionSettings(limit=items_budget))),
    }
    rows = []
    for CHECK in (True, False):  # one checked run for the over-budget count, then timed runs
        results: Dict[str, List[Dict[str, Any]]] = {}
        for name, (mk, sess) in settings.items():
            results[name] = [agents_loop(mk, sess) for _ in range(1 if CHECK else REPS)]
        if CHECK:
            over = {k: v[0]["over"] for k, v in results.items()}
            continue
        base = statistics.median(r["wall"] / r["calls"] for r in results["agents: no filter"]) * 1e3
        for name, runs in results.items():
            runs[0]["over"] = over[name]
            rows.append(summary(name, runs, base))
    psettings = {
        "pydantic-ai: no processor": lambda: None,
        "pydantic-ai: turnfit HistoryProcessor": lambda: tpa.HistoryProcessor(MODEL, max_tokens=BUDGET_CHAT, reserve_output=0, summarize=summarize),
    }
    for CHECK in (True, False):
        results = {name: [pydantic_loop(mk) for _ in range(1 if CHECK else REPS)] for name, mk in psettings.items()}
        if CHECK:
            over = {k: v[0]["over"] for k, v in results.items()}
            continue
        base = statistics.median(r["wall"] / r["calls"] for r in results["pydantic-ai: no processor"]) * 1e3
        for name, runs in results.items():
            runs[0]["over"] = over[name]
            rows.append(summary(name, runs, base))
    print(f"budget: {ab} tokens (Responses, agents) / {BUDGET_CHAT} (chat, pydantic-ai); reps: {REPS}")
    print("| setting | model calls | ms per step (median) | vs none | adapter ms per call (median) | inputs over budget "
          "| summarizer calls |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(json.dumps({"python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()

"""Issue 35: turnfit.pydantic_ai's history processor in a real pydantic-ai Agent
(pydantic-ai-slim, pinned in requirements-test.txt) with pydantic-ai's FunctionModel as
the agent and as the summarizer: a committed real trajectory (mini-swe-agent, 98
answered rounds) replayed as the agent loop under a budget of a third of its final
size. Every request the model receives fits, has no orphan, and keeps the system
prompt and the task; a summarizer that raises falls back to the digest and the run goes
on; a poisoned history (pydantic-ai #4728) is repaired; unchanged messages are the
objects given; a pending call survives compaction; an unknown part passes through."""

import json
import warnings
from dataclasses import dataclass
from typing import Any, List

import pytest

import turnfit

pydantic_ai = pytest.importorskip("pydantic_ai")
import turnfit.pydantic_ai as tpa  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import ProcessHistory  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.usage import UsageLimits  # noqa: E402

from framework_loop import load  # noqa: E402

MODEL = "gpt-4o"
TRAJ = load()
DONE = "The patch is submitted."
LIMITS = UsageLimits(request_limit=200)


def chat(messages: List[Any]) -> List[dict]:
    """An independent OpenAI chat rendering of what pydantic-ai sends (for the checks)."""
    out: List[dict] = []
    for m in messages:
        if isinstance(m, ModelRequest):
            for p in m.parts:
                if isinstance(p, SystemPromptPart):
                    out.append({"role": "system", "content": p.content})
                elif isinstance(p, UserPromptPart):
                    out.append({"role": "user", "content": p.content if isinstance(p.content, str) else str(p.content)})
                elif isinstance(p, ToolReturnPart):
                    out.append({"role": "tool", "tool_call_id": p.tool_call_id, "content": p.model_response_str()})
        elif isinstance(m, ModelResponse):
            text = "".join(p.content for p in m.parts if isinstance(p, TextPart))
            calls = [{"id": p.tool_call_id, "type": "function", "function": {"name": p.tool_name, "arguments": p.args_as_json_str()}}
                     for p in m.parts if isinstance(p, ToolCallPart)]
            msg = {"role": "assistant", "content": text or None}
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
    return out


def full_tokens() -> int:
    msgs = [{"role": "system", "content": TRAJ["system"]}, {"role": "user", "content": TRAJ["task"]}]
    for text, calls, outs in TRAJ["rounds"]:
        msgs.append({"role": "assistant", "content": text or None, "tool_calls": calls})
        msgs += [{"role": "tool", "tool_call_id": c["id"], "content": o} for c, o in zip(calls, outs)]
    return turnfit.count_conversation(msgs, MODEL)


BUDGET = full_tokens() // 3


def orphans(messages: List[Any]) -> List[str]:
    calls, answered, bad = [], set(), []
    for m in messages:
        for p in m.parts:
            if isinstance(p, ToolCallPart):
                calls.append(p.tool_call_id)
            elif isinstance(p, ToolReturnPart):
                if p.tool_call_id not in calls:
                    bad.append("return without call: " + p.tool_call_id)
                answered.add(p.tool_call_id)
    return bad + ["call without return: " + c for c in calls if c not in answered]


def replay_agent(processors: List[Any]) -> Any:
    seen: List[List[Any]] = []
    state = {"step": 0}
    outputs = [o for _, calls, outs in TRAJ["rounds"] for o in outs]

    def model(messages: List[Any], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        k = state["step"]
        state["step"] += 1
        if k >= len(TRAJ["rounds"]):
            return ModelResponse(parts=[TextPart(DONE)])
        text, calls, _ = TRAJ["rounds"][k]
        parts: List[Any] = [TextPart(text)] if text else []
        parts += [ToolCallPart(tool_name=c["function"]["name"], args=c["function"]["arguments"], tool_call_id=c["id"])
                  for c in calls]
        return ModelResponse(parts=parts)

    # pydantic-ai 2.x takes history processors as capabilities (the `history_processors`
    # argument of 1.x is gone).
    agent = Agent(FunctionModel(model), system_prompt=TRAJ["system"], capabilities=[p.capability() for p in processors])

    @agent.tool_plain
    def bash(command: str) -> str:
        """Execute a bash command."""
        return outputs.pop(0)

    return agent, seen


def problems_of(seen: List[List[Any]]) -> List[str]:
    problems = []
    for step, messages in enumerate(seen):
        tokens = turnfit.count_conversation(chat(messages), MODEL)
        if tokens > BUDGET:
            problems.append(f"step {step}: {tokens} > {BUDGET}")
        problems += [f"step {step}: {o}" for o in orphans(messages)]
        c = chat(messages)
        if not c or c[0] != {"role": "system", "content": TRAJ["system"]}:
            problems.append(f"step {step}: system prompt lost")
        if {"role": "user", "content": TRAJ["task"]} not in c:
            problems.append(f"step {step}: task lost")
    return problems


def test_the_loop_goes_over_budget_without_the_processor():
    agent, seen = replay_agent([])
    assert agent.run_sync(TRAJ["task"], usage_limits=LIMITS).output == DONE
    assert len(seen) >= 50
    assert any(">" in p for p in problems_of(seen))


def test_every_request_fits_with_pydantic_ais_model_summarizing():
    asked: List[str] = []

    def summarize(messages: List[Any], info: AgentInfo) -> ModelResponse:
        asked.append(messages[-1].parts[-1].content)
        return ModelResponse(parts=[TextPart(f"Summary {len(asked)}: fixing _infer_str_format_call in astroid.")])

    proc = tpa.HistoryProcessor(MODEL, max_tokens=BUDGET, reserve_output=0, summarize=FunctionModel(summarize))
    agent, seen = replay_agent([proc])
    assert agent.run_sync(TRAJ["task"], usage_limits=LIMITS).output == DONE
    assert len(seen) >= 50
    assert problems_of(seen) == []
    assert asked and all("compacting" in a for a in asked)
    assert len(asked) < len(seen) // 2  # the summary is carried on, not redone each step
    fired = [r for r in proc.reports if r["fired"]]
    assert fired and all(r["summary"]["source"] == "host" for r in fired if r.get("summary"))


def test_a_summarizer_that_raises_falls_back_to_the_digest_and_the_run_goes_on():
    def broken(messages: List[Any], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("summarizer overloaded")

    proc = tpa.HistoryProcessor(MODEL, max_tokens=BUDGET, reserve_output=0, summarize=FunctionModel(broken))
    agent, seen = replay_agent([proc])
    assert agent.run_sync(TRAJ["task"], usage_limits=LIMITS).output == DONE
    assert problems_of(seen) == []
    fbs = [r["summary"]["fallback"] for r in proc.reports if r.get("summary") and r["summary"]["fallback"]]
    assert fbs and all(fb["reason"] == "error" and "overloaded" in fb["detail"] for fb in fbs)


def _history(rounds: int) -> List[Any]:
    msgs: List[Any] = [ModelRequest(parts=[SystemPromptPart(TRAJ["system"]), UserPromptPart(TRAJ["task"])])]
    for text, calls, outs in TRAJ["rounds"][:rounds]:
        parts: List[Any] = [TextPart(text)] if text else []
        parts += [ToolCallPart(tool_name="bash", args=c["function"]["arguments"], tool_call_id=c["id"]) for c in calls]
        msgs.append(ModelResponse(parts=parts))
        msgs.append(ModelRequest(parts=[ToolReturnPart(tool_name="bash", content=o, tool_call_id=c["id"])
                                        for c, o in zip(calls, outs)]))
    return msgs


def poisoned() -> List[Any]:
    hist = _history(6)
    del hist[4].parts[0]  # round 2's return is lost
    hist[6] = ModelRequest(parts=[*hist[6].parts, ToolReturnPart(tool_name="bash", content="stray", tool_call_id="call_gone")])
    hist.append(ModelRequest(parts=[UserPromptPart("continue")]))
    return hist


def test_a_poisoned_history_is_repaired():
    """pydantic-ai #4728: a call without its return and a return without its call stay in
    a stored history and every later request is refused. The processor's output (what
    pydantic-ai writes back to the run's history) is repaired, below the trigger too."""
    hist = poisoned()
    assert len(orphans(hist)) == 2
    proc = tpa.HistoryProcessor(MODEL, max_tokens=10**5)
    out = proc.process(hist)
    assert orphans(out) == []
    assert {c["action"] for c in proc.last_report["changes"]} >= {"synthesized_result", "dropped_result"}
    synth = [p for m in out for p in m.parts if isinstance(p, ToolReturnPart) and p.tool_call_id == "call_00_EhIzRlCLCoYy3jbr0g1uqA5g"]
    assert len(synth) == 1 and synth[0].outcome == "error"
    # With repair off the core refuses the history rather than pass it on.
    with pytest.raises(turnfit.InvalidArgumentError, match="tool-structure issues"):
        tpa.HistoryProcessor(MODEL, max_tokens=10**5, policy={"repair": False}).process(hist)


def test_pydantic_ai_2_68_repairs_before_processors_too():
    """What the pinned pydantic-ai does on its own (its `repair_messages`, run on the
    history given to `Agent.run` before any processor): the model never sees the
    orphans, with or without turnfit. Recorded so a version that stops doing it shows."""
    for procs in ([], [tpa.HistoryProcessor(MODEL, max_tokens=10**5)]):
        seen: List[Any] = []

        def model(messages: List[Any], info: AgentInfo) -> ModelResponse:
            seen.append(list(messages))
            return ModelResponse(parts=[TextPart(DONE)])

        agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(p) for p in procs])
        agent.run_sync("go on", message_history=poisoned())
        assert orphans(seen[0]) == []


def test_unchanged_messages_are_the_original_objects_and_changes_are_reported():
    hist = _history(60)
    proc = tpa.HistoryProcessor(MODEL, max_tokens=BUDGET, reserve_output=0, summarize=lambda r: "a summary")
    out = proc.process(hist)
    assert proc.last_report["changed"]
    ids = {id(m) for m in hist}
    same = [m for m in out if id(m) in ids]
    assert len(same) >= 4 and out[-1] is hist[-1] and out[-2] is hist[-2]
    # The first request is rebuilt with the summary after the task, its parts the objects given.
    assert out[0] is not hist[0] and out[0].parts[0] is hist[0].parts[0] and out[0].parts[1] is hist[0].parts[1]
    assert "a summary" in out[0].parts[2].content
    dropped = [c for c in proc.last_report["changes"] if c["action"] == "summarized"]
    assert dropped and all("message_index" in c for c in dropped)
    # Below the trigger: the very list of objects comes back.
    small = _history(3)
    assert all(a is b for a, b in zip(proc.process(small), small))


def test_a_pending_call_survives_compaction_without_a_synthetic_return():
    hist = _history(60)
    pending = ToolCallPart(tool_name="deploy", args={"env": "prod"}, tool_call_id="call_needs_approval")
    hist.append(ModelResponse(parts=[TextPart("Deploying needs approval."), pending]))
    proc = tpa.HistoryProcessor(MODEL, max_tokens=BUDGET, reserve_output=0, pending_calls=["call_needs_approval"])
    out = proc.process(hist)
    assert proc.last_report["changed"] and out[-1] is hist[-1]
    assert orphans(out) == ["call without return: call_needs_approval"]
    # The default ("auto") finds it: the newest response, nothing after it.
    out_auto = tpa.HistoryProcessor(MODEL, max_tokens=BUDGET, reserve_output=0).process(hist)
    assert orphans(out_auto) == ["call without return: call_needs_approval"]
    # With pending calls off it gets a synthetic error return.
    out2 = tpa.HistoryProcessor(MODEL, max_tokens=BUDGET, reserve_output=0, pending_calls=None).process(hist)
    assert orphans(out2) == []


@dataclass
class FuturePart:
    """A request part from a pydantic-ai version turnfit does not know."""

    note: str
    part_kind: str = "future-part"


def test_an_unknown_part_passes_through_counted_and_never_dropped():
    hist = _history(60)
    odd = FuturePart("a part kind from the future " * 30)
    hist[2] = ModelRequest(parts=[*hist[2].parts, odd])
    hist[40] = ModelRequest(parts=[*hist[40].parts, UserPromptPart("Any progress?")])  # a later user turn
    odd_message = FuturePart("a message kind from the future " * 30, part_kind="future-message")
    hist.insert(3, odd_message)  # between rounds: a whole message of an unknown kind
    proc = tpa.HistoryProcessor(MODEL, max_tokens=BUDGET, reserve_output=0)
    out = proc.process(hist)
    assert proc.last_report["changed"]
    assert any(p is odd for m in out if hasattr(m, "parts") for p in m.parts)
    assert any(m is odd_message for m in out)
    plain = tpa.HistoryProcessor(MODEL, max_tokens=BUDGET, reserve_output=0)
    hist2 = _history(60)
    hist2[40] = ModelRequest(parts=[*hist2[40].parts, UserPromptPart("Any progress?")])
    plain.process(hist2)
    assert proc.last_report["tokens_before"] > plain.last_report["tokens_before"]


def test_a_version_outside_the_tested_range_warns_naming_it():
    from turnfit import _adapters

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        text = _adapters.check_version("turnfit.pydantic_ai", "pydantic-ai-slim", *tpa.TESTED, installed="3.0.0")
    assert text and f"pydantic-ai-slim >={tpa.TESTED[0]},<{tpa.TESTED[1]}" in text and any(issubclass(x.category, RuntimeWarning) for x in w)
    assert _adapters.check_version("turnfit.pydantic_ai", "pydantic-ai-slim", *tpa.TESTED) is None


def test_thinking_images_and_metadata_round_trip_as_the_objects_given():
    from pydantic_ai.messages import ImageUrl, ThinkingPart

    hist = _history(60)
    thinking = ModelResponse(parts=[ThinkingPart("I should check the format call first. " * 40, signature="sig-1"),
                                    TextPart("Checking."),
                                    ToolCallPart(tool_name="bash", args={"command": "ls"}, tool_call_id="call_think")],
                             provider_details={"finish_reason": "tool_calls"}, provider_response_id="resp_9")
    answer = ModelRequest(parts=[ToolReturnPart(tool_name="bash", content="a.py", tool_call_id="call_think", metadata={"k": 1}),
                                 UserPromptPart(["Look at this screenshot", ImageUrl("https://example.com/shot.png")])])
    hist += [thinking, answer]
    proc = tpa.HistoryProcessor(MODEL, max_tokens=BUDGET, reserve_output=0)
    out = proc.process(hist)
    assert proc.last_report["changed"]
    assert out[-2] is thinking and out[-1] is answer
    # The thinking text is counted (pydantic-ai sends it back to Anthropic and others).
    plain = tpa.HistoryProcessor(MODEL, max_tokens=10**6)
    plain.process([hist[0], thinking, answer])
    no_think = ModelResponse(parts=thinking.parts[1:])
    plain2 = tpa.HistoryProcessor(MODEL, max_tokens=10**6)
    plain2.process([hist[0], no_think, answer])
    assert plain.last_report["tokens_before"] > plain2.last_report["tokens_before"] + 300

"""Issue 35: turnfit.openai_agents in the real OpenAI Agents SDK (openai-agents, pinned in
requirements-test.txt) with a fake `Model` as the agent (as the SDK's own tests do): a
committed real trajectory (mini-swe-agent, 98 answered rounds) replayed as a Runner
loop under a budget of a third of its final size. Every input the fake model receives
fits (counted with turnfit, tools and instructions included), orphans no call or
output, and keeps the instructions and the task; the summarizer is an Agents SDK Model;
one that raises falls back to the digest and the run goes on; the session wrapper keeps
a stored history within budget with its pending call."""

import asyncio
import json
import warnings
from typing import Any, List

import pytest

import turnfit

agents = pytest.importorskip("agents")
import turnfit.openai_agents as toa  # noqa: E402
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

from framework_loop import load, responses_items, responses_orphans, responses_tools  # noqa: E402

MODEL = "gpt-4o"
TRAJ = load()
FULL = turnfit.count_conversation(
    {"instructions": TRAJ["system"], "input": responses_items(TRAJ), "tools": responses_tools(TRAJ)}, MODEL)
BUDGET = FULL // 3


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


class ReplayModel(Model):
    """Re-emits the trajectory's assistant turns; records every input it is sent."""

    def __init__(self, rounds: List[Any]) -> None:
        self.rounds = list(rounds)
        self.step = 0
        self.seen: List[Any] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, *, previous_response_id=None, conversation_id=None, prompt=None):
        self.seen.append((system_instructions, json.loads(json.dumps(input, default=str)), tools))
        if self.step < len(self.rounds):
            text, calls, _ = self.rounds[self.step]
            out: List[Any] = [_message(text)] if text else []
            out += [ResponseFunctionToolCall(type="function_call", call_id=c["id"], name=c["function"]["name"],
                                             arguments=c["function"]["arguments"], status="completed") for c in calls]
        else:
            out = [_message("The patch is submitted.")]
        self.step += 1
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):  # pragma: no cover - not streamed here
        raise NotImplementedError


class SummaryModel(Model):
    """The summarizer: an Agents SDK Model that answers with a summary (or raises)."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.prompts: List[str] = []

    async def get_response(self, system_instructions, input, *args, **kwargs):
        self.prompts.append(input)
        if self.fail:
            raise RuntimeError("summarizer rate limited")
        return ModelResponse(output=[_message(f"Summary {len(self.prompts)}: the agent is fixing _infer_str_format_call in astroid.")],
                             usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):  # pragma: no cover
        raise NotImplementedError


def _agent(model: Model) -> Agent:
    outputs = [o for _, calls, outs in TRAJ["rounds"] for o in outs]

    @function_tool
    def bash(command: str) -> str:
        """Execute a bash command."""
        return outputs.pop(0)

    return Agent(name="swe", instructions=TRAJ["system"], tools=[bash], model=model)


def run_loop(input_filter: Any) -> ReplayModel:
    model = ReplayModel(TRAJ["rounds"])
    agent = _agent(model)
    config = RunConfig(call_model_input_filter=input_filter, tracing_disabled=True)
    result = asyncio.run(Runner.run(agent, TRAJ["task"], run_config=config, max_turns=len(TRAJ["rounds"]) + 5))
    assert result.final_output == "The patch is submitted."
    return model


def check_every_prompt(model: ReplayModel, agent_tools: Any = None) -> List[str]:
    """What is wrong with each input the model received: over budget, orphans, no
    instructions, no task."""
    problems = []
    for step, (instructions, items, tools) in enumerate(model.seen):
        # The tools as the model is sent them (name, description, JSON schema).
        defs = [{"type": "function", "name": t.name, "description": t.description, "parameters": t.params_json_schema}
                for t in tools]
        tokens = turnfit.count_conversation({"instructions": instructions, "input": items, "tools": defs}, MODEL)
        if tokens > BUDGET:
            problems.append(f"step {step}: {tokens} tokens > {BUDGET}")
        problems += [f"step {step}: {o}" for o in responses_orphans(items)]
        if instructions != TRAJ["system"]:
            problems.append(f"step {step}: instructions lost")
        if not any(isinstance(i, dict) and i.get("role") == "user" and i.get("content") == TRAJ["task"] for i in items):
            problems.append(f"step {step}: task lost")
    return problems


def test_the_loop_is_long_and_goes_over_budget_without_the_filter():
    """The reproducer: the same 98-round loop with no filter sends inputs over the budget
    (the checker fails), so the test below can fail."""
    model = run_loop(None)
    assert len(model.seen) >= 50
    problems = check_every_prompt(model)
    assert any("tokens >" in p for p in problems), problems[:3]


def test_every_prompt_fits_keeps_pairs_task_and_instructions_with_an_agents_model_summarizing():
    summary = SummaryModel()
    f = toa.InputFilter(MODEL, max_tokens=BUDGET, reserve_output=0, summarize=summary)
    model = run_loop(f)
    assert len(model.seen) >= 50
    assert check_every_prompt(model) == []
    # The summarizer was called through the Agents SDK model, with turnfit's prompt.
    assert summary.prompts and all("compacting" in p for p in summary.prompts)
    fired = [r for r in f.reports if r["fired"]]
    assert fired and all(r["summary"]["source"] == "host" for r in fired if r.get("summary"))
    # Remembered between calls: the summarizer runs when the trigger fires, not every step.
    assert len(summary.prompts) < len(model.seen) // 2
    assert any("Summary" in json.dumps(items) for _, items, _ in model.seen)


def test_a_summarizer_that_raises_falls_back_to_the_digest_and_the_run_goes_on():
    summary = SummaryModel(fail=True)
    f = toa.InputFilter(MODEL, max_tokens=BUDGET, reserve_output=0, summarize=summary)
    model = run_loop(f)
    assert check_every_prompt(model) == []
    fallbacks = [r["summary"]["fallback"] for r in f.reports if r.get("summary") and r["summary"]["fallback"]]
    assert fallbacks and all(fb["reason"] == "error" and "rate limited" in fb["detail"] for fb in fallbacks)
    assert summary.prompts


def test_unchanged_items_are_the_objects_given_and_an_unknown_item_is_kept_and_counted():
    items = responses_items(TRAJ)
    odd = {"type": "turnfit_test_future_item", "text": "an item type no SDK version has " * 20}
    items.insert(3, odd)

    class Opaque:  # not a dict, no model_dump: stands in as its text
        def __str__(self) -> str:
            return "an opaque host object " * 10

    opaque = Opaque()
    items.insert(6, opaque)
    out, report = toa.fit_items(items, MODEL, instructions=TRAJ["system"], max_tokens=BUDGET, reserve_output=0,
                                target_ratio=0.5)
    assert report["changed"] and report["tokens_after"] <= BUDGET
    assert any(o is odd for o in out), "the unknown item was dropped"
    assert any(o is opaque for o in out), "the opaque item was dropped"
    by_id = {id(x) for x in items}
    kept_same = [o for o in out if id(o) in by_id]
    assert len(kept_same) >= 5 and out[0] is items[0]
    assert report["tokens_before"] > turnfit.count_conversation(
        {"instructions": TRAJ["system"], "input": [i for i in items if i is not odd and i is not opaque]}, MODEL)


def test_session_wrapper_keeps_the_stored_history_within_budget_with_its_pending_call():
    pending = TRAJ["pending"][-1][1][0]
    items = responses_items(TRAJ) + [{"type": "function_call", "call_id": pending["id"], "name": "bash",
                                      "arguments": pending["function"]["arguments"]}]
    calls = []
    session = toa.TurnfitSession(SQLiteSession("s1"), MODEL, max_tokens=BUDGET, reserve_output=0,
                                 summarize=lambda r: calls.append(r) or "summary of the earlier astroid work")

    async def go():
        for k in range(0, len(items), 7):
            await session.add_items(items[k:k + 7])
        return await session.get_items()

    stored = asyncio.run(go())
    assert calls and session.last_report is not None
    assert turnfit.count_conversation({"input": stored}, MODEL) <= BUDGET
    assert stored[0] == {"role": "user", "content": TRAJ["task"]}
    assert responses_orphans(stored) == ["call without output: " + pending["id"]]
    assert stored[-1]["call_id"] == pending["id"]
    assert not any(i.get("type") == "function_call_output" and i.get("call_id") == pending["id"] for i in stored)


def test_session_get_items_with_a_limit_keeps_pairs_and_the_task():
    items = responses_items(TRAJ, rounds=20)

    async def go():
        s = toa.TurnfitSession(SQLiteSession("s2"), MODEL, max_tokens=10**6)
        await s.add_items(items)
        return await s.get_items(limit=5)

    got = asyncio.run(go())
    assert got[0]["content"] == TRAJ["task"]
    assert responses_orphans(got) == []


def test_a_version_outside_the_tested_range_warns_naming_it():
    from turnfit import _adapters

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        text = _adapters.check_version("turnfit.openai_agents", "openai-agents", *toa.TESTED, installed="0.30.1")
    assert text and "openai-agents >=0.24.0,<0.25.0" in text and "0.30.1 is installed" in text
    assert any(issubclass(x.category, RuntimeWarning) for x in w)
    assert _adapters.check_version("turnfit.openai_agents", "openai-agents", *toa.TESTED) is None  # the pinned one


def test_a_resumed_run_on_the_session_wrapper_starts_within_budget_with_its_task():
    """Two runs on one session (the second resumes with a new user message): the stored
    history is compacted as items are added, so the resumed run's first input fits and
    keeps the task. SessionSettings(limit=N), the SDK's own answer, drops the task."""
    half = len(TRAJ["rounds"]) // 2

    def two_runs(session: Any) -> ReplayModel:
        first = ReplayModel(TRAJ["rounds"][:half])
        agent = _agent(first)
        cfg = RunConfig(tracing_disabled=True)
        asyncio.run(Runner.run(agent, TRAJ["task"], session=session, run_config=cfg, max_turns=200))
        second = ReplayModel([])
        agent2 = Agent(name="swe", instructions=TRAJ["system"], tools=agent.tools, model=second)
        asyncio.run(Runner.run(agent2, "Go on: run the tests.", session=session, run_config=cfg, max_turns=5))
        return second

    calls: List[Any] = []
    wrapped = toa.TurnfitSession(SQLiteSession("resume"), MODEL, max_tokens=BUDGET, reserve_output=0,
                                 summarize=lambda r: calls.append(r) or "summary: reading astroid's brain_builtin_inference")
    model = two_runs(wrapped)
    _, items, tools = model.seen[0]
    defs = [{"type": "function", "name": t.name, "description": t.description, "parameters": t.params_json_schema}
            for t in tools]
    assert turnfit.count_conversation({"instructions": TRAJ["system"], "input": items, "tools": defs}, MODEL) <= BUDGET
    assert items[0] == {"role": "user", "content": TRAJ["task"]} and responses_orphans(items) == []
    assert calls and wrapped.last_report is not None

    from agents.memory import SessionSettings

    limited = two_runs(SQLiteSession("limit", session_settings=SessionSettings(limit=40)))
    _, items, _ = limited.seen[0]
    assert not any(isinstance(i, dict) and i.get("content") == TRAJ["task"] for i in items)  # the SDK's limit lost it


def test_a_pending_approval_survives_compaction_and_pairs_when_approved():
    """A tool that needs approval interrupts the run with its call stored and no output;
    the session compacts around it (the call kept, no synthetic output); approved, the
    run resumes and the model sees the call with its real output."""
    rounds = TRAJ["rounds"][:60]
    approval_round = ("Deploying the fix needs approval.", [{"id": "call_deploy", "type": "function",
                      "function": {"name": "deploy", "arguments": "{\"env\": \"prod\"}"}}], [None])
    model = ReplayModel(rounds + [approval_round])
    agent = _agent(model)

    @function_tool(needs_approval=True)
    def deploy(env: str) -> str:
        """Deploy the fix."""
        return f"deployed to {env}"

    agent.tools.append(deploy)
    session = toa.TurnfitSession(SQLiteSession("approval"), MODEL, max_tokens=BUDGET, reserve_output=0,
                                 summarize=lambda r: "summary of the astroid investigation")
    f = toa.InputFilter(MODEL, max_tokens=BUDGET, reserve_output=0, summarize=lambda r: "summary (filter)")
    cfg = RunConfig(call_model_input_filter=f, tracing_disabled=True)

    async def go():
        result = await Runner.run(agent, TRAJ["task"], session=session, run_config=cfg, max_turns=200)
        assert result.interruptions, "the deploy call should wait for approval"
        stored = await session.get_items()
        state = result.to_state()
        for it in result.interruptions:
            state.approve(it)
        resumed = await Runner.run(agent, state, session=session, run_config=cfg, max_turns=10)
        return stored, resumed

    stored, resumed = asyncio.run(go())
    assert session.last_report is not None and any(r["changed"] for r in session.reports)
    assert any(i.get("type") == "function_call" and i.get("call_id") == "call_deploy" for i in stored)
    assert not any(i.get("type") == "function_call_output" and i.get("call_id") == "call_deploy" for i in stored)
    last_input = model.seen[-1][1]
    outs = [i for i in last_input if isinstance(i, dict) and i.get("call_id") == "call_deploy"]
    assert [o["type"] for o in outs] == ["function_call", "function_call_output"] and "deployed to prod" in json.dumps(outs[1])
    assert check_every_prompt(model) == []


def test_a_synthetic_output_is_not_carried_over_the_real_one():
    """The filter reuses its last result for the prefix the SDK hands back, except when
    that result holds a synthetic output: the SDK's real output, added later, wins."""
    from agents.run_config import CallModelData, ModelInputData

    items = responses_items(TRAJ, rounds=60) + [
        {"type": "function_call", "call_id": "call_late", "name": "bash", "arguments": "{\"command\": \"make\"}"}]
    # pending_calls=None: the late call is answered synthetically (the default, "auto",
    # would keep it as an approval in flight).
    f = toa.InputFilter(MODEL, max_tokens=BUDGET, reserve_output=0, count_tools=False, pending_calls=None)
    agent = Agent(name="a", instructions=TRAJ["system"])

    def call(inp: List[Any]) -> List[Any]:
        data = CallModelData(model_data=ModelInputData(input=list(inp), instructions=TRAJ["system"]), agent=agent, context=None)
        return asyncio.run(f(data)).input

    first = call(items)
    assert any(c["action"] == "synthesized_result" for c in f.last_report["changes"])
    real = {"type": "function_call_output", "call_id": "call_late", "output": "build ok"}
    second = call(items + [real])
    late = [i for i in second if i.get("call_id") == "call_late" and i.get("type") == "function_call_output"]
    assert late == [real] and late[0] is real
    assert len(first) > 0 and responses_orphans(second) == []

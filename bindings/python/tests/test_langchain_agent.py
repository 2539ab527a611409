"""Issue 35: turnfit's LangChain v1 agent middleware in a real agent loop.

The real packages pinned in requirements-test.txt (langchain's
``create_agent``, langchain-core's ``GenericFakeChatModel``) replay a
committed trajectory (mini-swe-agent on astroid-1866: 99 model calls) under a
budget of a third of its final exact size. For every prompt the fake model
receives: it fits the budget (counted by turnfit, tools included), no call
without its result or the reverse, the system prompt and the task kept."""

from typing import Any, Dict, List

import pytest

pytest.importorskip("langchain.agents")

import turnfit  # noqa: E402
import turnfit.langchain as tl  # noqa: E402
from agent_loop import tool_pairs_ok  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from lc_replay import load, make_model, run_agent  # noqa: E402

TRAJ = load()
FINAL = turnfit.count_conversation(TRAJ["doc"])
BUDGET = FINAL // 3
RESERVED = 1000
POLICY = {"strategy": "summarize"}


def middleware(reports: List[Dict[str, Any]], **kw: Any) -> Any:
    kw.setdefault("policy", POLICY)
    return tl.agent_middleware(
        "gpt-4o", max_tokens=BUDGET + RESERVED, reserve_output=RESERVED, on_report=reports.append, **kw
    )


def check(prompts: List[List[Any]], tools: List[Any], pending: frozenset = frozenset()) -> None:
    assert len(prompts) >= 50
    tool_defs = tl.openai_tools(tools)
    assert tool_defs, "the agent's tools are counted"
    for i, p in enumerate(prompts):
        msgs = tl.to_openai(p)
        n = turnfit.count_conversation({"messages": msgs, "tools": tool_defs})
        assert n <= BUDGET, (i, n, BUDGET)
        assert isinstance(p[0], SystemMessage) and p[0].content == TRAJ["system"], i
        assert any(isinstance(m, HumanMessage) and m.content == TRAJ["task"] for m in p), ("task lost", i)
        kept = [m for m in msgs if not (m.get("role") == "assistant" and {c["id"] for c in m.get("tool_calls") or []} & pending)]
        assert tool_pairs_ok(kept), ("a call without its result, or the reverse", i)


class CountingSummarizer(FakeListChatModel):
    calls: List[str] = []

    def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        self.calls.append(str(messages))
        return super()._call(messages, *args, **kwargs)


@pytest.mark.parametrize("write_back", [True, False], ids=["state", "request-only"])
def test_replayed_loop_with_a_cheaper_summarizer_every_prompt_fits(write_back):
    reports: List[Dict[str, Any]] = []
    cheap = CountingSummarizer(responses=["SUMMARY: astroid brain_builtin_inference _infer_str_format_call fixed."] * 500, calls=[])
    mw = middleware(reports, summarize=cheap, write_back=write_back)
    model, out = run_agent(TRAJ, [mw])
    assert len(model.prompts) == len(TRAJ["assistants"]) >= 50
    check(model.prompts, model.bound_tools)
    assert cheap.calls and not model.summary_calls, "the summarizer is the cheaper LangChain model"
    assert any("SUMMARY: astroid" in str(m.content) for p in model.prompts for m in p)
    fired = [r for r in reports if r["changed"]]
    assert fired and all(r["summary"]["source"] == "host" for r in fired if r.get("summary"))
    final = out["messages"]
    if write_back:
        # The state was compacted: fewer messages than the loop made, the task kept.
        assert len(final) < 2 * len(TRAJ["assistants"])
        assert any(m.content == TRAJ["task"] for m in final if isinstance(m, HumanMessage))
        # Compactions are paid once per crossing of the trigger, not at every call.
        assert len(fired) < len(model.prompts) // 4, len(fired)
        # Between compactions each message is counted once, when it is appended.
        assert mw._mirror.loads == len(fired) + 1
    else:
        assert len(final) == 2 * len(TRAJ["assistants"]), "state keeps the full history"
        assert mw._mirror.loads == 1
    assert final[-1].content == TRAJ["assistants"][-1]["content"]


def test_the_agents_own_model_summarizes_by_default():
    reports: List[Dict[str, Any]] = []
    model = make_model(TRAJ, summary_reply="OWN-MODEL SUMMARY: the format() fix in progress.")
    model, _ = run_agent(TRAJ, [middleware(reports)], model=model)
    check(model.prompts, model.bound_tools)
    assert model.summary_calls, "the agent's model got the summarizer prompt"
    assert any("OWN-MODEL SUMMARY" in str(m.content) for p in model.prompts for m in p)


def test_a_summarizer_that_raises_falls_back_to_the_digest_and_the_run_goes_on():
    reports: List[Dict[str, Any]] = []
    model = make_model(TRAJ, fail_summaries=True)
    model, out = run_agent(TRAJ, [middleware(reports)], model=model)
    assert len(model.prompts) == len(TRAJ["assistants"]), "the run went on to its end"
    check(model.prompts, model.bound_tools)
    assert model.summary_calls
    fallbacks = [r["summary"]["fallback"] for r in reports if r.get("summary") and r["summary"]["fallback"]]
    assert fallbacks and all(f["reason"] == "error" and "ConnectionError" in f["detail"] for f in fallbacks)
    assert any("[Summary of earlier conversation]" in str(m.content) for p in model.prompts for m in p)


def test_a_pending_approval_survives_compaction():
    """The trajectory's last call (the submit) waits for a human's approval
    (LangChain's HumanInTheLoopMiddleware interrupts); the human answers with a
    question instead. The model is called with the call still pending: it is kept,
    with no invented result, and the request fits."""
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.checkpoint.memory import InMemorySaver

    last_id = TRAJ["assistants"][-1]["tool_calls"][0]["id"]
    hitl = HumanInTheLoopMiddleware(
        interrupt_on={"bash": {"allowed_decisions": ["approve", "reject"], "when": lambda req: req.tool_call["id"] == last_id}}
    )
    reports: List[Dict[str, Any]] = []
    model = make_model(TRAJ, pending_last=True, summary_reply="SUMMARY so far.")
    model.messages = iter([*model.messages, AIMessage("The patch makes format() return Uninferable for None.")])
    from langchain.agents import create_agent

    from lc_replay import bash_tool

    agent = create_agent(
        model, [bash_tool(TRAJ)], system_prompt=TRAJ["system"], middleware=[middleware(reports), hitl], checkpointer=InMemorySaver()
    )
    cfg = {"configurable": {"thread_id": "t"}, "recursion_limit": 1000}
    out = agent.invoke({"messages": [HumanMessage(TRAJ["task"])]}, cfg)
    assert "__interrupt__" in out, "the submit call waits for approval"
    turns = len(reports)
    # The human's question carries a long log, so this very call is over the trigger.
    log = max(TRAJ["results"].values(), key=len)
    out = agent.invoke({"messages": [HumanMessage("Before I approve: what does the patch change? The CI log:\n" + log)]}, cfg)
    assert len(reports) == turns + 1 and reports[-1]["changed"], "the last call was compacted"
    prompt = model.prompts[-1]
    assert isinstance(prompt[-1], HumanMessage) and prompt[-1].content.startswith("Before I approve")
    pending = [m for m in prompt if isinstance(m, AIMessage) and any(c["id"] == last_id for c in m.tool_calls)]
    assert pending, "the pending call was compacted away"
    assert not any(isinstance(m, ToolMessage) and m.tool_call_id == last_id for m in prompt), "a result was invented"
    check(model.prompts, model.bound_tools, pending=frozenset([last_id]))
    state = out["messages"]
    assert any(isinstance(m, AIMessage) and any(c["id"] == last_id for c in m.tool_calls) for m in state)


def test_async_agent_loop_fits_every_prompt():
    import asyncio

    from langchain.agents import create_agent

    from lc_replay import bash_tool

    reports: List[Dict[str, Any]] = []
    model = make_model(TRAJ, summary_reply="ASYNC SUMMARY.")
    agent = create_agent(model, [bash_tool(TRAJ)], system_prompt=TRAJ["system"], middleware=[middleware(reports)])
    asyncio.run(agent.ainvoke({"messages": [HumanMessage(TRAJ["task"])]}, {"recursion_limit": 1000}))
    check(model.prompts, model.bound_tools)
    assert model.summary_calls and any("ASYNC SUMMARY" in str(m.content) for p in model.prompts for m in p)


def test_the_checker_rejects_the_same_loop_without_the_middleware():
    """The checks above can fail: the loop without turnfit goes over the budget."""
    model, _ = run_agent(TRAJ, [])
    with pytest.raises(AssertionError):
        check(model.prompts, model.bound_tools)


@pytest.mark.parametrize("write_back", [True, False], ids=["state", "llm_input_messages"])
def test_replayed_loop_through_the_langgraph_pre_model_hook(write_back):
    """The same trajectory through LangGraph's create_react_agent with turnfit's
    pre_model_hook, both modes: every prompt fits, pairs and task kept; written back,
    the stored history is the compacted one and its kept messages keep their ids."""
    import warnings

    from langgraph.prebuilt import create_react_agent

    from lc_replay import bash_tool

    cheap = CountingSummarizer(responses=["HOOK SUMMARY: format() fix."] * 500, calls=[])
    tools = [bash_tool(TRAJ)]
    hook = tl.pre_model_hook("gpt-4o", max_tokens=BUDGET + RESERVED, reserve_output=RESERVED, policy=POLICY,
                             summarize=cheap, write_back=write_back, tools=tools)
    model = make_model(TRAJ)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = create_react_agent(model, tools, pre_model_hook=hook, prompt=TRAJ["system"])
    out = agent.invoke({"messages": [HumanMessage(TRAJ["task"], id="task")]}, {"recursion_limit": 1000})
    check(model.prompts, model.bound_tools)
    assert cheap.calls and any("HOOK SUMMARY" in str(m.content) for p in model.prompts for m in p)
    final = out["messages"]
    if write_back:
        assert len(final) < 2 * len(TRAJ["assistants"])
        assert final[0].id == "task" and final[0].content == TRAJ["task"]
    else:
        assert len(final) == 2 * len(TRAJ["assistants"])

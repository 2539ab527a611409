"""Seed 001 (CAIPE's LangGraph supervisor), issue 31: turnfit's pre-model hook in a
real LangGraph graph (langgraph 1.2.24's create_react_agent, pinned in
requirements-test.txt), with LangChain's own fake chat models as the agent and as the
summarizer. A 60-step tool loop under an 8,000-token window: every prompt the agent's
model receives fits, keeps every call with its result and keeps the task; the
summarizer was called through a LangChain model; a summarizer that raises falls back
to the digest and the run goes on."""

from typing import Any, List

import pytest

import turnfit
import turnfit.langchain as ck

langgraph_prebuilt = pytest.importorskip("langgraph.prebuilt")
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

TASK = "Fix the failing test in src/parser.py and make pytest pass."
STEPS = 60
WINDOW, RESERVED = 8000, 1000


PROMPTS: List[Any] = []
SUMMARIZER_CALLS: List[str] = []


class ToolLoopModel(GenericFakeChatModel):
    """LangChain's fake chat model, recording every prompt it is sent; tools are
    accepted as bound (the fake replies with scripted tool calls)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ToolLoopModel":
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        PROMPTS.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


class CountingSummarizer(FakeListChatModel):
    def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        SUMMARIZER_CALLS.append(str(messages))
        return super()._call(messages, *args, **kwargs)


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return "\n".join(f"{path}:{i}: def handler_{i}(request): return parse(request.body, strict=True)" for i in range(40))


def scripted() -> Any:
    for k in range(STEPS):
        yield AIMessage(content="", tool_calls=[{"name": "read_file", "args": {"path": f"src/m{k}.py"}, "id": f"call_{k}"}])
    yield AIMessage(content="Fixed: parse() now accepts an empty body.")


def run(summarize: Any) -> List[Any]:
    PROMPTS.clear()
    model = ToolLoopModel(messages=scripted())
    hook = ck.pre_model_hook(
        "gpt-4o",
        max_tokens=WINDOW,
        reserve_output=RESERVED,
        policy={"strategy": "summarize", "mask": {"enabled": False}},
        summarize=summarize,
    )
    agent = langgraph_prebuilt.create_react_agent(model, [read_file], pre_model_hook=hook, prompt="You are a coding agent.")
    out = agent.invoke({"messages": [HumanMessage(TASK)]}, {"recursion_limit": 4 * STEPS})
    assert out["messages"][-1].content.startswith("Fixed"), out["messages"][-1]
    return list(PROMPTS)


def check(prompts: List[Any]) -> None:
    assert len(prompts) == STEPS + 1
    for p in prompts:
        msgs = ck.to_openai(p)
        assert turnfit.count_conversation(msgs) <= WINDOW - RESERVED
        assert any(m.get("role") == "user" and m.get("content") == TASK for m in msgs), "task lost"
        calls = [c["id"] for m in msgs for c in (m.get("tool_calls") or [])]
        results = [m["tool_call_id"] for m in msgs if m.get("role") == "tool"]
        assert sorted(calls) == sorted(results), "a call without its result, or the reverse"


def test_a_langgraph_agent_summarizes_with_a_langchain_model_and_every_prompt_fits():
    SUMMARIZER_CALLS.clear()
    summarizer = CountingSummarizer(responses=["SUMMARY: read src/m0..m40; parse() rejects empty bodies."] * 500)
    prompts = run(summarizer)
    check(prompts)
    assert SUMMARIZER_CALLS and all("<transcript>" in c for c in SUMMARIZER_CALLS)
    assert any("SUMMARY: read src/m0" in str(ck.to_openai(p)) for p in prompts)


def test_a_summarizer_that_raises_falls_back_to_the_digest_and_the_run_goes_on():
    def broken(request: Any) -> str:
        raise ConnectionError("the summarizer's provider is down")

    prompts = run(broken)
    check(prompts)
    assert any("[Summary of earlier conversation]" in str(ck.to_openai(p)) for p in prompts)

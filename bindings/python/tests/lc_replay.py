"""A real trajectory (tests/fixtures/trajectories, mini-swe-agent on astroid-1866:
99 model calls, 30,507 tokens on gpt-4o) replayed as a LangChain v1 agent loop:
``create_agent`` with LangChain's own fake chat model (``GenericFakeChatModel``)
re-emitting the trajectory's assistant messages, and a ``bash`` tool returning the
recorded results. Used by tests/test_langchain_agent.py and benches/langchain_overhead.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import InjectedToolCallId, tool
from typing_extensions import Annotated

FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "trajectories" / "mini-swe-agent-astroid-1866.openai.json"
SUMMARY_MARK = "You are compacting the working memory"  # turnfit's summarizer prompt


def load() -> Dict[str, Any]:
    doc = json.loads(FIXTURE.read_text())
    msgs = doc["messages"]
    results = {m["tool_call_id"]: m["content"] for m in msgs if m["role"] == "tool"}
    assistants = [m for m in msgs if m["role"] == "assistant"]
    return {"doc": doc, "system": msgs[0]["content"], "task": msgs[1]["content"], "assistants": assistants, "results": results}


def ai_message(m: Dict[str, Any], with_calls: bool = True) -> AIMessage:
    calls = [
        {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"]), "id": c["id"], "type": "tool_call"}
        for c in (m.get("tool_calls") or [])
    ]
    return AIMessage(content=m.get("content") or "", tool_calls=calls if with_calls else [])


def script(traj: Dict[str, Any], pending_last: bool = False) -> List[AIMessage]:
    """The trajectory's assistant messages in order. The last one's call (the
    submit) has no recorded result: without ``pending_last`` it is replayed as text
    (the run ends); with it, the call is kept (a call awaiting approval)."""
    out = [ai_message(m) for m in traj["assistants"][:-1]]
    out.append(ai_message(traj["assistants"][-1], with_calls=pending_last))
    return out


class ReplayModel(GenericFakeChatModel):
    """LangChain's fake chat model replaying a script. Every prompt it gets is
    recorded; a summarizer prompt (turnfit's, or ``summary_reply`` set) is answered
    with ``summary_reply`` and recorded apart, so the agent's own model can be the
    summarizer."""

    prompts: List[Any] = []
    summary_calls: List[str] = []
    summary_reply: Optional[str] = None
    fail_summaries: bool = False
    bound_tools: List[Any] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ReplayModel":
        self.bound_tools[:] = list(tools)
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        last = messages[-1].content if messages else ""
        if isinstance(last, str) and (SUMMARY_MARK in last or "Messages to summarize" in last):
            self.summary_calls.append(last)
            if self.fail_summaries or self.summary_reply is None:
                raise ConnectionError("the summarizer's provider is down")
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.summary_reply))])
        self.prompts.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def make_model(traj: Dict[str, Any], pending_last: bool = False, **kw: Any) -> ReplayModel:
    return ReplayModel(messages=iter(script(traj, pending_last)), prompts=[], summary_calls=[], bound_tools=[], **kw)


def bash_tool(traj: Dict[str, Any], calls: Optional[List[str]] = None) -> Any:
    results = traj["results"]

    @tool
    def bash(command: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Execute a bash command."""
        if calls is not None:
            calls.append(tool_call_id)
        return results[tool_call_id]

    return bash


def run_agent(traj: Dict[str, Any], middleware: List[Any], model: Optional[ReplayModel] = None, **agent_kw: Any) -> Any:
    from langchain.agents import create_agent

    model = model or make_model(traj)
    agent = create_agent(model, [bash_tool(traj)], system_prompt=traj["system"], middleware=middleware, **agent_kw)
    from langchain_core.messages import HumanMessage

    out = agent.invoke({"messages": [HumanMessage(traj["task"])]}, {"recursion_limit": 1000})
    return model, out


Check = Callable[[List[Any]], None]

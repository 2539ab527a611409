"""Issue 47: each adapter counts the request in the framing of the API its model sends
to. The Agents SDK's ``OpenAIChatCompletionsModel`` sends the items as Chat messages;
pydantic-ai's ``OpenAIResponsesModel`` sends the messages as Responses items. Both run
here on a real ``openai`` client whose transport records every request body
(``httpx.MockTransport``: no network) and answers with the trajectory's next recorded
step. Filled to the limit (trigger 1, no target), every request as sent is within the
budget by turnfit's own count, and that count is the adapter's, call by call."""

import asyncio
import json
from typing import Any, Callable, Dict, List

import pytest

import turnfit
from replay_fixtures import MODEL, TRAJECTORIES, budgets

httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")

TRAJ = next(t for t in TRAJECTORIES if t["name"] == "swe-agent-marshmallow-1867-fc")
MAX_TOKENS = next(b for t, b, _ in budgets() if t is TRAJ)


def _client(answer: Callable[[Dict[str, Any], str], Dict[str, Any]], sent: List[Any]) -> Any:
    """An AsyncOpenAI whose transport records each body and answers ``answer(body, kind)``."""

    def handle(request: Any) -> Any:
        body = json.loads(request.content)
        kind = "chat" if request.url.path.endswith("/chat/completions") else "responses"
        sent.append((kind, body))
        return httpx.Response(200, json=answer(body, kind))

    return openai.AsyncOpenAI(api_key="sk-fake", max_retries=0,
                              http_client=httpx.AsyncClient(transport=httpx.MockTransport(handle)))


def _steps() -> Callable[[Dict[str, Any], str], Dict[str, Any]]:
    """The trajectory's steps, then "Done.", as a Chat completion or a Response."""
    state = {"k": 0}

    def answer(body: Dict[str, Any], kind: str) -> Dict[str, Any]:
        k = state["k"]
        state["k"] += 1
        s = TRAJ["steps"][k] if k < len(TRAJ["steps"]) else {"content": "Done.", "tool_calls": []}
        calls = s.get("tool_calls") or []
        if kind == "chat":
            msg: Dict[str, Any] = {"role": "assistant", "content": s.get("content") or None}
            if calls:
                msg["tool_calls"] = [{"id": c["id"], "type": "function", "function": c["function"]} for c in calls]
            return {"id": f"chatcmpl-{k}", "object": "chat.completion", "created": 1765000000, "model": body["model"],
                    "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        out: List[Dict[str, Any]] = []
        if s.get("content"):
            out.append({"type": "message", "id": f"msg_{k}", "status": "completed", "role": "assistant",
                        "content": [{"type": "output_text", "text": s["content"], "annotations": []}]})
        out += [{"type": "function_call", "id": f"fc_{k}_{c['id']}", "call_id": c["id"], "name": c["function"]["name"],
                 "arguments": c["function"]["arguments"], "status": "completed"} for c in calls]
        return {"id": f"resp_{k}", "object": "response", "created_at": 1765000000, "status": "completed",
                "model": body["model"], "output": out, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                "usage": {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                          "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}}

    return answer


def _results() -> Dict[str, Any]:
    by: Dict[Any, List[str]] = {}
    for s in TRAJ["steps"]:
        for c in s["tool_calls"]:
            key = (c["function"]["name"], json.dumps(json.loads(c["function"]["arguments"]), sort_keys=True))
            by.setdefault(key, []).append(TRAJ["results"][c["id"]])
    return by


def _count(kind: str, body: Dict[str, Any]) -> int:
    """turnfit's count of one request as sent."""
    if kind == "chat":
        return turnfit.count_conversation({"messages": body["messages"], "tools": body.get("tools", [])}, MODEL)
    doc = {"input": body["input"], "tools": body.get("tools", [])}
    if body.get("instructions"):
        doc["instructions"] = body["instructions"]
    return turnfit.count_conversation(doc, MODEL)


def _check(sent: List[Any], reports: List[Dict[str, Any]], kind: str) -> None:
    calls = [(k, b) for k, b in sent if b.get("tools")]
    assert len(calls) == len(TRAJ["steps"]) + 1
    assert {k for k, _ in calls} == {kind}
    assert len(reports) == len(calls)
    limit = MAX_TOKENS - reports[0]["reserved_output"]
    counted = [_count(k, b) for k, b in calls]
    assert all(n <= limit for n in counted), (counted, limit)
    # What was sent minus what the adapter counted, call by call.
    assert [n - r["tokens_after"] for n, r in zip(counted, reports)] == [0] * len(calls)
    assert any(r["changes"] for r in reports), "the budget made the adapter compact"


agents = pytest.importorskip("agents")


def test_openai_agents_chat_completions_model_is_counted_as_chat() -> None:
    from agents import Agent, FunctionTool, OpenAIChatCompletionsModel, OpenAIResponsesModel, RunConfig, Runner

    import turnfit.openai_agents as toa

    sent: List[Any] = []
    client = _client(_steps(), sent)
    results = _results()

    def tool(t: Dict[str, Any]) -> Any:
        name = t["function"]["name"]

        async def invoke(_ctx: Any, args: str, _name: str = name) -> str:
            q = results.get((_name, json.dumps(json.loads(args or "{}"), sort_keys=True)))
            return q.pop(0) if q else "no result recorded"

        return FunctionTool(name=name, description=t["function"]["description"],
                            params_json_schema=t["function"]["parameters"], on_invoke_tool=invoke, strict_json_schema=False)

    model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
    agent = Agent(name="swe", instructions=TRAJ["system"], tools=[tool(t) for t in TRAJ["tools"]], model=model)
    assert toa.api_of_agent(agent) == "chat_completions"
    assert toa.api_of_agent(Agent(name="r", model=OpenAIResponsesModel(model=MODEL, openai_client=client))) == "responses"
    assert toa.api_of_agent(Agent(name="n", model=MODEL)) is None
    f = toa.InputFilter(MODEL, max_tokens=MAX_TOKENS, trigger_ratio=1.0, target_ratio=None)
    config = RunConfig(call_model_input_filter=f, tracing_disabled=True)
    asyncio.run(Runner.run(agent, TRAJ["task"], run_config=config, max_turns=len(TRAJ["steps"]) + 5))
    _check(sent, list(f.reports), "chat")


pydantic_ai = pytest.importorskip("pydantic_ai")


def test_pydantic_ai_responses_model_is_counted_as_responses() -> None:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    import turnfit.pydantic_ai as tpa

    sent: List[Any] = []
    provider = OpenAIProvider(openai_client=_client(_steps(), sent))
    results = _results()
    tools = []
    for t in TRAJ["tools"]:
        name = t["function"]["name"]

        async def call(_name: str = name, **kwargs: Any) -> str:
            q = results.get((_name, json.dumps(kwargs, sort_keys=True)))
            return q.pop(0) if q else "no result recorded"

        tools.append(Tool.from_schema(call, name=name, description=t["function"]["description"],
                                      json_schema=t["function"]["parameters"]))
    model = OpenAIResponsesModel(MODEL, provider=provider)
    assert tpa.api_of_model(model) == "responses"
    assert tpa.api_of_model(OpenAIChatModel(MODEL, provider=provider)) == "chat_completions"
    proc = tpa.HistoryProcessor(MODEL, max_tokens=MAX_TOKENS, tools=tools, trigger_ratio=1.0, target_ratio=None)
    agent = Agent(model, system_prompt=TRAJ["system"], tools=tools, capabilities=[proc.capability()])
    agent.run_sync(TRAJ["task"], usage_limits=UsageLimits(request_limit=500))
    _check(sent, list(proc.reports), "responses")

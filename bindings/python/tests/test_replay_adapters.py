"""Issue 47's replay: each public trajectory of replay_fixtures.py replayed inside each
framework with the framework's own fake model, the turnfit adapter fitting every call;
in digest, summarizer and throwing-summarizer modes; with the adapter's defaults and
with the README's recipe; at a third and a half of each trajectory's size. Every run
reaches its last call; every request is within the budget by an independent count of
what the framework's provider would send (ChatOpenAI's request payload for LangChain,
the Agents SDK's instructions, items and converted tools, pydantic-ai's own OpenAI
message mapping); no call without its result or the reverse; system prompt and task
kept."""

import asyncio
import collections
import json
from typing import Any, Dict, List

import pytest

import turnfit
from replay_fixtures import MODEL, budgets

MODES = ["digest", "summarizer", "throwing"]
BUDGETS = budgets()
IDS = [b[2] for b in BUDGETS]
SUMMARY = "Summary: the agent worked on the task; keep going."


def _recorded(traj: Dict[str, Any]) -> Dict[str, Any]:
    """Recorded results by (tool name, canonical arguments), in call order."""
    by: Dict[Any, Any] = collections.defaultdict(collections.deque)
    for s in traj["steps"]:
        for c in s["tool_calls"]:
            by[(c["function"]["name"], json.dumps(json.loads(c["function"]["arguments"]), sort_keys=True))].append(traj["results"][c["id"]])
    return by


def _orphans(pairs: List[Any]) -> List[str]:
    """``pairs``: ("call", id) / ("result", id) in order."""
    open_, bad = set(), []
    for kind, cid in pairs:
        if kind == "call":
            open_.add(cid)
        elif cid in open_:
            open_.discard(cid)
        else:
            bad.append(f"result without call {cid}")
    return bad + [f"call without result {c}" for c in sorted(open_)]


# --- LangChain: create_agent + agent_middleware ------------------------------------

lc_openai = pytest.importorskip("langchain_openai")


def _lc_tools(traj: Dict[str, Any]) -> List[Any]:
    from langchain_core.tools import StructuredTool

    recorded = _recorded(traj)
    out = []
    for t in traj["tools"]:
        name = t["function"]["name"]

        def run(_name: str = name, **kwargs: Any) -> str:
            q = recorded.get((_name, json.dumps(kwargs, sort_keys=True)))
            return q.popleft() if q else "no result recorded"

        out.append(StructuredTool.from_function(func=run, name=name, description=t["function"]["description"],
                                                args_schema=t["function"]["parameters"]))
    return out


def _lc_model(traj: Dict[str, Any], mode: str, seen: List[Any]) -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    class Replay(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            self.__dict__["bound"] = list(tools)
            return self

        def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            from langchain_core.outputs import ChatGeneration, ChatResult

            last = messages[-1].content if messages else ""
            if isinstance(last, str) and "<transcript>" in last:  # turnfit's summarizer prompt
                if mode == "throwing":
                    raise ConnectionError("summarizer overloaded")
                return ChatResult(generations=[ChatGeneration(message=AIMessage(content=SUMMARY))])
            seen.append((list(messages), list(self.__dict__.get("bound", []))))
            return super()._generate(messages, *args, **kwargs)

    def script() -> Any:
        for s in traj["steps"]:
            yield AIMessage(content=s.get("content") or "", tool_calls=[
                {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"]), "id": c["id"], "type": "tool_call"}
                for c in s["tool_calls"]])
        yield AIMessage(content="Done.")

    return Replay(messages=script())


def _lc_sent(messages: List[Any], tools: List[Any]) -> int:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    chat = lc_openai.ChatOpenAI(model=MODEL, api_key="unused", use_responses_api=False)
    defs = [convert_to_openai_tool(t) for t in tools]
    payload = chat._get_request_payload(messages, tools=defs or None)
    return turnfit.count_conversation({"messages": payload["messages"], **({"tools": payload["tools"]} if defs else {})}, MODEL)


@pytest.mark.parametrize("traj,max_tokens,_id", BUDGETS, ids=IDS)
def test_langchain_create_agent_replay(traj: Dict[str, Any], max_tokens: int, _id: str) -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage

    import turnfit.langchain as tl

    # The README recipe is the defaults (agent_middleware("gpt-4o", max_tokens=...)); and no target.
    configs: Dict[str, Dict[str, Any]] = {"defaults (README recipe)": {}, "no target": {"target_ratio": None}}
    for config in configs:
        for mode in MODES:
            seen: List[Any] = []
            reports: List[Dict[str, Any]] = []
            summarize = False if mode == "digest" else None
            mw = tl.agent_middleware(MODEL, max_tokens=max_tokens, summarize=summarize, on_report=reports.append,
                                     **configs[config])
            agent = create_agent(_lc_model(traj, mode, seen), _lc_tools(traj), system_prompt=traj["system"], middleware=[mw])
            where = f"{traj['name']} {max_tokens} {config} {mode}"
            try:
                agent.invoke({"messages": [HumanMessage(traj["task"])]}, {"recursion_limit": 1000})
            except turnfit.TurnfitError as e:  # pragma: no cover - the failure this test is for
                pytest.fail(f"{where}: stopped at call {len(seen) + 1} of {len(traj['steps']) + 1}: {e}")
            assert len(seen) == len(traj["steps"]) + 1, where
            reserve = reports[-1]["reserved_output"] if reports else 0
            for k, (msgs, tools) in enumerate(seen):
                tokens = _lc_sent(msgs, tools)
                assert tokens <= max_tokens - reserve, f"{where} call {k}: {tokens} > {max_tokens - reserve}"
                assert msgs[0].type == "system" and msgs[0].content == traj["system"], f"{where} call {k}: system"
                assert any(m.type == "human" and m.content == traj["task"] for m in msgs), f"{where} call {k}: task"
                pairs = []
                for m in msgs:
                    pairs += [("call", c["id"]) for c in getattr(m, "tool_calls", None) or []]
                    if m.type == "tool":
                        pairs.append(("result", m.tool_call_id))
                assert _orphans(pairs) == [], f"{where} call {k}"


# --- OpenAI Agents: Runner + InputFilter, and TurnfitSession -----------------------

agents = pytest.importorskip("agents")


def _oa_run(traj: Dict[str, Any], max_tokens: int, mode: str, with_session: bool) -> Any:
    from agents import Agent, FunctionTool, RunConfig, Runner, SQLiteSession
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    import turnfit.openai_agents as toa

    def message(text: str) -> Any:
        return ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed",
                                     content=[ResponseOutputText(type="output_text", text=text, annotations=[])])

    class Replay(Model):
        def __init__(self) -> None:
            self.step = 0
            self.seen: List[Any] = []

        async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                               tracing, **kwargs):
            if not tools and isinstance(input, str):  # the summarizer's request
                if mode == "throwing":
                    raise RuntimeError("summarizer overloaded")
                return ModelResponse(output=[message(SUMMARY)], usage=Usage(), response_id=None)
            self.seen.append((system_instructions, json.loads(json.dumps(input, default=str)), tools))
            if self.step < len(traj["steps"]):
                s = traj["steps"][self.step]
                out: List[Any] = [message(s["content"])] if s.get("content") else []
                out += [ResponseFunctionToolCall(type="function_call", call_id=c["id"], name=c["function"]["name"],
                                                 arguments=c["function"]["arguments"], status="completed") for c in s["tool_calls"]]
            else:
                out = [message("Done.")]
            self.step += 1
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):  # pragma: no cover
            raise NotImplementedError

    recorded = _recorded(traj)

    def tool(t: Dict[str, Any]) -> Any:
        name = t["function"]["name"]

        async def invoke(_ctx: Any, args: str, _name: str = name) -> str:
            q = recorded.get((_name, json.dumps(json.loads(args or "{}"), sort_keys=True)))
            return q.popleft() if q else "no result recorded"

        return FunctionTool(name=name, description=t["function"]["description"],
                            params_json_schema=t["function"]["parameters"], on_invoke_tool=invoke, strict_json_schema=False)

    model = Replay()
    agent = Agent(name="swe", instructions=traj["system"], tools=[tool(t) for t in traj["tools"]], model=model)
    summarize = None if mode == "digest" else model
    f = toa.InputFilter(MODEL, max_tokens=max_tokens, summarize=summarize)
    kwargs: Dict[str, Any] = {}
    config = RunConfig(call_model_input_filter=f, tracing_disabled=True)
    if with_session:
        session = toa.TurnfitSession(SQLiteSession(f"replay-{traj['name']}"), MODEL, max_tokens=max_tokens,
                                     summarize=summarize, agent=agent)
        kwargs["session"] = session
        config = RunConfig(call_model_input_filter=f, session_input_callback=session.input_callback, tracing_disabled=True)
    asyncio.run(Runner.run(agent, traj["task"], run_config=config, max_turns=len(traj["steps"]) + 5, **kwargs))
    return model, f


@pytest.mark.parametrize("traj,max_tokens,_id", BUDGETS, ids=IDS)
def test_openai_agents_runner_replay(traj: Dict[str, Any], max_tokens: int, _id: str) -> None:
    from agents.models.openai_responses import Converter

    for with_session in (False, True):
        for mode in MODES:
            where = f"{traj['name']} {max_tokens} {'session' if with_session else 'filter'} {mode}"
            try:
                model, f = _oa_run(traj, max_tokens, mode, with_session)
            except turnfit.TurnfitError as e:  # pragma: no cover
                pytest.fail(f"{where}: {e}")
            assert len(model.seen) == len(traj["steps"]) + 1, where
            reserve = f.last_report["reserved_output"]
            for k, (instructions, items, tools) in enumerate(model.seen):
                converted = Converter.convert_tools(tools, [])
                tokens = turnfit.count_conversation({"instructions": instructions, "input": items, "tools": converted.tools}, MODEL)
                assert tokens <= max_tokens - reserve, f"{where} call {k}: {tokens} > {max_tokens - reserve}"
                assert instructions == traj["system"], f"{where} call {k}: instructions"
                assert any(isinstance(i, dict) and i.get("role") == "user" and i.get("content") == traj["task"] for i in items), f"{where} call {k}: task"
                pairs = []
                for i in items:
                    if isinstance(i, dict) and i.get("type") == "function_call":
                        pairs.append(("call", i["call_id"]))
                    elif isinstance(i, dict) and i.get("type") == "function_call_output":
                        pairs.append(("result", i["call_id"]))
                assert _orphans(pairs) == [], f"{where} call {k}"


# --- pydantic-ai: Agent + HistoryProcessor capability ------------------------------

pydantic_ai = pytest.importorskip("pydantic_ai")


def _pa_sent(messages: List[Any], tools: List[Any]) -> int:
    """What pydantic-ai's own OpenAI chat model would send: its message mapping (an
    internal of the pinned release) and the tool definitions as it maps them."""
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    m = OpenAIChatModel(MODEL, provider=OpenAIProvider(api_key="unused"))
    params = ModelRequestParameters(function_tools=tools)
    mapped = asyncio.run(m._map_messages(messages, params))
    defs = [m._map_tool_definition(t, {}) for t in tools]
    return turnfit.count_conversation({"messages": json.loads(json.dumps(mapped, default=str)), "tools": defs}, MODEL)


@pytest.mark.parametrize("traj,max_tokens,_id", BUDGETS, ids=IDS)
def test_pydantic_ai_agent_replay(traj: Dict[str, Any], max_tokens: int, _id: str) -> None:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, SystemPromptPart, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import UsageLimits

    import turnfit.pydantic_ai as tpa

    for mode in MODES:
        seen: List[Any] = []
        state = {"step": 0}

        def model(messages: List[Any], info: AgentInfo) -> ModelResponse:
            seen.append((list(messages), list(info.function_tools)))
            k = state["step"]
            state["step"] += 1
            if k >= len(traj["steps"]):
                return ModelResponse(parts=[TextPart("Done.")])
            s = traj["steps"][k]
            parts: List[Any] = [TextPart(s["content"])] if s.get("content") else []
            parts += [ToolCallPart(tool_name=c["function"]["name"], args=c["function"]["arguments"], tool_call_id=c["id"])
                      for c in s["tool_calls"]]
            return ModelResponse(parts=parts)

        def summarizer(messages: List[Any], info: AgentInfo) -> ModelResponse:
            if mode == "throwing":
                raise RuntimeError("summarizer overloaded")
            return ModelResponse(parts=[TextPart(SUMMARY)])

        recorded = _recorded(traj)
        tools = []
        for t in traj["tools"]:
            name = t["function"]["name"]

            async def call(_name: str = name, **kwargs: Any) -> str:
                q = recorded.get((_name, json.dumps(kwargs, sort_keys=True)))
                return q.popleft() if q else "no result recorded"

            tools.append(Tool.from_schema(call, name=name, description=t["function"]["description"],
                                          json_schema=t["function"]["parameters"]))
        proc = tpa.HistoryProcessor(MODEL, max_tokens=max_tokens, tools=tools,
                                    summarize=None if mode == "digest" else FunctionModel(summarizer))
        agent = Agent(FunctionModel(model), system_prompt=traj["system"], tools=tools, capabilities=[proc.capability()])
        where = f"{traj['name']} {max_tokens} {mode}"
        try:
            agent.run_sync(traj["task"], usage_limits=UsageLimits(request_limit=500))
        except turnfit.TurnfitError as e:  # pragma: no cover
            pytest.fail(f"{where}: {e}")
        assert len(seen) == len(traj["steps"]) + 1, where
        reserve = proc.last_report["reserved_output"]
        for k, (messages, tdefs) in enumerate(seen):
            tokens = _pa_sent(messages, tdefs)
            assert tokens <= max_tokens - reserve, f"{where} call {k}: {tokens} > {max_tokens - reserve}"
            parts = [p for m in messages for p in m.parts]
            assert any(isinstance(p, SystemPromptPart) and p.content == traj["system"] for p in parts), f"{where} call {k}: system"
            assert any(isinstance(p, UserPromptPart) and p.content == traj["task"] for p in parts), f"{where} call {k}: task"
            pairs = []
            for p in parts:
                if isinstance(p, ToolCallPart):
                    pairs.append(("call", p.tool_call_id))
                elif isinstance(p, ToolReturnPart):
                    pairs.append(("result", p.tool_call_id))
            assert _orphans(pairs) == [], f"{where} call {k}"

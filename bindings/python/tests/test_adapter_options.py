"""Issue 47, items 2 and 3: every adapter counts what its framework sends, under one
vocabulary (``max_tokens``, ``reserve_output``) and one set of defaults.

What is sent is counted independently of the adapters: ChatOpenAI's own request
payload (langchain-openai, pinned in requirements-test.txt) for LangChain and
LangGraph, the agent's instructions and the run's input for the Agents SDK."""

import asyncio
import re
import warnings
from pathlib import Path
from typing import Any, Dict, List

import pytest

import turnfit
import turnfit.langchain as tl
from turnfit import _adapters

MODEL = "gpt-4o"
ROOT = Path(__file__).resolve().parents[3]


def test_one_set_of_defaults_python_and_node():
    """The Python and Node adapters share their defaults: the two tables agree."""
    assert tl.DEFAULTS is _adapters.DEFAULTS
    js = (ROOT / "bindings/node/adapter-common.js").read_text()
    m = re.search(r"const DEFAULTS = Object\.freeze\(\{([^}]*)\}\)", js)
    assert m, "adapter-common.js holds DEFAULTS"
    node = dict(re.findall(r"(\w+): ('[^']*'|[\d.]+|true|false)", m.group(1)))
    camel = {"strategy": "strategy", "trigger_ratio": "triggerRatio", "target_ratio": "targetRatio",
             "pending_calls": "pendingCalls", "write_back": "writeBack"}
    for key, value in _adapters.DEFAULTS.items():
        v = node[camel[key]]
        assert v == (f"'{value}'" if isinstance(value, str) else str(value).lower()), (key, value, v)


def test_turn_options_unset_none_and_given():
    opts = _adapters.turn_options(MODEL, max_tokens=8000, reserve_output=None, policy=None, summarizer=None, extra={})
    assert (opts["trigger_ratio"], opts["target_ratio"], opts["policy"]) == (0.8, 0.5, {"strategy": "summarize"})
    none = _adapters.turn_options(MODEL, max_tokens=8000, reserve_output=None, target_ratio=None, policy=None,
                                  summarizer=None, extra={})
    assert "target_ratio" not in none, "target_ratio=None is no target, not 0.5"
    given = _adapters.turn_options(MODEL, max_tokens=8000, reserve_output=100, target_ratio=0.7,
                                   policy={"strategy": "recency"}, summarizer=None, extra={})
    assert (given["target_ratio"], given["reserve_output"], given["policy"]["strategy"]) == (0.7, 100, "recency")


def test_langchain_names_are_the_core_names_and_the_old_ones_warn():
    pytest.importorskip("langchain.agents")
    mw = tl.agent_middleware(MODEL, max_tokens=9000, reserve_output=500)
    assert (mw.options["max_tokens"], mw.options["reserve_output"]) == (9000, 500)
    assert mw.write_back is False and mw.pending_calls == "auto" and mw.options["policy"]["strategy"] == "summarize"
    with pytest.warns(DeprecationWarning, match="context_window= is deprecated, use max_tokens="):
        old = tl.agent_middleware(MODEL, context_window=9000, reserved_output=500)
    assert (old.options["max_tokens"], old.options["reserve_output"]) == (9000, 500)
    with pytest.raises(TypeError, match="disagree"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tl.agent_middleware(MODEL, context_window=9000, max_tokens=8000)
    assert "target_ratio" not in tl.agent_middleware(MODEL, max_tokens=9000, target_ratio=None).options


def test_pending_calls_auto_is_the_newest_reply_only():
    calls = lambda d: d.get("calls")  # noqa: E731
    answer = lambda d: d.get("answers")  # noqa: E731
    h: List[Dict[str, Any]] = [{"calls": ["a"]}, {"answers": "a"}, {"calls": ["b", "c"]}, {"answers": "b"}]
    assert _adapters.newest_unanswered(h, calls, answer) == ["c"]
    # A user message after it (a question before approving): still pending.
    assert _adapters.newest_unanswered(h + [{"text": "later"}], calls, answer) == ["c"]
    # An older reply's unanswered call is not pending (the core repairs it).
    assert _adapters.newest_unanswered([{"calls": ["old"]}, {"text": "u"}, {"calls": ["new"]}, {"answers": "new"}], calls, answer) == []
    assert _adapters.newest_unanswered([{"calls": ["x"]}, {"calls": ["y"]}], calls, answer, spans=True) == ["x", "y"]
    assert _adapters.newest_unanswered([{"calls": ["x"]}, {"calls": ["y"]}], calls, answer) == ["y"]
    with pytest.raises(ValueError, match="pending_calls"):
        _adapters.pending_ids("sometimes", h, lambda: [])


# --- LangGraph: the graph's own prompt -----------------------------------------

langchain_openai = pytest.importorskip("langchain_openai")
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402

SYSTEM = "You are a coding agent. Follow the repository's conventions. " * 60
TASK = "Fix the failing test in src/parser.py and make pytest pass."
STEPS = 30
WINDOW, RESERVED = 6000, 1000


def sent_tokens(messages: List[Any], tools: List[Any]) -> int:
    """What ChatOpenAI would send for these messages and tools, counted by turnfit."""
    chat = langchain_openai.ChatOpenAI(model=MODEL, api_key="unused", use_responses_api=False)
    payload = chat._get_request_payload(messages, tools=[convert_to_openai_tool(t) for t in tools] or None)
    return turnfit.count_conversation({"messages": payload["messages"], **({"tools": payload["tools"]} if tools else {})}, MODEL)


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return "\n".join(f"{path}:{i}: def handler_{i}(request): return parse(request.body)" for i in range(40))


class Recorder(GenericFakeChatModel):
    seen: List[Any] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> "Recorder":
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        type(self).seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def _scripted(name: Any = None) -> Any:
    for k in range(STEPS):
        yield AIMessage(content="", name=name, tool_calls=[{"name": "read_file", "args": {"path": f"src/m{k}.py"}, "id": f"call_{k}"}])
    yield AIMessage(content="Fixed.", name=name)


def _react_run(count_prompt: bool) -> List[Any]:
    prebuilt = pytest.importorskip("langgraph.prebuilt")
    Recorder.seen = []
    # No target: compaction fills the budget, so a prompt left uncounted shows.
    hook = tl.pre_model_hook(MODEL, max_tokens=WINDOW, reserve_output=RESERVED, summarize=False, target_ratio=None,
                             tools=[read_file], prompt=SYSTEM if count_prompt else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in langgraph 1.x
        agent = prebuilt.create_react_agent(Recorder(messages=_scripted()), [read_file], pre_model_hook=hook, prompt=SYSTEM)
    agent.invoke({"messages": [HumanMessage(TASK)]}, {"recursion_limit": 4 * STEPS})
    return list(Recorder.seen)


def test_langgraph_hook_counts_the_graph_prompt_it_is_given():
    """LangGraph adds ``prompt`` after the hook: given to the hook too, every request
    ChatOpenAI would send fits (without it, they did not: checked below)."""
    prompts = _react_run(count_prompt=True)
    assert len(prompts) == STEPS + 1
    worst = max(sent_tokens(p, [read_file]) for p in prompts)
    assert worst <= WINDOW - RESERVED, worst
    assert all(p[0].content == SYSTEM for p in prompts)
    assert all(any(getattr(m, "content", None) == TASK for m in p) for p in prompts)


def test_langgraph_hook_without_the_prompt_lets_requests_over_the_budget():
    """The failure the ``prompt`` argument fixes (issue 47): the hook cannot see it."""
    prompts = _react_run(count_prompt=False)
    assert max(sent_tokens(p, [read_file]) for p in prompts) > WINDOW - RESERVED


def test_create_agent_named_messages_are_counted_as_chatopenai_sends_them():
    """``create_agent(name=...)`` names the AI messages; ChatOpenAI sends names (and the
    tool name of each tool message): the middleware counts them."""
    agents_mod = pytest.importorskip("langchain.agents")
    Recorder.seen = []
    reports: List[Dict[str, Any]] = []
    # trigger_messages=1: the turn runs (and reports) at every call.
    mw = tl.agent_middleware(MODEL, max_tokens=WINDOW, reserve_output=RESERVED, summarize=False,
                             on_report=reports.append, trigger_messages=1)
    agent = agents_mod.create_agent(Recorder(messages=_scripted(name="coding_agent_with_a_long_name")), [read_file],
                                    system_prompt=SYSTEM, middleware=[mw])
    agent.invoke({"messages": [HumanMessage(TASK)]}, {"recursion_limit": 4 * STEPS})
    prompts = list(Recorder.seen)
    assert len(prompts) == STEPS + 1
    assert any(getattr(m, "name", None) for p in prompts for m in p), "names reach the model"
    for p, r in zip(prompts, reports):
        sent = sent_tokens(p, [read_file])
        assert sent <= WINDOW - RESERVED
        assert r["tokens_after"] == sent, (r["tokens_after"], sent)


# --- OpenAI Agents: the session sees the instructions and the new input ----------

def test_turnfit_session_fits_history_new_input_and_instructions_together():
    agents = pytest.importorskip("agents")
    import turnfit.openai_agents as toa

    instructions = "You are a careful agent. " * 200
    history: List[Any] = [{"role": "user", "content": TASK}]
    for k in range(40):
        history.append({"type": "function_call", "call_id": f"c{k}", "name": "bash", "arguments": f'{{"command": "cat f{k}.py"}}'})
        history.append({"type": "function_call_output", "call_id": f"c{k}", "output": f"line {k}\n" * 30})
    new_input = [{"role": "user", "content": "Now also fix the tests. " + "Details follow. " * 300}]
    budget = 6000
    session = toa.TurnfitSession(agents.SQLiteSession("s47"), MODEL, max_tokens=budget, reserve_output=0,
                                 target_ratio=None, instructions=instructions)
    out = asyncio.run(session.input_callback(history, new_input))
    sent = turnfit.count_conversation({"instructions": instructions, "input": out}, MODEL)
    assert sent <= budget, sent
    assert out[0] == history[0] and out[-1] == new_input[-1], "task and new input kept"
    # Without the callback the same run would start over the budget.
    assert turnfit.count_conversation({"instructions": instructions, "input": history + new_input}, MODEL) > budget


def test_pydantic_ai_processor_counts_the_agents_tools():
    """pydantic-ai hands a history processor the messages only; the tool definitions
    it sends with each request are counted when given (``tools=``)."""
    pytest.importorskip("pydantic_ai")
    import turnfit.pydantic_ai as tpa
    from pydantic_ai import Tool
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    def grep(pattern: str, path: str) -> str:
        """Search a file of the repository for a pattern and return the matching lines."""
        return ""

    hist = [ModelRequest(parts=[UserPromptPart(TASK)])]
    plain = tpa.HistoryProcessor(MODEL, max_tokens=10_000)
    plain.process(hist)
    with_tools = tpa.HistoryProcessor(MODEL, max_tokens=10_000, tools=[Tool(grep)])
    with_tools.process(hist)
    defs = [{"type": "function", "function": {"name": "grep", "description": Tool(grep).tool_def.description,
                                              "parameters": Tool(grep).tool_def.parameters_json_schema}}]
    expected = turnfit.count_conversation({"messages": [{"role": "user", "content": TASK}], "tools": defs}, MODEL)
    assert with_tools.last_report["tokens_before"] == expected > plain.last_report["tokens_before"]
    with pytest.raises(TypeError, match="not a pydantic-ai Tool"):
        tpa.HistoryProcessor(MODEL, tools=[42])

"""OpenAI Agents SDK adapters (optional: ``pip install turnfit[openai-agents]``).

The SDK holds its history as OpenAI Responses input items, a format turnfit's
core reads as it is, so the items go to :func:`turnfit.afit_turn` unchanged and an
item the turn did not change comes back as the very object given.

- :class:`InputFilter` — a ``RunConfig(call_model_input_filter=...)`` that fits the
  input of every model call inside a run to a budget: whole rounds (a
  ``function_call`` never loses its ``function_call_output``), the instructions and
  the task kept, older rounds summarized by an Agents SDK ``Model`` (or any callable),
  the deterministic digest standing in when it fails (the report says why).
- :class:`TurnfitSession` — wraps a ``Session``: after ``add_items`` the stored
  history is compacted the same way when it passes the trigger, so a resumed run
  starts within budget with its task; calls still waiting for their output (a
  pending approval) are kept and get no synthetic output.

``agents`` is imported when these are used, never by ``import turnfit``. Tested
with openai-agents 0.24; another version gets a ``RuntimeWarning`` naming the range.
"""

from __future__ import annotations

import collections
import inspect
from typing import Any, Callable, Deque, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import turnfit

from . import _adapters

__all__ = ["InputFilter", "TurnfitSession", "api_of_agent", "model_summarizer", "fit_items", "afit_items", "TESTED"]

TESTED = ("0.24.0", "0.25.0")
"""The openai-agents versions this adapter is tested with: ``[low, high)``."""

#: Item types the core reads (docs/formats.md, "OpenAI Responses"); any other
#: item is kept whatever the budget (pinned) and counted by its text.
KNOWN_TYPES = frozenset(
    """message function_call function_call_output custom_tool_call custom_tool_call_output
    computer_call computer_call_output local_shell_call local_shell_call_output shell_call
    shell_call_output apply_patch_call apply_patch_call_output reasoning web_search_call
    file_search_call code_interpreter_call image_generation_call mcp_call mcp_list_tools
    mcp_approval_request mcp_approval_response item_reference""".split()
)
CALL_TYPES = ("function_call", "custom_tool_call", "computer_call", "local_shell_call", "shell_call", "apply_patch_call")

Summarize = Any  # an agents Model, an Agent, or a callable taking the request dict


def _check() -> None:
    _adapters.check_version("turnfit.openai_agents", "openai-agents", *TESTED)


def model_summarizer(model: Any) -> Callable[[Mapping[str, Any]], Any]:
    """The summarizer for an Agents SDK ``Model`` (its ``get_response`` gets the prompt
    as the input, no tools, no instructions) or an ``Agent`` (run with ``Runner.run``);
    any other callable is returned as it is."""
    try:
        from agents import Agent, ModelSettings, Runner
        from agents.models.interface import Model, ModelTracing
    except ImportError as e:  # pragma: no cover - exercised without the extra
        raise ImportError("turnfit.openai_agents needs openai-agents: pip install 'turnfit[openai-agents]'") from e
    if isinstance(model, Model):

        async def call(request: Mapping[str, Any]) -> Any:
            response = await model.get_response(
                None,
                request["prompt"],
                ModelSettings(),
                [],
                None,
                [],
                ModelTracing.DISABLED,
                previous_response_id=None,
                conversation_id=None,
                prompt=None,
            )
            texts = [
                c.text
                for item in response.output
                if getattr(item, "type", None) == "message"
                for c in getattr(item, "content", []) or []
                if getattr(c, "type", None) == "output_text"
            ]
            return "".join(texts) if texts else response

        return call
    if isinstance(model, Agent):

        async def run(request: Mapping[str, Any]) -> Any:
            result = await Runner.run(model, request["prompt"])
            return result.final_output

        return run
    if model is None or callable(model):
        plain: Callable[[Mapping[str, Any]], Any] = model
        return plain
    raise TypeError(f"summarize must be an agents Model, an Agent or a callable, not {type(model).__name__}")


def _item_json(item: Any) -> Tuple[Any, bool]:
    """``(json value, known)`` for one input item: a dict as it is, a pydantic object
    dumped; anything else stands in as an unknown item carrying its text."""
    value = item
    if not isinstance(item, (dict, str)):
        dump = getattr(item, "model_dump", None)
        if callable(dump):
            value = dump(mode="json", exclude_none=True)
        else:
            return {"type": "turnfit_unknown_item", "text": str(item)}, False
    try:
        _adapters.canon(value)
    except (TypeError, ValueError):
        return {"type": "turnfit_unknown_item", "text": str(item)}, False
    return value, _known(value)


def _known(value: Any) -> bool:
    """A string, a message (no type, a role) or an item type the core reads."""
    if isinstance(value, str):
        return True
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    return (kind is None and "role" in value) or kind in KNOWN_TYPES


def _call_id(v: Any) -> Optional[List[str]]:
    if isinstance(v, dict) and v.get("type") in CALL_TYPES and isinstance(v.get("call_id"), str):
        return [v["call_id"]]
    return None


def _output_id(v: Any) -> Optional[str]:
    if isinstance(v, dict) and str(v.get("type", "")).endswith("_call_output"):
        cid = v.get("call_id") or v.get("id")
        return cid if isinstance(cid, str) else None
    return None


def _newest_pending(values: Sequence[Any]) -> List[str]:
    """``pending_calls="auto"``: the newest reply's calls with no output, when only
    outputs follow them (:func:`turnfit._adapters.newest_unanswered`)."""
    return _adapters.newest_unanswered(values, _call_id, _output_id, spans=True)


def api_of_agent(agent: Any) -> Optional[str]:
    """The OpenAI API the agent's model sends the items to (issue 47):
    ``"chat_completions"`` for an ``OpenAIChatCompletionsModel`` (the SDK converts the
    items to Chat messages), ``"responses"`` for an ``OpenAIResponsesModel``; None for
    a model given by name or another model (counted as Responses items, the SDK's
    default: give ``api="chat_completions"`` after ``set_default_openai_api("chat_completions")``)."""
    name = type(getattr(agent, "model", None)).__name__
    if name == "OpenAIChatCompletionsModel":
        return "chat_completions"
    if name in ("OpenAIResponsesModel", "OpenAIResponsesWSModel"):
        return "responses"
    return None


class _Fitter:
    """The turn over a list of items, with the map back to the objects given."""

    def __init__(
        self,
        model: str,
        *,
        max_tokens: Optional[int],
        reserve_output: Optional[int],
        trigger_ratio: Any,
        target_ratio: Any,
        summarize: Summarize,
        summarizer: Optional[Mapping[str, Any]],
        policy: Optional[Mapping[str, Any]],
        pending_calls: Union[None, str, Iterable[str], Callable[[List[Any]], Iterable[str]]],
        options: Mapping[str, Any],
    ) -> None:
        _check()
        if "encoding" not in options:
            turnfit.lookup_model(model)  # an unknown model fails here, not at the first model call
        self.model = model
        self.summarize = model_summarizer(summarize)
        self.pending_calls = pending_calls
        self.options = _adapters.turn_options(
            model,
            max_tokens=max_tokens,
            reserve_output=reserve_output,
            trigger_ratio=trigger_ratio,
            target_ratio=target_ratio,
            policy=policy,
            summarizer=summarizer,
            extra=dict(options, format="responses"),
        )
        self.last_report: Optional[Dict[str, Any]] = None
        self.reports: Deque[Dict[str, Any]] = collections.deque(maxlen=256)

    def _pending_ids(self, values: List[Any], items: List[Any]) -> List[str]:
        if callable(self.pending_calls):
            return [str(c) for c in self.pending_calls(items)]
        return _adapters.pending_ids(self.pending_calls, values, lambda: _newest_pending(values))

    async def fit(
        self,
        items: List[Any],
        instructions: Optional[str] = None,
        tools: Optional[List[Dict[str, Any]]] = None,
        values: Optional[List[Any]] = None,
        carry: Optional[Dict[str, Any]] = None,
        api: Optional[str] = None,
    ) -> Tuple[List[Any], Dict[str, Any]]:
        if values is None:
            values = [_item_json(x)[0] for x in items]
        unknown = [i for i, v in enumerate(values) if not _known(v)]
        options = dict(self.options)
        policy = dict(options["policy"])
        if unknown:
            policy["pinned"] = sorted(set(policy.get("pinned", [])) | set(unknown))
        pending = self._pending_ids(values, items)
        if pending:
            policy["pending_calls"] = sorted(set(policy.get("pending_calls", [])) | set(pending))
        options["policy"] = policy
        if carry is not None:
            options["carry"] = carry
        if api is not None and "api" not in options:
            # The API the agent's model sends to (an ``api=`` option wins).
            options["api"] = api
        conv: Dict[str, Any] = {"input": values}
        if instructions is not None:
            conv["instructions"] = instructions
        if tools:
            conv["tools"] = tools
        out, turn_report = await turnfit.afit_turn(conv, self.summarize, **options)
        report: Dict[str, Any] = dict(turn_report)
        out_items = out["input"] if isinstance(out, dict) else out
        if isinstance(out_items, str):
            out_items = [out_items]
        # An item the turn gave back unchanged is the object given (first unused match).
        slots: Dict[str, Deque[int]] = {}
        for i, v in enumerate(values):
            slots.setdefault(_adapters.canon(v), collections.deque()).append(i)
        result: List[Any] = []
        for v in out_items:
            q = slots.get(_adapters.canon(v))
            result.append(items[q.popleft()] if q else v)
        self.last_report = report
        self.reports.append(report)
        return result, report


def _tool_defs(agent: Any) -> List[Dict[str, Any]]:
    """The agent's function tools as Responses tool definitions (counted, not sent)."""
    out = []
    for t in getattr(agent, "tools", None) or []:
        schema = getattr(t, "params_json_schema", None)
        name = getattr(t, "name", None)
        if isinstance(name, str) and isinstance(schema, dict):
            out.append({"type": "function", "name": name, "description": getattr(t, "description", "") or "", "parameters": schema})
    return out


class InputFilter(_Fitter):
    """``RunConfig(call_model_input_filter=InputFilter("gpt-4o", max_tokens=...))``.

    Before each model call, the instructions, the agent's function tools and the input
    items are fitted with :func:`turnfit.afit_turn`: below ``trigger_ratio`` of the
    budget nothing changes; over it, old rounds are summarized by ``summarize`` (an
    Agents SDK ``Model``, an ``Agent``, or a callable taking the request dict) down to
    ``target_ratio``; when it raises, times out or returns no text, the digest stands in
    and the report (``last_report``, ``reports``) says why. The SDK keeps its full
    history and hands it back at the next call, so the filter passes each turn report's
    ``carry`` to the next turn: the items the last summary replaced are sent as that
    summary, and the summarizer is called when the trigger fires again, not at every
    step. ``pending_calls``: call ids (or a callable of the items)
    to keep without a synthetic output. Items of a type turnfit does not know are kept
    (pinned) and counted by their text.
    """

    def __init__(
        self,
        model: str = "gpt-4o",
        *,
        max_tokens: Optional[int] = None,
        reserve_output: Optional[int] = None,
        trigger_ratio: Optional[float] = _adapters.UNSET,
        target_ratio: Optional[float] = _adapters.UNSET,
        summarize: Summarize = None,
        summarizer: Optional[Mapping[str, Any]] = None,
        policy: Optional[Mapping[str, Any]] = None,
        pending_calls: Any = _adapters.DEFAULTS["pending_calls"],
        count_tools: bool = True,
        **options: Any,
    ) -> None:
        super().__init__(
            model,
            max_tokens=max_tokens,
            reserve_output=reserve_output,
            trigger_ratio=trigger_ratio,
            target_ratio=target_ratio,
            summarize=summarize,
            summarizer=summarizer,
            policy=policy,
            pending_calls=pending_calls,
            options=options,
        )
        self.count_tools = count_tools
        self._carry: Optional[Dict[str, Any]] = None

    async def __call__(self, data: Any) -> Any:
        from agents.run_config import ModelInputData

        md = data.model_data
        items = list(md.input) if not isinstance(md.input, str) else [md.input]
        values = [_item_json(x)[0] for x in items]
        tools = _tool_defs(data.agent) if self.count_tools else None
        out, report = await self.fit(items, md.instructions, tools, values, carry=self._carry, api=api_of_agent(data.agent))
        self._carry = report.get("carry")
        return ModelInputData(input=out, instructions=md.instructions)


class TurnfitSession(_Fitter):
    """A ``Session`` whose stored history stays within a budget.

    ``get_items``, ``pop_item`` and ``clear_session`` go to the wrapped session;
    ``add_items`` adds, then when the whole stored history passes ``trigger_ratio`` of
    the budget it is compacted with :func:`turnfit.afit_turn` (down to
    ``target_ratio``; task, instructions-free rounds intact, ``function_call`` and its
    output kept together) and written back (``clear_session`` then ``add_items``).
    The newest reply's calls without an output (``pending_calls="auto"``, the
    default: a pending approval) are kept and get no synthetic output.
    ``get_items(limit=N)`` returns the last N items moved back to a round's start, with
    the task in front when it was cut. ``last_report`` is the last compaction's report.

    What the agent sends beside the history is counted in every compaction:
    ``agent=`` (its string instructions and function tools) or ``instructions=``.
    The run's new input reaches the model beside the stored history before
    ``add_items`` sees it: give ``RunConfig(session_input_callback=session.input_callback)``
    to fit both together, or fit every model call with :class:`InputFilter`.
    """

    def __init__(
        self,
        session: Any,
        model: str = "gpt-4o",
        *,
        max_tokens: Optional[int] = None,
        reserve_output: Optional[int] = None,
        trigger_ratio: Optional[float] = _adapters.UNSET,
        target_ratio: Optional[float] = _adapters.UNSET,
        summarize: Summarize = None,
        summarizer: Optional[Mapping[str, Any]] = None,
        policy: Optional[Mapping[str, Any]] = None,
        pending_calls: Any = _adapters.DEFAULTS["pending_calls"],
        agent: Any = None,
        instructions: Optional[str] = None,
        **options: Any,
    ) -> None:
        super().__init__(
            model,
            max_tokens=max_tokens,
            reserve_output=reserve_output,
            trigger_ratio=trigger_ratio,
            target_ratio=target_ratio,
            summarize=summarize,
            summarizer=summarizer,
            policy=policy,
            pending_calls=pending_calls,
            options=options,
        )
        self.session = session
        # What the agent sends beside the history (its instructions and tools):
        # counted in every fit, so the stored history leaves room for them.
        if instructions is None and agent is not None and isinstance(getattr(agent, "instructions", None), str):
            instructions = agent.instructions
        self.instructions = instructions
        self.tools = _tool_defs(agent) if agent is not None else None
        self.api = api_of_agent(agent)

    @property
    def session_id(self) -> Any:
        return self.session.session_id

    @property
    def session_settings(self) -> Any:
        return getattr(self.session, "session_settings", None)

    async def get_items(self, limit: Optional[int] = None) -> List[Any]:
        items = list(await _maybe(self.session.get_items()))
        if limit is None or limit >= len(items):
            return items
        start = max(0, len(items) - limit)
        # Move back to the start of the round, so no output loses its call.
        calls = {}
        for i, v in enumerate(items):
            if isinstance(v, dict) and v.get("type") in CALL_TYPES:
                calls[v.get("call_id")] = i
        for v in items[start:]:
            if isinstance(v, dict) and str(v.get("type", "")).endswith("_call_output"):
                j = calls.get(v.get("call_id") or v.get("id"))
                if j is not None and j < start:
                    start = j
        tail = items[start:]
        task = next((i for i, v in enumerate(items) if isinstance(v, dict) and v.get("role") == "user"), None)
        if task is not None and task < start:
            tail = [items[task]] + tail
        return tail

    async def add_items(self, items: List[Any]) -> None:
        await _maybe(self.session.add_items(items))
        stored = list(await _maybe(self.session.get_items()))
        out, report = await self.fit(stored, self.instructions, self.tools, api=self.api)
        if report.get("changed"):
            await _maybe(self.session.clear_session())
            await _maybe(self.session.add_items(out))

    async def input_callback(self, history: List[Any], new_items: List[Any]) -> List[Any]:
        """``RunConfig(session_input_callback=session.input_callback)``: the stored
        history and the run's new input fitted together (with the instructions and
        tools given), so the first model call of a run is within the budget however
        large the new input is. The new input is protected as the newest user
        message is; the stored history is not rewritten here (``add_items`` does that)."""
        out, _report = await self.fit(list(history) + list(new_items), self.instructions, self.tools, api=self.api)
        return out

    async def pop_item(self) -> Any:
        return await _maybe(self.session.pop_item())

    async def clear_session(self) -> None:
        await _maybe(self.session.clear_session())


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def fit_items(items: List[Any], model: str = "gpt-4o", *, instructions: Optional[str] = None, summarize: Summarize = None, **options: Any) -> Tuple[List[Any], Dict[str, Any]]:
    """One turn over Responses input items outside a run (a callable summarizer, or
    none: the digest): ``(items, report)``, unchanged items being the objects given."""
    import asyncio

    return asyncio.run(afit_items(items, model, instructions=instructions, summarize=summarize, **options))


async def afit_items(items: List[Any], model: str = "gpt-4o", *, instructions: Optional[str] = None, summarize: Summarize = None, **options: Any) -> Tuple[List[Any], Dict[str, Any]]:
    """:func:`fit_items` for async code (an Agents SDK ``Model`` summarizes here)."""
    keys = ("max_tokens", "reserve_output", "trigger_ratio", "target_ratio", "summarizer", "policy", "pending_calls")
    named = {k: options.pop(k) for k in keys if k in options}
    named.setdefault("trigger_ratio", None)
    named.setdefault("target_ratio", None)
    f = _Fitter(
        model,
        max_tokens=named.get("max_tokens"),
        reserve_output=named.get("reserve_output"),
        trigger_ratio=named["trigger_ratio"],
        target_ratio=named["target_ratio"],
        summarize=summarize,
        summarizer=named.get("summarizer"),
        policy=named.get("policy"),
        pending_calls=named.get("pending_calls"),
        options=options,
    )
    return await f.fit(list(items), instructions)

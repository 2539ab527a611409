"""pydantic-ai adapter (optional: ``pip install turnfit[pydantic-ai]``).

:class:`HistoryProcessor` goes in ``Agent(..., capabilities=[proc.capability()])``
(pydantic-ai 2's ``ProcessHistory``; 1.x took ``history_processors=[proc]``): before
each model request pydantic-ai hands it the run's ``ModelMessage`` list, and it
returns that list fitted to a budget by :func:`turnfit.afit_turn` and **repaired**: a
``ToolCallPart`` without its ``ToolReturnPart`` gets a synthetic error return, a
return without its call is dropped (pydantic-ai issue #4728: a poisoned history the
provider refuses at every later request; pydantic-ai 2.68 repairs on its own too, before
processors run, so there this matters for histories processed outside a run and for
1.x). pydantic-ai writes what a processor returns
back to the run's history, so a summary is made once and carried on.

The conversion to the core's OpenAI chat shape keeps a reference to each part, so
what comes back is rebuilt from the objects given: a message the turn did not change
is the **original object**; a changed one is ``dataclasses.replace(original,
parts=...)`` (ids, timestamps, metadata, provider details kept); what changed is in
``last_report["changes"]`` (with ``message_index`` / ``part_index`` into the list
given). A part or message type the adapter does not know passes through untouched,
counted by its text and never dropped.

``pydantic_ai`` is imported when the processor is used, never by ``import turnfit``.
Tested with pydantic-ai-slim 2.78 (``TESTED``); another version gets a ``RuntimeWarning``.
"""

from __future__ import annotations

import collections
import dataclasses
import json as _json
from typing import Any, Deque, Dict, List, Mapping, Optional, Sequence

import turnfit

from . import _adapters

__all__ = ["HistoryProcessor", "api_of_model", "to_chat", "from_chat", "model_summarizer", "TESTED"]

TESTED = ("2.78.0", "2.79.0")
"""The pydantic-ai-slim versions this adapter is tested with: ``[low, high)``."""

REF = "turnfit_ref"  # the key carrying (message index, part index); not counted by the core


def _pa() -> Any:
    try:
        from pydantic_ai import messages
    except ImportError as e:  # pragma: no cover - exercised without the extra
        raise ImportError("turnfit.pydantic_ai needs pydantic-ai: pip install 'turnfit[pydantic-ai]'") from e
    return messages


def api_of_model(model: Any) -> Optional[str]:
    """The OpenAI API a pydantic-ai model sends the messages to (issue 47):
    ``"responses"`` for ``OpenAIResponsesModel`` (each call a ``function_call`` item of
    its own), ``"chat_completions"`` for ``OpenAIChatModel``; None for other models
    (counted as Chat messages). A wrapper model (``InstrumentedModel``, ...) is
    looked through by its ``wrapped`` model."""
    for _ in range(8):
        if model is None:
            return None
        name = type(model).__name__
        if name == "OpenAIResponsesModel":
            return "responses"
        if name in ("OpenAIChatModel", "OpenAIModel"):
            return "chat_completions"
        model = getattr(model, "wrapped", None)
    return None


def _tool_defs(tools: Optional[Sequence[Any]]) -> List[Dict[str, Any]]:
    """The agent's tools (pydantic-ai ``Tool`` objects, ``ToolDefinition`` objects, or
    OpenAI tool dicts) as OpenAI tool definitions, counted in the budget: a history
    processor is not handed the tools the request will carry."""
    out: List[Dict[str, Any]] = []
    for t in tools or ():
        if isinstance(t, Mapping):
            out.append(dict(t))
            continue
        td = getattr(t, "tool_def", t)
        name = getattr(td, "name", None)
        schema = getattr(td, "parameters_json_schema", None)
        if not isinstance(name, str) or not isinstance(schema, Mapping):
            raise TypeError(f"tools: {type(t).__name__} is not a pydantic-ai Tool, a ToolDefinition or an OpenAI tool dict")
        fn: Dict[str, Any] = {"name": name, "parameters": dict(schema)}
        if getattr(td, "description", None):
            fn["description"] = td.description
        out.append({"type": "function", "function": fn})
    return out


def _check() -> None:
    _adapters.check_version("turnfit.pydantic_ai", "pydantic-ai-slim", *TESTED)


def _text_of(value: Any) -> str:
    """The text an unknown part or message is counted by."""
    for attr in ("content", "text"):
        v = getattr(value, attr, None)
        if isinstance(v, str):
            return v
    try:
        from pydantic_core import to_json

        return to_json(value, fallback=str).decode()
    except Exception:
        return str(value)


def _user_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts: List[Dict[str, Any]] = []
    for c in content:
        if isinstance(c, str):
            parts.append({"type": "text", "text": c})
            continue
        url = getattr(c, "url", None)
        kind = getattr(c, "kind", "")
        if isinstance(url, str) and kind == "image-url":
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif getattr(c, "is_image", False) and hasattr(c, "data_uri"):
            parts.append({"type": "image_url", "image_url": {"url": c.data_uri}})
        else:
            parts.append({"type": "text", "text": _text_of(c) if not isinstance(url, str) else url})
    return parts


def to_chat(messages: Sequence[Any], instructions: Optional[str] = None) -> List[Dict[str, Any]]:
    """pydantic-ai messages as OpenAI chat messages for the core, each carrying
    ``turnfit_ref: [message index, part index]`` (``-1``: the whole message). A
    request's parts become one chat message each (system, then tool returns, then user
    prompts, then other parts as ``developer`` messages, which the core always keeps);
    a response is one assistant message (text, thinking and other parts as its text,
    tool calls as ``tool_calls``)."""
    pm = _pa()
    out: List[Dict[str, Any]] = []
    if instructions:
        out.append({"role": "system", "content": instructions, REF: ["instructions"]})
    for mi, msg in enumerate(messages):
        if isinstance(msg, pm.ModelRequest):
            systems, tools, users, others = [], [], [], []
            for pi, part in enumerate(msg.parts):
                ref = [mi, pi]
                if isinstance(part, pm.SystemPromptPart):
                    systems.append({"role": "system", "content": part.content, REF: ref})
                elif isinstance(part, pm.ToolReturnPart):
                    tools.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response_str(), REF: ref})
                elif _is_retry(pm, part) and getattr(part, "tool_name", None):
                    retry: Any = part
                    tools.append({"role": "tool", "tool_call_id": retry.tool_call_id, "content": retry.model_response(), REF: ref})
                elif isinstance(part, pm.UserPromptPart):
                    users.append({"role": "user", "content": _user_content(part.content), REF: ref})
                elif hasattr(part, "model_response") and callable(part.model_response):
                    others.append({"role": "developer", "content": part.model_response(), REF: ref})
                else:
                    others.append({"role": "developer", "content": _text_of(part), REF: ref})
            out.extend(systems + tools + users + others)
        elif isinstance(msg, pm.ModelResponse):
            texts: List[str] = []
            calls: List[Dict[str, Any]] = []
            for part in msg.parts:
                if isinstance(part, pm.ToolCallPart):
                    calls.append({"id": part.tool_call_id, "type": "function",
                                  "function": {"name": part.tool_name, "arguments": part.args_as_json_str()}})
                else:
                    t = _text_of(part)
                    if t:
                        texts.append(t)
            m: Dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None, REF: [mi, -1]}
            if calls:
                m["tool_calls"] = calls
            out.append(m)
        else:
            out.append({"role": "developer", "content": _text_of(msg), REF: [mi, -1]})
    return out


def _instructions(messages: Sequence[Any]) -> Optional[str]:
    """The instructions pydantic-ai sends: the newest request's."""
    pm = _pa()
    for msg in reversed(messages):
        if isinstance(msg, pm.ModelRequest):
            return getattr(msg, "instructions", None)
    return None


def from_chat(
    messages: Sequence[Any], chat_in: Sequence[Mapping[str, Any]], chat_out: Sequence[Mapping[str, Any]]
) -> List[Any]:
    """The turn's result as pydantic-ai messages, rebuilt from ``messages``: an
    unchanged message is the object given, a changed one ``dataclasses.replace`` of it;
    a summary is a ``UserPromptPart`` (``SystemPromptPart`` with
    ``summary_role="system"``), a synthesized result a ``ToolReturnPart`` with
    ``outcome="error"`` where the installed version has it."""
    pm = _pa()
    by_ref = {tuple(m[REF]): m for m in chat_in if REF in m}
    call_names: Dict[str, str] = {}
    for msg in messages:
        if isinstance(msg, pm.ModelResponse):
            for part in msg.parts:
                if isinstance(part, pm.ToolCallPart):
                    call_names[part.tool_call_id] = part.tool_name
    # groups: [message index or None, kind, [parts], changed]
    groups: List[List[Any]] = []

    def add(mi: Optional[int], kind: str, part: Any, changed: bool, tool_first: bool = False) -> None:
        if mi is None and groups and groups[-1][1] == "request":
            g = groups[-1]
            if tool_first:  # a result goes before the request's other parts
                k = 0
                while k < len(g[2]) and isinstance(g[2][k], (pm.ToolReturnPart,)):
                    k += 1
                g[2].insert(k, part)
            else:
                g[2].append(part)
            g[3] = True
            return
        if groups and groups[-1][0] == mi and mi is not None:
            groups[-1][2].append(part)
            groups[-1][3] = groups[-1][3] or changed
            return
        groups.append([mi, kind, [part], changed])

    for m in chat_out:
        ref = m.get(REF)
        if ref == ["instructions"]:
            continue
        if ref is None:
            if m.get("role") == "tool":
                cid = m.get("tool_call_id") or ""
                part = _synthetic_return(pm, call_names.get(cid, ""), _content_text(m.get("content")), cid)
                add(None, "request", part, True, tool_first=True)
            elif m.get("role") == "system":
                add(None, "request", pm.SystemPromptPart(_content_text(m.get("content"))), True)
            else:
                add(None, "request", pm.UserPromptPart(_content_text(m.get("content"))), True)
            continue
        mi, pi = ref
        orig = messages[mi]
        same = by_ref.get(tuple(ref)) == m
        if pi == -1:
            # A response (or an unknown message) is kept or dropped whole.
            groups.append([mi, "whole", [orig], False])
            continue
        part = orig.parts[pi]
        if not same:
            part = _changed_part(pm, part, m)
        add(mi, "request", part, not same)
    # A request that only holds results moved in front of the next request.
    merged: List[List[Any]] = []
    for g in groups:
        if merged and merged[-1][0] is None and g[1] == "request" and g[0] is not None:
            prev = merged.pop()
            g = [g[0], "request", prev[2] + g[2], True]
        merged.append(g)
    out: List[Any] = []
    for mi, kind, parts, changed in merged:
        if kind == "whole":
            out.append(parts[0])
        elif mi is None:
            out.append(pm.ModelRequest(parts=parts))
        else:
            orig = messages[mi]
            if not changed and len(parts) == len(orig.parts) and all(a is b for a, b in zip(parts, orig.parts)):
                out.append(orig)
            else:
                out.append(dataclasses.replace(orig, parts=parts))
    return out


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _synthetic_return(pm: Any, tool_name: str, text: str, call_id: str) -> Any:
    try:
        return pm.ToolReturnPart(tool_name=tool_name, content=text, tool_call_id=call_id, outcome="error")
    except TypeError:  # a version without `outcome`
        return pm.ToolReturnPart(tool_name=tool_name, content=text, tool_call_id=call_id)


def _is_retry(pm: Any, part: Any) -> bool:
    """A legacy ``RetryPromptPart`` (deprecated in pydantic-ai 2, translated on load)."""
    cls = getattr(pm, "RetryPromptPart", None)
    return cls is not None and isinstance(part, cls)


def _changed_part(pm: Any, part: Any, m: Mapping[str, Any]) -> Any:
    """A part whose chat message the turn rewrote (a tool output cut or masked)."""
    text = _content_text(m.get("content"))
    if isinstance(part, pm.ToolReturnPart) or _is_retry(pm, part):
        return dataclasses.replace(part, content=text)
    if isinstance(part, pm.UserPromptPart) and isinstance(m.get("content"), str):
        return dataclasses.replace(part, content=text)
    return part


def model_summarizer(model: Any) -> Any:
    """The summarizer for a pydantic-ai ``Model`` or model name (``model.request`` with
    the prompt as one user message) or ``Agent`` (``agent.run(prompt)``); a callable is returned as it is."""
    if model is None or (callable(model) and not _is_model_or_agent(model)):
        return model
    from pydantic_ai import Agent
    from pydantic_ai.models import Model, ModelRequestParameters, infer_model

    if isinstance(model, str):  # a model name, as Agent takes it ("openai:gpt-4o-mini")
        model = infer_model(model)

    pm = _pa()
    if isinstance(model, Model):

        async def call(request: Mapping[str, Any]) -> Any:
            response = await model.request(
                [pm.ModelRequest(parts=[pm.UserPromptPart(request["prompt"])])], None, ModelRequestParameters()
            )
            text = response.text
            return text if text is not None else response

        return call
    if isinstance(model, Agent):

        async def run(request: Mapping[str, Any]) -> Any:
            return (await model.run(request["prompt"])).output

        return run
    raise TypeError(f"summarize must be a pydantic-ai Model, an Agent or a callable, not {type(model).__name__}")


def _is_model_or_agent(value: Any) -> bool:
    try:
        from pydantic_ai import Agent
        from pydantic_ai.models import Model
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, (Model, Agent))


class HistoryProcessor:
    """``Agent(model, capabilities=[HistoryProcessor("gpt-4o", max_tokens=...).capability()])``.

    Each call fits the run's messages with :func:`turnfit.afit_turn`: below
    ``trigger_ratio`` of the budget nothing is dropped (the history is still repaired:
    a call without its return gets one, ``outcome="error"``; a return without its call
    is dropped); over it, old rounds are summarized by ``summarize`` (a pydantic-ai
    ``Model`` such as the agent's own, an ``Agent``, or a callable taking the request
    dict) down to ``target_ratio``, the digest standing in when it fails
    (``last_report["summary"]["fallback"]`` says why). System prompts, instructions, the
    task and the newest round are kept; a call is never separated from its return.
    ``tools``: the agent's tools (``Tool`` objects or ``ToolDefinition``s), counted in
    the budget: pydantic-ai hands a history processor the messages only, and sends the
    tool definitions with every request.
    ``pending_calls``: tool call ids (or a callable of the messages) awaiting their
    result (an approval): kept, no synthetic return; ``"auto"`` (default) takes the
    newest response's unanswered calls (an older response's are repaired).
    """

    def __init__(
        self,
        model: str = "gpt-4o",
        *,
        max_tokens: Optional[int] = None,
        reserve_output: Optional[int] = None,
        trigger_ratio: Optional[float] = _adapters.UNSET,
        target_ratio: Optional[float] = _adapters.UNSET,
        summarize: Any = None,
        summarizer: Optional[Mapping[str, Any]] = None,
        policy: Optional[Mapping[str, Any]] = None,
        pending_calls: Any = _adapters.DEFAULTS["pending_calls"],
        tools: Optional[Sequence[Any]] = None,
        **options: Any,
    ) -> None:
        _check()
        self.tools = _tool_defs(tools)
        if "encoding" not in options:
            turnfit.lookup_model(model)
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
            extra=dict(options, format="openai"),
        )
        self.last_report: Optional[Dict[str, Any]] = None
        self.reports: Deque[Dict[str, Any]] = collections.deque(maxlen=256)

    def _pending(self, messages: List[Any], chat: List[Dict[str, Any]]) -> List[str]:
        def auto() -> List[str]:
            return _adapters.newest_unanswered(
                chat,
                lambda m: [c["id"] for c in m["tool_calls"]] if m.get("role") == "assistant" and m.get("tool_calls") else None,
                lambda m: m.get("tool_call_id") if m.get("role") == "tool" else None,
            )

        return _adapters.pending_ids(self.pending_calls, messages, auto)

    async def __call__(self, messages: List[Any], api: Optional[str] = None) -> List[Any]:
        """Fits ``messages``; ``api``: the OpenAI API the model sends them to (the
        capability passes the run's model's, :func:`api_of_model`; an ``api=`` option
        given to the processor wins)."""
        messages = list(messages)
        chat = to_chat(messages, _instructions(messages))
        options = dict(self.options)
        if api is not None and "api" not in options:
            options["api"] = api
        pending = self._pending(messages, chat)
        if pending:
            options["policy"] = dict(options["policy"], pending_calls=sorted(set(pending)))
        doc: Any = _json.loads(_json.dumps(chat))
        if self.tools:
            doc = {"messages": doc, "tools": self.tools}
        out, turn_report = await turnfit.afit_turn(doc, self.summarize, **options)
        report: Dict[str, Any] = dict(turn_report)
        out_chat = out["messages"] if isinstance(out, dict) else out
        if not report.get("changed"):
            # Nothing compacted nor repaired: the list given, object for object.
            result = messages
        else:
            result = from_chat(messages, chat, out_chat)
        for change in report.get("changes", []):
            i = change.get("index")
            if isinstance(i, int) and 0 <= i < len(chat):
                ref = chat[i][REF]
                if ref != ["instructions"]:
                    change["message_index"], change["part_index"] = ref[0], (None if ref[1] == -1 else ref[1])
        self.last_report = report
        self.reports.append(report)
        return result

    def capability(self) -> Any:
        """pydantic-ai's ``ProcessHistory`` capability running this processor (pydantic-ai 2
        takes history processors as capabilities)."""
        from pydantic_ai import RunContext
        from pydantic_ai.capabilities import ProcessHistory

        async def fit_for_model(ctx: Any, messages: List[Any]) -> List[Any]:
            # The run's model says which API the request goes to (issue 47).
            return await self(messages, api=api_of_model(getattr(ctx, "model", None)))

        # pydantic-ai passes the run context to a processor whose first parameter is
        # annotated RunContext (read at run time, so given as the class itself).
        fit_for_model.__annotations__ = {"ctx": RunContext, "messages": List[Any], "return": List[Any]}
        return ProcessHistory(fit_for_model)

    def process(self, messages: List[Any]) -> List[Any]:
        """The processor outside an event loop (a test, a script)."""
        import asyncio

        return asyncio.run(self(messages))

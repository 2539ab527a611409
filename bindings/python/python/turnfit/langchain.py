"""LangChain / LangGraph adapters (optional: ``pip install turnfit[langchain]``).

langchain-core (and ``langchain``, ``langgraph``) are imported when a function
here is called, never by ``import turnfit``. Messages are converted one by one
with langchain-core's own converter (``convert_to_openai_messages``); the
counting, trimming and compaction are turnfit's.

- :func:`agent_middleware` — LangChain v1 agent middleware (``create_agent(...,
  middleware=[agent_middleware()])``): before each model call the turn is fitted
  (``turnfit.fit_turn``) with the agent's own model, or a cheaper one, as the
  summarizer; by default the compacted history is written back to the graph state.
- :func:`pre_model_hook` — a LangGraph ``pre_model_hook`` (``create_react_agent``):
  the same turn, trimming only the model input or writing the history back.
- :func:`fit_messages` — the turn on LangChain messages, lossless: a message the
  turn did not change comes back as the same object (id, metadata, content blocks).
- :func:`token_counter` — an exact ``token_counter`` for LangChain's ``trim_messages``.
- :func:`trim_messages` — ``trim_messages``-compatible, backed by :func:`turnfit.fit`.
- :func:`to_openai` / :func:`from_openai` — the converters (``from_openai(...,
  originals=...)`` gives back the original objects of unchanged messages).

Tested with langchain-core 1.8.3, langchain 1.5.2 and langgraph 1.2.24
(``TESTED_VERSIONS``: what a fresh install resolves to): another minor release of the same major warns once
(:class:`UntestedVersionWarning`), another major raises ``ImportError``.
"""

from __future__ import annotations

import json
import uuid
import warnings
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import turnfit

from . import _adapters

__all__ = [
    "to_openai",
    "from_openai",
    "fit_messages",
    "afit_messages",
    "token_counter",
    "trim_messages",
    "pre_model_hook",
    "agent_middleware",
    "openai_tools",
    "chat_model_summarizer",
    "check_version",
    "TESTED_VERSIONS",
    "UntestedVersionWarning",
    "DEFAULTS",
]

#: The defaults every adapter shares (``turnfit._adapters.DEFAULTS``; README, "Adapter defaults").
DEFAULTS = _adapters.DEFAULTS

# distribution -> (major, minors tested (inclusive range), version the suite pins)
TESTED_VERSIONS: Dict[str, Tuple[int, Tuple[int, int], str]] = {
    "langchain-core": (1, (8, 8), "1.8.3"),
    "langchain": (1, (5, 5), "1.5.2"),
    "langgraph": (1, (2, 2), "1.2.24"),
}


class UntestedVersionWarning(UserWarning):
    """A framework release outside the range turnfit.langchain is tested with."""


_checked: Dict[str, str] = {}


def _tested_range(dist: str) -> str:
    major, (lo, hi), pinned = TESTED_VERSIONS[dist]
    span = f"{major}.{lo}.x" if lo == hi else f"{major}.{lo}.x to {major}.{hi}.x"
    return f"{span} (tested: {pinned})"


def check_version(dist: str, version: Optional[str] = None) -> str:
    """Checks ``dist``'s installed (or given) version against the tested range:
    another major raises ``ImportError``; another minor warns once
    (``UntestedVersionWarning``) naming the range. Returns the version."""
    installed = version is None
    if version is None:
        if dist in _checked:
            return _checked[dist]
        from importlib import metadata

        version = metadata.version(dist)
    major, (lo, hi), _ = TESTED_VERSIONS[dist]
    parts = version.split(".")
    try:
        got = (int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0))
    except (IndexError, ValueError):
        got = (-1, -1)
    if got[0] != major:
        raise ImportError(
            f"turnfit.langchain supports {dist} {_tested_range(dist)}; {dist} {version} is installed"
        )
    if not lo <= got[1] <= hi:
        warnings.warn(
            f"turnfit.langchain is tested with {dist} {_tested_range(dist)}; {dist} {version} is installed "
            "(message conversion or the middleware hooks may differ)",
            UntestedVersionWarning,
            stacklevel=3,
        )
    if installed:
        _checked[dist] = version  # checked (and warned) once per process
    return version


def _lc() -> Any:
    try:
        from langchain_core import messages
    except ImportError as e:  # pragma: no cover - exercised without the extra
        raise ImportError("turnfit.langchain needs langchain-core: pip install 'turnfit[langchain]'") from e
    check_version("langchain-core")
    return messages


# --- conversion --------------------------------------------------------------

_ROLES = frozenset(("system", "developer", "user", "assistant", "tool", "function"))


def _text_of(message: Any) -> str:
    """The text an unknown message carries: its string content, the text of its
    parts, other parts as JSON."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                out.append(part["text"])
            else:
                out.append(json.dumps(part, ensure_ascii=False, default=str))
        return "\n".join(out)
    return json.dumps(content, ensure_ascii=False, default=str)


class _Converted:
    """LangChain messages beside their OpenAI dicts, index for index; ``unknown``
    lists the messages the converter does not know (sent to turnfit as system
    text: counted, never dropped)."""

    __slots__ = ("originals", "dicts", "unknown")

    def __init__(self, messages: Iterable[Any]) -> None:
        self.originals: List[Any] = []
        self.dicts: List[Dict[str, Any]] = []
        self.unknown: List[int] = []
        self.extend(messages)

    def snapshot(self) -> "_Converted":
        """A copy of the lists (not of the messages), for one step of a session."""
        c = _Converted(())
        c.originals, c.dicts, c.unknown = list(self.originals), list(self.dicts), list(self.unknown)
        return c

    def extend(self, messages: Iterable[Any]) -> List[Dict[str, Any]]:
        """Converts ``messages`` and appends them; returns their dicts."""
        lc = _lc()
        items = list(messages)
        if not all(isinstance(m, lc.BaseMessage) for m in items):
            items = [m if isinstance(m, lc.BaseMessage) else lc.convert_to_messages([m])[0] for m in items]
        start = len(self.originals)
        self.originals.extend(items)
        convert = lc.convert_to_openai_messages
        for i, m in enumerate(items, start):
            try:
                d = convert(m)
            except (ValueError, TypeError, NotImplementedError, KeyError):
                d = None
            if not isinstance(d, dict) or d.get("role") not in _ROLES:
                # A message type the converter does not know (a custom BaseMessage,
                # a ChatMessage with a role of its own): its text, as a system
                # message, which compaction never drops; the object itself is
                # passed through untouched.
                d = {"role": "system", "content": _text_of(m)}
                self.unknown.append(i)
            elif d.get("role") == "tool" and "name" in d:
                # langchain-core's converter gives a tool message its tool's name;
                # ChatOpenAI does not send it: counted as sent (names on other
                # messages are sent, and counted).
                d = {k: v for k, v in d.items() if k != "name"}
            self.dicts.append(d)
        return self.dicts[start:]

    def pending_calls(self) -> List[str]:
        """Ids of the calls of the newest assistant message with calls that have
        no result yet (a human-in-the-loop approval, a long-running job), when only
        results follow it (``turnfit._adapters.newest_unanswered``, the rule of
        every adapter)."""
        return _adapters.newest_unanswered(
            self.dicts,
            lambda d: [c.get("id") for c in d["tool_calls"]] if d.get("role") == "assistant" and d.get("tool_calls") else None,
            lambda d: d.get("tool_call_id") if d.get("role") == "tool" else None,
        )

    def restore(self, out: Any) -> List[Any]:
        """The turn's messages as LangChain objects: a message equal to an input
        one is that input object; a changed tool result is a copy of its original
        with the new content (id, name, artifact, metadata kept); anything new
        (a summary, a synthetic result) is a new object."""
        lc = _lc()
        originals, dicts = self.originals, self.dicts
        out = list(out)
        # The turn's request ends with the input's newest messages, unchanged:
        # matched from the end, so only the head (the system prompt, a summary,
        # what masking changed) is searched for, within the head of the input
        # (a long run's step costs what the request holds, not the history).
        tail = 0
        while tail < len(out) and tail < len(dicts) and out[-1 - tail] == dicts[-1 - tail]:
            tail += 1
        out, kept = out[: len(out) - tail], originals[len(originals) - tail :]
        dicts = dicts[: len(dicts) - tail]
        by_call: Dict[str, List[int]] = {}
        for i, d in enumerate(dicts):
            if d.get("role") == "tool" and isinstance(d.get("tool_call_id"), str):
                by_call.setdefault(d["tool_call_id"], []).append(i)
        result: List[Any] = []
        j = 0
        n = len(dicts)
        for d in out:
            if d.get("role") == "tool" and d.get("tool_call_id") in by_call:
                # A tool result by its call id (no scan: masking changes many).
                match = next((i for i in by_call[d["tool_call_id"]] if i >= j), None)
                if match is not None:
                    orig = originals[match]
                    result.append(orig if dicts[match] == d else orig.model_copy(update={"content": d.get("content")}))
                    j = match + 1
                    continue
            k = j
            while k < n and dicts[k] != d:
                k += 1
            if k < n:
                result.append(originals[k])
                j = k + 1
                continue
            result.append(lc.convert_to_messages([dict(d)])[0])
        return result + kept


def to_openai(messages: Iterable[Any]) -> List[Dict[str, Any]]:
    """LangChain messages (or anything ``convert_to_messages`` accepts) as OpenAI chat
    dicts, one per message. A message type the converter does not know becomes a
    system message holding its text (counted as text, never dropped by compaction)."""
    return _Converted(messages).dicts


def from_openai(messages: Sequence[Mapping[str, Any]], originals: Optional[Iterable[Any]] = None) -> List[Any]:
    """OpenAI chat dicts as LangChain message objects. With ``originals`` (the
    LangChain messages the dicts were made from, e.g. before a ``fit``), a dict
    equal to an original's conversion comes back as that original object (its id,
    ``additional_kwargs``, ``response_metadata`` and content blocks untouched) and
    a changed tool result as a copy of its original with the new content."""
    if originals is not None:
        return _Converted(originals).restore(messages)
    return _lc().convert_to_messages([dict(m) for m in messages])


def openai_tools(tools: Optional[Iterable[Any]]) -> List[Dict[str, Any]]:
    """LangChain tools (``BaseTool``, functions, dicts) as OpenAI tool definitions,
    to count them; one the converter refuses (a provider's built-in tool) is left out."""
    if not tools:
        return []
    from langchain_core.utils.function_calling import convert_to_openai_tool

    out = []
    for t in tools:
        try:
            d = convert_to_openai_tool(t)
        except Exception:  # a built-in provider tool: nothing turnfit can count
            continue
        if isinstance(d, dict) and d.get("type") == "function":
            out.append(d)
    return out


class _Mirror:
    """The trigger check without recounting: the messages of the previous call in a
    ``ContextWindow`` (each counted once, when first seen). A call whose messages
    start with the previous call's (the same objects) pushes only the new ones;
    anything else (another conversation, a rewritten state, other tools) reloads.
    Thread-safe; one per middleware or hook."""

    def __init__(self, model: str, budget: Dict[str, Any], trigger_messages: Optional[int]) -> None:
        import threading

        self._lock = threading.Lock()
        self._model = model
        self._budget = {k: v for k, v in budget.items() if v is not None}
        self._trigger_messages = trigger_messages
        self._window: Any = None
        self._msgs: List[Any] = []
        self._tools: Tuple[Any, ...] = ()
        self.loads = 0  # full (re)loads; the other calls counted only what was appended

    def preflight(self, messages: Sequence[Any], tools: Sequence[Any]) -> Tuple[Dict[str, Any], bool]:
        """``(preflight, over)``: over when the verdict is not ``fits`` or there are
        more messages than ``trigger_messages``."""
        tools = tuple(tools or ())
        with self._lock:
            n = len(self._msgs)
            w = self._window
            same = (
                w is not None
                and len(messages) >= n
                and len(tools) == len(self._tools)
                and all(a is b for a, b in zip(tools, self._tools))
                and all(a is b for a, b in zip(messages, self._msgs))
            )
            if same:
                for d in _Converted(messages[n:]).dicts:
                    w.push(d)
            else:
                defs = openai_tools(tools)
                dicts = _Converted(messages).dicts
                w = turnfit.ContextWindow(self._model, **self._budget)
                self.loads += 1
                w.load({"messages": dicts, "tools": defs} if defs else dicts)
                self._window, self._tools = w, tools
            self._msgs = list(messages)
            pf = w.preflight()
        over = pf["verdict"] != "fits" or (self._trigger_messages is not None and len(messages) > self._trigger_messages)
        return pf, over

    def forget(self) -> None:
        with self._lock:
            self._window, self._msgs, self._tools = None, [], ()


# --- the turn on LangChain messages ------------------------------------------


def chat_model_summarizer(chat_model: Any, metadata: Optional[Mapping[str, Any]] = None) -> Callable[[Dict[str, Any]], Any]:
    """A LangChain chat model as ``fit_turn``'s summarizer: the prompt goes through
    the model's own ``invoke`` (callbacks, tracing and retries as configured),
    tagged ``turnfit-summary`` (``metadata`` added to the call's); ``ainvoke`` for
    the async turn."""

    config = {"tags": ["turnfit-summary"], "metadata": {"lc_source": "turnfit_summary", **(metadata or {})}}

    def text(reply: Any) -> Any:
        content = getattr(reply, "content", None)
        if isinstance(content, list) and not getattr(reply, "tool_calls", None):
            return reply.text  # content blocks: their text
        return reply

    def call(request: Mapping[str, Any]) -> Any:
        return text(chat_model.invoke(request["prompt"], config=config))

    async def acall(request: Mapping[str, Any]) -> Any:
        return text(await chat_model.ainvoke(request["prompt"], config=config))

    call.acall = acall  # type: ignore[attr-defined]
    return call


def _summarizer(summarize: Any) -> Any:
    if summarize is not None and hasattr(summarize, "invoke"):
        return chat_model_summarizer(summarize)
    return summarize


def _prepare(
    messages: Iterable[Any], tools: Optional[Iterable[Any]], options: Dict[str, Any], pending_calls: Any
) -> Tuple[_Converted, Any, Dict[str, Any]]:
    conv = _Converted(messages)
    opts = _turn_options(conv, options, pending_calls)
    tool_defs = openai_tools(tools)
    doc: Any = {"messages": conv.dicts, "tools": tool_defs} if tool_defs else conv.dicts
    return conv, doc, opts


def _turn_options(conv: _Converted, options: Dict[str, Any], pending_calls: Any) -> Dict[str, Any]:
    opts = dict(options)
    opts.setdefault("model", "gpt-4o")
    policy = dict(opts.get("policy") or {})
    if conv.unknown:
        policy["pinned"] = sorted(set(policy.get("pinned") or []) | set(conv.unknown))
    pending = _adapters.pending_ids(pending_calls, conv.originals, conv.pending_calls)
    if pending:
        policy["pending_calls"] = sorted(set(policy.get("pending_calls") or []) | set(pending))
    opts["policy"] = policy
    return opts


class _Session:
    """The middleware's turns on a :class:`turnfit.FitSession` (issue 52): the
    messages of the previous call are recognised by identity (the same objects, in
    order, then new ones), so a step converts and the core reads and counts only
    the new messages; anything else (another conversation, a rewritten state,
    other tools) starts a new session on the whole history. The turn is
    ``fit_messages``'s on the same history: the core holds the two equal.
    Thread-safe; the host's model summarizes outside the lock."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._conv: Optional[_Converted] = None
        self._msgs: List[Any] = []
        self._tools: Tuple[Any, ...] = ()
        self._session: Any = None
        self.loads = 0  # sessions started on a whole history

    def start(
        self, messages: Sequence[Any], tools: Optional[Iterable[Any]], options: Dict[str, Any], pending_calls: Any
    ) -> Tuple[_Converted, Any]:
        """``(converted, turn)``: the step's messages and its started native turn."""
        tools_t = tuple(tools or ())
        with self._lock:
            n = len(self._msgs)
            same = (
                self._session is not None
                and len(messages) >= n
                and len(tools_t) == len(self._tools)
                and all(a is b for a, b in zip(tools_t, self._tools))
                and all(a is b for a, b in zip(messages, self._msgs))
            )
            if same and self._conv is not None:
                added = self._conv.extend(messages[n:])
                if added:
                    self._session.update(len(self._conv.dicts) - len(added), added)
            else:
                self._conv = _Converted(messages)
                defs = openai_tools(tools_t)
                self._session = turnfit.FitSession({"messages": self._conv.dicts, "tools": defs} if defs else self._conv.dicts)
                self._tools = tools_t
                self.loads += 1
            self._msgs = list(messages)
            conv = self._conv.snapshot()
            opts = _turn_options(conv, options, pending_calls)
            opts.setdefault("model", "gpt-4o")
            return conv, self._session._start(opts)

    @staticmethod
    def result(conv: _Converted, turn: Any) -> Tuple[List[Any], Dict[str, Any]]:
        out, report = turnfit.FitSession._finish(turn)
        return (list(conv.originals) if out is None else _unpack(conv, out)), dict(report)

    def fit(
        self, messages: Sequence[Any], summarize: Any, tools: Any, options: Dict[str, Any], pending_calls: Any
    ) -> Tuple[List[Any], Dict[str, Any]]:
        conv, turn = self.start(messages, tools, options, pending_calls)
        turnfit._drive(turn, _summarizer(summarize))
        return self.result(conv, turn)

    async def afit(
        self, messages: Sequence[Any], summarize: Any, tools: Any, options: Dict[str, Any], pending_calls: Any
    ) -> Tuple[List[Any], Dict[str, Any]]:
        conv, turn = self.start(messages, tools, options, pending_calls)
        call = _summarizer(summarize)
        await turnfit._adrive(turn, getattr(call, "acall", call))
        return self.result(conv, turn)

    def forget(self) -> None:
        with self._lock:
            self._conv, self._session, self._msgs, self._tools = None, None, [], ()


def _unpack(conv: _Converted, out: Any) -> List[Any]:
    return conv.restore(out["messages"] if isinstance(out, Mapping) else out)


def fit_messages(
    messages: Iterable[Any],
    summarize: Any = None,
    *,
    tools: Optional[Iterable[Any]] = None,
    pending_calls: Any = "auto",
    **options: Any,
) -> Tuple[List[Any], Dict[str, Any]]:
    """``turnfit.fit_turn`` on LangChain messages: returns ``(messages, report)``.

    ``summarize``: a LangChain chat model (its ``invoke`` gets the summarizer
    prompt), any ``fit_turn`` summarizer callable, or None (the digest).
    ``tools``: the tools bound to the model, counted in the budget. ``options``:
    ``fit_turn``'s (``model``, ``max_tokens``, ``reserve_output``, ``policy``,
    ``summarizer``, ``trigger_messages``, ...). ``pending_calls``: ids of calls
    awaiting their result, kept with no synthetic result; ``"auto"`` (default) takes
    the unanswered calls of the newest assistant message with calls. Lossless: a
    message the turn did not change is the input object itself. A message type the
    converter does not know is counted as text and pinned (never dropped)."""
    conv, doc, opts = _prepare(messages, tools, options, pending_calls)
    out, report = turnfit.fit_turn(doc, _summarizer(summarize), **opts)
    return _unpack(conv, out), dict(report)


async def afit_messages(
    messages: Iterable[Any],
    summarize: Any = None,
    *,
    tools: Optional[Iterable[Any]] = None,
    pending_calls: Any = "auto",
    **options: Any,
) -> Tuple[List[Any], Dict[str, Any]]:
    """:func:`fit_messages` for async hosts (``turnfit.afit_turn``; a chat model's
    ``ainvoke`` summarizes)."""
    conv, doc, opts = _prepare(messages, tools, options, pending_calls)
    call = _summarizer(summarize)
    call = getattr(call, "acall", call)
    out, report = await turnfit.afit_turn(doc, call, **opts)
    return _unpack(conv, out), dict(report)


def token_counter(model: str = "gpt-4o") -> Callable[[List[Any]], int]:
    """An exact token counter for ``trim_messages(token_counter=...)``: the prompt
    tokens of the messages as ``model`` would be billed for them (framing and
    reply priming included)."""
    turnfit.lookup_model(model)  # fail now on an unknown model, not inside trim_messages

    def count(messages: List[Any]) -> int:
        if not messages:
            return 0
        return turnfit.count_conversation(to_openai(messages), model)

    return count


def trim_messages(
    messages: Iterable[Any],
    *,
    max_tokens: int,
    model: str = "gpt-4o",
    tool_output_max: Optional[int] = None,
    strategy: str = "recency",
    keep_last_turns: Optional[int] = None,
    **policy: Any,
) -> List[Any]:
    """Trim ``messages`` to ``max_tokens`` prompt tokens with :func:`turnfit.fit`.

    Like LangChain's ``trim_messages(strategy="last", include_system=True)``
    but round-aware: an assistant message with tool calls is kept or dropped
    together with its results; long tool outputs are cut (head and tail kept)
    before whole rounds are dropped. Returns LangChain message objects (the input
    objects for the messages kept unchanged).
    Raises :class:`turnfit.DoesNotFitError` when what must be kept is too big.
    """
    pol: Dict[str, Any] = dict(policy)
    pol["strategy"] = strategy
    if tool_output_max is not None:
        pol["tool_output_max"] = tool_output_max
    if keep_last_turns is not None:
        pol["keep_last_turns"] = keep_last_turns
    conv = _Converted(messages)
    if conv.unknown:
        pol["pinned"] = sorted(set(pol.get("pinned") or []) | set(conv.unknown))
    fitted, _report = turnfit.fit(conv.dicts, model=model, max_tokens=max_tokens, policy=pol)
    return conv.restore(fitted)


def _budget_options(
    model: str,
    max_tokens: Optional[int],
    reserve_output: Optional[int],
    trigger_ratio: Any,
    target_ratio: Any,
    policy: Optional[Mapping[str, Any]],
    summarizer: Optional[Mapping[str, Any]],
    trigger_messages: Optional[int],
) -> Dict[str, Any]:
    """The turn options of the middleware and the hook: the shared names and
    defaults (``_adapters.turn_options``: summarize, compact at 0.8 down to 0.5;
    ``target_ratio=None`` is no target)."""
    options = _adapters.turn_options(
        model,
        max_tokens=max_tokens,
        reserve_output=reserve_output,
        trigger_ratio=trigger_ratio,
        target_ratio=target_ratio,
        policy=policy,
        summarizer=summarizer,
        extra={},
    )
    if trigger_messages is not None:
        options["trigger_messages"] = trigger_messages
    return options


def _mirror_budget(options: Mapping[str, Any]) -> Dict[str, Any]:
    """The ``ContextWindow`` budget of the trigger check, from the turn options."""
    return {
        "context_window": options.get("max_tokens"),
        "reserved_output": options.get("reserve_output"),
        "trigger_ratio": options.get("trigger_ratio"),
        "target_ratio": options.get("target_ratio"),
    }


def _replace_all(messages: Sequence[Any]) -> List[Any]:
    """A state update replacing the whole ``messages`` list (LangGraph's
    ``add_messages`` reducer): remove everything, then the messages, ids kept."""
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    check_version("langgraph")
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages]


def pre_model_hook(
    model: str = "gpt-4o",
    *,
    max_tokens: Optional[int] = None,
    reserve_output: Optional[int] = None,
    trigger_ratio: Optional[float] = _adapters.UNSET,
    target_ratio: Optional[float] = _adapters.UNSET,
    policy: Optional[Mapping[str, Any]] = None,
    messages_key: str = "messages",
    summarize: Any = None,
    summarizer: Optional[Mapping[str, Any]] = None,
    trigger_messages: Optional[int] = None,
    write_back: bool = _adapters.DEFAULTS["write_back"],
    tools: Optional[Iterable[Any]] = None,
    pending_calls: Any = _adapters.DEFAULTS["pending_calls"],
    prompt: Any = None,
    context_window: Optional[int] = None,
    reserved_output: Optional[int] = None,
) -> Callable[[Mapping[str, Any]], Dict[str, Any]]:
    """A LangGraph ``pre_model_hook``: pre-flight the state's messages; when the
    verdict is not ``fits``, run one turn (:func:`fit_messages`: turnfit's policy,
    tool pairs kept, the result within the budget, unchanged messages the same objects).

    ``summarize`` is the host's model for the ``summarize`` strategy: a LangChain
    chat model (its ``invoke`` is called with the summarizer prompt; a cheaper one
    than the agent's works) or any callable taking the request dict; ``summarizer``
    its budget (``{"model", "context_window", "timeout_ms", ...}``). Without one, or
    when it fails, the deterministic digest summarizes and the report says why: the
    model never gets the overflowing history. ``tools``: the agent's tools, counted
    in the budget.

    ``write_back=False`` (default) returns ``{"llm_input_messages": [...]}``: only the
    model input is trimmed, the graph's stored history is left alone (LangGraph's
    documented pattern); each turn report's ``carry`` goes to the next call, so the
    messages the last summary replaced are sent as that summary (folded into the next
    one) rather than summarized again. Only the summary is carried: results a turn
    masked or cut are sent whole again, so a history still over the trigger without
    them has the summarizer run again at the next call (on the newer messages).
    ``write_back=True`` returns ``{"messages": [RemoveMessage(REMOVE_ALL_MESSAGES),
    *compacted]}``: the compacted history replaces the stored one, every unchanged
    message with its id, so the summary is paid once per compaction. Both carry
    ``"turnfit": {"preflight", "compaction"}`` (``compaction`` None when nothing was
    done, else ``{"status": "done", "report": <turn report>}``).

    ``prompt``: the agent's system prompt (``create_react_agent(prompt=...)``, a string
    or a ``SystemMessage``). LangGraph puts it in front of the messages after this hook,
    so the hook never sees it in the state: given here it is counted (and kept), and
    left out of what the hook returns. The budget names (``max_tokens``,
    ``reserve_output``) and defaults are every adapter's (:data:`DEFAULTS`);
    ``context_window`` and ``reserved_output`` are deprecated aliases.
    """
    max_tokens, reserve_output = _adapters.budget_aliases(
        "turnfit.langchain.pre_model_hook", max_tokens, reserve_output, context_window, reserved_output
    )
    options = _budget_options(
        model, max_tokens, reserve_output, trigger_ratio, target_ratio, policy, summarizer, trigger_messages
    )
    call = _summarizer(summarize)
    tool_list = list(tools or ())
    mirror = _Mirror(model, _mirror_budget(options), trigger_messages)
    carry: List[Any] = [None]  # the last report's carry (write_back=False)
    system = _system_message(prompt)

    def hook(state: Mapping[str, Any]) -> Dict[str, Any]:
        msgs = list(state[messages_key])
        head = [system] if system is not None else []
        pf, over = mirror.preflight(head + msgs, tool_list)
        if not over:
            info = {"preflight": pf, "compaction": None}
            return {"turnfit": info} if write_back else {"llm_input_messages": msgs, "turnfit": info}
        opts = options if write_back or carry[0] is None else dict(options, carry=carry[0])
        out, report = fit_messages(head + msgs, call, tools=tool_list, pending_calls=pending_calls, **opts)
        if system is not None:
            if not out or out[0] is not system:  # pragma: no cover - the system prompt is protected
                raise turnfit.InternalError("turnfit changed the agent's system prompt")
            out = out[1:]
        if not write_back:
            carry[0] = report.get("carry")
        info = {"preflight": pf, "compaction": {"status": "done", "report": report}}
        if write_back:
            mirror.forget()
            return {messages_key: _replace_all(out) if report.get("changed") else [], "turnfit": info}
        return {"llm_input_messages": out, "turnfit": info}

    return hook


def _system_message(prompt: Any) -> Any:
    """The hook's ``prompt`` as the one ``SystemMessage`` object every call counts."""
    if prompt is None:
        return None
    lc = _lc()
    if isinstance(prompt, str):
        return lc.SystemMessage(content=prompt)
    if isinstance(prompt, lc.SystemMessage):
        return prompt
    raise TypeError(
        "pre_model_hook(prompt=...) takes the agent's system prompt as a string or a SystemMessage, "
        f"not {type(prompt).__name__}"
    )


# --- LangChain v1 agent middleware ----------------------------------------------

_middleware_class: Any = None


def _middleware_cls() -> Any:
    global _middleware_class
    if _middleware_class is not None:
        return _middleware_class
    _lc()
    check_version("langchain")
    check_version("langgraph")
    from langchain.agents.middleware import AgentMiddleware
    from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse

    try:  # keeps the summarizer's own call out of the agent's streamed messages
        from langchain.agents.middleware.internal_call_transformer import (
            InternalCallTransformer,
            internal_call_metadata,
        )

        transformers_: Tuple[Any, ...] = (InternalCallTransformer,)
    except ImportError:  # pragma: no cover - other langchain releases
        transformers_, internal_call_metadata = (), dict
    from langchain_core.messages import AIMessage
    from langgraph.types import Command

    class TurnfitMiddleware(AgentMiddleware):  # type: ignore[misc, valid-type]
        """LangChain v1 agent middleware: before each model call (``wrap_model_call``)
        the request's system message, messages and tools are fitted as one turn
        (``turnfit.fit_turn``), the agent's own model summarizing unless another
        is given. See :func:`agent_middleware`."""

        transformers = transformers_

        def __init__(
            self,
            model: str,
            summarize: Any,
            write_back: bool,
            options: Dict[str, Any],
            pending_calls: Any,
            on_report: Optional[Callable[[Dict[str, Any]], None]],
        ) -> None:
            super().__init__()
            self.turnfit_model = model
            self.summarize = summarize
            self.write_back = write_back
            self.options = options
            self.pending_calls = pending_calls
            self.on_report = on_report
            self.last_report: Optional[Dict[str, Any]] = None
            self._mirror = _Mirror(model, _mirror_budget(options), options.get("trigger_messages"))
            self._session = _Session()
            self._carry: Any = None  # the last report's carry (write_back=False)

        def _options(self) -> Dict[str, Any]:
            if self.write_back or self._carry is None:
                return self.options
            return dict(self.options, carry=self._carry)

        def _keep_carry(self, report: Dict[str, Any]) -> None:
            if not self.write_back:
                self._carry = report.get("carry")

        def _summarizer_for(self, request: Any) -> Any:
            if self.summarize is False:
                return None
            chosen = self.summarize if self.summarize is not None else request.model
            if hasattr(chosen, "invoke"):  # a chat model: its call marked internal
                return chat_model_summarizer(chosen, internal_call_metadata())
            return chosen

        def _inputs(self, request: Any) -> Tuple[List[Any], bool]:
            sys_msg = request.system_message
            return ([sys_msg] if sys_msg is not None else []) + list(request.messages), sys_msg is not None

        def _after_fit(self, request: Any, fitted: List[Any], has_sys: bool, report: Dict[str, Any]) -> Any:
            self.last_report = report
            if self.on_report is not None:
                self.on_report(report)
            if not report.get("changed"):
                return None
            if has_sys:
                if fitted and fitted[0] is request.system_message:
                    fitted = fitted[1:]
                else:  # pragma: no cover - the system prompt is protected
                    raise turnfit.InternalError("turnfit changed the system message")
            return fitted

        def _respond(self, rest: List[Any], response: Any) -> Any:
            if not self.write_back:
                return response
            self._mirror.forget()  # the state is rewritten: the next call reloads
            self._session.forget()
            model_response = ModelResponse(result=[response]) if isinstance(response, AIMessage) else response
            for m in model_response.result:
                if m.id is None:
                    m.id = str(uuid.uuid4())  # the reducer sees the same reply twice: once by id
            update = {"messages": _replace_all([*rest, *model_response.result])}
            return ExtendedModelResponse(model_response=model_response, command=Command(update=update))

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            msgs, has_sys = self._inputs(request)
            _, over = self._mirror.preflight(msgs, request.tools)
            if not over:  # below the trigger: the request as it is, nothing recounted
                return handler(request)
            fitted, report = self._session.fit(
                msgs, self._summarizer_for(request), request.tools, self._options(), self.pending_calls
            )
            self._keep_carry(report)
            rest = self._after_fit(request, fitted, has_sys, report)
            if rest is None:
                return handler(request)
            return self._respond(rest, handler(request.override(messages=rest)))

        async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            msgs, has_sys = self._inputs(request)
            _, over = self._mirror.preflight(msgs, request.tools)
            if not over:
                return await handler(request)
            fitted, report = await self._session.afit(
                msgs, self._summarizer_for(request), request.tools, self._options(), self.pending_calls
            )
            self._keep_carry(report)
            rest = self._after_fit(request, fitted, has_sys, report)
            if rest is None:
                return await handler(request)
            return self._respond(rest, await handler(request.override(messages=rest)))

    _middleware_class = TurnfitMiddleware
    return TurnfitMiddleware


def agent_middleware(
    model: str = "gpt-4o",
    *,
    summarize: Any = None,
    write_back: bool = _adapters.DEFAULTS["write_back"],
    max_tokens: Optional[int] = None,
    reserve_output: Optional[int] = None,
    trigger_ratio: Optional[float] = _adapters.UNSET,
    target_ratio: Optional[float] = _adapters.UNSET,
    policy: Optional[Mapping[str, Any]] = None,
    summarizer: Optional[Mapping[str, Any]] = None,
    trigger_messages: Optional[int] = None,
    pending_calls: Any = _adapters.DEFAULTS["pending_calls"],
    on_report: Optional[Callable[[Dict[str, Any]], None]] = None,
    context_window: Optional[int] = None,
    reserved_output: Optional[int] = None,
) -> Any:
    """LangChain v1 agent middleware (``langchain.agents.create_agent(...,
    middleware=[agent_middleware("gpt-4o", max_tokens=128_000)])``).

    The budget names (``max_tokens``: the model's context window, ``reserve_output``)
    and the defaults (summarize, compact at 0.8 of ``max_tokens`` down to 0.5,
    ``write_back=False``, ``pending_calls="auto"``) are every adapter's
    (:data:`DEFAULTS`, the README's table); ``context_window`` and ``reserved_output``
    are deprecated aliases. ``target_ratio=None``: no target, only what exceeds the
    budget is compacted.

    Before each model call (``wrap_model_call`` / ``awrap_model_call``) the request's
    system message, messages and bound tools are fitted as one turn
    (:func:`fit_messages`): the model receives a request within the budget, no call
    without its result, system prompt and task kept; below the trigger the request
    goes through untouched. ``model`` is the turnfit model name that counts (the
    chat model's encoding). ``summarize``: None (default) uses the agent's own model
    (``request.model``) as the summarizer; a chat model (a cheaper one) or a
    callable uses that; ``False`` uses the deterministic digest. A summarizer that
    fails is replaced by the digest and the run goes on (``report["summary"]["fallback"]``).

    ``write_back=True`` writes the compacted history back to the graph
    state (``RemoveMessage(REMOVE_ALL_MESSAGES)`` then the messages, ids kept,
    returned as the model call's ``Command``), as LangChain's own
    ``SummarizationMiddleware`` does: the summary is paid once per compaction and
    the history then grows from the target (trigger 0.8, target 0.5 by default), so
    the prompt's prefix stays the same between compactions (provider prefix caches
    keep working) and the checkpoint stays bounded. ``write_back=False`` (default) trims only
    the request: the state keeps the full history (audit, replay), and each turn
    report's ``carry`` goes to the next call, so the messages the last summary
    replaced are sent as that summary (folded into the next one when the trigger
    fires again) rather than summarized again. Only the summary is carried: results
    a turn masked or cut are sent whole again, so a history still over the trigger
    without them has the summarizer run again at the next call (on the newer
    messages); ``write_back=True`` pays the summary once per compaction.

    Below the trigger nothing is recounted: the previous call's messages stay in a
    ``ContextWindow`` and only the appended ones are counted (a call whose history is
    not the previous one plus new messages reloads it); the turn runs only over the
    trigger. ``on_report`` is called with each turn's report; ``last_report`` holds
    the latest. Needs ``langchain`` (``TESTED_VERSIONS``)."""
    max_tokens, reserve_output = _adapters.budget_aliases(
        "turnfit.langchain.agent_middleware", max_tokens, reserve_output, context_window, reserved_output
    )
    options = _budget_options(
        model, max_tokens, reserve_output, trigger_ratio, target_ratio, policy, summarizer, trigger_messages
    )
    return _middleware_cls()(model, summarize, write_back, options, pending_calls, on_report)


def __getattr__(name: str) -> Any:
    if name == "TurnfitMiddleware":
        return _middleware_cls()
    raise AttributeError(name)



def repair_update(
    messages: Sequence[Any],
    synthetic_result: Optional[str] = None,
    model: str = "gpt-4o",
    key: str = "messages",
) -> Dict[str, Any]:
    """The LangGraph state update that writes a repaired history back, in one call.

    When a graph fails with ``INVALID_CHAT_HISTORY`` ("Found AIMessages with
    tool_calls that do not have a corresponding ToolMessage"; ``turnfit.classify``
    says ``repair_history``), pass the state's messages here and the result to
    ``graph.update_state(config, ...)``: the history is repaired by
    :func:`turnfit.repair` (a synthetic result, ``synthetic_result`` or turnfit's
    default text, right after each unanswered call; orphaned results dropped),
    converted back keeping every unchanged message as the same object (id,
    metadata), and written as a remove-all followed by the repaired list, so
    LangGraph's ``add_messages`` reducer replaces the history instead of appending.
    A history with nothing to repair gives ``{}`` (no update). ``key`` is the
    state's messages key."""
    conv = _Converted(messages)
    out = turnfit.repair(conv.dicts, model=model, synthetic_result=synthetic_result)
    if not out["changes"]:
        return {}
    repaired = out["conversation"]
    if isinstance(repaired, Mapping):
        repaired = repaired["messages"]
    return {key: _replace_all(conv.restore(repaired))}


__all__.append("repair_update")

"""turnfit: exact token counting and context-window management for LLM agents.

A thin Python layer over turnfit's Rust core (``turnfit._native``, PyO3, abi3).
Every behaviour lives in the core; this module only converts dicts and lists
to and from the JSON text the core takes and returns.

>>> import turnfit
>>> turnfit.Tokenizer("o200k_base").count_tokens("Hello, world!")
4
"""

from __future__ import annotations

import inspect as _inspect
import json as _json
import os as _os
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from . import _native
from ._native import (
    CallStack,
    TurnfitError,
    CycleDetectedError,
    DepthExceededError,
    DoesNotFitError,
    InternalError,
    InvalidArgumentError,
    InvalidJsonError,
    InvalidYamlError,
    InvalidUtf8Error,
    IoError,
    LimitExceededError,
    FileTokenizer,
    Tokenizer,
    UnknownEncodingError,
    UnknownModelError,
    UnknownTokenError,
    UnsafePathError,
    list_encodings,
    now_ms,
    now_us,
)

__version__: str = _native.version()

__all__ = [
    "Tokenizer",
    "FileTokenizer",
    "ContextWindow",
    "FitSession",
    "Skills",
    "CircuitBreaker",
    "CallStack",
    "Tracer",
    "count_tokens",
    "count_conversation",
    "fit",
    "fit_json",
    "fit_turn",
    "afit_turn",
    "validate",
    "repair",
    "assemble",
    "lookup_model",
    "list_models",
    "register_model",
    "list_encodings",
    "handoff_validate",
    "handoff_render",
    "handoff_filter",
    "classify",
    "backoff",
    "toolset_report",
    "toolset_select",
    "callstack_from_json",
    "now_ms",
    "now_us",
    "TurnfitError",
    "InvalidArgumentError",
    "InvalidUtf8Error",
    "UnknownEncodingError",
    "UnknownModelError",
    "UnknownTokenError",
    "LimitExceededError",
    "InvalidJsonError",
    "InvalidYamlError",
    "DoesNotFitError",
    "IoError",
    "UnsafePathError",
    "CycleDetectedError",
    "DepthExceededError",
    "InternalError",
]

Json = Any
Conversation = Union[List[Dict[str, Any]], Dict[str, Any]]


def _dumps(value: Any) -> str:
    # ensure_ascii=False keeps the text compact; lone surrogates are replaced
    # by U+FFFD on the Rust side, as for every other str argument.
    # _dumps_plain writes the same text for plain dicts, lists, strs and
    # numbers, several times faster (a quarter of fit on a 12 MB transcript,
    # issue 36); anything else (None) goes through json.dumps as before.
    text = _native._dumps_plain(value)
    if text is not None:
        return text
    return _json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _opt(value: Optional[Any]) -> Optional[str]:
    return None if value is None else _dumps(value)


_by_model: Dict[Tuple[str, Optional[str]], Tokenizer] = {}


def count_tokens(text: Union[str, bytes], model: str = "gpt-4o", *, encoding: Optional[str] = None) -> int:
    """Exact token count of ``text`` for ``model`` (or for ``encoding`` when given)."""
    key = (model, encoding)
    tok = _by_model.get(key)
    if tok is None:
        tok = Tokenizer(encoding) if encoding is not None else Tokenizer.for_model(model)
        _by_model[key] = tok
    return tok.count_tokens(text)


def lookup_model(model: str, fallback_encoding: Optional[str] = None) -> Dict[str, Any]:
    """What the registry knows about ``model`` (encoding, limits, exact)."""
    return _json.loads(_native._lookup_model_json(model, fallback_encoding))


def list_models() -> List[Dict[str, Any]]:
    """Every model profile in the built-in registry."""
    return _json.loads(_native._list_models_json())


def register_model(
    profile: Union[str, Mapping[str, Any], List[Mapping[str, Any]]],
    *,
    count: Optional[Callable[[str], int]] = None,
    tokenizer: Optional[Union[str, "os.PathLike[str]"]] = None,
    chat_template: Optional[str] = None,
    context_window: Optional[int] = None,
    max_output_tokens: Optional[int] = None,
    template_kwargs: Optional[Mapping[str, Any]] = None,
    ollama: Optional[str] = None,
    ollama_models: Optional[Union[str, "os.PathLike[str]"]] = None,
    hf: Optional[Union[str, "os.PathLike[str]"]] = None,
    hf_cache: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> int:
    """Register model profiles (``{"name", "encoding", "context_window",
    "max_output_tokens", "exact"}``, or a list of them) in turnfit's registry
    for this process; returns how many names were registered.

    ``count``: the host's own counter for a model whose tokenizer is not
    public, a callable ``count(text) -> int`` (one profile only). Every
    window, ``fit`` and ``fit_turn`` for that model then counts text with it
    (framing stays the model's); registering the name again without ``count``
    removes it. It is called while turnfit holds what it counts for, with the
    GIL held: it must not call back into turnfit (such a call raises
    ``InvalidArgumentError``), and an exception it raises, or a result that is
    not a non-negative ``int``, fails the counting call with
    ``InvalidArgumentError`` naming the model.

    ``tokenizer``: a model known by its own files (``profile`` is then its
    name): the path of its ``tokenizer.json`` (the chat template is read
    from beside it) or GGUF, ``chat_template`` the Jinja source instead,
    ``context_window`` the window the server allocated (Ollama's
    ``num_ctx``, llama.cpp's ``n_ctx``, vLLM's ``max_model_len``; required),
    ``template_kwargs`` extra template variables. Every ``fit``, turn and
    window for that name then reports the template's count (``exact``) and
    fits the rendered prompt within the limit; its conversations are
    OpenAI Chat messages.

    Instead of ``tokenizer``, the files can be found where a host keeps
    them (nothing is downloaded): ``ollama`` an Ollama model name
    (``"qwen3:8b"``) whose GGUF is read from the Ollama store
    (``ollama_models``, default ``$OLLAMA_MODELS`` else
    ``~/.ollama/models``), or ``hf`` a Hugging Face repo id
    (``"Org/Name"``, ``"Org/Name@revision"``) in the hub cache
    (``hf_cache``, default as huggingface_hub's) or a cache, snapshot or
    model folder."""
    located = {"tokenizer": tokenizer, "ollama_model": ollama, "hf_model": hf}
    named = [k for k, v in located.items() if v is not None]
    if len(named) > 1:
        raise TypeError("tokenizer=, ollama= and hf= are three ways to name the files: give one")
    if ollama_models is not None and ollama is None:
        raise TypeError("ollama_models goes with ollama=")
    if hf_cache is not None and hf is None:
        raise TypeError("hf_cache goes with hf=")
    if not named:
        if chat_template is not None or context_window is not None or template_kwargs is not None:
            raise TypeError("chat_template, context_window and template_kwargs go with tokenizer=, ollama= or hf=")
        if max_output_tokens is not None:
            raise TypeError("max_output_tokens goes with tokenizer= (a profile carries its own)")
        return int(_native._register_model(_dumps(profile), count))
    if not isinstance(profile, str):
        raise TypeError(f"with {named[0]}=, the first argument is the model's name (a str)")
    if count is not None:
        raise TypeError(f"count and {named[0]}= are two ways to count: give one")
    spec: Dict[str, Any] = {"name": profile}
    if tokenizer is not None:
        spec["tokenizer"] = _os.fspath(tokenizer)
    if ollama is not None:
        spec["ollama_model"] = ollama
    if ollama_models is not None:
        spec["ollama_models"] = _os.fspath(ollama_models)
    if hf is not None:
        spec["hf_model"] = _os.fspath(hf)
    if hf_cache is not None:
        spec["hf_cache"] = _os.fspath(hf_cache)
    if context_window is not None:
        spec["context_window"] = context_window
    if chat_template is not None:
        spec["chat_template"] = chat_template
    if max_output_tokens is not None:
        spec["max_output_tokens"] = max_output_tokens
    if template_kwargs is not None:
        spec["template_kwargs"] = dict(template_kwargs)
    _native._register_model_files(_dumps(spec))
    return 1


# --- conversations ---------------------------------------------------------


def count_conversation(conversation: Conversation, model: str = "gpt-4o") -> int:
    """Prompt tokens of a whole conversation (OpenAI or Anthropic shape), framing included."""
    return _native._count_conversation(_dumps(conversation), model)


def fit(conversation: Conversation, **options: Any) -> Tuple[Conversation, Dict[str, Any]]:
    """Make ``conversation`` fit a budget; returns ``(conversation, report)``.

    ``options`` are the fit options of docs/formats.md (``model`` required;
    ``max_tokens``, ``reserve_output``, ``format``, and ``policy``: the
    compaction policy, e.g. ``{"strategy": "hybrid", "tool_output_max":
    2000}``), passed through unchanged so new core options need no binding
    change. The result has the input's shape; a tool call is
    never separated from its result. A message kept unedited is the
    caller's own object (not a copy, as with ``trim_messages``); the result's
    list and envelope, and every masked, cut or summarized message, are new.
    Raises ``DoesNotFitError`` when what must be kept is too big.
    """
    # _fit_value reads the conversation's dicts, lists and strings directly
    # (no JSON text in between); None when it is not plain JSON data (a
    # subclass, a non-str key, NaN...), which goes through the text as
    # before. Either builds the result's dicts and lists from the core's
    # values: the objects json.loads would make of the JSON text; the value
    # path hands back the caller's own object for each message the core
    # kept unedited (equal to that copy: one holding a tuple is copied).
    done = _native._fit_value(conversation, options, _dumps)
    if done is None:
        done = _native._fit(_dumps(conversation), _dumps(options))
    out, report = done
    return out, report


Summarizer = Callable[[Dict[str, Any]], Any]
"""The host's model as a summarizer: called with the request (``prompt``,
``max_summary_tokens``, ``model``, ``piece``/``pieces``, ...) and returning
the summary text: a ``str``, or an object with a ``str`` ``content`` (a
LangChain ``AIMessage``), or, for ``afit_turn``, an awaitable of either."""


def _describe(e: BaseException) -> str:
    """The host's exception in words for the fallback's detail. Never raises:
    the exception is the host's object, and its ``__str__`` may raise too."""
    try:
        name = str(type(e).__name__)
    except Exception:
        name = "exception"
    try:
        text = str(e)
    except Exception:
        text = "<unprintable>"
    return f"{name}: {text}" if text else name


def _plain(text: str) -> str:
    """``text`` as an exact ``str`` of valid UTF-8 (lone surrogates escaped):
    what the host hands back may be a ``str`` subclass or hold surrogates."""
    return str.encode(str.__add__("", text), "utf-8", "backslashreplace").decode("utf-8")


def _reply_text(reply: Any) -> Tuple[Optional[str], Optional[str], str]:
    """``(text, failure, message)`` for the summarizer's return value. The
    reply is the host's object: anything reading it raises (a ``content`` or
    ``tool_calls`` property) makes it not text, never the turn's error."""
    if isinstance(reply, str):
        # An exact str: a subclass's methods are the host's code too.
        return str.__add__("", reply), None, ""
    if isinstance(reply, (bytes, bytearray)):
        try:
            return bytes(reply).decode("utf-8"), None, ""
        except UnicodeDecodeError as e:
            return None, "invalid_utf8", f"the summary is not valid UTF-8 at byte offset {e.start}"
    try:
        content = getattr(reply, "content", None)
        if isinstance(content, str) and not getattr(reply, "tool_calls", None):
            return _reply_text(content)
    except Exception as e:
        return None, "not_text", f"reading the summarizer's reply raised {_describe(e)}"
    return None, "not_text", f"the summarizer returned {_describe_type(reply)}, not text"


def _describe_type(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except Exception:
        return "an object"


def _outcome(summarize: Summarizer, request: Dict[str, Any]) -> Tuple[Optional[str], Optional[str], str]:
    """The host's answer to one request as ``(text, failure, message)``.
    Everything the host returns or raises is untrusted and ends here as a
    reply or a failure (the digest then stands in); only an interrupt
    (``KeyboardInterrupt``, ``SystemExit``: not ``Exception``) escapes."""
    try:
        reply = summarize(request)
        if _inspect.isawaitable(reply):
            reply = _run_awaitable(reply)
        return _reply_text(reply)
    except Exception as e:  # the host's model failed: the digest stands in
        return None, "error", _describe(e)


def _answer(turn: Any, outcome: Tuple[Optional[str], Optional[str], str]) -> None:
    """Hands the outcome to the turn: only turnfit's own errors raise here."""
    text, failure, message = outcome
    if failure is None and text is not None:
        turn.resume(text)
    else:
        turn.fail(failure or "error", _plain(message))


def fit_turn(
    conversation: Conversation, summarize: Optional[Summarizer] = None, **options: Any
) -> Tuple[Conversation, Dict[str, Any]]:
    """One agent turn: the request to send now, within the budget, with the host's
    model summarizing. Returns ``(conversation, report)``.

    ``options`` are ``fit``'s (``model`` required; ``policy``, ``summarizer``:
    ``{"model", "context_window", "max_prompt_tokens", "timeout_ms",
    "max_requests"}``, ``trigger_messages``, ...). With ``policy={"strategy":
    "summarize"}`` and a span to drop, ``summarize`` (the host's model) is called with each
    request (a span too long for the summarizer goes in pieces, each within
    its budget). If it raises, returns nothing usable, or takes longer than
    ``timeout_ms``, the deterministic digest stands in: the turn still fits,
    and ``report["summary"]["fallback"]`` says why. Raises ``DoesNotFitError``
    only when the system prompt, tools, task, newest user message and pins
    alone exceed the budget. A coroutine-function summarizer needs
    ``afit_turn`` inside a running event loop."""
    turn = _native.Turn(_dumps(conversation), _dumps(options))
    _drive(turn, summarize)
    return _finish(turn)


def _drive(turn: Any, summarize: Optional[Summarizer]) -> None:
    """Answers each waiting request with ``summarize`` (a coroutine is run to
    completion); a summarizer that raises is a failed reply: the digest stands in."""
    for request in _requests(turn, summarize):
        _answer(turn, _outcome(summarize, request))  # type: ignore[arg-type]


def _requests(turn: Any, summarize: Optional[Summarizer]) -> Any:
    """The waiting summarizer requests, one at a time, while there is a summarizer."""
    call = turn.call()
    while call is not None and summarize is not None:
        yield _json.loads(call)
        call = turn.call()


def _finish(turn: Any) -> Tuple[Conversation, Dict[str, Any]]:
    text, report = turn.finish()
    return _json.loads(text), _json.loads(report)


def _run_awaitable(aw: Any) -> Any:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        async def wrap() -> Any:
            return await aw
        return asyncio.run(wrap())
    if hasattr(aw, "close"):
        aw.close()
    raise TypeError("the summarizer is a coroutine function and an event loop is running: use afit_turn")


async def afit_turn(
    conversation: Conversation, summarize: Optional[Summarizer] = None, **options: Any
) -> Tuple[Conversation, Dict[str, Any]]:
    """``fit_turn`` for async hosts: ``summarize`` may be a coroutine function
    (or return an awaitable); each request is cancelled after its
    ``timeout_ms`` (``asyncio.wait_for``) and the digest stands in."""
    turn = _native.Turn(_dumps(conversation), _dumps(options))
    await _adrive(turn, summarize)
    return _finish(turn)


async def _adrive(turn: Any, summarize: Optional[Summarizer]) -> None:
    """:func:`_drive` for async hosts: each request is cancelled after its
    ``timeout_ms`` and the digest stands in."""
    import asyncio

    for request in _requests(turn, summarize):
        timeout = request.get("timeout_ms") or 0
        outcome: Tuple[Optional[str], Optional[str], str]
        try:
            reply = summarize(request)  # type: ignore[misc]
            if _inspect.isawaitable(reply):
                reply = await (asyncio.wait_for(reply, timeout / 1000) if timeout else reply)
            outcome = _reply_text(reply)
        except asyncio.TimeoutError:
            outcome = None, "timeout", f"no reply within {timeout} ms; cancelled"
        except Exception as e:  # the host's model failed: the digest stands in
            outcome = None, "error", _describe(e)
        _answer(turn, outcome)


class FitSession:
    """A history fitted turn after turn, kept parsed and counted in the core between
    turns (issue 52): a step reads and counts only what changed. Tell it what
    changed with :meth:`update` ("the first ``keep`` messages are as last time,
    then these"); :meth:`fit_turn` then runs the same turn ``turnfit.fit_turn``
    runs on the whole history (same options, carry, summarizer), and returns
    ``(conversation, report)`` with ``conversation`` None when the turn left the
    history as it is (send your own messages; nothing was written). OpenAI Chat
    and AI SDK messages update step by step; other formats take a new session on
    the full history. ``format`` forces the format (``"ai_sdk"``, ...)."""

    def __init__(self, conversation: Optional[Conversation] = None, format: Optional[str] = None) -> None:
        self._s = _native.FitSession(_dumps([] if conversation is None else conversation), format)

    def __len__(self) -> int:
        return len(self._s)

    def update(self, keep: int, new_messages: List[Dict[str, Any]]) -> None:
        """Keeps the first ``keep`` messages and appends ``new_messages``."""
        self._s.update(keep, _dumps(list(new_messages)))

    def fit_turn(
        self, summarize: Optional[Summarizer] = None, **options: Any
    ) -> Tuple[Optional[Conversation], Dict[str, Any]]:
        turn = self._start(options)
        _drive(turn, summarize)
        return self._finish(turn)

    async def afit_turn(
        self, summarize: Optional[Summarizer] = None, **options: Any
    ) -> Tuple[Optional[Conversation], Dict[str, Any]]:
        turn = self._start(options)
        await _adrive(turn, summarize)
        return self._finish(turn)

    def _start(self, options: Mapping[str, Any]) -> Any:
        """The step's native turn: it holds its own copy of the history, so an
        adapter drives it (its model summarizing) outside the lock it holds
        around the session."""
        return self._s.turn(_dumps(options))

    @staticmethod
    def _finish(turn: Any) -> Tuple[Optional[Conversation], Dict[str, Any]]:
        text, report = turn.finish_changed()
        return (None if text is None else _json.loads(text)), _json.loads(report)


def fit_json(conversation: str, options: Union[str, Mapping[str, Any]]) -> Tuple[str, Dict[str, Any]]:
    """``fit`` on JSON text: the conversation goes in and comes out as text, untouched
    where nothing changed (key order preserved)."""
    opts = options if isinstance(options, str) else _dumps(options)
    text, report = _native._fit_json(conversation, opts)
    return text, _json.loads(report)


def validate(conversation: Conversation) -> List[Dict[str, Any]]:
    """Structural issues (orphaned results, unanswered calls, ...); ``[]`` when none."""
    return _json.loads(_native._validate_json(_dumps(conversation)))


def repair(
    conversation: Conversation, model: str = "gpt-4o", synthetic_result: Optional[str] = None
) -> Dict[str, Any]:
    """``{"issues", "conversation", "changes"}``: the repaired conversation and its manifest."""
    return _json.loads(_native._repair_json(_dumps(conversation), model, synthetic_result))


def assemble(tokenizer: Tokenizer, request: Mapping[str, Any]) -> Dict[str, Any]:
    """Prompt assembly from prioritized sections under a token budget."""
    return _json.loads(_native._assemble_json(tokenizer, _dumps(request)))


class ContextWindow:
    """A conversation bound to a model and a budget, with cached per-message counts.

    Appending a message costs that message only. Safe to share between threads
    (calls on one window are serialized).

    A model the registry does not know (an Azure deployment, a local model)
    takes ``encoding`` and ``context_window`` (and ``max_output_tokens``); an
    unknown name without them raises ``UnknownModelError`` naming close matches.
    """

    __slots__ = ("_w", "model", "_on_event")

    def __init__(
        self,
        model: str,
        *,
        context_window: Optional[int] = None,
        reserved_output: Optional[int] = None,
        trigger_ratio: Optional[float] = None,
        target_ratio: Optional[float] = None,
        conversation: Optional[Conversation] = None,
        encoding: Optional[str] = None,
        max_output_tokens: Optional[int] = None,
        chars_per_token: Optional[float] = None,
        multi_scale: Optional[Mapping[str, int]] = None,
    ) -> None:
        budget = {
            k: v
            for k, v in (
                ("context_window", context_window),
                ("reserved_output", reserved_output),
                ("trigger_ratio", trigger_ratio),
                ("target_ratio", target_ratio),
                ("encoding", encoding),
                ("max_output_tokens", max_output_tokens),
                ("chars_per_token", chars_per_token),
                ("multi_scale", dict(multi_scale) if multi_scale is not None else None),
            )
            if v is not None
        }
        self.model = model
        self._on_event: Optional[Callable[[Dict[str, Any]], None]] = None
        self._w = _native.Window(model, _dumps(budget) if budget else None)
        if conversation is not None:
            self.load(conversation)

    def on_event(self, handler: Optional[Callable[[Dict[str, Any]], None]]) -> None:
        """Set (``None``: clear) the handler for this window's events: dicts with
        ``kind`` ``"compacted"``, ``"repaired"`` or ``"budget_crossed"`` and the
        payload of docs/formats.md, "Events". It is called on the calling thread
        when the call that raised the events returns; an exception it raises
        reaches that call's caller (the call itself has completed)."""
        if handler is not None and not callable(handler):
            raise TypeError("handler must be callable or None")
        self._w.set_events(handler is not None)
        self._on_event = handler

    def _emit(self) -> None:
        handler = self._on_event
        if handler is not None:
            for text in self._w.take_events():
                handler(_json.loads(text))

    def load(self, conversation: Conversation) -> None:
        """Replace the conversation; on failure the window is unchanged."""
        self._w.load(_dumps(conversation))
        self._emit()

    def load_json(self, conversation: str) -> None:
        self._w.load(conversation)
        self._emit()

    def push(self, message: Mapping[str, Any]) -> int:
        """Append one message (the window's format); returns its tokens."""
        n = self._w.push(_dumps(message))
        self._emit()
        return n

    def add_message(
        self,
        message: Mapping[str, Any],
        *,
        auto_prune: bool = True,
        policy: Optional[Mapping[str, Any]] = None,
        summarize: Optional[Callable[[Dict[str, Any]], str]] = None,
        **options: Any,
    ) -> Dict[str, Any]:
        """Append one message; with ``auto_prune`` (the default), compact first when it
        would take the window past its trigger, with the new message counted as the
        latest, so the window ends at its target. ``policy`` (or keyword options) is
        ``compact``'s. Returns ``{"tokens", "compacted"}`` (the compaction report, or
        ``None``). Raises ``DoesNotFitError`` with the window unchanged when no
        compaction can make room.

        On a window made with ``multi_scale`` (immediate / session / historical
        tier budgets, docs/formats.md), the tiers are folded instead of compacting
        (the policy is not used): ``summarize``, when given, gets each fold's
        request ``{"tier", "prompt", "max_tokens"}`` and returns the summary text;
        an exception or a non-text reply falls back to the digest."""
        if not auto_prune:
            return {"tokens": self.push(message), "compacted": None}
        merged = dict(policy or {}, **options)
        ask = None
        if summarize is not None:
            if not callable(summarize):
                raise TypeError("summarize must be callable or None")

            def ask(request: str) -> Any:
                return summarize(_json.loads(request))

        out = _json.loads(self._w.add(_dumps(message), _dumps(merged) if merged else None, ask))
        self._emit()
        return out

    def fit_turn(self, summarize: Optional[Summarizer] = None, **options: Any) -> Dict[str, Any]:
        """One turn on this window (the stateful ``turnfit.fit_turn``): below the
        trigger nothing is recounted or copied and the report says ``fired: False``;
        over it, the window is compacted, ``summarize`` (the host's model) writing
        the summary, with the digest standing in when it fails. ``options``: ``policy``,
        ``summarizer``, ``trigger_messages``. The window's lock is not held while
        ``summarize`` runs; if the window changes meanwhile, nothing is applied and
        ``InvalidArgumentError`` says so. Returns the turn report."""
        turn = _native.WindowTurn(self._w, _dumps(options))
        _drive(turn, summarize)
        report = _json.loads(turn.finish())
        self._emit()
        return report

    @property
    def utilization(self) -> float:
        """Prompt plus reserved output over the window (``preflight()["utilization"]``):
        the figure the verdict reads, so the reply keeps its room."""
        return float(self.preflight()["utilization"])

    @property
    def message_utilization(self) -> float:
        """The messages alone over the window (``preflight()["message_utilization"]``):
        document 000's ``current_tokens / max_tokens``, 0.0 for an empty window."""
        return float(self.preflight()["message_utilization"])

    def pop(self) -> Optional[Dict[str, Any]]:
        text = self._w.pop()
        return None if text is None else _json.loads(text)

    @property
    def tiers(self) -> Optional[Dict[str, Any]]:
        """A multi-scale window's tiers (``preflight()["tiers"]``): each tier's tokens
        and budget and the fold counts; ``None`` for other windows."""
        return self.preflight().get("tiers")

    def preflight(self, new_input: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Totals by component, limit, utilization and a verdict (fits / should_compact / overflow)."""
        return _json.loads(self._w.preflight(_opt(new_input)))

    def validate(self) -> List[Dict[str, Any]]:
        return _json.loads(self._w.validate())

    def repair(self, synthetic_result: Optional[str] = None) -> List[Dict[str, Any]]:
        """Repair in place; returns the changes."""
        r = self._w.repair(synthetic_result)
        self._emit()
        return _json.loads(r)

    @property
    def conversation(self) -> Conversation:
        return _json.loads(self._w.conversation())

    def conversation_json(self) -> str:
        return self._w.conversation()

    @property
    def message_tokens(self) -> List[int]:
        return self._w.message_tokens()

    def __len__(self) -> int:
        return len(self._w)

    def compact(self, policy: Optional[Mapping[str, Any]] = None, **options: Any) -> Dict[str, Any]:
        """Compact in place. Returns ``{"status": "done", "report"}`` or, for the
        summarize strategy, ``{"status": "needs_summary", "request"}``: send
        ``request["prompt"]`` to your model and call :meth:`apply_summary`."""
        merged = dict(policy or {})
        merged.update(options)
        r = self._w.compact(_dumps(merged) if merged else None)
        self._emit()
        return _json.loads(r)

    def apply_summary(self, id: str, summary: str) -> Dict[str, Any]:
        r = self._w.apply_summary(id, summary)
        self._emit()
        return _json.loads(r)

    def calibrate(self, reported_prompt_tokens: int) -> float:
        return self._w.calibrate(reported_prompt_tokens)

    def __repr__(self) -> str:
        return f"ContextWindow({self.model!r}, messages={len(self)})"


# --- agent primitives ------------------------------------------------------


class Skills:
    """A skills folder (``<name>/SKILL.md`` or ``<name>.md``); bodies load lazily."""

    __slots__ = ("_s", "root")

    def __init__(self, root: str, **options: Any) -> None:
        self.root = str(root)
        self._s = _native.Skills(self.root, _dumps(options) if options else None)

    def list(self) -> Dict[str, Any]:
        return _json.loads(self._s.list())

    def body(self, name: str) -> Dict[str, Any]:
        """``{"name", "text", "tokens"}``; unsafe names raise ``UnsafePathError``."""
        return _json.loads(self._s.body(name))

    def render_index(self, **options: Any) -> Dict[str, Any]:
        return _json.loads(self._s.render_index(_dumps(options) if options else None))


def handoff_validate(handoff: Mapping[str, Any]) -> Dict[str, Any]:
    return _json.loads(_native._handoff_validate(_dumps(handoff)))


def handoff_render(handoff: Mapping[str, Any], **options: Any) -> Dict[str, Any]:
    return _json.loads(_native._handoff_render(_dumps(handoff), _dumps(options) if options else None))


def handoff_filter(conversation: Conversation, **options: Any) -> Dict[str, Any]:
    return _json.loads(_native._handoff_filter(_dumps(conversation), _dumps(options) if options else None))


def _error_context(
    agent_id: Optional[str], workflow_id: Optional[str], metadata: Optional[Mapping[str, Any]]
) -> Dict[str, Any]:
    ctx: Dict[str, Any] = {}
    if agent_id is not None:
        ctx["agent_id"] = agent_id
    if workflow_id is not None:
        ctx["workflow_id"] = workflow_id
    if metadata is not None:
        ctx["metadata"] = metadata
    return ctx


def classify(
    provider: str,
    status: int,
    body: str = "",
    headers: Optional[Mapping[str, str]] = None,
    *,
    agent_id: Optional[str] = None,
    workflow_id: Optional[str] = None,
    metadata: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """Classify a provider error response (retryable? how long to wait? context overflow?).

    ``agent_id``, ``workflow_id`` and ``metadata`` are the error's context:
    echoed in the result beside the verdict (``None`` when not given)."""
    req = {"provider": provider, "status": status, "body": body, "headers": dict(headers or {})}
    req.update(_error_context(agent_id, workflow_id, metadata))
    return _json.loads(_native._classify(_dumps(req)))


def backoff(**request: Any) -> Dict[str, Any]:
    """The retry decision (``{"decision": "retry", "delay_ms"}`` or ``give_up``)."""
    return _json.loads(_native._backoff(_dumps(request)))


class CircuitBreaker:
    """Circuit breakers keyed by a string; thread-safe. Times are milliseconds
    (``turnfit.now_ms()`` by default)."""

    __slots__ = ("_b",)

    def __init__(self, **config: Any) -> None:
        self._b = _native.CircuitBreaker(_dumps(config) if config else None)

    def allow(self, key: str, now_ms: Optional[int] = None) -> bool:
        return self._b.allow(key, _native.now_ms() if now_ms is None else now_ms)

    def record_success(self, key: str, now_ms: Optional[int] = None) -> str:
        return self._b.record(key, True, _native.now_ms() if now_ms is None else now_ms)

    def record_failure(
        self,
        key: str,
        now_ms: Optional[int] = None,
        *,
        agent_id: Optional[str] = None,
        workflow_id: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
    ) -> str:
        """Records a failure; with ``agent_id`` / ``workflow_id`` it is also
        counted under them (see ``failure_counts``)."""
        now = _native.now_ms() if now_ms is None else now_ms
        ctx = _error_context(agent_id, workflow_id, metadata)
        if not ctx:
            return self._b.record(key, False, now)
        return self._b.record_in(key, False, now, _dumps(ctx))

    def failure_counts(self) -> Dict[str, Any]:
        """Failures recorded with an agent or workflow id, per agent and per
        workflow: ``{"by_agent", "by_workflow", "unattributed"}``."""
        return _json.loads(self._b.failure_counts())

    def state(self, key: str, now_ms: Optional[int] = None) -> Dict[str, Any]:
        return _json.loads(self._b.state(key, _native.now_ms() if now_ms is None else now_ms))


class Tracer:
    """Tool-execution spans and per-tool metrics in bounded memory; thread-safe."""

    __slots__ = ("_t",)

    def __init__(self, **config: Any) -> None:
        self._t = _native.Tracer(_dumps(config) if config else None)

    def start(
        self,
        tool: str,
        info: Optional[Mapping[str, Any]] = None,
        input_bytes: int = 0,
        now_us: Optional[int] = None,
        *,
        input: Any = None,
    ) -> int:
        """Starts a span. ``input`` is the call's arguments: a ``str``, or any
        JSON value (a dict of input parameters) sent as compact JSON; the
        record keeps its first ``excerpt_bytes`` (a tracer option, default
        512) and a fingerprint that recognises repeats."""
        if input is not None:
            info = dict(info or {})
            info["input"] = _span_text("input", input)
        return self._t.start(tool, _opt(info), input_bytes, now_us)

    def end(
        self,
        span_id: int,
        outcome: str = "success",
        output_bytes: int = 0,
        error: Optional[str] = None,
        now_us: Optional[int] = None,
    ) -> None:
        self._t.end(span_id, outcome, output_bytes, error, now_us)

    def end_with(
        self,
        span_id: int,
        outcome: str = "success",
        *,
        output_bytes: int = 0,
        error: Optional[str] = None,
        error_category: Optional[str] = None,
        input_tokens: Optional[int] = None,
        output_tokens: Optional[int] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        now_us: Optional[int] = None,
        output: Any = None,
    ) -> None:
        """``end`` with token usage, an error category (1-64 bytes of
        ``[a-z0-9_]``) and up to 16 scalar metadata values, summed per tool in
        ``metrics()``; over a cap is an error, never cut silently. ``output``
        is the tool's result (a ``str`` or any JSON value); the record keeps
        its first ``excerpt_bytes``."""
        end: Dict[str, Any] = {"output_bytes": output_bytes}
        for key, value in (
            ("output", None if output is None else _span_text("output", output)),
            ("error", error),
            ("error_category", error_category),
            ("input_tokens", input_tokens),
            ("output_tokens", output_tokens),
            ("metadata", metadata),
        ):
            if value is not None:
                end[key] = value
        self._t.end_with(span_id, outcome, _dumps(end), now_us)

    def overdue(self, now_us: Optional[int] = None) -> Dict[str, Any]:
        return _json.loads(self._t.overdue(now_us))

    def expire(self, now_us: Optional[int] = None) -> Dict[str, Any]:
        return _json.loads(self._t.expire(now_us))

    def metrics(self) -> List[Dict[str, Any]]:
        return _json.loads(self._t.metrics())

    def recent(self) -> List[Dict[str, Any]]:
        return _json.loads(self._t.recent())

    def span(self, span_id: int) -> Optional[Dict[str, Any]]:
        """The record of finished span ``span_id`` while it is in the ring
        (with ``input_excerpt``, ``output_excerpt``, ``error``), or ``None``:
        still open, pushed out of the ring, or a repeat folded between the
        first and the last span of a record."""
        found: Optional[Dict[str, Any]] = _json.loads(self._t.span(span_id))
        return found

    def error_counts(self) -> Dict[str, int]:
        """Failed and timed-out spans by error category, over every tool: the
        host's category, else the tracer's (``tool_failed``, ``state``,
        ``timeout``, ...)."""
        counts: Dict[str, int] = _json.loads(self._t.export(0))["error_categories"]
        return counts

    def export(self, now_us: Optional[int] = None) -> Dict[str, Any]:
        return _json.loads(self._t.export(now_us))


def _span_text(what: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    try:
        return _dumps(value)
    except RecursionError:
        raise InvalidArgumentError(f"span {what} is nested too deeply to send as JSON; pass a str") from None
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"span {what} is not JSON: {e}; pass a str") from None


def toolset_report(request: Mapping[str, Any]) -> Dict[str, Any]:
    return _json.loads(_native._toolset_report(_dumps(request)))


def toolset_select(request: Mapping[str, Any], agent: str) -> List[Dict[str, Any]]:
    return _json.loads(_native._toolset_select(_dumps(request), agent))


def callstack_from_json(value: Union[str, Mapping[str, Any]]) -> CallStack:
    return CallStack.from_json(value if isinstance(value, str) else _dumps(value))

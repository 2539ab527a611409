"""LangChain / LangGraph adapters (optional: ``pip install turnfit[langchain]``).

langchain-core is imported when a function here is called, never by
``import turnfit``. Messages are converted with langchain-core's own
converters (``convert_to_openai_messages`` / ``convert_to_messages``); the
counting, trimming and compaction are turnfit's.

- :func:`token_counter` — an exact ``token_counter`` for LangChain's
  ``trim_messages`` (OpenAI's published counting recipe, the model's encoding).
- :func:`trim_messages` — ``trim_messages``-compatible, backed by
  :func:`turnfit.fit`: never separates a tool call from its result, keeps the
  system prompt and the latest user turn, and cuts long tool outputs first.
- :func:`pre_model_hook` — a LangGraph-style hook (``create_react_agent(...,
  pre_model_hook=...)``) that runs a pre-flight and, when the history no
  longer fits, compacts it before the model call.
- :func:`to_openai` / :func:`from_openai` — the converters.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

import turnfit

__all__ = ["to_openai", "from_openai", "token_counter", "trim_messages", "pre_model_hook"]


def _lc() -> Any:
    try:
        from langchain_core import messages
    except ImportError as e:  # pragma: no cover - exercised without the extra
        raise ImportError("turnfit.langchain needs langchain-core: pip install 'turnfit[langchain]'") from e
    return messages


def to_openai(messages: Iterable[Any]) -> List[Dict[str, Any]]:
    """LangChain messages (or anything ``convert_to_messages`` accepts) as OpenAI chat dicts."""
    lc = _lc()
    return lc.convert_to_openai_messages(lc.convert_to_messages(list(messages)))


def from_openai(messages: Sequence[Mapping[str, Any]]) -> List[Any]:
    """OpenAI chat dicts as LangChain message objects."""
    return _lc().convert_to_messages([dict(m) for m in messages])


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
    before whole rounds are dropped. Returns LangChain message objects.
    Raises :class:`turnfit.DoesNotFitError` when what must be kept is too big.
    """
    pol: Dict[str, Any] = dict(policy)
    pol["strategy"] = strategy
    if tool_output_max is not None:
        pol["tool_output_max"] = tool_output_max
    if keep_last_turns is not None:
        pol["keep_last_turns"] = keep_last_turns
    fitted, _report = turnfit.fit(to_openai(messages), model=model, max_tokens=max_tokens, policy=pol)
    return from_openai(fitted)


def pre_model_hook(
    model: str = "gpt-4o",
    *,
    context_window: Optional[int] = None,
    reserved_output: Optional[int] = None,
    trigger_ratio: Optional[float] = None,
    target_ratio: Optional[float] = None,
    policy: Optional[Mapping[str, Any]] = None,
    messages_key: str = "messages",
    summarize: Any = None,
    summarizer: Optional[Mapping[str, Any]] = None,
) -> Callable[[Mapping[str, Any]], Dict[str, Any]]:
    """A LangGraph ``pre_model_hook``: pre-flight the state's messages; when the
    verdict is not ``fits``, run one turn (``turnfit.fit_turn``: turnfit's policy,
    tool pairs kept, the result within the budget).

    ``summarize`` is the host's model for the ``summarize`` strategy: a LangChain
    chat model (its ``invoke`` is called with the summarizer prompt; a cheaper one
    than the agent's works) or any callable taking the request dict; ``summarizer``
    its budget (``{"model", "context_window", "timeout_ms", ...}``). Without one, or
    when it fails, the deterministic digest summarizes and the report says why: the
    model never gets the overflowing history.

    Returns ``{"llm_input_messages": [...], "turnfit": {"preflight", "compaction"}}``:
    the graph's stored history is left alone, only the model input is trimmed
    (LangGraph's documented pattern). ``compaction`` is None when nothing was done,
    else ``{"status": "done", "report": <turn report>}``.
    """
    budget = dict(
        context_window=context_window,
        reserved_output=reserved_output,
        trigger_ratio=trigger_ratio,
        target_ratio=target_ratio,
    )
    # The window's hysteresis: compact at the trigger, down to the target
    # (the window's defaults, 0.8 and 0.5, when not given).
    options: Dict[str, Any] = {"model": model, "policy": dict(policy or {}), "target_ratio": 0.5}
    for key, value in (
        ("max_tokens", context_window),
        ("reserve_output", reserved_output),
        ("trigger_ratio", trigger_ratio),
        ("target_ratio", target_ratio),
    ):
        if value is not None:
            options[key] = value
    if summarizer:
        options["summarizer"] = dict(summarizer)
    call = summarize
    if summarize is not None and hasattr(summarize, "invoke"):
        # A LangChain chat model (a Runnable): the prompt as one human message.
        chat_model = summarize

        def call(request: Mapping[str, Any]) -> Any:
            return chat_model.invoke(request["prompt"])

    def hook(state: Mapping[str, Any]) -> Dict[str, Any]:
        msgs = list(state[messages_key])
        w = turnfit.ContextWindow(model, **budget)
        w.load(to_openai(msgs))
        pf = w.preflight()
        if pf["verdict"] == "fits":
            return {"llm_input_messages": msgs, "turnfit": {"preflight": pf, "compaction": None}}
        out, report = turnfit.fit_turn(to_openai(msgs), call, **options)
        return {
            "llm_input_messages": from_openai(out),
            "turnfit": {"preflight": pf, "compaction": {"status": "done", "report": report}},
        }

    return hook

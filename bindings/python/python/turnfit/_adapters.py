"""What the framework adapters (``turnfit.langchain``, ``turnfit.openai_agents``,
``turnfit.pydantic_ai``) share: the tested-version check, the budget names and
defaults, the turn options. The counting, compaction, repair and summarizing are
the core's (``turnfit.afit_turn``)."""

from __future__ import annotations

import json as _json
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

_warned: Dict[str, str] = {}


def _vtuple(v: str) -> Tuple[int, ...]:
    out = []
    for piece in v.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit()) or "0"
        out.append(int(digits))
        if not piece.isdigit():
            break
    return tuple(out)


def check_version(adapter: str, dist: str, low: str, high: str, installed: Optional[str] = None) -> Optional[str]:
    """Warn (``RuntimeWarning``, once per adapter and version) when ``dist``'s installed
    version is outside ``[low, high)``, the range the adapter was tested with. Returns
    the warning text, or None when the version is in range."""
    if installed is None:
        from importlib import metadata

        try:
            installed = metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None
    if _vtuple(low) <= _vtuple(installed) < _vtuple(high):
        return None
    text = (
        f"{adapter} is tested with {dist} >={low},<{high}; {dist} {installed} is installed: "
        "its message types may have changed (unknown ones pass through, counted as text)"
    )
    if _warned.get(adapter) != installed:
        _warned[adapter] = installed
        warnings.warn(text, RuntimeWarning, stacklevel=3)
    return text


class _Unset:
    """The default of an option whose ``None`` means something (``target_ratio=None``:
    no target), so "not given" and "given as None" differ."""

    _instance: Optional["_Unset"] = None

    def __new__(cls) -> "_Unset":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Any = _Unset()

#: The defaults every adapter shares, Python and Node alike (bindings/node/adapter-common.js
#: holds the same; the README's "Adapter defaults" table states them): the summarize
#: strategy with the host's model (the digest without one); the window's hysteresis,
#: compacting when prompt plus reserved output reach 80% of ``max_tokens``, down to
#: 50% (reserve included); the reserve left to the core (the model's maximum output,
#: at most a quarter of ``max_tokens``); the calls of the newest model reply still
#: awaiting their result kept with no synthetic result; the framework's own history
#: left alone (``write_back=False``: only the model input is fitted).
DEFAULTS: Dict[str, Any] = {
    "strategy": "summarize",
    "trigger_ratio": 0.8,
    "target_ratio": 0.5,
    "pending_calls": "auto",
    "write_back": False,
}


def budget_aliases(
    adapter: str,
    max_tokens: Optional[int],
    reserve_output: Optional[int],
    context_window: Optional[int],
    reserved_output: Optional[int],
) -> Tuple[Optional[int], Optional[int]]:
    """``(max_tokens, reserve_output)`` from the names every adapter takes and the
    deprecated ones of the first LangChain adapters (``context_window``,
    ``reserved_output``), which warn (``DeprecationWarning``); both names at once
    with different values is a ``TypeError``."""
    for old, new, old_v, new_v in (
        ("context_window", "max_tokens", context_window, max_tokens),
        ("reserved_output", "reserve_output", reserved_output, reserve_output),
    ):
        if old_v is None:
            continue
        warnings.warn(f"{adapter}: {old}= is deprecated, use {new}=", DeprecationWarning, stacklevel=3)
        if new_v is not None and new_v != old_v:
            raise TypeError(f"{adapter}: {old}={old_v} and {new}={new_v} disagree; give {new} only")
    return (max_tokens if max_tokens is not None else context_window,
            reserve_output if reserve_output is not None else reserved_output)


def turn_options(
    model: str,
    *,
    max_tokens: Optional[int],
    reserve_output: Optional[int],
    trigger_ratio: Any = UNSET,
    target_ratio: Any = UNSET,
    policy: Optional[Mapping[str, Any]],
    summarizer: Optional[Mapping[str, Any]],
    extra: Mapping[str, Any],
) -> Dict[str, Any]:
    """The ``fit_turn`` options of an adapter: what the caller set, the shared
    :data:`DEFAULTS` for the rest. ``target_ratio=None`` is no target (the core's
    rule: only what exceeds the budget is compacted); left unset it is 0.5, the
    window's hysteresis, so the summarizer is not called at every step."""
    pol: Dict[str, Any] = {"strategy": DEFAULTS["strategy"]}
    pol.update(policy or {})
    if trigger_ratio is UNSET or trigger_ratio is None:
        trigger_ratio = DEFAULTS["trigger_ratio"]
    if target_ratio is UNSET:
        target_ratio = DEFAULTS["target_ratio"]
    options: Dict[str, Any] = {"model": model, "policy": pol}
    for key, value in (
        ("max_tokens", max_tokens),
        ("reserve_output", reserve_output),
        ("trigger_ratio", trigger_ratio),
        ("target_ratio", target_ratio),
    ):
        if value is not None:
            options[key] = value
    if summarizer:
        options["summarizer"] = dict(summarizer)
    options.update(extra)
    return options


def newest_unanswered(
    history: Sequence[Any],
    calls_of: Callable[[Any], Optional[List[str]]],
    answer_of: Callable[[Any], Optional[str]],
    spans: bool = False,
) -> List[str]:
    """``pending_calls="auto"``: the calls of the newest model reply (``calls_of`` gives
    the call ids an entry makes, None when none; with ``spans`` a run of call entries
    is one reply: Responses items, one per call) that have no result yet: an approval
    or a long job in flight, also while the user asks something before approving.
    An unanswered call of an older reply is a broken history: the core repairs it."""
    for i in range(len(history) - 1, -1, -1):
        calls = calls_of(history[i])
        if not calls:
            continue
        answered = {answer_of(x) for x in history[i + 1 :]}
        ids = list(calls)
        j = i - 1
        while spans and j >= 0 and calls_of(history[j]) and answer_of(history[j]) is None:
            ids[:0] = calls_of(history[j]) or []
            j -= 1
        return [c for c in ids if c is not None and c not in answered]
    return []


def pending_ids(pending_calls: Any, history: Sequence[Any], auto: Callable[[], List[str]]) -> List[str]:
    """The ids of ``pending_calls``: ``"auto"`` (the default, :func:`newest_unanswered`
    through ``auto``), ids, a callable of the history, or None / False (none)."""
    if pending_calls is None or pending_calls is False:
        return []
    if isinstance(pending_calls, str):
        if pending_calls != "auto":
            raise ValueError(f"pending_calls must be 'auto', ids, a callable or None, not {pending_calls!r}")
        return auto()
    if callable(pending_calls):
        return [str(c) for c in pending_calls(list(history))]
    return [str(c) for c in pending_calls]


def canon(value: Any) -> str:
    """One spelling of a JSON value, to recognise an item the turn gave back unchanged."""
    return _json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

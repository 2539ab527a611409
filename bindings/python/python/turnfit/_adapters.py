"""What the framework adapters (``turnfit.openai_agents``, ``turnfit.pydantic_ai``)
share: the tested-version check, the turn options, and the summarizer's reply text.
The counting, compaction, repair and summarizing are the core's (``turnfit.afit_turn``)."""

from __future__ import annotations

import json as _json
import warnings
from typing import Any, Dict, Mapping, Optional, Tuple

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


def turn_options(
    model: str,
    *,
    max_tokens: Optional[int],
    reserve_output: Optional[int],
    trigger_ratio: Optional[float],
    target_ratio: Optional[float],
    policy: Optional[Mapping[str, Any]],
    summarizer: Optional[Mapping[str, Any]],
    extra: Mapping[str, Any],
) -> Dict[str, Any]:
    """The ``fit_turn`` options of an adapter: the ``summarize`` strategy when the host
    gives a model (the digest otherwise), and the window's hysteresis (compact at
    ``trigger_ratio``, down to ``target_ratio``) so the summarizer is not called at
    every step."""
    pol: Dict[str, Any] = {"strategy": "summarize"}
    pol.update(policy or {})
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


def canon(value: Any) -> str:
    """One spelling of a JSON value, to recognise an item the turn gave back unchanged."""
    return _json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

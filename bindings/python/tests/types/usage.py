"""Typed use of turnfit, checked by mypy --strict in bindings/python/test.sh
(and run, so the annotations describe what the module really returns). The
report, outcome and event types come from turnfit.schema_types, generated from
schemas/."""

from typing import TYPE_CHECKING, Any, Dict, List

import turnfit

if TYPE_CHECKING:
    from turnfit.schema_types import Event, FitReport

history: List[Dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Find the bug."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "match " * 400},
    {"role": "user", "content": "And now?"},
]

conversation, report = turnfit.fit(history, model="gpt-4o", max_tokens=300)
typed: "FitReport" = report
after: int = typed["tokens_after"]
strategy: str = typed["strategy"]
assert after <= typed["limit_tokens"], report

seen: List[str] = []


def on_event(event: "Event") -> None:
    if event["kind"] == "compacted":
        masked: int = event["results_masked"]
        seen.append(f"compacted, {masked} masked")
    else:
        seen.append(event["kind"])


window = turnfit.ContextWindow("gpt-4o", context_window=400, reserved_output=50)
window.on_event(on_event)
window.load(history)
verdict: str = window.preflight()["verdict"]
outcome = window.compact()
if outcome["status"] == "done":
    saved: int = outcome["report"]["tokens_before"] - outcome["report"]["tokens_after"]
else:
    prompt: str = outcome["request"]["prompt"]
for issue in window.validate():
    kind: str = issue["kind"]
print(f"usage.py: fit {report['tokens_before']} -> {after} ({strategy}); window {verdict}; events {seen}")

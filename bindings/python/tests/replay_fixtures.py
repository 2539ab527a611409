"""The public agent trajectories of tests/fixtures/trajectories (PROVENANCE.md) that
are one agent loop (system prompt, task, then calls and results), as scripts a
framework's fake model replays: each step a recorded assistant message whose calls all
have a recorded result; the replay ends with a final answer. Shared by the replay
tests of issue 47 (test_replay_adapters.py)."""

import json
from pathlib import Path
from typing import Any, Dict, List

import turnfit

DIR = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "trajectories"
NAMES = [
    "swe-agent-marshmallow-1867-fc",
    "mini-swe-agent-github-issue",
    "mini-swe-agent-astropy-12907-first20",
    "mini-swe-agent-astroid-1866",
    "openhands-2048",
    "swe-agent-missing-colon-fc",
    "mini-swe-agent-sqlfluff-2419",
]
MODEL = "gpt-4o"


def load(name: str) -> Dict[str, Any]:
    doc = json.loads((DIR / f"{name}.openai.json").read_text())
    msgs = doc["messages"]
    assert msgs[0]["role"] == "system" and msgs[1]["role"] == "user", name
    results = {m["tool_call_id"]: m["content"] for m in msgs if m["role"] == "tool"}
    steps = [m for m in msgs[2:] if m["role"] == "assistant" and m.get("tool_calls")
             and all(c["id"] in results for c in m["tool_calls"])]
    answered = [m for m in msgs if m["role"] != "assistant" or all(c["id"] in results for c in (m.get("tool_calls") or []))]
    size = turnfit.count_conversation({"messages": answered, "tools": doc["tools"]}, MODEL)
    # What no compaction can drop: the system prompt, the task and the tools.
    irreducible = turnfit.count_conversation({"messages": msgs[:2], "tools": doc["tools"]}, MODEL)
    return {"name": name, "system": msgs[0]["content"], "task": msgs[1]["content"], "steps": steps,
            "results": results, "tools": doc["tools"], "size": size, "irreducible": irreducible}


TRAJECTORIES: List[Dict[str, Any]] = [load(n) for n in NAMES]


def budgets() -> List[Any]:
    """(trajectory, max_tokens, id): a third and a half of each size (the long run at a
    third only, so the suite stays short on 2 cores), each at least twice what no
    compaction can drop (below that the default reserve, a quarter of the budget,
    leaves no room for a round, and a refusal is the right answer); as the Node
    replays (bindings/node/test/replay-fixtures.js)."""
    out, seen = [], set()
    for t in TRAJECTORIES:
        for div in ((3,) if len(t["steps"]) > 40 else (3, 2)):
            b = max(t["size"] // div, 2 * t["irreducible"])
            if (t["name"], b) not in seen:
                seen.add((t["name"], b))
                out.append((t, b, f"{t['name']}-{b}"))
    return out

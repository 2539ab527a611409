"""A committed real trajectory (mini-swe-agent on astroid #1866: 99 rounds of
`bash` calls, tests/fixtures/trajectories) as the script a fake model replays in a
framework's own agent loop: the model re-emits the recorded assistant turns, the tool
returns the recorded results. Shared by the OpenAI Agents SDK and pydantic-ai tests
and by bench/python/frameworks.py."""

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[3]
TRAJECTORY = ROOT / "tests/fixtures/trajectories/mini-swe-agent-astroid-1866.openai.json"


def load() -> Dict[str, Any]:
    doc = json.loads(TRAJECTORY.read_text())
    msgs = doc["messages"]
    system, task = msgs[0]["content"], msgs[1]["content"]
    assert msgs[0]["role"] == "system" and msgs[1]["role"] == "user"
    rounds: List[Tuple[str, List[Dict[str, Any]], List[str]]] = []
    results = {m["tool_call_id"]: m["content"] for m in msgs if m["role"] == "tool"}
    for m in msgs[2:]:
        if m["role"] == "assistant":
            calls = m.get("tool_calls") or []
            outs = [results.get(c["id"]) for c in calls]
            rounds.append((m.get("content") or "", calls, outs))
    # The last recorded call (the submit) has no result in the source: the replay ends
    # with the rounds that have one, then a final answer.
    answered = [r for r in rounds if all(o is not None for o in r[2])]
    return {"system": system, "task": task, "rounds": answered, "tool": doc["tools"][0]["function"],
            "pending": [r for r in rounds if any(o is None for o in r[2])]}


def responses_items(traj: Dict[str, Any], rounds: int = None) -> List[Dict[str, Any]]:
    """The trajectory as Responses input items (what the Agents SDK holds)."""
    items: List[Dict[str, Any]] = [{"role": "user", "content": traj["task"]}]
    for text, calls, outs in traj["rounds"][:rounds]:
        if text:
            items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]})
        for c in calls:
            items.append({"type": "function_call", "call_id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]})
        for c, o in zip(calls, outs):
            items.append({"type": "function_call_output", "call_id": c["id"], "output": o})
    return items


def responses_tools(traj: Dict[str, Any]) -> List[Dict[str, Any]]:
    t = traj["tool"]
    return [{"type": "function", "name": t["name"], "description": t["description"], "parameters": t["parameters"]}]


def responses_orphans(items: List[Any]) -> List[str]:
    """Outputs whose call is not before them, and calls without an output after them."""
    calls, answered, bad = [], set(), []
    for it in items:
        if not isinstance(it, dict):
            continue
        if it.get("type") == "function_call":
            calls.append(it["call_id"])
        elif it.get("type") == "function_call_output":
            if it["call_id"] not in calls:
                bad.append("output without call: " + it["call_id"])
            answered.add(it["call_id"])
    bad += ["call without output: " + c for c in calls if c not in answered]
    return bad

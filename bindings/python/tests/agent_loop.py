"""Deterministic agent-loop conversations (OpenAI chat shape) for tests:
a system prompt, one task, then rounds of assistant tool calls (some
parallel) with their results, some of them long, and a few user nudges."""

import json
import random
from typing import Any, Dict, List

TOOLS = ["read_file", "run_tests", "grep", "list_dir", "edit_file"]


def agent_loop(rounds: int = 60, seed: int = 7, long_every: int = 7) -> List[Dict[str, Any]]:
    rng = random.Random(seed)
    msgs: List[Dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent. Use the tools to fix failing tests."},
        {"role": "user", "content": "The test suite fails on test_parse_dates; find and fix the bug."},
    ]
    n = 0
    for r in range(rounds):
        calls = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            n += 1
            tool = rng.choice(TOOLS)
            calls.append({"id": f"call_{n}", "type": "function",
                          "function": {"name": tool, "arguments": json.dumps({"path": f"src/mod_{rng.randrange(40)}.py"})}})
        msgs.append({"role": "assistant", "content": f"Round {r}: checking." if rng.random() < 0.5 else None,
                     "tool_calls": calls})
        for c in calls:
            lines = 400 if (r % long_every == 3) else rng.randrange(3, 40)
            body = "\n".join(f"{c['function']['name']} line {i}: value={rng.randrange(10**6)} ok" for i in range(lines))
            msgs.append({"role": "tool", "tool_call_id": c["id"], "content": body})
        if r % 20 == 19:
            msgs.append({"role": "user", "content": f"Any progress? (after round {r})"})
    msgs.append({"role": "assistant", "content": "I found the bug in the date parser."})
    return msgs


def tool_pairs_ok(messages: List[Dict[str, Any]]) -> bool:
    """Every tool result follows the assistant message that called it, and every call has its result."""
    pending = set()
    for m in messages:
        role = m.get("role")
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                return False
            pending.discard(m["tool_call_id"])
            continue
        if pending:
            return False
        if role == "assistant":
            pending = {c["id"] for c in m.get("tool_calls") or []}
    return not pending

"""turnfit.FitSession alone against turnfit.fit_turn, over the long run of
langchain_steps.py as OpenAI dicts (no framework): each model call's history
is the session's update (the new messages) and turn, the carry threaded as the
adapters thread it. Prints the median per call at start, middle and end, for
the session and for the stateless fit_turn on the same history (issue 52).

    target/python/venv-test/bin/python bench/adapters/session_steps.py --repeat 8
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python" / "tests"))

import turnfit  # noqa: E402
from langchain_steps import long_trajectory  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=8)
    ap.add_argument("--budget", type=int, default=32000)
    ap.add_argument("--session-only", action="store_true", help="skip fit_turn (for a profile)")
    args = ap.parse_args()
    t = long_trajectory(args.repeat)
    msgs = [{"role": "system", "content": t["system"]}, {"role": "user", "content": t["task"]}]
    calls = []  # the history's length at each model call
    for a in t["assistants"]:
        calls.append(len(msgs))
        msgs.append(a)
        for c in a.get("tool_calls") or []:
            if c["id"] in t["results"]:
                msgs.append({"role": "tool", "tool_call_id": c["id"], "content": t["results"][c["id"]]})
    opts = {"model": "gpt-4o", "max_tokens": args.budget, "policy": {"strategy": "summarize"}, "target_ratio": 0.5}
    summarize = lambda req: "SUMMARY: astroid format() inference fix in progress."  # noqa: E731
    s = turnfit.FitSession()
    held = 0
    times = {"session": [], "fit_turn": []}
    carry = {"session": None, "fit_turn": None}
    for n in calls:
        t0 = time.perf_counter()
        s.update(held, msgs[held:n])
        held = n
        _, r = s.fit_turn(summarize, **dict(opts, **({"carry": carry["session"]} if carry["session"] else {})))
        times["session"].append(time.perf_counter() - t0)
        carry["session"] = r.get("carry")
        if args.session_only:
            times["fit_turn"].append(0.0)
            continue
        t0 = time.perf_counter()
        _, r2 = turnfit.fit_turn(msgs[:n], summarize, **dict(opts, **({"carry": carry["fit_turn"]} if carry["fit_turn"] else {})))
        times["fit_turn"].append(time.perf_counter() - t0)
        carry["fit_turn"] = r2.get("carry")
    size = len(json.dumps(msgs)) / 1e6
    print(f"turnfit {turnfit.__version__}; {len(calls)} calls, final history {len(msgs)} messages, {size:.2f} MB, budget {args.budget}")
    k = max(1, len(calls) // 10)
    print("| point | session ms/call | fit_turn ms/call |")
    print("|---|---:|---:|")
    for name, lo in (("start", 0), ("middle", len(calls) // 2 - k // 2), ("end", len(calls) - k)):
        row = [statistics.median(times[x][lo:lo + k]) * 1000 for x in ("session", "fit_turn")]
        print(f"| {name} (calls {lo + 1}-{lo + k}) | {row[0]:.3f} | {row[1]:.3f} |")


if __name__ == "__main__":
    main()

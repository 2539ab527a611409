"""Per-call overhead of turnfit's LangChain middleware over a long run (issue 52).

The run: the real mini-swe-agent trajectory of tests/fixtures/trajectories
(astroid-1866, 99 model calls, 147 KB) replayed ``--repeat`` times back to back
(call ids renamed per pass) in langchain's own ``create_agent`` loop with its fake
chat model (bindings/python/tests/lc_replay.py), so the history grows past 1 MB.
The middleware is ``agent_middleware("gpt-4o", max_tokens=--budget)`` with its
defaults (summarize with the host's model, here an instant fake one; request
only, ``write_back=False``): once the trigger fires, every later call fits the
whole, growing history. A call's overhead is the time in ``wrap_model_call`` less
the inner handler (the model call). Printed: the median of the calls in the
first, middle and last tenth of the run, with the history's size there.

    target/python/venv-test/bin/python bench/adapters/langchain_steps.py --repeat 8
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python" / "tests"))

import langchain  # noqa: E402
import turnfit  # noqa: E402
import turnfit.langchain as tl  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from lc_replay import bash_tool, load, make_model  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from langchain_agent import timed_wrap  # noqa: E402


def long_trajectory(repeat: int) -> Dict[str, Any]:
    """The trajectory's assistant turns ``repeat`` times, call ids renamed per pass."""
    t = load()
    assistants: List[Dict[str, Any]] = []
    results: Dict[str, str] = {}
    body = t["assistants"][:-1]
    for k in range(repeat):
        for m in body:
            m = json.loads(json.dumps(m))
            for c in m.get("tool_calls") or []:
                old = c["id"]
                c["id"] = f"r{k}_{old}"
                results[c["id"]] = t["results"][old]
            assistants.append(m)
    assistants.append(t["assistants"][-1])
    return dict(t, assistants=assistants, results=results)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=8)
    ap.add_argument("--budget", type=int, default=32000)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    traj = long_trajectory(args.repeat)
    # The history's size in bytes after n messages (its OpenAI JSON), for the report.
    sizes_b = [0]
    msgs = [{"role": "user", "content": traj["task"]}]
    for a in traj["assistants"]:
        msgs.append(a)
        for c in a.get("tool_calls") or []:
            if c["id"] in traj["results"]:
                msgs.append({"role": "tool", "tool_call_id": c["id"], "content": traj["results"][c["id"]]})
    for m in msgs:
        sizes_b.append(sizes_b[-1] + len(json.dumps(m)))
    print(f"langchain {langchain.__version__}, turnfit {turnfit.__version__} ({Path(turnfit.__file__).parent}), "
          f"Python {sys.version.split()[0]}; {len(traj['assistants'])} model calls, final history "
          f"{sizes_b[-1] / 1e6:.2f} MB, budget {args.budget}")
    for run in range(args.runs):
        times: List[float] = []
        sizes: List[int] = []
        summarizer = FakeListChatModel(responses=["SUMMARY: astroid format() inference fix in progress."] * 100000)
        mw = tl.agent_middleware("gpt-4o", max_tokens=args.budget, summarize=summarizer)
        t0 = time.perf_counter()
        from langchain.agents import create_agent
        from langchain_core.messages import HumanMessage

        agent = create_agent(make_model(traj), [bash_tool(traj)], system_prompt=traj["system"],
                             middleware=[timed_wrap(mw, times, sizes)])
        agent.invoke({"messages": [HumanMessage(traj["task"])]}, {"recursion_limit": 100000})
        wall = time.perf_counter() - t0
        n = len(times)
        tenth = max(1, n // 10)
        rows = [("start", 0), ("middle", n // 2 - tenth // 2), ("end", n - tenth)]
        print(f"run {run + 1}: {n} calls, loop {wall:.1f} s, overhead total {sum(times) * 1000:.0f} ms")
        print("| point | calls | history (messages, MB) | median ms/call | max ms/call |")
        print("|---|---|---:|---:|---:|")
        for name, lo in rows:
            seg = times[lo:lo + tenth]
            at = sizes[lo + tenth - 1]
            print(f"| {name} | {lo + 1}-{lo + tenth} | {at}, {sizes_b[min(at, len(sizes_b) - 1)] / 1e6:.2f} | "
                  f"{statistics.median(seg) * 1000:.3f} | {max(seg) * 1000:.3f} |")


if __name__ == "__main__":
    main()

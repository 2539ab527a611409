"""Per-step overhead of turnfit's LangChain middleware beside LangChain's own
answers, on one replayed agent loop (issue 35).

The loop: tests/fixtures/trajectories/mini-swe-agent-astroid-1866 (99 model
calls) replayed in langchain 1.3.18's ``create_agent`` with LangChain's fake chat
model (bindings/python/tests/lc_replay.py), the budget a third of the trajectory's
final exact size. Each setting runs the whole loop ``--runs`` times; a step's
overhead is the time spent in the setting's hook before each model call (the
model call itself and, for ``wrap_model_call``, the inner handler excluded; a fake
summarizer's reply is included, it is instant). Every prompt the model receives is
checked as the tests check it (within the budget by turnfit's exact count, tools
included; no call without its result; system prompt and task kept), and LangChain's
``count_tokens_approximately`` is compared with turnfit's exact count on it.

    target/python/venv-test/bin/python bench/python/langchain_agent.py --runs 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python" / "tests"))

import langchain  # noqa: E402
import langchain_core  # noqa: E402
import turnfit  # noqa: E402
import turnfit.langchain as tl  # noqa: E402
from agent_loop import tool_pairs_ok  # noqa: E402
from langchain.agents.middleware import AgentMiddleware, SummarizationMiddleware  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import HumanMessage, SystemMessage  # noqa: E402
from langchain_core.messages.utils import count_tokens_approximately, trim_messages  # noqa: E402
from lc_replay import load, make_model, run_agent  # noqa: E402

TRAJ = load()
FINAL = turnfit.count_conversation(TRAJ["doc"])
BUDGET = FINAL // 3
RESERVED = 1000


def timed_before_model(mw: Any, times: List[float]) -> Any:
    inner = mw.before_model

    def before_model(state: Any, runtime: Any) -> Any:
        t = time.perf_counter()
        try:
            return inner(state, runtime)
        finally:
            times.append(time.perf_counter() - t)

    mw.before_model = before_model
    return mw


def timed_wrap(mw: Any, times: List[float], sizes: Optional[List[int]] = None) -> Any:
    """`mw` whose model calls append their own time (the handler's, the model's,
    left out) to `times`, and the request's message count to `sizes` if given."""
    inner = mw.wrap_model_call

    def wrap_model_call(request: Any, handler: Callable[[Any], Any]) -> Any:
        spent = [0.0]

        def timed_handler(req: Any) -> Any:
            t = time.perf_counter()
            try:
                return handler(req)
            finally:
                spent[0] += time.perf_counter() - t

        t = time.perf_counter()
        try:
            return inner(request, timed_handler)
        finally:
            times.append(time.perf_counter() - t - spent[0])
            if sizes is not None:
                sizes.append(len(request.messages))

    mw.wrap_model_call = wrap_model_call
    return mw


class TrimMiddleware(AgentMiddleware):
    """LangChain's ``trim_messages`` in the model call, as its docs show it:
    ``strategy="last"``, system kept, the approximate counter, the same budget."""

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        msgs = [request.system_message, *request.messages]
        out = trim_messages(msgs, max_tokens=BUDGET, token_counter=count_tokens_approximately,
                            strategy="last", include_system=True)
        return handler(request.override(messages=[m for m in out if not isinstance(m, SystemMessage)]))


def summarizer() -> Any:
    return FakeListChatModel(responses=["SUMMARY: astroid format() inference fix in progress."] * 1000)


SETTINGS: Dict[str, Callable[[List[float]], List[Any]]] = {
    "none (the loop alone)": lambda t: [],
    "turnfit agent_middleware, state": lambda t: [timed_wrap(tl.agent_middleware(
        "gpt-4o", context_window=BUDGET + RESERVED, reserved_output=RESERVED, policy={"strategy": "summarize"},
        summarize=summarizer()), t)],
    "turnfit agent_middleware, request only": lambda t: [timed_wrap(tl.agent_middleware(
        "gpt-4o", context_window=BUDGET + RESERVED, reserved_output=RESERVED, policy={"strategy": "summarize"},
        summarize=summarizer(), write_back=False), t)],
    "LangChain SummarizationMiddleware": lambda t: [timed_before_model(SummarizationMiddleware(
        summarizer(), trigger=("tokens", BUDGET)), t)],
    "LangChain trim_messages": lambda t: [timed_wrap(TrimMiddleware(), t)],
}


def check(prompts: List[List[Any]], tools: List[Any]) -> Dict[str, Any]:
    defs = tl.openai_tools(tools)
    over = orphan = task_lost = 0
    worst = 0.0
    errs: List[float] = []
    for p in prompts:
        d = tl.to_openai(p)
        exact = turnfit.count_conversation({"messages": d, "tools": defs})
        approx = count_tokens_approximately(p, tools=tools)
        errs.append((approx - exact) / exact)
        if exact > BUDGET:
            over += 1
            worst = max(worst, exact / BUDGET - 1)
        orphan += not tool_pairs_ok(d)
        task_lost += not any(isinstance(m, HumanMessage) and m.content == TRAJ["task"] for m in p)
    return {"over": over, "worst": worst, "orphan": orphan, "task_lost": task_lost, "errs": errs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(f"langchain {langchain.__version__}, langchain-core {langchain_core.__version__}, turnfit {turnfit.__version__}, "
          f"Python {sys.version.split()[0]}; trajectory {FINAL} tokens, budget {BUDGET}, {args.runs} runs")
    rows = []
    for name, make in SETTINGS.items():
        per_run_median: List[float] = []
        per_run_total: List[float] = []
        for _ in range(args.runs):
            times: List[float] = []
            model, _ = run_agent(TRAJ, make(times))
            if times:
                per_run_median.append(statistics.median(times))
                per_run_total.append(sum(times))
        q = check(model.prompts, model.bound_tools)
        rows.append((name, per_run_median, per_run_total, len(model.prompts), q))
    base = next(r for r in rows if r[0] == "LangChain SummarizationMiddleware")
    print()
    print("| setting | median ms/step | total ms/loop | vs SummarizationMiddleware | prompts over budget (worst) | with an orphan | task lost |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, med, tot, n, q in rows:
        m = statistics.median(med) * 1000 if med else 0.0
        t = statistics.median(tot) * 1000 if tot else 0.0
        ratio = f"{m / (statistics.median(base[1]) * 1000):.2f}x" if med else "-"
        worst = f" (+{q['worst'] * 100:.0f}%)" if q["over"] else ""
        print(f"| {name} | {m:.3f} | {t:.1f} | {ratio} | {q['over']}/{n}{worst} | {q['orphan']}/{n} | {q['task_lost']}/{n} |")
    print()
    print("count_tokens_approximately against turnfit's exact count, on every prompt of each setting:")
    print("| setting | median error | min | max |")
    print("|---|---:|---:|---:|")
    for name, _, _, _, q in rows:
        e = q["errs"]
        print(f"| {name} | {statistics.median(e) * 100:+.1f}% | {min(e) * 100:+.1f}% | {max(e) * 100:+.1f}% |")


if __name__ == "__main__":
    main()

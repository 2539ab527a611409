"""One `turnfit.fit` of the bench's agent transcript, timed in a process of
its own (no LangChain copy of the transcript alive beside it), for
comparing two builds of the wheel (bench/python/allocator.sh).

    python bench/python/fit_alone.py ROUNDS RUNS

Prints the median CPU time (`time.process_time`) of RUNS calls after one
warm-up call, and each call's time.
"""
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python" / "tests"))
from agent_loop import agent_loop  # noqa: E402

import turnfit  # noqa: E402


def main():
    rounds, runs = int(sys.argv[1]), int(sys.argv[2])
    conv = agent_loop(rounds)
    budget = turnfit.count_conversation(conv) // 3
    turnfit.fit(conv, model="gpt-4o", max_tokens=budget)
    cpu = []
    for _ in range(runs):
        c = time.process_time()
        turnfit.fit(conv, model="gpt-4o", max_tokens=budget)
        cpu.append(time.process_time() - c)
    print(f"{rounds} rounds: median {statistics.median(cpu) * 1000:.1f} ms CPU, "
          f"calls {[round(x * 1000, 1) for x in cpu]}")


if __name__ == "__main__":
    main()

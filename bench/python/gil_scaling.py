"""Does counting scale over threads? (issue 20: "two threads counting big texts
take about the time of one on two cores").

    python bench/python/gil_scaling.py [--runs 7] [--mib 2]

with `turnfit` importable (bash bench/python/run.sh builds and installs the
release wheel into target/python/venv-bench; the test venv's dev wheel works
too: the core is built at opt-level 3 in every profile).

Three wall times, each the median of --runs, interleaved run by run so every
row sees the same load:

- one:       one thread counts the text once;
- threads:   two threads of this process each count it once, at the same time;
- processes: two processes each count it once, at the same time (no GIL at
             all between them: what the machine's two cores give right now).

threads/one is the figure the issue asks for (1.0 = perfect scaling on two
idle cores, 2.0 = no overlap). On a shared, loaded machine both ratios rise;
threads/processes then says how much of the rise is the binding's (1.0 =
none). The load average before and after is printed with the figures.
"""

import argparse
import multiprocessing as mp
import os
import statistics
import threading
import time

import turnfit

TEXT_LINE = "The quick brown fox jumps over the lazy dog. 1234 {code} na\u00efve caf\u00e9\n"


def _proc(text: str, start: "mp.synchronize.Event", q: "mp.Queue") -> None:
    t = turnfit.Tokenizer("o200k_base")
    t.count_tokens("warm")
    q.put("ready")
    start.wait()
    q.put(t.count_tokens(text))


def one(t: "turnfit.Tokenizer", text: str) -> float:
    s = time.perf_counter()
    t.count_tokens(text)
    return time.perf_counter() - s


def threads(t: "turnfit.Tokenizer", text: str) -> float:
    barrier = threading.Barrier(3)
    out = []

    def work() -> None:
        barrier.wait()
        out.append(t.count_tokens(text))

    ths = [threading.Thread(target=work) for _ in range(2)]
    for th in ths:
        th.start()
    barrier.wait()
    s = time.perf_counter()
    for th in ths:
        th.join()
    return time.perf_counter() - s


def processes(text: str, expected: int) -> float:
    ctx = mp.get_context("fork")
    start, q = ctx.Event(), ctx.Queue()
    ps = [ctx.Process(target=_proc, args=(text, start, q)) for _ in range(2)]
    for p in ps:
        p.start()
    for _ in ps:
        assert q.get() == "ready"
    s = time.perf_counter()
    start.set()
    got = [q.get() for _ in ps]
    took = time.perf_counter() - s
    for p in ps:
        p.join()
    assert got == [expected, expected], got
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--mib", type=float, default=2.0)
    a = ap.parse_args()
    text = TEXT_LINE * int(a.mib * 2**20 / len(TEXT_LINE.encode()))
    t = turnfit.Tokenizer("o200k_base")
    expected = t.count_tokens(text)
    load0 = os.getloadavg()
    rows = {"one": [], "threads": [], "processes": []}
    for _ in range(a.runs):
        rows["one"].append(one(t, text))
        rows["threads"].append(threads(t, text))
        rows["processes"].append(processes(text, expected))
    load1 = os.getloadavg()
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"turnfit {turnfit.__version__}, {len(text.encode()) / 2**20:.2f} MiB, {expected} tokens, "
          f"{os.cpu_count()} CPUs, median of {a.runs} interleaved runs")
    print(f"load average before {load0[0]:.1f} / {load0[1]:.1f} / {load0[2]:.1f}, "
          f"after {load1[0]:.1f} / {load1[1]:.1f} / {load1[2]:.1f}")
    for k in rows:
        print(f"  {k:<10} {med[k] * 1000:8.1f} ms")
    print(f"threads / one       = {med['threads'] / med['one']:.2f}  (1.00 = two threads in the time of one)")
    print(f"processes / one     = {med['processes'] / med['one']:.2f}  (what two cores give under this load)")
    print(f"threads / processes = {med['threads'] / med['processes']:.2f}  (1.00 = the GIL costs nothing)")


if __name__ == "__main__":
    main()

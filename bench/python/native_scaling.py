"""Do two processes run native code twice as fast as one on this machine?
(issue 20: gil_scaling.py found that two *processes* counting take ~1.8x one,
with no GIL between them; this asks whether that is turnfit's counting loop or
the machine.)

    python bench/python/native_scaling.py [--runs 7] [--only NAME]

with `turnfit` and `tiktoken` importable (the test or bench venv under
target/python). For each workload, one process alone and two processes at
the same time each do the same work once, started together by an Event
after setup (the parent prepares inputs and warms the tokenizers before
forking); interleaved run by run so every row sees the same load. Printed
per workload: median wall time of one and of two processes, their ratio
(1.00 = two cores give twice the work, 2.00 = no parallelism), and each
child's CPU time (time.process_time around the work) alone and when two
run: if the CPU time itself rises when two run, each core ran slower, which
no scheduling or lock explains (a blocked process uses no CPU). The guest's
steal time (/proc/stat) during the timed work is printed too: how long the
host ran something else while a vCPU wanted to run.

Workloads: turnfit count_tokens and tiktoken len(encode_ordinary) on the text
of gil_scaling.py; zlib.compress and hashlib.sha256 (native, small working
set: compute-bound); a 256 MiB bytes copy (memory-bandwidth-bound); and a
pure-Python loop.
"""

import argparse
import hashlib
import multiprocessing as mp
import os
import statistics
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python" / "tests"))
import tiktoken_offline  # noqa: E402

tiktoken_offline.setup()

import tiktoken  # noqa: E402

import turnfit  # noqa: E402

LINE = "The quick brown fox jumps over the lazy dog. 1234 {code} na\u00efve caf\u00e9\n"


def text(mib):
    return LINE * int(mib * 2**20 / len(LINE.encode()))


def workloads():
    """name -> a no-argument function doing one unit of work; inputs are
    built here, in the parent, before any fork."""
    ck = turnfit.Tokenizer("o200k_base")
    tk = tiktoken.get_encoding("o200k_base")
    t24, t1 = text(24), text(1)
    ck.count_tokens(t24)
    tk.encode_ordinary(t1)
    hsrc = os.urandom(256 * 2**20)
    zsrc = hsrc[: 8 * 2**20]
    burn_n = 5_000_000

    def burn():
        s = 0
        for i in range(burn_n):
            s += i
        return s

    return {
        "turnfit count_tokens, 24 MiB": lambda: ck.count_tokens(t24),
        "tiktoken len(encode_ordinary), 1 MiB": lambda: len(tk.encode_ordinary(t1)),
        "zlib.compress level 6, 8 MiB random": lambda: zlib.compress(zsrc, 6),
        "hashlib.sha256, 256 MiB random": lambda: hashlib.sha256(hsrc).digest(),
        "bytes copy, 256 MiB": lambda: len(bytearray(hsrc)),
        f"pure-Python loop, {burn_n:,} adds": burn,
    }


def steal_ms():
    """The guest's steal time so far (the hypervisor ran something else on
    the host CPU a vCPU was given), from /proc/stat, in ms (USER_HZ 100)."""
    with open("/proc/stat") as f:
        return int(f.readline().split()[8]) * 10


def _child(fn, start, q):
    start.wait()
    c = time.process_time()
    fn()
    q.put(time.process_time() - c)


def run(fn, n):
    """Wall time of n processes each calling fn once, and their CPU times."""
    ctx = mp.get_context("fork")
    start, q = ctx.Event(), ctx.Queue()
    ps = [ctx.Process(target=_child, args=(fn, start, q)) for _ in range(n)]
    for p in ps:
        p.start()
    time.sleep(0.05)  # let the children reach start.wait()
    s, st = time.perf_counter(), steal_ms()
    start.set()
    cpu = [q.get() for _ in ps]
    wall = time.perf_counter() - s
    run.steal += steal_ms() - st
    for p in ps:
        p.join()
    return wall, cpu


run.steal = 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--only", default="", help="run only the workloads whose name contains this")
    a = ap.parse_args()
    work = {k: v for k, v in workloads().items() if a.only.lower() in k.lower()}
    rows = {k: {"one": [], "two": [], "cpu1": [], "cpu2": []} for k in work}
    load0 = os.getloadavg()
    for _ in range(a.runs):
        for k, fn in work.items():
            w1, c1 = run(fn, 1)
            w2, c2 = run(fn, 2)
            r = rows[k]
            r["one"].append(w1)
            r["two"].append(w2)
            r["cpu1"].extend(c1)
            r["cpu2"].extend(c2)
    load1 = os.getloadavg()
    wall_total = sum(sum(r["one"]) + sum(r["two"]) for r in rows.values()) * 1000
    print(f"{os.cpu_count()} CPUs, median of {a.runs} interleaved runs, Python {sys.version.split()[0]}, "
          f"turnfit {turnfit.__version__}, tiktoken {getattr(tiktoken, '__version__', '?')}")
    print(f"load average before {load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f}, "
          f"after {load1[0]:.2f} / {load1[1]:.2f} / {load1[2]:.2f}")
    print(f"steal time (/proc/stat) during the timed work: {run.steal} ms of {wall_total:.0f} ms of wall time")
    print("| workload | one process ms | two processes ms | two / one | CPU ms per process, alone | CPU ms per process, two at once | CPU two / alone |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for k, r in rows.items():
        m = {x: statistics.median(v) * 1000 for x, v in r.items()}
        print(f"| {k} | {m['one']:.1f} | {m['two']:.1f} | {m['two'] / m['one']:.2f} | "
              f"{m['cpu1']:.1f} | {m['cpu2']:.1f} | {m['cpu2'] / m['cpu1']:.2f} |")


if __name__ == "__main__":
    main()

"""When does each of two threads start and end its count? (issue 20: at
2 MiB, gil_scaling.py's threads / one varies from 1.1 to 2.2 run to run.)

    python bench/python/thread_starts.py [--mib 2] [--runs 15]

Two threads wait on a barrier with the main thread, then each times its own
`count_tokens` call (time.perf_counter). Printed per run, in ms from the
moment the main thread left the barrier: each thread's (start, end), then
the time both were joined. A second thread that starts milliseconds after
the first is waiting for the GIL hand-off, not counting.
"""

import argparse
import threading
import time

import turnfit

TEXT_LINE = "The quick brown fox jumps over the lazy dog. 1234 {code} na\u00efve caf\u00e9\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=float, default=2.0)
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    text = TEXT_LINE * int(a.mib * 2**20 / len(TEXT_LINE.encode()))
    t = turnfit.Tokenizer("o200k_base")
    s = time.perf_counter()
    t.count_tokens(text)
    print(f"one count alone: {(time.perf_counter() - s) * 1e3:.2f} ms ({a.mib} MiB)")
    for _ in range(a.runs):
        barrier = threading.Barrier(3)
        spans = []

        def work() -> None:
            barrier.wait()
            b = time.perf_counter()
            t.count_tokens(text)
            spans.append((b, time.perf_counter()))

        ths = [threading.Thread(target=work) for _ in range(2)]
        for th in ths:
            th.start()
        barrier.wait()
        s0 = time.perf_counter()
        for th in ths:
            th.join()
        joined = time.perf_counter() - s0
        print(" ".join(f"({(b - s0) * 1e3:.2f}, {(e - s0) * 1e3:.2f})" for b, e in spans), f"joined {joined * 1e3:.2f}")


if __name__ == "__main__":
    main()

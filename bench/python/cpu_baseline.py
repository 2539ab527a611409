"""What two processes give on this machine for plain interpreter work, as a
baseline for gil_scaling.py: if a pure-Python loop scales over two processes
while counting does not, the limit is the workload's (memory, cache), not the
GIL's.

    python3 bench/python/cpu_baseline.py [--n 20000000]
"""

import argparse
import multiprocessing as mp
import time


def burn(n):
    s = 0
    for i in range(n):
        s += i
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000_000)
    n = ap.parse_args().n
    t = time.perf_counter()
    burn(n)
    one = time.perf_counter() - t
    with mp.Pool(2) as pool:
        pool.map(burn, [1000, 1000])  # start the workers first
        t = time.perf_counter()
        pool.map(burn, [n, n])
        two = time.perf_counter() - t
    print(f"pure-Python loop: one {one:.2f} s, two processes {two:.2f} s, ratio {two / one:.2f} (1.00 = perfect scaling)")


if __name__ == "__main__":
    main()

"""The GIL is released in long calls, so other threads run meanwhile.

No timing assertion. `test_python_runs_while_another_thread_counts` decides
without a clock whether the main thread ran Python code while a worker was
inside a long call (see `_ran_during_once`), and `test_the_gil_check_can_fail`
shows the same check fails around native code that keeps the GIL.
`test_two_threads_count_concurrently` is the older check: each call records
when it started and finished (time.perf_counter in the thread, around the
call) and the two intervals must overlap. It is weaker: a thread that takes
its start time just before the other enters a GIL-holding call also makes
the intervals overlap. It prints the wall-time ratio as a report only (how
two threads scale depends on the machine: docs/benchmarks.md).
"""

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import turnfit

BIG = ("The quick brown fox jumps over the lazy dog. 1234 {code}\n" * 40000)  # ~2.3 MB


def _timed(t, text):
    start = time.perf_counter()
    n = t.count_tokens(text)
    return start, time.perf_counter(), n


def test_two_threads_count_concurrently():
    t = turnfit.Tokenizer("o200k_base")
    expected = t.count_tokens(BIG)
    barrier = threading.Barrier(2)

    def work():
        barrier.wait()
        return _timed(t, BIG)

    overlapped = False
    for _attempt in range(5):  # scheduling noise on a loaded machine: a few tries
        with ThreadPoolExecutor(2) as ex:
            a, b = ex.submit(work), ex.submit(work)
            (s1, e1, n1), (s2, e2, n2) = a.result(), b.result()
        assert n1 == n2 == expected
        if s1 < e2 and s2 < e1 and min(e1, e2) - max(s1, s2) > 0.25 * min(e1 - s1, e2 - s2):
            overlapped = True
            break
    assert overlapped, "the two counts never ran at the same time: is the GIL released?"

    one = _timed(t, BIG)
    one = one[1] - one[0]
    start = time.perf_counter()
    with ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda _: t.count_tokens(BIG), range(2)))
    two = time.perf_counter() - start
    print(f"\nGIL report: one count {one*1000:.1f} ms, two threads {two*1000:.1f} ms ({two/one:.2f}x one)")


def _ran_during_once(call):
    """Whether this (main) thread ran Python code while another thread was
    inside `call()`, decided without any clock.

    With the switch interval set far beyond any call's length, the GIL only
    changes hands when its holder lets go of it voluntarily (blocking, or a
    native call releasing it); it is never taken away. The worker sets
    `entered` (which wakes this thread, still waiting for the GIL), then
    makes the call, then sets `finished`. If the call keeps the GIL, this
    thread cannot run again before the call returns and the worker has set
    `finished` and exited, so it finds `finished` set: a call that keeps the
    GIL can never pass. If the call releases the GIL, this thread runs while
    the call is still going and finds it unset (unless the OS is so slow to
    wake it that the call ends first, hence the retries below).
    """
    entered, finished = threading.Event(), threading.Event()

    def worker():
        entered.set()
        call()
        finished.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        th = threading.Thread(target=worker)
        th.start()
        entered.wait()
        ran_inside = not finished.is_set()
        th.join()
    finally:
        sys.setswitchinterval(old)
    assert finished.is_set()
    return ran_inside


def _other_thread_ran_during(call, tries=5):
    # Retrying cannot make a GIL-holding call pass (see _ran_during_once).
    return any(_ran_during_once(call) for _ in range(tries))


def test_python_runs_while_another_thread_counts():
    t = turnfit.Tokenizer("o200k_base")
    t.count_tokens("warm")
    big = BIG * 4  # ~9 MB: long enough that the worker is surely still inside
    assert _other_thread_ran_during(lambda: t.count_tokens(big))
    assert _other_thread_ran_during(lambda: t.encode_array(big))
    assert _other_thread_ran_during(lambda: turnfit.count_tokens(big, model="gpt-4o"))
    conv = [{"role": "system", "content": "s"}] + [
        {"role": "user" if i % 2 == 0 else "assistant", "content": BIG[:50_000] + str(i)} for i in range(200)
    ]
    assert _other_thread_ran_during(lambda: turnfit.fit(conv, model="gpt-4o", max_tokens=100_000))


def test_the_gil_check_can_fail():
    # The same check around native code that keeps the GIL (summing a range
    # runs in C without ever giving it up) must report that nothing ran.
    assert not _other_thread_ran_during(lambda: sum(range(10_000_000)))
    # And around turnfit calls on short texts (under 4 KiB), which keep the
    # GIL on purpose (releasing it would cost more than the call).
    t = turnfit.Tokenizer("o200k_base")
    short = BIG[:2000]
    assert not _other_thread_ran_during(lambda: [t.count_tokens(short) for _ in range(2000)])


def test_shared_handles_from_a_thread_pool():
    t = turnfit.Tokenizer("cl100k_base")
    texts = [f"item {i}: " + "lorem ipsum " * (i % 50) for i in range(400)]
    expected = [t.encode(x) for x in texts]
    with ThreadPoolExecutor(8) as ex:
        got = list(ex.map(t.encode, texts))
    assert got == expected

    w = turnfit.ContextWindow("gpt-4o")
    w.load([{"role": "system", "content": "s"}, {"role": "user", "content": "task"}])

    def push(i):
        return w.push({"role": "assistant", "content": f"step {i}"})

    with ThreadPoolExecutor(8) as ex:
        counts = list(ex.map(push, range(200)))
    assert len(w) == 202 and all(c > 0 for c in counts)
    assert sum(w.message_tokens) > 0

    b = turnfit.CircuitBreaker(failure_threshold=100000)
    with ThreadPoolExecutor(8) as ex:
        list(ex.map(lambda i: b.record_failure("k", 1), range(500)))
    assert b.state("k", 1)["consecutive_failures"] == 500

"""The GIL is released in long calls: two threads counting big texts overlap.

No timing assertion: each call records when it started and finished
(time.perf_counter in the thread, around the call); the test checks that the
two intervals overlap, which is only possible if the first call let go of the
GIL. The wall-time ratio is printed as a report only.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import ctxkit

BIG = ("The quick brown fox jumps over the lazy dog. 1234 {code}\n" * 40000)  # ~2.3 MB


def _timed(t, text):
    start = time.perf_counter()
    n = t.count_tokens(text)
    return start, time.perf_counter(), n


def test_two_threads_count_concurrently():
    t = ctxkit.Tokenizer("o200k_base")
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


def test_shared_handles_from_a_thread_pool():
    t = ctxkit.Tokenizer("cl100k_base")
    texts = [f"item {i}: " + "lorem ipsum " * (i % 50) for i in range(400)]
    expected = [t.encode(x) for x in texts]
    with ThreadPoolExecutor(8) as ex:
        got = list(ex.map(t.encode, texts))
    assert got == expected

    w = ctxkit.ContextWindow("gpt-4o")
    w.load([{"role": "system", "content": "s"}, {"role": "user", "content": "task"}])

    def push(i):
        return w.push({"role": "assistant", "content": f"step {i}"})

    with ThreadPoolExecutor(8) as ex:
        counts = list(ex.map(push, range(200)))
    assert len(w) == 202 and all(c > 0 for c in counts)
    assert sum(w.message_tokens) > 0

    b = ctxkit.CircuitBreaker(failure_threshold=100000)
    with ThreadPoolExecutor(8) as ex:
        list(ex.map(lambda i: b.record_failure("k", 1), range(500)))
    assert b.state("k", 1)["consecutive_failures"] == 500

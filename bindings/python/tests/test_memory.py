"""100,000 create/free cycles of every handle type keep RSS bounded."""

import gc
import resource

import turnfit


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _cycle(i: int) -> None:
    t = turnfit.Tokenizer("cl100k_base")
    t.encode("hello world %d" % i)
    w = turnfit.ContextWindow("gpt-4o")
    w.push({"role": "user", "content": "hi"})
    s = turnfit.CallStack(5).enter("a")
    b = turnfit.CircuitBreaker()
    b.record_failure("k", 1)
    tr = turnfit.Tracer()
    tr.end(tr.start("x", None, 1, 1), "success", 1, None, 2)
    try:
        turnfit.Tokenizer("nope")
    except turnfit.UnknownEncodingError:
        pass
    del t, w, s, b, tr


def test_create_free_loop_has_bounded_rss():
    for i in range(2000):  # warm-up: vocabularies, caches, allocator pools
        _cycle(i)
    gc.collect()
    before = _rss_kib()
    for i in range(100_000):
        _cycle(i)
    gc.collect()
    after = _rss_kib()
    growth = after - before
    print(f"\nRSS {before} KiB -> {after} KiB after 100,000 cycles (+{growth} KiB)")
    # A leak of even 100 bytes per cycle would be ~10 MB; allow 8 MB of allocator noise.
    assert growth < 8 * 1024, f"RSS grew by {growth} KiB"

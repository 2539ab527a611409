"""Issue 48: everything a host returns or raises is untrusted (causes M and
K, and the KeyboardInterrupt of "noticed too"). The summarizer driver turns
any reply or exception into a reply or a fallback; only turnfit's own
errors and the host's interrupts escape. A summarizer model with a host
counter is counted by that counter."""

import asyncio
import itertools
import json
from pathlib import Path

import pytest

import turnfit

ROOT = Path(__file__).resolve().parents[3]
LOOP = json.loads((ROOT / "examples/data/agent-loop.json").read_text())
OPTS = dict(model="gpt-4o", max_tokens=16000, policy={"strategy": "summarize", "mask": {"enabled": False}})

_names = itertools.count()


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no words for it")


class BadName(type):
    @property
    def __name__(cls):
        raise RuntimeError("nameless")


class Nameless(Exception, metaclass=BadName):
    pass


class RaisingContent:
    @property
    def content(self):
        raise RuntimeError("content is gone")


class RaisingToolCalls:
    content = "a summary"

    @property
    def tool_calls(self):
        raise RuntimeError("tool_calls is gone")


class Text(str):
    """A str subclass whose methods are the host's."""

    def __str__(self):
        raise RuntimeError("str of a str")

    def encode(self, *a, **k):
        raise RuntimeError("encode")


def raises(e):
    def summarize(request):
        raise e

    return summarize


HOSTILE = [
    ("an exception whose __str__ raises", raises(Unprintable()), "error"),
    ("an exception whose type's __name__ raises", raises(Nameless("x")), "error"),
    ("an exception message with a lone surrogate", raises(ValueError("bad \ud800 text")), "error"),
    ("a reply whose content raises", lambda r: RaisingContent(), "not_text"),
    ("a reply whose tool_calls raises", lambda r: RaisingToolCalls(), "not_text"),
    ("an object of no kind", lambda r: object(), "not_text"),
]


def fallback(report):
    fb = report["summary"]["fallback"]
    return fb and fb["reason"]


@pytest.mark.parametrize("what, summarizer, reason", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_whatever_the_host_returns_or_raises_the_turn_falls_back(what, summarizer, reason):
    _, report = turnfit.fit_turn(LOOP, summarizer, **OPTS)
    assert report["summary"]["source"] == "digest", what
    assert fallback(report) == reason, what

    async def async_summarizer(request):
        return summarizer(request)

    _, report = asyncio.run(turnfit.afit_turn(LOOP, async_summarizer, **OPTS))
    assert fallback(report) == reason, what
    w = turnfit.ContextWindow("gpt-4o", context_window=16000)
    w.load(LOOP)
    report = w.fit_turn(summarizer, policy=OPTS["policy"])
    assert report["summary"]["source"] == "digest" and fallback(report) == reason, what


def test_a_str_subclass_reply_is_its_text():
    _, report = turnfit.fit_turn(LOOP, lambda r: Text("the agent fixed parse_header"), **OPTS)
    assert report["summary"]["source"] == "host"


def test_the_hosts_interrupts_propagate():
    def interrupted(request):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        turnfit.fit_turn(LOOP, interrupted, **OPTS)

    async def cancelled(request):
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(turnfit.afit_turn(LOOP, cancelled, **OPTS))


_made = []


def fresh_model(**extra):
    name = f"untrusted-llm-{next(_names)}"
    p = {"name": name, "encoding": "o200k_base", "context_window": 128000, "exact": True, **extra}
    _made.append(p)
    return p


@pytest.fixture(autouse=True)
def _no_counter_left():
    """A registered host counter keeps the GIL in every later call (the
    binding cannot release it while a counter may run): re-register each
    profile without one, whatever the test did."""
    yield
    while _made:
        turnfit.register_model(_made.pop())


def test_a_keyboard_interrupt_in_a_host_counter_propagates():
    """It was InvalidArgumentError ("the host counter ... failed")."""
    p = fresh_model()
    calls = []

    def count(text):
        calls.append(text)
        raise KeyboardInterrupt

    turnfit.register_model(p, count=count)
    conv = [{"role": "user", "content": "hello there"}]
    for call in (
        lambda: turnfit.count_conversation(conv, p["name"]),
        lambda: turnfit.fit(conv, model=p["name"]),
        lambda: turnfit.fit_turn(conv, model=p["name"]),
        lambda: turnfit.ContextWindow(p["name"], conversation=conv),
    ):
        with pytest.raises(KeyboardInterrupt):
            call()
    assert calls
    # An ordinary exception is still the counter's failure, by turnfit's kind.
    turnfit.register_model(p, count=lambda t: (_ for _ in ()).throw(ValueError("nope")))
    with pytest.raises(turnfit.InvalidArgumentError, match="ValueError: nope"):
        turnfit.count_conversation(conv, p["name"])
    turnfit.register_model(p)


def test_a_summarizer_model_with_a_host_counter_is_counted_by_it():
    """Cause K: the summarizer's prompts were counted with its profile's
    encoding, so a request reported as 1,894 tokens was 2,646 by the
    counter, over max_prompt_tokens 2,000."""
    p = fresh_model()

    def count(text):
        # A model whose tokens are two bytes (o200k's are about four in
        # English): plain Python, as a counter may not call turnfit.
        return len(text.encode("utf-8")) // 2

    turnfit.register_model(p, count=count)
    seen = []

    def summarize(request):
        seen.append(request)
        return "the agent fixed parse_header"

    opts = dict(OPTS, summarizer={"model": p["name"], "max_prompt_tokens": 2000, "max_requests": 64})
    _, report = turnfit.fit_turn(LOOP, summarize, **opts)
    assert report["summary"]["source"] == "host", report["summary"]
    assert seen
    for r in seen:
        assert r["prompt_tokens"] == count(r["prompt"]), (r["prompt_tokens"], count(r["prompt"]))
        assert r["prompt_tokens"] <= r["max_prompt_tokens"] == 2000
    turnfit.register_model(p)


@pytest.mark.parametrize("ms", [2**31, 2**32, 10**12, 2**53 - 1, 2**64 - 1])
def test_a_timeout_beyond_any_timer_does_not_fire_at_once(ms):
    """Cause O, Python's side: asyncio takes any float delay."""

    async def quick(request):
        await asyncio.sleep(0)
        return "in time"

    opts = dict(OPTS, summarizer={"timeout_ms": ms})
    _, report = asyncio.run(turnfit.afit_turn(LOOP, quick, **opts))
    assert report["summary"]["source"] == "host", report["summary"]
    _, report = turnfit.fit_turn(LOOP, lambda r: "in time", **opts)
    assert report["summary"]["source"] == "host", report["summary"]

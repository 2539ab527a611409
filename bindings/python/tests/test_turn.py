"""fit_turn / afit_turn (issue 31): the host's model as the summarizer, and
every way it can fail, with the turn fitting each time; ContextWindow's
add_message (seed 000's test_automatic_pruning, as the seed wrote it); and
seed 002's keep-the-last-10 with no token target."""

import asyncio
import json
import time
from pathlib import Path

import pytest

import turnfit

ROOT = Path(__file__).resolve().parents[3]
LOOP = json.loads((ROOT / "examples/data/agent-loop.json").read_text())
OPTS = dict(model="gpt-4o", max_tokens=16000, policy={"strategy": "summarize", "mask": {"enabled": False}})


def msgs(out):
    return out["messages"] if isinstance(out, dict) else out


def fits(report):
    assert report["tokens_after"] <= report["limit_tokens"], report["tokens_after"]


def fallback(report):
    fb = report["summary"]["fallback"]
    return fb and fb["reason"]


def test_the_host_model_summarizes_in_pieces_within_its_budget():
    seen = []

    def model(request):
        seen.append(request)
        assert request["prompt_tokens"] <= request["max_prompt_tokens"]
        return f"summary of piece {request['piece']}: the agent fixed parse_header"

    out, report = turnfit.fit_turn(LOOP, model, **OPTS)
    fits(report)
    assert report["summary"]["source"] == "host" and fallback(report) is None
    assert len(seen) == report["summary"]["requests"].__len__() >= 1
    assert all(r["folds_previous"] == (r["piece"] > 1) for r in seen)
    assert any("the agent fixed parse_header" in json.dumps(m) for m in msgs(out))
    assert report["cache"]["first_changed"] is not None


class AIMessage:  # the shape of LangChain's reply
    def __init__(self, content, tool_calls=()):
        self.content, self.tool_calls = content, list(tool_calls)


@pytest.mark.parametrize(
    "summarizer, reason",
    [
        (lambda r: (_ for _ in ()).throw(RuntimeError("rate limited")), "error"),
        (lambda r: "   ", "empty"),
        (lambda r: "word " * (r["max_summary_tokens"] * 3), "oversized"),
        (lambda r: {"not": "text"}, "not_text"),
        (lambda r: AIMessage("", [{"name": "search", "args": {}}]), "not_text"),
        (lambda r: b"\xff\xfe", "invalid_utf8"),
    ],
)
def test_every_failure_falls_back_to_the_digest_and_says_so(summarizer, reason):
    out, report = turnfit.fit_turn(LOOP, summarizer, **OPTS)
    fits(report)
    assert report["summary"]["source"] == "digest"
    assert fallback(report) == reason
    assert any("[Summary of earlier conversation]" in json.dumps(m) for m in msgs(out))


def test_a_reply_object_with_text_content_is_accepted():
    _, report = turnfit.fit_turn(LOOP, lambda r: AIMessage("the summary"), **OPTS)
    assert report["summary"]["source"] == "host"


def test_a_summarizer_past_its_timeout_is_discarded():
    opts = dict(OPTS, summarizer={"timeout_ms": 50})

    def slow(request):
        time.sleep(0.2)
        return "late"

    _, report = turnfit.fit_turn(LOOP, slow, **opts)
    fits(report)
    assert fallback(report) == "timeout"


def test_no_summarizer_is_reported():
    _, report = turnfit.fit_turn(LOOP, None, **OPTS)
    fits(report)
    assert fallback(report) == "no_summarizer"


def test_async_summarizer_success_failure_and_cancellation():
    async def good(request):
        await asyncio.sleep(0)
        return "async summary"

    async def hangs(request):
        await asyncio.sleep(30)
        return "never"

    async def throws(request):
        raise ValueError("boom")

    async def main():
        _, a = await turnfit.afit_turn(LOOP, good, **OPTS)
        t0 = time.monotonic()
        _, b = await turnfit.afit_turn(LOOP, hangs, **dict(OPTS, summarizer={"timeout_ms": 100}))
        elapsed = time.monotonic() - t0
        _, c = await turnfit.afit_turn(LOOP, throws, **OPTS)
        return a, b, c, elapsed

    a, b, c, elapsed = asyncio.run(main())
    for r in (a, b, c):
        fits(r)
    assert a["summary"]["source"] == "host"
    assert fallback(b) == "timeout" and elapsed < 25  # cancelled, not awaited to the end
    assert fallback(c) == "error" and "boom" in c["summary"]["fallback"]["detail"]


def test_a_coroutine_summarizer_in_sync_fit_turn_runs_without_a_loop():
    async def good(request):
        return "from a coroutine"

    _, report = turnfit.fit_turn(LOOP, good, **OPTS)
    assert report["summary"]["source"] == "host"


def test_bad_summarizer_options_are_refused():
    with pytest.raises(turnfit.InvalidArgumentError, match="max_requests"):
        turnfit.fit_turn(LOOP, None, **dict(OPTS, summarizer={"max_requests": 0}))
    with pytest.raises(turnfit.UnknownModelError):
        turnfit.fit_turn(LOOP, None, **dict(OPTS, summarizer={"model": "no-such-model-x"}))
    with pytest.raises(turnfit.InvalidJsonError):
        turnfit.fit_turn(LOOP, None, **dict(OPTS, summarizer={"timeout": 5}))


def test_seed_000_automatic_pruning_as_written():
    """Seed 000's test_automatic_pruning: max_tokens=100, recency, threshold 0.5,
    ten messages of "Message i" * 10; then utilization <= 1.0 and fewer than 10."""
    window = turnfit.ContextWindow("gpt-4", context_window=100, trigger_ratio=0.5, target_ratio=0.5)
    for i in range(10):
        window.add_message({"role": "user", "content": f"Message {i}" * 10}, strategy="recency")
    assert window.utilization <= 1.0, window.utilization
    assert len(window) < 10
    # Nothing silently over: the window fits.
    assert window.preflight()["verdict"] in ("fits", "should_compact")


def test_seed_002_keep_the_last_ten_with_no_token_target():
    conv = json.loads((ROOT / "examples/seeds/002-baseagent-compression/conversation.json").read_text())
    msgs = conv if isinstance(conv, list) else conv["messages"]
    calls = []
    out, report = turnfit.fit_turn(
        conv,
        lambda r: calls.append(r) or "summary of the old tool results",
        model="gpt-4o",
        trigger_messages=11,
        policy={"strategy": "summarize", "keep_first": 0, "keep_last_messages": 10, "keep_only_protected": True},
    )
    out_msgs = out if isinstance(out, list) else out["messages"]
    assert calls and report["summary"]["source"] == "host"
    # System + summary + the last 10 (snapped to whole rounds: at least 10).
    tail = [m for m in out_msgs if "summary of the old tool results" not in json.dumps(m)]
    assert out_msgs[0] == msgs[0] and msgs[0]["role"] == "system"
    kept = tail[1:]
    assert 10 <= len(kept) <= 12 and kept == msgs[-len(kept):]


def test_a_window_turn_below_the_trigger_changes_nothing_and_over_it_summarizes():
    w = turnfit.ContextWindow("gpt-4o", context_window=16000)
    w.load({"messages": msgs(LOOP)[:6]})
    r = w.fit_turn(lambda req: "never called", policy={"strategy": "summarize"})
    assert r["fired"] is False and r["changed"] is False
    w.load(LOOP)
    n = len(w)
    r = w.fit_turn(lambda req: "the window's own summary", policy={"strategy": "summarize", "mask": {"enabled": False}})
    assert r["fired"] and r["changed"] and r["summary"]["source"] == "host"
    assert len(w) < n and "the window's own summary" in json.dumps(w.conversation)
    assert w.preflight()["verdict"] != "overflow"


def test_a_summarizer_that_reenters_the_window_gets_nothing_applied():
    w = turnfit.ContextWindow("gpt-4o", context_window=16000)
    w.load(LOOP)
    n = len(w)

    pushed = []

    def reenters(request):
        if not pushed:
            pushed.append(w.push({"role": "user", "content": "a message pushed from inside the summarizer"}))
        return "summary"

    with pytest.raises(turnfit.InvalidArgumentError, match="the window changed during the turn"):
        w.fit_turn(reenters, policy={"strategy": "summarize", "mask": {"enabled": False}})
    assert len(w) == n + 1  # nothing lost: the pushed message is there, the history whole


def test_a_window_turn_refuses_what_the_window_holds():
    # The window's model and budget are its own: a turn's options that set
    # them are refused, never silently ignored.
    w = turnfit.ContextWindow("gpt-4o", context_window=16000)
    w.load(LOOP)
    for bad, words in [({"max_tokens": 100}, "belongs to the window"),
                       ({"model": "gpt-4o-mini"}, "not the window's model"),
                       ({"target_ratio": 0.5}, "belongs to the window")]:
        with pytest.raises(turnfit.InvalidArgumentError, match=words):
            w.fit_turn(None, **bad)
    assert w.fit_turn(None, model="gpt-4o")["fired"] is True

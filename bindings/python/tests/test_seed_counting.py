"""Issue 34, seeds 000, 002 and 003 through Python: `policy.keep_system`
(002's `compress(keep_system=False)`), `chars_per_token` (002's `len // 4`
estimate, for ported thresholds), a host's own counter passed as a callable
with `register_model(..., count=...)` (000's `token_counter`), and
`event_filters` in assembly (003's AgentMind `filters`, before the depth
limit). Bad input for each entry point: a specific exception, never a crash."""

import itertools

import pytest

import turnfit

_names = itertools.count()
_made = []


def fresh_model(**extra):
    """A host profile with a name no other test uses (the registry is per process)."""
    name = f"house-llm-{next(_names)}"
    p = {"name": name, "encoding": "o200k_base", "context_window": 1000, "exact": True, **extra}
    _made.append(p)
    return p


@pytest.fixture(autouse=True)
def no_counter_left():
    """The registry is per process, and while a counter is registered calls keep
    the GIL (test_threads.py checks they release it): remove every counter."""
    yield
    for p in _made:
        turnfit.register_model(p)
    _made.clear()


TWENTY = [{"role": "system", "content": "sys"}] + [{"role": "user", "content": f"msg {i}"} for i in range(20)]
KEEP5 = {"keep_first": 0, "keep_last_rounds": 0, "keep_last_messages": 5, "keep_only_protected": True,
         "summary_max_tokens": 16}


def test_keep_system_false_summarizes_the_system_message():
    out, report = turnfit.fit(TWENTY, model="gpt-4o", trigger_messages=6, policy={"strategy": "summarize", **KEEP5})
    assert len(out) == 7 and out[0] == TWENTY[0]
    out, report = turnfit.fit(
        TWENTY, model="gpt-4o", trigger_messages=6, policy={"strategy": "summarize", "keep_system": False, **KEEP5}
    )
    assert len(out) == 6
    assert out[0]["content"].startswith("[Summary of earlier conversation]")
    assert [m["content"] for m in out[1:]] == [f"msg {i}" for i in range(15, 20)]
    assert all(p["reason"] != "system" for p in report["protected"])
    with pytest.raises(turnfit.InvalidJsonError, match="expected a boolean"):
        turnfit.fit(TWENTY, model="gpt-4o", policy={"keep_system": "no"})


def test_chars_per_token_fires_a_ported_threshold():
    conv = [{"role": "user", "content": "x" * 3000}]
    # The document: max_tokens 1000, compress past 75%; "x" * 3000 is 750 by its estimate.
    exact = turnfit.ContextWindow("gpt-4o", context_window=1000, reserved_output=0, trigger_ratio=0.75,
                                  target_ratio=0.5, conversation=conv).preflight()
    est = turnfit.ContextWindow("gpt-4o", context_window=1000, reserved_output=0, trigger_ratio=0.75,
                                target_ratio=0.5, chars_per_token=4, conversation=conv).preflight()
    assert exact["exact"] and exact["prompt_tokens"] < 500 and exact["verdict"] == "fits"
    assert not est["exact"] and est["prompt_tokens"] >= 750 and est["verdict"] == "should_compact"
    _, report = turnfit.fit(conv, model="gpt-4o", max_tokens=1000, reserve_output=0, chars_per_token=4)
    assert report["tokens_before"] == est["prompt_tokens"] and not report["exact"]
    for bad in (0, -4, 1e9):
        with pytest.raises(turnfit.InvalidArgumentError, match="chars_per_token"):
            turnfit.fit(conv, model="gpt-4o", chars_per_token=bad)
        with pytest.raises(turnfit.InvalidArgumentError, match="chars_per_token"):
            turnfit.ContextWindow("gpt-4o", chars_per_token=bad)
    with pytest.raises(turnfit.InvalidJsonError):
        turnfit.fit(conv, model="gpt-4o", chars_per_token="4")


def test_a_host_counter_is_a_callable():
    profile = fresh_model()
    conv = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "one two three four"}]
    assert turnfit.register_model(profile) == 1
    plain = turnfit.count_conversation(conv, profile["name"])
    seen = []

    def words(text: str) -> int:
        seen.append(text)
        return 10 * max(1, len(text.split()))

    assert turnfit.register_model(profile, count=words) == 1
    counted = turnfit.count_conversation(conv, profile["name"])
    assert "one two three four" in seen
    # Text is the host's (roles 1 word each, "be brief" 2, the question 4), framing the model's.
    assert counted == plain - 8 + 10 * 8
    w = turnfit.ContextWindow(profile["name"], conversation=conv)
    assert w.preflight()["prompt_tokens"] == counted
    _, report = turnfit.fit(conv, model=profile["name"])
    assert report["tokens_before"] == counted
    _, report = turnfit.fit_turn(conv, model=profile["name"])
    assert report["tokens_before"] == counted
    # Registering the name again without a counter removes it.
    turnfit.register_model(profile)
    assert turnfit.count_conversation(conv, profile["name"]) == plain


def test_a_host_counter_that_raises_or_misbehaves():
    conv = [{"role": "user", "content": "hello there"}]

    def raising(text):
        raise ValueError("no tokenizer for this text")

    cases = [
        (raising, "failed: ValueError: no tokenizer"),
        (lambda t: "12", "returned str, not an int"),
        (lambda t: True, "returned bool, not an int"),
        (lambda t: 1.5, "returned float, not an int"),
        (lambda t: -1, "not a non-negative int"),
        (lambda t: 10**30, "not a non-negative int"),
        (lambda t: 10**6, "a count is at most"),
    ]
    for count, want in cases:
        p = fresh_model()
        turnfit.register_model(p, count=count)
        for call in (
            lambda: turnfit.count_conversation(conv, p["name"]),
            lambda: turnfit.fit(conv, model=p["name"]),
            lambda: turnfit.ContextWindow(p["name"], conversation=conv),
        ):
            with pytest.raises(turnfit.InvalidArgumentError, match=p["name"]) as e:
                call()
            assert want in str(e.value), str(e.value)
    # Re-entering turnfit from inside the counter is refused, not a deadlock.
    p = fresh_model()
    w = turnfit.ContextWindow("gpt-4o")

    def reentering(text):
        w.push({"role": "user", "content": text})
        return 1

    turnfit.register_model(p, count=reentering)
    with pytest.raises(turnfit.InvalidArgumentError, match="called from inside a host counter"):
        turnfit.count_conversation(conv, p["name"])
    assert w.preflight()["history"] == 0
    with pytest.raises(TypeError, match="count must be callable"):
        turnfit.register_model(fresh_model(), count=42)
    with pytest.raises(turnfit.InvalidJsonError, match="one profile object"):
        turnfit.register_model([fresh_model()], count=len)
    with pytest.raises(turnfit.InvalidArgumentError):
        turnfit.register_model({"name": "", "encoding": "o200k_base", "exact": False}, count=len)
    with pytest.raises(turnfit.InvalidJsonError):
        turnfit.register_model({"name": "x", "encoding": "o200k_base"}, count=len)
    # After all that, counting works.
    assert turnfit.count_conversation(conv, "gpt-4o") > 0


REENTER_THE_WINDOW = """
import turnfit
p = {"name": "house-llm-reenter", "encoding": "o200k_base", "context_window": 1000, "exact": True}
w = turnfit.ContextWindow("gpt-4o")  # replaced below, once the model exists
for reach in ("len", "message_tokens", "on_event"):
    calls = {"len": lambda: len(w), "message_tokens": lambda: w.message_tokens,
             "on_event": lambda: w.on_event(print)}

    def counter(text, reach=reach):
        calls[reach]()
        return 1

    turnfit.register_model(p, count=counter)
    w = turnfit.ContextWindow(p["name"])
    try:
        w.push({"role": "user", "content": "hi"})
    except turnfit.InvalidArgumentError as e:
        assert "was called from inside a host counter" in str(e), str(e)
    else:
        raise SystemExit(reach + ": the push was not refused")
    turnfit.register_model(p)
    assert len(w) == 0 and w.message_tokens == [], reach
    print(reach, "refused")
"""


def test_a_counter_reading_the_window_it_counts_for_is_refused_not_a_deadlock():
    """`len(w)`, `w.message_tokens` and `w.on_event` from inside the counter of
    the window's own push: each waited on the lock the push holds, forever,
    until they checked, like every other call. In a child process with a
    timeout, so that a regression fails instead of hanging the suite."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", REENTER_THE_WINDOW], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["len", "refused", "message_tokens", "refused", "on_event", "refused"], r.stdout


def test_event_filters_apply_before_the_depth_limit():
    events = [{"event": f"e{i}", "kind": "decision" if i % 3 == 0 else "tool_call"} for i in range(1, 31)]
    req = {"preset": "context_engine", "template": "analysis", "budget": 2000, "depth": "standard",
           "context": {"query": "q"}, "events": events}
    tok = turnfit.Tokenizer("o200k_base")

    def listed(r):
        return [line[len("- event: "):] for line in r["text"].splitlines() if line.startswith("- event: ")]

    assert listed(turnfit.assemble(tok, req)) == ["e26", "e27", "e28", "e29", "e30"]
    assert listed(turnfit.assemble(tok, {**req, "event_filters": ["decision"]})) == ["e18", "e21", "e24", "e27", "e30"]
    with pytest.raises(turnfit.InvalidArgumentError, match=r"event_filters\[0\]"):
        turnfit.assemble(tok, {**req, "event_filters": [" "]})
    with pytest.raises(turnfit.LimitExceededError):
        turnfit.assemble(tok, {**req, "event_filters": [f"k{i}" for i in range(300)]})
    with pytest.raises(turnfit.InvalidJsonError):
        turnfit.assemble(tok, {**req, "event_filters": "decision"})


def test_a_registered_model_is_known_to_skills_handoffs_and_window_turns(tmp_path):
    """Every Python entry point that takes a model name looks it up in the process
    registry (skills, handoff rendering and a window turn's summarizer used the
    built-in table only, so a registered model was unknown there)."""
    profile = fresh_model(context_window=8000)
    name = profile["name"]
    for call in (
        lambda: turnfit.Skills(str(tmp_path), model=name),
        lambda: turnfit.handoff_render(HANDOFF, model=name),
    ):
        with pytest.raises(turnfit.UnknownModelError, match=name):
            call()
    turnfit.register_model(profile)
    (tmp_path / "greet.md").write_text("---\nname: greet\ndescription: Says hello.\n---\nSay hello.\n")
    assert [s["name"] for s in turnfit.Skills(str(tmp_path), model=name).list()["skills"]] == ["greet"]
    assert turnfit.handoff_render(HANDOFF, model=name, budget=500)["text"]
    w = turnfit.ContextWindow("gpt-4o", conversation=TWENTY)
    seen = []

    def summarize(request):
        seen.append(request["model"])
        return "what happened"

    report = w.fit_turn(summarize, trigger_messages=6, summarizer={"model": name},
                        policy={"strategy": "summarize", **KEEP5})
    assert report["fired"] and seen == [name]


HANDOFF = {
    "version": "1.0",
    "task_summary": "Fix the failing test.",
    "key_outputs": [],
    "metadata": {"from_agent": "planner", "to_agent": "coder", "created_at": "2026-03-01T12:00:00Z"},
}

"""turnfit.FitSession (issue 52): a step reads and counts only its new messages,
and the turn is fit_turn's on the whole history; the LangChain middleware keeps
one session per run and gives the prompts the stateless fit gives."""

import json
from pathlib import Path

import pytest

import turnfit

FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "trajectories" / "mini-swe-agent-astroid-1866.openai.json"


def _history():
    return json.loads(FIXTURE.read_text())["messages"]


def _strip(report):
    report = json.loads(json.dumps(report))
    for r in (report.get("summary") or {}).get("requests") or []:
        r.pop("elapsed_ms", None)
    return report


def test_a_growing_history_fits_as_the_stateless_turn_does():
    msgs = _history()
    opts = {"model": "gpt-4o", "max_tokens": 12000, "policy": {"strategy": "summarize"}}
    summarize = lambda req: f"summary of {len(req['messages'])} messages"  # noqa: E731
    session = turnfit.FitSession()
    carry_a = carry_b = None
    held = 0
    fired = 0
    for n in range(2, len(msgs) + 1, 7):
        session.update(held, msgs[held:n])
        held = n
        assert len(session) == n
        a, ra = turnfit.fit_turn(msgs[:n], summarize, **dict(opts, **({"carry": carry_a} if carry_a else {})))
        b, rb = session.fit_turn(summarize, **dict(opts, **({"carry": carry_b} if carry_b else {})))
        assert (msgs[:n] if b is None else b) == a
        assert b is None or rb["changed"]
        assert _strip(ra) == _strip(rb)
        carry_a, carry_b = ra.get("carry"), rb.get("carry")
        fired += ra["fired"]
    assert fired > 3  # the comparison covered compacting turns


def test_an_edit_inside_the_history_is_seen():
    msgs = _history()[:20]
    session = turnfit.FitSession(msgs)
    edited = [dict(m) for m in msgs]
    edited[5] = dict(edited[5], content="x " * 3000)
    session.update(5, edited[5:])
    _, a = turnfit.fit_turn(edited, model="gpt-4o", max_tokens=100000)
    _, b = session.fit_turn(model="gpt-4o", max_tokens=100000)
    assert a["tokens_before"] == b["tokens_before"] > 3000


def test_bad_updates_raise_and_leave_the_session():
    session = turnfit.FitSession(_history()[:3])
    with pytest.raises(turnfit.InvalidArgumentError, match="keep 4 is more than the 3"):
        session.update(4, [])
    with pytest.raises(turnfit.InvalidArgumentError, match="only whole"):
        turnfit.FitSession({"input": [{"role": "user", "content": "hi"}]}).update(1, [])
    assert len(session) == 3


def test_the_middleware_keeps_one_session_per_run_and_fits_as_before():
    pytest.importorskip("langchain")
    import turnfit.langchain as tl
    from lc_replay import load, run_agent

    traj = load()
    budget = turnfit.count_conversation(traj["doc"]) // 3
    prompts = {}
    for incremental in (True, False):
        mw = tl.agent_middleware("gpt-4o", max_tokens=budget + 1000, reserve_output=1000,
                                 summarize=lambda req: "SUMMARY: fixing astroid format() inference.")
        if not incremental:
            # The stateless path: a new session on the whole history at every call.
            def fresh(*a, _mw=mw, **k):
                _mw._session.forget()
                return tl._Session.start(_mw._session, *a, **k)
            mw._session.start = fresh
        model, _ = run_agent(traj, [mw])
        prompts[incremental] = [tl.to_openai(p) for p in model.prompts]
        if incremental:
            assert mw._session.loads == 1, mw._session.loads
    assert prompts[True] == prompts[False]
    assert any(len(p) < 50 for p in prompts[True])  # it compacted

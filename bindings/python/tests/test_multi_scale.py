"""Multi-scale windows (issue 53): options, folds, the report, bad options."""

import json
import pathlib

import pytest

import turnfit

ROOT = pathlib.Path(__file__).resolve().parents[3]
# A real trajectory (tests/fixtures/trajectories/PROVENANCE.md).
TAU = json.loads((ROOT / "tests/fixtures/trajectories/tau-bench-airline-task0.openai.json").read_text())
TIERS = {"immediate_tokens": 1500, "session_tokens": 300, "historical_tokens": 400}


def messages(c):
    return c["messages"] if isinstance(c, dict) else c


def test_off_by_default():
    w = turnfit.ContextWindow("gpt-4o", context_window=8000)
    assert w.tiers is None and "tiers" not in w.preflight()


def test_add_message_folds_and_reports():
    w = turnfit.ContextWindow("gpt-4o", context_window=8000, reserved_output=1000, multi_scale=TIERS)
    n = 0
    for m in messages(TAU):
        r = w.add_message(m)
        n += 1
        assert w.preflight()["verdict"] != "overflow"
        if r["compacted"] is not None:
            assert r["compacted"]["tiers"]["messages_folded"] > 0
    t = w.tiers
    assert t["session_folds"] > 0 and t["immediate_tokens"] <= 1500 and t["session_tokens"] <= 300
    conv = messages(w.conversation)
    assert conv[1]["content"].startswith("[Earlier context]\n")
    assert t["messages_folded"] + len(conv) - 1 == n


def test_compact_folds_and_summarize_is_called():
    w = turnfit.ContextWindow("gpt-4o", context_window=8000, reserved_output=1000, multi_scale=TIERS)
    w.load(TAU)
    r = w.compact()
    assert r["status"] == "done" and r["report"]["tiers"]["messages_folded"] > 0
    asked = []
    v = turnfit.ContextWindow("gpt-4o", context_window=8000, reserved_output=1000, multi_scale=TIERS)
    for m in messages(TAU):
        v.add_message(m, summarize=lambda req: asked.append(req) or "short summary")
    assert asked and {a["tier"] for a in asked} <= {"session", "historical"}
    assert v.tiers["host_summaries"] == len(asked)
    assert "short summary" in messages(v.conversation)[1]["content"]


@pytest.mark.parametrize(
    "tiers, want",
    [
        ({"immediate_tokens": 0, "session_tokens": 300, "historical_tokens": 300}, "multi_scale.immediate_tokens is 0"),
        ({"immediate_tokens": 500, "session_tokens": -4, "historical_tokens": 300}, "multi_scale.session_tokens is -4"),
        ({"immediate_tokens": 6000, "session_tokens": 600, "historical_tokens": 600}, "tier budgets sum to 7200"),
    ],
)
def test_bad_tiers_are_refused_by_name(tiers, want):
    with pytest.raises(turnfit.InvalidArgumentError, match=want):
        turnfit.ContextWindow("gpt-4o", context_window=8000, reserved_output=1000, multi_scale=tiers)

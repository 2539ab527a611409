"""Issue 31 item 5: a model the registry does not know works in ContextWindow
and fit given its encoding and window (the same option names as the core's
fit options and window budget); an unknown name without them stays an error
with suggestions; a zero or absurd window is a specific error."""

import pytest

import turnfit

CONV = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the failing test."},
]


def test_context_window_takes_a_custom_model():
    with pytest.raises(turnfit.UnknownModelError, match="my-azure-gpt4o"):
        turnfit.ContextWindow("my-azure-gpt4o")
    w = turnfit.ContextWindow(
        "my-azure-gpt4o", encoding="o200k_base", context_window=8000, max_output_tokens=1000, conversation=CONV
    )
    p = w.preflight()
    assert (p["limit"], p["reserved_output"], p["exact"]) == (8000, 1000, False)
    for bad in (0, 2**32):
        with pytest.raises(turnfit.InvalidArgumentError, match="context_window"):
            turnfit.ContextWindow("my-azure-gpt4o", encoding="o200k_base", context_window=bad)


def test_fit_takes_a_custom_model():
    with pytest.raises(turnfit.UnknownModelError, match="did you mean gpt-4o"):
        turnfit.fit(CONV, model="gpt4o")
    out, report = turnfit.fit(
        CONV, model="my-azure-gpt4o", encoding="o200k_base", context_window=8000, max_output_tokens=1000
    )
    assert out == CONV
    assert (report["max_tokens"], report["reserved_output"]) == (8000, 1000)
    with pytest.raises(turnfit.InvalidArgumentError, match="context_window must be positive"):
        turnfit.fit(CONV, model="my-azure-gpt4o", encoding="o200k_base", context_window=0)

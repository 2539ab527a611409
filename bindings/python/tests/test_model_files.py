"""register_model(name, tokenizer=...): a model known by its own files
(issue 50). Registered, its name works unchanged in fit and fit_turn, with
the chat template's count as the totals (exact) and the rendered prompt
within the limit. On the tiny byte-level fixture, then on Qwen3's real
files when scripts/templates.sh has cached them."""

import json
from pathlib import Path

import pytest

import turnfit

ROOT = Path(__file__).resolve().parents[3]
BYTE_LEVEL = ROOT / "tests" / "vectors" / "files" / "tiny-byte-level.tokenizer.json"
TEMPLATE = (
    "{% for m in messages %}{{ m.role }}:{{ m.content }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
QWEN3 = ROOT / "target" / "open-models" / "npm" / "tokenizer-qwen3" / "package" / "models" / "tokenizer.json"
TRAJECTORY = ROOT / "tests" / "fixtures" / "trajectories" / "mini-swe-agent-astroid-1866.openai.json"


def rendered_count(messages):
    """The template rendered by hand, counted with the file's specials."""
    text = "".join(f"{m['role']}:{m['content']}<|end|>" for m in messages) + "assistant:"
    return turnfit.FileTokenizer(BYTE_LEVEL, special_tokens="recognize").count_tokens(text)


def chat(n):
    msgs = [{"role": "system", "content": "Be brief."}]
    for i in range(n):
        msgs.append({"role": "user", "content": f"question {i} about the weather in a city"})
        msgs.append({"role": "assistant", "content": f"answer {i}: it is sunny there today"})
    return msgs


def test_a_registered_model_is_exact_in_fit_and_fit_turn():
    assert turnfit.register_model("tiny-files", tokenizer=BYTE_LEVEL, chat_template=TEMPLATE, context_window=2000) == 1
    info = turnfit.lookup_model("tiny-files")
    assert (info["source"], info["context_window"], info["exact"]) == ("host", 2000, True)
    msgs = chat(60)
    for max_tokens in (None, 1500, 800):
        opts = {"model": "tiny-files"} if max_tokens is None else {"model": "tiny-files", "max_tokens": max_tokens}
        out, report = turnfit.fit(msgs, **opts)
        assert report["exact"] is True
        assert report["tokens_before"] == rendered_count(msgs)
        assert report["tokens_after"] == rendered_count(out)
        assert report["tokens_after"] <= report["limit_tokens"]
        assert len(out) < len(msgs)
        out, turn = turnfit.fit_turn(msgs, **opts)
        assert turn["exact"] is True
        assert turn["tokens_after"] == rendered_count(out) <= turn["limit_tokens"]


def test_bad_model_files_raise_specific_errors():
    with pytest.raises(turnfit.InvalidArgumentError, match="built-in"):
        turnfit.register_model("gpt-4o", tokenizer=BYTE_LEVEL, chat_template=TEMPLATE, context_window=100)
    with pytest.raises(turnfit.TurnfitError, match="missing.json"):
        turnfit.register_model("m", tokenizer=BYTE_LEVEL.parent / "missing.json", context_window=100)
    with pytest.raises(turnfit.InvalidArgumentError, match="no chat template found"):
        turnfit.register_model("m", tokenizer=BYTE_LEVEL, context_window=100)
    with pytest.raises(turnfit.InvalidArgumentError, match="no system role"):
        turnfit.register_model(
            "m", tokenizer=BYTE_LEVEL, chat_template="{{ raise_exception('no system role') }}", context_window=100
        )
    with pytest.raises(turnfit.TurnfitError, match="context_window"):
        turnfit.register_model("m", tokenizer=BYTE_LEVEL, chat_template=TEMPLATE)
    with pytest.raises(TypeError, match="name"):
        turnfit.register_model({"name": "m"}, tokenizer=BYTE_LEVEL, context_window=100)
    with pytest.raises(TypeError, match="tokenizer="):
        turnfit.register_model({"name": "m", "encoding": "o200k_base", "exact": False}, context_window=100)


@pytest.mark.skipif(not QWEN3.exists(), reason=f"Qwen3's files are not cached ({QWEN3}); run scripts/templates.sh")
def test_qwen3_from_its_files_fits_a_real_trajectory():
    turnfit.register_model("qwen3-local", tokenizer=QWEN3, context_window=32768)
    doc = json.loads(TRAJECTORY.read_text())
    for max_tokens in (4096, 8192, 16384):
        out, report = turnfit.fit(doc, model="qwen3-local", max_tokens=max_tokens)
        assert report["exact"] is True
        assert report["tokens_before"] > report["tokens_after"]
        assert report["tokens_after"] <= report["limit_tokens"], report
        # The fitted request, counted again from scratch, is what the report says.
        _, again = turnfit.fit(out, model="qwen3-local", max_tokens=10**6)
        assert again["tokens_before"] == report["tokens_after"]

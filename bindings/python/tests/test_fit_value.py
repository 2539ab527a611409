"""fit reads a plain conversation's dicts, lists and strings directly
(_native._fit_value, issue 36) instead of writing JSON text for the core to
read: the same result, report and errors as the text path (_native._fit of
the json.dumps text), which anything not plain still takes."""

import collections
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import turnfit
from turnfit import _native

from agent_loop import agent_loop


def dumps(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def by_text(conv, **options):
    """The text path: what fit did before _fit_value (result or error)."""
    try:
        return _native._fit(dumps(conv), dumps(options))
    except Exception as e:  # noqa: BLE001 - compared with the value path's
        return type(e), str(e)


def by_value(conv, **options):
    try:
        done = _native._fit_value(conv, options, turnfit._dumps)
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    assert done is not None, "a plain conversation took the text path"
    return done


def same(a, b):
    """Equal, and with the same types and key order (== lets 1 == 1.0 and
    a reordered dict through)."""
    if isinstance(a[0], type) or isinstance(b[0], type):
        assert a == b  # (exception class, message)
        return
    assert dumps(a) == dumps(b)
    assert a == b


# Plain JSON data: every code point but lone surrogates, ints of any size,
# finite floats, nested lists, tuples and dicts.
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts
extra = st.recursive(leaf, lambda k: st.lists(k, max_size=4) | st.dictionaries(texts, k, max_size=4), max_leaves=12)
roles = st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "robot"])
content = st.none() | texts | st.lists(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "refusal", "input_audio", "mystery"]), "text": texts}),
    max_size=3,
) | st.integers()
call = st.fixed_dictionaries(
    {"id": st.sampled_from(["c1", "c2", "c3"]), "type": st.just("function"),
     "function": st.fixed_dictionaries({"name": texts, "arguments": texts | extra})}
)
message = st.fixed_dictionaries(
    {"role": roles, "content": content},
    optional={"tool_calls": st.lists(call, max_size=2), "tool_call_id": st.sampled_from(["c1", "c2", "c3"]),
              "name": texts, "x-extra": extra},
)
conversation = st.lists(message, max_size=8) | st.fixed_dictionaries(
    {"messages": st.lists(message, max_size=8)},
    optional={"model": texts, "tools": st.lists(extra, max_size=2), "x": extra, "system": texts},
)
options = st.fixed_dictionaries(
    {"model": st.sampled_from(["gpt-4o", "gpt-4", "claude-sonnet-4-5", "no-such-model", ""])},
    optional={"max_tokens": st.integers(-5, 3000), "format": st.sampled_from(["openai", "anthropic", "gemini"]),
              "policy": st.fixed_dictionaries({}, optional={"strategy": st.sampled_from(["drop_oldest", "hybrid"])})},
)


@settings(max_examples=300, deadline=None)
@given(conversation, options)
def test_the_value_path_gives_what_the_text_path_gives(conv, opts):
    same(by_value(conv, **opts), by_text(conv, **opts))


def test_agent_loops_at_several_budgets():
    conv = agent_loop(150)
    full = turnfit.count_conversation(conv)
    for budget in [full * 2, full // 2, full // 5, 3000, 50]:
        same(by_value(conv, model="gpt-4o", max_tokens=budget), by_text(conv, model="gpt-4o", max_tokens=budget))
    for strategy in ["hybrid", "summarize", "drop_oldest"]:
        opts = {"model": "gpt-4o", "max_tokens": full // 4, "policy": {"strategy": strategy}}
        same(by_value(conv, **opts), by_text(conv, **opts))
    wrapped = {"model": "gpt-4o", "temperature": 0.2, "messages": conv, "tools": [{"type": "function", "function": {
        "name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]}
    same(by_value(wrapped, model="gpt-4o", max_tokens=full // 3), by_text(wrapped, model="gpt-4o", max_tokens=full // 3))


def test_numbers_are_kept_as_json_dumps_writes_them():
    values = [0, -1, 2**63 - 1, 2**63, -(2**64) - 1, 10**40, 0.0, -0.0, 1.0, 1e16, 1e-7, 1.5e300, 5e-324, 0.1, True, None]
    conv = {"messages": [{"role": "user", "content": "hi", "x": values}], "n": {"a": 1.25, "b": [2**70, -3.5e-10]}}
    out = by_value(conv, model="gpt-4o")
    same(out, by_text(conv, model="gpt-4o"))
    assert [repr(x) for x in out[0]["messages"][0]["x"]] == [repr(x) for x in values]
    # Numbers in what is counted (arguments given as an object) count alike.
    conv = [{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {
        "name": "f", "arguments": {"x": 1e16, "y": 10**30, "z": -0.0}}}]}, {"role": "tool", "tool_call_id": "c", "content": "ok"}]
    same(by_value(conv, model="gpt-4o"), by_text(conv, model="gpt-4o"))


def test_escapes_and_the_size_limit_count_as_the_text_does():
    # The core holds the document's JSON text to MAX_JSON_BYTES (64 MiB):
    # the value path gives it the text's length, escapes included.
    limit = 64 * 1024 * 1024
    s = "\x01" * 10_000 + '"\\\n\t\x7f é😀'
    conv = [{"role": "user", "content": s}]
    same(by_value(conv, model="gpt-4o"), by_text(conv, model="gpt-4o"))
    overhead = len(dumps([{"role": "user", "content": ""}]).encode())
    # A document whose text is just over the limit only because \x01 is
    # written as \u0001 (6 bytes), and one just under it.
    for extra_bytes in [1, 0]:
        n = (limit - overhead + extra_bytes) // 6
        rest = limit - overhead + extra_bytes - 6 * n
        conv = [{"role": "user", "content": "\x01" * n + "a" * rest}]
        assert len(dumps(conv).encode()) == limit + extra_bytes
        v, t = by_value(conv, model="gpt-4o", max_tokens=10**6), by_text(conv, model="gpt-4o", max_tokens=10**6)
        if extra_bytes:
            assert v == t and v[0] is turnfit.LimitExceededError and "67108865 bytes" in v[1], v
        else:
            same(v, t)


class MyDict(dict):
    pass


class MyStr(str):
    pass


def test_anything_not_plain_takes_the_text_path_with_its_errors():
    circular = [{"role": "user", "content": "hi"}]
    circular.append(circular)
    deep = "x"
    for _ in range(300):
        deep = [deep]
    odd = [
        [{"role": "user", "content": "hi", 1: "int key"}],
        [{"role": "user", "content": "hi", None: 1}],
        [MyDict(role="user", content="hi")],
        [{"role": "user", "content": MyStr("hi")}],
        [collections.OrderedDict(role="user", content="hi")],
        [{"role": "user", "content": "lone \ud800 surrogate"}],
        [{"role": "user", "content": "hi", "x": math.nan}],
        [{"role": "user", "content": "hi", "x": -math.inf}],
        [{"role": "user", "content": "hi", "x": deep}],
        [{"role": "user", "content": b"bytes"}],
        [{"role": "user", "content": "hi", "x": object()}],
        circular,
        [{"role": "user", "content": "hi"}] * 100_001,
    ]
    for conv in odd:
        assert _native._fit_value(conv, {"model": "gpt-4o"}, turnfit._dumps) is None
    # fit then behaves as it did: the text path's result or error.
    def fit_or_error(conv):
        try:
            return turnfit.fit(conv, model="gpt-4o")
        except (TypeError, ValueError, RecursionError, turnfit.TurnfitError) as e:
            return type(e), str(e)
    for conv, expected in [
        (odd[3], by_text([{"role": "user", "content": "hi"}], model="gpt-4o")),
        (odd[5], by_text([{"role": "user", "content": "lone \ufffd surrogate"}], model="gpt-4o")),
    ]:
        same(fit_or_error(conv), expected)
    # json.dumps writes NaN, which is not JSON: the core says where.
    assert fit_or_error(odd[6]) == (turnfit.InvalidJsonError, "conversation: expected value at line 1 column 36")
    assert fit_or_error(odd[8])[0] is turnfit.LimitExceededError
    assert fit_or_error(odd[10])[0] is TypeError
    assert fit_or_error(circular)[0] is ValueError  # json.dumps: "Circular reference detected"
    kind, msg = fit_or_error(odd[12])
    assert kind is turnfit.LimitExceededError and "MAX_MESSAGES" in msg and "line 1 column" in msg, msg


def test_option_errors_come_after_the_conversation_is_read():
    bad_options = {"model": "gpt-4o", "policy": object()}
    with pytest.raises(TypeError, match="object is not JSON serializable"):
        turnfit.fit([{"role": "user", "content": "hi"}], **bad_options)
    # The conversation's own error first, as json.dumps of it ran first.
    with pytest.raises(TypeError, match="bytes is not JSON serializable"):
        turnfit.fit([{"role": "user", "content": b"x"}], **bad_options)
    for opts in [{"model": ""}, {"model": "gpt-4o", "carry": {}}, {"model": "gpt-4o", "max_tokens": -1},
                 {"model": "gpt-4o", "nope": 1}, {"model": "gpt-4o", "format": "gemini"}]:
        conv = [{"role": "user", "content": "hi"}]
        same(by_value(conv, **opts), by_text(conv, **opts))


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
    lambda k: st.lists(k, max_size=5) | st.tuples(k, k) | st.dictionaries(texts, k, max_size=5),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)
@given(plain)
def test_the_length_given_to_the_core_is_the_texts(v):
    # The size limit is checked against this length: json.dumps's UTF-8 bytes.
    assert _native._plain_json_len(v) == len(dumps(v).encode())


def test_the_length_of_every_escape_at_every_position():
    for b in list(range(0x20)) + [0x22, 0x5C, 0x7F, 0x41]:
        for at in range(40):
            s = "a" * at + chr(b) + "é" * (at % 3) + chr(b) * (at % 5)
            assert _native._plain_json_len([s, {s: s}]) == len(dumps([s, {s: s}]).encode()), (b, at)


def test_the_gc_is_paused_while_the_result_is_built_and_restored():
    # fit builds the result with the cyclic GC paused (a fresh tree: nothing
    # to collect), then runs one young collection: no middle or full
    # collection over the host's heap happens inside fit (issue 36).
    import gc

    conv = agent_loop(200)
    budget = turnfit.count_conversation(conv) // 3
    seen = []

    def cb(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    expected = by_text(conv, model="gpt-4o", max_tokens=budget)
    gc.callbacks.append(cb)
    try:
        gc.collect()
        seen.clear()
        out = turnfit.fit(conv, model="gpt-4o", max_tokens=budget)
        assert seen == [0], seen
        assert gc.isenabled()
        same(out, expected)
        # A GC the host disabled stays disabled, and nothing is collected.
        gc.disable()
        seen.clear()
        try:
            same(turnfit.fit(conv, model="gpt-4o", max_tokens=budget), expected)
            assert not gc.isenabled() and seen == []
        finally:
            gc.enable()
        # An error in fit leaves the GC as it was.
        with pytest.raises(turnfit.UnknownModelError):
            turnfit.fit(conv, model="no-such-model")
        assert gc.isenabled()
    finally:
        gc.callbacks.remove(cb)


# Issue 36, the messages fit keeps whole: _fit_value hands back the host's
# own object for each message the core reports unedited (its origin), and
# builds only what compaction made or rewrote. Generated agent
# conversations (tool calls with their results, some long enough to be cut
# or masked, images, unicode, user turns, tuples) are fitted at budgets that
# cut, mask, drop and summarize; the result must be the text path's, value
# for value, and the input must be left as it was.
def _message(draw, i):
    kind = draw(st.sampled_from(["calls", "user", "image", "assistant"]))
    if kind == "calls":
        n = draw(st.integers(1, 3))
        ids = [f"call_{i}_{k}" for k in range(n)]
        calls = [{"id": c, "type": "function",
                  "function": {"name": draw(st.sampled_from(["read_file", "grep", "run_tests"])),
                               "arguments": json.dumps({"path": draw(texts)}, ensure_ascii=False)}} for c in ids]
        if draw(st.booleans()):
            calls = tuple(calls)  # comes back a list: never the host's object
        msgs = [{"role": "assistant", "content": draw(st.none() | texts), "tool_calls": calls}]
        for c in ids:
            lines = draw(st.sampled_from([2, 30, 400]))
            word = draw(st.sampled_from(["ok", "état", "数据", "🙂 fine"]))
            msgs.append({"role": "tool", "tool_call_id": c,
                         "content": "\n".join(f"line {k}: {word} {k * 7919 % 1000}" for k in range(lines))})
        return msgs
    if kind == "image":
        return [{"role": "user", "content": [
            {"type": "text", "text": draw(texts)},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}}]}]
    return [{"role": "user" if kind == "user" else "assistant", "content": draw(texts),
             **({"x-meta": (1, 2.5, "t")} if draw(st.booleans()) else {})}]


@st.composite
def agent_conversations(draw):
    msgs = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": draw(texts) or "go"}]
    for i in range(draw(st.integers(0, 12))):
        msgs.extend(_message(draw, i))
    if draw(st.booleans()):
        return {"model": "gpt-4o", "messages": msgs, "temperature": 0.5}
    return msgs


def _messages(conv):
    return conv["messages"] if isinstance(conv, dict) else conv


@settings(max_examples=200, deadline=None)
@given(agent_conversations(),
       st.sampled_from([None, {"strategy": "relevance"}, {"strategy": "hybrid"}, {"strategy": "summarize"},
                        {"tool_output_max": 120}, {"mask": {"enabled": False}}]),
       st.sampled_from([1.0, 0.5, 0.25, 0.1]))
def test_kept_messages_are_the_hosts_own_and_equal_the_text_path(conv, policy, share):
    before = dumps(conv)
    full = turnfit.count_conversation(json.loads(before))
    opts = {"model": "gpt-4o", "max_tokens": max(200, int(full * share))}
    if policy:
        opts["policy"] = policy
    got, want = by_value(conv, **opts), by_text(conv, **opts)
    same(got, want)
    assert dumps(conv) == before, "fit changed its input"
    if isinstance(got[0], type):
        return
    # Only a message json.loads would give back equal (no tuple) is reused.
    inputs = {id(m) for m in _messages(conv)}
    assert not any(id(m) in inputs and _has_tuple(m) for m in _messages(got[0]))


def _has_tuple(v):
    if isinstance(v, tuple):
        return True
    if isinstance(v, dict):
        return any(_has_tuple(x) for x in v.values())
    return isinstance(v, list) and any(_has_tuple(x) for x in v)


def test_a_kept_message_is_the_input_object_unless_it_holds_a_tuple():
    conv = agent_loop(60)
    conv[3] = dict(conv[3], **{"x-meta": (1, 2)})
    full = turnfit.count_conversation(conv)
    out, _ = by_value(conv, model="gpt-4o", max_tokens=full // 3)
    want, _ = by_text(conv, model="gpt-4o", max_tokens=full // 3)
    same((out, 0), (want, 0))
    by_id = {id(m): i for i, m in enumerate(conv)}
    reused = [m for m in out if id(m) in by_id and conv[by_id[id(m)]] is m]
    assert len(reused) > len(out) // 3, "the kept messages were built again"
    # Changed messages (masked or cut outputs) are new objects.
    assert all(m == conv[by_id[id(m)]] for m in reused)
    assert not any(m is conv[3] for m in out) and out[3] == want[3] and out[3]["x-meta"] == [1, 2]
    # Messages are the host's own; the list and the envelope are new.
    assert out is not conv
    wrapped = {"messages": conv, "model": "gpt-4o"}
    out2, _ = by_value(wrapped, model="gpt-4o", max_tokens=full // 3)
    assert out2 is not wrapped and out2["messages"] is not conv and out2["messages"][0] is conv[0]

"""The native JSON writer every structured argument now goes through
(issue 36): byte for byte json.dumps(ensure_ascii=False, separators=(",", ":"))
on plain values, and None (json.dumps then runs as before) on anything else."""

import collections
import enum
import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

import turnfit
from turnfit import _native

from agent_loop import agent_loop


def dumps(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


# Every code point but lone surrogates (those are not plain), controls included.
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda kids: st.lists(kids, max_size=5) | st.tuples(kids, kids) | st.dictionaries(texts, kids, max_size=5),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(plain)
def test_plain_values_are_written_as_json_dumps_writes_them(v):
    assert _native._dumps_plain(v) == dumps(v)


def test_edge_values():
    for v in [
        "", "\x00\x01\x1f\x7f", '"\\/\b\f\n\r\t', "é中😀", "\u2028\u2029",
        0, -1, 2**63 - 1, -(2**63), 2**64, -(2**200), 10**30,
        0.0, -0.0, 1.0, 1e16, 1e-7, 1.5e300, 5e-324, math.inf, -math.inf, math.nan,
        True, False, None, [], {}, (), [[[]]], {"": {"a": [1, (2, 3)]}},
    ]:
        assert _native._dumps_plain(v) == dumps(v), repr(v)
    conv = agent_loop(30)
    assert _native._dumps_plain(conv) == dumps(conv)


class Color(enum.IntEnum):
    RED = 1


class MyDict(dict):
    pass


class MyStr(str):
    pass


def test_anything_not_plain_is_left_to_json_dumps():
    circular = []
    circular.append(circular)
    deep = []
    for _ in range(300):
        deep = [deep]
    for v in [
        {1: "int key"}, {None: 1}, {("t",): 1}, MyDict(a=1), MyStr("s"), Color.RED,
        collections.OrderedDict(a=1), object(), b"bytes", {1.5}, "lone \ud800 surrogate",
        {"k": "\udfff"}, {"\ud800": 1}, circular, deep,
    ]:
        assert _native._dumps_plain(v) is None, repr(v)
    # The facade then behaves as before: json.dumps's text or its error.
    assert turnfit.count_conversation([{"role": "user", "content": MyStr("hi")}]) == turnfit.count_conversation(
        [{"role": "user", "content": "hi"}]
    )
    try:
        turnfit.count_conversation([{"role": "user", "content": object()}])
    except TypeError as e:
        assert "not JSON serializable" in str(e)
    else:
        raise AssertionError("object() was serialized")


def test_fit_is_unchanged_on_an_agent_loop():
    conv = agent_loop(120)
    budget = turnfit.count_conversation(conv) // 3
    out, report = turnfit.fit(conv, model="gpt-4o", max_tokens=budget)
    text, rep = _native._fit_json(dumps(conv), dumps({"model": "gpt-4o", "max_tokens": budget}))
    assert out == json.loads(text) and report == json.loads(rep)
    assert report["tokens_after"] <= report["limit_tokens"]


def test_fit_gives_the_objects_json_loads_gives():
    # Numbers kept as written, in fields the core passes through untouched.
    numbers = ["0", "-0", "1", "-1", "9223372036854775807", "9223372036854775808", "-99999999999999999999999",
               "1.0", "-0.0", "1e5", "1E5", "2e-3", "1.5e300", "1e400", "-1e400", "0.1", "5e-324", "1.7976931348623157e308"]
    conv_text = (
        '{"model":"gpt-4o","x":[' + ",".join(numbers) + '],"messages":['
        '{"role":"system","content":"s","n":{"a":1.25,"b":[true,false,null]}},'
        '{"role":"user","content":"hi \\u00e9 \\ud83d\\ude00 \\"q\\"","x-n":-7}]}'
    )
    opts = dumps({"model": "gpt-4o"})
    out, report = _native._fit(conv_text, opts)
    text, rep = _native._fit_json(conv_text, opts)
    expected = json.loads(text)
    assert out == expected and report == json.loads(rep)
    # Same types too (== alone would let 1 == 1.0 through).
    assert [type(x) for x in out["x"]] == [type(x) for x in expected["x"]]
    assert [repr(x) for x in out["x"]] == [repr(x) for x in expected["x"]]
    assert list(out) == list(expected) and list(out["messages"][0]) == list(expected["messages"][0])

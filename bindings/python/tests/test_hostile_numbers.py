"""Issue 33, cause D, through the Python binding: every numeric field of every
options object the binding takes, walked from the committed schemas
(schemas/*.json), gets 0, 1, 2**32-1, 2**53+1 and 2**64-1, then the calls
that use what it configured run. Each call returns a result or raises a
specific error (a TurnfitError, or OverflowError/ValueError/TypeError for a
value Python cannot pass); a Rust panic fails the test, whether the binding
caught it (InternalError, "panic inside turnfit") or pyo3 did
(PanicException, a BaseException). ffi/tests/hostile_numbers.rs does the same
through the C ABI."""

import copy
import json
import tempfile
from pathlib import Path

import pytest

import turnfit

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = [0, 1, 2**32 - 1, 2**53 + 1, 2**64 - 1]
# Errors a hostile number may legitimately raise: turnfit's own, and
# Python's for an int the binding's parameter type cannot hold.
SPECIFIC = (turnfit.TurnfitError, OverflowError, ValueError, TypeError)

CONVERSATION = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "one two three"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "a long tool result with many words in it"},
    {"role": "assistant", "content": "four"},
    {"role": "user", "content": "five"},
]


def numeric_paths(schema):
    defs = schema.get("$defs", {})
    out = set()

    def walk(s, path, seen):
        if not isinstance(s, dict):
            return
        ref = s.get("$ref")
        if ref:
            name = ref.rsplit("/", 1)[-1]
            if name not in seen:
                walk(defs.get(name, {}), path, seen + (name,))
        t = s.get("type")
        types = t if isinstance(t, list) else [t]
        if "integer" in types or "number" in types:
            out.add(path)
        for k, v in s.get("properties", {}).items():
            walk(v, path + (k,), seen)
        for key in ("anyOf", "oneOf", "allOf"):
            for v in s.get(key, []):
                walk(v, path, seen)
        if isinstance(s.get("items"), dict):
            walk(s["items"], path + ("[]",), seen)
        if isinstance(s.get("additionalProperties"), dict):
            walk(s["additionalProperties"], path + ("{}",), seen)

    walk(schema, (), ())
    return sorted(out)


def with_value(base, path, value):
    doc = copy.deepcopy(base)

    def put(node, path):
        if not path:
            return value
        seg, rest = path[0], path[1:]
        if seg == "[]":
            if not isinstance(node, list):
                node = [] if node is None else [node]
            if not node:
                node.append(None)
            node[0] = put(node[0], rest)
            return node
        if not isinstance(node, dict):
            node = {}
        key = "k" if seg == "{}" else seg
        node[key] = put(node.get(key), rest)
        return node

    return put(doc, path)


def _skills_root():
    root = Path(tempfile.mkdtemp(prefix="turnfit-hostile-"))
    (root / "a").mkdir()
    (root / "a" / "SKILL.md").write_text("---\nname: a\ndescription: does a thing\n---\nbody\n")
    return str(root)


HANDOFF = {"version": "1.0", "task_summary": "Fix the parser.",
           "key_outputs": ["the lexer drops a token", {"label": "src/lexer.rs", "content": "fixed"}],
           "metadata": {"from_agent": "a", "to_agent": "b", "created_at": "2026-03-01T12:00:00Z"}}
NOWS = [0, 1, 2**63 - 1, 2**64 - 2, 2**64 - 1]


def drive(schema, doc, skills_root):
    """Calls that read `doc` and use what it configured."""
    if schema == "assemble-request":
        turnfit.assemble(turnfit.Tokenizer("cl100k_base"), doc)
    elif schema == "backoff-request":
        turnfit.backoff(**doc)
    elif schema == "breaker-config":
        b = turnfit.CircuitBreaker(**doc)
        for now in NOWS:
            b.record_failure("key", now)
            b.allow("key", now)
            b.record_success("key", now)
            b.state("key", now)
    elif schema == "callstack":
        c = turnfit.CallStack.from_json(json.dumps(doc))
        c.enter("z")
        c.to_json()
    elif schema == "compaction-policy":
        w = turnfit.ContextWindow("gpt-4o", context_window=1000, conversation=CONVERSATION)
        w.compact(doc)
    elif schema == "fit-options":
        turnfit.fit_json(json.dumps(CONVERSATION), doc)
    elif schema == "handoff-render-options":
        turnfit.handoff_render(HANDOFF, **doc)
    elif schema == "skills-index-options":
        turnfit.Skills(skills_root).render_index(**doc)
    elif schema in ("span-end", "span-info", "tracer-config"):
        t = turnfit.Tracer(**(doc if schema == "tracer-config" else {}))
        for now in NOWS:
            span = t.start("k", doc if schema == "span-info" else None, 2**64 - 1, now)
            t.end_with(span, "success", now_us=now, **(doc if schema == "span-end" else {}))
            t.overdue(now)
            t.export(now)
            t.expire(now)
    elif schema == "window-budget":
        w = turnfit.ContextWindow("gpt-4o", conversation=CONVERSATION, **doc)
        w.preflight()
        w.compact()
    else:
        raise AssertionError(f"no driver for {schema}")


BASES = {
    "assemble-request": [
        {"budget": 1000, "sections": [{"name": "a", "text": "some text to fit"}]},
        {"budget": 1000, "preset": "agent", "history": [{"role": "user", "content": "hi"}],
         "events": ["e1", "e2"], "context": {"task": "t"}},
    ],
    "backoff-request": [{"failed_attempts": 1}, {"failed_attempts": 3, "retry_after_ms": 10}],
    "breaker-config": [{}],
    "callstack": [{"agents": ["a", "b"]}],
    "compaction-policy": [{"strategy": s, "mask": {}, "digest": {}, "scores": [1.0]}
                          for s in ("recency", "relevance", "hybrid", "summarize")],
    "fit-options": [{"model": "gpt-4o", "max_tokens": 60, "policy": {"strategy": s, "mask": {}, "digest": {}}}
                    for s in ("recency", "relevance", "hybrid")],
    "handoff-render-options": [{}],
    "skills-index-options": [{}],
    "span-end": [{}],
    "span-info": [{}],
    "tracer-config": [{}],
    "window-budget": [{"context_window": 1000},
                      {"context_window": 8000,
                       "multi_scale": {"immediate_tokens": 4000, "session_tokens": 1000, "historical_tokens": 1000}}],
}

# Input schemas the binding has no options object for, or no number in.
NOT_DRIVEN = {
    "model-profile": "the Python binding has no model registration",
    "classify-request": "CLI only; classify() takes the status as an int argument",
}


def schemas_with_numbers():
    out = []
    for path in sorted((ROOT / "schemas").glob("*.json")):
        name = path.stem
        if name in BASES:
            out.append((name, numeric_paths(json.loads(path.read_text()))))
    return out


def test_every_driven_schema_exists_and_has_numbers():
    found = dict(schemas_with_numbers())
    assert set(found) == set(BASES), set(BASES) - set(found)
    for name, paths in found.items():
        assert paths, name
    assert ("policy", "keep_last_turns") in found["fit-options"]


@pytest.mark.parametrize("schema", sorted(BASES))
def test_hostile_numbers_never_panic(schema):
    paths = dict(schemas_with_numbers())[schema]
    root = _skills_root()
    panics, ok, calls = [], 0, 0
    for base in BASES[schema]:
        for path in paths:
            if path[0] == "multi_scale" and "multi_scale" not in base:
                continue  # needs all three tiers: the second base has them
            for v in HOSTILE:
                doc = with_value(base, path, v)
                calls += 1
                try:
                    drive(schema, doc, root)
                    ok += 1
                except turnfit.InternalError as e:  # the binding's report of a panic
                    panics.append(f"{'.'.join(path)} = {v}: InternalError: {e}\n    {json.dumps(doc)}")
                except SPECIFIC:
                    pass
                except BaseException as e:  # pyo3's PanicException is a BaseException
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    panics.append(f"{'.'.join(path)} = {v}: {type(e).__name__}: {e}\n    {json.dumps(doc)}")
    assert not panics, "\n".join(panics)
    # The values reach past the parser: a quarter of the calls succeed
    # (ratios and budgets refuse most hostile values, as they should).
    assert ok * 4 >= calls, f"{schema}: only {ok} of {calls} calls succeeded; the base document is wrong"

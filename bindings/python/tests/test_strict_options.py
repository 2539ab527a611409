"""Issue 33 A and E through the Python binding: every JSON object the native
layer reads (options, budgets, policies, configs, requests, metadata) is read
strictly. For each input schema in schemas/ that Python passes as JSON text,
start from a document the call accepts and, at every object in it, check
that the object given as an array, each field the schema lists given twice,
and an unknown field are ``InvalidJsonError`` (a map: a repeated key).

The binding reads options with the core's ``frontend::parse_options``, as the
C ABI does (ffi/tests/options.rs walks the same schemas through C).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest

import turnfit
from turnfit import _native

ROOT = Path(__file__).resolve().parents[3]
CONVERSATION = '[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"again"}]'
HANDOFF = (
    '{"version":"1.0","task_summary":"t","key_outputs":[],'
    '"metadata":{"from_agent":"a","to_agent":"b","created_at":"2026-03-01T12:00:00Z"}}'
)
SKILLS_ROOT = tempfile.mkdtemp(prefix="turnfit-strict-")


def _tracer_end_with(text: str) -> None:
    t = _native.Tracer(None)
    span = t.start("tool", None, 0, 0)
    t.end_with(span, "success", text, 1)


def _compact(text: str) -> None:
    w = _native.Window("gpt-4o", None)
    w.load(CONVERSATION)
    w.compact(text)


def _toolset(text: str) -> None:
    _native._toolset_report(text)
    try:
        _native._toolset_select(text, "a")
    except turnfit.InvalidJsonError:
        raise
    except turnfit.TurnfitError as e:  # pragma: no cover - the report decided
        raise AssertionError(f"toolset_select disagrees with toolset_report: {e}") from e


# Schema name -> (the native call that reads it, a document it accepts that
# holds every field whose value is an object).
DRIVERS: Dict[str, Tuple[Callable[[str], Any], Any]] = {
    "window-budget": (lambda t: _native.Window("gpt-4o", t), {"context_window": 8000, "reserved_output": 100,
                      "multi_scale": {"immediate_tokens": 4000, "session_tokens": 1000, "historical_tokens": 1000}}),
    # A turn reads them (fit refuses `carry`, which only a turn takes).
    "fit-options": (
        lambda t: _native.Turn(CONVERSATION, t),
        {"model": "gpt-4o", "max_tokens": 4000, "policy": {"mask": {}, "digest": {}}, "summarizer": {},
         "carry": {"replaced": ["0123456789abcdef"], "summary": {"role": "user", "content": "s"}}},
    ),
    "compaction-policy": (_compact, {"target_tokens": 4000, "limit_tokens": 6000, "mask": {}, "digest": {}}),
    "skills-open-options": (lambda t: _native.Skills(SKILLS_ROOT, t), {"layout": "auto"}),
    "skills-index-options": (
        lambda t: _native.Skills(SKILLS_ROOT, None).render_index(t),
        {"budget": 1000, "scores": {"a": 1.0}},
    ),
    "handoff-render-options": (lambda t: _native._handoff_render(HANDOFF, t), {"budget": 1000}),
    "handoff-filter-options": (lambda t: _native._handoff_filter(CONVERSATION, t), {}),
    "backoff-request": (_native._backoff, {"policy": {}, "failed_attempts": 1, "seed": 7}),
    "breaker-config": (_native.CircuitBreaker, {}),
    "tracer-config": (_native.Tracer, {"timeouts": {"t": 5}}),
    "span-info": (lambda t: _native.Tracer(None).start("tool", t, 0, 0), {"agent_id": "a"}),
    "span-end": (_tracer_end_with, {"output_bytes": 1, "metadata": {"k": 1}}),
    "callstack": (_native.CallStack.from_json, {"agents": ["a"], "depth": 1, "max_depth": 5}),
    "toolset-request": (
        _toolset,
        {
            "model": "gpt-4o",
            "tools": [{"type": "function", "function": {"name": "x", "parameters": {}}}],
            "allowlists": {"a": ["x"]},
        },
    ),
    "classify-request": (
        _native._classify,
        {
            "provider": "openai",
            "status": 429,
            "body": "{}",
            "headers": {"retry-after": "1"},
            "agent_id": "narrator",
            "workflow_id": "story-1",
            "metadata": {"step": 3},
        },
    ),
    "assemble-request": (
        lambda t: _native._assemble_json(turnfit.Tokenizer("cl100k_base"), t),
        {
            "budget": 1000,
            "templates": [{"name": "mine", "required": ["task"]}],
            "depth": {"turns": 1, "events": 1},
            "depth_limits": {"minimal": {"turns": 1}, "standard": {}, "comprehensive": {}},
            "sections": [{"name": "task", "text": "Do it."}],
            "context": {"k": "v"},
        },
    ),
}

# Input schemas Python does not pass as JSON text: special-token sets are
# Python sets (turnfit.tiktoken), classify headers travel inside
# classify-request, and so does the error context (agent_id, workflow_id,
# metadata: keyword arguments of classify and record_failure), and the Python
# API registers no model profiles.
NOT_JSON_IN_PYTHON = {"special-policy", "classify-headers", "error-context", "model-profile"}


def _schema(name: str) -> Dict[str, Any]:
    return json.loads((ROOT / "schemas" / f"{name}.json").read_text())


def _resolve(root: Dict[str, Any], s: Any, want_object: bool) -> Any:
    if isinstance(s, dict) and "$ref" in s:
        return _resolve(root, root["$defs"][s["$ref"].rsplit("/", 1)[1]], want_object)
    for key in ("anyOf", "oneOf"):
        if isinstance(s, dict) and key in s:
            alts = [_resolve(root, a, want_object) for a in s[key]]
            for a in alts:
                if (want_object and _is_object(a)) or (not want_object and a.get("type") != "null"):
                    return a
            return alts[0]
    return s


def _is_object(s: Any) -> bool:
    if not isinstance(s, dict):
        return False
    t = s.get("type")
    if isinstance(t, list):
        return "object" in t
    if t is not None:
        return t == "object"
    return "properties" in s


def _has_alternatives(root: Dict[str, Any], s: Any) -> bool:
    if isinstance(s, dict) and "$ref" in s:
        return _has_alternatives(root, root["$defs"][s["$ref"].rsplit("/", 1)[1]])
    return isinstance(s, dict) and ("anyOf" in s or "oneOf" in s)


def _sample(root: Dict[str, Any], s: Any) -> Any:
    s = _resolve(root, s, False)
    if not isinstance(s, dict):
        return 1
    if s.get("default") is not None:
        return s["default"]
    if "const" in s:
        return s["const"]
    if s.get("enum"):
        return s["enum"][0]
    t = s.get("type", "object")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "null")
    simple = {"integer": 1, "number": 0.5, "boolean": True, "string": "x", "array": [], "null": None}
    if t in simple:
        return simple[t]
    return {k: _sample(root, s["properties"][k]) for k in s.get("required", [])}


HOLE = "\u0001HOLE\u0001"


def _with_raw(doc: Any, path: List[Any], raw: str) -> str:
    d = json.loads(json.dumps(doc))
    if not path:
        return raw
    at = d
    for step in path[:-1]:
        at = at[step]
    at[path[-1]] = HOLE
    text = json.dumps(d, separators=(",", ":"), ensure_ascii=False)
    quoted = json.dumps(HOLE, ensure_ascii=False)
    assert text.count(quoted) == 1
    return text.replace(quoted, raw, 1)


def _member(k: str, v: Any) -> str:
    return json.dumps(k) + ":" + json.dumps(v, separators=(",", ":"))


def _walk(root, doc, path, value, s, out) -> None:
    alternatives = _has_alternatives(root, s)
    s = _resolve(root, s, isinstance(value, dict))
    if isinstance(value, list):
        items = s.get("items", True) if isinstance(s, dict) else True
        for i, v in enumerate(value):
            _walk(root, doc, path + [i], v, items, out)
        return
    if not isinstance(value, dict):
        return
    at = "$" + "".join(f"[{p!r}]" for p in path)

    def body(extra: List[str]) -> str:
        return "{" + ",".join([_member(k, v) for k, v in value.items()] + extra) + "}"

    free_form = not _is_object(s) and not (isinstance(s, dict) and "additionalProperties" in s)
    if not free_form:
        if alternatives:
            expect = ""
        elif "properties" in s:
            expect = "invalid type: array, expected an object"
        else:
            expect = "expected a map"
        positional = json.dumps(list(value.values()), separators=(",", ":"))
        out.append((f"{at} as an array", _with_raw(doc, path, positional), expect))
    props = s.get("properties") if isinstance(s, dict) else None
    if props is not None:
        out.append((f"{at} with an unknown field", _with_raw(doc, path, body([_member("zz_not_a_field", 1)])), "unknown field"))
        for k, ps in props.items():
            v = value[k] if k in value else _sample(root, ps)
            extra = [_member(k, v)] if k in value else [_member(k, v), _member(k, v)]
            out.append((f"{at}.{k} twice", _with_raw(doc, path, body(extra)), "duplicate key"))
            assert not (_is_object(_resolve(root, ps, True)) and k not in value), f"base document leaves out {at}.{k}"
    else:
        if value:
            k, v = next(iter(value.items()))
            extra = [_member(k, v)]
        else:
            v = _sample(root, (s or {}).get("additionalProperties", {"type": "string"}) if isinstance(s, dict) else {})
            extra = [_member("k", v), _member("k", v)]
        out.append((f"{at} (a map) with a key twice", _with_raw(doc, path, body(extra)), "duplicate key"))
    for k, v in value.items():
        if isinstance(v, (dict, list)):
            fs = (props or {}).get(k) if props is not None else (s.get("additionalProperties") if isinstance(s, dict) else None)
            _walk(root, doc, path + [k], v, True if fs is None else fs, out)


def _cases(name: str) -> List[Tuple[str, str, str]]:
    schema = _schema(name)
    doc = DRIVERS[name][1]
    out: List[Tuple[str, str, str]] = []
    _walk(schema, doc, [], doc, schema, out)
    return out


def test_every_input_schema_has_a_driver_or_a_reason() -> None:
    inputs = set()
    for f in (ROOT / "schemas").glob("*.json"):
        used_by = json.loads(f.read_text()).get("description", "")
        if "_json)" in used_by or f.stem in DRIVERS:
            inputs.add(f.stem)
    inputs -= {"conversation", "handoff"}
    missing = inputs - set(DRIVERS) - NOT_JSON_IN_PYTHON
    assert not missing, f"input schemas without a Python driver: {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_objects_refuse_arrays_repeats_and_unknown_fields(name: str) -> None:
    call, doc = DRIVERS[name]
    call(json.dumps(doc))  # the base document is accepted
    failures = []
    cases = _cases(name)
    for what, text, expect in cases:
        try:
            call(text)
        except turnfit.InvalidJsonError as e:
            if expect not in str(e):
                failures.append(f"{what}: {e}\n    {text}")
        except Exception as e:  # noqa: BLE001 - any other outcome is a failure
            failures.append(f"{what}: {type(e).__name__}: {e}\n    {text}")
        else:
            failures.append(f"{what}: accepted\n    {text}")
    assert cases
    assert not failures, "\n".join(failures)

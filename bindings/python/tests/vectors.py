"""Runs every conformance vector in tests/vectors/*.json through the Python API.

Used by tests/test_vectors.py (pytest) and run directly by test.sh, which
prints ``vectors: N/N``. Every file and every op is run; an op this runner
does not know fails (it is never skipped). Pending cases would be listed in
PENDING with the reason; there are none.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import turnfit

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "tests" / "vectors"

# name -> reason. Empty: every vector runs and must pass.
PENDING: Dict[str, str] = {}


def same(a: Any, b: Any) -> bool:
    """JSON equality that tells bool, int and float apart (as serde_json does)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and float(a) == float(b)
    return type(a) is type(b) and a == b


def err(e: turnfit.TurnfitError) -> Dict[str, str]:
    return {"error": e.kind}


_tokenizers: Dict[Tuple[str, str], turnfit.Tokenizer] = {}


def tok(inp: Dict[str, Any]) -> turnfit.Tokenizer:
    key = (inp["encoding"], inp.get("special", "ordinary"))
    t = _tokenizers.get(key)
    if t is None:
        t = _tokenizers[key] = turnfit.Tokenizer(key[0], special_tokens=key[1])
    return t


def run_tokenizer(op: str, inp: Dict[str, Any], expected: Dict[str, Any]) -> Any:
    t = tok(inp)
    text = inp.get("text", "")
    if op == "encode":
        ids = t.encode(text)
        arr = t.encode_array(text)
        if list(arr) != ids:
            return {"encode_array differs from encode": list(arr)}
        return {"ids": ids, "count": t.count_tokens(text)}
    if op == "decode":
        try:
            return {"text": t.decode(inp["ids"], errors=inp.get("mode", "replace"))}
        except turnfit.TurnfitError as e:
            return err(e)
    if op == "count_until_limit":
        tokens, exceeded = t.count_until_limit(text, inp["limit"])
        if exceeded:
            if tokens < expected.get("tokens_min", 0):
                return {"exceeded": True, "tokens": tokens}
            return {"exceeded": True, "tokens_min": expected.get("tokens_min")}
        return {"tokens": tokens, "exceeded": False}
    if op == "truncate":
        try:
            return t.truncate(text, inp["max_tokens"], inp["side"], inp.get("marker"))
        except turnfit.TurnfitError as e:
            return err(e)
    raise KeyError(op)


def run_window(op: str, inp: Dict[str, Any]) -> Any:
    model = inp.get("model") or "gpt-4o"
    conv = inp.get("conversation")
    if op == "count_conversation":
        return {"prompt_tokens": turnfit.count_conversation(conv, model)}
    if op == "preflight":
        budget = inp.get("budget") or {}
        w = turnfit.ContextWindow(model, **budget)
        w.load(conv)
        return w.preflight()
    if op == "repair":
        return turnfit.repair(conv, model)
    if op == "fit":
        c, report = turnfit.fit(conv, **inp["options"])
        return {"conversation": c, "report": report}
    raise KeyError(op)


def run_agents(op: str, inp: Dict[str, Any]) -> Any:
    if op.startswith("skills_"):
        root = str(REPO / inp["root"])
        s = turnfit.Skills(root, **(inp.get("options") or {}))
        if op == "skills_list":
            return s.list()
        if op == "skills_body":
            return s.body(inp["name"])
        return s.render_index(**(inp.get("index_options") or {}))
    if op == "handoff_validate":
        return turnfit.handoff_validate(inp["handoff"])
    if op == "handoff_render":
        return turnfit.handoff_render(inp["handoff"], **(inp.get("options") or {}))
    if op == "handoff_filter":
        return turnfit.handoff_filter(inp["conversation"], **(inp.get("options") or {}))
    if op == "assemble":
        return turnfit.assemble(tok(inp), inp["request"])
    if op == "backoff":
        return turnfit.backoff(**inp)
    if op == "callstack":
        s = turnfit.CallStack(inp["max_depth"])
        for a in inp["enter"]:
            s = s.enter(a)
        return json.loads(s.to_json())
    if op == "toolset":
        if inp.get("select") is not None:
            return {"selected": turnfit.toolset_select(inp["request"], inp["select"])}
        r = turnfit.toolset_report(inp["request"])
        return {"tool_count": r["tool_count"], "agents": {a["agent"]: a["tools"] for a in r["agents"]}}
    if op == "breaker":
        b = turnfit.CircuitBreaker(**inp["config"])
        results: List[Any] = []
        for what, at in inp["ops"]:
            if what == "allow":
                results.append(b.allow("k", at))
            elif what == "success":
                results.append(b.record_success("k", at))
            elif what == "failure":
                results.append(b.record_failure("k", at))
            elif what == "state":
                results.append(b.state("k", at)["state"])
            else:
                raise KeyError(what)
        return {"results": results}
    if op == "trace":
        return run_trace(inp)
    raise KeyError(op)


def run_trace(inp: Dict[str, Any]) -> Any:
    t = turnfit.Tracer(**inp["config"])
    ids: List[Any] = []
    interrupted: List[str] = []
    event_errors: List[Any] = []
    for i, e in enumerate(inp["events"]):
        try:
            if e[0] == "start":
                ids.append(None)
                ids[-1] = t.start(e[1], e[2], e[3], e[4])
            elif e[0] == "end":
                n = e[1]
                sid = ids[n - 1] if 1 <= n <= len(ids) and ids[n - 1] is not None else 2**64 - 1
                t.end(sid, e[2], e[3], e[4], e[5])
            elif e[0] == "expire":
                interrupted.extend(r["tool_call_id"] for r in t.expire(e[1])["interrupted_results"])
            else:
                raise KeyError(e[0])
        except turnfit.TurnfitError as x:
            event_errors.append([i, x.kind])
    tools: Dict[str, Any] = {}
    for m in t.metrics():
        v = {k: m[k] for k in ("count", "successes", "errors", "timeouts", "cancelled", "in_flight")}
        d = m.get("duration_us")
        if d:
            for k in ("min", "max", "p50", "p95", "p99"):
                v[k] = d[k]
        tools[m["tool"]] = v
    recent = [[r["tool"], r["outcome"], r["count"]] for r in t.recent()]
    return {"tools": tools, "recent": recent, "interrupted": interrupted, "event_errors": event_errors}


def run_classify(inp: Dict[str, Any], expected: Dict[str, Any]) -> Tuple[bool, str]:
    fixture = inp.get("fixture")
    if fixture:
        on_disk = (REPO / fixture).read_text(encoding="utf-8")
        if on_disk != inp.get("body", ""):
            return False, f"{fixture} differs from the vector's body"
    try:
        got = turnfit.classify(
            inp["provider"],
            inp["status"],
            inp.get("body", ""),
            inp.get("headers"),
            agent_id=inp.get("agent_id"),
            workflow_id=inp.get("workflow_id"),
            metadata=inp.get("metadata"),
        )
    except turnfit.TurnfitError as e:
        got = err(e)
    bad = [f"{k}: expected {v!r}, got {got.get(k)!r}" for k, v in expected.items() if not same(got.get(k), v)]
    return (not bad), "; ".join(bad)


MODEL_FIELDS = ("family", "encoding", "context_window", "max_output_tokens", "exact", "source")


def run_model(inp: Dict[str, Any]) -> Any:
    """models.json: the fields of the built-in registry's answer the vector names."""
    m = turnfit.lookup_model(inp["model"])
    return {k: m[k] for k in MODEL_FIELDS}


_FILE_TOKENIZERS: Dict[Tuple[str, str], Any] = {}


def run_file(op: str, inp: Dict[str, Any]) -> Any:
    """file_tokenizer.json: a tokenizer loaded from one of tests/vectors/files/."""
    key = (inp["file"], inp.get("special", "ordinary"))
    if key not in _FILE_TOKENIZERS:
        _FILE_TOKENIZERS[key] = turnfit.FileTokenizer(VECTORS / key[0], special_tokens=key[1])
    t = _FILE_TOKENIZERS[key]
    if op == "file_encode":
        text = inp["text"]
        return {"ids": t.encode(text, add_special=inp.get("add_special", False)), "count": t.count_tokens(text)}
    return {"text": t.decode(inp["ids"])}


TOKENIZER_OPS = {"encode", "decode", "count_until_limit", "truncate"}
WINDOW_OPS = {"count_conversation", "preflight", "repair", "fit"}
AGENT_OPS = {"backoff", "breaker", "callstack", "trace", "toolset", "assemble"}


def run_one(v: Dict[str, Any]) -> Tuple[bool, str]:
    op, inp, expected = v["op"], v["input"], v["expected"]
    if op == "classify":
        return run_classify(inp, expected)
    runner: Callable[[], Any]
    if op in TOKENIZER_OPS:
        runner = lambda: run_tokenizer(op, inp, expected)  # noqa: E731
    elif op in WINDOW_OPS:
        runner = lambda: run_window(op, inp)  # noqa: E731
    elif op in AGENT_OPS or op.startswith("skills_") or op.startswith("handoff_"):
        runner = lambda: run_agents(op, inp)  # noqa: E731
    elif op == "model_lookup":
        runner = lambda: run_model(inp)  # noqa: E731
    elif op in ("file_encode", "file_decode"):
        runner = lambda: run_file(op, inp)  # noqa: E731
    else:
        return False, f"unknown op {op!r}"
    try:
        got = runner()
    except turnfit.TurnfitError as e:
        got = err(e)
    if same(got, expected):
        return True, ""
    return False, f"expected {json.dumps(expected)[:600]}\n     got {json.dumps(got)[:600]}"


def vector_files() -> List[Path]:
    files = sorted(p for p in VECTORS.glob("*.json") if not p.name.endswith(".cases.json"))
    assert files, f"no vector files in {VECTORS}"
    return files


def run_all() -> Tuple[int, int, List[str], List[str]]:
    """(passed, total, failures, pending) over every vector file."""
    passed = total = 0
    failures: List[str] = []
    pending: List[str] = []
    for f in vector_files():
        doc = json.loads(f.read_text(encoding="utf-8"))
        assert doc["format"] == 1, f
        for v in doc["vectors"]:
            total += 1
            if v["name"] in PENDING:
                pending.append(f"{v['name']}: {PENDING[v['name']]}")
                continue
            ok, why = run_one(v)
            if ok:
                passed += 1
            else:
                failures.append(f"{f.name}: {v['name']}: {why}")
    return passed, total, failures, pending


def main() -> int:
    passed, total, failures, pending = run_all()
    for f in failures[:30]:
        print("FAIL", f)
    for p in pending:
        print("PENDING", p)
    names = ", ".join(p.name for p in vector_files())
    print(f"vectors: {passed}/{total} passed ({names})")
    return 0 if passed == total else 1


if __name__ == "__main__":
    sys.exit(main())

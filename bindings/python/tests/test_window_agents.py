import json
from pathlib import Path

import pytest

import turnfit

REPO = Path(__file__).resolve().parents[3]
SESSION = json.loads((REPO / "examples/data/coding-session.json").read_text())


def _tool_pairs_intact(messages):
    """Every tool result answers a call of the assistant message before it, and every call is answered."""
    pending = set()
    for m in messages:
        if m.get("role") == "assistant":
            assert not pending, f"unanswered calls {pending}"
            pending = {c["id"] for c in m.get("tool_calls") or []}
        elif m.get("role") == "tool":
            assert m["tool_call_id"] in pending, m["tool_call_id"]
            pending.discard(m["tool_call_id"])
        else:
            assert not pending, f"unanswered calls {pending}"
    assert not pending


def test_fit_plain_dicts_keeps_shape_and_pairs():
    out, report = turnfit.fit(SESSION, model="gpt-4o", max_tokens=16000, policy={"tool_output_max": 2000})
    assert isinstance(out, dict) and set(out) == set(SESSION)
    assert report["tokens_before"] > report["tokens_after"]
    assert report["tokens_after"] <= 16000
    assert turnfit.count_conversation(out, "gpt-4o") <= 16000
    _tool_pairs_intact(out["messages"])
    # A list of messages in, a list out.
    out2, _ = turnfit.fit(SESSION["messages"], model="gpt-4o", max_tokens=16000)
    assert isinstance(out2, list)


def test_fit_json_passes_text_through():
    text = json.dumps(SESSION, indent=1)
    out, report = turnfit.fit_json(text, {"model": "gpt-4o", "max_tokens": 1_000_000})
    assert json.loads(out) == SESSION  # nothing to do: the same conversation
    assert report["tokens_before"] == report["tokens_after"]


def test_context_window_loop():
    w = turnfit.ContextWindow("gpt-4o", context_window=8000, reserved_output=1000)
    w.load([{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Fix the bug."}])
    pf = w.preflight()
    assert pf["verdict"] == "fits"
    for i in range(60):
        if i % 10 == 0:
            w.push({"role": "user", "content": f"next step {i}"})
        w.push({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}]})
        w.push({"role": "tool", "tool_call_id": f"c{i}", "content": "line of output\n" * 40})
    assert w.preflight()["verdict"] in ("should_compact", "overflow")
    r = w.compact()
    assert r["status"] == "done"
    assert w.preflight()["verdict"] == "fits"
    _tool_pairs_intact(w.conversation)
    assert len(w) == len(w.message_tokens)
    assert w.validate() == []


def test_summarize_two_phase():
    w = turnfit.ContextWindow("gpt-4o", context_window=6000, reserved_output=500)
    msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]
    for i in range(40):
        msgs.append({"role": "assistant", "content": f"thinking about step {i} " * 20})
        msgs.append({"role": "user", "content": f"continue {i}"})
    w.load(msgs)
    r = w.compact(strategy="summarize")
    assert r["status"] == "needs_summary"
    req = r["request"]
    assert req["prompt"]
    with pytest.raises(turnfit.InvalidArgumentError):
        w.apply_summary("wrong-id", "x")
    done = w.apply_summary(req["id"], "Summary: steps 0-30 explored the code.")
    assert done["tokens_after"] < done["tokens_before"]


def test_repair_and_validate():
    broken = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "next"},
    ]
    assert turnfit.validate(broken)
    r = turnfit.repair(broken, "gpt-4o")
    assert r["changes"] and turnfit.validate(r["conversation"]) == []


def test_agent_primitives():
    s = turnfit.Skills(str(REPO / "examples/data/skills"))
    names = [x["name"] for x in s.list()["skills"]]
    assert "code-review" in names
    assert s.body("code-review")["tokens"] > 0
    with pytest.raises(turnfit.UnsafePathError):
        s.body("../etc/passwd")
    h = json.loads((REPO / "examples/data/handoffs/planner-to-coder.json").read_text())
    assert turnfit.handoff_render(h)["text"]
    c = turnfit.classify("openai", 429, '{"error": {"message": "Rate limit", "type": "requests"}}', {"retry-after": "2"})
    assert c["retryable"] is True
    d = turnfit.backoff(policy={}, failed_attempts=1, seed=1)
    assert d == {"decision": "retry", "delay_ms": 141}
    b = turnfit.CircuitBreaker(failure_threshold=2, cool_down_ms=1000)
    b.record_failure("p", 0)
    assert b.record_failure("p", 1) == "open"
    assert b.allow("p", 2) is False
    st = turnfit.CallStack(3).enter("planner").enter("coder")
    assert st.depth == 2 and "planner" in st and st.current == "coder"
    assert turnfit.callstack_from_json(st.to_json()).agents() == ["planner", "coder"]
    t = turnfit.Tracer()
    sid = t.start("read_file", {"tool_call_id": "call_1"}, 10, 1000)
    t.end(sid, "success", 20, None, 5000)
    m = t.metrics()[0]
    assert m["tool"] == "read_file" and m["successes"] == 1
    sid = t.start("search", {"tool_call_id": "c1"}, 0, 6000)
    t.end_with(sid, "success", output_bytes=30, input_tokens=120, output_tokens=40,
               metadata={"model": "gpt-4o", "cached": True}, now_us=7000)
    sid = t.start("search", {"tool_call_id": "c2"}, 0, 8000)
    t.end_with(sid, "failed", error="HTTP 429", error_category="rate_limited", input_tokens=5, now_us=9000)
    m = next(x for x in t.metrics() if x["tool"] == "search")
    assert (m["input_tokens"], m["output_tokens"], m["output_bytes"]) == (125, 40, 30)
    assert m["error_categories"] == {"rate_limited": 1}
    assert next(r for r in t.recent() if r["tool_call_id"] == "c1")["metadata"] == {"model": "gpt-4o", "cached": True}


def test_error_context_is_echoed_and_counted():
    # Document 000's ErrorContext: classify(..., agent_id=...) used to raise TypeError.
    c = turnfit.classify("other", 0, "Rate limit exceeded", agent_id="narrator", workflow_id="wf-7",
                         metadata={"turn": 3, "scene": {"id": "forest"}})
    assert (c["category"], c["severity"]) == ("rate_limited", "low")
    assert (c["agent_id"], c["workflow_id"]) == ("narrator", "wf-7")
    assert c["metadata"] == {"turn": 3, "scene": {"id": "forest"}}
    plain = turnfit.classify("other", 0, "Rate limit exceeded")
    assert (plain["agent_id"], plain["workflow_id"], plain["metadata"]) == (None, None, None)
    with pytest.raises(turnfit.InvalidArgumentError, match="agent_id is empty"):
        turnfit.classify("openai", 500, agent_id="")
    with pytest.raises(turnfit.InvalidJsonError):
        turnfit.classify("openai", 500, metadata=[1])
    b = turnfit.CircuitBreaker(failure_threshold=3)
    b.record_failure("openai", 0, agent_id="narrator", workflow_id="wf-7")
    b.record_failure("openai", 1, agent_id=c["agent_id"], workflow_id="wf-8")
    assert b.record_failure("anthropic", 2, agent_id="critic") == "closed"
    b.record_failure("openai", 3)  # no ids: counted by the breaker, attributed to nobody
    assert b.failure_counts() == {"by_agent": {"narrator": 2, "critic": 1},
                                  "by_workflow": {"wf-7": 1, "wf-8": 1}, "unattributed": 0}
    assert b.state("openai", 4)["state"] == "open"
    with pytest.raises(turnfit.LimitExceededError):
        b.record_failure("openai", 5, workflow_id="w" * 257)
    t = turnfit.Tracer()
    sid = t.start("search", {"agent_id": "narrator", "workflow_id": "wf-7"}, 0, 1000)
    t.end(sid, "failed", 0, "boom", 2000)
    assert t.export(3000)["failure_counts"]["by_agent"] == {"narrator": 1}


def test_tracer_end_with_bad_input():
    t = turnfit.Tracer()
    sid = t.start("search", None, 0, 1000)
    with pytest.raises(turnfit.InvalidArgumentError):
        t.end_with(sid, "failed", error_category="Rate Limited", now_us=2000)
    with pytest.raises(turnfit.InvalidArgumentError):
        t.end_with(sid, "failed", metadata={"nested": {"x": 1}}, now_us=2000)
    with pytest.raises(turnfit.LimitExceededError):
        t.end_with(sid, "failed", metadata={f"k{i}": i for i in range(17)}, now_us=2000)
    with pytest.raises(turnfit.InvalidJsonError):
        t.end_with(sid, "done", now_us=2000)
    with pytest.raises(TypeError):
        t.end_with(sid, "failed", metadata={"x": object()}, now_us=2000)
    assert t.metrics()[0]["in_flight"] == 1
    t.end_with(sid, "timeout", now_us=3000)
    assert t.metrics()[0]["in_flight"] == 0
    with pytest.raises(turnfit.InvalidArgumentError):
        t.end_with(sid, "success", now_us=4000)
    req = {"tools": [{"type": "function", "function": {"name": "fs_read", "parameters": {"type": "object"}}}],
           "allowlists": {"coder": ["fs_*"]}, "model": "gpt-4o"}
    assert turnfit.toolset_report(req)["tool_count"] == 1
    assert turnfit.toolset_select(req, "coder")[0]["function"]["name"] == "fs_read"
    tok = turnfit.Tokenizer("o200k_base")
    a = turnfit.assemble(tok, {"budget": 200, "sections": [{"name": "a", "text": "hello", "priority": 1}]})
    assert "hello" in a["text"]


def test_window_events_reach_the_handler_on_the_calling_thread():
    w = turnfit.ContextWindow("gpt-4o", context_window=1000, reserved_output=100)
    seen = []
    w.on_event(seen.append)
    user = lambda k: {"role": "user", "content": "word " * k}  # noqa: E731
    w.push(user(100))
    assert seen == []
    w.push(user(650))
    assert [(e["kind"], e["operation"], e["from"], e["to"]) for e in seen] == [
        ("budget_crossed", "push", "fits", "should_compact")
    ]
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    w.load([user(5), {"role": "assistant", "content": None, "tool_calls": [call]}, user(3)])
    w.repair()
    assert [e["results_added"] for e in seen if e["kind"] == "repaired"] == [1]
    turns = [m for i in range(20) for m in (user(40), {"role": "assistant", "content": f"answer {i} " * 20})]
    w.load(turns)
    mark = len(seen)
    w.compact()
    compacted = [e for e in seen[mark:] if e["kind"] == "compacted"]
    assert len(compacted) == 1 and compacted[0]["messages_dropped"] > 0
    assert compacted[0]["tokens_after"] < compacted[0]["tokens_before"]
    w.on_event(None)
    n = len(seen)
    w.load(turns)
    w.compact()
    assert len(seen) == n
    with pytest.raises(TypeError):
        w.on_event(42)


def test_tracer_keeps_bounded_excerpts_and_finds_spans_by_id():
    # Document 000's start_execution(tool_name, input_params) / end_execution(
    # execution_id, status, output_result, error), then a lookup by id.
    t = turnfit.Tracer(excerpt_bytes=64)
    sid = t.start("read_file", {"agent_id": "narrator"}, input={"path": "notes.md", "lines": [1, 2]}, now_us=0)
    assert t.span(sid) is None  # still open
    t.end_with(sid, "failed", error="redis.exceptions.ResponseError: WRONGTYPE", output={"partial": "x" * 500}, now_us=10)
    r = t.span(sid)
    assert r["input_excerpt"] == '{"path":"notes.md","lines":[1,2]}'
    assert len(r["output_excerpt"].encode()) <= 64 and r["output_excerpt"].endswith("…")
    assert (r["error"], r["error_category"]) == ("redis.exceptions.ResponseError: WRONGTYPE", "state")
    sid2 = t.start("read_file", input="plain text", now_us=20)
    t.end(sid2, "failed", 0, "KeyError: 'path'", 30)
    assert t.span(sid2)["error_category"] == "tool_failed"
    assert t.error_counts() == {"state": 1, "tool_failed": 1}
    assert t.span(10_000) is None
    # Huge: kept cut; deep: refused by name (a str of it is fine); invalid
    # UTF-8 bytes and lone surrogates: replaced, never an exception.
    sid = t.start("s", input="é" * 1_000_000, now_us=0)
    t.end(sid, "success", 0, None, 1)
    assert len(t.span(sid)["input_excerpt"].encode()) <= 64
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(turnfit.InvalidArgumentError, match="nested too deeply"):
        t.start("s", input=deep, now_us=0)
    sid = t.start("s", input="[" * 100_000, now_us=0)
    t.end(sid, "success", 0, None, 1)
    assert t.span(sid)["input_excerpt"].startswith("[[[")
    sid = t.start("s", input=b"ab\xff\xfe", now_us=0)
    t.end_with(sid, "success", output="cd\udc80", now_us=1)
    r = t.span(sid)
    assert (r["input_excerpt"], r["output_excerpt"]) == ("ab\ufffd\ufffd", "cd\ufffd")
    with pytest.raises(turnfit.LimitExceededError):
        turnfit.Tracer(excerpt_bytes=16 * 1024 + 1)


def test_toolset_allowlist_order_and_none_for_every_tool():
    # Document 002's get_allowed_tools(): names in its order, None for all.
    tools = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("read", "write", "run")]
    req = {"tools": tools, "allowlists": {"a": ["run", "read"], "all": None}}
    assert [t["name"] for t in turnfit.toolset_select(req, "a")] == ["read", "run"]
    assert [t["name"] for t in turnfit.toolset_select(req, "all")] == ["read", "write", "run"]
    assert [t["name"] for t in turnfit.toolset_select({**req, "order": "allowlist"}, "a")] == ["run", "read"]
    with pytest.raises(turnfit.InvalidJsonError):
        turnfit.toolset_select({**req, "order": "alphabetical"}, "a")


def test_assemble_reports_sections_no_template_names():
    # Document 003: templates declare optional keys; anything else is reported.
    tok = turnfit.Tokenizer("o200k_base")
    t = {"name": "incident", "required": ["query"], "optional": ["state"]}
    a = turnfit.assemble(tok, {"budget": 300, "templates": [t], "template": "incident",
                               "context": {"query": "why?", "state": "s", "stat": "typo"}})
    assert a["unnamed_sections"] == ["stat"] and "## stat" in a["text"]
    a = turnfit.assemble(tok, {"budget": 300, "templates": [{**t, "optional": ["*"]}], "template": "incident",
                               "context": {"query": "why?", "stat": "typo"}})
    assert "unnamed_sections" not in a

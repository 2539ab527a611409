#!/usr/bin/env bash
# Document 001 (context resilience on a LangGraph supervisor), configured to
# its numbers and behaviour:
# - pre-flight before the call: system + history + tool schemas counted,
#   compaction triggered at 80% of the limit, summarized down to 50%, the
#   summary a system message placed before the recent messages (the document
#   summarizes instead of masking, hence --no-mask; turnfit also keeps the
#   user's first request pinned, which the document's code does not);
# - supervisor recovery: LangGraph's "tool_calls that do not have a
#   corresponding ToolMessage" error is repaired with a synthetic
#   "Tool interrupted" ToolMessage for the orphaned call; "Input is too long"
#   means compact.
# - tool-output truncation as the safety net: MAX_TOOL_OUTPUT_SIZE=10000
#   (10 KB) is --tool-output-max-bytes 10000, on a list_pull_requests
#   result of 100 PRs (the document's "50+ PRs" overflow); 50000, its
#   setting for larger models, leaves that output whole.
# The conversation (conversation.json, from gen_conversation.py) is a
# supervisor routing six requests to sub-agents as tools, at 85% of a
# 14,000-token limit, its last RAG call unanswered.
set -euo pipefail
: "${TURNFIT:?set TURNFIT to the turnfit binary}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
limit=(--model gpt-4o --max-tokens 14000 --reserve-output 0)

python3 gen_conversation.py | cmp -s - conversation.json || { echo "conversation.json differs from gen_conversation.py"; exit 1; }

# Layer 2: the exception LangGraph raises for the orphaned call, as the
# supervisor sees it (status 0: an exception, no HTTP response).
cat > "$tmp/langgraph.txt" <<'TXT'
Found AIMessages with tool_calls that do not have a corresponding ToolMessage. Here are the first few of those tool calls: [{'name': 'rag', 'args': {'query': 'open incidents and the on-call schedule'}, 'id': 'call_rag_07', 'type': 'tool_call'}].

Every tool call (LLM requesting to call a tool) in the message history MUST have a corresponding ToolMessage (result of a tool invocation to return to the LLM) - this is required by most LLM providers.
For troubleshooting, visit: https://python.langchain.com/docs/troubleshooting/errors/INVALID_CHAT_HISTORY
TXT
"$TURNFIT" classify --provider other --status 0 "$tmp/langgraph.txt" > "$tmp/c-orphan.json"
printf 'Input is too long for requested model.' | "$TURNFIT" classify --provider bedrock --status 400 > "$tmp/c-long.json"
"$TURNFIT" repair conversation.json --model gpt-4o --synthetic-result "Tool interrupted" --report "$tmp/repair.json" \
    > "$tmp/repaired.json"

# Layer 1: pre-flight at 80%, summarize to 50%.
"$TURNFIT" preflight "$tmp/repaired.json" "${limit[@]}" > "$tmp/pre.json"
"$TURNFIT" fit "$tmp/repaired.json" "${limit[@]}" --strategy summarize --trigger-ratio 0.8 --target-ratio 0.5 \
    --summary-role system --no-mask --report "$tmp/fit.json" > "$tmp/fitted.json"
"$TURNFIT" preflight "$tmp/fitted.json" "${limit[@]}" > "$tmp/post.json"

# Layer 0: the 10 KB tool-output cap, on a supervisor turn whose
# list_pull_requests result is 100 PRs (about 18 KB).
python3 - > "$tmp/prs.json" <<'PY'
import json
prs = [{"number": 4100 + i, "title": f"Fix flaky retry in agent {i} (é/中)", "author": f"dev{i % 7}",
        "labels": ["bug", "supervisor"], "updated_at": f"2025-06-{1 + i % 28:02d}T10:00:00Z"} for i in range(100)]
print(json.dumps({"messages": [
    {"role": "system", "content": "You are the platform supervisor."},
    {"role": "user", "content": "show all PRs in ai-platform-engineering"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_prs", "type": "function",
        "function": {"name": "list_pull_requests", "arguments": "{\"repo\": \"ai-platform-engineering\"}"}}]},
    {"role": "tool", "tool_call_id": "call_prs", "content": json.dumps(prs, ensure_ascii=False, indent=1)},
]}, ensure_ascii=False))
PY
"$TURNFIT" fit "$tmp/prs.json" "${limit[@]}" --tool-output-max-bytes 10000 --report "$tmp/cap10k.json" > "$tmp/prs-10k.json"
"$TURNFIT" fit "$tmp/prs.json" "${limit[@]}" --tool-output-max-bytes 50000 --report "$tmp/cap50k.json" > "$tmp/prs-50k.json"

PYTHONPATH=.. python3 - "$tmp" <<'PY'
import json, sys
from checks import Checks
checks = Checks("001-langgraph-supervisor", sys.argv[1])
load, check, d = checks.load, checks.check, sys.argv[1]

orig = json.load(open("conversation.json"))["messages"]
c = load("c-orphan.json")
check("LangGraph's orphaned-call error -> invalid_tool_history -> repair, the id pulled out",
      (c["category"], c["action"], c["tool_call_ids"]) == ("invalid_tool_history", "repair_history", ["call_rag_07"]),
      (c["category"], c["action"], c["tool_call_ids"]))
c = load("c-long.json")
check("'Input is too long' -> context overflow -> compact", c["action"] == "compact", (c["category"], c["action"]))

rep, repaired = load("repair.json"), load("repaired.json")["messages"]
synth = [m for m in repaired if m.get("role") == "tool" and m.get("tool_call_id") == "call_rag_07"]
check("repair: one synthetic ToolMessage 'Tool interrupted' for the orphaned call",
      len(synth) == 1 and synth[0]["content"] == "Tool interrupted" and len(repaired) == len(orig) + 1,
      [s["content"] for s in synth])

pre, fit, post = load("pre.json"), load("fit.json"), load("post.json")
check("pre-flight counts system + history + query + tool schemas",
      min(pre["system"], pre["tools"], pre["history"]) > 0
      and pre["prompt_tokens"] == pre["system"] + pre["tools"] + pre["history"] + pre["new_input"] + pre["reply_priming"],
      (pre["system"], pre["tools"], pre["history"], pre["prompt_tokens"]))
check("pre-flight: 14,000-token limit, trigger at 80% (11,200), target 50% (7,000)",
      (pre["limit"], pre["trigger_tokens"], pre["target_tokens"]) == (14000, 11200, 7000),
      (pre["limit"], pre["trigger_tokens"], pre["target_tokens"]))
check("pre-flight: the history is past 80% -> should_compact",
      pre["verdict"] == "should_compact" and 11200 < pre["prompt_tokens"] <= 14000, (pre["verdict"], pre["prompt_tokens"]))
check("fit: summarized down to 50% of the limit", fit["tokens_after"] <= 7000 and fit["tokens_before"] == pre["prompt_tokens"],
      (fit["tokens_before"], fit["tokens_after"]))
check("fit: compaction used at least half the 50% target (not 'drop everything')", fit["tokens_after"] >= 3500, fit["tokens_after"])
fitted = load("fitted.json")["messages"]
summaries = [i for i, m in enumerate(fitted) if m["role"] == "system" and "[Summary of earlier conversation]" in (m.get("content") or "")]
check("fit: one summary, a system message after the system prompt and the pinned task, before the recent messages",
      summaries == [2] and fitted[1] == orig[1], summaries)
check("fit: the system prompt is kept verbatim", fitted[0] == orig[0], fitted[0]["role"])
check("fit: the latest request and the answered orphan are kept",
      fitted[-2] == repaired[-2] and fitted[-1] == repaired[-1], [m["role"] for m in fitted[-2:]])
calls = {tc["id"] for m in fitted for tc in m.get("tool_calls") or []}
results = {m["tool_call_id"] for m in fitted if m["role"] == "tool"}
check("fit: every tool call still has its ToolMessage and no result is stray", calls == results, (len(calls), len(results)))
check("after fit: below the 80% trigger (no compaction on the next turn)", post["verdict"] == "fits" and post["prompt_tokens"] < 11200,
      (post["verdict"], post["prompt_tokens"]))

prs_in = load("prs.json")["messages"]
out10, rep10 = load("prs-10k.json")["messages"], load("cap10k.json")
full, cut = prs_in[3]["content"].encode(), out10[3]["content"].encode()
check("the PR listing is over 10 KB before the cap", len(full) > 10000, len(full))
check("MAX_TOOL_OUTPUT_SIZE=10000: the tool output is cut to at most 10,000 bytes, marker included",
      9900 < len(cut) <= 10000 and b" bytes truncated ...]" in cut, len(cut))
check("the cut keeps the output's head and tail and falls on character boundaries",
      full.startswith(cut.split(b"\n[... ")[0]) and full.endswith(cut.split(b" bytes truncated ...]\n")[1]),
      cut[:20])
ch = rep10["changes"]
check("the cut is in the report (truncated_result, call_prs, bytes before and after)",
      len(ch) == 1 and ch[0]["action"] == "truncated_result" and ch[0]["id"] == "call_prs"
      and f"cut from {len(full)} to {len(cut)} bytes" in ch[0]["detail"], [c["detail"] for c in ch])
check("the other messages are untouched and the call keeps its result", out10[:3] == prs_in[:3], len(out10))
check("MAX_TOOL_OUTPUT_SIZE=50000 (larger models): the same output is kept whole",
      load("prs-50k.json")["messages"] == prs_in and load("cap50k.json")["changes"] == [], len(load("cap50k.json")["changes"]))
checks.done()
PY

# Through the Python binding: the document's 80% check counts the prompt
# against the whole window; turnfit's default also reserves the reply (the
# model's maximum output, at most a quarter of the window), so a prompt the
# document calls 60% full already reads should_compact. reserved_output=0 is
# the document's check (docs/formats.md, "Window budget").
"$TURNFIT_PYTHON" - <<'PY'
import json, sys
sys.path.insert(0, "..")
import turnfit
from checks import Checks
checks = Checks("001-langgraph-supervisor (python)", ".")
check = checks.check

msgs = json.load(open("conversation.json"))["messages"]
def window(n, **budget):
    w = turnfit.ContextWindow("gpt-4o", context_window=14000, **budget)
    w.load_json(json.dumps(msgs[:n]))
    return w.preflight()
n = max(k for k in range(2, len(msgs) + 1) if window(k, reserved_output=0)["prompt_tokens"] <= 0.62 * 14000)
doc, ours = window(n, reserved_output=0), window(n)
check("python: a prompt the document calls ~60% full", 0.5 <= doc["prompt_tokens"] / 14000 <= 0.62, doc["prompt_tokens"])
check("python: with the default reserve (a quarter of 14,000) it reads should_compact",
      (ours["reserved_output"], ours["verdict"]) == (3500, "should_compact"), (ours["reserved_output"], ours["verdict"]))
check("python: reserved_output=0 is the document's check: fits at 60%, utilization = prompt / window",
      doc["verdict"] == "fits" and abs(doc["utilization"] - doc["prompt_tokens"] / 14000) < 1e-9, (doc["verdict"], doc["utilization"]))
full = window(len(msgs), reserved_output=0)
check("python: the whole conversation (85%) is past the document's 80% -> should_compact",
      full["verdict"] == "should_compact" and full["prompt_tokens"] > 0.8 * 14000, (full["verdict"], full["prompt_tokens"]))
only = turnfit.ContextWindow("gpt-4o", context_window=10000)
only.load_json(json.dumps(msgs[:n]))
check("python: a window given only context_window reserves a quarter (2,500 of 10,000); reserved_output=0 is the one line for none",
      (only.preflight()["reserved_output"], window(n, reserved_output=0)["reserved_output"]) == (2500, 0),
      only.preflight()["reserved_output"])

# The document's write-back after an orphaned call (repair, convert back, a
# remove-all update, the new list) is one call: turnfit.langchain.repair_update.
try:
    import turnfit.langchain as tlc
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt.chat_agent_executor import _validate_chat_history
except ImportError as e:
    print(f"SKIPPED: langgraph write-back: {e}")
else:
    g = StateGraph(MessagesState)
    g.add_node("noop", lambda state: {})
    g.add_edge(START, "noop")
    g.add_edge("noop", END)
    graph, config = g.compile(checkpointer=InMemorySaver()), {"configurable": {"thread_id": "caipe"}}
    graph.update_state(config, {"messages": [HumanMessage("ask the RAG agent", id="h1"), AIMessage("", id="a1", tool_calls=[
        {"name": "rag_agent", "args": {"q": "runbook"}, "id": "call_rag_07", "type": "tool_call"}])]})
    graph.update_state(config, tlc.repair_update(graph.get_state(config).values["messages"], "Tool interrupted"))
    after = graph.get_state(config).values["messages"]
    _validate_chat_history(after)
    check("python: repair_update writes the repaired history back in one update_state (a 'Tool interrupted' ToolMessage, ids kept)",
          [m.id for m in after[:2]] == ["h1", "a1"] and (after[2].tool_call_id, after[2].content) == ("call_rag_07", "Tool interrupted")
          and len(after) == 3, [type(m).__name__ for m in after])
checks.done()
PY

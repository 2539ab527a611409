#!/usr/bin/env bash
# Seed document 003 (ContextEngine and AgentState): the design's four
# templates with its own required context keys, its depth table (minimal
# 0 turns / 0 events, standard 3 / 5, comprehensive 10 / 20), its section
# names (conversation_history, recent_events) and template auto-detection,
# all through `turnfit assemble` with the `context_engine` preset on one
# agent state (state.json: 15 turns, 30 events).
set -euo pipefail
: "${TURNFIT:?set TURNFIT to the turnfit binary}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 - "$TURNFIT" "$tmp" <<'PY'
import json, subprocess, sys
turnfit, tmp = sys.argv[1], sys.argv[2]
state = json.load(open("state.json"))

def run(req, ok=True):
    path = f"{tmp}/req.json"
    json.dump(req, open(path, "w"))
    p = subprocess.run([turnfit, "assemble", path, "--json"], capture_output=True, text=True)
    if ok != (p.returncode == 0):
        sys.exit(f"unexpected exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout) if ok else p.stderr

def check(cond, what):
    if not cond:
        sys.exit(f"FAILED: {what}")
    print(f"ok: {what}")

def req(**kw):
    r = json.loads(json.dumps(state))
    r.update(kw)
    return r

def count(text, section, prefix):
    body = text.split(f"## {section}\n", 1)[1].split("\n\n## ", 1)[0] if f"## {section}\n" in text else ""
    return sum(1 for line in body.split("\n") if line.startswith(prefix))

# Depth table: turns and events per depth, under the design's section names.
for depth, turns, events in [("minimal", 0, 0), ("standard", 3, 5), ("comprehensive", 10, 20)]:
    r = run(req(template="conversation" if turns else "analysis", depth=depth))
    t = r["text"]
    check(count(t, "conversation_history", "turn ") == turns, f"{depth}: {turns} conversation turns")
    check(count(t, "recent_events", "- event: ") == events, f"{depth}: {events} recent events")
    if turns:
        check(f"turn {15 - turns + 1}:" in t and f"turn {15 - turns}:" not in t, f"{depth}: the newest {turns} turns")

# Required context keys per template (the design's table).
for template, required in [("problem_solving", ["problem_statement", "objective"]),
                           ("conversation", ["query", "conversation_history"]),
                           ("analysis", ["query"]), ("general", ["query"])]:
    r = run(req(template=template))
    names = [s["name"] for s in r["sections"]]
    check(r["template"] == template and names[:len(required)] == required, f"{template}: requires {', '.join(required)}")
    for key in required:
        if key != "conversation_history":
            bare = req(template=template)
            del bare["context"][key]
            err = run(bare, ok=False)
            check(f"template '{template}' requires a '{key}' section" in err, f"{template} without {key} is refused")

# Auto-detection: the first template whose required keys are present.
check(run(req())["template"] == "problem_solving", "auto: problem_statement + objective -> problem_solving")
s = req(); del s["context"]["objective"]
check(run(s)["template"] == "conversation", "auto: query + history -> conversation")
s["depth"] = "minimal"
check(run(s)["template"] == "analysis", "auto: query only (minimal depth, no history) -> analysis")

# JSON context rendered deterministically.
t = run(req(template="analysis"))["text"]
check("## execution_state\nworkflow_id: wf-nightly-export\nrecursion_depth: 1\nconstraints:\n  max_depth: 5" in t,
      "objects render as key: value lines, nested indented")
check("## relevant_memory\n- when: 2026-10-02\n  fact: the export query joins invoices and payments" in t,
      "lists render as bullets")

# Optional keys (the design's table) and sections no template names: the
# CLI's result lists them instead of passing them silently.
r = run(req(template="analysis", depth="minimal"))
check(r["unnamed_sections"] == ["problem_statement", "objective", "constraints", "assumptions", "user_context", "available_tools"],
      "analysis (query + relevant_memory, execution_state) reports the sections it does not name")
check("unnamed_sections" not in run(req(template="general")), "general takes all available context")
PY

# The same through the Python binding.
"$TURNFIT_PYTHON" - <<'PY'
import json, sys
sys.path.insert(0, "..")
import turnfit
from checks import Checks
checks = Checks("003-context-engine (python)", ".")
check = checks.check
state = json.load(open("state.json"))
tok = turnfit.Tokenizer.for_model("gpt-4o")
r = turnfit.assemble(tok, {**state, "template": "conversation", "depth": "standard"})
check("python: conversation names query, conversation_history, user_context, recent_events; the rest is reported",
      r["unnamed_sections"] == ["problem_statement", "objective", "constraints", "assumptions", "relevant_memory",
                                "available_tools", "execution_state"], r.get("unnamed_sections"))
mine = {"name": "incident", "required": ["query"], "optional": ["execution_state"]}
r = turnfit.assemble(tok, {"budget": 500, "templates": [mine], "template": "incident",
                           "context": {"query": "why?", "execution_state": {"depth": 1}, "extra": "x"}})
check("python: a host template with optional keys: only 'extra' is unnamed", r["unnamed_sections"] == ["extra"],
      r.get("unnamed_sections"))

# AgentMind's filters (assess_context_needs -> ContextPriorities.filters),
# applied before the depth limit: "standard" (5 events) with the design's
# ["solution", "error", "decision"] is the newest 5 events of those kinds,
# not the matching ones among the newest 5.
def listed(r):
    body = r["text"].split("## recent_events\n", 1)[1].split("\n\n## ", 1)[0]
    return [line[len("- event: "):] for line in body.splitlines() if line.startswith("- event: ")]
wanted = [e["event"] for e in state["events"] if e["kind"] in ("solution", "error", "decision")][-5:]
newest5 = [e["event"] for e in state["events"]][-5:]
r = turnfit.assemble(tok, {**state, "template": "problem_solving", "depth": "standard",
                           "event_filters": ["solution", "error", "decision"]})
check("python: filters before the depth limit: the newest 5 decisions", listed(r) == wanted and len(wanted) == 5,
      (listed(r), wanted))
check("python: ... which is not the decisions among the newest 5 events",
      wanted != [e for e in newest5 if e in wanted], newest5)
r = turnfit.assemble(tok, {**state, "template": "problem_solving", "depth": "standard"})
check("python: without filters the newest 5 events of any kind", listed(r) == newest5, listed(r))
try:
    turnfit.assemble(tok, {**state, "event_filters": [""]})
    got = "accepted"
except turnfit.InvalidArgumentError as e:
    got = str(e)
check("python: an empty filter is refused", "event_filters[0]" in got, got[:80])
checks.done()
PY

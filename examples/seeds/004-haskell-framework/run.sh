#!/usr/bin/env bash
# Seed document 004 (the Haskell agentic framework): a HandoffObject in the
# design's own JSON (camelCase fields from aeson's derived instances, no
# version) and skills with the design's front-matter (label, description,
# category) in both layouts, and its circular-dependency guard (call depth
# at most 5, FR-022; an agent already on the stack is a cycle), through the
# CLI; then the same document through the Haskell binding (Seed004.hs: the
# one-shot count for a model name, toPromptText, tool calls logged through
# LoggingT and a LogHandler, typed records, the call stack).
set -euo pipefail
: "${TURNFIT:?set TURNFIT to the turnfit binary}"
python3 - "$TURNFIT" <<'PY'
import json, subprocess, sys, tempfile
turnfit = sys.argv[1]

def run(*args, code=0):
    p = subprocess.run([turnfit, *args], capture_output=True, text=True)
    if p.returncode != code:
        sys.exit(f"FAILED: turnfit {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p

def check(cond, what):
    if not cond:
        sys.exit(f"FAILED: {what}")
    print(f"ok: {what}")

# Handoff: the design's JSON is valid as written; the version defaults.
h = json.loads(run("handoff", "check", "handoff.json", "--json").stdout)
check(h["version"] == "1.0" and h["metadata"]["from_agent"] == "collector", "camelCase handoff accepted, version 1.0")
check(h["custom_fields"]["ticket"] == "BUG-77" and len(h["key_outputs"]) == 2, "key outputs and custom fields kept")
full = json.loads(run("handoff", "render", "handoff.json", "--json").stdout)
text = full["text"]
check(text.startswith('<handoff version="1.0" from="collector" to="fixer"') and "## Key outputs\n- tests/parser.rs" in text,
      "rendered as the prompt block")
# Under a budget, custom fields go before key outputs are cut.
budget = full["tokens"] - 20
r = json.loads(run("handoff", "render", "handoff.json", "--json", "--budget", str(budget)).stdout)
check(r["tokens"] <= budget and r["omitted_custom_fields"] == ["notes"] and not r["shortened"] and not r["omitted"],
      f"budget {budget}: the last custom field goes, both key outputs stay whole")
r = json.loads(run("handoff", "render", "handoff.json", "--json", "--budget", "90").stdout)
check(r["omitted_custom_fields"] == ["ticket", "reviewers", "notes"] and r["tokens"] <= 90,
      "budget 90: every custom field goes before key outputs are shortened")
# The budget's last token (issue 53): at exactly the size of the block with
# the shorter output whole (outputs are served smallest first), that output
# is written whole, in both layouts.
for fmt in ("block", "prompt-text"):
    for keep in (1,):
        one = dict(json.load(open("handoff.json")), customFields={})
        one["keyOutputs"] = [one["keyOutputs"][keep]]
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write(json.dumps(one)); f.flush()
            exact = json.loads(run("handoff", "render", f.name, "--json", "--format", fmt).stdout)["tokens"]
        r = json.loads(run("handoff", "render", "handoff.json", "--json", "--format", fmt, "--budget", str(exact)).stdout)
        check(r["tokens"] <= exact and keep not in r["omitted"] and not r["shortened"]
              and one["keyOutputs"][0] in r["text"],
              f"{fmt}, budget {exact}: key output {keep} fits exactly and is written whole")
both = dict(json.load(open("handoff.json")), task_summary="again")
with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
    f.write(json.dumps(both)); f.flush()
    p = run("handoff", "check", f.name, code=1)
check("two spellings of one field" in p.stderr, "taskSummary and task_summary together are refused")

# Skills: the design's front-matter in the folder and flat layouts; the README is skipped.
listing = json.loads(run("skills", "list", "skills", "--json").stdout)
by = {s["name"]: s for s in listing["skills"]}
check(set(by) == {"debugging-checklist", "code-review"} and listing["invalid"] == 0, "both layouts load, none invalid")
check(by["debugging-checklist"]["header"]["category"] == "debugging" and by["code-review"]["header"]["category"] == "engineering",
      "category kept in both layouts")
check(any(i["path"] == "README.md" for i in listing["ignored"]), "README.md skipped, not a skill")
p = run("skills", "check", "skills")
check("README.md: info: skipped" in p.stdout and "2 valid, 0 invalid" in p.stdout, "skills check exits 0 with the README")
body = run("skills", "show", "skills", "Code review").stdout
check(body.startswith("\n## Purpose\nCatch defects") or body.startswith("## Purpose\nCatch defects"), "a flat skill is found by its label")
check("Reproduce the issue" in run("skills", "show", "skills", "debugging-checklist").stdout, "a folder skill by its label/name")
nested = json.loads(run("skills", "list", "skills", "--json", "--layout", "nested").stdout)
check([s["name"] for s in nested["skills"]] == ["debugging-checklist"], "--layout nested reads only folders")
idx = run("skills", "list", "skills", "--budget", "60").stdout
check("- debugging-checklist [debugging]: Systematic approach" in idx, "index line with the category")

# Circular-dependency detection: maxDepth defaults to 5; a call made with
# 5 agents on the stack is refused, as is an agent already on it.
five = ["supervisor", "researcher", "coder", "reviewer", "tester"]
s = json.loads(run("callstack", *five).stdout)
check(s == {"agents": five, "depth": 5, "max_depth": 5}, "call stack: 5 agents deep is allowed (default max depth 5)")
e = json.loads(run("callstack", *five, "writer", code=1).stdout)
check(e["error"] == "depth_exceeded" and e["message"].endswith(" -> ".join(five + ["writer"])),
      "call stack: a sixth agent is refused (depth_exceeded) with the full call chain")
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(s, f)
e = json.loads(run("callstack", "--stack", f.name, "writer", code=1).stdout)
check(e["error"] == "depth_exceeded", "call stack: a stored stack of 5 refuses one more")
e = json.loads(run("callstack", "supervisor", "coder", "supervisor", code=1).stdout)
check(e["error"] == "cycle_detected" and "supervisor -> coder -> supervisor" in e["message"],
      "call stack: re-entering an agent on the stack is a cycle, the chain shown")
PY

# The Haskell side: Seed004.hs, built by bindings/haskell/test.sh (which the
# test command runs before the seeds) into target/haskell/bin/seed-004, and
# linked against the library it installed under target/haskell/prefix.
root=$(cd ../../.. && pwd)
seed=${TURNFIT_HASKELL_SEED:-$root/target/haskell/bin/seed-004}
[ -x "$seed" ] || { echo "FAILED: $seed not built (bash bindings/haskell/test.sh, or set TURNFIT_HASKELL_SEED)"; exit 1; }
LD_LIBRARY_PATH="$root/target/haskell/prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$seed"

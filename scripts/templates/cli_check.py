#!/usr/bin/env python3
"""Manual end-to-end check: `turnfit render` (target/debug/turnfit) against
transformers AutoTokenizer.apply_chat_template(tokenize=False) on a model folder
(tokenizer.json + tokenizer_config.json) for every case of
tests/fixtures/templates/conversations.json. usage: cli_check.py MODEL_DIR"""
import json, sys, subprocess
from transformers import AutoTokenizer
d = sys.argv[1]
tok = AutoTokenizer.from_pretrained(d)
cases = json.load(open("tests/fixtures/templates/conversations.json"))["cases"]
ok = 0
for case in cases:
    msgs = [dict(m, content="" if m.get("content", 1) is None else m["content"]) if "content" in m else m for m in case["messages"]]
    try:
        want = tok.apply_chat_template(msgs, tools=case.get("tools"), add_generation_prompt=case["add_generation_prompt"], tokenize=False, **case.get("kwargs", {}))
    except Exception as e:
        want = None
    body = {"messages": case["messages"]}
    if case.get("tools"): body["tools"] = case["tools"]
    args = ["target/debug/turnfit", "render", "-", "--tokenizer", d + "/tokenizer.json"]
    if not case["add_generation_prompt"]: args.append("--no-generation-prompt")
    if case.get("kwargs"): args += ["--template-kwargs", json.dumps(case["kwargs"])]
    r = subprocess.run(args, input=json.dumps(body).encode(), capture_output=True)
    got = r.stdout.decode() if r.returncode == 0 else None
    same = got == want
    ok += same
    print(case["name"], "same" if same else f"DIFF rc={r.returncode} {r.stderr.decode()[:200]}")
print(f"{ok}/{len(cases)}")

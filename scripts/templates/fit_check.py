#!/usr/bin/env python3
"""End to end: `turnfit preflight` and `turnfit fit --tokenizer FILE
[--chat-template FILE] --context-window N` on real agent trajectories, checked
against transformers' apply_chat_template(..., add_generation_prompt=True,
tokenize=True, sanitize_control_tokens=True) (5.23.0): preflight's
prompt_tokens and fit's tokens_before / tokens_after must equal the length of
those ids for the input and for the fitted conversation, and the fitted prompt
must be within the limit. A conversation the template refuses must be refused
by both. Exit 1 on any difference.

usage: fit_check.py TURNFIT WINDOW NAME=MODEL_DIR[@TEMPLATE]... -- TRAJECTORY...
"""
import datetime as _dt
import json
import subprocess
import sys

from transformers import AutoTokenizer


def reference(tok, body):
    msgs = [dict(m, content="") if "content" in m and m["content"] is None else dict(m) for m in body["messages"]]
    return len(tok.apply_chat_template(msgs, tools=body.get("tools") or None, add_generation_prompt=True,
                                       tokenize=True, return_dict=False, sanitize_control_tokens=True))


def main():
    turnfit, window = sys.argv[1], sys.argv[2]
    split = sys.argv.index("--")
    models, trajectories = sys.argv[3:split], sys.argv[split + 1:]
    failures = 0
    for spec in models:
        name, folder = spec.split("=", 1)
        folder, _, template = folder.partition("@")
        tok = AutoTokenizer.from_pretrained(folder)
        extra = []
        if template:
            tok.chat_template = open(template, encoding="utf-8").read()
            extra = ["--chat-template", template]
        ok = 0
        for path in trajectories:
            body = json.load(open(path, encoding="utf-8"))
            if isinstance(body, list):
                body = {"messages": body}
            args = ["--tokenizer", f"{folder}/tokenizer.json", "--context-window", window] + extra
            try:
                want = reference(tok, body)
            except Exception as e:
                want = f"{type(e).__name__}: {e}"
            pre = subprocess.run([turnfit, "preflight", path] + args, capture_output=True, text=True)
            fit = subprocess.run([turnfit, "fit", path, "--report", "/dev/stdout"] + args, capture_output=True, text=True)
            short = path.rsplit("/", 1)[-1]
            if isinstance(want, str):
                if pre.returncode != 0 and fit.returncode != 0:
                    ok += 1
                    print(f"  {name} {short}: refused by both ({want[:80]})")
                else:
                    failures += 1
                    print(f"  {name} {short}: transformers refused ({want[:80]}), turnfit did not")
                continue
            if pre.returncode != 0 or fit.returncode != 0:
                failures += 1
                print(f"  {name} {short}: turnfit failed: {pre.stderr.strip()} {fit.stderr.strip()}")
                continue
            report = json.loads(pre.stdout)
            # fit prints the fitted conversation, then (--report /dev/stdout) the report.
            dec = json.JSONDecoder()
            fitted, end = dec.raw_decode(fit.stdout)
            fit_report, _ = dec.raw_decode(fit.stdout[end:].lstrip())
            fitted_body = fitted if isinstance(fitted, dict) else {"messages": fitted}
            after = reference(tok, fitted_body)
            same = (report["prompt_tokens"] == want == fit_report["tokens_before"]
                    and fit_report["tokens_after"] == after and report["exact"] and fit_report["exact"])
            within = after <= fit_report["limit_tokens"]
            ok += same and within
            failures += not (same and within)
            print(f"  {name} {short}: prompt {want} (turnfit preflight {report['prompt_tokens']}, fit {fit_report['tokens_before']}); "
                  f"fitted {after} (turnfit {fit_report['tokens_after']}) of limit {fit_report['limit_tokens']}, "
                  f"{fit_report['messages_before']} -> {fit_report['messages_after']} messages"
                  + ("" if same and within else "  <-- DIFFERS" if not same else "  <-- OVER"))
        print(f"{name}: {ok}/{len(trajectories)}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

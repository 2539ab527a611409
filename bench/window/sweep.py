#!/usr/bin/env python3
"""Untimed: turnfit fit and LangChain trim_messages side by side over budgets.

    python sweep.py [--data DIR] [--tool target/release/windowtool] [--out FILE]

For each prompt budget B (10,000 to 210,000 by 10,000) on conv_1mb.json:
  - turnfit: `windowtool fit B+10000 10000` (recency, 10,000 reserved);
  - LangChain: trim_messages(max_tokens=B, strategy="last", include_system=True,
    allow_partial=False, the counter of langchain_trim.py), once with
    start_on="human" (as in the timed comparison) and once with start_on=None
    (trim_messages' default);
and every result is counted and validated by turnfit (`windowtool count`):
does it fit B by turnfit's count, and are tool call/result pairs intact?
"""

import argparse
import json
import os
import subprocess
import sys

import langchain_trim as lt

HERE = os.path.dirname(os.path.abspath(__file__))


def ctx(tool, args, stdin):
    p = subprocess.run([tool, *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--tool", default=os.path.join(HERE, "target", "release", "windowtool"))
    ap.add_argument("--out")
    args = ap.parse_args()

    from langchain_core.messages import trim_messages

    enc = lt.load_encoding()
    count, _ = lt.make_counter(enc)
    text = open(os.path.join(args.data, "conv_1mb.json"), encoding="utf-8").read()
    dicts = json.loads(text)["messages"]

    rows = []
    for budget in range(10_000, 210_001, 10_000):
        row = {"budget": budget}
        rc, out, err = ctx(args.tool, ["fit", str(budget + 10_000), "10000"], text)
        if rc == 0:
            _, c, _ = ctx(args.tool, ["count"], out)
            c = json.loads(c)
            row["turnfit"] = {"messages": c["messages"], "tokens": c["tokens"], "issues": c["issues"], "fits": c["tokens"] <= budget}
            ctx_msgs = json.loads(out)["messages"]
        else:
            row["turnfit"] = {"error": err}
            ctx_msgs = None
        for start_on in ("human", None):
            res = trim_messages(lt.to_langchain(dicts), max_tokens=budget, strategy="last", token_counter=count,
                                include_system=True, start_on=start_on, allow_partial=False)
            conv = json.dumps({"messages": lt.to_openai(res)})
            _, c, _ = ctx(args.tool, ["count"], conv)
            c = json.loads(c)
            same = ctx_msgs is not None and [lt_norm(m) for m in json.loads(conv)["messages"]] == [lt_norm(m) for m in ctx_msgs]
            row[f"lc_start_on_{start_on}"] = {
                "messages": c["messages"], "tokens": c["tokens"], "issues": c["issues"], "issue_kinds": c["issue_kinds"][:3],
                "fits": c["tokens"] <= budget, "lc_count": count(res), "same_as_turnfit": same,
            }
        rows.append(row)

    print("| prompt budget | turnfit: msgs / tokens (turnfit count) | LC start_on=human: msgs / tokens / fits / issues / same as turnfit | LC start_on=None: msgs / tokens / fits / issues |")
    print("| ---: | --- | --- | --- |")
    for r in rows:
        c = r["turnfit"]
        cs = f"{c['messages']} / {c['tokens']}" + ("" if c.get("fits", True) else " OVER") if "error" not in c else "error: " + c["error"][:60]
        h, n = r["lc_start_on_human"], r["lc_start_on_None"]
        hs = f"{h['messages']} / {h['tokens']} / {'yes' if h['fits'] else 'NO'} / {h['issues']} / {'yes' if h['same_as_turnfit'] else 'no'}"
        ns = f"{n['messages']} / {n['tokens']} / {'yes' if n['fits'] else 'NO'} / {n['issues']}" + (f" {n['issue_kinds']}" if n["issues"] else "")
        print(f"| {r['budget']} | {cs} | {hs} | {ns} |")
    if args.out:
        json.dump(rows, open(args.out, "w"), indent=2)


def lt_norm(m):
    return (m["role"], m.get("content") or None, m.get("tool_call_id"),
            [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or []])


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The ids a server is sent for each conversation of
tests/fixtures/templates/conversations.json, per model folder (tokenizer.json +
tokenizer_config.json): transformers' AutoTokenizer.apply_chat_template(
messages, tools=tools, add_generation_prompt=..., tokenize=True,
sanitize_control_tokens=True). That call encodes the rendered text with
add_special_tokens=False (a BOS the template writes is counted once) and keeps
special-token strings typed into messages, tools and kwargs as text.

Same fixed clock and `content: null` -> "" rule as reference.py. A model
folder without a template (the gpt-oss one) is given one: NAME=DIR@TEMPLATE.
Prints {model: {"tokenizer": path, "template": path|null, "cases": {case:
{"ids": [...]} | {"error": "..."}}}}.

usage: count_reference.py NAME=MODEL_DIR[@TEMPLATE]... < CONVERSATIONS.json
"""
import datetime as _dt
import json
import sys

from transformers import AutoTokenizer
from transformers.utils import chat_template_utils as ctu

FIXED_NOW = _dt.datetime(2024, 7, 26, 10, 0, 0)


class _FixedDatetime(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return FIXED_NOW


ctu.datetime = _FixedDatetime


def prepare(messages):
    return [dict(m, content="") if "content" in m and m["content"] is None else dict(m) for m in messages]


def main():
    cases = json.load(sys.stdin)["cases"]
    result = {}
    for arg in sys.argv[1:]:
        name, folder = arg.split("=", 1)
        folder, _, template = folder.partition("@")
        tok = AutoTokenizer.from_pretrained(folder)
        if template:
            tok.chat_template = open(template, encoding="utf-8").read()
        per = {}
        for case in cases:
            try:
                ids = tok.apply_chat_template(
                    prepare(case["messages"]),
                    tools=case.get("tools"),
                    add_generation_prompt=case["add_generation_prompt"],
                    tokenize=True,
                    return_dict=False,
                    sanitize_control_tokens=True,
                    **case.get("kwargs", {}),
                )
                per[case["name"]] = {"ids": list(ids)}
            except Exception as e:  # the template refused: compared as a refusal
                per[case["name"]] = {"error": f"{type(e).__name__}: {e}"}
        result[name] = {"tokenizer": f"{folder}/tokenizer.json", "template": template or None, "cases": per}
    json.dump(result, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()

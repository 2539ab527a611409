#!/usr/bin/env python3
"""Renders every chat template of a folder on the conversations of
tests/fixtures/templates/conversations.json with transformers'
render_jinja_template (what apply_chat_template(..., tokenize=False) calls:
jinja2's sandbox, trim/lstrip blocks, its tojson, raise_exception,
strftime_now), and prints {template: {case: {"text": ...} | {"error": ...}}}.

The clock is fixed (FIXED_NOW) on both sides so dated templates compare; a
`content: null` is given as "" because that is turnfit's documented rule
(llama.cpp's rendering), not jinja2's "None".

usage: reference.py TEMPLATES_DIR CONVERSATIONS.json
"""
import datetime as _dt
import json
import pathlib
import sys

from transformers.utils import chat_template_utils as ctu

FIXED_NOW = _dt.datetime(2024, 7, 26, 10, 0, 0)
BOS, EOS = "<|bos|>", "<|eos|>"


class _FixedDatetime(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return FIXED_NOW


ctu.datetime = _FixedDatetime


def prepare(messages):
    out = []
    for m in messages:
        m = dict(m)
        if "content" in m and m["content"] is None:
            m["content"] = ""
        out.append(m)
    return out


def main():
    folder, conv_path = pathlib.Path(sys.argv[1]), sys.argv[2]
    cases = json.load(open(conv_path, encoding="utf-8"))["cases"]
    result = {}
    for path in sorted(folder.glob("*.jinja")):
        source = path.read_text(encoding="utf-8")
        per = {}
        for case in cases:
            try:
                rendered, _ = ctu.render_jinja_template(
                    conversations=[prepare(case["messages"])],
                    tools=case.get("tools"),
                    chat_template=source,
                    add_generation_prompt=case["add_generation_prompt"],
                    bos_token=BOS,
                    eos_token=EOS,
                    **case.get("kwargs", {}),
                )
                per[case["name"]] = {"text": rendered[0]}
            except Exception as e:  # the template refused: compared as a refusal
                per[case["name"]] = {"error": f"{type(e).__name__}: {e}"}
        result[path.stem] = per
    json.dump(result, sys.stdout, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()

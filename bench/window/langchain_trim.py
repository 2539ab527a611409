#!/usr/bin/env python3
"""LangChain trim_messages on the same ~1 MB conversation that fit_cold uses.

    python langchain_trim.py [--data DIR] [--runs N] [--out-json FILE] [--out-messages FILE]

Needs langchain-core and tiktoken (run.sh makes a venv). tiktoken's o200k_base
is built offline from turnfit's own rank file (core/data/o200k_base.tiktoken,
checked against OpenAI's published SHA-256 by tiktoken itself) with the
pattern and special tokens from tiktoken_ext.openai_public.

The token counter follows the recipe turnfit uses (OpenAI cookbook): per
message 3 + tokens(role) + tokens(content), plus, for each assistant tool
call, tokens(name) + tokens(arguments); plus 3 reply-priming tokens per list.
turnfit additionally charges 3 tokens per tool call (its declared rule, see
core/src/window/accounting.rs); this counter does not, as in the brief, so the
two counts differ by 3 x (number of tool calls) on the same messages.

Timed: trim_messages(max_tokens=90000, strategy="last", include_system=True,
start_on="human", allow_partial=False) on freshly built message objects
(built in timeit's setup, outside the timer, before every run, so no run
sees objects another run touched), token counting included. A second figure
("end to end") also times json.loads of the file and building the messages,
which is what turnfit's fit_cold includes (it starts from JSON text).
The encoding's one-time load is done before any timing.
"""

import argparse
import json
import os
import statistics
import sys
import time
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
RANKS = os.path.join(HERE, "..", "..", "core", "data", "o200k_base.tiktoken")
MAX_TOKENS = 90_000


def load_encoding():
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as op

    real = tiktoken.load.load_tiktoken_bpe

    def local(url, expected_hash=None):
        assert url.endswith("/o200k_base.tiktoken"), url
        return real(os.path.abspath(RANKS), expected_hash=expected_hash)

    op.load_tiktoken_bpe = local  # the constructor reads the local file
    spec = op.o200k_base()
    assert spec["special_tokens"] == {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
    return tiktoken.Encoding(
        name=spec["name"],
        pat_str=spec["pat_str"],
        mergeable_ranks=spec["mergeable_ranks"],
        special_tokens=spec["special_tokens"],
    )


def to_langchain(dicts):
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out = []
    for d in dicts:
        role = d["role"]
        content = d.get("content") or ""
        if role == "system":
            out.append(SystemMessage(content=content))
        elif role == "user":
            out.append(HumanMessage(content=content))
        elif role == "assistant":
            calls = [
                {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"]), "id": c["id"], "type": "tool_call"}
                for c in d.get("tool_calls") or []
            ]
            out.append(AIMessage(content=content, tool_calls=calls))
        elif role == "tool":
            out.append(ToolMessage(content=content, tool_call_id=d["tool_call_id"]))
        else:
            raise ValueError(role)
    return out


def to_openai(messages):
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out = []
    for m in messages:
        if isinstance(m, SystemMessage):
            out.append({"role": "system", "content": m.content})
        elif isinstance(m, HumanMessage):
            out.append({"role": "user", "content": m.content})
        elif isinstance(m, AIMessage):
            d = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                d["tool_calls"] = [
                    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                    for c in m.tool_calls
                ]
            out.append(d)
        elif isinstance(m, ToolMessage):
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
    return out


def make_counter(enc):
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    roles = {SystemMessage: "system", HumanMessage: "user", AIMessage: "assistant", ToolMessage: "tool"}

    def count_message(m):
        n = 3 + len(enc.encode_ordinary(roles[type(m)]))
        c = m.content
        n += len(enc.encode_ordinary(c if isinstance(c, str) else json.dumps(c)))
        for call in getattr(m, "tool_calls", None) or []:
            n += len(enc.encode_ordinary(call["name"])) + len(enc.encode_ordinary(json.dumps(call["args"])))
        return n

    def count(messages):
        return 3 + sum(count_message(m) for m in messages)

    return count, count_message


def pairs_intact(messages):
    """(ok, problems): every tool call answered by a ToolMessage in the
    run of tool messages right after its AIMessage, and every ToolMessage
    answering a call of the AIMessage that run follows."""
    from langchain_core.messages import AIMessage, ToolMessage

    problems = []
    i = 0
    while i < len(messages):
        m = messages[i]
        if isinstance(m, ToolMessage):
            problems.append(f"message {i}: tool result {m.tool_call_id} with no call before it")
            i += 1
            continue
        if isinstance(m, AIMessage) and m.tool_calls:
            want = {c["id"] for c in m.tool_calls}
            j = i + 1
            got = set()
            while j < len(messages) and isinstance(messages[j], ToolMessage):
                if messages[j].tool_call_id not in want:
                    problems.append(f"message {j}: tool result {messages[j].tool_call_id} answers no call of message {i}")
                got.add(messages[j].tool_call_id)
                j += 1
            for missing in sorted(want - got):
                problems.append(f"message {i}: tool call {missing} has no result")
            i = j
            continue
        i += 1
    return not problems, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--file", default="conv_1mb.json",
                    help="conversation in --data (loop_1mb.json: one task, then agent-loop rounds)")
    ap.add_argument("--out-json", help="write the figures here")
    ap.add_argument("--out-messages", help="write the trimmed messages (OpenAI JSON) here")
    args = ap.parse_args()

    import langchain_core
    import tiktoken
    from langchain_core.messages import trim_messages

    t = time.perf_counter()
    enc = load_encoding()
    enc.encode_ordinary("warm up")
    load_s = time.perf_counter() - t
    count, _ = make_counter(enc)

    path = os.path.join(args.data, args.file)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    dicts = json.loads(text)["messages"]
    # The args round-trip must reproduce the arguments strings byte for byte,
    # or the counter would count something other than what turnfit counts.
    for d in dicts:
        for c in d.get("tool_calls") or []:
            assert json.dumps(json.loads(c["function"]["arguments"])) == c["function"]["arguments"]
    n_calls = sum(len(d.get("tool_calls") or []) for d in dicts)

    def trim(messages):
        return trim_messages(
            messages,
            max_tokens=MAX_TOKENS,
            strategy="last",
            token_counter=count,
            include_system=True,
            start_on="human",
            allow_partial=False,
        )

    g = {"trim": trim, "to_langchain": to_langchain, "dicts": dicts, "json": json, "text": text}
    # Warm-up run (imports, pydantic schema caches), not timed.
    result = trim(to_langchain(dicts))
    # How often trim_messages calls the counter, and on how many messages.
    calls = {"n": 0, "messages": 0}

    def counting(messages):
        calls["n"] += 1
        calls["messages"] += len(messages)
        return count(messages)

    trim_messages(to_langchain(dicts), max_tokens=MAX_TOKENS, strategy="last", token_counter=counting,
                  include_system=True, start_on="human", allow_partial=False)

    # The three measurements are interleaved run by run, so a noisy spell on
    # the shared machine hits all of them alike. Each timeit call runs its
    # setup (fresh message objects) outside the timer, then the statement once.
    n = args.runs
    trim_only, end_to_end, build_only = [], [], []
    for _ in range(n):
        trim_only.append(timeit.timeit("trim(msgs)", setup="msgs = to_langchain(dicts)", number=1, globals=g))
        end_to_end.append(timeit.timeit("trim(to_langchain(json.loads(text)['messages']))", number=1, globals=g))
        build_only.append(timeit.timeit("to_langchain(json.loads(text)['messages'])", number=1, globals=g))

    full = to_langchain(dicts)
    ok, problems = pairs_intact(result)
    out = {
        "langchain_core": langchain_core.__version__,
        "tiktoken": tiktoken.__version__,
        "python": sys.version.split()[0],
        "encoding_load_ms": round(load_s * 1e3, 1),
        "runs": n,
        "messages_in": len(full),
        "tool_calls_in": n_calls,
        "lc_count_in": count(full),
        "messages_out": len(result),
        "lc_count_out": count(result),
        "first_out_after_system": type(result[1]).__name__ if len(result) > 1 else None,
        "token_counter_calls_per_trim": calls["n"],
        "messages_counted_per_trim": calls["messages"],
        "pairs_intact": ok,
        "pair_problems": problems[:10],
        "trim_median_ms": statistics.median(trim_only) * 1e3,
        "trim_min_ms": min(trim_only) * 1e3,
        "trim_max_ms": max(trim_only) * 1e3,
        "end_to_end_median_ms": statistics.median(end_to_end) * 1e3,
        "build_messages_median_ms": statistics.median(build_only) * 1e3,
    }
    if args.out_messages:
        with open(args.out_messages, "w", encoding="utf-8") as f:
            json.dump({"messages": to_openai(result)}, f)
    if args.out_json:
        with open(args.out_json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()

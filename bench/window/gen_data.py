#!/usr/bin/env python3
"""Generate the context-window benchmark conversations (stdlib only, fixed seed).

    python3 bench/window/gen_data.py [OUT_DIR]     # default: bench/window/data

Writes OpenAI Chat Completions conversations (`{"messages": [...]}`, no tool
definitions) made of coding-agent turns:

  user request -> assistant with 1-3 parallel tool_calls -> one tool result
  per call (50-2,000 words: prose from a word list mixed with code-like lines,
  compiler output, file paths) -> assistant answer

Files:
  conv_10.json            exactly 10 messages (system + turns, padded)
  conv_10000.json         exactly 10,000 messages (same generator, other seed)
  conv_1mb.json           system + whole turns until the file reaches 1,000,000 bytes
  loop_1mb.json           system, one task, then agent-loop rounds (one call, one
                          100-400-word result) until the file reaches 1,000,000 bytes
  new_user_message.json   one ~50-word user message (the one appended in the bench)

Only random.Random with integer seeds and random(), randint(), choice() are
used; their output is stable across Python 3 versions, and json.dumps is
called with fixed arguments, so every file is byte-identical on every run.
The SHA-256 and size of each file are printed.
"""

import hashlib
import json
import math
import os
import random
import sys

WORDS = """
the of and to a in is it you that was for on are with as be at one have this
from or had by not but what some we can out other were all there when up use
your how said an each which do their time if will way about many then them
write would like so these long make thing see has look more day could go come
did number no most people over know than call first who may down side been now
find any new work part take get place made where after back little only round
year show every good give our under name very through just form great think
say help low line turn cause much mean before move right old too same tell
does set three want also well small end put read hand large add even here must
big high such follow act why ask change went light kind off need try again
point build self found answer keep never last let thought start might far run
while close real few open seem together next begin got example always those
both mark often until second carry took once base cut sure watch main enough
ready above ever list though feel soon direct leave measure product short class
question happen complete order problem piece told knew pass since top whole
space best hour better true during remember step early hold ground interest
reach fast listen table less simple several toward against pattern slow center
rule value field return error result module function request response buffer
cache index token budget window message context parser config handler client
server thread queue worker retry timeout payload schema record stream offset
""".split()

IDENTS = """
parse_config load_index handle_request Window Budget Accountant fit_report
tokens_before tokens_after retry_policy open_stream next_token merge_ranks
ConfigError ParseError Conversation Message ToolCall preflight compact_history
read_file write_file user_id session_id request_id max_tokens reserve_output
cache_key entry_count batch_size worker_pool shutdown_signal checksum decoder
""".split()

KEYWORDS = ["let", "fn", "pub", "impl", "match", "if", "return", "for", "while",
            "def", "class", "import", "const", "async", "await", "self"]

DIRS = ["src", "src/window", "src/chat", "src/tokens", "tests", "core/src", "cli/src",
        "lib", "app/handlers", "pkg/server"]
EXTS = [".rs", ".py", ".ts", ".go"]
TOOLS = ["read_file", "grep", "run_command", "list_dir", "apply_patch"]


def path(r):
    return f"{r.choice(DIRS)}/{r.choice(IDENTS).lower()}{r.choice(EXTS)}"


def sentence(r, lo=6, hi=18):
    n = r.randint(lo, hi)
    ws = [r.choice(WORDS) for _ in range(n)]
    if r.random() < 0.2:
        ws[r.randint(0, n - 1)] = "`" + r.choice(IDENTS) + "`"
    s = " ".join(ws)
    return s[0].upper() + s[1:] + "."


def code_line(r):
    k = r.random()
    ind = "    " * r.randint(0, 3)
    a, b, c = r.choice(IDENTS), r.choice(IDENTS), r.choice(IDENTS)
    if k < 0.25:
        return f"{ind}let {a.lower()} = {b}::new({r.randint(0, 4096)}, \"{r.choice(WORDS)}\")?;"
    if k < 0.45:
        return f"{ind}if {a.lower()}.{b.lower()}() > {r.randint(1, 99999)} {{ return Err({c}::from(\"{r.choice(WORDS)} {r.choice(WORDS)}\")); }}"
    if k < 0.6:
        return f"{ind}{r.choice(KEYWORDS)} {a.lower()}(self, {b.lower()}: int = {r.randint(0, 9)}) -> {c}:"
    if k < 0.75:
        return f"{path(r)}:{r.randint(1, 2000)}:{r.randint(1, 80)}: error[E0{r.randint(100, 999)}]: mismatched types in `{a}`"
    if k < 0.85:
        return f"{ind}// {sentence(r, 4, 10)}"
    if k < 0.93:
        return f"{ind}{{\"{a.lower()}\": {r.randint(0, 100000)}, \"{b.lower()}\": \"{r.choice(WORDS)}\", \"ok\": {r.choice(['true', 'false'])}}},"
    return f"test {a.lower()}::{b.lower()} ... {r.choice(['ok', 'ok', 'ok', 'FAILED', 'ignored'])} ({r.randint(0, 999)}.{r.randint(0, 99):02d}ms)"


def tool_output(r, words):
    """About `words` whitespace-separated words of mixed prose and code lines."""
    lines, n = [], 0
    code_share = r.random()
    while n < words:
        if r.random() < code_share:
            line = code_line(r)
        else:
            line = " ".join(sentence(r) for _ in range(r.randint(1, 3)))
        lines.append(line)
        n += len(line.split())
    return "\n".join(lines)


def tool_length(r):
    # Log-uniform between 50 and 2,000 words: many short results, some long.
    return int(round(math.exp(r.uniform(math.log(50), math.log(2000)))))


def call_args(r, tool):
    if tool == "read_file":
        a = {"path": path(r)}
        if r.random() < 0.4:
            lo = r.randint(1, 800)
            a.update({"start_line": lo, "end_line": lo + r.randint(20, 300)})
    elif tool == "grep":
        a = {"pattern": r.choice(IDENTS), "path": r.choice(DIRS)}
    elif tool == "run_command":
        a = {"command": r.choice(["cargo test -p turnfit", "cargo clippy --all-targets",
                                  "pytest -q tests", "go test ./...", "make check"]) +
             (f" {r.choice(IDENTS).lower()}" if r.random() < 0.5 else "")}
    elif tool == "list_dir":
        a = {"path": r.choice(DIRS)}
    else:
        a = {"path": path(r), "patch": "\n".join(code_line(r) for _ in range(r.randint(2, 8)))}
    return json.dumps(a)


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.calls = 0

    def user(self, words=None):
        r = self.r
        text = " ".join(sentence(r) for _ in range(r.randint(1, 4)))
        if words is not None:
            ws = []
            while len(ws) < words:
                ws += sentence(r).split()
            text = " ".join(ws[:words]).rstrip(".") + "."
        elif r.random() < 0.3:
            text += f" The failing file is {path(r)}."
        return {"role": "user", "content": text}

    def turn(self):
        r = self.r
        out = [self.user()]
        calls = []
        for _ in range(r.randint(1, 3)):
            self.calls += 1
            tool = r.choice(TOOLS)
            calls.append({"id": f"call_{self.calls:06d}", "type": "function",
                          "function": {"name": tool, "arguments": call_args(r, tool)}})
        content = sentence(r, 5, 12) if r.random() < 0.4 else None
        out.append({"role": "assistant", "content": content, "tool_calls": calls})
        for c in calls:
            out.append({"role": "tool", "tool_call_id": c["id"],
                        "content": tool_output(r, tool_length(r))})
        answer = " ".join(sentence(r) for _ in range(r.randint(2, 8)))
        if r.random() < 0.5:
            answer += "\n\n```\n" + "\n".join(code_line(r) for _ in range(r.randint(2, 10))) + "\n```"
        out.append({"role": "assistant", "content": answer})
        return out

    def loop_round(self):
        """One agent-loop round: an assistant call and its result (no user)."""
        r = self.r
        self.calls += 1
        tool = r.choice(TOOLS)
        call = {"id": f"call_{self.calls:06d}", "type": "function",
                "function": {"name": tool, "arguments": call_args(r, tool)}}
        content = sentence(r, 5, 12) if r.random() < 0.4 else None
        return [{"role": "assistant", "content": content, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call["id"], "content": tool_output(r, r.randint(100, 400))}]

    def system(self):
        r = self.r
        text = "You are a coding agent working in a repository. " + " ".join(sentence(r) for _ in range(20))
        return {"role": "system", "content": text}


def dump(obj):
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")) + "\n"


def exact(seed, n):
    """System message, whole turns while they fit in n messages, then
    user/assistant pairs (and a last user message) to reach exactly n."""
    g = Gen(seed)
    msgs = [g.system()]
    while True:
        t = g.turn()
        if len(msgs) + len(t) > n:
            break
        msgs += t
    while len(msgs) < n:
        msgs.append(g.user())
        if len(msgs) < n:
            msgs.append({"role": "assistant", "content": " ".join(sentence(g.r) for _ in range(3))})
    return {"messages": msgs}


def by_size(seed, size):
    g = Gen(seed)
    msgs = [g.system()]
    while len(dump({"messages": msgs})) < size:
        msgs += g.turn()
    return {"messages": msgs}


def loop_by_size(seed, size):
    """System, one task, then agent-loop rounds until the file reaches size."""
    g = Gen(seed)
    msgs = [g.system(), g.user(words=80)]
    while len(dump({"messages": msgs})) < size:
        msgs += g.loop_round()
    return {"messages": msgs}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "data")
    os.makedirs(out, exist_ok=True)
    files = {
        "conv_10.json": dump(exact(10, 10)),
        "conv_10000.json": dump(exact(10000, 10000)),
        "conv_1mb.json": dump(by_size(1, 1_000_000)),
        "loop_1mb.json": dump(loop_by_size(2, 1_000_000)),
        "new_user_message.json": dump(Gen(50).user(words=50)),
    }
    for name, text in files.items():
        data = text.encode("utf-8")
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        n = json.loads(text)
        n = len(n["messages"]) if isinstance(n, dict) and "messages" in n else 1
        print(f"{name:24} {len(data):>10} bytes {n:>6} messages  sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()

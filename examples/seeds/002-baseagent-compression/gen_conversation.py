"""Writes conversation.json: a coding agent built on a BaseAgent-style loop
(made for this scenario, OpenAI chat shape) exploring a repository with the
three tools the design's ExploreAgent keeps (glob, grep, read): a system
prompt, then user requests each answered after tool rounds. Sized to sit
between the design's 75% compression threshold and the 80% default (about
6,200 of 8,000 tokens). Deterministic: `python3 gen_conversation.py >
conversation.json` reproduces the file."""
import json
import sys

SYSTEM = "You are an exploration agent. Use glob, grep and read to answer questions about the repository. Cite paths."
TOOLS = [{"type": "function", "function": {"name": n, "description": d, "parameters": {
    "type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}}}
    for n, d in [("glob", "Find files by glob pattern."), ("grep", "Search file contents by regex."),
                 ("read", "Read a file by path.")]]
messages = [{"role": "system", "content": SYSTEM}]
n = 0

def call(tool, pattern, output):
    global n
    n += 1
    cid = f"call_{n:03d}"
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps({"pattern": pattern})}}]})
    messages.append({"role": "tool", "tool_call_id": cid, "content": output})

def source(path, lines):
    return "\n".join(f"{i + 1:4d}  " + (f"def handler_{i}(event, context):" if i % 6 == 0 else
                                        f"    value_{i} = compute('{path}', {i * 13 % 97})") for i in range(lines))

topics = ["context", "tools", "agents", "memory", "retry", "config", "cli", "tests"]
for k, topic in enumerate(topics):
    messages.append({"role": "user", "content": f"Where is the {topic} logic implemented, and what calls it?"})
    call("glob", f"athena/{topic}/**/*.py", "\n".join(f"athena/{topic}/{name}.py" for name in
                                                    ["__init__", "manager", "compressor", "registry", "base"][: 3 + k % 3]))
    call("grep", f"def .*{topic}", "\n".join(f"athena/{topic}/manager.py:{10 * i + k}: def {topic}_step_{i}(self):"
                                             for i in range(12)))
    call("read", f"athena/{topic}/manager.py", source(f"athena/{topic}/manager.py", 22))
    messages.append({"role": "assistant", "content": f"The {topic} logic is in athena/{topic}/manager.py; "
                     f"{topic}_step_0 to {topic}_step_11 are called from athena/agents/base.py."})

json.dump({"model": "gpt-4o", "tools": TOOLS, "messages": messages}, sys.stdout, indent=1)
print()

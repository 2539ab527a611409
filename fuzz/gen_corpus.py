#!/usr/bin/env python3
"""Writes the committed seed corpora fuzz/corpus/<target>/ for every fuzz
target except tokenizer_differential (which has its own seeds).

Seeds come from the repository's examples (examples/data), its
conformance vectors (tests/vectors) and hand-written hostile cases: deep
nesting, huge numbers, invalid UTF-8, NUL, lone surrogates, alias bombs,
`..` paths and the like. Each file is the fuzz input exactly as the
target's check (fuzz/checks/<target>.rs) reads it: option bytes first,
then the text. The output is deterministic; rerun after changing a check's
input layout:

    python3 fuzz/gen_corpus.py

`cargo test` replays every file (core/tests/fuzz_corpus.rs,
ffi/tests/fuzz_corpus.rs).
"""
import hashlib
import json
import os
import re
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")


def read(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return f.read()


def js(v):
    return json.dumps(v, ensure_ascii=False).encode()


class Corpus:
    def __init__(self, target):
        self.dir = os.path.join(OUT, target)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.seen = set()

    def add(self, label, data):
        if isinstance(data, str):
            data = data.encode()
        digest = hashlib.sha1(data).hexdigest()[:8]
        if digest in self.seen:
            return
        self.seen.add(digest)
        label = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:48]
        with open(os.path.join(self.dir, f"{label}-{digest}"), "wb") as f:
            f.write(data)

    def count(self):
        return len(self.seen)


# ---------------------------------------------------------------- sources

def conversations():
    """(label, JSON bytes) of real conversations."""
    out = []
    for name in ["anthropic-session.json", "interrupted-session.json", "coding-session.json"]:
        out.append((name, read("examples/data/" + name)))
    for case in json.load(open(os.path.join(ROOT, "tests/vectors/window.cases.json")))["cases"]:
        conv = case["input"].get("conversation")
        if conv is not None:
            out.append((case["name"], js(conv)))
    return out


def hostile_json():
    """Malformed or extreme JSON that every JSON-taking parser must refuse
    or handle without crashing."""
    deep = 20000
    return [
        ("empty", b""),
        ("whitespace", b" \n\t "),
        ("null", b"null"),
        ("number", b"1"),
        ("empty-object", b"{}"),
        ("empty-array", b"[]"),
        ("deep-arrays", b"[" * deep + b"]" * deep),
        ("deep-objects", b'{"a":' * deep + b"1" + b"}" * deep),
        ("deep-unclosed", b"[" * deep),
        ("deep-messages", b'{"messages":' + b"[" * 5000 + b"]" * 5000 + b"}"),
        ("huge-number", b'{"messages":[{"role":"user","content":"x","n":' + b"9" * 5000 + b"}]}"),
        ("huge-exponent", b'{"max_tokens":1e999999,"messages":[]}'),
        ("negative-zero", b'{"messages":[{"role":"user","content":"hi"}],"x":-0.0e-0}'),
        ("invalid-utf8", b'{"messages":[{"role":"user","content":"\xff\xfe\xc3\x28"}]}'),
        ("overlong-utf8", b'{"messages":[{"role":"user","content":"\xc0\xaf\xe0\x80\xaf"}]}'),
        ("nul-raw", b'{"messages":[{"role":"user","content":"a\x00b"}]}'),
        ("nul-escaped", b'{"messages":[{"role":"user\\u0000","content":"a\\u0000b"}]}'),
        ("lone-surrogate", b'{"messages":[{"role":"user","content":"\\ud800"}]}'),
        ("reversed-surrogates", b'{"messages":[{"role":"user","content":"\\udc00\\ud800"}]}'),
        ("duplicate-keys", b'{"messages":[],"messages":[{"role":"user","content":"x"}]}'),
        ("trailing-garbage", b'{"messages":[]} trailing'),
        ("trailing-comma", b'{"messages":[{"role":"user","content":"x"},]}'),
        ("bom", b'\xef\xbb\xbf{"messages":[]}'),
        ("long-string", b'{"messages":[{"role":"user","content":"' + b"a" * 200000 + b'"}]}'),
        ("many-messages", js({"messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": str(i)} for i in range(3000)]})),
        ("wrong-types", b'{"messages":[{"role":1,"content":{"x":[]}}],"tools":"nope","system":7}'),
        ("unknown-role", b'{"messages":[{"role":"wizard","content":"x"}]}'),
    ]


def tool_pairs():
    """Conversations that stress the call/result pairing."""
    call = lambda i: {"id": f"call_{i}", "type": "function", "function": {"name": "run", "arguments": json.dumps({"i": i})}}
    openai = {"messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "start " * 50},
        {"role": "assistant", "content": None, "tool_calls": [call(1), call(2)]},
        {"role": "tool", "tool_call_id": "call_1", "content": "out " * 400},
        {"role": "tool", "tool_call_id": "call_2", "content": "out " * 400},
        {"role": "assistant", "content": "done " * 30},
        {"role": "user", "content": "next " * 50},
        {"role": "assistant", "content": None, "tool_calls": [call(3)]},
        {"role": "user", "content": "interrupted"},
        {"role": "tool", "tool_call_id": "call_9", "content": "orphan result"},
        {"role": "assistant", "content": None, "tool_calls": [call(3)]},
        {"role": "tool", "tool_call_id": "call_3", "content": "dup"},
        {"role": "tool", "tool_call_id": "call_3", "content": "dup again"},
        {"role": "user", "content": "latest question"},
    ]}
    anthropic = {"system": "sys", "tools": [{"name": "run", "input_schema": {"type": "object"}}], "messages": [
        {"role": "user", "content": "go " * 40},
        {"role": "assistant", "content": [{"type": "text", "text": "calling"}, {"type": "tool_use", "id": "tu_1", "name": "run", "input": {}},
                                          {"type": "tool_use", "id": "tu_2", "name": "run", "input": {"x": [1, 2]}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "r " * 300},
                                     {"type": "tool_result", "tool_use_id": "tu_2", "content": [{"type": "text", "text": "r2"}], "is_error": True}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "sig"}, {"type": "text", "text": "ok"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_missing", "content": "orphan"}]},
        {"role": "user", "content": "latest"},
    ], "max_tokens": 1024, "unknown_field": {"kept": True}}
    bare = [{"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image_url", "image_url": {"url": "data:,", "detail": "high"}}]},
            {"role": "assistant", "content": "", "name": "bot", "function_call": {"name": "f", "arguments": "{"}}]
    return [("openai-tool-pairs", js(openai)), ("anthropic-tool-pairs", js(anthropic)), ("openai-bare-parts", js(bare))]


def responses_pairs():
    """OpenAI Responses inputs: a recorded request, and items that stress
    pairing by call_id (parallel calls, an interrupted call, a stray and a
    late output, a huge output, reasoning, server tool items)."""
    fc = lambda i: {"type": "function_call", "call_id": f"call_{i}", "name": "run", "arguments": json.dumps({"i": i})}
    out = lambda i, text: {"type": "function_call_output", "call_id": f"call_{i}", "output": text}
    items = {"model": "gpt-4o", "instructions": "sys", "previous_response_id": None, "input": [
        {"role": "user", "content": "start " * 50},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "plan"}], "encrypted_content": "gAAAA" * 40},
        fc(1), fc(2), out(2, "out " * 400), out(1, [{"type": "input_text", "text": "out " * 400}]),
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done", "annotations": []}]},
        {"role": "user", "content": [{"type": "input_text", "text": "next"}, {"type": "input_image", "image_url": "data:,", "detail": "high"}]},
        fc(3), {"role": "user", "content": "interrupted"}, out(9, "orphan"),
        {"type": "custom_tool_call", "call_id": "call_4", "name": "sql", "input": "SELECT 1"},
        {"type": "local_shell_call", "id": "ls", "call_id": "call_5", "action": {"type": "exec", "command": ["ls"]}},
        {"type": "local_shell_call_output", "id": "call_5", "output": "a"},
        {"type": "web_search_call", "id": "ws", "status": "completed"}, {"type": "item_reference", "id": "msg_0"},
        out(3, "late"), {"role": "user", "content": "latest question"},
    ], "tools": [{"type": "function", "name": "run", "parameters": {"type": "object"}}, {"type": "web_search"}]}
    bare = [fc(7), out(7, "x"), {"type": "mystery_item", "text": "kept"}]
    recorded = read("tests/fixtures/formats/responses/pydantic-ai-tool-call.json").strip()
    return [("responses-tool-pairs", js(items)), ("responses-bare", js(bare)),
            ("responses-string-input", js({"model": "gpt-4o", "input": "hi", "instructions": "x"})),
            ("responses-recorded", recorded)]


def format_requests():
    """(label, JSON bytes): one request of each format, with its marks."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    return [
        ("openai-request", js({"messages": [
            {"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}]})),
        ("responses-request", js({"instructions": "s", "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"}]})),
        ("anthropic-request", js({"system": "s", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]}]})),
        ("gemini-request", js({"systemInstruction": {"parts": [{"text": "s"}]}, "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"r": "ok"}}}]}]})),
        ("bedrock-request", js({"system": [{"text": "s"}], "messages": [
            {"role": "user", "content": [{"text": "hi"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "c1", "name": "f", "input": {}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "c1", "content": [{"text": "ok"}]}}]}],
            "inferenceConfig": {"maxTokens": 10}})),
        ("plain-chat-request", js({"messages": [{"role": "user", "content": "hello"}]})),
    ]


def all_conversations():
    return conversations() + tool_pairs() + hostile_json()


# ---------------------------------------------------------------- targets

def chat_codecs():
    c = Corpus("chat_codecs")
    for i, (label, conv) in enumerate(all_conversations()):
        c.add(label, bytes([i % 3]) + conv)
    for label, conv in tool_pairs() + conversations()[:3]:
        for fmt in range(3):
            c.add(f"{label}-fmt{fmt}", bytes([fmt]) + conv)
    for label, conv in responses_pairs():
        for fmt in range(4):
            c.add(f"{label}-fmt{fmt}", bytes([fmt]) + conv)
    # Issue 33: every format forced on a request of every format.
    for label, conv in format_requests():
        for fmt in range(6):
            c.add(f"{label}-forced{fmt}", bytes([fmt]) + conv)
    return c


def window_fit():
    c = Corpus("window_fit")
    # model, strategy, budget lo/hi, reserve, keep, cap, flags
    knobs = [
        (0, 0, 0, 0, 0, 0, 0, 0),                # gpt-4o defaults, recency
        (0, 1, 200, 0, 0, 0, 0, 0),              # relevance, tiny budget
        (1, 2, 0x00, 0x02, 4, 1, 20, 0x20),      # gpt-4 hybrid 512
        (3, 3, 0x00, 0x04, 0, 2, 50, 0x40),      # claude summarize, pinned
        (2, 0, 0x00, 0x01, 200, 3, 1, 0x80),     # no repair
        (4, 1, 0xff, 0xff, 255, 0, 255, 0x61),   # davinci, max budget
        (0, 0, 1, 0, 0, 0, 0, 0x02),             # budget 1, anthropic format
        (0, 3, 0x00, 0x08, 1, 1, 0, 0x01),       # summarize 2048, openai format
    ]
    convs = all_conversations()
    for i, (label, conv) in enumerate(convs):
        k = knobs[i % len(knobs)]
        c.add(f"{label}-k{i % len(knobs)}", bytes(k) + conv)
    for j, k in enumerate(knobs):
        for label, conv in tool_pairs() + conversations()[:2]:
            c.add(f"{label}-k{j}", bytes(k) + conv)
    # Issue 33: every format forced (flag low nibble 1..5) on every format.
    for label, conv in format_requests():
        for fmt in range(6):
            c.add(f"{label}-forced{fmt}", bytes(knobs[0][:7]) + bytes([fmt]) + conv)
    for j, k in enumerate(knobs):
        for label, conv in responses_pairs():
            # Flag 0x10: the Responses format, forced.
            c.add(f"{label}-k{j}-forced", bytes(k[:7]) + bytes([k[7] | 0x10]) + conv)
            c.add(f"{label}-k{j}", bytes(k) + conv)
    return c


def turn_carry():
    c = Corpus("turn_carry")
    # index, length, how (bit 0 forged, bit 1 no index, bit 2 bad summary), policy
    knobs = [
        (2, 3, 0, 0),        # a run of the history at its index, recency
        (0, 1, 0, 1),        # the first message (a system prompt), summarize
        (1, 0, 0, 0x11),     # the task, pinned 0 and 2
        (255, 7, 0, 0x21),   # past the end
        (3, 2, 1, 2),        # forged fingerprints
        (2, 3, 2, 3),        # no index
        (2, 3, 4, 0x41),     # a summary that is not a message
        (4, 7, 0, 0xe1),     # a long run, larger budget
    ]
    for i, (label, conv) in enumerate(all_conversations()):
        for j in (i % len(knobs), (i + 3) % len(knobs)):
            c.add(f"{label}-k{j}", bytes(knobs[j]) + conv)
    for j, k in enumerate(knobs):
        for label, conv in tool_pairs() + conversations()[:2]:
            c.add(f"{label}-k{j}", bytes(k) + conv)
    return c


def turn_session():
    c = Corpus("turn_session")
    # first cut, edit keep (share of 256), budget byte, strategy
    knobs = [(2, 128, 10, 0), (0, 0, 0, 1), (5, 255, 40, 2), (255, 64, 3, 3), (3, 200, 90, 1),
             (1, 30, 200, 0), (4, 100, 1, 2), (7, 250, 255, 3)]
    for i, (label, conv) in enumerate(all_conversations()):
        if not conv.lstrip().startswith(b"["):
            continue
        for j in (i % len(knobs), (i + 3) % len(knobs), (i + 5) % len(knobs)):
            c.add(f"{label}-k{j}", bytes(knobs[j]) + conv)
    for j, k in enumerate(knobs):
        for label, conv in tool_pairs():
            c.add(f"{label}-k{j}", bytes(k) + conv)
    return c


def skill_files():
    out = []
    for d in sorted(os.listdir(os.path.join(ROOT, "examples/data/skills"))):
        out.append((d, read(f"examples/data/skills/{d}/SKILL.md")))
    for f in sorted(os.listdir(os.path.join(ROOT, "examples/data/skills-flat"))):
        out.append((f, read(f"examples/data/skills-flat/{f}")))
    fm = lambda y, body=b"body\n": b"---\n" + y + b"\n---\n" + body
    good = b"name: fuzzed\ndescription: A skill. Use when fuzzing."
    bomb = [b"a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]"]
    for i, ch in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        bomb.append(f"{ch}: &{ch} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]".encode())
    out += [
        ("good", fm(good)),
        ("good-crlf", fm(good).replace(b"\n", b"\r\n")),
        ("good-bom", b"\xef\xbb\xbf" + fm(good)),
        ("dots-closing", b"---\n" + good + b"\n...\nbody"),
        ("no-closing", b"---\n" + good + b"\nbody without fence\n"),
        ("no-opening", good + b"\n---\n"),
        ("empty-file", b""),
        ("only-fence", b"---\n"),
        ("empty-block", b"---\n---\n"),
        ("not-mapping-list", fm(b"- a\n- b")),
        ("not-mapping-scalar", fm(b"just text")),
        ("alias-bomb", fm(b"\n".join(bomb) + b"\nname: fuzzed\ndescription: x")),
        ("alias-self", fm(b"a: &a\n  b: *a\nname: fuzzed")),
        ("alias-undefined", fm(b"name: *nothing")),
        ("merge-key", fm(b"base: &b {description: x}\n<<: *b\nname: fuzzed")),
        ("deep-flow", fm(b"name: fuzzed\nx: " + b"[" * 5000 + b"]" * 5000)),
        ("deep-flow-unclosed", fm(b"x: " + b"[" * 5000)),
        ("deep-block", fm(b"name: fuzzed\n" + b"".join(b"  " * i + b"k:\n" for i in range(300)) + b"  " * 300 + b"v")),
        ("deep-maps-flow", fm(b"x: " + b"{a: " * 2000 + b"1" + b"}" * 2000)),
        ("many-nodes", fm(good + b"\nitems: [" + b",".join(b"%d" % i for i in range(20000)) + b"]")),
        ("huge-int", fm(good + b"\nn: " + b"9" * 5000)),
        ("huge-float", fm(good + b"\nn: 1e999999")),
        ("special-floats", fm(good + b"\nn: [.inf, -.Inf, .nan]")),
        ("duplicate-keys", fm(b"name: a\nname: b\ndescription: x")),
        ("tags", fm(good + b"\nx: !!python/object:os.system ls\ny: !custom 1\nz: !!binary aGk=")),
        ("yes-no-booleans", fm(good + b"\nallowed: yes\nother: no\nnorway: NO")),
        ("non-string-name", fm(b"name: [1, 2]\ndescription: {a: b}")),
        ("name-traversal", fm(b"name: ../../etc/passwd\ndescription: x")),
        ("name-nul", fm(b'name: "a\\0b"\ndescription: x')),
        ("name-long", fm(b"name: " + b"a" * 5000 + b"\ndescription: x")),
        ("description-long", fm(b"name: fuzzed\ndescription: " + b"word " * 50000)),
        ("invalid-utf8-yaml", fm(b"name: fuzzed\ndescription: \xff\xfe")),
        ("invalid-utf8-body", fm(good, b"\xff\xfe body")),
        ("nul-yaml", fm(b"name: fuzzed\x00\ndescription: x")),
        ("tab-indent", fm(b"name: fuzzed\nmeta:\n\tk: v")),
        ("multi-doc", fm(good + b"\n---\nname: second")),
        ("directives", b"---\n%YAML 1.2\n%TAG ! tag:x,2000:\n---\n" + good + b"\n---\n"),
        ("block-scalars", fm(b"name: fuzzed\ndescription: |\n  multi\n  line\nother: >-\n  folded\n")),
        ("complex-key", fm(b"? [a, b]\n: value\nname: fuzzed")),
        ("unicode", fm("name: fuzzed\ndescription: \u00e9\u4e2d\U0001f600 \u202e rtl".encode())),
        ("cr-only", fm(good).replace(b"\n", b"\r")),
        ("fence-spaces", b"---   \n" + good + b"\n---  \nbody"),
        ("long-line", fm(good + b"\nx: " + b"y" * 70000)),
        ("over-cap", fm(good + b"\n" + b"k: v\n" * 20000)),
    ]
    return out


def skills_frontmatter():
    c = Corpus("skills_frontmatter")
    for i, (label, data) in enumerate(skill_files()):
        c.add(label, bytes([i % 2]) + data)
    for label, data in skill_files()[:7]:
        c.add(label + "-other-layout", bytes([1]) + data)
    return c


def skill_paths():
    c = Corpus("skill_paths")
    names = [
        "alpha", "beta", "ALPHA", " alpha", "alpha ", "alpha\n", "beta.md", "alpha/SKILL.md", "alpha/", "./alpha",
        "outside", "secret", "secret.md", "../secret", "../secret.md", "../outside", "..", ".", "", "...",
        "....//", "..\\secret", "alpha\\..\\beta", "/etc/passwd", "/", "//", "C:", "C:\\Windows", "c:alpha", "\\\\server\\share",
        "alpha\x00", "\x00", "alpha\x00../secret", "al\x01pha", "\x7f", "\u202ealpha", "alph\u0430", "\uff0e\uff0e", "%2e%2e", "..%2fsecret",
        "a" * 300, "a" * 5000, "beta\r", "~", "~root", "$HOME", "alpha;beta", "*", "alpha*", "beta?",
        "..\u2215secret", "\u2024\u2024", "alpha/../beta", "skills/alpha", "SKILL.md", "-alpha", "alpha.", "nul", "con", "a:b",
    ]
    for n in names:
        c.add("name-" + (n.encode("unicode_escape").decode() or "empty"), n.encode("utf-8", "surrogatepass"))
    c.add("invalid-utf8", b"alph\xff")
    c.add("invalid-utf8-dots", b"..\xc0\xaf" + b"secret")
    return c


def model_locate():
    c = Corpus("model_locate")
    names = [
        "good", "good:latest", "registry.ollama.ai/library/good:latest", "https://registry.ollama.ai/library/good",
        "library/good", "goood", "good:8b", "hf.co/org/repo:Q4_K_M", "user/model:tag", "localhost:5000/ns/m",
        "../../etc", "../store/secret", "/etc/passwd", "a\\b", "good\x00", ".", "..", "a/b/c/d", "a/../b/c/d",
        "qwen3:", ":tag", "m:t:u", "ns.x/model", "-x", "_x", "good@sha256:" + "ab" * 32, "a" * 81, "a" * 400, "\u00e9",
    ]
    for n in names:
        c.add("name-" + n.encode("unicode_escape").decode(), b"\x00" + n.encode())
    h = "ab" * 32
    good = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
            "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": "sha256:" + h, "size": 4},
            "layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:" + h, "size": 4}]}
    manifests = [json.dumps(good), "{not json", "[]", "null", "{}", '{"layers": {}}',
                 json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:../../secret"}]}),
                 json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256-" + h}]}),
                 json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:" + "cd" * 32}]}),
                 json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + h}]}),
                 json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": 7}]})]
    for i, m in enumerate(manifests):
        c.add(f"manifest-{i}", b"\x01" + m.encode())
    for r in ["Org/Good", "Org/Good@main", "Org/Good@c0ffee", "Org/Goood", "Org/..", "Org/Good@../../x", "a/b/c",
              "Org/Go od", "Org/Good--x", "Org/Good.git", "/nonexistent", "~", "Org/Good@", "Org/Good@refs/../main"]:
        c.add("hf-" + r, b"\x02" + r.encode())
    for ref in ["c0ffee", "c0ffee\n", "../../../etc", "", "c0ffee/..", "deadbeef", " " * 10, "x" * 200]:
        c.add("ref-" + (ref.strip() or "blank"), b"\x03" + ref.encode())
    return c


def handoff():
    c = Corpus("handoff")
    cases = json.load(open(os.path.join(ROOT, "tests/vectors/handoff.cases.json")))["cases"]
    seeds = []
    for f in sorted(os.listdir(os.path.join(ROOT, "examples/data/handoffs"))):
        seeds.append((f, read("examples/data/handoffs/" + f)))
    for case in cases:
        h = case["input"].get("handoff")
        if h is not None:
            seeds.append((case["name"], h.encode() if isinstance(h, str) else js(h)))
    base = {"version": "1.0", "task_summary": "Fix it.", "key_outputs": [], "metadata": {"from_agent": "a", "to_agent": "b", "created_at": "2026-03-01T12:00:00Z"}}

    def variant(**kw):
        v = json.loads(json.dumps(base))
        for k, val in kw.items():
            if val is None:
                v.pop(k, None)
            else:
                v[k] = val
        return js(v)

    seeds += [
        ("no-version", variant(version=None)),
        ("version-2", variant(version="2.0")),
        ("version-number", variant(version=1)),
        ("summary-empty", variant(task_summary="")),
        ("summary-long", variant(task_summary="word " * 60000)),
        ("summary-nul", variant(task_summary="a\u0000b")),
        ("key-outputs-many", variant(key_outputs=[{"label": f"o{i}", "content": "x " * 50} for i in range(500)])),
        ("key-outputs-strings", variant(key_outputs=["plain", "", "\u0000"])),
        ("key-outputs-wrong", variant(key_outputs={"a": 1})),
        ("created-at-bad", variant(metadata={"from_agent": "a", "to_agent": "b", "created_at": "2026-13-45T99:99:99Z"})),
        ("created-at-leap", variant(metadata={"from_agent": "a", "to_agent": "b", "created_at": "2024-02-29T23:59:60+14:00"})),
        ("created-at-huge-year", variant(metadata={"from_agent": "a", "to_agent": "b", "created_at": "999999999-01-01T00:00:00Z"})),
        ("metadata-extra", variant(metadata={"from_agent": "a", "to_agent": "b", "created_at": "2026-03-01T12:00:00Z", "x": [1]})),
        ("custom-fields-deep", variant(custom_fields={"a": json.loads("[" * 100 + "]" * 100)})),
        ("custom-fields-big-number", b'{"version":"1.0","task_summary":"x","key_outputs":[],"metadata":{"from_agent":"a","to_agent":"b","created_at":"2026-03-01T12:00:00Z"},"custom_fields":{"n":' + b"9" * 400 + b"}}"),
        ("unknown-field", variant(extra=True)),
        ("agents-hostile", variant(metadata={"from_agent": "</handoff>\"<x>&", "to_agent": "\u202e", "created_at": "2026-03-01T12:00:00Z"})),
    ]
    seeds += hostile_json()
    knobs = [(0, 0), (1, 1), (4, 2), (16, 3), (255, 0x80), (2, 0x81)]
    for i, (label, data) in enumerate(seeds):
        c.add(label, bytes(knobs[i % len(knobs)]) + data)
    return c


def recovery():
    c = Corpus("recovery")
    providers = ["openai", "azure", "anthropic", "bedrock", "gemini", "ollama", "other"]
    vectors = json.load(open(os.path.join(ROOT, "tests/vectors/recovery.json")))["vectors"]
    for v in vectors:
        inp = v.get("input", {})
        if v.get("op") != "classify" or not isinstance(inp, dict):
            continue
        # As a JSON request (mode 0) and as a raw body (mode 1).
        c.add(v["name"] + "-json", bytes([0, 0, 0, 0]) + js(inp))
        p = providers.index(inp["provider"]) if inp.get("provider") in providers else 6
        st = int(inp.get("status", 0)) & 0xFFFF
        body = inp.get("body", "")
        body = body.encode() if isinstance(body, str) else js(body)
        c.add(v["name"] + "-body", bytes([p, st & 0xFF, st >> 8, 1]) + body)
    # An error context alone (mode 0): parsed by ErrorContext::from_json.
    c.add("context-only-json", bytes([0, 0, 0, 0]) + js({"agent_id": "narrator", "workflow_id": "wf-7", "metadata": {"turn": 3}}))
    for f in sorted(os.listdir(os.path.join(ROOT, "examples/data/errors"))):
        c.add(f, bytes([providers.index(f.split("-")[0]) if f.split("-")[0] in providers else 6, 429 & 0xFF, 429 >> 8, 3]) + read("examples/data/errors/" + f))
    retry_afters = ["0", "1", "-1", "4.8", "1e309", "NaN", "inf", "99999999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT",
                    "Fri, 31 Dec 9999 23:59:59 GMT", "", " ", "\u0000", "1\u00002", "\u0661\u0662", "0x10"]
    for ra in retry_afters:
        c.add("retry-after-" + ra.encode("unicode_escape").decode(), bytes([0, 429 & 0xFF, 429 >> 8, 3]) + ra.encode() + b"\n{}")
        c.add("retry-after-json-" + ra.encode("unicode_escape").decode(), bytes([2, 0, 0, 0]) + js({"provider": "anthropic", "status": 529, "headers": {"retry-after": ra, "retry-after-ms": ra}}))
    for label, data in hostile_json():
        c.add("hostile-" + label, bytes([0, 0xF4, 0x01, 1]) + data)
        c.add("hostile-json-" + label, bytes([1, 0, 0, 0]) + data)
    c.add("status-max", bytes([0, 0xFF, 0xFF, 1]) + b"error")
    c.add("unknown-provider", bytes([0, 0, 0, 0]) + js({"provider": "nobody", "status": 500}))
    c.add("body-object", bytes([0, 0, 0, 0]) + js({"provider": "openai", "status": 400, "body": {"error": {"code": "context_length_exceeded", "message": "x"}}}))
    return c


def abi():
    c = Corpus("abi")
    convs = conversations()
    conv = convs[0][1]
    per_slot = {
        0: [b"cl100k_base", b"o200k_base", b"nope"],
        1: [b"gpt-4o", b"claude-sonnet-4", b"unknown-model"],
        2: [b"hello world", "\u00e9\u4e2d\U0001f600".encode()],
        3: [b"a " * 100],
        4: [b"round trip me", b" " * 300, "x\u0301".encode()],
        5: [bytes(range(0, 60))],
        6: [b"\x00\x00\x01\x00\x00\x02\xff\xff\xff"],
        7: [b"text to truncate " * 20],
        8: [b"[cut]"],
        9: [js({"budget": 50, "sections": [{"name": "a", "text": "hello", "priority": 1}]}), b'{"sections":[]}'],
        10: [conv, convs[-1][1]],
        11: [js({"model": "gpt-4o", "max_tokens": 40}), js({"model": "claude-sonnet-4", "policy": {"strategy": "summarize"}})],
        12: [b"gpt-4o", b"claude-sonnet-4"],
        13: [js({"context_window": 1000, "reserved_output": 100}), b'{"context_window":0}'],
        14: [conv] + [x[1] for x in tool_pairs()],
        15: [js({"role": "user", "content": "pushed"}), js({"role": "assistant", "tool_calls": [{"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})],
        16: [js([{"role": "user", "content": "new"}]), js({"role": "user", "content": "new"})],
        17: [b"[synthetic result]"],
        18: [js({"strategy": "relevance", "target_tokens": 30, "limit_tokens": 50}), js({"strategy": "summarize", "target_tokens": 10, "limit_tokens": 10})],
        19: [b"summary-id"],
        20: [read("examples/data/handoffs/" + sorted(os.listdir(os.path.join(ROOT, "examples/data/handoffs")))[0])],
        21: [read("examples/data/handoffs/" + sorted(os.listdir(os.path.join(ROOT, "examples/data/handoffs")))[-1])],
        22: [js({"budget": 10}), js({"encoding": "o200k_base", "include_custom_fields": False})],
        23: [conv],
        24: [js({"mode": "last_n", "n": 2}), b'{"mode":"everything"}'],
        25: [read("examples/data/errors/openai-rate-limit.json"), b"upstream connect error"],
        26: [b"anthropic", js({"retry-after": "3"})],
        27: [js({"attempt": 3, "policy": {"base_ms": 100, "max_ms": 10000}}), js({"attempt": 4294967295})],
        28: [js({"failure_threshold": 1, "cooldown_ms": 10}), b"key-1"],
        29: [js({"max_depth": 4, "frames": ["a", "b"]}), b"agent-a"],
        30: [js({"models": [{"name": "my-model*", "encoding": "o200k_base", "context_window": 1000}]}), b"gpt-4o",
             js({"name": "house-llm", "encoding": "o200k_base", "context_window": 8000, "exact": False}),
             js({"name": "house-*", "encoding": "cl100k_base", "exact": False})],
        31: [js({"tools": [{"name": "t", "description": "d", "parameters": {"type": "object"}}], "model": "gpt-4o"})],
        32: [js({"max_spans": 4}), b"tool-name"],
        33: [js({"layout": "flat"}), b"skill-name", js({"budget": 10})],
        34: [read("tests/vectors/files/tiny-sentencepiece.tokenizer.json"), b"hello <|end|> world",
             b"GGUF\x03\x00\x00\x00" + bytes(16), b"IQ== 0\n"],
    }
    hostile = [b"", b"\xff\xfe\xfd", b"a\x00b", b"[" * 20000, b'{"a":' + b"9" * 5000 + b"}", b"\xed\xa0\x80", b"../../etc/passwd"]
    for slot in range(35):
        for j, data in enumerate(per_slot.get(slot, [])):
            c.add(f"fn{slot:02d}-seed{j}", bytes([slot]) + data)
        # Every slot also gets hostile bytes, round-robin.
        c.add(f"fn{slot:02d}-hostile", bytes([slot]) + hostile[slot % len(hostile)])
    return c


def tokenizer_files():
    """Small tokenizer.json files covering every component the loader reads,
    then broken copies of them."""
    def byte_char(b):
        printable = lambda x: 33 <= x <= 126 or 161 <= x <= 172 or 174 <= x <= 255
        if printable(b):
            return chr(b)
        return chr(256 + sum(1 for x in range(b) if not printable(x)))

    llama3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    qwen = llama3.replace(r"\p{N}{1,3}", r"\p{N}")
    vocab = {byte_char(b): b for b in range(256)}
    merges = [["Ġ", "t"], ["h", "e"], ["Ġt", "he"], ["Ġ", "Ġ"], ["ĠĠ", "ĠĠ"]]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    added = [
        {"id": 300, "content": "<|end|>", "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True},
        {"id": 301, "content": "<tool>", "single_word": True, "lstrip": True, "rstrip": True, "normalized": True, "special": False},
    ]
    post = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|end|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"<|end|>": {"id": "<|end|>", "ids": [300], "tokens": ["<|end|>"]}}}

    def byte_level(pattern, normalizer=None, extra_pre=()):
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}, *extra_pre,
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
        return {"version": "1.0", "added_tokens": added, "normalizer": normalizer, "pre_tokenizer": pre,
                "post_processor": post, "decoder": {"type": "ByteLevel"},
                "model": {"type": "BPE", "dropout": None, "unk_token": None, "fuse_unk": False, "byte_fallback": False,
                          "ignore_merges": True, "vocab": vocab, "merges": merges}}

    sp_vocab = {"<unk>": 0, "\u2581": 1, "a": 2, "b": 3, "\u2581a": 4, "ab": 5, "aa": 6}
    for b in range(256):
        sp_vocab[f"<0x{b:02X}>"] = len(sp_vocab)
    sentencepiece = {
        "added_tokens": [{"id": 0, "content": "<unk>", "special": True, "normalized": False}],
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                       {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False},
        "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                    {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True, "vocab": sp_vocab,
                  "merges": ["\u2581 a", "a b", "a a"]},
    }
    good = [
        ("llama3", byte_level(llama3)),
        ("qwen-nfc", byte_level(qwen, {"type": "NFC"})),
        ("digits-and-gpt2", byte_level(r"\p{L}+", {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "NFD"}]},
                                       [{"type": "Digits", "individual_digits": True},
                                        {"type": "ByteLevel", "add_prefix_space": True, "use_regex": True}])),
        ("deepseek-three-splits", byte_level(r"\p{N}{1,3}", None, [
            {"type": "Split", "pattern": {"Regex": "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"}, "behavior": "Isolated", "invert": False},
            {"type": "Split", "pattern": {"Regex": qwen}, "behavior": "Isolated", "invert": False}])),
        ("fancy-lookbehind", byte_level(r"(?<=a)b|\w+|\s+")),
        ("sentencepiece", sentencepiece),
    ]
    behaviours = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
    for i, b in enumerate(behaviours):
        f = byte_level(r"\s")
        f["pre_tokenizer"]["pretokenizers"][0]["behavior"] = b
        f["pre_tokenizer"]["pretokenizers"][0]["invert"] = i % 2 == 1
        good.append((f"behaviour-{b}", f))
    texts = [b"The theme: 'tis <|end|> and <tool> here\n\n  x", "caf\u0065\u0301 \u4e2d\u6587 123456 \U0001f468\u200d\U0001f469".encode(),
             b"a" * 3000, b"  \t\n \xff\xfe", b""]
    out = []
    for i, (label, f) in enumerate(good):
        data = json.dumps(f, ensure_ascii=i % 2 == 0).encode()
        out.append((label, data, texts[i % len(texts)]))
        out.append((label + "-text2", data, texts[(i + 2) % len(texts)]))
    base = json.dumps(good[0][1]).encode()
    broken = [
        ("truncated-half", base[: len(base) // 2]),
        ("truncated-end", base[:-1]),
        ("empty", b""),
        ("spaces", b"   \n"),
        ("not-json", b"GGUF\x03\x00\x00\x00"),
        ("array", b"[1, 2, 3]"),
        ("deep", b'{"model":' + b"[" * 200 + b"]" * 200 + b"}"),
        ("huge-number", base.replace(b'"<|end|>", "single_word"', b'"<|end|>", "single_word"').replace(b'"id": 300', b'"id": 99999999999999999999')),
        ("nul", base.replace(b"Split", b"Sp\x00lit")),
        ("invalid-utf8", base.replace(b"Split", b"Sp\xfflit")),
    ]
    def mutated(label, fn):
        f = json.loads(json.dumps(good[0][1]))
        fn(f)
        broken.append((label, json.dumps(f).encode()))
    mutated("unigram", lambda f: f["model"].update(type="Unigram"))
    mutated("wordpiece", lambda f: f["model"].update(type="WordPiece"))
    mutated("dropout", lambda f: f["model"].update(dropout=0.5))
    mutated("vocab-array", lambda f: f["model"].update(vocab=["a"]))
    mutated("vocab-missing", lambda f: f["model"].pop("vocab"))
    mutated("merges-missing", lambda f: f["model"].pop("merges"))
    mutated("merge-unknown", lambda f: f["model"]["merges"].append(["zz", "q"]))
    mutated("merge-three", lambda f: f["model"]["merges"].append("a b c"))
    mutated("merge-number", lambda f: f["model"]["merges"].append(7))
    mutated("merge-product-missing", lambda f: f["model"]["merges"].append(["q", "q"]))
    mutated("missing-byte", lambda f: f["model"]["vocab"].pop("Ġ"))
    mutated("bad-regex", lambda f: f["pre_tokenizer"]["pretokenizers"][0].update(pattern={"Regex": "(\\p{L}"}))
    mutated("pattern-neither", lambda f: f["pre_tokenizer"]["pretokenizers"][0].update(pattern={"Glob": "*"}))
    mutated("behaviour-number", lambda f: f["pre_tokenizer"]["pretokenizers"][0].update(behavior=1))
    mutated("flag-string", lambda f: f["pre_tokenizer"]["pretokenizers"][1].update(use_regex="no"))
    mutated("metaspace", lambda f: f.update(pre_tokenizer={"type": "Metaspace", "replacement": "\u2581"}))
    mutated("bert-normalizer", lambda f: f.update(normalizer={"type": "BertNormalizer"}))
    mutated("type-missing", lambda f: f.update(normalizer={"kind": "NFC"}))
    mutated("added-negative", lambda f: f["added_tokens"].append({"id": -1, "content": "x"}))
    mutated("added-empty", lambda f: f["added_tokens"].append({"id": 5, "content": ""}))
    mutated("unk-missing", lambda f: f["model"].update(unk_token="<nope>"))
    mutated("prefix", lambda f: f["model"].update(continuing_subword_prefix="##"))
    mutated("post-unknown", lambda f: f.update(post_processor={"type": "Mystery"}))
    mutated("post-bad-id", lambda f: f["post_processor"]["special_tokens"]["<|end|>"].update(ids=[-3]))
    mutated("decoder-strip-long", lambda f: f.update(decoder={"type": "Strip", "content": "ab", "start": 1, "stop": 1}))
    mutated("sequence-not-array", lambda f: f.update(pre_tokenizer={"type": "Sequence", "pretokenizers": 3}))
    mutated("id-huge", lambda f: f["model"]["vocab"].update(big=4294967295))
    for label, data in broken:
        out.append((label, data, b"some text <|end|>"))
    out.extend(sentencepiece_and_tekken_files(sentencepiece, texts))
    return out


def sentencepiece_and_tekken_files(sentencepiece, texts):
    """Metaspace tokenizer.json files, a llama-type GGUF vocabulary and a
    Mistral Tekken file, then broken copies of each."""
    import base64
    import struct

    out = []
    for label, pre in [
        ("metaspace-first", {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}),
        ("metaspace-always-split", {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}),
        ("metaspace-never-legacy", {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": False, "prepend_scheme": "never"}),
        ("metaspace-bad-scheme", {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "sometimes"}),
        ("metaspace-long-replacement", {"type": "Metaspace", "replacement": "ab"}),
        ("metaspace-prefix-mismatch", {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": False}),
    ]:
        f = dict(sentencepiece, normalizer=None, pre_tokenizer=pre)
        f["added_tokens"] = f["added_tokens"] + [{"id": 1, "content": "<s>", "special": True, "normalized": False}]
        out.append((label, json.dumps(f).encode(), texts[len(out) % len(texts)]))

    def gstr(s):
        b = s.encode() if isinstance(s, str) else s
        return struct.pack("<Q", len(b)) + b

    def kv(key, t, payload):
        return gstr(key) + struct.pack("<I", t) + payload

    def arr(t, items, fmt):
        return struct.pack("<IQ", t, len(items)) + b"".join(struct.pack(fmt, x) for x in items)

    def gguf(pairs):
        return b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + b"".join(pairs)

    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["\u2581", "a", "b", "\u2581a", "ab", "\u2581ab"]
    types = [2, 3, 3] + [6] * 256 + [1] * 6
    scores = [0.0] * 259 + [-1.0, -2.0, -2.0, -5.0, -3.0, -4.0]

    def spm(tokens=tokens, types=types, scores=scores, extra=()):
        return gguf([
            kv("general.architecture", 8, gstr("llama")),
            kv("tokenizer.ggml.model", 8, gstr("llama")),
            kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, len(tokens)) + b"".join(gstr(t) for t in tokens)),
            kv("tokenizer.ggml.scores", 9, arr(6, scores, "<f")),
            kv("tokenizer.ggml.token_type", 9, arr(5, types, "<i")),
            *extra,
        ])

    good_spm = spm()
    spm_text = "a b<s>ab \u00e9\u4e2d  ".encode()
    out.append(("gguf-llama", good_spm, spm_text))
    out.append(("gguf-llama-no-space-prefix", spm(extra=[kv("tokenizer.ggml.add_space_prefix", 7, b"\x00")]), b"a" * 3000))
    out.append(("gguf-llama-truncated", good_spm[: len(good_spm) // 2], spm_text))
    out.append(("gguf-llama-scores-short", spm(scores=scores[:10]), spm_text))
    out.append(("gguf-llama-missing-byte", spm(tokens=[t if t != "<0x80>" else "x" for t in tokens]), spm_text))
    out.append(("gguf-llama-huge-count", good_spm.replace(struct.pack("<IQ", 8, len(tokens)), struct.pack("<IQ", 8, 1 << 60)), spm_text))
    out.append(("gguf-llama-bad-bos", spm(extra=[kv("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 99999))]), spm_text))

    vocab = [{"rank": b, "token_bytes": base64.b64encode(bytes([b])).decode(), "token_str": None} for b in range(256)]
    vocab += [{"rank": 256, "token_bytes": base64.b64encode(b"ab").decode(), "token_str": "ab"},
              {"rank": 257, "token_bytes": base64.b64encode(b"abc").decode(), "token_str": "abc"}]
    tekken = {"config": {"pattern": r"\p{L}+|\s+(?!\S)|\s+|[^\s\p{L}]+", "num_vocab_tokens": 258, "default_vocab_size": 282,
                         "default_num_special_tokens": 25, "version": "v3"}, "vocab": vocab}
    tk_text = b"[INST]abc ab<SPECIAL_24>[/INST]  x"
    out.append(("tekken", json.dumps(tekken).encode(), tk_text))

    def tk(label, fn):
        f = json.loads(json.dumps(tekken))
        fn(f)
        out.append((label, json.dumps(f).encode(), tk_text))

    tk("tekken-specials-listed", lambda f: f.update(special_tokens=[{"rank": 0, "token_str": "<unk>", "is_control": True},
                                                                       {"rank": 1, "token_str": "<s>", "is_control": True}]))
    tk("tekken-v11-no-specials", lambda f: f["config"].update(version="v11"))
    tk("tekken-too-few-ranks", lambda f: f["config"].update(default_vocab_size=9999))
    tk("tekken-huge-specials", lambda f: f["config"].update(default_num_special_tokens=1 << 50))
    tk("tekken-rank-gap", lambda f: f["vocab"][7].update(rank=8))
    tk("tekken-not-bytes", lambda f: f["vocab"][65].update(token_bytes="Qg=="))
    tk("tekken-bad-base64", lambda f: f["vocab"][256].update(token_bytes="a?=="))
    tk("tekken-vocab-object", lambda f: f.update(vocab={"a": 1}))
    data = json.dumps(tekken).encode()
    out.append(("tekken-truncated", data[: len(data) // 2], tk_text))
    return out


def tokenizer_file():
    c = Corpus("tokenizer_file")
    for label, data, text in tokenizer_files():
        c.add(label, len(text).to_bytes(2, "little") + data + text)
    return c


def chat_template():
    """Templates written here (jinja2 features the collection uses, and
    hostile ones), each with a conversation or plain text after it."""
    c = Corpus("chat_template")
    conv = js([{"role": "system", "content": "s"}, {"role": "user", "content": "héllo <|im_end|>"},
               {"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}])
    templates = {
        "loop": "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}",
        "tojson": "{{ bos_token }}{{ tools | tojson(indent=2) }}{{ messages | tojson(ensure_ascii=true) }}{{ strftime_now('%d %b %Y') }}",
        "generation": "{% for m in messages %}{%- generation -%}{{ m.content }}{%- endgeneration -%}{% endfor %}",
        "namespace": "{% set ns = namespace(first=true) %}{% for m in messages[::-1] %}{% if ns.first %}{{ m.content.strip() }}{% set ns.first = false %}{% endif %}{% endfor %}",
        "raise": "{% if messages[0].role != 'user' %}{{ raise_exception('user first') }}{% endif %}",
        "macro-recursion": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
        "nested-loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "doubling": "{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
        "big-output": "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
        "dunder": "{{ messages.__class__.__mro__ }}{{ cycler.__init__.__globals__.os }}{% include '/etc/passwd' %}",
        "markup": "{{ 'a'|safe + messages[0].content }}",
        "syntax-error": "{% for m in messages %}{{ m.content }",
        "deep-if": "{% if true %}" * 400,
        "methods": "{% for m in messages %}{{ m.content.split(' ')[0].lower() }}{% for k, v in m.items() %}{{ k }}{% endfor %}{{ m.get('name', 'n') }}{% endfor %}",
        "filters": "{{ messages | map(attribute='role') | join(',') }}{{ messages | selectattr('role', 'equalto', 'user') | list | length }}{{ (messages[0].content | default('')) [:3] }}",
        "loop-controls": "{% for m in messages %}{% if loop.first %}{% continue %}{% endif %}{{ loop.index }}{{ loop.previtem.role if loop.previtem }}{% if loop.last %}{% break %}{% endif %}{% endfor %}",
        "tool-calls": "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.name }}({{ c.function.arguments if c.function.arguments is string else c.function.arguments | tojson }}){% endfor %}{% endfor %}",
        "string-concat-loop": "{% set ns = namespace(s='') %}{% for m in messages * 1000 %}{% set ns.s = ns.s + m.role %}{% endfor %}{{ ns.s | length }}",
        "recursive-loop": "{% for m in messages recursive %}{{ loop(messages) }}{% endfor %}",
        # Counting (PromptCounter): special-token text typed by the user and
        # the template's own; a split that parts the markers around one.
        "count-special": "{{ bos_token }}{% for m in messages %}{{ m.content }}<|end|>{% endfor %}",
        "count-split": "{% for m in messages %}{{ m.content.split('|') | join(' ') }}{{ m.content[:3] }}{% endfor %}",
    }
    marked = js([{"role": "user", "content": "a<|end|>b<s>\U000f0000<s>\U000f0001 <|end|"}])
    for label, t in templates.items():
        for suffix, tail in (("conv", conv), ("text", b"plain text"), ("not-messages", b"[1, null, \"x\"]")):
            c.add(f"{label}-{suffix}", len(tail).to_bytes(2, "little") + t.encode() + tail)
        if label.startswith("count-"):
            c.add(f"{label}-marked", len(marked).to_bytes(2, "little") + t.encode() + marked)
    return c


def window_tiers():
    """Multi-scale windows (issue 53): window size, tier shares, flags, then a
    real trajectory (tests/fixtures/trajectories; the 199-message astroid run
    left out to keep the replay short)."""
    c = Corpus("window_tiers")
    fx = "tests/fixtures/trajectories/"
    files = sorted(f for f in os.listdir(os.path.join(ROOT, fx)) if f.endswith(".json") and "astroid" not in f and f != "manifest.json")
    knobs = [
        (3000, (6, 2, 2), 0),      # roomy, digest
        (2000, (3, 2, 2), 0x21),   # host summarizer, 16-word replies
        (600, (1, 1, 1), 0),       # small: the wall decides
        (256, (2, 1, 1), 0x03),    # the smallest window, one-word replies
        (8000, (8, 1, 1), 0xff),   # long replies, cut to the tier
        (1200, (1, 4, 4), 0),      # summaries larger than the immediate tier
        (65535, (1, 1, 1), 0x01),  # huge window: empty replies fall back
    ]
    for f in files:
        for j, (cw, shares, flags) in enumerate(knobs):
            c.add(f"{f[:-5]}-k{j}", cw.to_bytes(2, "little") + bytes(shares) + bytes([flags]) + read(fx + f))
    return c

if __name__ == "__main__":
    import sys

    # `python3 fuzz/gen_corpus.py tokenizer_file` regenerates only the named corpora.
    wanted = set(sys.argv[1:])
    for gen in [chat_codecs, window_fit, window_tiers, turn_carry, turn_session, skills_frontmatter, skill_paths, model_locate, handoff, recovery, abi, tokenizer_file, chat_template]:
        if wanted and gen.__name__ not in wanted:
            continue
        corpus = gen()
        print(f"{gen.__name__}: {corpus.count()} seeds")

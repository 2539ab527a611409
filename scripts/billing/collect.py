#!/usr/bin/env python3
"""Collects recorded request/usage pairs from VCR cassettes into
tests/fixtures/billing/{openai,anthropic}.jsonl.

Sources are PyPI source distributions (their tests/ directories ship the
cassettes); see tests/fixtures/billing/SOURCES.md for packages, versions,
sha256 and licences. Needs PyYAML (collection only; the harness does not).

  python3 scripts/billing/collect.py /path/to/unpacked/sdists...
  python3 scripts/billing/collect.py --set 2 /path/to/unpacked/sdists...

With `--set NAME` the records go to {openai,anthropic}-NAME.jsonl (a second
collection, kept apart from the first); a package whose entry names a
split puts all of its records on that side (tuning or hold-out) instead of
splitting by the hash of the source path.

Each record: {id, provider, model, shape, holdout, request, usage, source}.
`--set responses` collects OpenAI Responses API requests instead (records
carry `"api": "responses"`; billed is `usage.input_tokens`).
`--set responses-2` (any `responses-NAME`) collects a later Responses set:
every record is hold-out, and recordings already in openai-responses.jsonl
(the same body billed the same) are left out. Earlier pydantic-ai commits
come from scripts/billing/pydantic_history.sh.
Only requests the provider answered with 200 and whose usage is recorded are
kept. Identical (request, usage) pairs are kept once. Bodies over the size
cap are dropped, except that base64 image/document data longer than 8 KiB is
cut to its first 8 KiB (the header, which carries an image's size, stays)
and the record says so in source.truncated.
"""
import base64, gzip, hashlib, json, os, re, sys
import yaml

CAP = 120_000
B64_KEEP = 8192

PACKAGES = {
    # unpacked dir prefix -> (repo, path prefix in the repo, package, licence)
    "crewai-1.15.30": ("crewAIInc/crewAI", "lib/crewai/", "crewai==1.15.30", "MIT"),
    "langchain_openai-1.7.4": ("langchain-ai/langchain", "libs/partners/openai/", "langchain-openai==1.7.4", "MIT"),
    "langchain_anthropic-1.7.10": ("langchain-ai/langchain", "libs/partners/anthropic/", "langchain-anthropic==1.7.10", "MIT"),
    "langchain_anthropic-1.3.0": ("langchain-ai/langchain", "libs/partners/anthropic/", "langchain-anthropic==1.3.0", "MIT"),
    "langchain_anthropic-1.0.0": ("langchain-ai/langchain", "libs/partners/anthropic/", "langchain-anthropic==1.0.0", "MIT"),
    "langchain_anthropic-0.3.22": ("langchain-ai/langchain", "libs/partners/anthropic/", "langchain-anthropic==0.3.22", "MIT"),
    # Set 2 (issue 36): the legacy `functions` parameter. Tuning: gpt-fn's
    # recordings; hold-out: OpenLLMetry's, opened once to check.
    "gpt_fn-0.2.0": ("livingbio/gpt-fn", "", "gpt-fn==0.2.0", "MIT", False),
    "gpt_fn-0.1.0": ("livingbio/gpt-fn", "", "gpt-fn==0.1.0", "MIT", False),
    "gpt_fn-0.0.19": ("livingbio/gpt-fn", "", "gpt-fn==0.0.19", "MIT", False),
    "opentelemetry_instrumentation_openai-0.62.4": ("traceloop/openllmetry", "packages/opentelemetry-instrumentation-openai/",
                                                    "opentelemetry-instrumentation-openai==0.62.4", "Apache-2.0", True),
    "opentelemetry_instrumentation_langchain-0.62.4": ("traceloop/openllmetry", "packages/opentelemetry-instrumentation-langchain/",
                                                       "opentelemetry-instrumentation-langchain==0.62.4", "Apache-2.0", True),
    "opentelemetry_instrumentation_llamaindex-0.62.4": ("traceloop/openllmetry", "packages/opentelemetry-instrumentation-llamaindex/",
                                                        "opentelemetry-instrumentation-llamaindex==0.62.4", "Apache-2.0", True),
    # Set "responses" (issue 36): OpenAI Responses API requests. pydantic-ai
    # is read from a checkout of the commit named here (`git archive`-like:
    # the directory holds the repository's tests/ at that commit); the
    # hold-out is a third of the cassettes by hash, as in the first set.
    "pydantic-ai-4fda38988f2939fa6ea9cdefcf120693e10ef491": ("pydantic/pydantic-ai", "",
                                                             "pydantic-ai@4fda38988f2939fa6ea9cdefcf120693e10ef491", "MIT"),
    # Set "responses-2" (issue 36): a second Responses hold-out, collected
    # after the Responses function-tool rule was written and opened once to
    # check it. Every record is hold-out. OpenLLMetry's OpenAI package is
    # listed above (set 2, Chat); its Responses cassettes are read here.
    "opentelemetry_instrumentation_openai_agents-0.62.4": ("traceloop/openllmetry",
                                                           "packages/opentelemetry-instrumentation-openai-agents/",
                                                           "opentelemetry-instrumentation-openai-agents==0.62.4",
                                                           "Apache-2.0", True),
    "langchain_openai-1.6.0": ("langchain-ai/langchain", "libs/partners/openai/", "langchain-openai==1.6.0", "MIT", True),
    "langchain_openai-1.4.0": ("langchain-ai/langchain", "libs/partners/openai/", "langchain-openai==1.4.0", "MIT", True),
    "langchain_openai-1.2.0": ("langchain-ai/langchain", "libs/partners/openai/", "langchain-openai==1.2.0", "MIT", True),
    "langchain_openai-1.1.0": ("langchain-ai/langchain", "libs/partners/openai/", "langchain-openai==1.1.0", "MIT", True),
    "langchain_openai-1.0.0": ("langchain-ai/langchain", "libs/partners/openai/", "langchain-openai==1.0.0", "MIT", True),
    "langchain_openai-0.3.35": ("langchain-ai/langchain", "libs/partners/openai/", "langchain-openai==0.3.35", "MIT", True),
    # Set 3 / responses-3 (issue 53): a fit part and a check part of the same
    # collection, split by a hash of the cassette's directory (one test's
    # sync/async/stream recordings stay on one side) before any record was
    # counted. Mirascope's e2e cassettes hold the Chat shapes issue 53 names
    # (`tool_choice: "required"` on gpt-4o; a forced function with
    # `parallel_tool_calls: false`) and Responses requests with function tools.
    "mirascope-2.8.2": ("Mirascope/mirascope", "", "mirascope==2.8.2", "MIT", "fitcheck"),
    "langchain_openai-1.8.1": ("langchain-ai/langchain", "libs/partners/openai/", "langchain-openai==1.8.1", "MIT",
                               "fitcheck"),
    "opentelemetry_instrumentation_openai_v2-2.4b0": ("open-telemetry/opentelemetry-python-contrib",
                                                      "instrumentation-genai/opentelemetry-instrumentation-openai-v2/",
                                                      "opentelemetry-instrumentation-openai-v2==2.4b0", "Apache-2.0",
                                                      "fitcheck"),
    "opentelemetry_instrumentation_agno-0.62.4": ("traceloop/openllmetry", "packages/opentelemetry-instrumentation-agno/",
                                                  "opentelemetry-instrumentation-agno==0.62.4", "Apache-2.0", "fitcheck"),
    "opentelemetry_instrumentation_haystack-0.62.4": ("traceloop/openllmetry",
                                                      "packages/opentelemetry-instrumentation-haystack/",
                                                      "opentelemetry-instrumentation-haystack==0.62.4", "Apache-2.0",
                                                      "fitcheck"),
}

# Responses API collection (`--set responses`): requests to
# https://api.openai.com/v1/responses (or, in cassettes whose URIs are
# redacted, a body with `input` answered by a `response` object), without
# server-side state: a request naming `previous_response_id`, a
# `conversation` or `background` is skipped (its billed input holds items
# the body does not). Requests sent to the ChatGPT Codex backend (a
# `chatgpt-account-id` header) are skipped: not the public API.
RESPONSES = False

# Models the harness can count (OpenAI's own, or Anthropic's); recordings of
# other models sent through an OpenAI-compatible endpoint are skipped.
KNOWN_MODEL = re.compile(r"^(gpt-[345]|o[134]|chatgpt-|claude-(3|haiku|sonnet|opus))")


def load(path):
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    return yaml.load(raw, Loader=yaml.CLoader if hasattr(yaml, "CLoader") else yaml.Loader)


def body_text(b):
    if b is None:
        return None
    if isinstance(b, dict):
        b = b.get("string")
    if isinstance(b, bytes):
        try:
            b = b.decode("utf-8")
        except UnicodeDecodeError:
            try:
                b = gzip.decompress(b).decode("utf-8")
            except Exception:
                return None
    return b


def request_body(rq):
    if isinstance(rq.get("parsed_body"), (dict, list)):
        return rq["parsed_body"]
    try:
        return json.loads(body_text(rq.get("body")) or "")
    except ValueError:
        return None


def response_text(rs):
    if isinstance(rs.get("parsed_body"), (dict, list)):
        return json.dumps(rs["parsed_body"])
    return body_text(rs.get("body"))


def header(r, name):
    for k, v in (r.get("headers") or {}).items():
        if k.lower() == name:
            return v
    return None


def pairs(doc):
    if not isinstance(doc, dict):
        return
    if "interactions" in doc:
        for it in doc["interactions"] or []:
            if not isinstance(it, dict):
                continue
            yield it.get("request") or {}, it.get("response") or {}
    elif "requests" in doc and "responses" in doc:
        for rq, rs in zip(doc["requests"], doc["responses"]):
            if isinstance(rq, dict) and isinstance(rs, dict):
                yield rq, rs


def status(rs):
    s = rs.get("status")
    if isinstance(s, dict):
        return s.get("code")
    return s


def usage_from(text, provider):
    """Usage from a JSON body or an SSE stream."""
    if text is None:
        return None
    t = text.strip()
    if t.startswith("{"):
        try:
            j = json.loads(t)
        except ValueError:
            return None
        if RESPONSES:
            return j.get("usage") if j.get("object") == "response" else None
        return j.get("usage")
    # SSE
    found = {}
    for line in t.splitlines():
        line = line.strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            continue
        try:
            j = json.loads(data)
        except ValueError:
            continue
        if provider == "anthropic":
            if j.get("type") == "message_start":
                found.update((j.get("message") or {}).get("usage") or {})
            elif j.get("type") == "message_delta" and j.get("usage"):
                u = j["usage"]
                for k, v in u.items():
                    if v is not None and (k == "output_tokens" or k not in found or not found[k]):
                        found[k] = v
        elif RESPONSES:
            if j.get("type") == "response.completed" and isinstance(j.get("response"), dict):
                found = j["response"].get("usage") or {}
        elif j.get("usage"):
            found = j["usage"]
    return found or None


def billed(provider, u):
    if not isinstance(u, dict):
        return None
    if provider == "openai":
        return u.get("input_tokens") if RESPONSES else u.get("prompt_tokens")
    if u.get("input_tokens") is None:
        return None
    return u["input_tokens"] + (u.get("cache_creation_input_tokens") or 0) + (u.get("cache_read_input_tokens") or 0)


def truncate_b64(v, flags):
    if isinstance(v, dict):
        return {k: truncate_b64(x, flags) for k, x in v.items()}
    if isinstance(v, list):
        return [truncate_b64(x, flags) for x in v]
    if isinstance(v, str) and len(v) > B64_KEEP and (v.startswith("data:") or re.fullmatch(r"[A-Za-z0-9+/=\s]+", v[:2000] or "")):
        flags.append(len(v))
        return v[:B64_KEEP]
    return v


# Responses tool types that run on OpenAI's side (their results and hidden
# prompts are billed as input but are not in the body).
CLIENT_TOOL_TYPES = ("function", "custom")


def responses_shape(req):
    items = req.get("input") if isinstance(req.get("input"), list) else []
    blob = json.dumps(items)
    tools = req.get("tools") or []
    kinds = {i.get("type") for i in items if isinstance(i, dict)}
    if '"input_image"' in blob or "image_generation_call" in kinds:
        return "images"
    if '"input_file"' in blob:
        return "documents"
    server = any(isinstance(t, dict) and t.get("type") not in CLIENT_TOOL_TYPES for t in tools)
    if server or kinds & {"web_search_call", "file_search_call", "code_interpreter_call", "mcp_call",
                          "mcp_list_tools", "mcp_approval_request", "tool_search_call", "compaction",
                          "item_reference"}:
        return "server_tools"
    if ((req.get("text") or {}).get("format") or {}).get("type") == "json_schema":
        return "structured_output"
    if "reasoning" in kinds:
        return "reasoning_history"
    if kinds & {"function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output"}:
        return "tool_history"
    if tools:
        return "tools"
    return "text"


def shape(provider, req):
    if RESPONSES:
        return responses_shape(req)
    msgs = req.get("messages") or []
    blob = json.dumps(msgs)
    tools = req.get("tools") or []
    if provider == "openai":
        if '"image_url"' in blob:
            return "images"
        if '"type": "file"' in blob or '"input_audio"' in blob:
            return "documents"
        if req.get("response_format", {}) and (req.get("response_format") or {}).get("type") == "json_schema":
            return "structured_output"
        if any(m.get("role") in ("tool", "function") or m.get("tool_calls") or m.get("function_call")
               for m in msgs if isinstance(m, dict)):
            return "tool_history"
        if tools or req.get("functions"):
            return "tools"
        return "text"
    # Remote MCP servers (`mcp_servers`) are server tools too: their tool list is fetched by Anthropic.
    server = bool(req.get("mcp_servers")) or any(isinstance(t, dict) and t.get("type") not in (None, "custom") for t in tools)
    if '"type": "image"' in blob:
        return "images"
    if '"type": "document"' in blob:
        return "documents"
    if server or re.search(r'"type": "(server_tool_use|mcp_tool_use|[a-z_]+_tool_result|container_upload|compaction|search_result)"', blob):
        return "server_tools"
    if req.get("output_format") or (req.get("output_config") or {}).get("format"):
        return "structured_output"
    if '"tool_use"' in blob or '"tool_result"' in blob:
        return "tool_history"
    if tools:
        return "tools"
    return "text"


def main(args):
    global RESPONSES
    stem = ""
    if args[:1] == ["--set"]:
        stem, args = "-" + args[1], args[2:]
        RESPONSES = stem.startswith("-responses")
    roots = args
    out = {"openai": {}, "anthropic": {}}
    # A later Responses set keeps only recordings the first one does not
    # hold (the same body billed the same is the same recording, whichever
    # package shipped it).
    seen = set()
    fixtures = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "billing")
    earlier = []
    if RESPONSES and stem != "-responses":
        earlier = ["openai-responses.jsonl"]
    if stem.endswith("-3"):
        # Set 3 keeps only recordings no earlier collection holds.
        earlier = sorted(f for f in os.listdir(fixtures) if f.endswith(".jsonl") and not f.endswith("-3.jsonl"))
    for name in earlier:
        for line in open(os.path.join(fixtures, name)):
            r = json.loads(line)
            seen.add((json.dumps(r["request"], ensure_ascii=False, sort_keys=True), r["billed"]))
    for root in roots:
        base = os.path.basename(root.rstrip("/"))
        if base in PACKAGES:
            repo, prefix, package, licence, *split = PACKAGES[base]
        elif RESPONSES and stem != "-responses" and re.fullmatch(r"pydantic-ai-[0-9a-f]{40}", base):
            # Earlier commits of pydantic-ai (set responses-2): the
            # cassettes as they were recorded then (see SOURCES.md).
            repo, prefix, package, licence, split = ("pydantic/pydantic-ai", "", "pydantic-ai@" + base[12:], "MIT",
                                                     [True])
        else:
            sys.exit(f"unknown source {base}: add it to PACKAGES")
        for dirpath, _, files in os.walk(root):
            for fn in sorted(files):
                if not re.search(r"\.ya?ml(\.gz)?$", fn):
                    continue
                full = os.path.join(dirpath, fn)
                rel = os.path.relpath(full, root)
                try:
                    doc = load(full)
                except Exception as e:  # noqa: BLE001
                    print(f"skip {rel}: {e}", file=sys.stderr)
                    continue
                for k, (rq, rs) in enumerate(pairs(doc)):
                    uri = rq.get("uri") or ""
                    if RESPONSES:
                        provider = "openai"
                        req = request_body(rq)
                        if not isinstance(req, dict) or "input" not in req or header(rq, "chatgpt-account-id"):
                            continue
                        if uri != "https://api.openai.com/v1/responses" and not (uri == "**REDACTED**" and "messages" not in req):
                            continue
                        if req.get("previous_response_id") or req.get("conversation") or req.get("background"):
                            continue
                    elif uri.startswith("https://api.openai.com/v1/chat/completions"):
                        provider = "openai"
                    elif uri.startswith("https://api.anthropic.com/v1/messages") and "count_tokens" not in uri:
                        provider = "anthropic"
                    else:
                        continue
                    if status(rs) != 200:
                        continue
                    if not RESPONSES:
                        # pydantic-ai's cassettes keep the body as `parsed_body`.
                        req = request_body(rq)
                    u = usage_from(response_text(rs), provider)
                    n = billed(provider, u)
                    if not isinstance(req, dict) or n is None or not req.get("model"):
                        continue
                    if RESPONSES and n == 0:
                        # A recorded usage of 0 input tokens is a test's stand-in, not a bill.
                        continue
                    if not KNOWN_MODEL.match(str(req["model"])):
                        continue
                    if req.get("n", 1) != 1:
                        pass
                    flags = []
                    req = truncate_b64(req, flags)
                    body = json.dumps(req, ensure_ascii=False, separators=(",", ":"))
                    if len(body) > CAP:
                        continue
                    key = hashlib.sha256((body + json.dumps(u, sort_keys=True)).encode()).hexdigest()
                    if key in out[provider] or (json.dumps(req, ensure_ascii=False, sort_keys=True), n) in seen:
                        continue
                    rid = f"{package}:{rel}#{k}"
                    holdout = hashlib.sha256(f"{repo}/{prefix}{rel}".encode()).digest()[0] % 3 == 0
                    if stem == "-3" and package.startswith("pydantic-ai@"):
                        # pydantic-ai's Chat recordings (none in an earlier
                        # set) are all fit side: the check side's hash put
                        # every `tool_choice: "required"` recording of the
                        # other packages on the check side, so the fit part
                        # had none (decided before any record was counted).
                        holdout = False
                    elif split == ["fitcheck"]:
                        # Check part: half of the cassette directories by hash.
                        d = os.path.dirname(rel)
                        holdout = hashlib.sha256(f"{repo}/{prefix}{d}".encode()).digest()[0] % 2 == 1
                    elif split:
                        holdout = split[0]
                    elif RESPONSES and stem != "-responses":
                        # A later Responses set is a hold-out as a whole.
                        holdout = True
                    src = {"repo": repo, "path": prefix + rel, "interaction": k, "package": package,
                           "commit": None, "licence": licence}
                    if flags:
                        src["truncated"] = f"{len(flags)} base64 value(s) cut to {B64_KEEP} characters"
                    usage = {kk: vv for kk, vv in u.items() if kk in (
                        "prompt_tokens", "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                        "prompt_tokens_details", "input_tokens_details")}
                    rec = {"id": rid, "provider": provider, "model": req["model"],
                           "shape": shape(provider, req), "holdout": holdout,
                           "billed": n, "usage": usage, "request": req, "source": src}
                    if RESPONSES:
                        rec["api"] = "responses"
                    out[provider][key] = rec
    # BILLING_OUT: write somewhere else (scripts/billing/set3.sh compares a
    # fresh collection with the committed files).
    dest = os.environ.get("BILLING_OUT") or fixtures
    os.makedirs(dest, exist_ok=True)
    for provider, recs in out.items():
        recs = sorted(recs.values(), key=lambda r: r["id"])
        if not recs and stem:
            continue
        with open(os.path.join(dest, f"{provider}{stem}.jsonl"), "w") as f:
            for r in recs:
                f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
        print(provider, len(recs), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])

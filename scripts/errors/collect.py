#!/usr/bin/env python3
"""Extracts the provider error responses recorded in the VCR cassettes of
unpacked PyPI sdists (the billing set's packages, tests/fixtures/billing/SOURCES.md)
into tests/fixtures/errors/recorded.jsonl: every interaction a model provider
answered with HTTP 4xx/5xx, one record per distinct (host, status, body).

Only recordings: a host that cannot have answered (a "fake-" endpoint) is
skipped, because its response was written by hand. Expectations are not made
here; they are written by hand in tests/fixtures/errors/expected.json.
Needs PyYAML.

  python3 scripts/errors/collect.py /path/to/crewai-1.15.30 [more unpacked sdists...]
"""
import hashlib
import json
import os
import re
import sys

import yaml

# Hosts of model providers, and the `provider` turnfit's classifier takes.
PROVIDERS = [
    (r"^api\.openai\.com$", "openai"),
    (r"^api\.anthropic\.com$", "anthropic"),
    (r"^generativelanguage\.googleapis\.com$", "gemini"),
    (r"^(.+-)?aiplatform\.googleapis\.com$", "gemini"),
    (r"^openrouter\.ai$", "other"),
    (r"\.openai\.azure\.com$", "azure"),
]
KEEP_HEADERS = {"retry-after", "retry-after-ms", "x-should-retry", "content-type"}
SDISTS = {
    "crewai-1.15.30": ("17de4b7cc3f2c207033e9f82be4f7d749e540b0e415a3885a8d97bb43a90a318",
                       "crewAIInc/crewAI", "lib/crewai/", "MIT"),
    "langchain_openai-1.7.4": ("8fd90e41588526d990f32262447adf8e130d7ce28ed66cefa315e64cc9dd12ce",
                               "langchain-ai/langchain", "libs/partners/openai/", "MIT"),
    "langchain_anthropic-1.7.10": ("72869686960b3d6665f99e7c91c9f6dd4a1d9ccf73d23edd8702eb603cc2e498",
                                   "langchain-ai/langchain", "libs/partners/anthropic/", "MIT"),
}


def provider_of(host):
    if host.startswith("fake-"):
        return None
    for pattern, name in PROVIDERS:
        if re.search(pattern, host):
            return name
    return None


def main(roots):
    seen, out = set(), []
    for root in roots:
        package = os.path.basename(os.path.normpath(root))
        sha, repo, prefix, licence = SDISTS[package]
        for dp, dn, fn in sorted(os.walk(root)):
            dn.sort()
            for f in sorted(fn):
                if not f.endswith((".yaml", ".yml")):
                    continue
                path = os.path.join(dp, f)
                try:
                    doc = yaml.safe_load(open(path, encoding="utf-8"))
                except yaml.YAMLError:
                    continue
                if not isinstance(doc, dict):
                    continue
                for i, it in enumerate(doc.get("interactions") or []):
                    resp, req = it.get("response") or {}, it.get("request") or {}
                    st = resp.get("status")
                    code = st.get("code") if isinstance(st, dict) else st
                    host = re.sub(r"^https?://([^/:]+).*$", r"\1", req.get("uri") or "")
                    provider = provider_of(host)
                    if not isinstance(code, int) or code < 400 or provider is None:
                        continue
                    body = resp.get("body")
                    body = body.get("string") if isinstance(body, dict) else body
                    if isinstance(body, bytes):
                        body = body.decode("utf-8")
                    key = (host, code, body)
                    if key in seen:
                        continue
                    seen.add(key)
                    headers = {k.lower(): v[0] if isinstance(v, list) else v
                               for k, v in (resp.get("headers") or {}).items() if k.lower() in KEEP_HEADERS}
                    rel = os.path.relpath(path, root)
                    rid = f"{provider}-{code}-" + hashlib.sha256(f"{host}{code}{body}".encode()).hexdigest()[:8]
                    out.append({"id": rid, "provider": provider, "host": host, "status": code,
                                "headers": headers, "body": body,
                                "source": {"package": package, "sdist_sha256": sha, "repo": repo,
                                           "path": prefix + rel, "interaction": i, "licence": licence}})
    dest = os.path.join(os.path.dirname(__file__), "../../tests/fixtures/errors/recorded.jsonl")
    with open(dest, "w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"{len(out)} recorded error responses -> {os.path.normpath(dest)}")


if __name__ == "__main__":
    main(sys.argv[1:])

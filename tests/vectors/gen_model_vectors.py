#!/usr/bin/env python3
"""Writes tests/vectors/models.json: what real model names resolve to.

The expectations are written by hand in this file from the providers' model
pages (the `source` of each family in core/data/models.json) and, for the
encodings of OpenAI names, tiktoken 0.14.0's `model.py`. They are not
turnfit's output: each name lists the encoding and limits its provider
publishes, so a lookup that picks the wrong entry fails. No dependencies:
`python3 tests/vectors/gen_model_vectors.py`.
"""

import json
from pathlib import Path

O, C, P, R = "o200k_base", "cl100k_base", "p50k_base", "r50k_base"
H, E, G = "o200k_harmony", "p50k_edit", "gpt2"

# (name, family, encoding, context window, max output tokens, exact, source)
REAL = []


def add(names, family, encoding, ctx, out, exact, source="builtin"):
    for n in names.split():
        REAL.append((n, family, encoding, ctx, out, exact, source))


# OpenAI (https://platform.openai.com/docs/models)
add("gpt-5 gpt-5-2025-08-07 gpt-5-mini gpt-5-mini-2025-08-07 gpt-5-nano gpt-5-nano-2025-08-07 gpt-5-codex",
    "openai", O, 400000, 128000, True)
add("gpt-5-chat-latest", "openai", O, 128000, 16384, True)
add("gpt-5.1 gpt-5.1-2025-11-13 gpt-5.1-codex gpt-5.1-codex-mini gpt-5.2", "openai", O, 400000, 128000, True)
add("gpt-5.1-chat-latest", "openai", O, 128000, 16384, True)
add("gpt-4.1 gpt-4.1-2025-04-14 gpt-4.1-mini gpt-4.1-mini-2025-04-14 gpt-4.1-nano gpt-4.1-nano-2025-04-14",
    "openai", O, 1047576, 32768, True)
add("gpt-4o gpt-4o-2024-08-06 gpt-4o-2024-11-20 gpt-4o-mini gpt-4o-mini-2024-07-18 chatgpt-4o-latest "
    "gpt-4o-audio-preview gpt-4o-search-preview gpt-4.5-preview gpt-4.5-preview-2025-02-27",
    "openai", O, 128000, 16384, True)
add("gpt-4o-2024-05-13", "openai", O, 128000, 4096, True)
add("o1 o1-2024-12-17 o1-pro o3 o3-2025-04-16 o3-mini o3-mini-2025-01-31 o3-pro o3-deep-research "
    "o4-mini o4-mini-2025-04-16 o4-mini-deep-research codex-mini-latest", "openai", O, 200000, 100000, True)
add("o1-mini o1-mini-2024-09-12", "openai", O, 128000, 65536, True)
add("o1-preview", "openai", O, 128000, 32768, True)
add("gpt-oss-120b gpt-oss-20b openai/gpt-oss-120b", "openai", H, 131072, 131072, True)
add("gpt-4 gpt-4-0613 gpt-4-0314", "openai", C, 8192, 8192, True)
add("gpt-4-32k gpt-4-32k-0613", "openai", C, 32768, 32768, True)
add("gpt-4-turbo gpt-4-turbo-2024-04-09 gpt-4-turbo-preview gpt-4-1106-preview gpt-4-0125-preview",
    "openai", C, 128000, 4096, True)
add("gpt-3.5-turbo gpt-3.5-turbo-0125 gpt-3.5-turbo-1106 gpt-3.5-turbo-16k gpt-3.5", "openai", C, 16385, 4096, True)
add("gpt-3.5-turbo-instruct", "openai", C, 4096, 4096, True)
add("gpt-35-turbo gpt-35-turbo-0125", "azure-openai", C, 16385, 4096, True)
add("text-embedding-3-small text-embedding-3-large text-embedding-ada-002", "openai", C, 8191, 0, True)
add("davinci-002 babbage-002", "openai", C, 16384, 16384, True)
add("text-davinci-003 text-davinci-002", "openai", P, 4097, 4097, True)
add("code-davinci-002", "openai", P, 8001, 8001, True)
add("text-davinci-edit-001 code-davinci-edit-001", "openai", E, None, None, True)
add("davinci curie text-davinci-001 text-ada-001", "openai", R, 2049, 2049, True)
add("text-similarity-ada-001 text-search-davinci-doc-001 code-search-ada-code-001", "openai", R, 2046, 0, True)
add("gpt2 gpt-2", "openai", G, 1024, 1024, True)
# Fine-tuned names resolve to their base model; routing prefixes are dropped.
add("ft:gpt-4o-mini-2024-07-18:my-org::9a8b7c6d ft:gpt-4o-2024-08-06:acme:support:AbC123 openai/gpt-4o "
    "azure/gpt-4o-mini", "openai", O, 128000, 16384, True)
add("ft:gpt-3.5-turbo-0125:acme::8zyXwV", "openai", C, 16385, 4096, True)
add("ft:gpt-4-0613:acme::abc", "openai", C, 8192, 8192, True)
add("ft:davinci-002:acme::xyz", "openai", C, 16384, 16384, True)
add("davinci:ft-personal-2022-12-12-00-00-00", "openai", R, 2049, 2049, True)

# Anthropic (https://docs.anthropic.com/en/docs/about-claude/models/overview)
add("claude-opus-4-1-20250805 claude-opus-4-1 claude-opus-4-20250514 claude-opus-4-0 "
    "claude-opus-4-1@20250805 anthropic.claude-opus-4-1-20250805-v1:0",
    "anthropic", C, 200000, 32000, False)
add("claude-sonnet-4-20250514 claude-sonnet-4-0 claude-sonnet-4-5-20250929 claude-sonnet-4-5 "
    "claude-sonnet-4-5@20250929 us.anthropic.claude-sonnet-4-20250514-v1:0 "
    "global.anthropic.claude-sonnet-4-5-20250929-v1:0 claude-haiku-4-5-20251001 claude-haiku-4-5 "
    "claude-haiku-4-5@20251001 claude-opus-4-5-20251101 claude-opus-4-5 claude-3-7-sonnet-20250219 "
    "claude-3-7-sonnet-latest eu.anthropic.claude-3-7-sonnet-20250219-v1:0 anthropic/claude-sonnet-4.5",
    "anthropic", C, 200000, 64000, False)
add("claude-3-5-sonnet-20241022 claude-3-5-sonnet-20240620 claude-3-5-sonnet-v2@20241022 claude-3-5-haiku-20241022 "
    "claude-3-5-haiku-latest anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic", C, 200000, 8192, False)
add("claude-3-opus-20240229 claude-3-haiku-20240307 claude-3-sonnet-20240229", "anthropic", C, 200000, 4096, False)
# Newer than the table: the family estimate.
add("claude-opus-4-6 claude-sonnet-4-6 claude-opus-5 claude-sonnet-5-20270101 anthropic.claude-opus-4-6-v1",
    "anthropic", C, 200000, 64000, False, "family")

# Google (https://ai.google.dev/gemini-api/docs/models)
add("gemini-2.5-pro gemini-2.5-flash gemini-2.5-flash-lite gemini-2.5-flash-preview-09-2025 gemini-3-pro-preview "
    "gemini-3.1-pro-preview models/gemini-2.5-pro google/gemini-2.5-flash "
    "publishers/google/models/gemini-2.5-pro", "google", O, 1048576, 65536, False)
add("gemini-2.0-flash gemini-2.0-flash-001 gemini-2.0-flash-lite gemini-1.5-flash gemini-1.5-flash-8b",
    "google", O, 1048576, 8192, False)
add("gemini-1.5-pro gemini-1.5-pro-002", "google", O, 2097152, 8192, False)
add("gemini-3-flash-preview gemini-4-pro", "google", O, 1048576, 65536, False, "family")

# Meta (https://www.llama.com/docs/model-cards-and-prompt-formats/): no output limit published.
add("llama-3.1-8b-instruct llama-3.1-70b-instruct llama-3.1-405b-instruct llama-3.2-1b-instruct "
    "llama-3.2-3b-instruct llama-3.2-11b-vision-instruct llama-3.3-70b-instruct llama-3.3-70b-versatile "
    "meta-llama/llama-3.1-8b-instruct llama3.1:8b meta.llama3-1-70b-instruct-v1:0 llama3.3:70b",
    "meta", C, 131072, None, False)
add("llama-3-8b-instruct llama3:8b llama3-70b-8192 meta-llama-3-8b-instruct", "meta", C, 8192, None, False)
add("llama-2-70b-chat", "meta", C, 4096, None, False)
add("llama-4-scout-17b-16e-instruct meta-llama/llama-4-scout-17b-16e-instruct", "meta", C, 10485760, None, False)
add("llama-4-maverick-17b-128e-instruct-fp8", "meta", C, 1048576, None, False)

# Mistral (https://docs.mistral.ai/getting-started/models/models_overview/): context only.
add("mistral-large-latest mistral-large-2411 mistral-medium-2505 mistral-medium-latest mistral-small-2503 "
    "mistral-small-latest devstral-small-2505 ministral-8b-2410 ministral-3b-latest pixtral-large-2411 "
    "open-mistral-nemo mistral.mistral-large-2407-v1:0", "mistral", C, 131072, None, False)
add("codestral-2501 codestral-latest", "mistral", C, 262144, None, False)
add("magistral-medium-2506", "mistral", C, 40960, None, False)
add("open-mixtral-8x22b", "mistral", C, 65536, None, False)

# DeepSeek (https://api-docs.deepseek.com/quick_start/pricing)
add("deepseek-chat", "deepseek", C, 128000, 8192, False)
add("deepseek-reasoner", "deepseek", C, 128000, 65536, False)
add("deepseek-v3 deepseek-v3.1 deepseek-r1 deepseek-r1-0528 deepseek-ai/deepseek-r1 deepseek-r1-distill-llama-70b",
    "deepseek", C, 128000, None, False)

# Qwen (https://www.alibabacloud.com/help/en/model-studio/models)
add("qwen-max qwen-max-latest", "qwen", C, 32768, 8192, False)
add("qwen-plus qwen-plus-latest", "qwen", C, 131072, 8192, False)
add("qwen-turbo", "qwen", C, 1000000, 8192, False)
add("qwen2.5-72b-instruct qwen2.5-coder-32b-instruct qwen/qwen2.5-7b-instruct qwq-32b", "qwen", C, 131072, 8192, False)
add("qwen3-235b-a22b qwen3-32b qwen3:8b", "qwen", C, 131072, None, False)

# Near misses: none may resolve.
TYPOS = """
gpt-40 gpt-45 gpt-4oo o3x llama-9 gpt4o gpt-4.7 gpt-5o gpt-6o o5x o1x o4-minii claude-sonet-4 claude-opsu-4-1
claude-opus-40 claude-haiku-45 claud-3-5-sonnet gemini-2.5-prro gemni-2.5-pro gemini-25-pro gemini-2.5-pros
llama-3.1x llama-33-70b lama-3.1-8b mistral-larg mistrall-large deepseek-chatt deepseek-v33 qwen-maxx qwen25-72b
gpt-3.5-turob text-embedding-3-smal text-davinci-004 davinci-003 gpt-oss120b chatgpt-40-latest
ft:gpt-40-mini:org::id claude-opus-4-10 gpt-5.1x llama-4-scot
""".split()


def main() -> None:
    vectors = []
    names = set()
    for name, family, enc, ctx, out, exact, source in REAL:
        assert name not in names, name
        names.add(name)
        vectors.append({
            "name": f"model_lookup/{name}",
            "op": "model_lookup",
            "input": {"model": name},
            "expected": {"family": family, "encoding": enc, "context_window": ctx,
                         "max_output_tokens": out, "exact": exact, "source": source},
        })
    for name in TYPOS:
        assert name not in names, name
        names.add(name)
        vectors.append({
            "name": f"model_lookup/typo/{name}",
            "op": "model_lookup",
            "input": {"model": name},
            "expected": {"error": "unknown_model"},
        })
    doc = {
        "format": 1,
        "generated_by": "tests/vectors/gen_model_vectors.py",
        "oracle": "the providers' published model names and limits (core/data/models.json cites them) and "
                  "tiktoken 0.14.0's model table; written by hand, not turnfit's output",
        "vectors": vectors,
    }
    out = Path(__file__).resolve().parent / "models.json"
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    real = sum(1 for v in vectors if "error" not in v["expected"])
    print(f"wrote {len(vectors)} vectors ({real} real names, {len(vectors) - real} near misses) to {out}")


if __name__ == "__main__":
    main()

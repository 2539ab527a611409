#!/usr/bin/env python3
"""Synthetic coding-agent transcripts with large, error-heavy logs (issue 52).

    python3 bench/gen_log_transcripts.py [OUT_DIR]   # default: bench/inputs/logs

Writes agent_logs_5mb.json, agent_logs_12mb.json and agent_logs_44mb.json
(OpenAI chat shape, `{"messages": [...]}`, compact UTF-8 JSON), each the
same seeded run cut at the first round that reaches the size. What they
hold, and why: the transcripts the `fit` benchmarks used before
(bindings/python/tests/agent_loop.py) have short, uniform tool outputs, so
they never exercised the structured cut of a log in which many lines carry
an error word, which is what a coding agent tailing a service or a CI run
sends. Here:

- a system prompt and one task, then rounds of an assistant turn with one
  to three tool calls (a third of the turns parallel), each answered;
- about three results in ten are logs of 100-2,000 lines in which about a
  third of the lines are `ERROR` or `WARN` (a few dozen distinct messages,
  their ids and durations varying), some with a Python traceback in the
  middle; the rest are short listings, file reads and test summaries;
- a user nudge every 25 rounds.

The output depends only on the seed and this file (no machine state), so
the SHA-256 printed for each file is the same everywhere.
"""
import hashlib
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES_MB = (5, 12, 44)
SEED = 52

SERVICES = ["api", "worker", "scheduler", "billing", "auth", "ingest"]
INFO = [
    "request completed path=/v1/orders/{n} status=200 duration_ms={d}",
    "cache hit key=user:{n} ttl={d}s",
    "job started id=job-{n} queue=default",
    "job finished id=job-{n} duration_ms={d}",
    "connected to postgres://db-{m}.internal:5432/app pool_size={m}",
    "health check ok latency_ms={d}",
    "flushed {n} rows to table events in {d} ms",
    "GET /v1/users/{n} 200 {d}ms",
]
DEBUG = [
    "retry budget remaining={m} for client=payments",
    "span trace_id={h} parent={h} sampled=true",
    "config reloaded from /etc/app/config.yaml (rev {n})",
]
WARN = [
    "slow query took {d} ms: SELECT * FROM orders WHERE customer_id = {n}",
    "retrying request to payments (attempt {m}/5) after {d} ms",
    "connection pool exhausted, waiting for a free connection ({m} waiters)",
    "deprecated config key 'timeout' used; use 'request_timeout'",
    "response size {n} bytes exceeds soft limit",
    "clock skew of {d} ms detected against ntp",
]
ERROR = [
    "failed to process order {n}: upstream timeout after {d} ms",
    "database error: deadlock detected (txn {h})",
    "could not decode payload for job-{n}: invalid JSON at byte {d}",
    "payment declined for order {n}: card_expired",
    "unhandled exception in handler /v1/orders/{n}",
    "TLS handshake with billing-{m}.internal failed: certificate has expired",
    "redis connection reset by peer (attempt {m})",
    "worker job-{n} crashed with exit code {m}",
    "permission denied writing /var/lib/app/cache/{h}",
    "invariant violated: balance < 0 for account {n}",
]
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/app/service/orders.py", line {m}0, in handle',
    "    total = compute_total(order)",
    '  File "/app/service/pricing.py", line {m}4, in compute_total',
    "    return Decimal(raw) * rate",
    "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]",
]
TOOLS = ["run_tests", "tail_log", "kubectl_logs", "read_file", "grep", "list_dir", "build"]
LOG_TOOLS = {"run_tests", "tail_log", "kubectl_logs", "build"}


def fill(rng, template):
    return template.format(
        n=rng.randrange(10**4, 10**7), d=rng.randrange(1, 30000), m=rng.randrange(1, 9),
        h="%012x" % rng.getrandbits(48),
    )


def log_output(rng, lines):
    out = []
    traceback_at = rng.randrange(lines) if rng.random() < 0.3 else -1
    sec = rng.randrange(86400)
    for i in range(lines):
        sec += rng.randrange(0, 3)
        ts = "2026-03-%02dT%02d:%02d:%02d.%03dZ" % (
            1 + sec // 86400 % 28, sec // 3600 % 24, sec // 60 % 60, sec % 60, rng.randrange(1000))
        svc = rng.choice(SERVICES)
        if i == traceback_at:
            out.append(f"{ts} ERROR [{svc}] unhandled exception while pricing order")
            out.extend(fill(rng, t) for t in TRACEBACK)
            continue
        r = rng.random()
        if r < 0.17:
            level, msg = "ERROR", fill(rng, rng.choice(ERROR))
        elif r < 0.34:
            level, msg = "WARN", fill(rng, rng.choice(WARN))
        elif r < 0.42:
            level, msg = "DEBUG", fill(rng, rng.choice(DEBUG))
        else:
            level, msg = "INFO", fill(rng, rng.choice(INFO))
        out.append(f"{ts} {level:<5} [{svc}] {msg}")
    return "\n".join(out)


def short_output(rng, tool):
    if tool == "read_file":
        return "\n".join(f"{i + 1:4}  {'    ' * rng.randrange(3)}value_{rng.randrange(999)} = compute({rng.randrange(99)})"
                         for i in range(rng.randrange(10, 80)))
    if tool == "grep":
        return "\n".join(f"src/mod_{rng.randrange(40)}.py:{rng.randrange(1, 900)}: total = compute_total(order)"
                         for _ in range(rng.randrange(1, 25)))
    if tool == "list_dir":
        return "\n".join(f"mod_{i}.py" for i in range(rng.randrange(3, 40)))
    return f"== {rng.randrange(1, 9)} failed, {rng.randrange(50, 900)} passed in {rng.randrange(2, 90)}.{rng.randrange(10, 99)}s =="


def rounds(rng):
    """Rounds of (assistant message, tool messages), forever."""
    n = 0
    r = 0
    while True:
        calls = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            n += 1
            tool = rng.choice(TOOLS)
            args = {"path": f"src/mod_{rng.randrange(40)}.py"} if tool in ("read_file", "grep", "list_dir") else \
                {"service": rng.choice(SERVICES), "lines": rng.choice([500, 1000, 2000, 3000])}
            calls.append({"id": f"call_{n:06d}", "type": "function",
                          "function": {"name": tool, "arguments": json.dumps(args)}})
        msgs = [{"role": "assistant", "content": f"Round {r}: looking at the logs." if rng.random() < 0.4 else None,
                 "tool_calls": calls}]
        for c in calls:
            tool = c["function"]["name"]
            if tool in LOG_TOOLS and rng.random() < 0.5:
                body = log_output(rng, rng.randrange(100, 2000))
            else:
                body = short_output(rng, tool)
            msgs.append({"role": "tool", "tool_call_id": c["id"], "content": body})
        if r % 25 == 24:
            msgs.append({"role": "user", "content": f"Still failing in production; keep going (after round {r})."})
        yield msgs
        r += 1


def transcript(size_mb):
    rng = random.Random(SEED)
    msgs = [
        {"role": "system", "content": "You are a coding agent on a production incident. Use the tools to find and fix the bug."},
        {"role": "user", "content": "Orders fail intermittently with a decimal error since the last deploy; find out why and fix it."},
    ]
    size = sum(len(json.dumps(m, separators=(",", ":"))) for m in msgs)
    for rnd in rounds(rng):
        msgs.extend(rnd)
        size += sum(len(json.dumps(m, ensure_ascii=False, separators=(",", ":"))) + 1 for m in rnd)
        if size >= size_mb * 1_000_000:
            break
    msgs.append({"role": "assistant", "content": "The pricing code parses an empty rate as a Decimal; fixing it."})
    return {"messages": msgs}


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "inputs", "logs")
    os.makedirs(out_dir, exist_ok=True)
    for mb in SIZES_MB:
        data = json.dumps(transcript(mb), ensure_ascii=False, separators=(",", ":")).encode()
        path = os.path.join(out_dir, f"agent_logs_{mb}mb.json")
        with open(path, "wb") as f:
            f.write(data)
        print(f"{path}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()

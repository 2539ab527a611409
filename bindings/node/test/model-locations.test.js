'use strict'
// registerModelFiles(name, { ollama | hf }): a model's files found where its
// host keeps them (issue 50 item 4), on a Hugging Face hub cache laid out as
// huggingface_hub lays it out (refs/main, snapshots/<commit>/ symlinks into
// blobs/) around the tiny byte-level fixture, and an Ollama store with a
// manifest shaped as Ollama's manifest/manifest.go writes it around
// llama.cpp's Qwen2 vocabulary GGUF (llama-cpp-python 0.3.36 sdist, MIT;
// cached by scripts/open-models.sh, skipped without it).
const test = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const ck = require('..')

const ROOT = path.resolve(__dirname, '../../..')
const BYTE_LEVEL = path.join(ROOT, 'tests/vectors/files/tiny-byte-level.tokenizer.json')
const TEMPLATE =
  '{% for m in messages %}{{ m.role }}:{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}'
const QWEN2_GGUF = path.join(
  ROOT,
  'target/open-models/pypi/llama-cpp-python/llama_cpp_python-0.3.36/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf',
)
const COMMIT = '0123456789abcdef0123456789abcdef01234567'
const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex')

function hubCache() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'turnfit-hub-'))
  const repo = path.join(root, 'models--Org--Tiny')
  const snap = path.join(repo, 'snapshots', COMMIT)
  fs.mkdirSync(path.join(repo, 'refs'), { recursive: true })
  fs.mkdirSync(path.join(repo, 'blobs'))
  fs.mkdirSync(snap, { recursive: true })
  fs.writeFileSync(path.join(repo, 'refs', 'main'), COMMIT)
  const files = { 'tokenizer.json': fs.readFileSync(BYTE_LEVEL), 'tokenizer_config.json': JSON.stringify({ chat_template: TEMPLATE }) }
  for (const [name, data] of Object.entries(files)) {
    const blob = sha256(data)
    fs.writeFileSync(path.join(repo, 'blobs', blob), data)
    fs.symlinkSync(path.join('..', '..', 'blobs', blob), path.join(snap, name))
  }
  return root
}

test('a hub cache model registers and counts as its files', () => {
  const cache = hubCache()
  const msgs = Array.from({ length: 30 }, (_, i) => ({ role: 'user', content: `question ${i}` }))
  ck.registerModelFiles('tiny-node-file', { tokenizer: BYTE_LEVEL, chatTemplate: TEMPLATE, contextWindow: 300 })
  const info = ck.registerModelFiles('tiny-node-hub', { hf: 'Org/Tiny', hfCache: cache, contextWindow: 300 })
  assert.equal(info.exact, true)
  const want = ck.fit(msgs, { model: 'tiny-node-file' }).report
  const got = ck.fit(msgs, { model: 'tiny-node-hub' }).report
  assert.equal(got.tokens_before, want.tokens_before)
  assert.ok(got.tokens_after <= got.limit_tokens)
})

test('bad locations are specific errors', () => {
  const cache = hubCache()
  assert.throws(() => ck.registerModelFiles('m', { hf: 'Org/Tinny', hfCache: cache, contextWindow: 100 }), (e) => e.code === 'unknown_model' && /did you mean: Org\/Tiny/.test(e.message))
  assert.throws(() => ck.registerModelFiles('m', { ollama: '../../etc', ollamaModels: cache, contextWindow: 100 }), (e) => e.code === 'unsafe_path')
  assert.throws(() => ck.registerModelFiles('m', { ollama: 'qwen2', ollamaModels: path.join(cache, 'none'), contextWindow: 100 }), (e) => e.code === 'io' && /no such folder/.test(e.message))
  assert.throws(() => ck.registerModelFiles('m', { tokenizer: BYTE_LEVEL, ollama: 'x', contextWindow: 100 }), TypeError)
  assert.throws(() => ck.registerModelFiles('m', { hfCache: cache, contextWindow: 100 }), TypeError)
})

test('an Ollama model counts as its GGUF', (t) => {
  if (!fs.existsSync(QWEN2_GGUF)) {
    t.skip('run scripts/open-models.sh to cache the Qwen2 vocabulary GGUF')
    return
  }
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'turnfit-ollama-'))
  const digest = sha256(fs.readFileSync(QWEN2_GGUF))
  fs.mkdirSync(path.join(store, 'blobs'))
  fs.symlinkSync(QWEN2_GGUF, path.join(store, 'blobs', `sha256-${digest}`))
  const config = '{"model_format":"gguf","model_family":"qwen2","architecture":"amd64","os":"linux"}'
  fs.writeFileSync(path.join(store, 'blobs', `sha256-${sha256(config)}`), config)
  const dir = path.join(store, 'manifests', 'registry.ollama.ai', 'library', 'qwen2')
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'latest'), JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
    config: { mediaType: 'application/vnd.docker.container.image.v1+json', digest: `sha256:${sha256(config)}`, size: config.length },
    layers: [{ mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${digest}`, size: fs.statSync(QWEN2_GGUF).size }],
  }))
  const msgs = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Héllo, what is 2+2?' }]
  ck.registerModelFiles('qwen2-node-gguf', { tokenizer: QWEN2_GGUF, contextWindow: 4096 })
  ck.registerModelFiles('qwen2-node-ollama', { ollama: 'qwen2', ollamaModels: store, contextWindow: 4096 })
  const want = ck.fit(msgs, { model: 'qwen2-node-gguf' }).report
  const got = ck.fit(msgs, { model: 'qwen2-node-ollama' }).report
  assert.equal(got.exact, true)
  assert.ok(want.tokens_before > 0)
  assert.equal(got.tokens_before, want.tokens_before)
})

'use strict'
// registerModelFiles: a model known by its own files (issue 50). Registered,
// its name works unchanged in fit: totals are the chat template's count
// (exact) and the fitted prompt is within the limit. On the tiny byte-level
// fixture, then on Qwen3's real files with a real trajectory when
// scripts/templates.sh has cached them (skipped with a message otherwise).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const ck = require('..')

const ROOT = path.resolve(__dirname, '../../..')
const BYTE_LEVEL = path.join(ROOT, 'tests/vectors/files/tiny-byte-level.tokenizer.json')
const TEMPLATE =
  '{% for m in messages %}{{ m.role }}:{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}'
const QWEN3 = path.join(ROOT, 'target/open-models/npm/tokenizer-qwen3/package/models/tokenizer.json')
const ASTROID = path.join(ROOT, 'tests/fixtures/trajectories/mini-swe-agent-astroid-1866.openai.json')

function renderedCount(messages) {
  const text = messages.map((m) => `${m.role}:${m.content}<|end|>`).join('') + 'assistant:'
  return new ck.FileTokenizer(BYTE_LEVEL, { special: 'recognize' }).countTokens(text)
}

function chat(n) {
  const msgs = [{ role: 'system', content: 'Be brief.' }]
  for (let i = 0; i < n; i++) {
    msgs.push({ role: 'user', content: `question ${i} about the weather in a city` })
    msgs.push({ role: 'assistant', content: `answer ${i}: it is sunny there today` })
  }
  return msgs
}

test('a model registered from its files is exact in fit', () => {
  const info = ck.registerModelFiles('tiny-node-files', { tokenizer: BYTE_LEVEL, chatTemplate: TEMPLATE, contextWindow: 2000 })
  assert.equal(info.source, 'host')
  assert.equal(info.exact, true)
  const msgs = chat(60)
  for (const max of [undefined, 1500, 800]) {
    const { conversation, report } = ck.fit(msgs, { model: 'tiny-node-files', max_tokens: max })
    assert.equal(report.exact, true)
    assert.equal(report.tokens_before, renderedCount(msgs))
    assert.equal(report.tokens_after, renderedCount(conversation))
    assert.ok(report.tokens_after <= report.limit_tokens)
    assert.ok(conversation.length < msgs.length)
  }
})

test('bad model files throw specific errors', () => {
  const bad = (name, files, code, re) =>
    assert.throws(() => ck.registerModelFiles(name, files), (e) => e.code === code && re.test(e.message))
  bad('gpt-4o', { tokenizer: BYTE_LEVEL, chatTemplate: TEMPLATE, contextWindow: 100 }, 'invalid_argument', /built-in/)
  bad('m', { tokenizer: '/nonexistent/tokenizer.json', contextWindow: 100 }, 'io', /nonexistent/)
  bad('m', { tokenizer: BYTE_LEVEL, contextWindow: 100 }, 'invalid_argument', /no chat template found/)
  bad('m', { tokenizer: BYTE_LEVEL, chatTemplate: "{{ raise_exception('no system role') }}", contextWindow: 100 },
    'invalid_argument', /no system role/)
  bad('m', { tokenizer: BYTE_LEVEL, chatTemplate: TEMPLATE }, 'invalid_json', /context_window/)
  assert.throws(() => ck.registerModelFiles('m', { contextWindow: 100 }), TypeError)
  assert.throws(() => ck.registerModelFiles(7, { tokenizer: BYTE_LEVEL }), TypeError)
})

test('Qwen3 from its files fits a real trajectory', { skip: !fs.existsSync(QWEN3) && `${QWEN3} not cached: run scripts/templates.sh` }, () => {
  ck.registerModelFiles('qwen3-node-files', { tokenizer: QWEN3, contextWindow: 32768 })
  const doc = JSON.parse(fs.readFileSync(ASTROID, 'utf8'))
  for (const max of [4096, 8192, 16384]) {
    const { conversation, report } = ck.fit(doc, { model: 'qwen3-node-files', max_tokens: max })
    assert.equal(report.exact, true)
    assert.ok(report.tokens_after <= report.limit_tokens, `${report.tokens_after} over ${report.limit_tokens}`)
    assert.ok(report.tokens_after < report.tokens_before)
    const again = ck.fit(conversation, { model: 'qwen3-node-files', max_tokens: 1000000 }).report
    assert.equal(again.tokens_before, report.tokens_after)
  }
})

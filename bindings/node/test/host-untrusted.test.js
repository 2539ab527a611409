'use strict'
// Issue 48, causes N and O: everything a host summarizer returns or throws
// is untrusted; the turn falls back to the digest and only turnfit's own
// errors reject. A timeout_ms beyond setTimeout's range is waited for, not
// fired at once.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const ck = require('..')

const ROOT = path.resolve(__dirname, '../../..')
const HISTORY = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples/data/agent-loop.json'), 'utf8'))
const options = (timeoutMs = 200) => ({
  model: 'gpt-4o',
  max_tokens: 16000,
  policy: { strategy: 'summarize', mask: { enabled: false } },
  summarizer: { timeout_ms: timeoutMs },
})

const throwing = (why) => {
  throw new Error(why)
}

const HOSTILE = [
  ['throws Object.create(null)', () => { throw Object.create(null) }, 'error'],
  ['throws an object whose toString throws', () => { throw { toString: () => throwing('no words') } }, 'error'],
  [
    'throws a Proxy of an Error whose traps throw',
    () => {
      throw new Proxy(new Error('x'), { get: () => throwing('trap'), getPrototypeOf: () => throwing('proto') })
    },
    'error',
  ],
  ['throws a Symbol', () => { throw Symbol('s') }, 'error'],
  ['rejects with an Error whose name getter throws', async () => {
    const e = new Error('x')
    Object.defineProperty(e, 'name', { get: () => throwing('name') })
    throw e
  }, 'error'],
  ['replies with an object whose content getter throws', () => ({ get content() { return throwing('content') } }), 'not_text'],
  ['replies with an object whose tool_calls getter throws', () => ({ content: 'ok', get tool_calls() { return throwing('calls') } }), 'not_text'],
  // A reply is awaited first: reading a Proxy's `then` throws there, an error.
  ['replies with a Proxy whose traps throw', () => new Proxy({}, { get: () => throwing('get') }), 'error'],
  ['replies with a revoked Proxy', () => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy }, 'error'],
  ['replies with a thenable whose then throws', () => ({ get then() { return throwing('then') } }), 'error'],
]

for (const [what, summarizer, reason] of HOSTILE) {
  test(`a summarizer that ${what}: the digest stands in (${reason})`, async () => {
    const r = await ck.fitTurn(HISTORY, options(), summarizer)
    assert.equal(r.report.summary.source, 'digest', what)
    assert.equal(r.report.summary.fallback.reason, reason, JSON.stringify(r.report.summary.fallback))
    const w = new ck.ContextWindow('gpt-4o', { context_window: 16000 })
    w.load(HISTORY)
    const report = await w.fitTurn(summarizer, { policy: options().policy })
    assert.equal(report.summary.source, 'digest', what)
    assert.equal(report.summary.fallback.reason, reason, what)
  })
}

test('turnfit\'s own errors still reject', async () => {
  await assert.rejects(ck.fitTurn(HISTORY, { model: 'no-such-model-x' }, () => 'x'), ck.TurnfitError)
})

// setTimeout clamps a delay above 2^31-1 ms to 1 ms: such a timeout fired at
// once and every request fell back with `timeout`.
for (const ms of [2 ** 31, 2 ** 32, 1e12, Number.MAX_SAFE_INTEGER, '18446744073709551615']) {
  test(`timeout_ms ${ms} does not time out at once`, async () => {
    const o = options(0)
    const warnings = []
    const onWarning = (w) => warnings.push(w.name)
    process.on('warning', onWarning)
    try {
      const text = JSON.stringify({ ...o, summarizer: { timeout_ms: 0 } }).replace('"timeout_ms":0', `"timeout_ms":${ms}`)
      const r = await ck.fitTurn(HISTORY, text, async () => {
        await new Promise((resolve) => setTimeout(resolve, 20))
        return 'in time'
      })
      assert.equal(r.report.summary.source, 'host', JSON.stringify(r.report.summary.fallback))
    } finally {
      process.off('warning', onWarning)
    }
    assert.ok(!warnings.includes('TimeoutOverflowWarning'), warnings.join())
  })
}

'use strict'
// FitSession (issue 52): a history kept parsed and counted between turns.
// Every step's turn equals the stateless fitTurn on the same history (a real
// trajectory, 3 budgets, digest and summarizer); bad input throws TypeError
// or a TurnfitError with its code and leaves the session usable; sessions
// are released by the GC and work in Workers.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const ck = require('..')

const DIR = path.resolve(__dirname, '../../../tests/fixtures/trajectories')
const doc = JSON.parse(fs.readFileSync(path.join(DIR, 'mini-swe-agent-sqlfluff-2419.openai.json'), 'utf8'))
const MODEL = 'gpt-4o'

// A report without its wall-clock figures (the summarizer's elapsed_ms).
function stable(report) {
  return JSON.parse(JSON.stringify(report, (k, v) => (k === 'elapsed_ms' ? undefined : v)))
}

const summarize = (req) => `Summary of ${req.prompt.length} characters: the agent explored and edited the code.`

test('every step of a session equals the stateless fitTurn (real trajectory, 3 budgets, digest and summarizer)', async () => {
  const size = ck.countConversation(doc, { model: MODEL })
  const msgs = doc.messages
  let changedSteps = 0
  for (const div of [3, 2, 1.25]) {
    const maxTokens = Math.floor(size / div)
    for (const summarizer of [null, summarize]) {
      const session = new ck.FitSession({ messages: msgs.slice(0, 2), tools: doc.tools })
      let carryA = null
      let carryB = null
      for (let n = 3; n <= msgs.length; n++) {
        session.update(n - 1, [msgs[n - 1]])
        assert.equal(session.length, n)
        const opts = (carry) => ({ model: MODEL, max_tokens: maxTokens, ...(carry ? { carry } : {}) })
        const a = await ck.fitTurn({ messages: msgs.slice(0, n), tools: doc.tools }, opts(carryA), summarizer)
        const b = await session.fitTurn(opts(carryB), summarizer)
        const where = `1/${div} ${summarizer ? 'summarizer' : 'digest'} step ${n}`
        assert.deepEqual(stable(b.report), stable(a.report), `${where}: report`)
        if (a.report.changed) {
          changedSteps++
          assert.deepEqual(b.conversation, a.conversation, `${where}: conversation`)
        } else {
          assert.equal(b.conversation, null, `${where}: unchanged is null`)
        }
        carryA = a.report.carry
        carryB = b.report.carry
      }
    }
  }
  assert.ok(changedSteps > 0, 'some steps compacted')
})

test('an edit inside the kept history (keep < length) equals the stateless turn', async () => {
  const msgs = doc.messages.slice(0, 30)
  const s = new ck.FitSession(msgs)
  const edited = [...msgs.slice(0, 10), { role: 'user', content: 'a different turn' }]
  s.update(10, [edited[10]])
  assert.equal(s.length, 11)
  const a = await ck.fitTurn(edited, { model: MODEL, max_tokens: 4000 })
  const b = await s.fitTurn({ model: MODEL, max_tokens: 4000 })
  assert.deepEqual(stable(b.report), stable(a.report))
})

test('bad input: TypeError or a TurnfitError with its code; the session stays usable', async () => {
  assert.throws(() => new ck.FitSession(42), TypeError)
  assert.throws(() => new ck.FitSession('{"messages": [', null), (e) => e instanceof ck.TurnfitError && e.code === 'invalid_json')
  assert.throws(() => new ck.FitSession([], { format: 7 }), TypeError)
  assert.throws(() => new ck.FitSession([], { format: 'klingon' }), (e) => e instanceof ck.TurnfitError)
  const s = new ck.FitSession([{ role: 'user', content: 'hi' }])
  for (const keep of [-1, 1.5, '1', null, undefined, NaN, Infinity]) {
    assert.throws(() => s.update(keep, []), TypeError, `keep ${String(keep)}`)
  }
  assert.throws(() => s.update(1, { role: 'user' }), TypeError)
  assert.throws(() => s.update(1, 5), TypeError)
  assert.throws(() => s.update(2, []), (e) => e instanceof ck.TurnfitError && e.code === 'invalid_argument' && /keep 2 is more than the 1/.test(e.message))
  assert.throws(() => s.update(1, '[{"role":'), (e) => e.code === 'invalid_json')
  assert.throws(() => s.update(1, '{"messages": [], "tools": [{"type": "function", "function": {"name": "x"}}]}'), (e) => e.code === 'invalid_argument')
  assert.equal(s.length, 1, 'a failed update changes nothing')
  await assert.rejects(s.fitTurn({ max_tokens: 100 }), (e) => e.code === 'invalid_argument', 'no model')
  await assert.rejects(s.fitTurn({ model: MODEL }, 'not a function'), TypeError)
  await assert.rejects(s.fitTurn({ model: MODEL, format: 'anthropic' }), (e) => e.code === 'invalid_argument')
  // A system prompt beyond the budget: does_not_fit; the session then works.
  const big = new ck.FitSession([{ role: 'system', content: 'word '.repeat(3000) }, { role: 'user', content: 'hi' }])
  await assert.rejects(big.fitTurn({ model: MODEL, max_tokens: 500 }), (e) => e.code === 'does_not_fit')
  big.update(1, [{ role: 'user', content: 'hello' }])
  const after = await big.fitTurn({ model: MODEL, max_tokens: 100000 })
  const fresh = await ck.fitTurn([{ role: 'system', content: 'word '.repeat(3000) }, { role: 'user', content: 'hello' }], { model: MODEL, max_tokens: 100000 })
  assert.deepEqual(stable(after.report), stable(fresh.report), 'after an error the next step is the stateless one')
  s.update(1, [{ role: 'assistant', content: 'hello' }])
  assert.equal((await s.fitTurn({ model: MODEL, max_tokens: 1000 })).report.changed, false)
  // Formats whose elements are not one message each update only whole.
  const anth = new ck.FitSession({ system: 's', messages: [{ role: 'user', content: 'hi' }] }, { format: 'anthropic' })
  assert.throws(() => anth.update(1, []), (e) => e.code === 'invalid_argument')
})

test('GC loop: 20k sessions with a turn each, dropped, bounded RSS', { skip: typeof gc !== 'function' && 'run with node --expose-gc' }, async () => {
  const conv = [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hello there '.repeat(20) }]
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc()
      await new Promise((r) => setImmediate(r))
    }
  }
  const round = async (n) => {
    for (let i = 0; i < n; i++) {
      const s = new ck.FitSession(conv)
      s.update(2, [{ role: 'assistant', content: 'hi' }])
      await s.fitTurn({ model: MODEL, max_tokens: 1000 })
    }
    await settle()
  }
  await round(4000)
  const before = process.memoryUsage().rss
  for (let r = 0; r < 4; r++) await round(4000)
  await settle()
  const grown = process.memoryUsage().rss - before
  assert.ok(grown < 64 * 1048576, `RSS grew by ${grown} bytes`)
})

test('4 Workers, each with its own session over the trajectory: the same reports as the main thread', async () => {
  const src = `
    const { parentPort, workerData } = require('node:worker_threads')
    const ck = require(workerData.pkg)
    ;(async () => {
      const s = new ck.FitSession(workerData.msgs.slice(0, 2))
      const out = []
      for (let n = 3; n <= workerData.msgs.length; n++) {
        s.update(n - 1, [workerData.msgs[n - 1]])
        out.push((await s.fitTurn({ model: 'gpt-4o', max_tokens: 6000 })).report.tokens_after)
      }
      parentPort.postMessage(out)
    })().catch((e) => parentPort.postMessage(String(e)))`
  const msgs = doc.messages.slice(0, 40)
  const expected = []
  for (let n = 3; n <= msgs.length; n++) expected.push((await ck.fitTurn(msgs.slice(0, n), { model: MODEL, max_tokens: 6000 })).report.tokens_after)
  const runs = await Promise.all([0, 1, 2, 3].map(() => new Promise((resolve, reject) => {
    const w = new Worker(src, { eval: true, workerData: { pkg: path.resolve(__dirname, '..'), msgs } })
    w.once('message', (m) => { w.terminate(); resolve(m) })
    w.once('error', reject)
  })))
  for (const r of runs) assert.deepEqual(r, expected)
})

test('ESM: FitSession from index.mjs is the CommonJS class', async () => {
  const esm = await import('../index.mjs')
  assert.equal(esm.FitSession, ck.FitSession)
  const s = new esm.FitSession([{ role: 'user', content: 'hi' }])
  assert.equal(s.length, 1)
})

'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const ck = require('..')

const ROOT = path.resolve(__dirname, '../../..')

test('async twins give the sync results', async () => {
  const t = new ck.Tokenizer('o200k_base')
  const text = 'The quick brown fox 🦊 jumps over the lazy dog. '.repeat(200)
  assert.equal(await t.countTokensAsync(text), t.countTokens(text))
  assert.deepEqual(await t.encodeAsync(text), t.encode(text))
  assert.equal(await t.countTokensAsync(new TextEncoder().encode(text)), t.countTokens(text))
  assert.equal(await ck.countTokensAsync('Hello, world!', { model: 'gpt-4o' }), 4)
  const conv = { messages: [{ role: 'user', content: 'hi' }] }
  assert.deepEqual(await ck.fitAsync(conv, { model: 'gpt-4o', max_tokens: 100 }), ck.fit(conv, { model: 'gpt-4o', max_tokens: 100 }))
  const s = await ck.SkillSet.openAsync(path.join(ROOT, 'examples/data/skills'))
  assert.deepEqual(s.list(), ck.SkillSet.open(path.join(ROOT, 'examples/data/skills')).list())
  const w = new ck.ContextWindow('gpt-4o', { context_window: 1000 })
  w.load(conv)
  const r = await w.compactAsync({})
  assert.equal(typeof r, 'object')
})

test('async errors are TurnfitError with the code; bad arguments are TypeError', async () => {
  const t = new ck.Tokenizer('o200k_base')
  await assert.rejects(t.countTokensAsync(new Uint8Array([0xff])), (e) => e instanceof ck.TurnfitError && e.code === 'invalid_utf8')
  await assert.rejects(ck.fitAsync('{"messages": [', { model: 'gpt-4o' }), (e) => e instanceof ck.TurnfitError && e.code === 'invalid_json')
  await assert.rejects(ck.SkillSet.openAsync(path.join(ROOT, 'nope')), (e) => e instanceof ck.TurnfitError && e.code === 'io')
  assert.throws(() => t.countTokensAsync(42), TypeError)
  assert.throws(() => t.countTokensAsync('x', { signal: 'stop' }), TypeError)
})

test('AbortSignal: an aborted signal rejects with AbortError; queued work can be cancelled', async () => {
  const t = new ck.Tokenizer('o200k_base')
  const ac = new AbortController()
  ac.abort()
  await assert.rejects(t.countTokensAsync('hello', { signal: ac.signal }), { name: 'AbortError' })
  await assert.rejects(ck.fitAsync({ messages: [] }, {}, { signal: ac.signal }), { name: 'AbortError' })
  // Fill the libuv pool with long tasks, queue more, abort the queued ones.
  // The text is pseudo-random so no piece cache makes the busy tasks short.
  // Whether a queued task is still queued when abort() runs depends on the
  // scheduler (on a loaded machine the busy ones can finish first): a task
  // that had started runs to its count, which is right too. So the
  // scenario is tried up to 5 times, and passes once a queued task was
  // cancelled; every task, cancelled or not, must settle correctly.
  let x = 1
  const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648
  const big = Array.from({ length: 200000 }, () => Math.floor(rnd() * 1e9).toString(36)).join(' ')
  let aborted = 0
  for (let attempt = 0; attempt < 5 && aborted === 0; attempt++) {
    const busy = Array.from({ length: 8 }, () => t.countTokensAsync(big))
    const ac2 = new AbortController()
    const queued = Array.from({ length: 8 }, () => t.countTokensAsync(big, { signal: ac2.signal }))
    ac2.abort()
    const settled = await Promise.allSettled(queued)
    aborted = settled.filter((s) => s.status === 'rejected' && s.reason.name === 'AbortError').length
    const done = settled.filter((s) => s.status === 'fulfilled')
    assert.equal(aborted + done.length, 8)
    const counts = await Promise.all(busy)
    assert.ok(counts.every((n) => n === counts[0]))
    assert.ok(done.every((s) => s.value === counts[0]))
  }
  assert.ok(aborted >= 1, 'in 5 tries, no queued task was cancelled before it started')
})

test('8 Workers and 8 async tasks on one shared text, same counts', async () => {
  const text = 'Agents call tools; tools return logs. ' .repeat(5000) + '東京 🎉 ' .repeat(500)
  const t = new ck.Tokenizer('o200k_base')
  const expected = t.countTokens(text)
  const workerSrc = `
    const { parentPort, workerData } = require('node:worker_threads')
    const ck = require(workerData.pkg)
    const t = new ck.Tokenizer('o200k_base')
    const counts = []
    for (let i = 0; i < 5; i++) counts.push(t.countTokens(workerData.text))
    t.countTokensAsync(workerData.text).then((n) => { counts.push(n); parentPort.postMessage(counts) })
  `
  const workers = Array.from({ length: 8 }, () => new Promise((resolve, reject) => {
    const w = new Worker(workerSrc, { eval: true, workerData: { pkg: path.resolve(__dirname, '..'), text } })
    w.once('message', resolve)
    w.once('error', reject)
  }))
  const tasks = Array.from({ length: 8 }, () => t.countTokensAsync(text))
  const results = await Promise.all([...workers, ...tasks])
  for (const r of results) {
    for (const n of [].concat(r)) assert.equal(n, expected)
  }
})

'use strict'
// fitTurn: the host's summarizer as an async (or sync) function. Whatever the
// summarizer does, the turn fits; the report says who wrote the summary and,
// when the digest stood in, why.
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

function fits(r) {
  assert.ok(r.report.tokens_after <= r.report.limit_tokens, `${r.report.tokens_after} > ${r.report.limit_tokens}`)
  assert.equal(ck.countConversation(r.conversation, { model: 'gpt-4o' }), r.report.tokens_after)
  assert.ok(r.report.fired)
  assert.ok(r.report.summary, 'a span was summarized')
  return r.report.summary
}

function digest(s, reason) {
  assert.equal(s.source, 'digest')
  assert.equal(s.fallback?.reason, reason, JSON.stringify(s.fallback))
}

test('an async summarizer writes the summary', async () => {
  const seen = []
  const r = await ck.fitTurn(HISTORY, options(), async (req) => {
    seen.push(req)
    assert.ok(req.prompt_tokens <= req.max_prompt_tokens)
    return `Summary of piece ${req.piece}: the agent explored the repository.`
  })
  const s = fits(r)
  assert.equal(s.source, 'host')
  assert.equal(s.fallback, null)
  assert.ok(seen.length >= 1)
  assert.equal(s.requests.length, seen.length)
  assert.ok(JSON.stringify(r.conversation).includes('the agent explored the repository'))
})

test('a sync summarizer and an AI SDK-like result ({ text }) are accepted', async () => {
  const a = fits(await ck.fitTurn(HISTORY, options(), () => 'A short summary.'))
  assert.equal(a.source, 'host')
  const b = fits(await ck.fitTurn(HISTORY, options(), async () => ({ text: 'A short summary.', finishReason: 'stop' })))
  assert.equal(b.source, 'host')
})

test('a summarizer that throws or rejects: the digest stands in (error)', async () => {
  const a = fits(await ck.fitTurn(HISTORY, options(), () => { throw new Error('rate limited') }))
  digest(a, 'error')
  assert.match(a.fallback.detail, /rate limited/)
  const b = fits(await ck.fitTurn(HISTORY, options(), async () => { throw new RangeError('model down') }))
  digest(b, 'error')
  assert.match(b.fallback.detail, /RangeError: model down/)
})

test('a summarizer that hangs past timeout_ms is abandoned (timeout)', async () => {
  const timers = []
  const r = await ck.fitTurn(HISTORY, options(200), () =>
    new Promise((resolve) => timers.push(setTimeout(resolve, 5000, 'too late'))))
  timers.forEach(clearTimeout)
  digest(fits(r), 'timeout')
})

test('a summarizer that never settles does not keep the turn waiting (timeout)', async () => {
  const r = await ck.fitTurn(HISTORY, options(200), () => new Promise(() => {}))
  digest(fits(r), 'timeout')
})

test('blank text, far too much text, and a non-text reply: the digest stands in', async () => {
  digest(fits(await ck.fitTurn(HISTORY, options(), async () => '  \n ')), 'empty')
  const huge = 'word '.repeat(200000)
  digest(fits(await ck.fitTurn(HISTORY, options(), async () => huge)), 'oversized')
  digest(fits(await ck.fitTurn(HISTORY, options(), async () => ({ tool_calls: [{ id: 'x' }], content: '' }))), 'not_text')
  digest(fits(await ck.fitTurn(HISTORY, options(), async () => 42)), 'not_text')
})

test('no summarizer: the digest summarizes (no_summarizer)', async () => {
  digest(fits(await ck.fitTurn(HISTORY, options())), 'no_summarizer')
})

test('bad input: TypeError for a non-function summarizer, TurnfitError from the core', async () => {
  await assert.rejects(ck.fitTurn(HISTORY, options(), 'gpt-4o'), TypeError)
  await assert.rejects(ck.fitTurn(HISTORY, { model: 'gtp-4o', max_tokens: 16000 }, () => 'x'),
    (e) => e instanceof ck.TurnfitError && e.code === 'unknown_model')
  await assert.rejects(ck.fitTurn('{not json', options(), () => 'x'),
    (e) => e instanceof ck.TurnfitError && e.code === 'invalid_json')
  const tiny = { ...options(), max_tokens: 50 }
  await assert.rejects(ck.fitTurn(HISTORY, tiny, () => 'x'),
    (e) => e instanceof ck.TurnfitError && e.code === 'does_not_fit')
})

test('a history that needs no summary never calls the summarizer', async () => {
  let called = 0
  const r = await ck.fitTurn({ messages: [{ role: 'user', content: 'hi' }] }, options(), () => { called++; return 'x' })
  assert.equal(called, 0)
  assert.equal(r.report.summary, null)
  assert.equal(r.report.changed, false)
})

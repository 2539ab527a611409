'use strict'
// ContextWindow.fitTurn: the stateful turn. Below the trigger nothing is
// recounted or changed; over it the window compacts with the host's
// summarizer and takes the result; a window changed while the summarizer ran
// gets nothing applied and says so; what the window holds is not a turn's to set.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const ck = require('..')

const ROOT = path.resolve(__dirname, '../../..')
const HISTORY = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples/data/agent-loop.json'), 'utf8'))
const OPTIONS = { policy: { strategy: 'summarize', mask: { enabled: false } } }

// The history (`{messages, tools}`) loaded, or its first `n` messages pushed.
function window(n) {
  const w = new ck.ContextWindow('gpt-4o', { context_window: 16000 })
  if (n === undefined) return w.load(HISTORY)
  for (const m of HISTORY.messages.slice(0, n)) w.push(m)
  return w
}
const messages = (w) => w.conversation.messages ?? w.conversation

test('below the trigger the window is left as it is and the summarizer is not called', async () => {
  const w = window(3)
  const before = w.conversationJson()
  const r = await w.fitTurn(() => assert.fail('no summary is needed'), OPTIONS)
  assert.equal(r.fired, false)
  assert.equal(r.changed, false)
  assert.equal(w.conversationJson(), before)
  assert.equal(r.tokens_before, w.preflight().prompt_tokens)
})

test('over the trigger an async summarizer writes the summary and the window takes it', async () => {
  const w = window()
  const n = messages(w).length
  let calls = 0
  const r = await w.fitTurn(async (req) => {
    calls += 1
    assert.ok(req.prompt_tokens <= req.max_prompt_tokens)
    return 'The agent read the failing tests and the parser.'
  }, OPTIONS)
  assert.ok(r.fired && r.changed)
  assert.equal(r.summary.source, 'host')
  assert.ok(calls >= 1)
  assert.ok(messages(w).length < n)
  assert.ok(w.conversationJson().includes('read the failing tests'))
  assert.ok(r.tokens_after <= r.limit_tokens)
  assert.equal(w.preflight().prompt_tokens, r.tokens_after)
  assert.equal(w.preflight().verdict, 'fits')
})

test('a summarizer that throws falls back to the digest, and the window still fits', async () => {
  const w = window()
  const r = await w.fitTurn(() => {
    throw new Error('model unavailable')
  }, OPTIONS)
  assert.equal(r.summary.source, 'digest')
  assert.equal(r.summary.fallback.reason, 'error')
  assert.match(r.summary.fallback.detail, /model unavailable/)
  assert.ok(r.tokens_after <= r.limit_tokens)
})

test('a window changed while the summarizer ran gets nothing applied', async () => {
  const w = window()
  const n = messages(w).length
  let pushed = false
  await assert.rejects(
    w.fitTurn(async () => {
      if (!pushed) w.push({ role: 'user', content: 'one more thing' })
      pushed = true
      return 'summary'
    }, OPTIONS),
    (e) => e.code === 'invalid_argument' && /the window changed during the turn/.test(e.message),
  )
  assert.equal(messages(w).length, n + 1)
  assert.equal(messages(w)[n].content, 'one more thing')
})

test('what the window holds is refused, not ignored', async () => {
  const w = window(3)
  for (const [o, words] of [
    [{ max_tokens: 100 }, /belongs to the window/],
    [{ model: 'gpt-4o-mini' }, /not the window's model/],
    [{ trigger_messages: 0 }, /trigger_messages/],
  ]) {
    await assert.rejects(w.fitTurn(null, o), (e) => e.code === 'invalid_argument' && words.test(e.message))
  }
  await assert.rejects(w.fitTurn('not a function'), TypeError)
  const r = await w.fitTurn(null, { model: 'gpt-4o', trigger_messages: 2 })
  assert.equal(r.fired, true)
})

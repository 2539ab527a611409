'use strict'
// Multi-scale windows (issue 53) through the budget: push, then compact folds.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const ck = require('..')

const ROOT = path.resolve(__dirname, '../../..')
// A real trajectory (tests/fixtures/trajectories/PROVENANCE.md).
const TAU = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/trajectories/tau-bench-airline-task0.openai.json'), 'utf8'))
const tiers = { immediate_tokens: 1500, session_tokens: 300, historical_tokens: 400 }

test('a multi-scale window folds on compact and reports its tiers', () => {
  const w = new ck.ContextWindow('gpt-4o', { context_window: 8000, reserved_output: 1000, multi_scale: tiers })
  assert.equal(w.preflight().tiers.messages_folded, 0)
  w.load(TAU)
  const n = w.messageTokens.length
  const r = w.compact()
  assert.equal(r.status, 'done')
  const t = r.report.tiers
  assert.ok(t.messages_folded > 0 && t.immediate_tokens <= 1500 && t.session_tokens <= 300, JSON.stringify(t))
  assert.equal(t.messages_folded + w.messageTokens.length - 1, n)
  assert.ok(w.conversation.messages[1].content.startsWith('[Earlier context]\n'))
  assert.deepEqual(w.preflight().tiers, t)
})

test('windows without multi_scale report no tiers', () => {
  const w = new ck.ContextWindow('gpt-4o', { context_window: 8000 })
  assert.equal(w.preflight().tiers, undefined)
})

test('bad tier budgets are refused by name', () => {
  for (const [bad, want] of [
    [{ ...tiers, session_tokens: 0 }, /multi_scale\.session_tokens is 0/],
    [{ ...tiers, historical_tokens: -2 }, /multi_scale\.historical_tokens is -2/],
    [{ ...tiers, immediate_tokens: 7000 }, /tier budgets sum to 7700/],
  ]) {
    assert.throws(() => new ck.ContextWindow('gpt-4o', { context_window: 8000, reserved_output: 1000, multi_scale: bad }), want)
  }
})

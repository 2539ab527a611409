'use strict'
// 100k Tokenizer and ContextWindow creations with the handles dropped: RSS
// after the loop stays within a fixed bound of RSS before it (no free()
// anywhere; the GC releases the native objects). Needs --expose-gc.
const test = require('node:test')
const assert = require('node:assert/strict')
const ck = require('..')

test('GC loop: 100k Tokenizers and ContextWindows, bounded RSS', { skip: typeof gc !== 'function' && 'run with node --expose-gc' }, async () => {
  const conv = { messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hello there '.repeat(20) }] }
  // Node runs napi finalizers after a GC from the event loop, so each round
  // yields to it before measuring.
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc()
      await new Promise((r) => setImmediate(r))
    }
  }
  const round = async (n) => {
    for (let i = 0; i < n; i++) {
      const t = new ck.Tokenizer('o200k_base')
      t.countTokens('hello world')
      const w = new ck.ContextWindow('gpt-4o')
      w.load(conv)
    }
    await settle()
  }
  await round(10000) // warm up: vocabularies parsed, heaps grown
  const before = process.memoryUsage().rss
  for (let r = 0; r < 9; r++) await round(10000)
  await settle()
  const grown = process.memoryUsage().rss - before
  console.log(`gc loop: RSS grew ${(grown / 1048576).toFixed(1)} MiB over 90k creations after a 10k warm-up`)
  assert.ok(grown < 64 * 1048576, `RSS grew by ${grown} bytes`)
})

'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const ck = require('..')

const ROOT = path.resolve(__dirname, '../../..')
const SKILLS = path.join(ROOT, 'examples/data/skills')

function code(f) {
  try {
    f()
  } catch (e) {
    assert.ok(e instanceof ck.TurnfitError, `expected a TurnfitError, got ${e && e.name}: ${e && e.message}`)
    assert.ok(e instanceof Error)
    assert.equal(e.name, 'TurnfitError')
    assert.ok(ck.ERROR_CODES.includes(e.code), e.code)
    return e
  }
  assert.fail('no error thrown')
}

test('Tokenizer basics', () => {
  const t = new ck.Tokenizer('o200k_base')
  assert.equal(t.countTokens('Hello, world!'), 4)
  assert.deepEqual(Array.from(t.encode('hello world')), [24912, 2375])
  assert.ok(t.encode('hello world') instanceof Uint32Array)
  assert.equal(t.decode(t.encode('héllo wörld')), 'héllo wörld')
  assert.equal(t.decode([24912, 2375]), 'hello world')
  assert.deepEqual(t.info.encoding, 'o200k_base')
  assert.equal(t.info.specialTokens, 'ordinary')
  assert.equal(t.info.model, null)
  const m = ck.Tokenizer.forModel('gpt-4o')
  assert.equal(m.info.encoding, 'o200k_base')
  assert.equal(m.info.model.encoding, 'o200k_base')
  assert.equal(ck.Tokenizer.forModel('gpt-4').info.encoding, 'cl100k_base')
})

test('special tokens: ordinary by default, recognized on request', () => {
  const plain = new ck.Tokenizer('cl100k_base')
  const special = new ck.Tokenizer('cl100k_base', { special: 'recognize' })
  assert.equal(special.countTokens('<|endoftext|>'), 1)
  assert.ok(plain.countTokens('<|endoftext|>') > 1)
  assert.throws(() => new ck.Tokenizer('cl100k_base', { special: 'all' }), TypeError)
})

test('countUntilLimit and isWithinTokenLimit', () => {
  const t = new ck.Tokenizer('o200k_base')
  assert.deepEqual(t.countUntilLimit('Hello, world!', 10), { tokens: 4, exceeded: false })
  const r = t.countUntilLimit('Hello, world!', 2)
  assert.equal(r.exceeded, true)
  assert.ok(r.tokens > 2)
  assert.equal(t.isWithinTokenLimit('Hello, world!', 4), 4)
  assert.equal(t.isWithinTokenLimit('Hello, world!', 3), false)
  assert.equal(t.isWithinTokenLimit('', 0), 0)
  assert.equal(t.isWithinTokenLimit('Hello', Infinity), 1)
})

test('truncate: head, tail, both with default, custom and no marker', () => {
  const t = new ck.Tokenizer('o200k_base')
  const text = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ')
  const head = t.truncate(text, 10)
  assert.ok(text.startsWith(head.text))
  assert.ok(head.tokens <= 10)
  assert.equal(head.truncated, true)
  assert.equal(head.originalTokens, t.countTokens(text))
  const tail = t.truncate(text, 10, { side: 'tail' })
  assert.ok(text.endsWith(tail.text))
  const both = t.truncate(text, 40, { side: 'both' })
  assert.match(both.text, /tokens truncated/)
  assert.ok(both.tokens <= 40)
  const custom = t.truncate(text, 40, { side: 'both', marker: ' <cut {removed}> ' })
  assert.match(custom.text, /<cut \d+>/)
  for (const marker of ['', null]) {
    const none = t.truncate(text, 40, { side: 'both', marker })
    assert.doesNotMatch(none.text, /truncated|cut/)
    assert.ok(none.tokens <= 40 && none.tokens > 30, `${none.tokens}`)
  }
  assert.equal(t.truncate('short', 10).truncated, false)
  assert.equal(code(() => t.truncate(text, 3, { side: 'both' })).code, 'invalid_argument')
})

test('module-level countTokens with a cached tokenizer', () => {
  assert.equal(ck.countTokens('Hello, world!'), 4)
  assert.equal(ck.countTokens('Hello, world!', { model: 'gpt-4' }), 4)
  assert.equal(ck.countTokens('Hello, world!', { encoding: 'r50k_base' }), 4)
  assert.throws(() => ck.countTokens('x', { model: 'gpt-4o', encoding: 'o200k_base' }), TypeError)
  assert.equal(code(() => ck.countTokens('x', { model: 'gtp-4o' })).code, 'unknown_model')
})

test('Uint8Array input equals string input; invalid UTF-8 is invalid_utf8 with the offset', () => {
  const t = new ck.Tokenizer('o200k_base')
  const s = 'naïve café — 東京 🎉 <|endoftext|>'
  const b = new TextEncoder().encode(s)
  assert.equal(t.countTokens(b), t.countTokens(s))
  assert.deepEqual(t.encode(b), t.encode(s))
  assert.deepEqual(t.truncate(b, 5), t.truncate(s, 5))
  assert.deepEqual(t.countUntilLimit(b, 3), t.countUntilLimit(s, 3))
  const bad = new Uint8Array([0x61, 0x62, 0x63, 0xff, 0x64])
  const e = code(() => t.countTokens(bad))
  assert.equal(e.code, 'invalid_utf8')
  assert.match(e.message, /3/)
  assert.equal(code(() => t.encode(new Uint8Array([0xc3]))).code, 'invalid_utf8')
  // A Buffer is a Uint8Array.
  assert.equal(t.countTokens(Buffer.from(s)), t.countTokens(s))
})

test('lone surrogates count as U+FFFD, as tiktoken does', () => {
  const t = new ck.Tokenizer('cl100k_base')
  for (const lone of ['\ud800', '\udfff', 'a\ud83dz', 'x\ude00']) {
    const fixed = lone.replace(/[\ud800-\udfff]/g, '\ufffd')
    assert.equal(t.countTokens(lone), t.countTokens(fixed), JSON.stringify(lone))
    assert.deepEqual(t.encode(lone), t.encode(fixed))
  }
  // A proper pair is not touched.
  assert.deepEqual(t.encode('\ud83d\ude00'), t.encode('😀'))
  // The ids of U+FFFD under tiktoken's cl100k_base.
  assert.deepEqual(Array.from(t.encode('\ud800')), Array.from(t.encode('\ufffd')))
})

test('decode: replace and strict modes, unknown ids', () => {
  const t = new ck.Tokenizer('o200k_base')
  const ids = Array.from(t.encode('🎉'))
  assert.ok(ids.length >= 1)
  const partial = ids.length > 1 ? ids.slice(0, 1) : null
  if (partial) {
    assert.match(t.decode(partial), /\ufffd/)
    assert.equal(code(() => t.decode(partial, { mode: 'strict' })).code, 'invalid_utf8')
  }
  assert.equal(code(() => t.decode([10000000])).code, 'unknown_token')
  assert.throws(() => t.decode([-1]), TypeError)
  assert.throws(() => t.decode('abc'), TypeError)
  assert.throws(() => t.decode([1], { mode: 'lenient' }), TypeError)
  assert.deepEqual(Array.from(t.decodeBytes(t.encode('hi'))), [104, 105])
})

test('wrong argument types are TypeError', () => {
  const t = new ck.Tokenizer('o200k_base')
  for (const bad of [undefined, null, 42, {}, [], Symbol('x')]) {
    assert.throws(() => t.countTokens(bad), TypeError)
    assert.throws(() => t.encode(bad), TypeError)
  }
  assert.throws(() => new ck.Tokenizer(42), TypeError)
  assert.throws(() => ck.Tokenizer.forModel({}), TypeError)
  assert.throws(() => t.countUntilLimit('x', -1), TypeError)
  assert.throws(() => t.countUntilLimit('x', 1.5), TypeError)
  assert.throws(() => t.countUntilLimit('x', '3'), TypeError)
  assert.throws(() => t.truncate('x', 3, { side: 'middle' }), TypeError)
  assert.throws(() => t.truncate('x', 3, 'head'), TypeError)
  assert.throws(() => new ck.ContextWindow(1), TypeError)
  assert.throws(() => new ck.ContextWindow('gpt-4o').load(42), TypeError)
  assert.throws(() => new ck.CallStack('5'), TypeError)
  assert.throws(() => new ck.SkillSet(), TypeError)
  assert.throws(() => ck.fitJson({}), TypeError)
})

test('every error kind has a code, with the core message', () => {
  const t = new ck.Tokenizer('o200k_base')
  const seen = new Set()
  const expect = (kind, f, re) => {
    const e = code(f)
    assert.equal(e.code, kind, e.message)
    if (re) assert.match(e.message, re)
    seen.add(kind)
  }
  expect('invalid_argument', () => t.truncate('a '.repeat(100), 2, { side: 'both' }))
  expect('invalid_utf8', () => t.countTokens(new Uint8Array([0xff])), /UTF-8/)
  expect('unknown_encoding', () => new ck.Tokenizer('o200k_bse'), /o200k_base/)
  expect('unknown_model', () => ck.Tokenizer.forModel('gtp-4o'), /gpt-4o/)
  expect('unknown_token', () => t.decode([4294967295]))
  expect('limit_exceeded', () => t.countTokens('a'.repeat(64 * 1024 * 1024 + 1)))
  expect('invalid_json', () => new ck.ContextWindow('gpt-4o').load('{"messages": ['))
  expect('does_not_fit', () =>
    ck.fit({ messages: [{ role: 'system', content: 'word '.repeat(500) }, { role: 'user', content: 'hi' }] }, { model: 'gpt-4o', max_tokens: 50 }))
  expect('io', () => ck.SkillSet.open(path.join(ROOT, 'no/such/dir')))
  expect('unsafe_path', () => ck.SkillSet.open(SKILLS).body('../etc/passwd'))
  expect('cycle_detected', () => new ck.CallStack(5).enter('planner').enter('coder').enter('planner'), /planner -> coder -> planner/)
  expect('depth_exceeded', () => new ck.CallStack(1).enter('a').enter('b'))
  expect('internal', () => ck.__panicForTest('boom'), /boom/)
  assert.deepEqual([...seen].sort(), [...ck.ERROR_CODES].sort())
})

test('a panic is caught and the module keeps working', () => {
  for (let i = 0; i < 3; i++) assert.equal(code(() => ck.__panicForTest(`p${i}`)).code, 'internal')
  assert.equal(ck.countTokens('still fine'), 2)
})

test('"a".repeat(1e6) is counted exactly and the call returns', () => {
  const t = new ck.Tokenizer('o200k_base')
  const n = t.countTokens('a'.repeat(1e6))
  // Runs of one letter merge into fixed-size tokens; the count is the same as
  // encode's length and grows linearly (checked against 2e6).
  assert.equal(n, t.encode('a'.repeat(1e6)).length)
  assert.ok(n > 1e6 / 64 && n < 1e6, `${n}`)
  const n2 = t.countTokens('a'.repeat(2e6))
  assert.ok(Math.abs(n2 - 2 * n) <= 2, `${n2} vs 2*${n}`)
})

test('ContextWindow: load, push, preflight, validate, repair, compact, applySummary, calibrate', () => {
  const w = new ck.ContextWindow('gpt-4o', { context_window: 2000, reserved_output: 200 })
  w.load({
    messages: [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: 'Fix the failing test in src/lib.rs.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'run', arguments: '{"cmd":"cargo test"}' } }] },
    ],
  })
  const issues = w.validate()
  assert.ok(issues.length >= 1, 'the dangling call is an issue')
  const changes = w.repair()
  assert.ok(changes.length >= 1)
  assert.deepEqual(w.validate(), [])
  const before = w.preflight()
  assert.equal(before.verdict, 'fits')
  const n = w.push({ role: 'tool', tool_call_id: 'x', content: 'log line\n'.repeat(400) })
  assert.ok(n > 100)
  assert.equal(w.messageTokens.length, 5)
  const p = w.preflight({ role: 'user', content: 'and now?' })
  assert.ok(p.prompt_tokens > before.prompt_tokens)
  assert.equal(typeof w.conversationJson(), 'string')
  assert.equal(w.conversation.messages.length, 5)
  assert.equal(typeof w.calibrate(p.prompt_tokens), 'number')
  assert.equal(code(() => w.calibrate(0)).code, 'invalid_argument')
})

test('ContextWindow.onEvent: budget_crossed, repaired, compacted (sync and async), cleared', async () => {
  const w = new ck.ContextWindow('gpt-4o', { context_window: 1000, reserved_output: 100 })
  const seen = []
  assert.equal(w.onEvent((e) => seen.push(e)), w)
  const user = (k) => ({ role: 'user', content: 'word '.repeat(k) })
  w.push(user(100))
  assert.deepEqual(seen, [])
  w.push(user(650))
  assert.equal(seen.length, 1)
  assert.equal(seen[0].kind, 'budget_crossed')
  assert.deepEqual([seen[0].operation, seen[0].from, seen[0].to], ['push', 'fits', 'should_compact'])
  assert.equal(seen[0].limit, 1000)
  w.load([
    user(5),
    { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    user(3),
  ])
  w.repair()
  assert.deepEqual(
    seen.filter((e) => e.kind === 'repaired').map((e) => e.results_added),
    [1],
  )
  const turns = Array.from({ length: 20 }, (_, i) => [user(40), { role: 'assistant', content: `answer ${i} `.repeat(20) }]).flat()
  w.load(turns)
  const before = seen.length
  w.compact()
  const c = seen.slice(before).filter((e) => e.kind === 'compacted')
  assert.equal(c.length, 1)
  assert.ok(c[0].tokens_after < c[0].tokens_before && c[0].messages_dropped > 0, JSON.stringify(c[0]))
  w.load(turns)
  const mark = seen.length
  await w.compactAsync()
  assert.ok(seen.slice(mark).some((e) => e.kind === 'compacted'), 'async compaction delivered on the JS thread')
  w.onEvent(null)
  const n = seen.length
  w.load(turns)
  w.compact()
  assert.equal(seen.length, n)
  assert.throws(() => w.onEvent(42), TypeError)
})

test('fit, fitJson and countConversation', () => {
  const conv = {
    messages: [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'task' },
      ...Array.from({ length: 30 }, (_, i) => [
        { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read', arguments: `{"i":${i}}` } }] },
        { role: 'tool', tool_call_id: `c${i}`, content: 'output '.repeat(100) },
      ]).flat(),
      { role: 'user', content: 'latest' },
    ],
  }
  const before = ck.countConversation(conv, { model: 'gpt-4o' })
  const r = ck.fit(conv, { model: 'gpt-4o', max_tokens: 2000 })
  assert.ok(r.report.tokens_after <= 2000, JSON.stringify(r.report).slice(0, 300))
  assert.equal(r.report.tokens_before, before)
  assert.equal(ck.countConversation(r.conversation, { model: 'gpt-4o' }), r.report.tokens_after)
  // Every kept tool result still has its call.
  const calls = new Set(r.conversation.messages.flatMap((m) => (m.tool_calls || []).map((c) => c.id)))
  for (const m of r.conversation.messages) if (m.role === 'tool') assert.ok(calls.has(m.tool_call_id))
  const text = JSON.stringify(conv)
  const j = ck.fitJson(text, { model: 'gpt-4o', max_tokens: 2000 })
  assert.equal(typeof j.conversation, 'string')
  assert.deepEqual(JSON.parse(j.conversation), r.conversation)
  const fitsAlready = ck.fitJson('{"messages":[{"role":"user","content":"hi"}]}', '{"model":"gpt-4o","max_tokens":1000}')
  assert.equal(fitsAlready.conversation, '{"messages":[{"role":"user","content":"hi"}]}')
})

test('assemble', () => {
  const t = new ck.Tokenizer('o200k_base')
  const r = t.assemble({ budget: 50, sections: [{ name: 'a', text: 'hello '.repeat(10), priority: 1 }, { name: 'b', text: 'x '.repeat(500), priority: 0 }] })
  assert.ok(r.tokens <= 50)
  assert.equal(r.sections.length, 2)
})

test('SkillSet, handoff, classifyError, backoff, CircuitBreaker, CallStack, Tracer, toolset', () => {
  const s = ck.SkillSet.open(SKILLS)
  const list = s.list()
  assert.ok(list.skills.length >= 1)
  const name = list.skills[0].name
  assert.equal(s.body(name).name, name)
  assert.equal(typeof s.renderIndex({ budget: 1000 }).text, 'string')

  const b = new ck.CircuitBreaker({ failure_threshold: 2, cool_down_ms: 1000 })
  assert.equal(b.allow('openai', 0), true)
  assert.equal(b.recordFailure('openai', 1), 'closed')
  assert.equal(b.recordFailure('openai', 2), 'open')
  assert.equal(b.allow('openai', 3), false)
  assert.equal(b.state('openai', 4).state, 'open')

  const root = new ck.CallStack(4)
  const a = root.enter('planner')
  const c = a.enter('coder')
  assert.equal(root.toJSON().agents.length, 0, 'enter does not change the stack it is called on')
  assert.equal(c.chain, 'planner -> coder')
  assert.ok(c.contains('planner'))
  assert.equal(c.parent().chain, 'planner')
  assert.deepEqual(ck.CallStack.fromJSON(c.toJSON()).toJSON(), c.toJSON())

  const cls = ck.classifyError({ provider: 'openai', status: 429, headers: { 'retry-after': '2' }, body: '{"error":{"type":"rate_limit_exceeded","message":"slow down"}}' })
  assert.equal(typeof cls.retryable, 'boolean')
  const d = ck.backoff({ failed_attempts: 1, seed: 7 })
  assert.ok(d.decision === 'retry' || d.decision === 'give_up')

  const tr = new ck.Tracer({})
  const id = tr.start('read_file', { tool_call_id: 'c1' }, 10, 1000)
  tr.end(id, 'success', 20, undefined, 3000)
  const m = tr.metrics()
  assert.equal(m[0].tool, 'read_file')
  assert.equal(m[0].successes, 1)
  assert.equal(typeof tr.export(4000), 'object')
  assert.equal(code(() => tr.end(id + 100, 'success', 0, undefined, 5000)).code, 'invalid_argument')
})

test('error context: classifyError echoes it, CircuitBreaker and Tracer count per agent and workflow', () => {
  const c = ck.classifyError({ provider: 'other', status: 0, body: 'Rate limit exceeded', agent_id: 'narrator', workflow_id: 'wf-7', metadata: { turn: 3 } })
  assert.deepEqual([c.category, c.agent_id, c.workflow_id, c.metadata], ['rate_limited', 'narrator', 'wf-7', { turn: 3 }])
  const plain = ck.classifyError({ provider: 'other', status: 0, body: 'Rate limit exceeded' })
  assert.deepEqual([plain.agent_id, plain.workflow_id, plain.metadata], [null, null, null])
  assert.equal(code(() => ck.classifyError({ provider: 'openai', status: 500, agent_id: '' })).code, 'invalid_argument')
  assert.equal(code(() => ck.classifyError({ provider: 'openai', status: 500, metadata: [1] })).code, 'invalid_json')

  const b = new ck.CircuitBreaker({ failure_threshold: 3 })
  b.recordFailure('openai', 0, { agent_id: 'narrator', workflow_id: 'wf-7' })
  b.recordFailure('openai', 1, { agent_id: 'narrator', workflow_id: 'wf-8' })
  assert.equal(b.recordFailure('anthropic', 2, { agent_id: 'critic' }), 'closed')
  b.recordFailure('openai', 3)
  assert.deepEqual(b.failureCounts(), { by_agent: { critic: 1, narrator: 2 }, by_workflow: { 'wf-7': 1, 'wf-8': 1 }, unattributed: 0 })
  assert.equal(b.state('openai', 4).state, 'open')
  assert.equal(code(() => b.recordFailure('openai', 5, { agent: 'x' })).code, 'invalid_json')

  const tr = new ck.Tracer({})
  const id = tr.start('search', { agent_id: 'narrator', workflow_id: 'wf-7' }, 0, 1000)
  tr.end(id, 'failed', 0, 'boom', 2000)
  assert.deepEqual(tr.export(3000).failure_counts.by_workflow, { 'wf-7': 1 })
})

test('Tracer.endWith: tokens, error category and metadata', () => {
  const tr = new ck.Tracer({ collapse: false })
  const a = tr.start('search', { tool_call_id: 'c1' }, 10, 1000)
  tr.endWith(a, 'success', { output_bytes: 30, input_tokens: 120, output_tokens: 40, metadata: { model: 'gpt-4o', cached: true } }, 2000)
  const b = tr.start('search', { tool_call_id: 'c2' }, 10, 3000)
  tr.endWith(b, 'failed', { error: 'HTTP 429', error_category: 'rate_limited', input_tokens: 5 }, 4000)
  const c = tr.start('search', { tool_call_id: 'c3' }, 0, 5000)
  tr.endWith(c, 'success', undefined, 6000)
  const [m] = tr.metrics()
  assert.equal(m.input_tokens, 125)
  assert.equal(m.output_tokens, 40)
  assert.deepEqual(m.error_categories, { rate_limited: 1 })
  assert.equal(m.output_bytes, 30)
  const first = tr.recent().find((r) => r.tool_call_id === 'c1')
  assert.deepEqual(first.metadata, { model: 'gpt-4o', cached: true })
  // Over a cap or malformed: refused, and the span stays open.
  const d = tr.start('search', {}, 0, 7000)
  assert.equal(code(() => tr.endWith(d, 'failed', { error_category: 'Rate Limited' }, 8000)).code, 'invalid_argument')
  assert.equal(code(() => tr.endWith(d, 'failed', { metadata: { nested: { x: 1 } } }, 8000)).code, 'invalid_argument')
  const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i]))
  assert.equal(code(() => tr.endWith(d, 'failed', { metadata: many }, 8000)).code, 'limit_exceeded')
  assert.equal(code(() => tr.endWith(d, 'failed', { tokens: 3 }, 8000)).code, 'invalid_json')
  assert.equal(code(() => tr.endWith(d, 'failed', '{', 8000)).code, 'invalid_json')
  assert.equal(code(() => tr.endWith(d, 'done', {}, 8000)).code, 'invalid_json')
  assert.throws(() => tr.endWith(d, 'failed', 42, 8000), TypeError)
  assert.throws(() => tr.endWith(-1, 'error', {}, 8000), TypeError)
  assert.equal(tr.metrics()[0].in_flight, 1)
  tr.endWith(d, 'timeout', {}, 9000)
  assert.equal(tr.metrics()[0].in_flight, 0)
  assert.equal(code(() => tr.endWith(d, 'success', {}, 9500)).code, 'invalid_argument')
  // Every outcome the facade lists is one the core accepts.
  for (const o of ck.OUTCOMES) tr.endWith(tr.start('t', {}, 0, 10000), o, {}, 11000)
})

// countTokens(string) goes through native.countText(handle, text), not a
// method of the native object (cheaper per call, src/tokenizer.rs). The
// handle carries the encoding and the special-token policy of every kind of
// Tokenizer; a handle no tokenizer has is invalid_argument, not a crash.
test('countText: every tokenizer counts through its handle; bad handles and texts refused', () => {
  const native = require('../binding.js')
  const eot = '<|endoftext|>'
  for (const enc of ['cl100k_base', 'o200k_base', 'p50k_base', 'r50k_base', 'o200k_harmony', 'p50k_edit', 'gpt2']) {
    const plain = new ck.Tokenizer(enc)
    const special = new ck.Tokenizer(enc, { special: 'recognize' })
    const text = `hello ${eot} world`
    assert.equal(plain.countTokens(text), plain.countTokens(Buffer.from(text)), enc)
    assert.equal(special.countTokens(text), special.countTokens(Buffer.from(text)), enc)
    assert.ok(special.countTokens(eot) === 1 && plain.countTokens(eot) > 1, enc)
  }
  const m = ck.Tokenizer.forModel('gpt-4')
  assert.equal(m.countTokens('hello world'), new ck.Tokenizer('cl100k_base').countTokens('hello world'))
  for (const bad of [14, 999, 2 ** 32 - 1]) {
    assert.throws(() => native.countText(bad, 'x'), (e) => e.message === `turnfit:invalid_argument: no tokenizer has handle ${bad}`)
  }
  assert.throws(() => native.countText(2, 42), (e) => e.code === 'StringExpected')
  assert.throws(() => new ck.Tokenizer('o200k_base').countTokens(42), TypeError)
})

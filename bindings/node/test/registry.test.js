'use strict'
// registerModel / listModels: custom model profiles and the host's own
// counter (a JS function) in the process-wide registry, used by every call
// that takes a model name. Bad input for each path: a specific error, never
// a hang or a crash.
const test = require('node:test')
const assert = require('node:assert/strict')
const { Worker } = require('node:worker_threads')
const path = require('node:path')
const ck = require('..')

let n = 0
// A profile with a name no other test uses: the registry is per process.
function freshModel(extra) {
  n += 1
  return { name: `house-llm-${process.pid}-${n}`, encoding: 'o200k_base', context_window: 1000, exact: false, ...extra }
}

// One token per 4 bytes of UTF-8, rounded up: what a host counter that is
// not tiktoken might say.
function quarter(calls) {
  return (text) => {
    calls.push(text)
    return Math.ceil(Buffer.byteLength(text, 'utf8') / 4)
  }
}

function turnfitError(f, code) {
  try {
    f()
  } catch (e) {
    assert.ok(e instanceof ck.TurnfitError, `expected a TurnfitError, got ${e && e.name}: ${e && e.message}`)
    if (code !== undefined) assert.equal(e.code, code, e.message)
    return e
  }
  assert.fail('no error thrown')
}

const CONV = { messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'one two three four' }] }

test('registerModel: a custom profile, then forModel, lookupModel, listModels, a window and a fit use it', () => {
  const p = freshModel({ encoding: 'cl100k_base', context_window: 5000, max_output_tokens: 700, exact: true })
  turnfitError(() => ck.lookupModel(p.name), 'unknown_model')
  assert.equal(ck.registerModel(p), 1)
  const info = ck.lookupModel(p.name)
  assert.equal(info.encoding, 'cl100k_base')
  assert.equal(info.context_window, 5000)
  assert.equal(info.source, 'host')
  // Names are case-insensitive, as in the core.
  assert.equal(ck.lookupModel(p.name.toUpperCase()).encoding, 'cl100k_base')
  const t = ck.Tokenizer.forModel(p.name)
  assert.equal(t.info.encoding, 'cl100k_base')
  assert.equal(t.info.model.context_window, 5000)
  // The module-level one-liner counts with the registered encoding.
  assert.equal(ck.countTokens('hello world', { model: p.name }), new ck.Tokenizer('cl100k_base').countTokens('hello world'))
  const listed = ck.listModels().filter((e) => e.name === p.name)
  assert.equal(listed.length, 1)
  assert.equal(listed[0].source, 'host')
  assert.ok(ck.listModels().some((e) => e.name === 'gpt-4o*' && e.source === 'builtin'))

  const w = new ck.ContextWindow(p.name)
  w.load(CONV)
  const pre = w.preflight()
  assert.equal(pre.model, p.name)
  assert.equal(pre.limit, 5000)
  assert.equal(pre.exact, true)
  assert.equal(pre.prompt_tokens, ck.countConversation(CONV, { model: p.name }))
  const { report } = ck.fit(CONV, { model: p.name })
  assert.equal(report.max_tokens, 5000)
  assert.equal(report.tokens_before, pre.prompt_tokens)
  // A turn looks the model up in the same registry.
  return ck.fitTurn(CONV, { model: p.name }).then(({ report: r }) => assert.equal(r.tokens_before, pre.prompt_tokens))
})

test('registerModel: an array of profiles, JSON text, and the count of distinct names', () => {
  const a = freshModel()
  const b = freshModel()
  assert.equal(ck.registerModel([a, b, { ...a, context_window: 2000 }]), 2)
  assert.equal(ck.lookupModel(a.name).context_window, 2000)
  const c = freshModel()
  assert.equal(ck.registerModel(JSON.stringify(c)), 1)
  assert.equal(ck.lookupModel(c.name).context_window, 1000)
  // Registering a name again replaces it, for the one-liners' cached tokenizers too.
  const text = '    def f(x):\n        return x  # naïve café — 日本語のテキスト'
  assert.equal(ck.countTokens(text, { model: c.name }), new ck.Tokenizer('o200k_base').countTokens(text))
  ck.registerModel({ ...c, encoding: 'r50k_base' })
  assert.equal(ck.countTokens(text, { model: c.name }), new ck.Tokenizer('r50k_base').countTokens(text))
  assert.notEqual(new ck.Tokenizer('r50k_base').countTokens(text), new ck.Tokenizer('o200k_base').countTokens(text))
})

test('registerModel: a host counter is used by fit, preflight, countConversation and turns', async () => {
  const p = freshModel()
  const calls = []
  assert.equal(ck.registerModel(p, quarter(calls)), 1)
  const plain = ck.countConversation(CONV, { model: 'gpt-4o' })
  const counted = ck.countConversation(CONV, { model: p.name })
  assert.ok(calls.includes('one two three four'), JSON.stringify(calls))
  // Text is the counter's, framing the model's (the profile's encoding is
  // gpt-4o's): the difference is the counter's counts less the encoding's,
  // for each text it was given.
  const o200k = new ck.Tokenizer('o200k_base')
  const delta = calls.reduce((d, t) => d + Math.ceil(Buffer.byteLength(t) / 4) - o200k.countTokens(t), 0)
  assert.notEqual(delta, 0)
  assert.equal(counted, plain + delta)

  calls.length = 0
  const w = new ck.ContextWindow(p.name)
  w.load(CONV)
  const pre = w.preflight()
  assert.ok(calls.length > 0, 'the window counted with the host counter')
  assert.equal(pre.exact, false)
  assert.equal(pre.prompt_tokens, counted)
  calls.length = 0
  const withInput = w.preflight({ role: 'user', content: 'x'.repeat(40) })
  assert.ok(calls.includes('x'.repeat(40)))
  assert.equal(withInput.new_input - pre.new_input >= 10, true)

  calls.length = 0
  const { report } = ck.fit(CONV, { model: p.name })
  assert.ok(calls.length > 0, 'fit counted with the host counter')
  assert.equal(report.exact, false)
  assert.equal(report.tokens_before, counted)

  calls.length = 0
  const { report: tr } = await ck.fitTurn(CONV, { model: p.name })
  assert.ok(calls.length > 0, 'the turn counted with the host counter')
  assert.equal(tr.tokens_before, counted)

  // Registering the name again without a counter removes it.
  assert.equal(ck.registerModel(p), 1)
  calls.length = 0
  assert.equal(ck.countConversation(CONV, { model: p.name }), plain)
  assert.equal(calls.length, 0)
})

test('a counter that throws fails the call with invalid_argument naming the model and the message', () => {
  const p = freshModel()
  ck.registerModel(p, () => {
    throw new Error('no tokenizer for this text')
  })
  for (const f of [
    () => ck.countConversation(CONV, { model: p.name }),
    () => ck.fit(CONV, { model: p.name }),
    () => new ck.ContextWindow(p.name).load(CONV),
  ]) {
    const e = turnfitError(f, 'invalid_argument')
    assert.match(e.message, new RegExp(`host counter for '${p.name}' failed: Error: no tokenizer for this text`))
  }
  // A thrown non-Error value is reported as its string.
  const q = freshModel()
  ck.registerModel(q, () => {
    throw 'plain string' // eslint-disable-line no-throw-literal
  })
  assert.match(turnfitError(() => ck.countConversation(CONV, { model: q.name }), 'invalid_argument').message,
    /failed: plain string/)
})

test('a counter result that is not a count is refused, naming the model', () => {
  const cases = [
    [() => 1e9, /returned 1000000000 tokens for \d+ bytes of text/],
    [() => 'x', /failed: it returned a string, not a number/],
    [() => '12', /failed: it returned a string, not a number/],
    [() => undefined, /failed: it returned undefined, not a number/],
    [() => 12n, /failed: it returned a bigint, not a number/],
    [() => -1, /failed: it returned -1, not a non-negative integer/],
    [() => 2.5, /failed: it returned 2.5, not a non-negative integer/],
    [() => NaN, /failed: it returned NaN, not a non-negative integer/],
    [() => Infinity, /failed: it returned Infinity, not a non-negative integer/],
  ]
  for (const [count, want] of cases) {
    const p = freshModel()
    ck.registerModel(p, count)
    const e = turnfitError(() => ck.fit(CONV, { model: p.name }), 'invalid_argument')
    assert.match(e.message, new RegExp(`host counter for '${p.name}'`))
    assert.match(e.message, want)
  }
})

test('a counter that calls back into turnfit is refused, not a hang', () => {
  ck.countTokens('warm') // the one-liner's tokenizer exists: the counter's call is countTokens itself
  const p = freshModel()
  const seen = []
  ck.registerModel(p, (text) => {
    try {
      return ck.countTokens(text)
    } catch (e) {
      seen.push(e)
      throw e
    }
  })
  const e = turnfitError(() => ck.fit(CONV, { model: p.name }), 'invalid_argument')
  assert.match(e.message, new RegExp(`host counter for '${p.name}' failed: .*countTokens was called from inside a host counter`))
  assert.ok(seen[0] instanceof ck.TurnfitError && seen[0].code === 'invalid_argument')

  // Touching the window being counted for: refused too (its lock is held).
  const q = freshModel()
  let w
  ck.registerModel(q, () => w.messageTokens().length)
  w = new ck.ContextWindow(q.name)
  assert.match(turnfitError(() => w.push({ role: 'user', content: 'hello' }), 'invalid_argument').message,
    /called from inside a host counter/)
  // Registering from inside a counter: refused.
  const r = freshModel()
  ck.registerModel(r, () => ck.registerModel(freshModel()))
  assert.match(turnfitError(() => ck.countConversation(CONV, { model: r.name })).message,
    /registerModel was called from inside a host counter/)
  // And afterwards everything works.
  assert.equal(ck.countTokens('Hello, world!'), 4)
  assert.ok(ck.countConversation(CONV, { model: 'gpt-4o' }) > 0)
})

test('async calls run on the thread pool, where a host counter cannot run: refused, naming the model', async () => {
  const p = freshModel()
  const calls = []
  ck.registerModel(p, quarter(calls))
  await assert.rejects(ck.fitAsync(CONV, { model: p.name }), (e) => {
    assert.ok(e instanceof ck.TurnfitError, e.message)
    assert.equal(e.code, 'invalid_argument')
    assert.match(e.message, new RegExp(`host counter for '${p.name}' failed: .*only on the JavaScript thread that registered it`))
    return true
  })
  assert.equal(calls.length, 0)
  // The same fit, synchronously, uses it.
  assert.ok(ck.fit(CONV, { model: p.name }).report.tokens_before > 0)
  assert.ok(calls.length > 0)
})

test('a counter registered in a Worker runs only there; the registry is shared by the process', async () => {
  const p = freshModel()
  const index = path.resolve(__dirname, '..')
  const src = `
    const { parentPort, workerData } = require('node:worker_threads')
    const ck = require(workerData.index)
    ck.registerModel(workerData.p, (t) => Math.ceil(Buffer.byteLength(t) / 4))
    parentPort.postMessage(ck.fit(workerData.conv, { model: workerData.p.name }).report.tokens_before)`
  const inWorker = await new Promise((resolve, reject) => {
    const w = new Worker(src, { eval: true, workerData: { index, p, conv: CONV } })
    w.once('message', resolve)
    w.once('error', reject)
  })
  assert.ok(inWorker > 0)
  assert.equal(ck.lookupModel(p.name).source, 'host')
  const e = turnfitError(() => ck.fit(CONV, { model: p.name }), 'invalid_argument')
  assert.match(e.message, /only on the JavaScript thread that registered it/)
})

test('registerModel: bad input is a specific error', () => {
  // Not a profile.
  assert.throws(() => ck.registerModel(42), TypeError)
  assert.throws(() => ck.registerModel(undefined), TypeError)
  assert.throws(() => ck.registerModel(freshModel(), 42), /count must be a function/)
  assert.equal(turnfitError(() => ck.registerModel('{"name": '), 'invalid_json').code, 'invalid_json')
  assert.match(turnfitError(() => ck.registerModel('"gpt"'), 'invalid_json').message, /profile object or an array/)
  // A missing required field, an unknown encoding, a bad name or window.
  assert.match(turnfitError(() => ck.registerModel({ name: 'x', encoding: 'o200k_base' }), 'invalid_json').message, /exact/)
  turnfitError(() => ck.registerModel({ name: 'x', encoding: 'no_such_base', exact: false }))
  assert.match(turnfitError(() => ck.registerModel({ name: '', encoding: 'o200k_base', exact: false }), 'invalid_argument').message,
    /model name/)
  assert.match(turnfitError(() => ck.registerModel({ ...freshModel(), context_window: 0 }), 'invalid_argument').message,
    /context_window must be positive/)
  // An element of an array is named; nothing in the batch is registered.
  const ok = freshModel()
  assert.match(turnfitError(() => ck.registerModel([ok, { name: '', encoding: 'o200k_base', exact: false }])).message, /profile 1/)
  turnfitError(() => ck.lookupModel(ok.name), 'unknown_model')
  // A counter belongs to one profile.
  assert.match(turnfitError(() => ck.registerModel([freshModel()], () => 1), 'invalid_json').message, /one profile object/)
  // Deep nesting and oversized input are refused by the core's JSON reader.
  turnfitError(() => ck.registerModel('['.repeat(100000) + ']'.repeat(100000)))
  assert.equal(ck.countTokens('Hello, world!'), 4)
})

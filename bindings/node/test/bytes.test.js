'use strict'
// The byte-level and special-token API (tokenBytes, tokenId, encodeBytes,
// decodeBytes, decode modes, decodeWithOffsets, allowedSpecial /
// disallowedSpecial, specialTokenList) against tiktoken 0.14.0's own answers:
// tests/fixtures/tiktoken/bytes_oracle.json, the cases core and the Python
// binding run, here through the Node facade.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const ck = require('..')

const FIXTURE = path.resolve(__dirname, '../../../tests/fixtures/tiktoken/bytes_oracle.json')
const hex = (b) => Buffer.from(b).toString('hex')
const unhex = (s) => new Uint8Array(Buffer.from(s, 'hex'))
const set = (v) => (v === 'all' ? 'all' : new Set(v))

function run(t, op, inp) {
  try {
    switch (op) {
      case 'special_tokens': {
        const tokens = Object.fromEntries(t.specialTokenList().map((e) => [e.token, e.id]))
        const entries = Object.entries(tokens)
        if (entries.length < 100) return { tokens }
        return { count: entries.length, first: Object.fromEntries(entries.slice(0, 20)) }
      }
      case 'token_bytes': return { bytes: hex(t.tokenBytes(inp.id)) }
      case 'token_id': return { id: t.tokenId(unhex(inp.bytes)) }
      case 'decode_bytes': return { bytes: hex(t.decodeBytes(inp.ids)) }
      case 'decode': return { text: t.decode(inp.ids, { mode: inp.mode }) }
      case 'decode_with_offsets': return t.decodeWithOffsets(inp.ids)
      case 'encode_bytes': return { ids: Array.from(t.encodeBytes(unhex(inp.bytes))) }
      case 'encode_special': {
        const o = { allowedSpecial: set(inp.allowed_special), disallowedSpecial: set(inp.disallowed_special) }
        return { ids: Array.from(t.encode(inp.text, o)) }
      }
    }
  } catch (e) {
    if (!(e instanceof ck.TurnfitError)) throw e
    if (e.code === 'invalid_argument') {
      const m = /disallowed special token '(.*)' at byte offset/.exec(e.message)
      if (m) return { error: 'disallowed', token: m[1] }
    }
    return { error: e.code }
  }
  throw new Error(`unknown op ${op}`)
}

test('byte API: every tiktoken 0.14.0 oracle case', () => {
  const doc = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'))
  assert.equal(doc.oracle, 'tiktoken 0.14.0 (OpenAI)')
  const toks = new Map()
  const failures = []
  for (const [i, c] of doc.cases.entries()) {
    if (!toks.has(c.encoding)) toks.set(c.encoding, new ck.Tokenizer(c.encoding))
    const got = run(toks.get(c.encoding), c.op, c.input)
    try {
      assert.deepStrictEqual(JSON.parse(JSON.stringify(got)), c.expected)
    } catch {
      failures.push(`case ${i} ${c.op} ${c.encoding}: expected ${JSON.stringify(c.expected)}, got ${JSON.stringify(got)}`)
    }
  }
  console.log(`byte oracle: ${doc.cases.length - failures.length}/${doc.cases.length}`)
  assert.deepEqual(failures.slice(0, 10), [])
  assert.ok(doc.cases.length > 4000)
})

test('byte API: shapes, defaults and bad input', () => {
  const t = new ck.Tokenizer('cl100k_base')
  assert.ok(t.tokenBytes(0) instanceof Uint8Array)
  assert.equal(t.tokenId('hello'), t.tokenId(new TextEncoder().encode('hello')))
  assert.equal(t.tokenId('<|endoftext|>'), 100257)
  assert.ok(t.isSpecialToken(100257))
  assert.ok(!t.isSpecialToken(0))
  // An ordinary tokenizer reads special-token text as text, unless allowed.
  assert.deepEqual(Array.from(t.encode('<|endoftext|>', { allowedSpecial: ['<|endoftext|>'] })), [100257])
  assert.deepEqual(Array.from(t.encode('<|endoftext|>', { allowedSpecial: 'all' })), [100257])
  assert.ok(t.encode('<|endoftext|>').length > 1)
  assert.equal(t.countTokens('<|endoftext|>', { allowedSpecial: 'all' }), 1)
  assert.equal(t.countTokens(new TextEncoder().encode('<|endoftext|>'), { allowedSpecial: new Set(['<|endoftext|>']) }), 1)
  // Only disallowedSpecial given: tiktoken's default (nothing allowed).
  const e = (() => { try { t.encode('a<|endoftext|>', { disallowedSpecial: 'all' }) } catch (x) { return x } })()
  assert.ok(e instanceof ck.TurnfitError)
  assert.equal(e.code, 'invalid_argument')
  assert.match(e.message, /'<\|endoftext\|>' at byte offset 1/)
  assert.deepEqual(Array.from(t.encode('<|endoftext|>', { disallowedSpecial: [] })), Array.from(t.encode('<|endoftext|>')))
  // Bytes that are not UTF-8: encodeBytes takes them, encode refuses them.
  const cut = new Uint8Array([0x68, 0xc3])
  assert.ok(t.encodeBytes(cut).length >= 2)
  assert.equal(t.decode(Array.from(t.encodeBytes(cut)), { mode: 'ignore' }), 'h')
  assert.throws(() => t.encode(cut), (x) => x.code === 'invalid_utf8')
  const { text, offsets } = t.decodeWithOffsets(t.encode('hello world'))
  assert.equal(text, 'hello world')
  assert.deepEqual(offsets, [0, 5])
  // Bad arguments are TypeErrors; unknown ids are unknown_token.
  for (const bad of [-1, 1.5, 2 ** 32, '1', null, undefined]) {
    assert.throws(() => t.tokenBytes(bad), TypeError)
    assert.throws(() => t.isSpecialToken(bad), TypeError)
  }
  assert.throws(() => t.tokenBytes(100256), (x) => x.code === 'unknown_token')
  assert.throws(() => t.tokenId(new Uint8Array([0xff, 0xfe, 0xfd])), (x) => x.code === 'unknown_token')
  assert.throws(() => t.tokenId(42), TypeError)
  assert.throws(() => t.encodeBytes('abc'), TypeError)
  assert.throws(() => t.encodeBytes([1, 2]), TypeError)
  assert.throws(() => t.decodeWithOffsets('abc'), TypeError)
  assert.throws(() => t.decodeWithOffsets([0xd800 * 1000]), (x) => x.code === 'unknown_token')
  assert.throws(() => t.decode([1], { mode: 'lenient' }), TypeError)
  assert.throws(() => t.encode('x', { allowedSpecial: 'some' }), TypeError)
  assert.throws(() => t.encode('x', { allowedSpecial: [1] }), TypeError)
  assert.throws(() => t.encode('x', { disallowedSpecial: null }), TypeError)
  assert.throws(() => t.encode('x', { allowedSpecial: Array(10000).fill('y'.repeat(300)) }), (x) => x.code === 'limit_exceeded')
  // Lone surrogates are U+FFFD on the string path (one conversion for every method).
  assert.equal(t.countTokens('a\ud800b'), t.countTokens('a\ufffdb'))
  assert.deepEqual(Array.from(t.encode('\udc00', { allowedSpecial: 'all' })), Array.from(t.encode('\ufffd')))
  const list = t.specialTokenList()
  assert.deepEqual(list[0], { token: '<|endoftext|>', id: 100257 })
})

// JS strings are written into a UTF-8 buffer each thread reuses (src/text.rs,
// kept up to 1 MiB of capacity). Whatever came before, a string must convert
// to exactly its own bytes: checked against the Uint8Array path (Buffer.from
// writes a lone surrogate as U+FFFD too) and by decoding back, for long then
// short texts (stale bytes would show), non-ASCII, lone surrogates, the empty
// string, and a text whose buffer is too large to keep (allocated per call).
test('string conversion: a reused buffer gives each string exactly its own bytes', () => {
  const t = new ck.Tokenizer('o200k_base')
  const huge = 'ab '.repeat(200_000) // 600k UTF-16 units: 1.8 MB reserved, not kept
  const texts = [
    'x'.repeat(50_000), 'x', '', 'x'.repeat(49_999), 'héllo wörld', '日本語のテキスト'.repeat(300), 'a',
    'a\ud800b', '\udfff', '\ud83d\ude00 ok', huge, 'tail', '', '¿Cuántos años?'.repeat(2_000), 'end',
  ]
  for (const round of [1, 2]) {
    for (const s of texts) {
      const what = `${JSON.stringify(s.slice(0, 20))} (${s.length} units, round ${round})`
      const bytes = Buffer.from(s)
      assert.equal(t.countTokens(s), t.countTokens(bytes), what)
      const ids = t.encode(s)
      assert.deepEqual(ids, t.encode(bytes), what)
      assert.equal(t.decode(ids), bytes.toString('utf8'), what)
      assert.deepEqual(t.countUntilLimit(s, 5), t.countUntilLimit(bytes, 5), what)
    }
  }
  // Not a string: the same TypeError as before, and the next call is unaffected.
  assert.throws(() => t.countTokens(42), TypeError)
  assert.equal(t.countTokens('hello world'), 2)
})

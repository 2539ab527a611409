'use strict'
// FileTokenizer: a tokenizer loaded from a model's file. Every id is checked
// against HF tokenizers by vectors.test.js (tests/vectors/file_tokenizer.json);
// these cover the facade and its errors.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const ck = require('..')

const FILES = path.resolve(__dirname, '../../../tests/vectors/files')
const BYTE_LEVEL = path.join(FILES, 'tiny-byte-level.tokenizer.json')
const HELLO = [525, 401, 80, 13, 422, 473, 306, 2]

function code(f) {
  try {
    f()
  } catch (e) {
    if (e instanceof ck.TurnfitError) return [e.code, e.message]
    return ['js', `${e.name}: ${e.message}`]
  }
  return ['ok', '']
}

test('counts, encodes and decodes as HF tokenizers', () => {
  const t = new ck.FileTokenizer(BYTE_LEVEL)
  assert.deepEqual(Array.from(t.encode('Hello, world!')), HELLO)
  assert.equal(t.encode('Hello, world!', { addSpecial: true })[0], 0)
  assert.equal(t.countTokens('Hello, world!'), 8)
  assert.equal(t.decode(HELLO), 'Hello, world!')
  assert.equal(new ck.FileTokenizer(pathToFileURL(BYTE_LEVEL)).countTokens('Hello, world!'), 8)
})

test('special-token text is ordinary unless asked; info says which', () => {
  const ordinary = new ck.FileTokenizer(BYTE_LEVEL)
  const recognize = new ck.FileTokenizer(BYTE_LEVEL, { special: 'recognize' })
  assert.ok(!Array.from(ordinary.encode('a <|end|> b')).includes(1))
  assert.ok(Array.from(recognize.encode('a <|end|> b')).includes(1))
  assert.equal(ordinary.info.specialTokens, 'ordinary')
  assert.equal(recognize.info.specialTokens, 'recognize')
})

test('fromBytes, and info', () => {
  const t = ck.FileTokenizer.fromBytes(fs.readFileSync(BYTE_LEVEL), { name: 'tiny.json' })
  assert.deepEqual(t.info, {
    name: 'tiny.json', vocabSize: 600, specialTokens: 'ordinary', addSpecial: true,
    contextLength: null, pre: null, hasChatTemplate: false,
  })
  assert.equal(t.countTokens('Hello, world!'), 8)
})

test('bad files fail with specific codes naming the file', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'turnfit-file-tok-'))
  try {
    let [c, m] = code(() => new ck.FileTokenizer(path.join(dir, 'missing.json')))
    assert.equal(c, 'io'); assert.match(m, /missing\.json/)
    fs.writeFileSync(path.join(dir, 'cut.json'), fs.readFileSync(BYTE_LEVEL).subarray(0, 1000))
    ;[c, m] = code(() => new ck.FileTokenizer(path.join(dir, 'cut.json')))
    assert.equal(c, 'invalid_json'); assert.match(m, /cut\.json/)
    ;[c, m] = code(() => new ck.FileTokenizer(dir))
    assert.equal(c, 'invalid_argument'); assert.match(m, /not a regular file/)
    ;[c, m] = code(() => new ck.FileTokenizer(BYTE_LEVEL, { pattern: 'llama3' }))
    assert.equal(c, 'invalid_argument'); assert.match(m, /no pattern/)
    ;[c, m] = code(() => ck.FileTokenizer.fromBytes(Buffer.from('GGUF\x03\x00\x00\x00', 'latin1'), { name: 'm.gguf' }))
    assert.equal(c, 'invalid_argument'); assert.match(m, /m\.gguf/)
    ;[c, m] = code(() => new ck.FileTokenizer(BYTE_LEVEL).decode([4000000]))
    assert.equal(c, 'unknown_token')
    assert.equal(code(() => new ck.FileTokenizer(42))[0], 'js')
    assert.equal(code(() => new ck.FileTokenizer(BYTE_LEVEL, { special: 'all' }))[0], 'js')
    assert.equal(code(() => ck.FileTokenizer.fromBytes('not bytes'))[0], 'js')
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

// Node tokenizer benchmark: turnfit (napi, release) against gpt-tokenizer,
// js-tiktoken, tiktoken (WASM) and ai-tokenizer, o200k_base, same inputs as
// bench/ (bench/gen_inputs.py). Counts must agree with turnfit's before a
// library is timed; a disagreement is printed and that cell is not timed.
// Run with bench/node/run.sh (it builds the release library first).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'

const require = createRequire(import.meta.url)
const ck = require('../../bindings/node/index.js')
const gpt = await import('gpt-tokenizer/encoding/o200k_base')
const { Tiktoken } = await import('js-tiktoken/lite')
const jsRanks = (await import('js-tiktoken/ranks/o200k_base')).default
const wasm = await import('tiktoken')
const { Tokenizer: AiTokenizer } = await import('ai-tokenizer')
const aiEnc = await import('ai-tokenizer/encoding/o200k_base')

const dir = process.argv[2]
const tok = new ck.Tokenizer('o200k_base')
const js = new Tiktoken(jsRanks)
const wasmEnc = wasm.get_encoding('o200k_base')
const ai = new AiTokenizer(aiEnc)

// gpt-tokenizer and ai-tokenizer memoize whole pieces (a Map of up to 100k
// entries, keyed by the piece's text), and V8 caches a string's hash, so a
// benchmark that counts the same text again and again measures their cache:
// on 20k × "a" the whole input is one piece, and every call after the first
// is one Map lookup. The "cache cleared" columns empty that cache before each
// call (gpt-tokenizer's public clearMergeCache; ai-tokenizer's mergeCache
// field), which is what a text never seen before costs. turnfit has per-thread
// caches too (token counts of pieces up to 14 bytes, ids of merged pieces up
// to 96), kept across calls; its cleared column empties them before each call
// (the __clearTokenCaches benchmark hook). A cleared column's ratio is to
// turnfit's cleared column, the others' to turnfit's warm one.
const COLD = ' (cache cleared per call)'
// The clearing itself is not timed: each call of a cleared column is timed
// alone, after its clear (emptying turnfit's 4 MiB count table costs more
// than counting 1 KiB).
const clears = {
  ['turnfit' + COLD]: () => ck.__clearTokenCaches(),
  ['gpt-tokenizer' + COLD]: () => gpt.clearMergeCache(),
  ['ai-tokenizer' + COLD]: () => ai.mergeCache.clear(),
}
const libs = {
  turnfit: (t) => tok.countTokens(t),
  ['turnfit' + COLD]: (t) => tok.countTokens(t),
  'gpt-tokenizer': (t) => gpt.countTokens(t),
  ['gpt-tokenizer' + COLD]: (t) => gpt.countTokens(t),
  'js-tiktoken': (t) => js.encode(t).length,
  'tiktoken (WASM)': (t) => wasmEnc.encode_ordinary(t).length,
  'ai-tokenizer': (t) => ai.count(t),
  ['ai-tokenizer' + COLD]: (t) => ai.count(t),
}
// BENCH_LIBS=gpt-tokenizer,... times only those (prefix match; turnfit's two
// columns always run), for a focused re-run; the default is every library.
if (process.env.BENCH_LIBS) {
  const keep = process.env.BENCH_LIBS.split(',')
  for (const lib of Object.keys(libs)) {
    if (!lib.startsWith('turnfit') && !keep.some((k) => lib.startsWith(k))) delete libs[lib]
  }
}
const floor = {
  'napi string conversion (floor)': (t) => ck.__stringFloor(t),
  "napi-rs String floor (before)": (t) => ck.__stringFloorNapi(t),
}

const read = (f) => readFileSync(join(dir, f), 'utf8')
const prose = read('prose.txt')
let kib = Buffer.from(prose).subarray(0, 1024).toString('utf8').replace(/\ufffd$/, '')
// Repetitive text, as hosts see it (the same tool output, log, licence or
// JSON document again and again): one real document repeated to 1 MiB, cut
// on a character boundary. Prose: the GPL-3 text Debian ships
// (/usr/share/common-licenses/GPL-3, 35,149 bytes; REPETITIVE_PROSE names
// another file). JSON: bench/node/package-lock.json (the pinned peers, in
// this repository), 2-space indented as npm writes it.
const MIB = 1024 * 1024
const repeatTo = (doc, bytes) => {
  const b = Buffer.from(doc.repeat(Math.ceil(bytes / Buffer.byteLength(doc))))
  return b.subarray(0, bytes).toString('utf8').replace(/\ufffd$/, '')
}
const here = new URL('.', import.meta.url).pathname
const repProse = repeatTo(readFileSync(process.env.REPETITIVE_PROSE || '/usr/share/common-licenses/GPL-3', 'utf8'), MIB)
const repJson = repeatTo(readFileSync(join(here, 'package-lock.json'), 'utf8'), MIB)
// A different KiB of prose on every call (1,000 UTF-16 units from a moving
// offset, never splitting a surrogate pair): text no whole-text cache has
// seen, while each library's piece caches stay warm. The slicing is inside
// every column's time, the floor's included.
let sliceAt = 0
const nextKib = () => {
  sliceAt = (sliceAt + 7919) % (prose.length - 1002)
  let a = sliceAt
  if (prose.charCodeAt(a) >= 0xdc00 && prose.charCodeAt(a) <= 0xdfff) a++
  let b = a + 1000
  if (prose.charCodeAt(b - 1) >= 0xd800 && prose.charCodeAt(b - 1) <= 0xdbff) b++
  return prose.substring(a, b)
}
const inputs = [
  ['1 KiB prose (per call)', kib],
  ['1 KiB prose, a new KiB each call', nextKib(), nextKib],
  ['1 MiB prose', prose],
  ['1 MiB repetitive prose', repProse],
  ['1 MiB repetitive JSON', repJson],
  ['1 MiB code', read('code.txt')],
  ['1 MiB multilingual', read('multilingual.txt')],
  ['20k × "a"', 'a'.repeat(20000)],
  ['1M × "a"', 'a'.repeat(1000000)],
]

// Each library's calls per sample: enough to last ~50 ms by its first call;
// a first call over `slow` seconds makes it a single timed call (n=1).
function plan(f, arg, clear, slow = 2) {
  clear?.()
  const t0 = performance.now()
  f(arg())
  const first = (performance.now() - t0) / 1000
  if (first <= slow) {
    // Planned on a second call: the first includes compiling the peer's JS.
    clear?.()
    const t1 = performance.now()
    f(arg())
    const second = (performance.now() - t1) / 1000
    return { reps: Math.max(1, Math.ceil(0.05 / Math.max(second, 1e-7))) }
  }
  return { reps: 1, once: first }
}

const fmt = (s) => (s >= 1 ? `${s.toFixed(2)} s` : s >= 1e-3 ? `${(s * 1e3).toFixed(2)} ms` : `${(s * 1e6).toFixed(1)} µs`)
const results = []
// 1M × "a" runs a library only if its 20k × "a" time (cache cleared, where
// it has a cache) times 2,500 (quadratic growth over 50× the input) stays
// under two minutes: gpt-tokenizer's first call on 1M × "a" did not finish in
// 10 minutes before this rule.
const coldOf = (lib) => (libs[lib + COLD] ? lib + COLD : lib)
const twentyK = {}
const SAMPLES = 7
for (const [name, text, next] of inputs) {
  const arg = next ?? (() => text)
  const bytes = Buffer.byteLength(text)
  const expected = tok.countTokens(text)
  const row = { input: name, bytes, tokens: expected, cells: {} }
  const timed = {}
  for (const [lib, f] of Object.entries({ ...libs, ...(name.startsWith('1M ×') ? {} : floor) })) {
    if (name === '1M × "a"' && !lib.includes('floor')) {
      const at20k = twentyK[coldOf(lib.replace(COLD, ''))]
      if (at20k === undefined || at20k * 2500 > 120) {
        row.cells[lib] = { note: `not run: ${at20k === undefined ? 'not timed' : fmt(at20k)} on 20k × "a" extrapolates past 2 min` }
        continue
      }
    }
    if (!lib.includes('floor')) {
      // A moving input is checked on 50 of its texts.
      const checks = next ? Array.from({ length: 50 }, next) : [text]
      const bad = checks.find((t) => (clears[lib]?.(), f(t)) !== tok.countTokens(t))
      if (bad !== undefined) {
        row.cells[lib] = { note: `count ${f(bad)} ≠ ${tok.countTokens(bad)}, not timed` }
        continue
      }
    }
    const p = plan(f, arg, clears[lib])
    if (p.once !== undefined) row.cells[lib] = { s: p.once, n: 1 }
    else timed[lib] = { f, clear: clears[lib], reps: p.reps, xs: [] }
  }
  // Interleaved: each sample times every library once, in turn (ABAB...),
  // so a change in the machine's load falls on all of them alike.
  for (let i = 0; i < SAMPLES; i++) {
    for (const t of Object.values(timed)) {
      let ms = 0
      if (t.clear) {
        for (let r = 0; r < t.reps; r++) {
          t.clear()
          const a = performance.now()
          t.f(arg())
          ms += performance.now() - a
        }
      } else {
        const a = performance.now()
        for (let r = 0; r < t.reps; r++) t.f(arg())
        ms = performance.now() - a
      }
      t.xs.push(ms / 1000 / t.reps)
    }
  }
  for (const [lib, t] of Object.entries(timed)) {
    t.xs.sort((a, b) => a - b)
    row.cells[lib] = { s: t.xs[t.xs.length >> 1], n: SAMPLES * t.reps }
  }
  for (const [lib, c] of Object.entries(row.cells)) {
    if (c.s === undefined) continue
    if (name === '20k × "a"') twentyK[lib] = c.s
    console.error(`${name.padEnd(24)} ${lib.padEnd(32)} ${fmt(c.s).padStart(10)}  (n=${c.n})`)
  }
  results.push(row)
}
wasmEnc.free()

// Markdown: median per call and turnfit's speed-up (other / turnfit).
const cols = [...Object.keys(libs), ...Object.keys(floor)]
console.log(`| input | bytes | tokens | ${cols.join(' | ')} |`)
console.log(`|---|---:|---:|${cols.map(() => '---:').join('|')}|`)
for (const r of results) {
  const cell = (lib) => {
    const c = r.cells[lib]
    if (!c) return '-'
    if (c.note) return c.note
    const base = (lib.endsWith(COLD) && r.cells['turnfit' + COLD]?.s) || r.cells.turnfit.s
    const ratio = lib.startsWith('turnfit') ? '' : lib.includes('floor') ? ` (${((c.s / base) * 100).toFixed(0)}% of turnfit)` : ` (${(c.s / base).toFixed(1)}×)`
    return `${fmt(c.s)}${ratio}${c.n === 1 ? ' n=1' : ''}`
  }
  console.log(`| ${r.input} | ${r.bytes} | ${r.tokens} | ${cols.map(cell).join(' | ')} |`)
}

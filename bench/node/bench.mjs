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
// field), which is what a text never seen before costs. turnfit's own piece
// cache holds only pieces up to 96 bytes, so it never hits on these rows.
const COLD = ' (cache cleared per call)'
const libs = {
  turnfit: (t) => tok.countTokens(t),
  'gpt-tokenizer': (t) => gpt.countTokens(t),
  ['gpt-tokenizer' + COLD]: (t) => { gpt.clearMergeCache(); return gpt.countTokens(t) },
  'js-tiktoken': (t) => js.encode(t).length,
  'tiktoken (WASM)': (t) => wasmEnc.encode_ordinary(t).length,
  'ai-tokenizer': (t) => ai.count(t),
  ['ai-tokenizer' + COLD]: (t) => { ai.mergeCache.clear(); return ai.count(t) },
}
// BENCH_LIBS=turnfit,gpt-tokenizer,... times only those (prefix match; turnfit
// always runs), for a focused re-run; the default is every library.
if (process.env.BENCH_LIBS) {
  const keep = process.env.BENCH_LIBS.split(',')
  for (const lib of Object.keys(libs)) {
    if (lib !== 'turnfit' && !keep.some((k) => lib.startsWith(k))) delete libs[lib]
  }
}
const floor = {
  'napi string conversion (floor)': (t) => ck.__stringFloor(t),
  "napi-rs String floor (before)": (t) => ck.__stringFloorNapi(t),
}

const read = (f) => readFileSync(join(dir, f), 'utf8')
const prose = read('prose.txt')
let kib = Buffer.from(prose).subarray(0, 1024).toString('utf8').replace(/\ufffd$/, '')
const inputs = [
  ['1 KiB prose (per call)', kib],
  ['1 MiB prose', prose],
  ['1 MiB code', read('code.txt')],
  ['1 MiB multilingual', read('multilingual.txt')],
  ['20k × "a"', 'a'.repeat(20000)],
  ['1M × "a"', 'a'.repeat(1000000)],
]

// Median of `samples` timings, each the mean of enough calls to last ~50 ms;
// a call that takes longer than `slow` seconds is timed once (n=1).
function time(f, text, { samples = 7, slow = 2 } = {}) {
  const t0 = performance.now()
  f(text)
  const first = (performance.now() - t0) / 1000
  if (first > slow) return { s: first, n: 1 }
  const reps = Math.max(1, Math.ceil(0.05 / Math.max(first, 1e-7)))
  const xs = []
  for (let i = 0; i < samples; i++) {
    const a = performance.now()
    for (let r = 0; r < reps; r++) f(text)
    xs.push((performance.now() - a) / 1000 / reps)
  }
  xs.sort((a, b) => a - b)
  return { s: xs[xs.length >> 1], n: samples * reps }
}

const fmt = (s) => (s >= 1 ? `${s.toFixed(2)} s` : s >= 1e-3 ? `${(s * 1e3).toFixed(2)} ms` : `${(s * 1e6).toFixed(1)} µs`)
const results = []
// 1M × "a" runs a library only if its 20k × "a" time (cache cleared, where
// it has a cache) times 2,500 (quadratic growth over 50× the input) stays
// under two minutes: gpt-tokenizer's first call on 1M × "a" did not finish in
// 10 minutes before this rule.
const coldOf = (lib) => (libs[lib + COLD] ? lib + COLD : lib)
const twentyK = {}
for (const [name, text] of inputs) {
  const bytes = Buffer.byteLength(text)
  const expected = tok.countTokens(text)
  const row = { input: name, bytes, tokens: expected, cells: {} }
  for (const [lib, f] of Object.entries({ ...libs, ...(name.startsWith('1M ×') ? {} : floor) })) {
    if (name === '1M × "a"' && !lib.includes('floor')) {
      const at20k = twentyK[coldOf(lib.replace(COLD, ''))]
      if (at20k === undefined || at20k * 2500 > 120) {
        row.cells[lib] = { note: `not run: ${at20k === undefined ? 'not timed' : fmt(at20k)} on 20k × "a" extrapolates past 2 min` }
        continue
      }
    }
    if (!lib.includes('floor')) {
      const got = f(text)
      if (got !== expected) {
        row.cells[lib] = { note: `count ${got} ≠ ${expected}, not timed` }
        continue
      }
    }
    const t = time(f, text)
    row.cells[lib] = { s: t.s, n: t.n }
    if (name === '20k × "a"') twentyK[lib] = t.s
    console.error(`${name.padEnd(24)} ${lib.padEnd(32)} ${fmt(t.s).padStart(10)}  (n=${t.n})`)
  }
  results.push(row)
}
wasmEnc.free()

// Markdown: median per call and turnfit's speed-up (other / turnfit).
const cols = [...Object.keys(libs), ...Object.keys(floor)]
console.log(`| input | bytes | tokens | ${cols.join(' | ')} |`)
console.log(`|---|---:|---:|${cols.map(() => '---:').join('|')}|`)
for (const r of results) {
  const base = r.cells.turnfit.s
  const cell = (lib) => {
    const c = r.cells[lib]
    if (!c) return '-'
    if (c.note) return c.note
    const ratio = lib === 'turnfit' ? '' : lib.includes('floor') ? ` (${((c.s / base) * 100).toFixed(0)}% of turnfit)` : ` (${(c.s / base).toFixed(1)}×)`
    return `${fmt(c.s)}${ratio}${c.n === 1 ? ' n=1' : ''}`
  }
  console.log(`| ${r.input} | ${r.bytes} | ${r.tokens} | ${cols.map(cell).join(' | ')} |`)
}

'use strict'
// The public API of the `turnfit` npm package (CommonJS; index.mjs re-exports
// it for ESM). It only converts: argument checks (TypeError), JSON text to
// plain objects and back, and the native error prefix `turnfit:<kind>: ` to a
// TurnfitError. Every behaviour is in the Rust core (../../core).

const native = require('./binding.js')

const ERROR_CODES = Object.freeze([
  'invalid_argument',
  'invalid_utf8',
  'unknown_encoding',
  'unknown_model',
  'unknown_token',
  'limit_exceeded',
  'invalid_json',
  'does_not_fit',
  'io',
  'unsafe_path',
  'cycle_detected',
  'depth_exceeded',
  'internal',
])

class TurnfitError extends Error {
  constructor(code, message) {
    super(message)
    this.name = 'TurnfitError'
    this.code = code
  }
}

const PREFIX = /^turnfit:([a-z0-9_]+): ([\s\S]*)$/

function convertError(e) {
  if (e instanceof Error && !(e instanceof TurnfitError)) {
    const m = PREFIX.exec(e.message)
    if (m) return new TurnfitError(m[1], m[2])
    // Argument conversion failures inside napi (a value of the wrong type
    // reached the native layer) are the language's TypeError.
    if (e.code === 'InvalidArg' || e.code === 'NumberExpected' || e.code === 'StringExpected' ||
        e.code === 'ObjectExpected' || e.code === 'ArrayExpected') {
      return new TypeError(e.message)
    }
  }
  return e
}

function call(f) {
  try {
    return f()
  } catch (e) {
    throw convertError(e)
  }
}

async function callAsync(p) {
  try {
    return await p
  } catch (e) {
    throw convertError(e)
  }
}

// ------------------------------------------------------------ argument checks

function isBytes(x) {
  return x instanceof Uint8Array
}

function checkText(text, what = 'text') {
  if (typeof text !== 'string' && !isBytes(text)) {
    throw new TypeError(`${what} must be a string or a Uint8Array, got ${describe(text)}`)
  }
}

function checkString(s, what) {
  if (typeof s !== 'string') throw new TypeError(`${what} must be a string, got ${describe(s)}`)
}

function checkCount(n, what) {
  if (typeof n !== 'number' || !Number.isInteger(n) && n !== Infinity || n < 0) {
    throw new TypeError(`${what} must be a non-negative integer, got ${describe(n)}`)
  }
}

function checkOptions(o, what = 'options') {
  if (o !== undefined && o !== null && (typeof o !== 'object' || Array.isArray(o))) {
    throw new TypeError(`${what} must be an object, got ${describe(o)}`)
  }
  return o || {}
}

function checkSignal(signal) {
  if (signal !== undefined && signal !== null &&
      (typeof signal !== 'object' || typeof signal.aborted !== 'boolean')) {
    throw new TypeError(`signal must be an AbortSignal, got ${describe(signal)}`)
  }
  return signal || undefined
}

function describe(x) {
  if (x === null) return 'null'
  if (Array.isArray(x)) return 'an array'
  return typeof x
}

// Objects go in as JSON text; strings are taken as JSON text already. A
// BigInt becomes a JSON integer (u64 seeds beyond 2^53 stay exact).
function jsonIn(v, what) {
  if (v === undefined || v === null) return null
  if (typeof v === 'string') return v
  if (typeof v !== 'object') throw new TypeError(`${what} must be an object or JSON text, got ${describe(v)}`)
  let big = false
  const s = JSON.stringify(v, (_k, x) => {
    if (typeof x !== 'bigint') return x
    big = true
    return `\u0000bigint:${x}`
  })
  return big ? s.replace(/"\\u0000bigint:(-?\d+)"/g, '$1') : s
}

function jsonOut(text) {
  return JSON.parse(text)
}

function abortedError(signal) {
  const e = new Error('This operation was aborted')
  e.name = 'AbortError'
  e.cause = signal && signal.reason
  return e
}

// A call whose signal is already aborted never reaches the pool.
function startAsync(signal, start) {
  signal = checkSignal(signal)
  if (signal && signal.aborted) return Promise.reject(abortedError(signal))
  return callAsync(call(() => start(signal)))
}

// ------------------------------------------------------------ Tokenizer

const NATIVE = Symbol('turnfit.native')
const HANDLE = Symbol('turnfit.handle')
const EMIT = Symbol('turnfit.emit')
const LISTENER = Symbol('turnfit.listener')

function specialFlag(options) {
  const s = options.special === undefined ? 'ordinary' : options.special
  if (s !== 'ordinary' && s !== 'recognize') {
    throw new TypeError(`special must be 'ordinary' or 'recognize', got ${JSON.stringify(s)}`)
  }
  return s === 'recognize'
}

class Tokenizer {
  constructor(encoding, options) {
    if (encoding && encoding[NATIVE]) {
      this[NATIVE] = encoding[NATIVE]
    } else {
      checkString(encoding, 'encoding')
      const o = checkOptions(options)
      this[NATIVE] = call(() => native.NativeTokenizer.fromEncoding(encoding, specialFlag(o)))
    }
    // String counts go through native.countText(handle, text): a method call
    // on the native object costs more than a cached count (src/tokenizer.rs).
    this[HANDLE] = this[NATIVE].handle()
  }

  static forModel(model, options) {
    checkString(model, 'model')
    const o = checkOptions(options)
    if (o.fallbackEncoding !== undefined) checkString(o.fallbackEncoding, 'fallbackEncoding')
    const n = call(() => native.NativeTokenizer.forModel(model, o.fallbackEncoding, specialFlag(o)))
    return new Tokenizer({ [NATIVE]: n })
  }

  get info() {
    const i = jsonOut(call(() => this[NATIVE].infoJson()))
    return {
      encoding: i.encoding,
      specialTokens: i.special_tokens,
      vocabSize: i.vocab_size,
      memoryBytes: i.memory_bytes,
      model: i.model,
    }
  }

  countTokens(text, options) {
    const t = this[NATIVE]
    if (options !== undefined) {
      checkText(text)
      const policy = specialPolicy(options)
      if (policy !== null) return call(() => t.countWith(text, policy))
    }
    if (typeof text === 'string') return call(() => native.countText(this[HANDLE], text))
    checkText(text)
    return call(() => t.countBytes(text))
  }

  countUntilLimit(text, limit) {
    checkText(text)
    checkCount(limit, 'limit')
    const t = this[NATIVE]
    return typeof text === 'string'
      ? call(() => t.countUntilLimit(text, limit))
      : call(() => t.countUntilLimitBytes(text, limit))
  }

  isWithinTokenLimit(text, limit) {
    const r = this.countUntilLimit(text, limit)
    return r.exceeded ? false : r.tokens
  }

  encode(text, options) {
    checkText(text)
    const t = this[NATIVE]
    const policy = specialPolicy(options)
    if (policy !== null) return call(() => t.encodeWith(text, policy))
    return typeof text === 'string' ? call(() => t.encode(text)) : call(() => t.encodeBytes(text))
  }

  decode(ids, options) {
    const o = checkOptions(options)
    const mode = o.mode === undefined ? 'replace' : o.mode
    if (mode !== 'replace' && mode !== 'strict' && mode !== 'ignore') {
      throw new TypeError(`mode must be 'replace', 'strict' or 'ignore', got ${JSON.stringify(mode)}`)
    }
    return call(() => this[NATIVE].decode(idsArray(ids), mode))
  }

  decodeBytes(ids) {
    return call(() => this[NATIVE].decodeBytes(idsArray(ids)))
  }

  decodeWithOffsets(ids) {
    return call(() => this[NATIVE].decodeWithOffsets(idsArray(ids)))
  }

  tokenBytes(id) {
    checkId(id)
    return call(() => this[NATIVE].tokenBytes(id))
  }

  tokenId(token) {
    checkText(token, 'token')
    const t = this[NATIVE]
    return typeof token === 'string' ? call(() => t.tokenIdText(token)) : call(() => t.tokenId(token))
  }

  encodeBytes(bytes) {
    if (!isBytes(bytes)) throw new TypeError(`bytes must be a Uint8Array, got ${describe(bytes)}`)
    return call(() => this[NATIVE].encodeRawBytes(bytes))
  }

  specialTokenList() {
    return call(() => this[NATIVE].specialTokenList())
  }

  isSpecialToken(id) {
    checkId(id)
    return this[NATIVE].isSpecialToken(id)
  }

  truncate(text, maxTokens, options) {
    checkText(text)
    checkCount(maxTokens, 'maxTokens')
    const o = checkOptions(options)
    const side = o.side === undefined ? 'head' : o.side
    if (side !== 'head' && side !== 'tail' && side !== 'both') {
      throw new TypeError(`side must be 'head', 'tail' or 'both', got ${JSON.stringify(side)}`)
    }
    // undefined: the default marker; null or '': no marker at all.
    let marker = o.marker
    if (marker === null) marker = ''
    if (marker !== undefined) checkString(marker, 'marker')
    const t = this[NATIVE]
    const r = typeof text === 'string'
      ? call(() => t.truncate(text, maxTokens, side, marker))
      : call(() => t.truncateBytes(text, maxTokens, side, marker))
    return r
  }

  assemble(request) {
    return jsonOut(call(() => this[NATIVE].assembleJson(jsonIn(request, 'request'))))
  }

  countTokensAsync(text, options) {
    checkText(text)
    const o = checkOptions(options)
    return startAsync(o.signal, (signal) => this[NATIVE].countAsync(text, signal))
  }

  encodeAsync(text, options) {
    checkText(text)
    const o = checkOptions(options)
    return startAsync(o.signal, (signal) => this[NATIVE].encodeAsync(text, signal))
  }
}

function checkId(id) {
  if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) {
    throw new TypeError(`id must be an integer in [0, 2^32), got ${JSON.stringify(id) ?? describe(id)}`)
  }
}

// tiktoken's allowed_special / disallowed_special as the core's policy JSON,
// or null when neither is given (the tokenizer's own special setting applies).
// Each is 'all' or an iterable of strings (array or Set); a missing one takes
// tiktoken's default ([] allowed, 'all' disallowed).
function specialPolicy(options) {
  const o = checkOptions(options)
  if (o.allowedSpecial === undefined && o.disallowedSpecial === undefined) return null
  const set = (v, what) => {
    if (v === 'all') return 'all'
    if (typeof v === 'string' || v === null || typeof v !== 'object' || typeof v[Symbol.iterator] !== 'function') {
      throw new TypeError(`${what} must be 'all' or an array or Set of strings, got ${describe(v)}`)
    }
    const names = [...v]
    for (const n of names) checkString(n, `an element of ${what}`)
    return names
  }
  const policy = {}
  if (o.allowedSpecial !== undefined) policy.allowed_special = set(o.allowedSpecial, 'allowedSpecial')
  if (o.disallowedSpecial !== undefined) policy.disallowed_special = set(o.disallowedSpecial, 'disallowedSpecial')
  return JSON.stringify(policy)
}

function idsArray(ids) {
  if (ids instanceof Uint32Array) return ids
  if (Array.isArray(ids)) {
    for (const x of ids) {
      if (!Number.isInteger(x) || x < 0 || x > 0xffffffff) {
        throw new TypeError(`ids must hold integers in [0, 2^32), got ${JSON.stringify(x)}`)
      }
    }
    return Uint32Array.from(ids)
  }
  throw new TypeError(`ids must be a Uint32Array or an array of integers, got ${describe(ids)}`)
}

// Module-level one-liners share one tokenizer per model/encoding.
const cache = new Map()

function cachedTokenizer(options) {
  const o = checkOptions(options)
  if (o.model !== undefined && o.encoding !== undefined) {
    throw new TypeError('give either model or encoding, not both')
  }
  const key = o.model !== undefined ? `m:${o.model}` : `e:${o.encoding === undefined ? 'o200k_base' : o.encoding}`
  let t = cache.get(key)
  if (!t) {
    t = o.model !== undefined ? Tokenizer.forModel(o.model) : new Tokenizer(o.encoding === undefined ? 'o200k_base' : o.encoding)
    cache.set(key, t)
  }
  return t
}

function countTokens(text, options) {
  return cachedTokenizer(options).countTokens(text)
}

function countTokensAsync(text, options) {
  const o = checkOptions(options)
  return cachedTokenizer({ model: o.model, encoding: o.encoding }).countTokensAsync(text, { signal: o.signal })
}

function countConversation(conversation, options) {
  const o = checkOptions(options)
  const model = o.model === undefined ? 'gpt-4o' : o.model
  checkString(model, 'model')
  return call(() => native.countConversationJson(model, jsonIn(conversation, 'conversation')))
}

function lookupModel(model) {
  checkString(model, 'model')
  return jsonOut(call(() => native.lookupModelJson(model)))
}

// The count function as the native side calls it: a thrown value that is
// not an object (`throw 'text'`) is thrown as an Error whose text is the
// value's, since napi can only keep a reference to an object; the core's
// message then reads "failed: text", as it does "failed: Error: message".
function counter(count) {
  return (text) => {
    try {
      return count(text)
    } catch (e) {
      if (e !== null && (typeof e === 'object' || typeof e === 'function')) throw e
      const text = String(e)
      const err = new Error(text)
      err.toString = () => text
      throw err
    }
  }
}

// Python's register_model(profile, count=f): the profile (object, array of
// them, or JSON text) goes to the core's registry of this process; `count`,
// with one profile, is the host's own counter (src/registry.rs says where it
// may run). The core validates the profile and every count.
// Python's register_model(name, tokenizer=...): a model known by its own
// files, registered under `name`; every fit, turn and window for that name
// then counts as its server does (the template's count, exact). The spec's
// fields are passed to the core as they are (docs/formats.md, "Model files").
// Instead of `tokenizer`, `ollama` (an Ollama model name, its GGUF read from
// the store `ollamaModels`) or `hf` (a Hugging Face repo id in the hub cache
// `hfCache`, or a cache/snapshot folder): found by the core, nothing downloaded.
function registerModelFiles(name, { tokenizer, ollama, ollamaModels, hf, hfCache, contextWindow, chatTemplate, maxOutputTokens, templateKwargs } = {}) {
  if (typeof name !== 'string') throw new TypeError(`name must be a string, got ${describe(name)}`)
  const named = [['tokenizer', tokenizer], ['ollama', ollama], ['hf', hf]].filter(([, v]) => v != null)
  if (named.length !== 1) {
    throw new TypeError(`give one of tokenizer, ollama and hf (the model's files), got ${named.length ? named.map(([k]) => k).join(' and ') : 'none'}`)
  }
  for (const [key, value] of [...named, ['ollamaModels', ollamaModels], ['hfCache', hfCache]]) {
    if (value != null && typeof value !== 'string') throw new TypeError(`${key} must be a string, got ${describe(value)}`)
  }
  if (ollamaModels != null && ollama == null) throw new TypeError('ollamaModels goes with ollama')
  if (hfCache != null && hf == null) throw new TypeError('hfCache goes with hf')
  const spec = { name }
  if (tokenizer != null) spec.tokenizer = tokenizer
  if (ollama != null) spec.ollama_model = ollama
  if (ollamaModels != null) spec.ollama_models = ollamaModels
  if (hf != null) spec.hf_model = hf
  if (hfCache != null) spec.hf_cache = hfCache
  if (contextWindow != null) spec.context_window = contextWindow
  if (chatTemplate != null) spec.chat_template = chatTemplate
  if (maxOutputTokens != null) spec.max_output_tokens = maxOutputTokens
  if (templateKwargs != null) spec.template_kwargs = templateKwargs
  const info = JSON.parse(call(() => native.registerModelFilesJson(JSON.stringify(spec))))
  for (const key of cache.keys()) if (key.startsWith('m:')) cache.delete(key)
  return info
}

function registerModel(profile, count) {
  if (typeof profile !== 'string' && (profile === null || typeof profile !== 'object')) {
    throw new TypeError(`profile must be an object, an array of them or JSON text, got ${describe(profile)}`)
  }
  if (count !== undefined && count !== null && typeof count !== 'function') {
    throw new TypeError(`count must be a function (text) => number, got ${describe(count)}`)
  }
  const n = call(() => native.registerModelJson(jsonIn(profile, 'profile'), count == null ? undefined : counter(count)))
  // The one-liners' tokenizers for model names were made from the entries
  // this may replace (those for encodings do not depend on the registry).
  for (const key of cache.keys()) if (key.startsWith('m:')) cache.delete(key)
  return n
}

function listModels() {
  return jsonOut(call(() => native.listModelsJson()))
}

// ------------------------------------------------------------ ContextWindow

class ContextWindow {
  constructor(model, budget) {
    checkString(model, 'model')
    this[NATIVE] = call(() => new native.NativeWindow(model, jsonIn(budget, 'budget')))
  }

  load(conversation) {
    call(() => this[NATIVE].load(jsonIn(conversation, 'conversation')))
    this[EMIT]()
    return this
  }

  push(message) {
    const n = call(() => this[NATIVE].push(jsonIn(message, 'message')))
    this[EMIT]()
    return n
  }

  /**
   * Sets (or, with null, clears) the listener for this window's events:
   * `{ kind: 'compacted' | 'repaired' | 'budget_crossed', ... }`
   * (docs/formats.md, "Events"). It is called synchronously, on this thread,
   * when the call that raised the events returns (compactAsync: before its
   * promise resolves). An exception it throws reaches that call's caller.
   */
  onEvent(listener) {
    if (listener !== null && typeof listener !== 'function') {
      throw new TypeError('listener must be a function or null')
    }
    this[LISTENER] = listener ?? undefined
    this[NATIVE].setEvents(listener !== null)
    return this
  }

  /**
   * One turn on this window (the stateful `fitTurn`): below the trigger it
   * answers from the counts kept as messages were pushed (no recount, no
   * change, `fired: false`); over it, the window compacts, `summarizer`
   * (async or not, as for `fitTurn`) writing the summary, and takes the
   * result. Resolves to the turn report; `conversation` is then the request
   * to send. `options`: `policy`, `summarizer`, `trigger_messages` (the
   * window holds its model and budget: setting them here throws). Rejects
   * with `invalid_argument` if the window changed while the summarizer ran
   * (nothing is applied: the window keeps what was pushed).
   */
  async fitTurn(summarizer, options) {
    checkSummarizer(summarizer)
    const opts = jsonIn(options, 'options') ?? '{}'
    const turn = call(() => native.NativeTurn.onWindow(this[NATIVE], opts))
    try {
      return jsonOut((await driveTurn(turn, summarizer)).report)
    } finally {
      this[EMIT]()
    }
  }

  [EMIT]() {
    const listener = this[LISTENER]
    if (listener === undefined) return
    for (const text of this[NATIVE].takeEvents()) listener(JSON.parse(text))
  }

  preflight(newInput) {
    return jsonOut(call(() => this[NATIVE].preflight(jsonIn(newInput, 'newInput'))))
  }

  validate() {
    return jsonOut(call(() => this[NATIVE].validate()))
  }

  repair(options) {
    const o = checkOptions(options)
    if (o.syntheticResult !== undefined) checkString(o.syntheticResult, 'syntheticResult')
    const r = call(() => this[NATIVE].repair(o.syntheticResult))
    this[EMIT]()
    return jsonOut(r)
  }

  get conversation() {
    return jsonOut(call(() => this[NATIVE].conversation()))
  }

  conversationJson() {
    return call(() => this[NATIVE].conversation())
  }

  get messageTokens() {
    return call(() => this[NATIVE].messageTokens())
  }

  compact(policy) {
    const r = call(() => this[NATIVE].compact(jsonIn(policy, 'policy')))
    this[EMIT]()
    return jsonOut(r)
  }

  compactAsync(policy, options) {
    const p = jsonIn(policy, 'policy')
    const o = checkOptions(options)
    return startAsync(o.signal, (signal) => this[NATIVE].compactAsync(p, signal)).then((r) => {
      this[EMIT]()
      return jsonOut(r)
    })
  }

  applySummary(id, summary) {
    checkString(id, 'id')
    checkString(summary, 'summary')
    const r = call(() => this[NATIVE].applySummary(id, summary))
    this[EMIT]()
    return jsonOut(r)
  }

  calibrate(reportedPromptTokens) {
    checkCount(reportedPromptTokens, 'reportedPromptTokens')
    return call(() => this[NATIVE].calibrate(reportedPromptTokens))
  }
}

// ------------------------------------------------------------ fit

function fitJson(conversation, options) {
  checkString(conversation, 'conversation')
  const opts = jsonIn(options, 'options') ?? '{}'
  return call(() => native.fitJsonNative(conversation, opts))
}

function fit(conversation, options) {
  const r = fitJson(jsonIn(conversation, 'conversation'), options)
  return { conversation: jsonOut(r.conversation), report: jsonOut(r.report) }
}

function fitAsync(conversation, options, asyncOptions) {
  const c = jsonIn(conversation, 'conversation')
  const opts = jsonIn(options, 'options') ?? '{}'
  const o = checkOptions(asyncOptions)
  return startAsync(o.signal, (signal) => native.fitJsonAsync(c, opts, signal)).then((text) => {
    const i = text.indexOf('\0')
    return { conversation: jsonOut(text.slice(0, i)), report: jsonOut(text.slice(i + 1)) }
  })
}

// ------------------------------------------------------------ turns

// The summarizer's return value as [text, failure, message]: a string, or an
// object with a string `content` or `text` (an AI SDK result, a LangChain
// message) and no tool calls. The reply is the host's object: a getter or a
// Proxy trap that throws makes it not text, never the turn's error.
function summaryText(reply) {
  if (typeof reply === 'string') return [reply, null, '']
  try {
    if (reply !== null && typeof reply === 'object') {
      const calls = reply.tool_calls ?? reply.toolCalls
      const hasCalls = Array.isArray(calls) && calls.length > 0
      for (const k of ['content', 'text']) {
        const v = reply[k]
        if (typeof v === 'string' && !hasCalls) return [v, null, '']
      }
    }
    return [null, 'not_text', `the summarizer returned ${describe(reply)}, not text`]
  } catch (e) {
    return [null, 'not_text', `reading the summarizer's reply threw ${describeThrown(e)}`]
  }
}

// What the host threw, in words, for the fallback's detail. Never throws:
// the value is the host's (Object.create(null), a toString that throws, a
// Proxy of an Error whose traps throw).
function describeThrown(e) {
  try {
    if (e instanceof Error) return `${String(e.name)}: ${String(e.message)}`
    return String(e)
  } catch {
    try {
      return Object.prototype.toString.call(e)
    } catch {
      return 'an unprintable value'
    }
  }
}

const TIMED_OUT = Symbol('turnfit.timedOut')

// setTimeout's longest delay: a longer one fires at once (Node clamps it
// to 1 ms with a TimeoutOverflowWarning), so longer timeouts are split.
const MAX_TIMER_MS = 2 ** 31 - 1

// The summarizer's reply, or TIMED_OUT after `ms` (0: no limit). A timeout
// above the timer's range is waited for in steps of at most MAX_TIMER_MS.
// The timer is cleared either way, so a pending summarizer never keeps the
// process alive.
async function withTimeout(promise, ms) {
  if (!ms) return promise
  let timer
  const expired = new Promise((resolve) => {
    const arm = (left) => {
      const step = Math.min(left, MAX_TIMER_MS)
      timer = setTimeout(() => (left > step ? arm(left - step) : resolve(TIMED_OUT)), step)
    }
    arm(ms)
  })
  try {
    return await Promise.race([promise, expired])
  } finally {
    clearTimeout(timer)
  }
}

function checkSummarizer(summarizer) {
  if (summarizer !== undefined && summarizer !== null && typeof summarizer !== 'function') {
    throw new TypeError(`summarizer must be a function, got ${describe(summarizer)}`)
  }
}

async function fitTurn(conversation, options, summarizer) {
  checkSummarizer(summarizer)
  const c = jsonIn(conversation, 'conversation')
  if (c === null) throw new TypeError('conversation must be an object or JSON text, got ' + describe(conversation))
  const opts = jsonIn(options, 'options') ?? '{}'
  const turn = call(() => new native.NativeTurn(c, opts))
  const r = await driveTurn(turn, summarizer)
  return { conversation: jsonOut(r.conversation), report: jsonOut(r.report) }
}

// A history fitted turn after turn, kept parsed and counted in the core
// between turns (issue 52; core `turnfit::turn::FitSession`): a step reads
// and counts only what changed. `update(keep, newMessages)` says what changed
// ("the first `keep` messages are as last time, then these"); `fitTurn` runs
// the turn `fitTurn` runs on the whole history (same options, carry,
// summarizer: the core holds the two equal) and resolves to
// `{ conversation, report }`, `conversation` null when the turn left the
// history as it is (send your own messages; nothing was serialized). OpenAI
// Chat and AI SDK messages update step by step; other formats take a new
// session on the full history.
class FitSession {
  constructor(conversation, options) {
    const o = checkOptions(options)
    if (o.format !== undefined && o.format !== null) checkString(o.format, 'format')
    const c = conversation === undefined || conversation === null ? '[]' : jsonIn(conversation, 'conversation')
    this[NATIVE] = call(() => new native.NativeFitSession(c, o.format ?? null))
  }

  /** The messages the session holds. */
  get length() {
    return this[NATIVE].length
  }

  /** Keeps the first `keep` messages and appends `newMessages` (an array of messages, or its JSON text). */
  update(keep, newMessages) {
    if (typeof keep !== 'number' || !Number.isSafeInteger(keep) || keep < 0) {
      throw new TypeError(`keep must be a non-negative integer, got ${typeof keep === 'number' ? keep : describe(keep)}`)
    }
    if (typeof newMessages !== 'string' && !Array.isArray(newMessages)) {
      throw new TypeError(`newMessages must be an array of messages or JSON text, got ${describe(newMessages)}`)
    }
    call(() => this[NATIVE].update(keep, jsonIn(newMessages, 'newMessages')))
    return this
  }

  async fitTurn(options, summarizer) {
    checkSummarizer(summarizer)
    const turn = this.startTurn(options)
    await driveTurn(turn, summarizer, true)
    return finishChanged(turn)
  }

  // The step's native turn (it holds its own copy of the history: the
  // session may take the next update while its summarizer runs).
  startTurn(options) {
    const opts = jsonIn(options, 'options') ?? '{}'
    return call(() => native.NativeTurn.onSession(this[NATIVE], opts))
  }
}

function finishChanged(turn) {
  const r = call(() => turn.finishChanged())
  return { conversation: r.conversation == null ? null : jsonOut(r.conversation), report: jsonOut(r.report) }
}

// Answers each summarizer request of a NativeTurn (no turnfit lock is held
// while the summarizer runs), then finishes it.
// With `open`, the turn is left unfinished (the caller finishes it).
async function driveTurn(turn, summarizer, open = false) {
  let request = call(() => turn.call())
  while (request !== null && summarizer) {
    const req = jsonOut(request)
    // Everything the host returns or throws is untrusted and ends here as a
    // reply or a failure (the digest then stands in): only turnfit's own
    // errors, from `call`, reject.
    let outcome
    try {
      // A sync summarizer's throw and an async one's rejection alike.
      const reply = await withTimeout(Promise.resolve().then(() => summarizer(req)), req.timeout_ms)
      outcome =
        reply === TIMED_OUT
          ? [null, 'timeout', `no reply within ${req.timeout_ms} ms; abandoned`]
          : summaryText(reply)
    } catch (e) {
      outcome = [null, 'error', describeThrown(e)]
    }
    const [text, failure, message] = outcome
    call(() => (failure === null ? turn.resume(text) : turn.fail(failure, message)))
    request = call(() => turn.call())
  }
  return open ? undefined : call(() => turn.finish())
}

// ------------------------------------------------------------ agent primitives

class SkillSet {
  constructor(n) {
    if (!n || !(n instanceof native.NativeSkillSet)) {
      throw new TypeError('use SkillSet.open(root, options) or SkillSet.openAsync(root, options)')
    }
    this[NATIVE] = n
  }

  static open(root, options) {
    checkString(root, 'root')
    return new SkillSet(call(() => native.NativeSkillSet.open(root, jsonIn(options, 'options'))))
  }

  static openAsync(root, options, asyncOptions) {
    checkString(root, 'root')
    const opts = jsonIn(options, 'options')
    const o = checkOptions(asyncOptions)
    return startAsync(o.signal, (signal) => native.NativeSkillSet.openAsync(root, opts, signal)).then(
      (n) => new SkillSet(n),
    )
  }

  list() {
    return jsonOut(call(() => this[NATIVE].listJson()))
  }

  body(name) {
    checkString(name, 'name')
    return jsonOut(call(() => this[NATIVE].bodyJson(name)))
  }

  renderIndex(options) {
    return jsonOut(call(() => this[NATIVE].renderIndexJson(jsonIn(options, 'options'))))
  }
}

const handoff = Object.freeze({
  validate(h) {
    return jsonOut(call(() => native.handoffValidateJson(jsonIn(h, 'handoff'))))
  },
  render(h, options) {
    return jsonOut(call(() => native.handoffRenderJson(jsonIn(h, 'handoff'), jsonIn(options, 'options'))))
  },
  filter(conversation, options) {
    return jsonOut(call(() => native.handoffFilterJson(jsonIn(conversation, 'conversation'), jsonIn(options, 'options'))))
  },
})

function classifyError(request) {
  return jsonOut(call(() => native.classifyErrorJson(jsonIn(request, 'request'))))
}

function backoff(request) {
  return jsonOut(call(() => native.backoffJson(jsonIn(request, 'request'))))
}

function checkKey(key) {
  checkString(key, 'key')
}

function checkAt(at, what) {
  if (at !== undefined) checkCount(at, what)
}

class CircuitBreaker {
  constructor(config) {
    this[NATIVE] = call(() => new native.NativeBreakers(jsonIn(config, 'config')))
  }

  allow(key, atMs) {
    checkKey(key)
    checkAt(atMs, 'atMs')
    return call(() => this[NATIVE].allow(key, atMs))
  }

  recordSuccess(key, atMs) {
    checkKey(key)
    checkAt(atMs, 'atMs')
    return jsonOut(call(() => this[NATIVE].record(key, true, atMs)))
  }

  /** `context` (`{agent_id, workflow_id, metadata}`, optional) also counts the failure under its ids. */
  recordFailure(key, atMs, context) {
    checkKey(key)
    checkAt(atMs, 'atMs')
    if (context === undefined || context === null) return jsonOut(call(() => this[NATIVE].record(key, false, atMs)))
    return jsonOut(call(() => this[NATIVE].recordIn(key, false, atMs, jsonIn(context, 'context'))))
  }

  /** Failures recorded with a context: `{by_agent, by_workflow, unattributed}`. */
  failureCounts() {
    return jsonOut(call(() => this[NATIVE].failureCountsJson()))
  }

  state(key, atMs) {
    checkKey(key)
    checkAt(atMs, 'atMs')
    return jsonOut(call(() => this[NATIVE].snapshotJson(key, atMs)))
  }
}

class CallStack {
  constructor(maxDepth) {
    if (maxDepth && maxDepth[NATIVE]) {
      this[NATIVE] = maxDepth[NATIVE]
      return
    }
    checkCount(maxDepth, 'maxDepth')
    this[NATIVE] = call(() => new native.NativeCallStack(maxDepth))
  }

  static fromJSON(value) {
    const n = call(() => native.NativeCallStack.fromJson(jsonIn(value, 'value')))
    return new CallStack({ [NATIVE]: n })
  }

  enter(agent) {
    checkString(agent, 'agent')
    return new CallStack({ [NATIVE]: call(() => this[NATIVE].enter(agent)) })
  }

  parent() {
    return new CallStack({ [NATIVE]: this[NATIVE].parent() })
  }

  contains(agent) {
    checkString(agent, 'agent')
    return this[NATIVE].contains(agent)
  }

  get chain() {
    return this[NATIVE].chain()
  }

  toJSON() {
    return jsonOut(call(() => this[NATIVE].toJsonText()))
  }
}

const OUTCOMES = ['success', 'failed', 'timeout', 'cancelled']

class Tracer {
  constructor(config) {
    this[NATIVE] = call(() => new native.NativeTracer(jsonIn(config, 'config')))
  }

  start(tool, info, inputBytes = 0, atUs) {
    checkString(tool, 'tool')
    checkCount(inputBytes, 'inputBytes')
    checkAt(atUs, 'atUs')
    return call(() => this[NATIVE].start(tool, jsonIn(info, 'info'), inputBytes, atUs))
  }

  end(id, outcome, outputBytes = 0, error, atUs) {
    checkCount(id, 'id')
    checkString(outcome, 'outcome')
    checkCount(outputBytes, 'outputBytes')
    if (error !== undefined && error !== null) checkString(error, 'error')
    checkAt(atUs, 'atUs')
    call(() => this[NATIVE].end(id, outcome, outputBytes, error ?? undefined, atUs))
  }

  endWith(id, outcome, end, atUs) {
    checkCount(id, 'id')
    checkString(outcome, 'outcome')
    checkAt(atUs, 'atUs')
    call(() => this[NATIVE].endWith(id, outcome, jsonIn(end, 'end') ?? undefined, atUs))
  }

  overdue(atUs) {
    checkAt(atUs, 'atUs')
    return jsonOut(call(() => this[NATIVE].overdueJson(atUs)))
  }

  expire(atUs) {
    checkAt(atUs, 'atUs')
    return jsonOut(call(() => this[NATIVE].expireJson(atUs)))
  }

  metrics() {
    return jsonOut(call(() => this[NATIVE].metricsJson()))
  }

  recent() {
    return jsonOut(call(() => this[NATIVE].recentJson()))
  }

  export(atUs) {
    checkAt(atUs, 'atUs')
    return jsonOut(call(() => this[NATIVE].exportJson(atUs)))
  }
}

const toolset = Object.freeze({
  report(request) {
    return jsonOut(call(() => native.toolsetReportJson(jsonIn(request, 'request'))))
  },
  select(request, agent) {
    checkString(agent, 'agent')
    return jsonOut(call(() => native.toolsetSelectJson(jsonIn(request, 'request'), agent)))
  },
})

// ------------------------------------------------------------ FileTokenizer

/**
 * A tokenizer loaded from a model's own file: an HF tokenizer.json, a GGUF
 * (metadata only, any size), or a tiktoken-format file with `pattern`. Ids
 * equal HF tokenizers' (llama.cpp's for a GGUF). Special-token text counts
 * as ordinary text unless `special: 'recognize'`.
 */
class FileTokenizer {
  constructor(path, options) {
    if (path && path[NATIVE]) {
      this[NATIVE] = path[NATIVE]
      return
    }
    if (path instanceof URL) path = require('node:url').fileURLToPath(path)
    checkString(path, 'path')
    const o = checkOptions(options)
    if (o.pattern !== undefined) checkString(o.pattern, 'pattern')
    this[NATIVE] = call(() => native.NativeFileTokenizer.open(path, o.pattern, specialFlag(o)))
  }

  static fromBytes(bytes, options) {
    if (!isBytes(bytes)) throw new TypeError(`bytes must be a Uint8Array, got ${describe(bytes)}`)
    const o = checkOptions(options)
    const name = o.name === undefined ? '<bytes>' : o.name
    checkString(name, 'name')
    if (o.pattern !== undefined) checkString(o.pattern, 'pattern')
    const n = call(() => native.NativeFileTokenizer.fromBytes(bytes, name, o.pattern, specialFlag(o)))
    return new FileTokenizer({ [NATIVE]: n })
  }

  get info() {
    const i = jsonOut(call(() => this[NATIVE].infoJson()))
    return {
      name: i.name,
      vocabSize: i.vocab_size,
      specialTokens: i.special_tokens,
      addSpecial: i.add_special,
      contextLength: i.context_length,
      pre: i.pre,
      hasChatTemplate: i.has_chat_template,
    }
  }

  countTokens(text) {
    checkString(text, 'text')
    return call(() => this[NATIVE].count(text))
  }

  encode(text, options) {
    checkString(text, 'text')
    const o = checkOptions(options)
    return call(() => this[NATIVE].encode(text, o.addSpecial === true))
  }

  decode(ids) {
    return call(() => this[NATIVE].decode(idsArray(ids)))
  }
}

const version = native.coreVersion()

module.exports = {
  version,
  ERROR_CODES,
  OUTCOMES,
  TurnfitError,
  Tokenizer,
  FileTokenizer,
  countTokens,
  countTokensAsync,
  countConversation,
  lookupModel,
  registerModel,
  registerModelFiles,
  listModels,
  ContextWindow,
  fit,
  fitJson,
  fitAsync,
  fitTurn,
  FitSession,
  SkillSet,
  handoff,
  classifyError,
  backoff,
  CircuitBreaker,
  CallStack,
  Tracer,
  toolset,
  // Test hook only: a native call that panics inside the boundary.
  __panicForTest: (message) => call(() => native.__panicForTest(message)),
  // Benchmark hook only: the napi string conversion alone (bench/node).
  __stringFloor: (text) => native.__stringFloor(text),
  __stringFloorNapi: (text) => native.__stringFloorNapi(text),
  // Benchmark hook only: empties this thread's counting caches (bench/node).
  __clearTokenCaches: () => native.__clearTokenCaches(),
}

'use strict'
// Shared by the framework adapters (langchain.js, openai-agents.js): version
// checks, the summarizer fallback warning, mapping the core's output back to
// the caller's objects. No framework is imported here.
const fs = require('node:fs')
const path = require('node:path')

// The installed version of a package, read from its package.json (found from
// its resolved entry point: some packages do not export ./package.json).
function installedVersion(name) {
  let dir
  try {
    dir = path.dirname(require.resolve(name))
  } catch {
    return null
  }
  for (;;) {
    const file = path.join(dir, 'package.json')
    if (fs.existsSync(file)) {
      try {
        const pkg = JSON.parse(fs.readFileSync(file, 'utf8'))
        if (pkg.name === name && typeof pkg.version === 'string') return pkg.version
      } catch {
        // keep walking up
      }
    }
    const up = path.dirname(dir)
    if (up === dir) return null
    dir = up
  }
}

function parseVersion(v) {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(String(v))
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null
}

function cmp(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1
  return 0
}

// `range` is { min, below }: min <= version < below (both "x.y.z").
function versionProblem(name, version, range) {
  const v = parseVersion(version)
  if (v === null) return `${name} ${version}: not a version turnfit can read (tested: >= ${range.min} < ${range.below})`
  if (cmp(v, parseVersion(range.min)) < 0 || cmp(v, parseVersion(range.below)) >= 0) {
    return `${name} ${version} is outside the range turnfit's adapter was tested with (>= ${range.min} < ${range.below}); ` +
      'it may work, but the hook or message shapes may have changed'
  }
  return null
}

const warnedVersions = new Set()
// Checks each installed package against its range: a version outside it is a
// process warning (code TURNFIT_UNTESTED_VERSION), once per package, or an
// Error with `strict`. A package that is not installed is an Error naming it.
function checkVersions(ranges, { strict = false, versions = {} } = {}) {
  const problems = []
  for (const [name, range] of Object.entries(ranges)) {
    const version = versions[name] ?? installedVersion(name)
    if (version === null) {
      throw new Error(`turnfit: the adapter needs the package '${name}' (tested >= ${range.min} < ${range.below}); install it`)
    }
    const p = versionProblem(name, version, range)
    if (p !== null) problems.push(p)
  }
  for (const p of problems) {
    if (strict) throw new Error(`turnfit: ${p}`)
    if (!warnedVersions.has(p)) {
      warnedVersions.add(p)
      process.emitWarning(`turnfit: ${p}`, { code: 'TURNFIT_UNTESTED_VERSION' })
    }
  }
  return problems
}

// The digest stood in for a summarizer that was given: say so, through
// `onWarning` (default: a process warning, code TURNFIT_SUMMARY_FALLBACK).
// Returns the text, or null when there is nothing to say.
function warnFallback(report, where, onWarning) {
  const f = report?.summary?.fallback
  if (!f || f.reason === 'no_summarizer') return null
  const text = `turnfit (${where}): the summarizer failed (${f.reason}${f.detail ? `: ${f.detail}` : ''}); ` +
    'the deterministic digest summarized instead and the run continues'
  if (typeof onWarning === 'function') onWarning(text, report)
  else process.emitWarning(text, { code: 'TURNFIT_SUMMARY_FALLBACK' })
  return text
}

// Key order independent deep equality of JSON values.
function sameJson(a, b) {
  if (a === b) return true
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]))
  const ka = Object.keys(a).filter((k) => a[k] !== undefined)
  const kb = Object.keys(b).filter((k) => b[k] !== undefined)
  return ka.length === kb.length && ka.every((k) => sameJson(a[k], b[k]))
}

// Maps the core's output messages back to input positions. `sent` are the
// converted inputs, `changes` the report's manifest. The core keeps order and
// writes an untouched message back as read, so an output equal to the next
// input still present (not summarized or dropped per the manifest) is that
// input; a moved result is found out of order. A rewritten tool result
// (truncated, masked, cleared) is matched by its call id: `changed: true`.
// Anything else (the summary, a synthesized result) is `index: -1`.
function matchBack(sent, out, changes) {
  const gone = new Set()
  const rewritten = new Set()
  for (const c of changes ?? []) {
    if (c.action === 'summarized' || c.action === 'dropped_message' || c.action === 'dropped_result') gone.add(c.index)
    if (c.action === 'truncated_result' || c.action === 'masked_result' || c.action === 'cleared_result') rewritten.add(c.index)
  }
  const used = new Set()
  const result = []
  let cursor = 0
  const take = (k, changed) => {
    used.add(k)
    if (k >= cursor) cursor = k + 1
    result.push({ index: k, changed })
  }
  outer: for (const o of out) {
    for (let k = cursor; k < sent.length; k++) {
      if (!gone.has(k) && !used.has(k) && !rewritten.has(k) && sameJson(o, sent[k])) {
        take(k, false)
        continue outer
      }
    }
    for (let k = 0; k < sent.length; k++) {
      if (!gone.has(k) && !used.has(k) && !rewritten.has(k) && sameJson(o, sent[k])) {
        take(k, false)
        continue outer
      }
    }
    for (const k of rewritten) {
      if (!used.has(k) && sameCall(o, sent[k])) {
        take(k, true)
        continue outer
      }
    }
    result.push({ index: -1, changed: true })
  }
  return result
}

function sameCall(o, s) {
  if (!o || !s) return false
  if (o.tool_call_id !== undefined) return o.tool_call_id === s.tool_call_id
  if (o.call_id !== undefined) return o.call_id === s.call_id && o.type === s.type
  return false
}

function textOf(value) {
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

// Reusing the previous summary when the framework keeps the full history (the
// model input is fitted, the history is not) is the core's: each turn report's
// `carry` goes into the next turn's options (`carry`), and the run of messages
// the last summary replaced is sent as that summary (docs/turns.md). `memo`
// is null (reuse off) or { carry }.
function withCarry(fitOptions, memo) {
  if (memo && memo.carry && fitOptions.carry === undefined) fitOptions.carry = memo.carry
  return fitOptions
}

function keepCarry(memo, report) {
  if (memo) memo.carry = report.carry ?? null
  return report.carried ? report.carried.messages : 0
}

// The defaults every adapter (turnfit/ai-sdk, turnfit/langchain,
// turnfit/openai-agents, and the Python ones: turnfit/_adapters.py) shares:
// the summarize strategy with the host's model (the digest without one), the
// window's hysteresis (compact when prompt plus reserved output reach 80% of
// maxTokens, down to 50%), the reserve left to the core (the model's maximum
// output, at most a quarter of maxTokens), calls still awaiting their result
// kept without a synthetic one, and the framework's own history left alone
// (writeBack false: only the model input is fitted). The README's table
// states the same.
const DEFAULTS = Object.freeze({ strategy: 'summarize', triggerRatio: 0.8, targetRatio: 0.5, pendingCalls: 'auto', writeBack: false })

// The budget names of the adapters (the core's, camel-cased) and the core
// fit options they set.
const BUDGET = [
  ['model', 'model'],
  ['maxTokens', 'max_tokens'],
  ['reserveOutput', 'reserve_output'],
  ['triggerRatio', 'trigger_ratio'],
  ['targetRatio', 'target_ratio'],
  ['triggerMessages', 'trigger_messages'],
]

// The core fit options of an adapter's options: `fit` (any core fit option,
// snake_case), then the adapter's own names (maxTokens, reserveOutput,
// triggerRatio, targetRatio, triggerMessages, model, policy) over it, then
// the shared defaults for what neither set. `targetRatio: null` is no
// target: only what exceeds the budget is compacted (the core's rule).
function fitOptionsOf(options, where) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${where}: options must be an object`)
  const fit = { ...(options.fit ?? {}) }
  for (const [camel, snake] of BUDGET) {
    const v = options[camel]
    if (v === undefined) continue
    if (fit[snake] !== undefined && fit[snake] !== v) {
      throw new TypeError(`${where}: ${camel} (${String(v)}) and fit.${snake} (${String(fit[snake])}) disagree; give one`)
    }
    fit[snake] = v
  }
  for (const key of ['max_tokens', 'reserve_output']) {
    const v = fit[key]
    if (v !== undefined && v !== null && (!Number.isInteger(v) || v < (key === 'max_tokens' ? 1 : 0))) {
      const camel = BUDGET.find(([, s]) => s === key)[0]
      throw new TypeError(`${where}: ${camel} must be a ${key === 'max_tokens' ? 'positive' : 'non-negative'} integer, got ${String(v)}`)
    }
  }
  if (fit.target_ratio === undefined) fit.target_ratio = DEFAULTS.targetRatio
  if (fit.target_ratio === null) delete fit.target_ratio
  if (fit.trigger_ratio === undefined || fit.trigger_ratio === null) fit.trigger_ratio = DEFAULTS.triggerRatio
  fit.policy = { strategy: DEFAULTS.strategy, ...(options.policy ?? {}), ...(fit.policy ?? {}) }
  return fit
}

// The ids of calls awaiting their result: given ids, a function of the
// history, 'auto' (the default: the calls of the newest model reply that
// have no result after it, e.g. an approval in flight; older unanswered
// calls are a broken history the core repairs), or false / null (none).
// `newestCalls(history)` gives the 'auto' ids in the framework's shape.
function pendingIdsOf(pendingCalls, history, newestCalls) {
  const p = pendingCalls === undefined ? DEFAULTS.pendingCalls : pendingCalls
  if (!p) return []
  if (p === 'auto') return newestCalls(history).map(String)
  const ids = typeof p === 'function' ? p(history) : p
  return [...(ids ?? [])].map(String)
}

// The newest model reply's calls with no result yet (an approval or a long
// job in flight, also while the user asks something before approving; an
// unanswered call of an older reply is a broken history the core repairs). `callsOf(x)` gives the call ids an entry makes (null when none;
// with `spans`, a run of call entries is one reply: Responses items, one per call),
// `answerOf(x)` the call id it answers (null when none). The Python adapters'
// `_adapters.newest_unanswered` is the same rule.
function newestUnanswered(history, callsOf, answerOf, { spans = false } = {}) {
  for (let i = history.length - 1; i >= 0; i--) {
    const calls = callsOf(history[i])
    if (!calls || calls.length === 0) continue
    const answered = new Set(history.slice(i + 1).map(answerOf))
    const ids = [...calls]
    if (spans) for (let j = i - 1; j >= 0 && callsOf(history[j])?.length && answerOf(history[j]) == null; j--) ids.unshift(...callsOf(history[j]))
    return ids.filter((id) => id != null && !answered.has(id))
  }
  return []
}

// An AbortSignal for a summarizer request's `timeout_ms`, or undefined. Node's
// timers stop at 2^31-1 ms (AbortSignal.timeout refuses or clamps longer
// delays, which would abort at once); a longer timeout gets no signal here:
// the turn's own timer, which waits in steps, still abandons the request.
function timeoutSignal(ms) {
  return ms > 0 && ms <= 2 ** 31 - 1 ? AbortSignal.timeout(ms) : undefined
}

module.exports = {
  installedVersion, versionProblem, checkVersions, warnFallback, sameJson, matchBack, textOf, withCarry, keepCarry,
  DEFAULTS, fitOptionsOf, pendingIdsOf, newestUnanswered, timeoutSignal,
}

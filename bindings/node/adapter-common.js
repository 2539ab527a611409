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

// An AbortSignal for a summarizer request's `timeout_ms`, or undefined. Node's
// timers stop at 2^31-1 ms (AbortSignal.timeout refuses or clamps longer
// delays, which would abort at once); a longer timeout gets no signal here:
// the turn's own timer, which waits in steps, still abandons the request.
function timeoutSignal(ms) {
  return ms > 0 && ms <= 2 ** 31 - 1 ? AbortSignal.timeout(ms) : undefined
}

module.exports = {
  installedVersion,
  versionProblem,
  checkVersions,
  warnFallback,
  sameJson,
  matchBack,
  textOf,
  withCarry,
  keepCarry,
  timeoutSignal,
}

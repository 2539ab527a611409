'use strict'
// turnfit for LangChain.js v1 agents: a middleware (`createMiddleware`,
// `wrapModelCall`) that fits every model call with `fitTurn`, the agent's
// model (or a given one) summarizing. LangChain messages are converted to
// OpenAI Chat for the core and mapped back: a message the turn did not change
// is the caller's own object (id, additional_kwargs, response_metadata kept).
// `langchain` and `@langchain/core` are loaded when the middleware is made.
const turnfit = require('./index.js')
const { checkVersions, warnFallback, matchBack, textOf, withCarry, keepCarry, DEFAULTS, fitOptionsOf, pendingIdsOf, newestUnanswered, timeoutSignal } = require('./adapter-common.js')

// Tested: langchain 1.5.14, @langchain/core 1.4.0 (test/langchain.test.js).
const TESTED = {
  langchain: { min: '1.5.0', below: '1.6.0' },
  '@langchain/core': { min: '1.4.0', below: '1.5.0' },
}

const ROLE = { system: 'system', human: 'user', ai: 'assistant', tool: 'tool' }

function typeOf(m) {
  if (m === null || typeof m !== 'object') return undefined
  if (typeof m.getType === 'function') {
    try {
      return m.getType()
    } catch {
      // fall through
    }
  }
  return m.type ?? m._getType?.()
}

// LangChain content (a string or blocks) as OpenAI Chat content. Blocks other
// than text and images count as their text (JSON when they have none).
function chatContent(content) {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return content == null ? '' : textOf(content)
  return content.map((b) => {
    if (typeof b === 'string') return { type: 'text', text: b }
    if (b?.type === 'text' && typeof b.text === 'string') return { type: 'text', text: b.text }
    if (b?.type === 'image_url') {
      const url = typeof b.image_url === 'string' ? b.image_url : b.image_url?.url
      if (typeof url === 'string') return { type: 'image_url', image_url: { url, ...(b.image_url?.detail ? { detail: b.image_url.detail } : {}) } }
    }
    if (b?.type === 'image') {
      const url = b.url ?? (b.data && (b.mimeType || b.mime_type) ? `data:${b.mimeType ?? b.mime_type};base64,${b.data}` : undefined)
      if (typeof url === 'string') return { type: 'image_url', image_url: { url } }
    }
    const text = b?.reasoning ?? b?.thinking ?? b?.text
    return { type: 'text', text: typeof text === 'string' ? text : textOf(b) }
  })
}

// One LangChain message as OpenAI Chat; `unknown` when the type is not one
// of system / human / ai / tool (then it is a user message of its text,
// pinned so that compaction never drops it).
function toChat(m) {
  const type = typeOf(m)
  const role = ROLE[type]
  if (role === undefined) {
    return { msg: { role: 'user', content: textOf(m?.content ?? m) }, unknown: true }
  }
  const msg = { role, content: chatContent(m.content) }
  // A name is sent (ChatOpenAI sends a message's `name`, which createAgent
  // sets on every AI message, and a tool message's tool name): counted.
  if (m.name != null) msg.name = String(m.name)
  if (role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
    msg.tool_calls = m.tool_calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args ?? {}) },
    }))
    if (msg.content === '') msg.content = null
  }
  if (role === 'tool') msg.tool_call_id = m.tool_call_id
  return { msg, unknown: false }
}

function lcContent(content) {
  if (content == null) return ''
  if (typeof content === 'string') return content
  return content.map((p) => (p.type === 'image_url' ? p : { type: 'text', text: p.text ?? textOf(p) }))
}

function parseArgs(s) {
  try {
    return JSON.parse(s)
  } catch {
    return {}
  }
}

// An output message the turn wrote (a summary, a synthesized or rewritten
// tool result) as a LangChain message; `orig` is the input it replaces.
function fromChat(o, orig, M) {
  const keep = orig
    ? { id: orig.id, name: orig.name, additional_kwargs: orig.additional_kwargs, response_metadata: orig.response_metadata }
    : {}
  const content = lcContent(o.content)
  switch (o.role) {
    case 'tool':
      return new M.ToolMessage({ ...keep, content, tool_call_id: o.tool_call_id, ...(orig?.status ? { status: orig.status } : {}) })
    case 'assistant':
      return new M.AIMessage({
        ...keep,
        content,
        tool_calls: (o.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: parseArgs(c.function.arguments), type: 'tool_call' })),
      })
    case 'system':
    case 'developer':
      return new M.SystemMessage({ ...keep, content })
    default:
      return new M.HumanMessage({ ...keep, content })
  }
}

function toolsForCount(tools, convertToOpenAITool) {
  const out = []
  for (const t of tools ?? []) {
    try {
      out.push(convertToOpenAITool(t))
    } catch {
      // A tool LangChain cannot describe (a provider's built-in): counted as its text.
      out.push({ type: 'function', function: { name: String(t?.name ?? t?.type ?? 'tool'), description: textOf(t) } })
    }
  }
  return out
}

function replyText(msg) {
  if (typeof msg === 'string') return msg
  if (msg == null || typeof msg !== 'object') return msg
  const c = msg.content
  let text
  if (typeof c === 'string') text = c
  else if (Array.isArray(c)) text = c.filter((b) => typeof b === 'string' || b?.type === 'text').map((b) => (typeof b === 'string' ? b : b.text)).join('')
  else if (typeof msg.text === 'string') text = msg.text
  else return msg
  // A reply that calls tools instead is not a summary: the core says not_text.
  if (Array.isArray(msg.tool_calls) && msg.tool_calls.length > 0 && text.trim() === '') return { content: '', tool_calls: msg.tool_calls }
  return text
}

// The summarizer fitTurn calls: a function of the request, or a LangChain
// chat model (invoked with the prompt as one human message).
// The model call carries the run's config (callbacks, so tracing sees it) and,
// as LangChain's own summarization middleware does, the `nostream` tag:
// LangGraph's "messages" stream leaves the summary out of the agent's output.
function makeSummarizer(summarizer, requestModel, lib, runtime) {
  if (summarizer === false || summarizer === null) return undefined
  if (typeof summarizer === 'function') return summarizer
  const model = summarizer ?? requestModel
  if (!model || typeof model.invoke !== 'function') {
    return () => {
      throw new Error('the agent model is not a LangChain chat model instance; pass `summarizer`')
    }
  }
  return async (req) => {
    const base = lib.pickRunnableConfigKeys(runtime) ?? {}
    const config = lib.mergeConfigs(base, { metadata: { lc_source: 'turnfit_summarization' }, tags: [NOSTREAM] })
    const signals = [base.signal, timeoutSignal(req.timeout_ms)].filter(Boolean)
    if (signals.length) config.signal = signals.length === 1 ? signals[0] : AbortSignal.any(signals)
    return replyText(await model.invoke([new lib.messages.HumanMessage(req.prompt)], config))
  }
}

// LangGraph's messages stream skips runs with this tag (langchain's INTERNAL_CALL_TAG).
const NOSTREAM = 'nostream'

// 'auto': the newest AI message's calls with no ToolMessage after it.
function pendingIds(pendingCalls, messages) {
  return pendingIdsOf(pendingCalls, messages ?? [], (ms) => newestUnanswered(
    ms,
    (m) => (typeOf(m) === 'ai' && Array.isArray(m.tool_calls) && m.tool_calls.length ? m.tool_calls.map((c) => c.id) : null),
    (m) => (typeOf(m) === 'tool' ? m.tool_call_id : null),
  ))
}

function modelName(model) {
  return model?.model ?? model?.modelName ?? model?.model_name
}

// Every input converted: { sent, unknown } (indices of unknown types).
function convertAll(inputs, sent = [], unknown = [], from = 0) {
  for (let i = from; i < inputs.length; i++) {
    const { msg, unknown: u } = toChat(inputs[i])
    sent.push(msg)
    if (u) unknown.push(i)
  }
  return { sent, unknown }
}

// The middleware's turns on a turnfit.FitSession (issue 52), one per
// middleware, as the Python middleware keeps one: the inputs of the previous
// call are recognised by identity (`===`, the same objects in order), so a
// step converts, and the core reads and counts, only the messages after the
// longest unchanged prefix. No common prefix, other tools (by identity) or a
// failed update start a new session on the whole history. The turn is the
// stateless path's on the same history (the core holds the two equal; the
// tests compare them step by step). Calls that overlap (one agent run
// while another's summarizer runs) are safe: a step's native turn holds its
// own copy of the history, and the state below changes synchronously.
class ModelRequestSession {
  constructor() {
    this.reset()
    this.loads = 0 // sessions started on a whole history
    this.steps = 0 // steps that reused the previous call's messages
  }

  reset() {
    this.inputs = []
    this.sent = []
    this.unknown = []
    this.tools = undefined
    this.native = null
  }

  // { sent, unknown } for this call's inputs, the session updated to them.
  convert(inputs, tools, lib) {
    let keep = 0
    if (this.native !== null && sameItems(tools, this.tools)) {
      const n = Math.min(inputs.length, this.inputs.length)
      while (keep < n && inputs[keep] === this.inputs[keep]) keep++
    }
    try {
      if (keep === 0) {
        const { sent, unknown } = convertAll(inputs)
        const defs = toolsForCount(tools, lib.convertToOpenAITool)
        this.native = new turnfit.FitSession({ messages: sent, ...(defs.length ? { tools: defs } : {}) }, { format: 'openai' })
        this.sent = sent
        this.unknown = unknown
        this.tools = tools === undefined || tools === null ? tools : [...tools]
        this.loads++
      } else {
        const sent = this.sent.slice(0, keep)
        const unknown = this.unknown.filter((i) => i < keep)
        convertAll(inputs, sent, unknown, keep)
        if (keep < this.sent.length || sent.length > keep) this.native.update(keep, sent.slice(keep))
        this.sent = sent
        this.unknown = unknown
        this.steps++
      }
    } catch (e) {
      this.reset()
      throw e
    }
    this.inputs = [...inputs]
    return { sent: this.sent, unknown: this.unknown }
  }

  // This step's turn, started now (before any await), then driven.
  fitTurn(fitOptions, summarize) {
    return this.native.fitTurn(fitOptions, summarize)
  }
}

function sameItems(a, b) {
  if (a === b) return true
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
  return a.every((x, i) => x === b[i])
}

// Fits one model request. Returns { request, report }: request.messages (and
// request.systemMessage) fitted, the objects the turn did not change as given.
// `session` (a ModelRequestSession, or null for the stateless path) keeps the
// history between the calls of one agent run.
async function fitModelRequest(request, options = {}, lib = loadLangChain(), memo = null, session = null) {
  const M = lib.messages
  const fitOptions = fitOptionsOf(options, 'turnfit langchain middleware')
  fitOptions.model ??= modelName(request.model)
  if (typeof fitOptions.model !== 'string') {
    throw new TypeError("turnfit langchain middleware: give `model` (the model name to count with), e.g. { model: 'gpt-4o', maxTokens: 128000 }")
  }

  const inputs = []
  const sys = request.systemMessage
  const hasSystem = sys && typeOf(sys) === 'system' && !(typeof sys.content === 'string' && sys.content === '') &&
    !(Array.isArray(sys.content) && sys.content.length === 0)
  if (hasSystem) inputs.push(sys)
  for (const m of request.messages ?? []) inputs.push(m)

  const { sent, unknown } = session ? session.convert(inputs, request.tools, lib) : convertAll(inputs)
  const pending = pendingIds(options.pendingCalls, request.messages)
  if (unknown.length || pending.length) {
    fitOptions.policy = {
      ...fitOptions.policy,
      pinned: [...new Set([...(fitOptions.policy.pinned ?? []), ...unknown])],
      pending_calls: [...new Set([...(fitOptions.policy.pending_calls ?? []), ...pending])],
    }
  }
  const summarize = makeSummarizer(options.summarizer, request.model, lib, request.runtime)
  let out, report
  if (session) {
    // The turn on the session's history: the same turn as below (the core
    // holds the two equal); `conversation` is null when it changed nothing.
    const r = await session.fitTurn(withCarry(fitOptions, memo), summarize)
    report = r.report
    out = r.conversation ?? { messages: sent }
  } else {
    const tools = toolsForCount(request.tools, lib.convertToOpenAITool)
    const conversation = { messages: sent, ...(tools.length ? { tools } : {}) }
    ;({ conversation: out, report } = await turnfit.fitTurn(conversation, withCarry(fitOptions, memo), summarize))
  }
  const carried = keepCarry(memo, report)

  // A session's unchanged turn sent nothing back: every message is the input's.
  const mapped = out.messages === sent ? sent.map((_, index) => ({ index, changed: false })) : matchBack(sent, out.messages, report.changes)
  const result = out.messages.map((o, j) => {
    const { index, changed } = mapped[j]
    if (index >= 0 && !changed) return inputs[index]
    return fromChat(o, index >= 0 ? inputs[index] : undefined, M)
  })
  // The system message (always kept by the core) goes back to systemMessage.
  let systemMessage = request.systemMessage
  const systemFirst = hasSystem && mapped[0]?.index === 0
  if (systemFirst) {
    result.shift()
    if (mapped[0].changed) systemMessage = fromChat(out.messages[0], sys, M)
  }
  report.adapter = {
    framework: 'langchain',
    messages_in: inputs.length,
    messages_out: result.length + (systemFirst ? 1 : 0),
    unchanged: mapped.filter((x) => x.index >= 0 && !x.changed).length,
    unknown_types: unknown.map((i) => ({ index: i, type: String(typeOf(inputs[i]) ?? typeof inputs[i]) })),
    reused_summary_for: carried,
  }
  const next = { ...request, messages: result }
  if (systemFirst) next.systemMessage = systemMessage
  return { request: next, report }
}

let cached
function loadLangChain() {
  if (cached) return cached
  const { createMiddleware } = require('langchain')
  const messages = require('@langchain/core/messages')
  const { convertToOpenAITool } = require('@langchain/core/utils/function_calling')
  const { pickRunnableConfigKeys, mergeConfigs } = require('@langchain/core/runnables')
  // Command comes from @langchain/langgraph, a dependency of langchain:
  // resolved from langchain's own directory.
  let langgraph
  const loadLangGraph = () => {
    if (!langgraph) {
      const { createRequire } = require('node:module')
      const { Command, REMOVE_ALL_MESSAGES } = createRequire(require.resolve('langchain'))('@langchain/langgraph')
      langgraph = { Command, REMOVE_ALL_MESSAGES }
    }
    return langgraph
  }
  cached = { createMiddleware, messages, convertToOpenAITool, pickRunnableConfigKeys, mergeConfigs, langgraph: loadLangGraph }
  return cached
}

// The agent middleware. Options: `fit` (turnfit fit options; `model` defaults
// to the agent model's name), `summarizer` (a LangChain chat model, a
// function of the summarizer request, or false for the digest; default the
// agent's model), `pendingCalls` (ids, or a function of the messages, of
// calls awaiting a result: kept, never answered synthetically), `onReport`
// (gets each turn report), `onWarning`, `strictVersion` (throw outside the
// tested range), `writeBack` (also replace the agent state's messages with the
// fitted history when the turn changed it, so the summary persists and the
// next calls fold it instead of summarizing the same span again; default
// false: the model input only, the state keeps everything), `reuseSummary`
// (default true: without writeBack, the messages the last summary replaced
// are sent as that summary while the state still holds them, see
// adapter-common.js; false summarizes from the full history at every call),
// `session` (default true: the history is kept parsed and counted between the
// calls, the messages since the last call recognised by identity, so a call
// costs what changed; the result is the same; false refits it all each call).
function turnfitMiddleware(options = {}) {
  fitOptionsOf(options, 'turnfit langchain middleware') // bad options fail here, not at the first model call
  checkVersions(TESTED, { strict: options.strictVersion === true })
  const writeBack = options.writeBack ?? DEFAULTS.writeBack
  const lib = loadLangChain()
  const state = { lastReport: null }
  const memo = options.reuseSummary === false ? null : { carry: null }
  // session: false refits the whole history at every call (the stateless path).
  const session = options.session === false ? null : new ModelRequestSession()
  const mw = lib.createMiddleware({
    name: options.name ?? 'TurnfitMiddleware',
    wrapModelCall: async (request, handler) => {
      const { request: fitted, report } = await fitModelRequest(request, options, lib, memo, session)
      state.lastReport = report
      const warning = warnFallback(report, 'langchain middleware', options.onWarning)
      if (warning) report.adapter.warning = warning
      if (options.onReport) await options.onReport(report, fitted)
      const response = await handler(fitted)
      if (!writeBack || !report.changed) return response
      // The fitted history replaces the state's messages (the agent node has
      // already queued the response; it goes after them again, same id), so
      // the next call starts from the summary instead of summarizing again.
      const { Command, REMOVE_ALL_MESSAGES } = lib.langgraph()
      const messages = [...fitted.messages]
      if (lib.messages.AIMessage.isInstance(response)) messages.push(response)
      return new Command({ update: { messages: [new lib.messages.RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...messages] } })
    },
  })
  Object.defineProperty(mw, 'lastReport', { get: () => state.lastReport, enumerable: false })
  // How often the session started on a whole history, and reused the last call's.
  Object.defineProperty(mw, 'sessionStats', { get: () => (session ? { loads: session.loads, steps: session.steps } : null), enumerable: false })
  return mw
}

// LangChain wraps what a middleware throws in a MiddlewareError (its `cause`
// is the error thrown): the TurnfitError in `error`'s cause chain (with its
// `code`), or null when there is none.
function turnfitError(error) {
  const { TurnfitError } = turnfit
  for (let e = error, depth = 0; e != null && depth < 16; e = e.cause, depth++) {
    if (e instanceof TurnfitError) return e
  }
  return null
}

module.exports = { turnfitMiddleware, fitModelRequest, ModelRequestSession, toChat, turnfitError, TESTED, DEFAULTS }

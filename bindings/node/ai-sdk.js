'use strict'
// turnfit/ai-sdk: the Vercel AI SDK (ai 6) adapter. A `prepareStep` helper
// and a language-model middleware for `wrapLanguageModel` that fit the
// prompt before every model call, with an AI SDK model as the summarizer.
//
// No dependency on `ai`: messages, prompts and models are used by their
// documented shapes (ModelMessage, LanguageModelV3Prompt, LanguageModelV3's
// doGenerate). All the work is the core's `ai_sdk` format (docs/formats.md):
// counting as @ai-sdk/openai sends the messages, pairing tool calls and
// results by toolCallId, approvals with their calls, and messages the turn
// did not change handed back as the very objects that came in.

const { fitTurn } = require('./index.js')
const { withCarry, keepCarry, DEFAULTS, fitOptionsOf, pendingIdsOf, newestUnanswered } = require('./adapter-common.js')

/** ai versions this adapter is tested with (bindings/node/package.json pins one). */
const TESTED_AI = '>=6.0.0 <7.0.0'

// ------------------------------------------------------------ JSON in and out

// Bytes (Uint8Array, Buffer, ArrayBuffer) become base64 strings and URLs
// their text: what the AI SDK itself accepts as data, and what the core
// reads (an image's size comes from its header).
function toJson(v) {
  if (v === null || typeof v !== 'object') return v
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')
  if (v instanceof ArrayBuffer) return Buffer.from(v).toString('base64')
  if (typeof URL !== 'undefined' && v instanceof URL) return v.href
  if (v instanceof Date) return v.toISOString()
  if (Array.isArray(v)) return v.map(toJson)
  const out = {}
  for (const [k, x] of Object.entries(v)) {
    if (x !== undefined && typeof x !== 'function') out[k] = toJson(x)
  }
  return out
}

// A ToolSet ({name: tool({description, inputSchema})}) or a provider
// call's tools ([{type: 'function', name, description, inputSchema}]) as
// the core reads them. A schema that is not JSON Schema (zod 3 or 4, any
// Standard Schema) is converted with ai's own `asSchema`; a zod 4 schema
// has a `type` of its own, so it is told by its markers, not by the absence
// of `type`. One that cannot be converted (or with ai not installed) is a
// TypeError naming the tool: counted as its JSON it would be wrong by the
// size of zod's internals, counted as empty low by the schema's size.
// A provider-defined tool (type 'provider': web search, code interpreter)
// is sent by each provider in its own form, with a prompt of its own that
// no one publishes: it goes to the core as it is (name, id, args), counted
// by its name, and the count is marked an estimate (report.exact false),
// never left out.
function toolsJson(tools) {
  if (!tools) return undefined
  if (Array.isArray(tools)) return tools.filter((t) => t && (t.type === 'function' || t.type === 'provider')).map(toJson)
  let asSchema = null
  try {
    asSchema = require('ai').asSchema
  } catch {
    asSchema = null
  }
  return Object.entries(tools).map(([name, t]) => {
    if (t && t.type === 'provider') return toJson({ type: 'provider', id: t.id, name, args: t.args ?? {} })
    let schema = t.inputSchema ?? t.parameters ?? {}
    if (schema && typeof schema === 'object' && 'jsonSchema' in schema) schema = schema.jsonSchema
    else if (isValidatorSchema(schema)) {
      const why = (e) => new TypeError(
        `tool ${JSON.stringify(name)}: its inputSchema cannot be converted to JSON Schema, so it cannot be ` +
          `counted (${e}); pass a JSON Schema (jsonSchema(...))`,
      )
      if (!asSchema) throw why("the 'ai' package, whose asSchema converts it, is not installed")
      try {
        schema = asSchema(schema).jsonSchema
      } catch (e) {
        throw why(e instanceof Error ? e.message : String(e))
      }
    }
    const out = { type: 'function', name, inputSchema: toJson(schema) }
    if (t.description) out.description = t.description
    return out
  })
}

// A schema object that is not JSON Schema: zod 3 (`_def`), zod 4 (`_zod`),
// a Standard Schema (`~standard`), or any object with a parse method.
function isValidatorSchema(s) {
  if (!s || typeof s !== 'object') return false
  if ('_def' in s || '_zod' in s || '~standard' in s) return true
  if (typeof s.parse === 'function' || typeof s.safeParse === 'function') return true
  return !('type' in s || 'properties' in s || 'anyOf' in s || 'oneOf' in s || 'allOf' in s || '$ref' in s || Object.keys(s).length === 0)
}

// The installed ai, when there is one, outside the tested range: said once.
let versionChecked = false
function checkAiVersion() {
  if (versionChecked) return
  versionChecked = true
  let version
  try {
    version = require('ai/package.json').version
  } catch {
    return
  }
  const major = Number(String(version).split('.')[0])
  if (major !== 6) {
    process.emitWarning(`turnfit/ai-sdk is tested with ai ${TESTED_AI}; ai ${version} is installed`, 'TurnfitWarning')
  }
}

// ------------------------------------------------------------ summarizer

// A summarizer that asks an AI SDK model (LanguageModelV3): doGenerate with
// the core's prompt as one user message; the text parts are the summary.
// What it throws reaches the core as a failure, and the digest stands in.
function modelSummarizer(model, { providerOptions, maxOutputTokens } = {}) {
  if (!model || typeof model.doGenerate !== 'function') {
    throw new TypeError('summarizer model must be an AI SDK language model (with doGenerate)')
  }
  return async (req) => {
    const result = await model.doGenerate({
      prompt: [{ role: 'user', content: [{ type: 'text', text: req.prompt }] }],
      maxOutputTokens: maxOutputTokens ?? req.max_summary_tokens,
      providerOptions,
    })
    const text = (result.content ?? [])
      .filter((p) => p.type === 'text')
      .map((p) => p.text)
      .join('')
    return { text, finishReason: typeof result.finishReason === 'string' ? result.finishReason : result.finishReason?.unified }
  }
}

// ------------------------------------------------------------ fitting

// The OpenAI API a language model sends its prompt to, from its provider
// id: `openai('gpt-4o')` is 'openai.responses', `openai.chat(...)`
// 'openai.chat' (Azure's are 'azure.responses' / 'azure.chat'). Other
// providers: undefined, counted as the Chat provider sends them.
function apiOfModel(model) {
  const provider = typeof model === 'object' && model !== null ? model.provider : undefined
  if (typeof provider !== 'string') return undefined
  if (provider.endsWith('.responses')) return 'responses'
  if (provider.endsWith('.chat')) return 'chat_completions'
  return undefined
}

const APIS = ['responses', 'chat_completions', 'chat']

// The core's turn options: the adapters' shared names and defaults
// (adapter-common.js), in the core's ai_sdk format. `model` is the language
// model about to be called, when known: its API picks the framing counted
// (the `api` option overrides it, for a model wrapped so its provider id
// says nothing).
function turnOptions(o, model) {
  const opts = fitOptionsOf(o, 'turnfit/ai-sdk')
  opts.model ??= 'gpt-4o'
  opts.format = 'ai_sdk'
  if (o.api !== undefined && !APIS.includes(o.api)) {
    throw new TypeError(`turnfit/ai-sdk: api must be 'responses' or 'chat_completions', got ${JSON.stringify(o.api)}`)
  }
  const api = o.api ?? apiOfModel(model)
  if (api !== undefined) opts.api = api
  if (o.summarizerOptions) opts.summarizer = o.summarizerOptions
  return opts
}

function summarizerOf(o) {
  if (o.summarizer && typeof o.summarizer === 'function') return o.summarizer
  if (o.summarizer) return modelSummarizer(o.summarizer)
  return undefined
}

// 'auto': the newest assistant message's tool calls with no tool result after it.
function pendingIds(pendingCalls, messages) {
  const parts = (m, type) => (Array.isArray(m?.content) ? m.content.filter((p) => p?.type === type) : [])
  return pendingIdsOf(pendingCalls, messages, (ms) => {
    // A tool message answers every call its results name: one entry per result.
    const flat = ms.flatMap((m) => (m?.role === 'tool' ? (parts(m, 'tool-result').length ? parts(m, 'tool-result') : [m]) : [m]))
    return newestUnanswered(
      flat,
      (m) => (m?.role === 'assistant' && parts(m, 'tool-call').length ? parts(m, 'tool-call').map((p) => p.toolCallId) : null),
      (m) => (m?.type === 'tool-result' ? m.toolCallId ?? null : null),
    )
  })
}

/**
 * Fits AI SDK messages (ModelMessage[] or a LanguageModelV3Prompt) to
 * `maxTokens`. Returns {messages, report}: every message the turn did not
 * change is the object that came in; a summary (by `summarizer`, an AI SDK
 * model or a function, else the deterministic digest) stands for the span
 * it replaced. `report.summary.fallback` says why the digest stood in.
 */
async function fitMessages(messages, options) {
  return fitWith(messages, options, null, options.languageModel)
}

// `memo`: null, or { carry } kept between the calls of one prepareStep or
// middleware (the core's carry: the messages the last summary replaced are
// sent as it, see adapter-common.js).
async function fitWith(messages, options, memo, model) {
  if (!Array.isArray(messages)) throw new TypeError('messages must be an array of AI SDK messages')
  const opts = withCarry(turnOptions(options, model), memo)
  const pending = pendingIds(options.pendingCalls, messages)
  if (pending.length) opts.policy = { ...opts.policy, pending_calls: [...new Set([...(opts.policy.pending_calls ?? []), ...pending])] }
  const json = messages.map(toJson)
  const keys = new Map()
  json.forEach((m, i) => {
    const k = JSON.stringify(m)
    if (!keys.has(k)) keys.set(k, [])
    keys.get(k).push(messages[i])
  })
  const doc = { messages: json }
  // generateText's `system` is not among prepareStep's messages: counted here.
  if (typeof options.system === 'string') doc.system = options.system
  const tools = toolsJson(options.tools)
  if (tools && tools.length) doc.tools = tools
  const r = await fitTurn(doc, opts, summarizerOf(options))
  keepCarry(memo, r.report)
  const out = (Array.isArray(r.conversation) ? r.conversation : r.conversation.messages).map((m) => {
    // Unchanged: the caller's own object (binary data, class instances and all).
    const same = keys.get(JSON.stringify(m))
    return same && same.length ? same.shift() : m
  })
  const fb = r.report.summary && r.report.summary.fallback
  if (fb && fb.reason !== 'no_summarizer' && options.summarizer && options.onWarning !== null) {
    const warn = options.onWarning ?? ((msg) => process.emitWarning(msg, 'TurnfitWarning'))
    warn(`turnfit: the summarizer did not answer; the digest summarized instead (${fb.reason}${fb.detail ? ': ' + fb.detail : ''})`, r.report)
  }
  if (typeof options.onReport === 'function') options.onReport(r.report)
  return { messages: out, report: r.report }
}

// The AI SDK hands every step the whole history; `reuseSummary: false`
// summarizes it afresh at each step over the trigger.
function newMemo(options) {
  return options.reuseSummary === false ? null : { carry: null }
}

/**
 * A `prepareStep` for generateText / streamText / ToolLoopAgent: before
 * every step, the step's messages fitted to `maxTokens`.
 *
 *   prepareStep: turnfitPrepareStep({ model: 'gpt-4o', maxTokens: 32000, summarizer: cheapModel, tools })
 */
function prepareStep(options) {
  turnOptions(options)
  checkAiVersion()
  const memo = newMemo(options)
  return async ({ messages, model }) => {
    const r = await fitWith(messages, options, memo, model)
    return { messages: r.messages }
  }
}

/**
 * A language-model middleware for wrapLanguageModel: `transformParams`
 * fits `params.prompt` (with `params.tools` counted) before each call.
 *
 *   const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: turnfitMiddleware({ maxTokens: 32000, summarizer: cheapModel }) })
 */
function middleware(options) {
  turnOptions(options)
  checkAiVersion()
  const memo = newMemo(options)
  return {
    specificationVersion: 'v3',
    transformParams: async ({ params, model }) => {
      const tools = options.tools ?? params.tools
      const r = await fitWith(params.prompt, { ...options, tools }, memo, model)
      // A LanguageModelV3Prompt's user and assistant content is always
      // parts: a message the turn wrote (a summary) gets its text as one.
      const prompt = r.messages.map((m) =>
        (m.role === 'user' || m.role === 'assistant') && typeof m.content === 'string'
          ? { ...m, content: [{ type: 'text', text: m.content }] }
          : m)
      return { ...params, prompt }
    },
  }
}

module.exports = { prepareStep, middleware, fitMessages, modelSummarizer, apiOfModel, TESTED_AI, DEFAULTS }

'use strict'
// turnfit for the OpenAI Agents SDK (JS): a `callModelInputFilter` (RunConfig)
// that fits the model input before every model call with `fitTurn`, an
// Agents `Model` (or a function) summarizing. The SDK's input items are
// converted to Responses API input items for the core and mapped back: an
// item the turn did not change is the object the SDK passed in.
// `@openai/agents-core` is not imported: only its version is read.
const turnfit = require('./index.js')
const { checkVersions, warnFallback, matchBack, textOf, withCarry, keepCarry, DEFAULTS, fitOptionsOf, pendingIdsOf, newestUnanswered, timeoutSignal } = require('./adapter-common.js')

const CALL_TYPES = new Set(['function_call', 'computer_call', 'shell_call', 'apply_patch_call'])

// Tested: @openai/agents-core 0.20.0 (test/openai-agents.test.js).
const TESTED = { '@openai/agents-core': { min: '0.20.0', below: '0.21.0' } }

function imageUrl(image, mediaType) {
  if (typeof image === 'string') return image
  if (image?.url) return image.url
  if (typeof image?.data === 'string') return `data:${image.mediaType ?? mediaType ?? 'image/png'};base64,${image.data}`
  return undefined
}

function wirePart(p) {
  switch (p?.type) {
    case 'input_text':
    case 'output_text':
      return { type: p.type, text: p.text ?? '' }
    case 'refusal':
      return { type: 'refusal', refusal: p.refusal ?? '' }
    case 'input_image': {
      const url = imageUrl(p.image)
      if (url) return { type: 'input_image', image_url: url, ...(p.detail ? { detail: p.detail } : {}) }
      if (p.image?.fileId) return { type: 'input_image', file_id: p.image.fileId }
      return { type: 'input_text', text: textOf(p) }
    }
    case 'input_file':
      return { type: 'input_file', ...(p.filename ? { filename: p.filename } : {}), ...(typeof p.file === 'string' ? { file_url: p.file } : {}) }
    case 'audio':
      return { type: 'input_text', text: p.transcript ?? '' }
    default:
      return { type: 'input_text', text: textOf(p) }
  }
}

function wireOutput(output) {
  if (typeof output === 'string') return output
  if (Array.isArray(output)) return output.map(wireOutputPart)
  if (output?.type === 'text') return output.text ?? ''
  return [wireOutputPart(output)]
}

function wireOutputPart(p) {
  if (p?.type === 'text' || p?.type === 'input_text') return { type: 'input_text', text: p.text ?? '' }
  if (p?.type === 'image' || p?.type === 'input_image') {
    const url = imageUrl(p.image ?? p.image_url)
    if (url) return { type: 'input_image', image_url: url }
  }
  return { type: 'input_text', text: textOf(p) }
}

// One SDK input item as a Responses input item; `unknown` when its type is
// not one the SDK's protocol defines (then it goes as given, counted by its
// text, and is pinned: compaction never drops it).
function toResponses(item) {
  const type = item?.type ?? (item?.role ? 'message' : undefined)
  switch (type) {
    case 'message':
      return {
        wire: { type: 'message', role: item.role, content: typeof item.content === 'string' ? item.content : (item.content ?? []).map(wirePart) },
        unknown: false,
      }
    case 'function_call':
      return { wire: { type: 'function_call', call_id: item.callId, name: item.name, arguments: item.arguments ?? '' }, unknown: false }
    case 'function_call_result':
      return { wire: { type: 'function_call_output', call_id: item.callId, output: wireOutput(item.output) }, unknown: false }
    case 'reasoning': {
      const wire = { type: 'reasoning', summary: (item.content ?? []).map((c) => ({ type: 'summary_text', text: c.text ?? '' })) }
      if (item.rawContent) wire.content = item.rawContent.map((c) => ({ type: 'reasoning_text', text: c.text ?? '' }))
      const enc = item.providerData?.encryptedContent ?? item.providerData?.encrypted_content
      if (typeof enc === 'string') wire.encrypted_content = enc
      return { wire, unknown: false }
    }
    case 'computer_call':
      return { wire: { type: 'computer_call', call_id: item.callId, action: item.action ?? item.actions ?? {} }, unknown: false }
    case 'computer_call_result':
      return {
        wire: { type: 'computer_call_output', call_id: item.callId, output: { type: 'computer_screenshot', image_url: imageUrl(item.output?.data) ?? '' } },
        unknown: false,
      }
    case 'shell_call':
      return { wire: { type: 'shell_call', call_id: item.callId, action: item.action ?? {} }, unknown: false }
    case 'shell_call_output':
      return { wire: { type: 'shell_call_output', call_id: item.callId, output: textOf(item.output ?? '') }, unknown: false }
    case 'apply_patch_call':
      return { wire: { type: 'apply_patch_call', call_id: item.callId, operation: item.operation ?? {} }, unknown: false }
    case 'apply_patch_call_output':
      return { wire: { type: 'apply_patch_call_output', call_id: item.callId, output: textOf(item.output ?? '') }, unknown: false }
    case 'hosted_tool_call':
      // A server-side tool: the core keeps it and counts its text.
      return { wire: { type: 'hosted_tool_call', name: item.name, arguments: item.arguments, output: item.output, status: item.status }, unknown: false }
    default:
      return { wire: { ...item, type: `unknown_${String(type ?? 'item')}`, text: textOf(item) }, unknown: true }
  }
}

function messageContent(content) {
  if (typeof content === 'string') return content
  return (content ?? []).map((p) => (p.type === 'output_text' ? { type: 'output_text', text: p.text } : { type: 'input_text', text: p.text ?? textOf(p) }))
}

// An output item the turn wrote (the summary, a synthesized or rewritten
// result) as an SDK item; `orig` is the item it replaces.
function fromResponses(o, orig, names) {
  if (o.type === 'function_call_output') {
    const text = typeof o.output === 'string' ? o.output : (o.output ?? []).map((p) => p.text ?? '').join('')
    if (orig) return { ...orig, output: typeof orig.output === 'string' ? text : { type: 'text', text } }
    return { type: 'function_call_result', callId: o.call_id, name: names.get(o.call_id) ?? '', status: 'completed', output: { type: 'text', text } }
  }
  if (o.type?.endsWith('_output') && orig) {
    return { ...orig, output: typeof o.output === 'string' ? o.output : orig.output }
  }
  if (o.type === 'message' || (o.role && o.type === undefined)) {
    return { ...(orig ?? {}), type: 'message', role: o.role, content: messageContent(o.content) }
  }
  return orig ?? o
}

function toolsForCount(agent) {
  const out = []
  for (const t of agent?.tools ?? []) {
    if (t?.type === 'function') out.push({ type: 'function', name: t.name, description: t.description ?? '', parameters: t.parameters ?? {} })
    else out.push({ type: 'function', name: String(t?.name ?? t?.type ?? 'tool'), description: textOf(t?.providerData ?? t) })
  }
  return out
}

function modelText(response) {
  const parts = []
  const calls = []
  for (const o of response?.output ?? []) {
    if (o.type === 'message' && o.role === 'assistant') {
      if (typeof o.content === 'string') parts.push(o.content)
      else for (const p of o.content ?? []) if (p.type === 'output_text') parts.push(p.text)
    } else if (o.type === 'function_call') {
      calls.push(o)
    }
  }
  const text = parts.join('')
  // A reply that calls a tool instead is not a summary: the core says not_text.
  if (text.trim() === '' && calls.length > 0) return { content: '', tool_calls: calls }
  return text
}

// The summarizer fitTurn calls: a function of the request, or an Agents
// `Model` (its getResponse with the prompt as one user message, no tools).
function makeSummarizer(summarizer, agent) {
  if (summarizer === false || summarizer === null) return undefined
  if (typeof summarizer === 'function') return summarizer
  const model = summarizer ?? (typeof agent?.model === 'object' ? agent.model : undefined)
  if (!model || typeof model.getResponse !== 'function') {
    return () => {
      throw new Error('no Agents Model instance to summarize with (the agent names its model as a string); pass `summarizer`')
    }
  }
  return async (req) => {
    const signal = timeoutSignal(req.timeout_ms)
    const response = await model.getResponse({
      systemInstructions: undefined,
      input: [{ type: 'message', role: 'user', content: req.prompt }],
      modelSettings: { maxTokens: req.max_summary_tokens },
      tools: [],
      outputType: 'text',
      handoffs: [],
      tracing: false,
      ...(signal ? { signal } : {}),
    })
    return modelText(response)
  }
}

// The OpenAI API the agent's model sends to: an OpenAIChatCompletionsModel
// sends the items as Chat messages, an OpenAIResponsesModel (and its
// WebSocket twin) as Responses items. A model given by name is resolved by
// the run's model provider, which this filter cannot see: the SDK's default
// (Responses) unless `api` says otherwise (setOpenAIAPI('chat_completions'),
// `new OpenAIProvider({ useResponses: false })`).
function apiOfAgent(agent) {
  const name = typeof agent?.model === 'object' && agent.model !== null ? agent.model.constructor?.name : undefined
  if (name === 'OpenAIChatCompletionsModel') return 'chat_completions'
  if (name === 'OpenAIResponsesModel' || name === 'OpenAIResponsesWSModel') return 'responses'
  return undefined
}

const APIS = ['responses', 'chat_completions', 'chat']

// Fits one model input ({ input, instructions }). Returns { modelData, report }.
async function fitModelInput(modelData, agent, options = {}, memo = null) {
  const fitOptions = fitOptionsOf(options, 'turnfit callModelInputFilter')
  if (fitOptions.model === undefined && typeof agent?.model === 'string' && agent.model !== '') fitOptions.model = agent.model
  if (typeof fitOptions.model !== 'string') {
    throw new TypeError("turnfit callModelInputFilter: give `model` (the model name to count with), e.g. { model: 'gpt-4o', maxTokens: 128000 }")
  }
  // The items the last summary replaced are sent as it (the core's carry).
  const items = modelData.input ?? []
  const sent = []
  const unknown = []
  const names = new Map()
  items.forEach((item, i) => {
    const { wire, unknown: u } = toResponses(item)
    sent.push(wire)
    if (u) unknown.push(i)
    if (item?.type === 'function_call') names.set(item.callId, item.name)
  })
  // 'auto': the newest reply's calls (its run of call items) with no output item after them.
  const pending = pendingIdsOf(options.pendingCalls, items, (xs) => newestUnanswered(
    xs,
    (x) => (CALL_TYPES.has(x?.type) && x.callId != null ? [x.callId] : null),
    (x) => (typeof x?.type === 'string' && (x.type.endsWith('_result') || x.type.endsWith('_output')) ? x.callId ?? null : null),
    { spans: true },
  ))
  if (unknown.length || pending.length) {
    fitOptions.policy = {
      ...fitOptions.policy,
      pinned: [...new Set([...(fitOptions.policy.pinned ?? []), ...unknown])],
      pending_calls: [...new Set([...(fitOptions.policy.pending_calls ?? []), ...pending])],
    }
  }
  const doc = { input: sent }
  if (typeof modelData.instructions === 'string' && modelData.instructions !== '') doc.instructions = modelData.instructions
  const tools = toolsForCount(agent)
  if (tools.length) doc.tools = tools
  fitOptions.format ??= 'responses'
  const api = options.api ?? apiOfAgent(agent)
  if (api !== undefined) fitOptions.api = api
  const summarize = makeSummarizer(options.summarizer, agent)
  const { conversation: out, report } = await turnfit.fitTurn(doc, withCarry(fitOptions, memo), summarize)
  const carried = keepCarry(memo, report)
  const outItems = Array.isArray(out.input) ? out.input : typeof out.input === 'string' ? [{ type: 'message', role: 'user', content: out.input }] : []
  const mapped = matchBack(sent, outItems, report.changes)
  const input = outItems.map((o, j) => {
    const { index, changed } = mapped[j]
    if (index >= 0 && !changed) return items[index]
    return fromResponses(o, index >= 0 ? items[index] : undefined, names)
  })
  report.adapter = {
    framework: 'openai-agents',
    items_in: items.length,
    items_out: input.length,
    unchanged: mapped.filter((x) => x.index >= 0 && !x.changed).length,
    unknown_types: unknown.map((i) => ({ index: i, type: String(items[i]?.type ?? typeof items[i]) })),
    reused_summary_for: carried,
  }
  const next = { ...modelData, input }
  if (typeof out.instructions === 'string' && doc.instructions !== undefined) next.instructions = out.instructions
  return { modelData: next, report }
}

// The RunConfig `callModelInputFilter`. Options: `fit` (turnfit fit options;
// `model` defaults to the agent's model name when it is a string),
// `summarizer` (an Agents Model, a function of the summarizer request, or
// false for the digest; default the agent's model when it is a Model),
// `pendingCalls` (call ids, or a function of the items, awaiting a result:
// kept, never answered synthetically), `onReport`, `onWarning`,
// `strictVersion`, `reuseSummary` (default true: the items the last summary
// replaced are sent as that summary while the run's input still holds them,
// see adapter-common.js; false summarizes from the full input at every call).
function turnfitInputFilter(options = {}) {
  fitOptionsOf(options, 'turnfit callModelInputFilter') // bad options fail here, not at the first model call
  if (options.api !== undefined && !APIS.includes(options.api)) {
    throw new TypeError(`turnfit callModelInputFilter: api must be 'responses' or 'chat_completions', got ${JSON.stringify(options.api)}`)
  }
  checkVersions(TESTED, { strict: options.strictVersion === true })
  const state = { lastReport: null }
  const memo = options.reuseSummary === false ? null : { carry: null }
  const filter = async ({ modelData, agent }) => {
    const { modelData: fitted, report } = await fitModelInput(modelData, agent, options, memo)
    state.lastReport = report
    const warning = warnFallback(report, 'openai-agents callModelInputFilter', options.onWarning)
    if (warning) report.adapter.warning = warning
    if (options.onReport) await options.onReport(report, fitted)
    return fitted
  }
  // The filter never mutates an item, so the SDK may hand over its own.
  filter.preserveInputIdentity = true
  Object.defineProperty(filter, 'lastReport', { get: () => state.lastReport })
  return filter
}

module.exports = { turnfitInputFilter, fitModelInput, toResponses, apiOfAgent, TESTED, DEFAULTS }

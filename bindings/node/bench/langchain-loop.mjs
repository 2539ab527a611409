// Per-step overhead of turnfit's LangChain.js middleware beside LangChain's
// own answers on the same agent loop, and how far LangChain's default counter
// is from turnfit's exact count. Figures: docs/benchmarks.md, "LangChain.js
// agent middleware vs summarizationMiddleware / trimMessages (issue 35)".
//
//   cd bindings/node && node bench/langchain-loop.mjs [repeats]
//
// (with NAPI_RS_NATIVE_LIBRARY_PATH pointing at a release build of
// turnfit-node for timings; see the docs section for the exact command.)
//
// The loop: createAgent (langchain 1.5.14) with a fake chat model replaying
// tests/fixtures/trajectories/mini-swe-agent-astroid-1866 (98 tool calls, a
// final answer: 99 model calls), the `bash` tool returning the recorded
// results; budget a third of the final exact size. Methods:
//   none        no middleware (the prompts grow to the full history)
//   turnfit no reuse  turnfitMiddleware (wrapModelCall, fitTurn; the fake model
//               summarizes) with reuseSummary: false, no target
//   turnfit     the defaults (reuseSummary: the model input only, the last summary
//               stands for what it replaced) with hysteresis: trigger at 90% of
//               the budget, down to 60%
//   turnfit writeBack  the same with writeBack (the fitted history replaces the state)
//   summarize   summarizationMiddleware({ model, trigger: { tokens: budget } }):
//               its default counter (countTokensApproximately) and default keep
//   trim        trimMessages({ maxTokens: budget, strategy: 'last',
//               includeSystem: true, tokenCounter: countTokensApproximately })
//               in a wrapModelCall (the model input only, as turnfit does)
// Hook time is measured around each middleware's hook alone (the model call
// excluded; a summarizer call on the fake model included); the loop time per
// model call is the whole agent.invoke divided by the model calls (the fake
// model, the tool, LangGraph and the middleware).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'

const require = createRequire(import.meta.url)
const ck = require('../index.js')
const { turnfitMiddleware } = require('../langchain.js')
const { createAgent, createMiddleware, summarizationMiddleware, countTokensApproximately } = require('langchain')
const { AIMessage, HumanMessage, trimMessages } = require('@langchain/core/messages')
const { BaseChatModel } = require('@langchain/core/language_models/chat_models')
const { tool } = require('@langchain/core/tools')
const { convertToOpenAITool } = require('@langchain/core/utils/function_calling')
const { z } = require('zod')

const repeats = Number(process.argv[2] || 3)
const FIXTURE = JSON.parse(readFileSync(new URL('../../../tests/fixtures/trajectories/mini-swe-agent-astroid-1866.openai.json', import.meta.url), 'utf8'))
const MODEL = 'gpt-4o'
const SYSTEM = FIXTURE.messages[0].content
const TASK = FIXTURE.messages[1].content
const STEPS = FIXTURE.messages.filter((m, i) => i >= 2 && m.role === 'assistant')
const RESULTS = new Map(FIXTURE.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]))
const FINAL = ck.countConversation({ messages: FIXTURE.messages.slice(0, -1), tools: FIXTURE.tools }, { model: MODEL })
const BUDGET = Math.floor(FINAL / 3)

class ReplayModel extends BaseChatModel {
  constructor(shared) { super({}); this.shared = shared }
  _llmType() { return 'replay' }
  bindTools(tools) { const b = new ReplayModel(this.shared); b.bound = tools; return b }
  async _generate(messages) {
    const s = this.shared
    if (!this.bound) {
      s.summaries++
      const text = 'Summary: the agent explored astroid and is fixing the format call.'
      return { generations: [{ text, message: new AIMessage(text) }] }
    }
    s.prompts.push({ messages, tools: this.bound })
    const k = s.step++
    const step = STEPS[k]
    const last = k === STEPS.length - 1
    const message = new AIMessage({
      id: `ai-${k}`,
      content: step.content ?? '',
      tool_calls: last ? [] : step.tool_calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: 'tool_call' })),
    })
    return { generations: [{ text: message.content, message }] }
  }
}

const bash = tool(async (_input, config) => RESULTS.get(config.toolCall.id),
  { name: 'bash', description: FIXTURE.tools[0].function.description, schema: z.object({ command: z.string() }) })

// Wraps a middleware's hook with a timer (the handler's time excluded).
function timed(mw, times) {
  const out = { ...mw }
  if (mw.wrapModelCall) {
    out.wrapModelCall = async (request, handler) => {
      const t0 = performance.now()
      let t1
      return mw.wrapModelCall(request, (req) => { t1 = performance.now(); times.push(t1 - t0); return handler(req) })
    }
  }
  if (mw.beforeModel) {
    const hook = typeof mw.beforeModel === 'function' ? mw.beforeModel : mw.beforeModel.hook
    const wrapped = async (state, runtime) => {
      const t0 = performance.now()
      try { return await hook(state, runtime) } finally { times.push(performance.now() - t0) }
    }
    out.beforeModel = typeof mw.beforeModel === 'function' ? wrapped : { ...mw.beforeModel, hook: wrapped }
  }
  return out
}

function trimMiddleware() {
  return createMiddleware({
    name: 'TrimMessages',
    wrapModelCall: async (request, handler) => {
      const all = [request.systemMessage, ...request.messages]
      const kept = await trimMessages(all, { maxTokens: BUDGET, strategy: 'last', includeSystem: true, tokenCounter: (ms) => countTokensApproximately(ms, request.tools) })
      return handler({ ...request, messages: kept.filter((m) => m !== request.systemMessage) })
    },
  })
}

function methods(shared) {
  return {
    none: [],
    'turnfit no reuse': [turnfitMiddleware({ fit: { model: MODEL, max_tokens: BUDGET, reserve_output: 0 }, reuseSummary: false })],
    turnfit: [turnfitMiddleware({ fit: { model: MODEL, max_tokens: BUDGET, reserve_output: 0, trigger_ratio: 0.9, target_ratio: 0.6 } })],
    'turnfit writeBack': [turnfitMiddleware({ fit: { model: MODEL, max_tokens: BUDGET, reserve_output: 0, trigger_ratio: 0.9, target_ratio: 0.6 }, writeBack: true })],
    summarize: [summarizationMiddleware({ model: new ReplayModel(shared), trigger: { tokens: BUDGET } })],
    trim: [trimMiddleware()],
  }
}

const ROLE = { system: 'system', human: 'user', ai: 'assistant', tool: 'tool' }
function chat(m) {
  const out = { role: ROLE[m.getType()] ?? 'user', content: typeof m.content === 'string' ? m.content : m.content.map((b) => ({ type: 'text', text: b.text ?? JSON.stringify(b) })) }
  if (m.tool_calls?.length) out.tool_calls = m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }))
  if (m.getType() === 'tool') out.tool_call_id = m.tool_call_id
  return out
}

function inspect({ messages, tools }) {
  const toolDefs = (tools ?? []).map((t) => convertToOpenAITool(t))
  const exact = ck.countConversation({ messages: messages.map(chat), tools: toolDefs }, { model: MODEL })
  const approx = countTokensApproximately(messages, tools)
  const calls = new Set()
  let orphans = 0
  for (const m of messages) {
    for (const c of m.tool_calls ?? []) calls.add(c.id)
    if (m.getType() === 'tool' && !calls.has(m.tool_call_id)) orphans++
  }
  const task = messages.some((m) => m.getType() === 'human' && m.content === TASK)
  return { exact, approx, orphans, task }
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : NaN }
const fmt = (x, d = 2) => x.toFixed(d)

console.log(`node ${process.version}; budget ${BUDGET} tokens (final exact size ${FINAL} / 3); ${STEPS.length} model calls per run; ${repeats} runs per method`)
console.log('')
console.log('| method | agent loop time per model call, median of runs | hook time per call, median (p90) | summarizer calls | prompts over budget (exact) | prompts with an orphan result | prompts without the task | exact tokens, median / max | LangChain default counter / exact, median (min-max) |')
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for (const name of ['none', 'turnfit no reuse', 'turnfit', 'turnfit writeBack', 'summarize', 'trim']) {
  const times = []
  const perCall = []
  let rows = []
  let summaries = 0
  for (let r = 0; r < repeats; r++) {
    const shared = { step: 0, prompts: [], summaries: 0 }
    const agent = createAgent({ model: new ReplayModel(shared), tools: [bash], systemPrompt: SYSTEM, middleware: methods(shared)[name].map((mw) => timed(mw, times)) })
    const t0 = performance.now()
    await agent.invoke({ messages: [new HumanMessage(TASK)] }, { recursionLimit: 1000 })
    perCall.push((performance.now() - t0) / shared.prompts.length)
    if (r === 0) { rows = shared.prompts.map(inspect); summaries = shared.summaries }
  }
  const over = rows.filter((x) => x.exact > BUDGET).length
  const orphan = rows.filter((x) => x.orphans > 0).length
  const noTask = rows.filter((x) => !x.task).length
  const ratios = rows.map((x) => x.approx / x.exact)
  const t = [...times].sort((a, b) => a - b)
  const hook = t.length ? `${fmt(median(t))} ms (${fmt(t[Math.floor(t.length * 0.9)])})` : '-'
  console.log(`| ${name} | ${fmt(median(perCall))} ms | ${hook} | ${summaries} | ${over} of ${rows.length} | ${orphan} | ${noTask} | ${median(rows.map((x) => x.exact))} / ${Math.max(...rows.map((x) => x.exact))} | ${fmt(median(ratios), 3)} (${fmt(Math.min(...ratios), 3)}-${fmt(Math.max(...ratios), 3)}) |`)
}

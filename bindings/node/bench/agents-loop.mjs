// Per-call overhead of turnfit's OpenAI Agents JS callModelInputFilter on the
// same replayed loop as bench/langchain-loop.mjs (astroid-1866, 99 model
// calls, budget a third of the final exact size). The SDK has no in-run
// trimming of its own in JS to compare with; "none" is the run without a
// filter. Figures: docs/benchmarks.md, under the LangChain.js section.
//
//   cd bindings/node && node bench/agents-loop.mjs [repeats]
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'

const require = createRequire(import.meta.url)
const ck = require('../index.js')
const { turnfitInputFilter } = require('../openai-agents.js')
const { Agent, Runner, Usage, tool } = require('@openai/agents-core')
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

class ReplayModel {
  constructor() { this.step = 0; this.calls = 0; this.summaries = 0 }
  async getResponse(request) {
    const usage = new Usage()
    if (request.tools.length === 0) {
      this.summaries++
      return { usage, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Summary: the agent explored astroid.' }] }] }
    }
    this.calls++
    const k = this.step++
    const s = STEPS[k]
    const output = []
    if (s.content) output.push({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: s.content }] })
    if (k < STEPS.length - 1) for (const c of s.tool_calls) output.push({ type: 'function_call', callId: c.id, name: c.function.name, arguments: c.function.arguments, status: 'completed' })
    return { usage, output }
  }
  async *getStreamedResponse() { throw new Error('not streamed') }
}

const bash = tool({ name: 'bash', description: FIXTURE.tools[0].function.description, parameters: z.object({ command: z.string() }),
  execute: async (_i, _c, details) => RESULTS.get(details.toolCall.callId) })

function timed(filter, times) {
  if (!filter) return undefined
  const f = async (args) => { const t0 = performance.now(); try { return await filter(args) } finally { times.push(performance.now() - t0) } }
  f.preserveInputIdentity = filter.preserveInputIdentity
  return f
}

const fit = { model: MODEL, max_tokens: BUDGET, reserve_output: 0 }
const METHODS = {
  none: () => undefined,
  'turnfit no reuse': () => turnfitInputFilter({ fit, reuseSummary: false }),
  turnfit: () => turnfitInputFilter({ fit: { ...fit, trigger_ratio: 0.9, target_ratio: 0.6 } }),
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 }

console.log(`node ${process.version}; @openai/agents-core; budget ${BUDGET}; ${STEPS.length} model calls per run; ${repeats} runs per method`)
console.log('')
console.log('| method | run time per model call, median of runs | filter time per call, median (p90) | summarizer calls |')
console.log('|---|---:|---:|---:|')
for (const [name, make] of Object.entries(METHODS)) {
  const times = []
  const perCall = []
  let summaries = 0
  for (let r = 0; r < repeats; r++) {
    const model = new ReplayModel()
    const agent = new Agent({ name: 'replay', instructions: SYSTEM, model, tools: [bash] })
    const filter = timed(make(), times)
    const runner = new Runner({ tracingDisabled: true, ...(filter ? { callModelInputFilter: filter } : {}) })
    const t0 = performance.now()
    await runner.run(agent, TASK, { maxTurns: 1000 })
    perCall.push((performance.now() - t0) / model.calls)
    if (r === 0) summaries = model.summaries
  }
  const t = [...times].sort((a, b) => a - b)
  const hook = t.length ? `${median(t).toFixed(2)} ms (${t[Math.floor(t.length * 0.9)].toFixed(2)})` : '-'
  console.log(`| ${name} | ${median(perCall).toFixed(2)} ms | ${hook} | ${summaries} |`)
}

// Per-step overhead of turnfit/ai-sdk's prepareStep beside the AI SDK's own
// pruneMessages, on the same loop: the committed astroid trajectory
// (tests/fixtures/trajectories/mini-swe-agent-astroid-1866.ai-sdk.json, 98
// tool rounds) replayed through generateText with ai/test's
// MockLanguageModelV3, budget a third of the trajectory's final size. Times
// only the prepareStep function (the hook's own work), per step; counts each
// prompt the model receives with turnfit (gpt-4o, as @ai-sdk/openai sends it)
// against the budget. Run from bindings/node after `bash test.sh` (or a debug
// build and `npm ci`):
//   node bench/ai-sdk-overhead.mjs [runs]
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateText, tool, jsonSchema, stepCountIs, pruneMessages } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import ck from '../index.js'
import aisdk from '../ai-sdk.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const FIXTURE = JSON.parse(fs.readFileSync(path.join(here, '../../../tests/fixtures/trajectories/mini-swe-agent-astroid-1866.ai-sdk.json'), 'utf8'))
const [SYSTEM, TASK] = FIXTURE.messages
const MODEL = 'gpt-4o'
const FULL = ck.countConversation(FIXTURE, { model: MODEL })
const BUDGET = Math.floor(FULL / 3)
const RESERVE = 1000
const LIMIT = BUDGET - RESERVE
const RUNS = Number(process.argv[2] ?? 5)

const RESULTS = new Map()
for (const m of FIXTURE.messages) if (m.role === 'tool') for (const p of m.content) RESULTS.set(p.toolCallId, p.output.value)
const STEPS = FIXTURE.messages.filter((m) => m.role === 'assistant' && m.content.filter((p) => p.type === 'tool-call').every((p) => RESULTS.has(p.toolCallId)))
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }

async function loop(prepare) {
  let k = 0
  const prompts = []
  const model = new MockLanguageModelV3({
    doGenerate: async (o) => {
      prompts.push(o.prompt)
      const s = STEPS[k++]
      if (!s) return { content: [{ type: 'text', text: 'Done.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
      const content = s.content.map((p) => (p.type === 'tool-call' ? { ...p, input: JSON.stringify(p.input) } : p))
      return { content, finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] }
    },
  })
  const times = []
  const timed = prepare && (async (a) => {
    const t0 = process.hrtime.bigint()
    const r = await prepare(a)
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
    return r
  })
  const t0 = process.hrtime.bigint()
  await generateText({
    model, system: SYSTEM.content, prompt: TASK.content, stopWhen: stepCountIs(STEPS.length + 2), prepareStep: timed,
    tools: { bash: tool({ description: FIXTURE.tools[0].description, inputSchema: jsonSchema(FIXTURE.tools[0].inputSchema), execute: async (_i, { toolCallId }) => RESULTS.get(toolCallId) }) },
  })
  const total = Number(process.hrtime.bigint() - t0) / 1e6
  const tokens = prompts.map((p) => ck.countConversation({ messages: p, tools: FIXTURE.tools }, { model: MODEL }))
  const calls = prompts.map((p) => p.reduce((n, m) => n + (Array.isArray(m.content) ? m.content.filter((x) => x.type === 'tool-call').length : 0), 0))
  return { times, total, tokens, steps: prompts.length, calls }
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN }

// Factories: a fresh hook per run (turnfit's prepareStep keeps the last
// summary's carry, which must not leak from one run into the next).
const turnfit = (extra = {}) => () =>
  aisdk.prepareStep({ model: MODEL, maxTokens: BUDGET, reserveOutput: RESERVE, system: SYSTEM.content, tools: FIXTURE.tools, onWarning: null, ...extra })
const variants = {
  'none (no hook)': () => null,
  'pruneMessages (toolCalls before-last-2-messages, reasoning all)': () => async ({ messages }) =>
    ({ messages: pruneMessages({ messages, reasoning: 'all', toolCalls: 'before-last-2-messages', emptyMessages: 'remove' }) }),
  'pruneMessages (toolCalls before-last-40-messages, reasoning all)': () => async ({ messages }) =>
    ({ messages: pruneMessages({ messages, reasoning: 'all', toolCalls: 'before-last-40-messages', emptyMessages: 'remove' }) }),
  'turnfit prepareStep (digest)': turnfit(),
  // Every step summarizes from the whole history (the adapter before the carry).
  'turnfit prepareStep (digest, reuseSummary: false)': turnfit({ reuseSummary: false }),
}

console.log(`loop: ${STEPS.length + 1} model calls; final size ${FULL} tokens; budget ${BUDGET} (limit ${LIMIT} after ${RESERVE} reserved); ${RUNS} runs; node ${process.version}`)
const rows = {}
// Interleaved: run r of every variant, then run r + 1 of every variant.
const acc = Object.fromEntries(Object.keys(variants).map((k) => [k, { per: [], totals: [], last: null }]))
for (let r = 0; r < RUNS; r++) {
  for (const [name, make] of Object.entries(variants)) {
    const a = acc[name]
    a.last = await loop(make())
    a.per.push(...a.last.times)
    a.totals.push(a.last.total / a.last.steps)
  }
}
for (const [name, { per, totals, last }] of Object.entries(acc)) {
  const over = last.tokens.filter((t) => t > LIMIT)
  const worst = Math.max(...last.tokens)
  rows[name] = { hook: median(per), step: median(totals) }
  console.log(`${name}: hook median ${median(per).toFixed(3)} ms/step, loop median ${median(totals).toFixed(3)} ms/step; ` +
    `prompts over the limit ${over.length}/${last.steps}, largest ${worst} tokens (${((worst / LIMIT - 1) * 100).toFixed(0)}% vs limit); ` +
    `tool calls in the last prompt ${last.calls.at(-1)} of ${STEPS.length}`)
}
const a = rows['turnfit prepareStep (digest)'], b = rows['pruneMessages (toolCalls before-last-2-messages, reasoning all)']
const c = rows['turnfit prepareStep (digest, reuseSummary: false)']
console.log(`ratio turnfit hook time with the carry / without (reuseSummary: false): ${(a.hook / c.hook).toFixed(2)}x`)
console.log(`ratio turnfit/pruneMessages hook time: ${(a.hook / b.hook).toFixed(1)}x; turnfit hook per step / no-hook loop step: ${(a.hook / rows['none (no hook)'].step).toFixed(2)}x`)

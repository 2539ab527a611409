// Per-call overhead of turnfit's LangChain.js middleware over a long run
// (issue 52), the Node twin of langchain_steps.py: stateless (session: false,
// the whole history converted and fitted at every call) against the fit
// session (the default: only the messages since the last call).
//
// The run: the real mini-swe-agent trajectory of tests/fixtures/trajectories
// (astroid-1866, 99 model calls, 147 KB) replayed --repeat times back to back
// (call ids renamed per pass) in langchain's own createAgent loop with a fake
// chat model, so the history grows past 1 MB. The middleware is
// turnfitMiddleware({ model: 'gpt-4o', maxTokens: --budget }) with its
// defaults, an instant summarizer function. A call's overhead is the time in
// the middleware's wrapModelCall less the inner handler (the model call).
// Printed: the median and max of the calls in the first, middle and last
// tenth of the run, with the history's size there.
//
//   cargo build --release -p turnfit-node
//   NAPI_RS_NATIVE_LIBRARY_PATH=$PWD/target/release/libturnfit_node.so \
//     node bench/adapters/langchain_steps.mjs --repeat 8
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { parseArgs } from 'node:util'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const require = createRequire(path.join(root, 'bindings/node/package.json'))
const { turnfitMiddleware } = require('./langchain.js')
const turnfit = require('./index.js')
const { createAgent, createMiddleware } = require('langchain')
const { AIMessage, HumanMessage } = require('@langchain/core/messages')
const { BaseChatModel } = require('@langchain/core/language_models/chat_models')
const { tool } = require('@langchain/core/tools')

const { values: args } = parseArgs({
  options: {
    repeat: { type: 'string', default: '8' },
    budget: { type: 'string', default: '32000' },
    mode: { type: 'string', default: 'both' }, // stateless | session | both
  },
})
const repeat = Number(args.repeat)
const budget = Number(args.budget)

function longTrajectory(n) {
  const doc = JSON.parse(readFileSync(path.join(root, 'tests/fixtures/trajectories/mini-swe-agent-astroid-1866.openai.json'), 'utf8'))
  const msgs = doc.messages
  const results = new Map(msgs.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]))
  const assistants = msgs.filter((m) => m.role === 'assistant')
  const body = assistants.slice(0, -1)
  const steps = []
  const renamed = new Map()
  for (let k = 0; k < n; k++) {
    for (const m of body) {
      const c = structuredClone(m)
      for (const call of c.tool_calls ?? []) {
        const id = `r${k}_${call.id}`
        renamed.set(id, results.get(call.id))
        call.id = id
      }
      steps.push(c)
    }
  }
  steps.push({ ...assistants.at(-1), tool_calls: [] })
  return { system: msgs[0].content, task: msgs[1].content, steps, results: renamed, tools: doc.tools }
}

class Replay extends BaseChatModel {
  constructor(shared) {
    super({})
    this.shared = shared
  }

  _llmType() {
    return 'replay-bench'
  }

  bindTools(tools) {
    const bound = new Replay(this.shared)
    bound.bound = tools
    return bound
  }

  async _generate() {
    const step = this.shared.traj.steps[this.shared.step++]
    const message = step && (step.tool_calls ?? []).length
      ? new AIMessage({ content: step.content ?? '', tool_calls: step.tool_calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: 'tool_call' })) })
      : new AIMessage(step?.content || 'Done.')
    return { generations: [{ text: '', message }] }
  }
}

const traj = longTrajectory(repeat)
// The history's size in bytes after n messages (its OpenAI JSON).
const sizesB = [0]
{
  const msgs = [{ role: 'user', content: traj.task }]
  for (const a of traj.steps) {
    msgs.push(a)
    for (const c of a.tool_calls ?? []) if (traj.results.has(c.id)) msgs.push({ role: 'tool', tool_call_id: c.id, content: traj.results.get(c.id) })
  }
  for (const m of msgs) sizesB.push(sizesB.at(-1) + JSON.stringify(m).length)
}
console.log(`langchain ${require('langchain/package.json').version}, turnfit ${turnfit.version} (${process.env.NAPI_RS_NATIVE_LIBRARY_PATH ?? 'bindings/node/turnfit.*.node'}), Node ${process.versions.node}; ${traj.steps.length} model calls, final history ${(sizesB.at(-1) / 1e6).toFixed(2)} MB, budget ${budget}`)

async function run(session) {
  const shared = { traj, step: 0 }
  const times = []
  const sizes = []
  const mw = turnfitMiddleware({ model: 'gpt-4o', maxTokens: budget, session, summarizer: () => 'SUMMARY: astroid format() inference fix in progress.', onWarning: () => {} })
  const timed = createMiddleware({
    name: 'Timed',
    wrapModelCall: async (request, handler) => {
      let inner = 0
      const t0 = performance.now()
      const out = await mw.wrapModelCall(request, async (r) => {
        const t1 = performance.now()
        try {
          return await handler(r)
        } finally {
          inner += performance.now() - t1
        }
      })
      times.push(performance.now() - t0 - inner)
      sizes.push(request.messages.length)
      return out
    },
  })
  const agent = createAgent({
    model: new Replay(shared),
    tools: [tool(async (_i, config) => traj.results.get(config.toolCall.id) ?? 'none', { name: traj.tools[0].function.name, description: traj.tools[0].function.description, schema: traj.tools[0].function.parameters })],
    systemPrompt: traj.system,
    middleware: [timed],
  })
  const t0 = performance.now()
  await agent.invoke({ messages: [new HumanMessage(traj.task)] }, { recursionLimit: 100000 })
  const wall = performance.now() - t0
  const n = times.length
  const tenth = Math.max(1, Math.floor(n / 10))
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b)
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
  }
  console.log(`\n${session ? 'session' : 'stateless'}: ${n} calls, loop ${(wall / 1000).toFixed(1)} s, overhead total ${times.reduce((a, b) => a + b, 0).toFixed(0)} ms${session ? `, ${JSON.stringify(mw.sessionStats)}` : ''}`)
  console.log('| point | calls | history (messages, MB) | median ms/call | max ms/call |')
  console.log('|---|---|---:|---:|---:|')
  for (const [name, lo] of [['start', 0], ['middle', Math.floor(n / 2) - Math.floor(tenth / 2)], ['end', n - tenth]]) {
    const seg = times.slice(lo, lo + tenth)
    const at = sizes[lo + tenth - 1]
    console.log(`| ${name} | ${lo + 1}-${lo + tenth} | ${at}, ${(sizesB[Math.min(at, sizesB.length - 1)] / 1e6).toFixed(2)} | ${median(seg).toFixed(3)} | ${Math.max(...seg).toFixed(3)} |`)
  }
}

if (args.mode !== 'session') await run(false)
if (args.mode !== 'stateless') await run(true)

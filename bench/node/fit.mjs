// fit of a real agent loop vs LangChain.js trimMessages with js-tiktoken
// counting (tokenCounter), same budget. The trajectory is
// tests/fixtures/trajectories/mini-swe-agent-astroid-1866.openai.json (the
// whole 99-round mini-swe-agent run in OpenAI shape; PROVENANCE.md there).
// Reports the time per call (median) and what each result holds: tokens by
// turnfit's exact count, and whether any tool result lost its call.
// No startOn: with startOn: "human" an agent loop (one user task, then only
// assistant/tool messages) trims to nothing ([undefined] from @langchain/core
// 1.4.0) once the task and everything after it exceed the budget.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { trimMessages, SystemMessage, HumanMessage, AIMessage, ToolMessage } from '@langchain/core/messages'
import { Tiktoken } from 'js-tiktoken/lite'
import o200k from 'js-tiktoken/ranks/o200k_base'

const require = createRequire(import.meta.url)
const ck = require('../../bindings/node/index.js')
const path = new URL('../../tests/fixtures/trajectories/mini-swe-agent-astroid-1866.openai.json', import.meta.url)
const text = readFileSync(path, 'utf8')
const conv = JSON.parse(text)
const budget = Number(process.argv[2] || 16000)
const enc = new Tiktoken(o200k)

const content = (c) => (typeof c === 'string' ? c : c == null ? '' : JSON.stringify(c))
const toLc = (m) => {
  switch (m.role) {
    case 'system': return new SystemMessage(content(m.content))
    case 'user': return new HumanMessage(content(m.content))
    case 'tool': return new ToolMessage({ content: content(m.content), tool_call_id: m.tool_call_id })
    default: return new AIMessage({ content: content(m.content), tool_calls: (m.tool_calls || []).map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments || '{}') })) })
  }
}
const lcMessages = conv.messages.map(toLc)
// The counter LangChain users write with js-tiktoken: text of each message,
// plus the 3-token per-message overhead of OpenAI's recipe.
const tokenCounter = (msgs) => msgs.reduce((n, m) => n + 3 + enc.encode(content(m.content) + (m.tool_calls?.length ? JSON.stringify(m.tool_calls) : '')).length, 3)
const lc = () => trimMessages(lcMessages, { maxTokens: budget, strategy: 'last', includeSystem: true, tokenCounter })
const ours = () => ck.fitJson(text, { model: 'gpt-4o', max_tokens: budget, reserve_output: 0 })

// Median of 9 calls; a call over 2 s is timed once (marked n=1).
async function median(f, n = 9) {
  const t0 = performance.now()
  await f()
  const first = performance.now() - t0
  if (first > 2000) return Object.assign(new Number(first), { once: true })
  const xs = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await f()
    xs.push(performance.now() - t)
  }
  xs.sort((a, b) => a - b)
  return xs[n >> 1]
}

const fromLc = (m) => {
  const t = m.getType()
  if (t === 'system') return { role: 'system', content: content(m.content) }
  if (t === 'human') return { role: 'user', content: content(m.content) }
  if (t === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id, content: content(m.content) }
  const o = { role: 'assistant', content: content(m.content) || null }
  if (m.tool_calls?.length) o.tool_calls = m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }))
  return o
}
const orphans = (msgs) => {
  const calls = new Set(msgs.flatMap((m) => (m.tool_calls || []).map((c) => c.id)))
  return msgs.filter((m) => m.role === 'tool' && !calls.has(m.tool_call_id)).length
}
const before = ck.countConversation(conv, { model: 'gpt-4o' })
const lcRaw = await lc()
if (!Array.isArray(lcRaw) || lcRaw.some((m) => !m)) throw new Error(`trimMessages returned ${lcRaw.length} items, ${lcRaw.filter((m) => !m).length} empty`)
const lcOut = lcRaw.map(fromLc)
let ckOut = null
let ckError = null
try {
  ckOut = JSON.parse(ours().conversation)
} catch (e) {
  if (!(e instanceof ck.TurnfitError)) throw e
  ckError = e
}
const lcTokens = ck.countConversation({ messages: lcOut }, { model: 'gpt-4o' })
const ckTokens = ckOut && ck.countConversation(ckOut, { model: 'gpt-4o' })
const tLc = await median(lc)
const tCk = ckOut ? await median(async () => ours()) : NaN
console.log(`| conversation | budget | | time per call (median) | messages kept | exact tokens after | within budget | orphaned tool results |`)
console.log(`|---|---:|---|---:|---:|---:|---|---:|`)
const head = `| ${conv.messages.length} messages, ${before} tokens | ${budget} |`
if (ckOut) console.log(`${head} turnfit fitJson | ${tCk.toFixed(2)} ms | ${ckOut.messages.length} | ${ckTokens} | ${ckTokens <= budget} | ${orphans(ckOut.messages)} |`)
else console.log(`${head} turnfit fitJson | fails: ${ckError.code} | - | - | - | - |`)
console.log(`| | | LangChain trimMessages + js-tiktoken | ${tLc.toFixed(2)} ms${tLc.once ? ' n=1' : ''}${ckOut ? ` (${(tLc / tCk).toFixed(1)}×)` : ''} | ${lcOut.length} | ${lcTokens} | ${lcTokens <= budget} | ${orphans(lcOut)} |`)
if (ckError) console.error(`turnfit: ${ckError.message}`)

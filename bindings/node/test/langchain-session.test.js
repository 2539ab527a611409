'use strict'
// The LangChain.js middleware's fit session (issue 52): each model call
// converts and counts only the messages after the longest prefix unchanged by
// identity, and its result is the stateless path's on every step: the same
// messages (the caller's own objects where unchanged), the same report. Over
// a whole public trajectory (tests/fixtures/trajectories, PROVENANCE.md) at 3
// budgets, called directly and inside createAgent's own loop (also with
// writeBack, where the state is rewritten and the prefix breaks).
const test = require('node:test')
const assert = require('node:assert/strict')
const { fitModelRequest, ModelRequestSession, turnfitMiddleware, toChat } = require('../langchain.js')
const { createAgent } = require('langchain')
const { AIMessage, HumanMessage, SystemMessage, ToolMessage } = require('@langchain/core/messages')
const { BaseChatModel } = require('@langchain/core/language_models/chat_models')
const { tool } = require('@langchain/core/tools')
const { TRAJECTORIES, MODEL } = require('./replay-fixtures.js')

const traj = TRAJECTORIES.find((t) => t.name === 'mini-swe-agent-sqlfluff-2419')
const BUDGETS = [3, 2, 1.25].map((d) => Math.max(Math.floor(traj.size / d), 2 * traj.irreducible))

function lcMessages(t) {
  const out = [new HumanMessage(t.task)]
  for (const s of t.steps) {
    out.push(new AIMessage({ content: s.content ?? '', tool_calls: s.tool_calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: 'tool_call' })) }))
    for (const c of s.tool_calls) out.push(new ToolMessage({ content: t.results.get(c.id), tool_call_id: c.id }))
  }
  return out
}

// A report without its wall-clock figures (the summarizer's elapsed_ms).
function stable(report) {
  return JSON.parse(JSON.stringify(report, (k, v) => (k === 'elapsed_ms' ? undefined : v)))
}

const summarizer = (req) => `Summary of ${req.prompt.length} characters: the agent explored and edited the code.`

test('fitModelRequest with a session equals the stateless path on every step (3 budgets, digest and summarizer)', async () => {
  const all = lcMessages(traj)
  const systemMessage = new SystemMessage(traj.system)
  const tools = traj.tools.map((t) => ({ type: 'function', function: t.function }))
  let compacted = 0
  for (const maxTokens of BUDGETS) {
    for (const summ of [false, summarizer]) {
      const options = { model: MODEL, maxTokens, summarizer: summ, onWarning: () => {} }
      const session = new ModelRequestSession()
      const memoA = { carry: null }
      const memoB = { carry: null }
      for (let n = 1; n <= all.length; n++) {
        const request = { messages: all.slice(0, n), systemMessage, tools }
        const a = await fitModelRequest(request, options, undefined, memoA, null)
        const b = await fitModelRequest(request, options, undefined, memoB, session)
        const where = `${maxTokens} ${summ ? 'summarizer' : 'digest'} call ${n}`
        assert.deepEqual(stable(b.report), stable(a.report), `${where}: report`)
        assert.equal(b.request.messages.length, a.request.messages.length, `${where}: length`)
        a.request.messages.forEach((m, i) => {
          const o = b.request.messages[i]
          if (all.includes(m)) assert.equal(o, m, `${where}: message ${i} is the caller's object`)
          else assert.deepEqual(toChat(o).msg, toChat(m).msg, `${where}: message ${i}`)
        })
        assert.equal(b.request.systemMessage, a.request.systemMessage, `${where}: system`)
        if (a.report.changed) compacted++
      }
      assert.equal(session.loads, 1, 'one session for the whole run')
      assert.equal(session.steps, all.length - 1, 'every later call reused the last')
    }
  }
  assert.ok(compacted > 0, 'some calls compacted')
})

test('a session falls back to a fresh one: other tools, no common prefix, an edit', async () => {
  const all = lcMessages(traj).slice(0, 12)
  const options = { model: MODEL, maxTokens: 4000, summarizer: false, onWarning: () => {} }
  const s = new ModelRequestSession()
  const run = async (request) => {
    const a = await fitModelRequest(request, options, undefined, null, null)
    const b = await fitModelRequest(request, options, undefined, null, s)
    assert.deepEqual(stable(b.report), stable(a.report))
  }
  const toolsA = traj.tools.map((t) => ({ type: 'function', function: t.function }))
  await run({ messages: all.slice(0, 6), tools: toolsA })
  await run({ messages: all.slice(0, 8), tools: toolsA })
  assert.deepEqual([s.loads, s.steps], [1, 1])
  await run({ messages: all.slice(0, 9), tools: [...toolsA.map((t) => ({ ...t }))] })
  assert.deepEqual([s.loads, s.steps], [2, 1], 'other tool objects: a new session')
  const copies = all.slice(0, 10).map((m) => new HumanMessage(String(m.content).slice(0, 50)))
  await run({ messages: copies })
  assert.equal(s.loads, 3, 'no common prefix: a new session')
  await run({ messages: [...copies.slice(0, 4), new HumanMessage('edited'), ...copies.slice(5)] })
  assert.deepEqual([s.loads, s.steps], [3, 2], 'an edit keeps the prefix before it')
})

class Replay extends BaseChatModel {
  constructor(shared) {
    super({})
    this.shared = shared
  }

  _llmType() {
    return 'replay-52'
  }

  bindTools(tools) {
    const bound = new Replay(this.shared)
    bound.bound = tools
    return bound
  }

  async _generate(messages) {
    const s = this.shared
    if (!this.bound) {
      const text = `Summary ${++s.summaries}: the agent worked on the task.`
      return { generations: [{ text, message: new AIMessage(text) }] }
    }
    s.prompts.push(messages.map((m) => [m.getType(), toChat(m).msg]))
    const step = traj.steps[s.step++]
    const message = step
      ? new AIMessage({ content: step.content ?? '', tool_calls: step.tool_calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: 'tool_call' })) })
      : new AIMessage('Done.')
    return { generations: [{ text: '', message }] }
  }
}

async function agentRun(maxTokens, writeBack, session) {
  const shared = { step: 0, prompts: [], summaries: 0 }
  const reports = []
  const mw = turnfitMiddleware({ model: MODEL, maxTokens, writeBack, session, onReport: (r) => reports.push(r), onWarning: () => {} })
  const agent = createAgent({
    model: new Replay(shared),
    tools: traj.tools.map((t) => tool(async (_i, config) => traj.results.get(config.toolCall.id) ?? 'none', { name: t.function.name, description: t.function.description, schema: t.function.parameters })),
    systemPrompt: traj.system,
    middleware: [mw],
  })
  await agent.invoke({ messages: [new HumanMessage(traj.task)] }, { recursionLimit: 1000 })
  return { shared, reports, stats: mw.sessionStats }
}

test("inside createAgent's loop: the session's prompts and reports are the stateless ones (3 budgets, writeBack off and on)", async () => {
  for (const maxTokens of BUDGETS) {
    for (const writeBack of [false, true]) {
      const a = await agentRun(maxTokens, writeBack, false)
      const b = await agentRun(maxTokens, writeBack, true)
      const where = `${maxTokens} writeBack ${writeBack}`
      assert.equal(b.shared.prompts.length, traj.steps.length + 1, `${where}: reached the end`)
      assert.deepEqual(b.shared.prompts, a.shared.prompts, `${where}: prompts`)
      assert.deepEqual(b.reports.map(stable), a.reports.map(stable), `${where}: reports`)
      assert.equal(a.stats, null)
      assert.ok(b.stats.steps > 0, `${where}: calls reused the session`)
      if (!writeBack) assert.equal(b.stats.loads, 1, `${where}: one session`)
    }
  }
})

test('after an error (does_not_fit, a bad update) the next call on the session is the stateless one', async () => {
  const all = lcMessages(traj).slice(0, 20)
  const systemMessage = new SystemMessage(traj.system)
  const s = new ModelRequestSession()
  const ok = { model: MODEL, maxTokens: 8000, summarizer: false, onWarning: () => {} }
  await fitModelRequest({ messages: all.slice(0, 5), systemMessage }, ok, undefined, null, s)
  await assert.rejects(
    fitModelRequest({ messages: all.slice(0, 7), systemMessage }, { ...ok, maxTokens: 50 }, undefined, null, s),
    (e) => e.code === 'does_not_fit',
  )
  const request = { messages: all.slice(0, 9), systemMessage }
  const a = await fitModelRequest(request, ok, undefined, null, null)
  const b = await fitModelRequest(request, ok, undefined, null, s)
  assert.deepEqual(stable(b.report), stable(a.report))
  assert.deepEqual([s.loads, s.steps], [1, 2])
  // A native update that fails (over MAX_MESSAGES is too slow to build; a
  // session whose native side is gone stands in) resets to a fresh session.
  s.native.update = () => { throw new Error('update failed') }
  await assert.rejects(fitModelRequest({ messages: all.slice(0, 11), systemMessage }, ok, undefined, null, s), /update failed/)
  const c = await fitModelRequest({ messages: all.slice(0, 12), systemMessage }, ok, undefined, null, s)
  const d = await fitModelRequest({ messages: all.slice(0, 12), systemMessage }, ok, undefined, null, null)
  assert.deepEqual(stable(c.report), stable(d.report))
  assert.equal(s.loads, 2, 'a fresh session after the failed update')
})

test('overlapping calls of two runs on one session (a slow summarizer): each the stateless result', async () => {
  const all = lcMessages(traj)
  const other = all.map((m) => (m.getType() === 'human' ? new HumanMessage(`${m.content} (the other run)`) : m))
  const systemMessage = new SystemMessage(traj.system)
  const slow = async (req) => {
    await new Promise((r) => setTimeout(r, 2))
    return summarizer(req)
  }
  const options = { model: MODEL, maxTokens: BUDGETS[0], summarizer: slow, onWarning: () => {} }
  const s = new ModelRequestSession()
  for (let n = 10; n <= 40; n += 3) {
    const reqs = [{ messages: all.slice(0, n), systemMessage }, { messages: other.slice(0, n), systemMessage }]
    const viaSession = await Promise.all(reqs.map((r) => fitModelRequest(r, options, undefined, null, s)))
    const stateless = await Promise.all(reqs.map((r) => fitModelRequest(r, options, undefined, null, null)))
    viaSession.forEach((b, i) => assert.deepEqual(stable(b.report), stable(stateless[i].report), `n ${n} run ${i}`))
  }
})

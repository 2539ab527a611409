'use strict'
// The LangChain.js adapter with the real `langchain` (createAgent) and
// `@langchain/core` packages (pinned in devDependencies) and fake chat models:
// a committed real trajectory (mini-swe-agent, astroid-1866, 99 model calls)
// replayed as an agent loop, the budget a third of its final exact size.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const ck = require('..')
const { turnfitMiddleware, fitModelRequest } = require('../langchain.js')
const { checkVersions } = require('../adapter-common.js')
const { createAgent } = require('langchain')
const { AIMessage, HumanMessage, SystemMessage, ToolMessage, ChatMessage } = require('@langchain/core/messages')
const { BaseChatModel } = require('@langchain/core/language_models/chat_models')
const { FakeStreamingChatModel, FakeListChatModel } = require('@langchain/core/utils/testing')
const { tool } = require('@langchain/core/tools')
const { convertToOpenAITool } = require('@langchain/core/utils/function_calling')
const { z } = require('zod')

const ROOT = path.resolve(__dirname, '../../..')
const FIXTURE = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/trajectories/mini-swe-agent-astroid-1866.openai.json'), 'utf8'))
const MODEL = 'gpt-4o'
const SYSTEM = FIXTURE.messages[0].content
const TASK = FIXTURE.messages[1].content

// The trajectory as agent steps: each recorded assistant message (its tool
// calls re-emitted), the recorded result of each call; the last recorded
// call (unanswered in the file) becomes the final answer.
const STEPS = []
const RESULTS = new Map()
for (let i = 2; i < FIXTURE.messages.length; i++) {
  const m = FIXTURE.messages[i]
  if (m.role === 'assistant') STEPS.push(m)
  if (m.role === 'tool') RESULTS.set(m.tool_call_id, m.content)
}
const FINAL_SIZE = ck.countConversation({ messages: FIXTURE.messages.slice(0, -1), tools: FIXTURE.tools }, { model: MODEL })
const BUDGET = Math.floor(FINAL_SIZE / 3)
// No target (compact only what exceeds the budget), as these tests were written for;
// the shared defaults (target 0.5) are replayed by replay-*.test.js.
const FIT = { model: MODEL, max_tokens: BUDGET, reserve_output: 0, target_ratio: null, summarizer: { timeout_ms: 5000 } }

// Counted independently of the adapter: what ChatOpenAI sends, by its own
// converter (@langchain/openai, pinned in devDependencies): every message
// with its name (createAgent names each AI message), tool names on tool
// messages. The adapter's own conversion is not used.
const { convertMessagesToCompletionsMessageParams } = require('@langchain/openai')
function sent(messages) {
  return convertMessagesToCompletionsMessageParams({ messages, model: MODEL })
}

// The fake agent model: re-emits the trajectory's assistant messages; a call
// on the unbound instance with one human message is a summarizer request
// (the adapter calls the agent's model itself), answered by `summary`.
class ReplayModel extends BaseChatModel {
  constructor(shared) {
    super({})
    this.shared = shared
  }

  _llmType() {
    return 'replay'
  }

  bindTools(tools) {
    const bound = new ReplayModel(this.shared)
    bound.bound = tools
    return bound
  }

  async _generate(messages) {
    const s = this.shared
    if (!this.bound && messages.length === 1 && messages[0].getType() === 'human') {
      s.summaryPrompts.push(messages[0].content)
      const text = s.summary(messages[0].content)
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
      additional_kwargs: { step: k },
      response_metadata: { replay: true, step: k },
    })
    return { generations: [{ text: message.content, message }] }
  }
}

const bash = tool(async ({ command }, config) => {
  const id = config?.toolCall?.id
  assert.ok(RESULTS.has(id), `no recorded result for ${id} (${command})`)
  return RESULTS.get(id)
}, { name: 'bash', description: FIXTURE.tools[0].function.description, schema: z.object({ command: z.string() }) })

function checkPrompt({ messages, tools }, k) {
  assert.equal(messages[0].getType(), 'system', `prompt ${k}: system first`)
  assert.equal(messages[0].text, SYSTEM, `prompt ${k}: system kept`)
  assert.ok(messages.some((m) => m.getType() === 'human' && m.content === TASK), `prompt ${k}: task kept`)
  const toolDefs = (tools ?? []).map((t) => convertToOpenAITool(t))
  const tokens = ck.countConversation({ messages: sent(messages), tools: toolDefs }, { model: MODEL })
  assert.ok(tokens <= BUDGET, `prompt ${k}: ${tokens} tokens > budget ${BUDGET}`)
  // No orphan: every result follows its call, every call has its result.
  const open = new Set()
  for (const m of messages) {
    if (m.getType() === 'ai') for (const c of m.tool_calls ?? []) open.add(c.id)
    if (m.getType() === 'tool') {
      assert.ok(open.has(m.tool_call_id), `prompt ${k}: orphan result ${m.tool_call_id}`)
      open.delete(m.tool_call_id)
    }
  }
  assert.equal(open.size, 0, `prompt ${k}: calls without results ${[...open]}`)
  // Messages the turn did not change are the agent's own objects.
  for (const m of messages) {
    if (m.getType() === 'ai' && typeof m.id === 'string' && m.id.startsWith('ai-')) {
      const step = Number(m.id.slice(3))
      assert.deepEqual(m.response_metadata, { replay: true, step }, `prompt ${k}: response_metadata of ${m.id}`)
      assert.equal(m.additional_kwargs.step, step)
    }
  }
  return tokens
}

async function runLoop({ summary, summarizer, extra = {}, checkpointer }) {
  const shared = { step: 0, prompts: [], summaryPrompts: [], summary }
  const reports = []
  const agent = createAgent({
    model: new ReplayModel(shared),
    tools: [bash],
    systemPrompt: SYSTEM,
    middleware: [turnfitMiddleware({ fit: FIT, summarizer, onReport: (r) => reports.push(r), ...extra })],
    ...(checkpointer ? { checkpointer } : {}),
  })
  const config = { recursionLimit: 1000, ...(checkpointer ? { configurable: { thread_id: 'replay' } } : {}) }
  const result = await agent.invoke({ messages: [new HumanMessage(TASK)] }, config)
  return { shared, reports, result }
}

test(`replayed trajectory (${STEPS.length} model calls): every prompt fits ${BUDGET} tokens, no orphan, system + task kept; the agent's model summarizes`, async () => {
  assert.ok(STEPS.length >= 50)
  const { shared, reports, result } = await runLoop({ summary: (p) => `Summary: the agent explored astroid (${p.length} chars of transcript).` })
  assert.equal(shared.prompts.length, STEPS.length, 'the loop ran to the end')
  assert.equal(result.messages.at(-1).content, STEPS.at(-1).content ?? '')
  let maxTokens = 0
  shared.prompts.forEach((p, k) => { maxTokens = Math.max(maxTokens, checkPrompt(p, k)) })
  assert.ok(maxTokens > BUDGET * 0.8, `budget used: ${maxTokens}/${BUDGET}`)
  // The summarizer was called through the framework model, and its text is in the prompts.
  assert.ok(shared.summaryPrompts.length > 0, 'the agent model got summarizer requests')
  const fired = reports.filter((r) => r.summary)
  assert.ok(fired.length > 0)
  for (const r of fired) assert.equal(r.summary.source, 'host', JSON.stringify(r.summary.fallback))
  assert.ok(shared.prompts.at(-1).messages.some((m) => typeof m.content === 'string' && m.content.includes('Summary: the agent explored astroid')))
  // The agent's state keeps the whole history: only the model input is fitted.
  assert.equal(result.messages.length, FIXTURE.messages.length - 1)
})

test('writeBack: the fitted history replaces the state, the summary persists and is folded, far fewer summarizer calls', async (t) => {
  const fit = { ...FIT, trigger_ratio: 0.9, target_ratio: 0.6 }
  const base = await runLoop({ summary: () => 'Summary: request-only.', extra: { fit, reuseSummary: false } })
  const { shared, reports, result } = await runLoop({ summary: () => 'Summary: written back.', extra: { fit, writeBack: true } })
  assert.equal(shared.prompts.length, STEPS.length, 'the loop ran to the end')
  shared.prompts.forEach((p, k) => checkPrompt(p, k))
  const fired = reports.filter((r) => r.summary)
  assert.ok(fired.length >= 2, `compacted ${fired.length} times`)
  assert.ok(fired.slice(1).some((r) => r.summary.folded_previous), 'a later summary folds the previous one')
  // Request-only fits without reuse re-summarize at every call past the trigger.
  const baseFired = base.reports.filter((r) => r.summary).length
  t.diagnostic(`summarizer calls: ${shared.summaryPrompts.length} written back (${fired.length} compactions) vs ${base.shared.summaryPrompts.length} request-only (${baseFired} compactions); ${result.messages.length} messages in state`)
  assert.ok(shared.summaryPrompts.length * 3 < base.shared.summaryPrompts.length,
    `summarizer calls: ${shared.summaryPrompts.length} written back vs ${base.shared.summaryPrompts.length} request-only (${baseFired} turns)`)
  // The state now holds the compacted history (with the summary), not all 197 messages.
  assert.ok(result.messages.length < FIXTURE.messages.length - 1, `${result.messages.length} messages in state`)
  assert.ok(result.messages.some((m) => m.getType() === 'human' && String(m.content).includes('Summary: written back.')))
  assert.equal(result.messages[0].content, TASK)
  assert.equal(result.messages.at(-1).content, STEPS.at(-1).content ?? '')
  // The final exchange: state messages are the agent's own objects (ids kept).
  assert.ok(result.messages.filter((m) => m.getType() === 'ai').every((m) => /^ai-\d+$/.test(m.id)))
})

test('request-only with reuseSummary (the default): the state keeps every message, the model gets the remembered summary, few summarizer calls', async (t) => {
  const fit = { ...FIT, trigger_ratio: 0.9, target_ratio: 0.6 }
  const { shared, reports, result } = await runLoop({ summary: () => 'Summary #1: the same text every time.', extra: { fit } })
  assert.equal(shared.prompts.length, STEPS.length)
  shared.prompts.forEach((p, k) => checkPrompt(p, k))
  assert.equal(result.messages.length, FIXTURE.messages.length - 1, 'the state keeps the whole history')
  const fired = reports.filter((r) => r.summary)
  const reused = reports.filter((r) => r.adapter.reused_summary_for > 0)
  t.diagnostic(`${shared.summaryPrompts.length} summarizer calls, ${fired.length} compactions, ${reused.length} of ${reports.length} calls sent a remembered summary`)
  assert.ok(fired.length >= 2 && fired.length < 15, `${fired.length} compactions`)
  assert.ok(fired.slice(1).every((r) => r.summary.folded_previous), 'each later summary folds the previous one')
  assert.ok(reused.length > 40, `${reused.length} calls reused the summary`)
  // Between compactions the prompt carries the remembered summary (the same object).
  const last = shared.prompts.at(-1).messages.filter((m) => m.getType() === 'human' && String(m.content).includes('Summary #'))
  assert.equal(last.length, 1)
})

test('reuseSummary with a checkpointer (the state comes back as copies): found again by their JSON', async (t) => {
  const { MemorySaver } = require(require.resolve('@langchain/langgraph', { paths: [path.dirname(require.resolve('langchain'))] }))
  const fit = { ...FIT, trigger_ratio: 0.9, target_ratio: 0.6 }
  const { shared, reports } = await runLoop({ summary: () => 'Summary #1: the same text every time.', extra: { fit }, checkpointer: new MemorySaver() })
  assert.equal(shared.prompts.length, STEPS.length)
  shared.prompts.forEach((p, k) => checkPrompt(p, k))
  const reused = reports.filter((r) => r.adapter.reused_summary_for > 0).length
  t.diagnostic(`${shared.summaryPrompts.length} summarizer calls, ${reused} calls reused the summary`)
  assert.ok(reused > 40, `${reused} calls reused the summary`)
  assert.ok(shared.summaryPrompts.length < 20)
})

test('a human approval (humanInTheLoopMiddleware) interrupts past the trigger; after approving from the checkpoint, the call and its result reach the model, every prompt fits', async () => {
  const lg = require(require.resolve('@langchain/langgraph', { paths: [path.dirname(require.resolve('langchain'))] }))
  const { humanInTheLoopMiddleware } = require('langchain')
  const gated = STEPS[60].tool_calls[0].id
  const shared = { step: 0, prompts: [], summaryPrompts: [], summary: () => 'Summary #1: the same text every time.' }
  const reports = []
  const agent = createAgent({
    model: new ReplayModel(shared),
    tools: [bash],
    systemPrompt: SYSTEM,
    checkpointer: new lg.MemorySaver(),
    middleware: [
      turnfitMiddleware({ fit: { ...FIT, trigger_ratio: 0.9, target_ratio: 0.6 }, onReport: (r) => reports.push(r) }),
      humanInTheLoopMiddleware({ interruptOn: { bash: { allowedDecisions: ['approve', 'reject'], when: (req) => req.toolCall.id === gated } } }),
    ],
  })
  const config = { recursionLimit: 1000, configurable: { thread_id: 'approval' } }
  const first = await agent.invoke({ messages: [new HumanMessage(TASK)] }, config)
  assert.ok(first.__interrupt__?.length, 'the run waits for the approval')
  assert.equal(shared.prompts.length, 61)
  assert.ok(reports.some((r) => r.summary), 'compacted before the interruption')
  const second = await agent.invoke(new lg.Command({ resume: { decisions: [{ type: 'approve' }] } }), config)
  assert.equal(second.messages.at(-1).content, STEPS.at(-1).content ?? '')
  assert.equal(shared.prompts.length, STEPS.length)
  shared.prompts.forEach((p, k) => checkPrompt(p, k))
  const next = shared.prompts[61].messages
  assert.ok(next.some((m) => m.getType() === 'ai' && m.tool_calls?.some((c) => c.id === gated)), 'the approved call is in the next prompt')
  assert.ok(next.some((m) => m.getType() === 'tool' && m.tool_call_id === gated && m.content === RESULTS.get(gated)), 'with its real result')
  assert.ok(reports.slice(62).some((r) => r.adapter.reused_summary_for > 0), 'the summary is reused after the resume')
})

test("the summarizer's reply stays out of the agent's streamed messages (nostream, as LangChain's own middleware)", async () => {
  const shared = { step: 0, prompts: [], summaryPrompts: [], summary: () => 'SUMMARY-TEXT of the earlier steps.' }
  const agent = createAgent({
    model: new ReplayModel(shared),
    tools: [bash],
    systemPrompt: SYSTEM,
    middleware: [turnfitMiddleware({ fit: FIT })],
  })
  const streamed = []
  for await (const [chunk] of await agent.stream({ messages: [new HumanMessage(TASK)] }, { streamMode: 'messages', recursionLimit: 1000 })) {
    streamed.push(typeof chunk.content === 'string' ? chunk.content : JSON.stringify(chunk.content))
  }
  assert.ok(shared.summaryPrompts.length > 0, 'summaries were made')
  assert.ok(streamed.some((t) => t === STEPS[0].content), 'the agent messages are streamed')
  assert.ok(!streamed.some((t) => t.includes('SUMMARY-TEXT')), 'no summary in the stream')
})

test('a summarizer model that throws: the digest stands in, a warning says so, the run continues', async () => {
  const warnings = []
  const { shared, reports } = await runLoop({
    summary: () => 'unused',
    summarizer: new FakeStreamingChatModel({ thrownErrorString: 'rate limited' }),
    extra: { onWarning: (text) => warnings.push(text) },
  })
  assert.equal(shared.prompts.length, STEPS.length, 'the run continued to the end')
  assert.equal(shared.summaryPrompts.length, 0)
  shared.prompts.forEach((p, k) => checkPrompt(p, k))
  const fired = reports.filter((r) => r.summary)
  assert.ok(fired.length > 0)
  for (const r of fired) {
    assert.equal(r.summary.source, 'digest')
    assert.equal(r.summary.fallback.reason, 'error')
    assert.match(r.summary.fallback.detail, /rate limited/)
    assert.match(r.adapter.warning, /the summarizer failed \(error: .*rate limited\); the deterministic digest summarized instead/)
  }
  assert.equal(warnings.length, fired.length, 'one warning per fallback')
})

test('a given summarizer model (FakeListChatModel) is used instead of the agent model', async () => {
  const cheap = new FakeListChatModel({ responses: ['Cheap summary of the earlier steps.'] })
  const { shared, reports } = await runLoop({ summary: () => { throw new Error('the agent model must not summarize') }, summarizer: cheap })
  assert.equal(shared.summaryPrompts.length, 0)
  const fired = reports.filter((r) => r.summary)
  assert.ok(fired.length > 0)
  for (const r of fired) assert.equal(r.summary.source, 'host')
  assert.ok(shared.prompts.at(-1).messages.some((m) => typeof m.content === 'string' && m.content.includes('Cheap summary')))
})

// A history for direct calls of fitModelRequest: the trajectory's first 60 messages.
function history(n = 60) {
  const msgs = []
  for (const m of FIXTURE.messages.slice(1, n)) {
    if (m.role === 'user') msgs.push(new HumanMessage({ content: m.content, id: `h-${msgs.length}` }))
    if (m.role === 'assistant') {
      msgs.push(new AIMessage({
        content: m.content ?? '',
        id: `a-${msgs.length}`,
        tool_calls: m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: 'tool_call' })),
        additional_kwargs: { keep: msgs.length },
        response_metadata: { model_name: 'recorded' },
      }))
    }
    if (m.role === 'tool') msgs.push(new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id, id: `t-${msgs.length}`, name: 'bash' }))
  }
  return msgs
}

function request(messages) {
  return { model: null, messages, systemMessage: new SystemMessage(SYSTEM), tools: [bash] }
}

test('messages the turn did not change come back as the same objects; new ones are LangChain messages', async () => {
  const msgs = history()
  const size = ck.countConversation({ messages: sent([new SystemMessage(SYSTEM), ...msgs]) }, { model: MODEL })
  const { request: out, report } = await fitModelRequest(request(msgs), { fit: { ...FIT, max_tokens: Math.floor(size / 2) }, summarizer: false })
  assert.ok(report.changed)
  const originals = new Set(msgs)
  const kept = out.messages.filter((m) => originals.has(m))
  assert.equal(kept.length, report.adapter.unchanged - 1, 'system counted apart')
  assert.ok(kept.length > 5)
  assert.equal(out.messages[0], msgs[0], 'the task is the original object')
  assert.equal(out.messages.at(-1), msgs.at(-1), 'the newest message is the original object')
  const fresh = out.messages.filter((m) => !originals.has(m))
  assert.ok(fresh.length >= 1, 'the summary')
  for (const m of fresh) assert.ok(['human', 'ai', 'tool', 'system'].includes(m.getType()))
  // A call and its result stay together.
  const calls = new Set(out.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)))
  for (const m of out.messages) if (m.getType() === 'tool') assert.ok(calls.has(m.tool_call_id))
  // Nothing to do: everything comes back as given.
  const same = await fitModelRequest(request(msgs.slice(0, 5)), { fit: FIT, summarizer: false })
  assert.equal(same.report.changed, false)
  same.request.messages.forEach((m, i) => assert.equal(m, msgs[i]))
  assert.equal(same.request.systemMessage.content, SYSTEM)
})

test('reuseSummary across copies (a checkpoint loaded in a later invoke): found again by their JSON (the core carry)', async () => {
  const msgs = history()
  const size = ck.countConversation({ messages: sent([new SystemMessage(SYSTEM), ...msgs]) }, { model: MODEL })
  const opts = { fit: { ...FIT, max_tokens: Math.floor(size / 2) }, summarizer: async () => 'Remembered summary.' }
  const memo = { carry: null }
  const first = await fitModelRequest(request(msgs), opts, undefined, memo)
  assert.ok(first.report.summary)
  assert.ok(memo.carry && memo.carry.replaced.length > 0)
  // The same history as copies (what a checkpointer hands back), one message more.
  const copies = msgs.map((m) => new m.constructor({ ...m, content: m.content, id: m.id }))
  copies.push(new HumanMessage({ content: 'One more thing.', id: 'h-more' }))
  const n = memo.carry.replaced.length
  const second = await fitModelRequest(request(copies), opts, undefined, memo)
  assert.equal(second.report.adapter.reused_summary_for, n)
  assert.ok(second.request.messages.some((m) => m.content === first.request.messages.find((x) => String(x.content).includes('Remembered summary.')).content))
})

test('a pending call (an approval awaited) survives compaction and gets no synthetic result', async () => {
  const msgs = history()
  // The 3rd call awaits approval: its result is not in the history.
  const pendingAt = msgs.findIndex((m, i) => i > 4 && m.getType() === 'ai')
  const pendingId = msgs[pendingAt].tool_calls[0].id
  const withoutResult = msgs.filter((m) => !(m.getType() === 'tool' && m.tool_call_id === pendingId))
  const size = ck.countConversation({ messages: sent([new SystemMessage(SYSTEM), ...withoutResult]) }, { model: MODEL })
  const opts = { fit: { ...FIT, max_tokens: Math.floor(size / 3) }, summarizer: false }
  const { request: out, report } = await fitModelRequest(request(withoutResult), { ...opts, pendingCalls: [pendingId] })
  assert.ok(report.changed)
  assert.ok(out.messages.includes(msgs[pendingAt]), 'the pending call is kept as the original object')
  assert.ok(!out.messages.some((m) => m.getType() === 'tool' && m.tool_call_id === pendingId), 'no synthetic result')
  assert.ok(report.protected.some((p) => p.reason === 'pending_call'))
  // The same call not marked pending is summarized away (or answered).
  const plain = await fitModelRequest(request(withoutResult), opts)
  assert.ok(!plain.request.messages.includes(msgs[pendingAt]) ||
    plain.request.messages.some((m) => m.getType() === 'tool' && m.tool_call_id === pendingId))
})

test('an unknown message type passes through untouched, counted as text, never dropped', async () => {
  const msgs = history()
  const odd = new ChatMessage({ role: 'critic', content: 'Reviewer note: ' + 'check the format spec handling. '.repeat(20) })
  msgs.splice(6, 0, odd)
  // A later user message, so that the unknown one is not the latest (protected anyway).
  msgs.push(new HumanMessage('Please go on.'))
  const size = ck.countConversation({ messages: sent([new SystemMessage(SYSTEM), ...history()]) }, { model: MODEL })
  const { request: out, report } = await fitModelRequest(request(msgs), { fit: { ...FIT, max_tokens: Math.floor(size / 3) }, summarizer: false })
  assert.ok(report.changed)
  assert.ok(out.messages.includes(odd), 'the unknown message is kept as the same object')
  assert.deepEqual(report.adapter.unknown_types, [{ index: 7, type: 'generic' }])
  // Counted as text: the same history without it counts fewer tokens.
  const a = await fitModelRequest(request(msgs.slice(0, 8)), { fit: FIT, summarizer: false })
  const b = await fitModelRequest(request(msgs.slice(0, 6)), { fit: FIT, summarizer: false })
  assert.ok(a.report.tokens_after - b.report.tokens_after > 100, `${a.report.tokens_after} vs ${b.report.tokens_after}`)
})

test('a framework version outside the tested range says so (warning, or an error with strictVersion)', () => {
  const ranges = { langchain: { min: '1.5.0', below: '1.6.0' } }
  const problems = checkVersions(ranges, { versions: { langchain: '2.0.1' } })
  assert.match(problems[0], /langchain 2\.0\.1 is outside the range turnfit's adapter was tested with \(>= 1\.5\.0 < 1\.6\.0\)/)
  assert.throws(() => checkVersions(ranges, { strict: true, versions: { langchain: '1.4.9' } }), /langchain 1\.4\.9 is outside/)
  assert.deepEqual(checkVersions(ranges), [], 'the installed langchain is in range')
  assert.throws(() => checkVersions({ 'not-installed-pkg-xyz': { min: '1.0.0', below: '2.0.0' } }), /needs the package 'not-installed-pkg-xyz'/)
  // The middleware itself checks the installed packages.
  assert.doesNotThrow(() => turnfitMiddleware({ fit: FIT, strictVersion: true }))
})

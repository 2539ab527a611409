'use strict'
// The OpenAI Agents JS adapter with the real `@openai/agents-core` Runner
// (pinned in devDependencies) and a fake `Model` (getResponse, as the SDK's
// own tests fake one): a committed real trajectory (mini-swe-agent,
// astroid-1866, 99 model calls) replayed as an agent loop, the budget a third
// of its final exact size.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const ck = require('..')
const { turnfitInputFilter, fitModelInput } = require('../openai-agents.js')
const { Agent, Runner, Usage, tool } = require('@openai/agents-core')
const { z } = require('zod')

const ROOT = path.resolve(__dirname, '../../..')
const FIXTURE = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/trajectories/mini-swe-agent-astroid-1866.openai.json'), 'utf8'))
const MODEL = 'gpt-4o'
const SYSTEM = FIXTURE.messages[0].content
const TASK = FIXTURE.messages[1].content

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

// Responses input as the OpenAI provider sends it, counted independently of
// the adapter (function calls and outputs, text messages; nothing else here).
function wire(item) {
  if (item.type === 'function_call') return { type: 'function_call', call_id: item.callId, name: item.name, arguments: item.arguments }
  if (item.type === 'function_call_result') {
    return { type: 'function_call_output', call_id: item.callId, output: typeof item.output === 'string' ? item.output : item.output.text }
  }
  if (item.role) {
    const content = typeof item.content === 'string' ? item.content : item.content.map((p) => ({ type: p.type, text: p.text }))
    return { type: 'message', role: item.role, content }
  }
  throw new Error(`unexpected item ${item.type}`)
}

// The fake model: re-emits the trajectory's assistant messages and calls; a
// request without tools is a summarizer request, answered by `summary`.
class ReplayModel {
  constructor(summary) {
    this.summary = summary
    this.step = 0
    this.prompts = []
    this.summaryPrompts = []
  }

  async getResponse(request) {
    const usage = new Usage()
    if (request.tools.length === 0) {
      const prompt = request.input[0].content
      this.summaryPrompts.push(prompt)
      const text = this.summary(prompt)
      return { usage, output: [{ type: 'message', role: 'assistant', status: 'completed', id: `sum-${this.summaryPrompts.length}`, content: [{ type: 'output_text', text }] }] }
    }
    this.prompts.push(request)
    const k = this.step++
    const step = STEPS[k]
    const output = []
    if (step.content) output.push({ type: 'message', role: 'assistant', status: 'completed', id: `msg-${k}`, content: [{ type: 'output_text', text: step.content }], providerData: { step: k } })
    if (k < STEPS.length - 1) {
      for (const c of step.tool_calls) {
        output.push({ type: 'function_call', callId: c.id, name: c.function.name, arguments: c.function.arguments, status: 'completed', id: `fc-${k}` })
      }
    }
    return { usage, output, responseId: `resp-${k}` }
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error('not streamed in these tests')
  }
}

class ThrowingModel {
  async getResponse() {
    throw new Error('summarizer overloaded')
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error('not streamed')
  }
}

const bash = tool({
  name: 'bash',
  description: FIXTURE.tools[0].function.description,
  parameters: z.object({ command: z.string() }),
  execute: async ({ command }, _ctx, details) => {
    const id = details?.toolCall?.callId
    assert.ok(RESULTS.has(id), `no recorded result for ${id} (${command})`)
    return RESULTS.get(id)
  },
})

function checkPrompt(request, k) {
  assert.equal(request.systemInstructions, SYSTEM, `prompt ${k}: instructions kept`)
  const input = request.input
  assert.ok(input.some((it) => it.role === 'user' && (it.content === TASK || it.content?.[0]?.text === TASK)), `prompt ${k}: task kept`)
  const tools = request.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters }))
  const tokens = ck.countConversation({ instructions: SYSTEM, input: input.map(wire), tools }, { model: MODEL, format: 'responses' })
  assert.ok(tokens <= BUDGET, `prompt ${k}: ${tokens} tokens > budget ${BUDGET}`)
  const open = new Set()
  for (const it of input) {
    if (it.type === 'function_call') open.add(it.callId)
    if (it.type === 'function_call_result') {
      assert.ok(open.has(it.callId), `prompt ${k}: orphan output ${it.callId}`)
      open.delete(it.callId)
    }
  }
  assert.equal(open.size, 0, `prompt ${k}: calls without outputs ${[...open]}`)
  return tokens
}

async function runLoop({ summary = () => 'unused', summarizer, extra = {} } = {}) {
  const model = new ReplayModel(summary)
  const reports = []
  const agent = new Agent({ name: 'replay', instructions: SYSTEM, model, tools: [bash] })
  const runner = new Runner({
    tracingDisabled: true,
    callModelInputFilter: turnfitInputFilter({ fit: FIT, summarizer, onReport: (r) => reports.push(r), ...extra }),
  })
  const result = await runner.run(agent, TASK, { maxTurns: 1000 })
  return { model, reports, result }
}

test(`replayed trajectory (${STEPS.length} model calls): every input fits ${BUDGET} tokens, no orphan, instructions + task kept; the agent's Model summarizes`, async () => {
  assert.ok(STEPS.length >= 50)
  const { model, reports, result } = await runLoop({ summary: (p) => `Summary: the agent explored astroid (${p.length} chars).` })
  assert.equal(model.prompts.length, STEPS.length, 'the loop ran to the end')
  assert.equal(result.finalOutput, STEPS.at(-1).content)
  let maxTokens = 0
  model.prompts.forEach((p, k) => { maxTokens = Math.max(maxTokens, checkPrompt(p, k)) })
  assert.ok(maxTokens > BUDGET * 0.8, `budget used: ${maxTokens}/${BUDGET}`)
  assert.ok(model.summaryPrompts.length > 0, 'the agent Model got summarizer requests')
  const fired = reports.filter((r) => r.summary)
  assert.ok(fired.length > 0)
  for (const r of fired) assert.equal(r.summary.source, 'host', JSON.stringify(r.summary.fallback))
  assert.ok(model.prompts.at(-1).input.some((it) => JSON.stringify(it.content ?? '').includes('Summary: the agent explored astroid')))
  // Items the turn kept are the SDK's own (providerData and ids as emitted).
  const kept = model.prompts.at(-1).input.filter((it) => it.type === 'message' && it.role === 'assistant')
  assert.ok(kept.length > 0)
  for (const it of kept) assert.equal(it.providerData.step, Number(it.id.slice(4)))
})

test('reuseSummary (the default): the remembered summary stands for the items it replaced, few summarizer calls; false summarizes at every call', async (t) => {
  const fit = { ...FIT, trigger_ratio: 0.9, target_ratio: 0.6 }
  const on = await runLoop({ summary: () => 'Summary #1: the same text every time.', extra: { fit } })
  const off = await runLoop({ summary: () => 'Summary #1: the same text every time.', extra: { fit, reuseSummary: false } })
  for (const r of [on, off]) {
    assert.equal(r.model.prompts.length, STEPS.length)
    r.model.prompts.forEach((p, k) => checkPrompt(p, k))
  }
  const fired = on.reports.filter((r) => r.summary)
  t.diagnostic(`summarizer calls: ${on.model.summaryPrompts.length} reused (${fired.length} compactions) vs ${off.model.summaryPrompts.length} without`)
  assert.ok(fired.length >= 2 && fired.slice(1).every((r) => r.summary.folded_previous))
  assert.ok(on.model.summaryPrompts.length * 3 < off.model.summaryPrompts.length)
  assert.ok(on.reports.filter((r) => r.adapter.reused_summary_for > 0).length > 40)
})

test('a summarizer Model that throws: the digest stands in, a warning says so, the run continues', async () => {
  const warnings = []
  const { model, reports } = await runLoop({ summarizer: new ThrowingModel(), extra: { onWarning: (t) => warnings.push(t) } })
  assert.equal(model.prompts.length, STEPS.length, 'the run continued to the end')
  model.prompts.forEach((p, k) => checkPrompt(p, k))
  const fired = reports.filter((r) => r.summary)
  assert.ok(fired.length > 0)
  for (const r of fired) {
    assert.equal(r.summary.fallback?.reason, 'error')
    assert.match(r.summary.fallback.detail, /summarizer overloaded/)
  }
  assert.equal(warnings.length, fired.length)
  assert.match(warnings[0], /the summarizer failed \(error: .*summarizer overloaded\); the deterministic digest summarized instead/)
})

test('a plain async function summarizes too', async () => {
  const seen = []
  const { model, reports } = await runLoop({
    summary: () => { throw new Error('the agent Model must not summarize') },
    summarizer: async (req) => { seen.push(req); return 'Function summary of earlier steps.' },
  })
  assert.equal(model.summaryPrompts.length, 0)
  assert.ok(seen.length > 0)
  assert.ok(reports.filter((r) => r.summary).every((r) => r.summary.source === 'host'))
})

test('an approval (needsApproval) interrupts the run past the trigger; after approving, the call and its output reach the model, every prompt fits', async () => {
  const model = new ReplayModel(() => 'Summary #1: the same text every time.')
  const reports = []
  const gated = STEPS[60].tool_calls[0].id
  const approvalBash = tool({
    name: 'bash',
    description: FIXTURE.tools[0].function.description,
    parameters: z.object({ command: z.string() }),
    needsApproval: async (_ctx, _input, callId) => callId === gated,
    execute: async (_input, _ctx, details) => RESULTS.get(details.toolCall.callId),
  })
  const agent = new Agent({ name: 'replay', instructions: SYSTEM, model, tools: [approvalBash] })
  const runner = new Runner({
    tracingDisabled: true,
    callModelInputFilter: turnfitInputFilter({ fit: { ...FIT, trigger_ratio: 0.9, target_ratio: 0.6 }, onReport: (r) => reports.push(r) }),
  })
  const first = await runner.run(agent, TASK, { maxTurns: 1000 })
  assert.equal(first.interruptions.length, 1, 'the run waits for the approval')
  assert.equal(first.interruptions[0].rawItem.callId, gated)
  assert.equal(model.prompts.length, 61)
  assert.ok(reports.some((r) => r.summary), 'compacted before the interruption')
  // Approve from a serialized state, as an app that waits for a human would.
  const { RunState } = require('@openai/agents-core')
  const state = await RunState.fromString(agent, first.state.toString())
  state.approve(state.getInterruptions()[0])
  const second = await runner.run(agent, state, { maxTurns: 1000 })
  assert.equal(second.finalOutput, STEPS.at(-1).content)
  assert.equal(model.prompts.length, STEPS.length)
  model.prompts.forEach((p, k) => checkPrompt(p, k))
  const next = model.prompts[61].input
  assert.ok(next.some((it) => it.type === 'function_call' && it.callId === gated), 'the approved call is in the next prompt')
  assert.ok(next.some((it) => it.type === 'function_call_result' && it.callId === gated && (it.output.text ?? it.output) === RESULTS.get(gated)), 'with its real output')
})

// Items as the SDK holds them, for direct calls of fitModelInput.
function items(n = 60) {
  const out = [{ type: 'message', role: 'user', content: TASK }]
  for (const m of FIXTURE.messages.slice(2, n)) {
    if (m.role === 'assistant') {
      if (m.content) out.push({ type: 'message', role: 'assistant', status: 'completed', id: `msg-${out.length}`, content: [{ type: 'output_text', text: m.content }], providerData: { keep: out.length } })
      for (const c of m.tool_calls) out.push({ type: 'function_call', callId: c.id, name: c.function.name, arguments: c.function.arguments, status: 'completed', id: `fc-${out.length}` })
    }
    if (m.role === 'tool') out.push({ type: 'function_call_result', callId: m.tool_call_id, name: 'bash', status: 'completed', output: { type: 'text', text: m.content } })
  }
  return out
}

const AGENT = { model: MODEL, tools: [] }
function size(list) {
  return ck.countConversation({ instructions: SYSTEM, input: list.map(wire) }, { model: MODEL, format: 'responses' })
}

test('items the turn did not change come back as the same objects', async () => {
  const list = items()
  const { modelData, report } = await fitModelInput({ input: list, instructions: SYSTEM }, AGENT, { fit: { ...FIT, max_tokens: Math.floor(size(list) / 2) }, summarizer: false })
  assert.ok(report.changed)
  assert.equal(modelData.instructions, SYSTEM)
  const originals = new Set(list)
  const kept = modelData.input.filter((it) => originals.has(it))
  assert.equal(kept.length, report.adapter.unchanged)
  assert.ok(kept.length > 5)
  assert.equal(modelData.input[0], list[0], 'the task')
  assert.equal(modelData.input.at(-1), list.at(-1), 'the newest item')
  const fresh = modelData.input.filter((it) => !originals.has(it))
  assert.ok(fresh.some((it) => it.type === 'message' && it.role === 'user'), 'the summary is a user message item')
  const same = await fitModelInput({ input: list.slice(0, 4), instructions: SYSTEM }, AGENT, { fit: FIT, summarizer: false })
  assert.equal(same.report.changed, false)
  same.modelData.input.forEach((it, i) => assert.equal(it, list[i]))
})

test('a pending call (an approval awaited) survives compaction and gets no synthetic output', async () => {
  const list = items()
  const pending = list.find((it, i) => i > 6 && it.type === 'function_call')
  const withoutOutput = list.filter((it) => !(it.type === 'function_call_result' && it.callId === pending.callId))
  const opts = { fit: { ...FIT, max_tokens: Math.floor(size(withoutOutput) / 3) }, summarizer: false }
  const { modelData, report } = await fitModelInput({ input: withoutOutput, instructions: SYSTEM }, AGENT, { ...opts, pendingCalls: [pending.callId] })
  assert.ok(report.changed)
  assert.ok(modelData.input.includes(pending), 'the pending call is kept as the same object')
  assert.ok(!modelData.input.some((it) => it.type === 'function_call_result' && it.callId === pending.callId), 'no synthetic output')
  assert.ok(report.protected.some((p) => p.reason === 'pending_call'))
  const plain = await fitModelInput({ input: withoutOutput, instructions: SYSTEM }, AGENT, opts)
  assert.ok(!plain.modelData.input.includes(pending) ||
    plain.modelData.input.some((it) => it.type === 'function_call_result' && it.callId === pending.callId))
})

test('an unknown item type passes through untouched, counted as text, never dropped', async () => {
  const list = items()
  const odd = { type: 'unknown', id: 'x-1', providerData: { type: 'vendor_note', note: 'Vendor annotation: '.repeat(40) } }
  list.splice(5, 0, odd)
  const { modelData, report } = await fitModelInput({ input: list, instructions: SYSTEM }, AGENT, { fit: { ...FIT, max_tokens: Math.floor(size(items()) / 3) }, summarizer: false })
  assert.ok(report.changed)
  assert.ok(modelData.input.includes(odd), 'kept, as the same object')
  assert.deepEqual(report.adapter.unknown_types, [{ index: 5, type: 'unknown' }])
  const a = await fitModelInput({ input: list.slice(0, 6), instructions: SYSTEM }, AGENT, { fit: FIT, summarizer: false })
  const b = await fitModelInput({ input: list.slice(0, 5), instructions: SYSTEM }, AGENT, { fit: FIT, summarizer: false })
  assert.ok(a.report.tokens_after - b.report.tokens_after > 100, `${a.report.tokens_after} vs ${b.report.tokens_after}`)
})

test('the installed @openai/agents-core is in the tested range; strictVersion accepts it', () => {
  assert.doesNotThrow(() => turnfitInputFilter({ fit: FIT, strictVersion: true }))
  assert.equal(turnfitInputFilter({ fit: FIT }).preserveInputIdentity, true)
})

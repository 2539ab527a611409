'use strict'
// Issue 47's replay, OpenAI Agents JS: each public trajectory of
// replay-fixtures.js replayed through the SDK's Runner with a fake Model, the
// turnfit callModelInputFilter fitting every call, in digest, summarizer and
// throwing-summarizer modes, with the defaults and with the README's recipe
// (the defaults: turnfitInputFilter({ maxTokens, summarizer })). Every run
// reaches its last call; every request (instructions, input items, tools) is
// within the budget by an independent count; no orphan; instructions and task kept.
const test = require('node:test')
const assert = require('node:assert/strict')
const ck = require('..')
const { turnfitInputFilter } = require('../openai-agents.js')
const { Agent, Runner, Usage, tool } = require('@openai/agents-core')
const { TRAJECTORIES, MODEL, budgets } = require('./replay-fixtures.js')

// Responses input as the OpenAI provider sends the SDK's items.
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

class Replay {
  constructor(traj, mode) {
    this.traj = traj
    this.mode = mode
    this.step = 0
    this.prompts = []
  }

  async getResponse(request) {
    const usage = new Usage()
    if (request.tools.length === 0) { // the summarizer's request
      if (this.mode === 'throwing') throw new Error('summarizer overloaded')
      return { usage, output: [{ type: 'message', role: 'assistant', status: 'completed', id: 'sum', content: [{ type: 'output_text', text: 'Summary: the agent worked on the task.' }] }] }
    }
    this.prompts.push(request)
    const k = this.step++
    const s = this.traj.steps[k]
    const output = []
    if (!s) {
      output.push({ type: 'message', role: 'assistant', status: 'completed', id: `done-${k}`, content: [{ type: 'output_text', text: 'Done.' }] })
    } else {
      if (s.content) output.push({ type: 'message', role: 'assistant', status: 'completed', id: `msg-${k}`, content: [{ type: 'output_text', text: s.content }] })
      for (const c of s.tool_calls) output.push({ type: 'function_call', callId: c.id, name: c.function.name, arguments: c.function.arguments, status: 'completed', id: `fc-${c.id}` })
    }
    return { usage, output, responseId: `resp-${k}` }
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error('not streamed')
  }
}

function tools(traj) {
  return traj.tools.map((t) => tool({
    name: t.function.name,
    description: t.function.description,
    parameters: { ...t.function.parameters, additionalProperties: true },
    strict: false,
    execute: async (_input, _ctx, details) => traj.results.get(details?.toolCall?.callId) ?? 'no result recorded',
  }))
}

function check(traj, request, k, limit, where) {
  const label = `${where} call ${k}`
  assert.equal(request.systemInstructions, traj.system, `${label}: instructions kept`)
  const input = request.input
  assert.ok(input.some((it) => it.role === 'user' && (it.content === traj.task || it.content?.[0]?.text === traj.task)), `${label}: task kept`)
  const defs = request.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters }))
  const tokens = ck.countConversation({ instructions: request.systemInstructions, input: input.map(wire), tools: defs }, { model: MODEL, format: 'responses' })
  assert.ok(tokens <= limit, `${label}: ${tokens} tokens sent > ${limit}`)
  const open = new Set()
  for (const it of input) {
    if (it.type === 'function_call') open.add(it.callId)
    if (it.type === 'function_call_result') {
      assert.ok(open.has(it.callId), `${label}: orphan output ${it.callId}`)
      open.delete(it.callId)
    }
  }
  assert.equal(open.size, 0, `${label}: calls without output`)
}

const CONFIGS = {
  'defaults (README recipe)': (maxTokens) => ({ maxTokens }),
  'trigger 0.9, target 0.6': (maxTokens) => ({ maxTokens, triggerRatio: 0.9, targetRatio: 0.6 }),
}

for (const traj of TRAJECTORIES) {
  for (const maxTokens of budgets(traj)) {
    test(`replay ${traj.name} (${traj.steps.length} calls, ${traj.size} tokens) through the Runner at ${maxTokens} tokens: every mode and config reaches the end, within budget`, async () => {
      for (const [config, make] of Object.entries(CONFIGS)) {
        for (const mode of ['digest', 'summarizer', 'throwing']) {
          const model = new Replay(traj, mode)
          const reports = []
          const agent = new Agent({ name: 'swe', instructions: traj.system, tools: tools(traj), model })
          const filter = turnfitInputFilter({
            ...make(maxTokens),
            model: MODEL,
            ...(mode === 'digest' ? { summarizer: false } : { summarizer: model }),
            onReport: (r) => reports.push(r),
            onWarning: () => {},
          })
          const where = `${traj.name} at ${maxTokens} ${config} ${mode}`
          const runner = new Runner({ callModelInputFilter: filter, tracingDisabled: true })
          try {
            await runner.run(agent, traj.task, { maxTurns: traj.steps.length + 5 })
          } catch (e) {
            assert.fail(`${where}: stopped at call ${model.step + 1} of ${traj.steps.length + 1}: ${e.code ?? ''} ${e.message}`)
          }
          assert.equal(model.prompts.length, traj.steps.length + 1, `${where}: reached the last call`)
          model.prompts.forEach((p, k) => check(traj, p, k, maxTokens - reports[k].reserved_output, where))
        }
      }
    })
  }
}

'use strict'
// Issue 47's replay, LangChain.js: each public trajectory of
// replay-fixtures.js replayed through createAgent with a fake chat model, the
// turnfit middleware fitting every call, in digest, summarizer and
// throwing-summarizer modes, with the adapter's defaults and with the
// README's recipe, at a third and a half of the trajectory's size. Every run
// reaches its last call; every request is within the budget by ChatOpenAI's
// own converter (@langchain/openai) counted with the tools; no call without
// its result or the reverse; the system prompt and the task are kept.
const test = require('node:test')
const assert = require('node:assert/strict')
const ck = require('..')
const { turnfitMiddleware, turnfitError } = require('../langchain.js')
const { createAgent } = require('langchain')
const { AIMessage, HumanMessage } = require('@langchain/core/messages')
const { BaseChatModel } = require('@langchain/core/language_models/chat_models')
const { tool } = require('@langchain/core/tools')
const { convertToOpenAITool } = require('@langchain/core/utils/function_calling')
const { convertMessagesToCompletionsMessageParams } = require('@langchain/openai')
const { TRAJECTORIES, MODEL, budgets } = require('./replay-fixtures.js')

class Replay extends BaseChatModel {
  constructor(shared) {
    super({})
    this.shared = shared
  }

  _llmType() {
    return 'replay-47'
  }

  bindTools(tools) {
    const bound = new Replay(this.shared)
    bound.bound = tools
    return bound
  }

  async _generate(messages) {
    const s = this.shared
    if (!this.bound) { // the summarizer's call (the adapter calls the agent's model)
      s.summaries++
      if (s.mode === 'throwing') throw new Error('summarizer overloaded')
      const text = `Summary ${s.summaries}: the agent worked on the task.`
      return { generations: [{ text, message: new AIMessage(text) }] }
    }
    s.prompts.push({ messages, tools: this.bound })
    const k = s.step++
    const step = s.traj.steps[k]
    const message = step
      ? new AIMessage({ content: step.content ?? '', tool_calls: step.tool_calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: 'tool_call' })) })
      : new AIMessage('Done.')
    return { generations: [{ text: '', message }] }
  }
}

function tools(traj) {
  return traj.tools.map((t) => tool(async (_input, config) => traj.results.get(config.toolCall.id) ?? 'no result recorded', {
    name: t.function.name,
    description: t.function.description,
    schema: t.function.parameters,
  }))
}

function check(traj, prompt, k, limit) {
  const { messages } = prompt
  const label = `${traj.name} prompt ${k}`
  assert.equal(messages[0].getType(), 'system', `${label}: system first`)
  assert.equal(messages[0].text, traj.system, `${label}: system kept`)
  assert.ok(messages.some((m) => m.getType() === 'human' && m.content === traj.task), `${label}: task kept`)
  const sent = convertMessagesToCompletionsMessageParams({ messages, model: MODEL })
  const toolDefs = (prompt.tools ?? []).map((t) => convertToOpenAITool(t))
  const tokens = ck.countConversation({ messages: sent, tools: toolDefs }, { model: MODEL })
  assert.ok(tokens <= limit, `${label}: ${tokens} tokens sent > ${limit}`)
  const open = new Set()
  for (const m of messages) {
    if (m.getType() === 'ai') for (const c of m.tool_calls ?? []) open.add(c.id)
    if (m.getType() === 'tool') {
      assert.ok(open.has(m.tool_call_id), `${label}: orphan result ${m.tool_call_id}`)
      open.delete(m.tool_call_id)
    }
  }
  assert.equal(open.size, 0, `${label}: calls without results`)
}

const CONFIGS = {
  defaults: (maxTokens) => ({ maxTokens }),
  recipe: (maxTokens) => ({ maxTokens, triggerRatio: 0.9, targetRatio: 0.6 }),
}
const MODES = ['digest', 'summarizer', 'throwing']

for (const traj of TRAJECTORIES) {
  for (const maxTokens of budgets(traj)) {
    const div = (traj.size / maxTokens).toFixed(1)
    test(`replay ${traj.name} (${traj.steps.length} calls, ${traj.size} tokens) at ${maxTokens} tokens: every mode and config reaches the end, within budget`, async () => {
      for (const [config, make] of Object.entries(CONFIGS)) {
        for (const mode of MODES) {
          const shared = { traj, step: 0, prompts: [], summaries: 0, mode }
          const reports = []
          const agent = createAgent({
            model: new Replay(shared),
            tools: tools(traj),
            systemPrompt: traj.system,
            middleware: [turnfitMiddleware({
              ...make(maxTokens),
              model: MODEL,
              ...(mode === 'digest' ? { summarizer: false } : {}),
              onReport: (r) => reports.push(r),
              onWarning: () => {},
            })],
          })
          const where = `${traj.name} at ${maxTokens} (1/${div}) ${config} ${mode}`
          try {
            await agent.invoke({ messages: [new HumanMessage(traj.task)] }, { recursionLimit: 1000 })
          } catch (e) {
            const te = turnfitError(e)
            assert.fail(`${where}: stopped at call ${shared.step + 1} of ${traj.steps.length + 1}: ${te ? `${te.code}: ${te.message}` : e}`)
          }
          assert.equal(shared.prompts.length, traj.steps.length + 1, `${where}: reached the last call`)
          shared.prompts.forEach((p, k) => check(traj, p, k, maxTokens - reports[k].reserved_output))
          if (mode === 'summarizer') assert.ok(reports.every((r) => !r.summary || r.summary.source === 'host'), `${where}: the model summarized`)
          if (mode === 'throwing') assert.ok(reports.every((r) => !r.summary || r.summary.fallback?.reason === 'error'), `${where}: the digest stood in`)
        }
      }
    })
  }
}

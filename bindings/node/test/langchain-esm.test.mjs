// An ESM application: createAgent and the messages come from langchain's ESM
// build while turnfit/langchain (CommonJS) loads the CJS build. The middleware,
// the messages it creates (the summary) and the summarizer call must work
// across the two (LangChain recognizes both by brand, not by class identity).
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createAgent } from 'langchain'
import { AIMessage, HumanMessage } from '@langchain/core/messages'
import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { FakeListChatModel } from '@langchain/core/utils/testing'
import { tool } from '@langchain/core/tools'
import { z } from 'zod'
import { turnfitMiddleware } from 'turnfit/langchain'

const require = createRequire(import.meta.url)
const ck = require('turnfit')
const FIXTURE = JSON.parse(readFileSync(new URL('../../../tests/fixtures/trajectories/mini-swe-agent-astroid-1866.openai.json', import.meta.url), 'utf8'))
const N = 30
const STEPS = FIXTURE.messages.filter((m, i) => i >= 2 && m.role === 'assistant').slice(0, N)
const RESULTS = new Map(FIXTURE.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]))
const SIZE = ck.countConversation({ messages: FIXTURE.messages.slice(0, 2 + 2 * (N - 1)), tools: FIXTURE.tools }, { model: 'gpt-4o' })

class Replay extends BaseChatModel {
  constructor(shared) { super({}); this.shared = shared }
  _llmType() { return 'replay-esm' }
  bindTools() { return this }
  async _generate(messages) {
    this.shared.prompts.push(messages)
    const k = this.shared.step++
    const last = k === STEPS.length - 1
    const s = STEPS[k]
    const message = new AIMessage({ id: `esm-${k}`, content: s.content ?? '', tool_calls: last ? [] : s.tool_calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: 'tool_call' })) })
    return { generations: [{ text: '', message }] }
  }
}

test('ESM app, CJS adapter: the loop runs, the summary and the kept messages reach the model', async () => {
  const shared = { step: 0, prompts: [] }
  const reports = []
  const bash = tool(async (_i, config) => RESULTS.get(config.toolCall.id), { name: 'bash', description: 'Execute a bash command.', schema: z.object({ command: z.string() }) })
  const agent = createAgent({
    model: new Replay(shared),
    tools: [bash],
    systemPrompt: FIXTURE.messages[0].content,
    middleware: [turnfitMiddleware({
      fit: { model: 'gpt-4o', max_tokens: Math.floor(SIZE / 2), reserve_output: 0 },
      summarizer: new FakeListChatModel({ responses: ['ESM summary of earlier steps.'] }),
      onReport: (r) => reports.push(r),
    })],
  })
  const result = await agent.invoke({ messages: [new HumanMessage(FIXTURE.messages[1].content)] }, { recursionLimit: 200 })
  assert.equal(shared.prompts.length, N)
  assert.ok(reports.some((r) => r.summary?.source === 'host'))
  const last = shared.prompts.at(-1)
  assert.ok(last.some((m) => m.getType() === 'human' && String(m.content).includes('ESM summary')))
  assert.ok(last.some((m) => m.id === `esm-${N - 2}`))
  assert.equal(result.messages.length, 2 + 2 * (N - 1))
})

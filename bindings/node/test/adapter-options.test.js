'use strict'
// The adapters' shared vocabulary and defaults (issue 47, items 2 and 3):
// maxTokens / reserveOutput / triggerRatio / targetRatio in all three, the
// same DEFAULTS, 'auto' pending calls, what ChatOpenAI sends counted (names
// on AI and tool messages), and the TurnfitError inside LangChain's
// MiddlewareError.
const test = require('node:test')
const assert = require('node:assert/strict')
const ck = require('..')
const common = require('../adapter-common.js')
const lc = require('../langchain.js')
const oa = require('../openai-agents.js')
const ai = require('../ai-sdk.js')
const { createAgent } = require('langchain')
const { AIMessage, HumanMessage, SystemMessage, ToolMessage } = require('@langchain/core/messages')
const { FakeListChatModel } = require('@langchain/core/utils/testing')
const { convertMessagesToCompletionsMessageParams } = require('@langchain/openai')

test('one DEFAULTS object, exported by every adapter', () => {
  assert.equal(lc.DEFAULTS, common.DEFAULTS)
  assert.equal(oa.DEFAULTS, common.DEFAULTS)
  assert.equal(ai.DEFAULTS, common.DEFAULTS)
  assert.deepEqual({ ...common.DEFAULTS }, { strategy: 'summarize', triggerRatio: 0.8, targetRatio: 0.5, pendingCalls: 'auto', writeBack: false })
})

test('the budget names map to the core options; unset: the defaults; targetRatio null: no target', () => {
  const f = common.fitOptionsOf({ model: 'gpt-4o', maxTokens: 8000, reserveOutput: 500 }, 't')
  assert.deepEqual(f, { model: 'gpt-4o', max_tokens: 8000, reserve_output: 500, trigger_ratio: 0.8, target_ratio: 0.5, policy: { strategy: 'summarize' } })
  const none = common.fitOptionsOf({ maxTokens: 8000, targetRatio: null }, 't')
  assert.equal('target_ratio' in none, false, 'null is no target, not 0.5')
  const viaFit = common.fitOptionsOf({ fit: { max_tokens: 8000, target_ratio: 0.7 }, policy: { strategy: 'recency' } }, 't')
  assert.equal(viaFit.max_tokens, 8000)
  assert.equal(viaFit.target_ratio, 0.7)
  assert.equal(viaFit.policy.strategy, 'recency')
  assert.throws(() => common.fitOptionsOf({ maxTokens: 8000, fit: { max_tokens: 9000 } }, 't'), /maxTokens \(8000\) and fit.max_tokens \(9000\) disagree/)
  assert.throws(() => common.fitOptionsOf({ maxTokens: -1 }, 't'), /maxTokens must be a positive integer/)
  assert.throws(() => common.fitOptionsOf({ reserveOutput: 1.5 }, 't'), /reserveOutput must be a non-negative integer/)
  // Bad options fail when the adapter is made, not at the first model call.
  assert.throws(() => lc.turnfitMiddleware({ maxTokens: 'big' }), TypeError)
  assert.throws(() => oa.turnfitInputFilter({ maxTokens: 0 }), TypeError)
  assert.throws(() => ai.prepareStep({ maxTokens: 1.5 }), TypeError)
})

test("pendingCalls 'auto': the newest reply's unanswered calls; an older reply's are repaired", () => {
  const calls = (m) => m.calls ?? null
  const answer = (m) => m.answers ?? null
  const h = [{ calls: ['a'] }, { answers: 'a' }, { calls: ['b', 'c'] }, { answers: 'b' }]
  assert.deepEqual(common.newestUnanswered(h, calls, answer), ['c'])
  // A user message after it (a question before approving): still pending.
  assert.deepEqual(common.newestUnanswered([...h, { text: 'user again' }], calls, answer), ['c'])
  // An older reply's unanswered call is not pending (the core repairs it).
  assert.deepEqual(common.newestUnanswered([{ calls: ['old'] }, { text: 'user' }, { calls: ['new'] }, { answers: 'new' }], calls, answer), [])
  // Responses: one item per call, the run of them is one reply.
  assert.deepEqual(common.newestUnanswered([{ calls: ['x'] }, { calls: ['y'] }], calls, answer, { spans: true }), ['x', 'y'])
  // Chat messages: the assistant message before is another reply (the core repairs it).
  assert.deepEqual(common.newestUnanswered([{ calls: ['x'] }, { calls: ['y'] }], calls, answer), ['y'])
  assert.deepEqual(common.pendingIdsOf(undefined, h, () => ['auto']), ['auto'])
  assert.deepEqual(common.pendingIdsOf(false, h, () => ['auto']), [])
  assert.deepEqual(common.pendingIdsOf(['z'], h, () => ['auto']), ['z'])
})

// What ChatOpenAI sends for a request: its own converter, and the tools.
function sentTokens(request) {
  const messages = [...(request.systemMessage ? [request.systemMessage] : []), ...request.messages]
  return ck.countConversation({ messages: convertMessagesToCompletionsMessageParams({ messages, model: 'gpt-4o' }) }, { model: 'gpt-4o' })
}

test('LangChain.js: names on AI messages and tool names on tool messages are counted as ChatOpenAI sends them', async () => {
  const messages = [new HumanMessage('Fix the parser.')]
  for (let k = 0; k < 6; k++) {
    messages.push(new AIMessage({ name: 'coding_agent_with_a_long_name', content: '', tool_calls: [{ id: `c${k}`, name: 'bash', args: { command: `cat f${k}.py` }, type: 'tool_call' }] }))
    messages.push(new ToolMessage({ name: 'bash', tool_call_id: `c${k}`, content: `line ${k}\n`.repeat(20) }))
  }
  const request = { messages, systemMessage: new SystemMessage('You are a coding agent.'), tools: [] }
  const { report } = await lc.fitModelRequest(request, { model: 'gpt-4o', maxTokens: 100000, reserveOutput: 0, summarizer: false })
  // Nothing to compact: what the adapter counted is what ChatOpenAI would send.
  assert.equal(report.tokens_before, sentTokens(request))
  // And the names are what makes the difference (the check can fail).
  const unnamed = { ...request, messages: messages.map((m) => (m.name ? (AIMessage.isInstance(m) ? new AIMessage({ content: m.content, tool_calls: m.tool_calls }) : new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id })) : m)) }
  assert.ok(sentTokens(request) > sentTokens(unnamed), 'names are sent')
})

test('LangChain.js: a budget the system prompt alone exceeds: MiddlewareError wraps it, turnfitError gives the TurnfitError and its code', async () => {
  const agent = createAgent({
    model: new FakeListChatModel({ responses: ['done'] }),
    tools: [],
    systemPrompt: 'You are a careful agent. '.repeat(200),
    middleware: [lc.turnfitMiddleware({ model: 'gpt-4o', maxTokens: 300, reserveOutput: 0, summarizer: false })],
  })
  const e = await agent.invoke({ messages: [new HumanMessage('hi')] }).then(() => null, (err) => err)
  assert.ok(e, 'the call is refused')
  assert.equal(e instanceof ck.TurnfitError, false, 'LangChain wraps it (documented)')
  const te = lc.turnfitError(e)
  assert.ok(te instanceof ck.TurnfitError, String(e))
  assert.equal(te.code, 'does_not_fit')
  assert.equal(lc.turnfitError(new Error('other')), null)
})

test('AI SDK: maxTokens is optional (the model\'s window), like the other adapters', async () => {
  const r = await ai.fitMessages([{ role: 'user', content: 'hi' }], { model: 'gpt-4o' })
  assert.equal(r.messages.length, 1)
  assert.equal(r.report.tokens_after > 0, true)
})

test('OpenAI Agents JS: the Runner passes a filter error through: TurnfitError with its code', async () => {
  const { Agent, Runner, Usage } = require('@openai/agents-core')
  const model = {
    async getResponse() { return { usage: new Usage(), output: [{ type: 'message', role: 'assistant', status: 'completed', id: 'm', content: [{ type: 'output_text', text: 'done' }] }] } },
    async * getStreamedResponse() { throw new Error('not streamed') },
  }
  const agent = new Agent({ name: 'a', instructions: 'You are a careful agent. '.repeat(200), model })
  const runner = new Runner({ callModelInputFilter: oa.turnfitInputFilter({ model: 'gpt-4o', maxTokens: 300, reserveOutput: 0, summarizer: false }), tracingDisabled: true })
  const e = await runner.run(agent, 'hi').then(() => null, (err) => err)
  assert.ok(e instanceof ck.TurnfitError, String(e))
  assert.equal(e.code, 'does_not_fit')
})

'use strict'
// Issue 47's replay, OpenAI Agents JS: each public trajectory of
// replay-fixtures.js replayed through the SDK's Runner and its own OpenAI
// models (@openai/agents-openai: OpenAIResponsesModel and
// OpenAIChatCompletionsModel) on a real `openai` client whose `fetch` is a
// fake API (fake-openai.js: it records each request body and answers with
// the trajectory's next step), the turnfit callModelInputFilter fitting every
// call, in digest, summarizer and throwing-summarizer (the API answers 503)
// modes, with the defaults and with trigger 0.9 / target 0.6 (the defaults:
// turnfitInputFilter({ maxTokens, summarizer })). Every run reaches its last
// call; every request as the SDK's converter sent it (instructions, input
// items, tools) is within the budget by turnfit's countConversation; no
// orphan; instructions and task kept.
const test = require('node:test')
const assert = require('node:assert/strict')
const ck = require('..')
const { turnfitInputFilter } = require('../openai-agents.js')
const { Agent, Runner, tool } = require('@openai/agents-core')
const { OpenAIResponsesModel, OpenAIChatCompletionsModel } = require('@openai/agents-openai')
const OpenAI = require('openai')
const { replayTrajectory } = require('./fake-openai.js')
const { TRAJECTORIES, MODEL, budgets } = require('./replay-fixtures.js')

// The fake OpenAI API's answers: the trajectory's steps to requests with
// tools, a summary (or a 503) to the summarizer's, which has none. The
// Agents SDK's own OpenAI models (OpenAIResponsesModel, the default, and
// OpenAIChatCompletionsModel) talk to it through a real `openai` client.
function replayApi(traj, mode) {
  const { api, state } = replayTrajectory(traj, mode)
  // No retries: a 503 reaches the adapter at once (the digest stands in).
  const client = new OpenAI({ apiKey: 'sk-fake', fetch: api.fetch, maxRetries: 0 })
  return { api, client, state }
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

const textOf = (c) => (typeof c === 'string' ? c : (c ?? []).filter((p) => p.text !== undefined).map((p) => p.text).join(''))

// One request as the provider sent it: counted by turnfit (the Responses
// input with its item references expanded as the server reads them), the
// instructions and task kept, no call without its output or the reverse.
function check(traj, req, api, limit, label) {
  let tokens
  let system
  let items
  if (req.kind === 'responses') {
    const input = api.expand(req.body.input)
    tokens = ck.countConversation({ instructions: req.body.instructions, input, tools: req.body.tools }, { model: MODEL, format: 'responses' })
    system = req.body.instructions
    items = input.map((it) => (it.type === 'function_call' ? { call: it.call_id }
      : it.type === 'function_call_output' ? { result: it.call_id } : { role: it.role, text: textOf(it.content) }))
  } else {
    const { messages } = req.body
    tokens = ck.countConversation({ messages, tools: req.body.tools }, { model: MODEL })
    system = messages[0].role === 'system' ? textOf(messages[0].content) : undefined
    items = messages.flatMap((m) => [
      ...(m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => ({ call: c.id })) : []),
      ...(m.role === 'tool' ? [{ result: m.tool_call_id }] : []),
      ...(m.role === 'user' ? [{ role: m.role, text: textOf(m.content) }] : []),
    ])
  }
  assert.ok(tokens <= limit, `${label}: ${tokens} tokens sent > ${limit}`)
  assert.equal(system, traj.system, `${label}: instructions kept`)
  assert.ok(items.some((it) => it.role === 'user' && it.text === traj.task), `${label}: task kept`)
  const open = new Set()
  for (const it of items) {
    if (it.call) open.add(it.call)
    if (it.result) {
      assert.ok(open.has(it.result), `${label}: orphan output ${it.result}`)
      open.delete(it.result)
    }
  }
  assert.equal(open.size, 0, `${label}: calls without output`)
  return tokens
}

const CONFIGS = {
  'defaults (README recipe)': (maxTokens) => ({ maxTokens }),
  'trigger 0.9, target 0.6': (maxTokens) => ({ maxTokens, triggerRatio: 0.9, targetRatio: 0.6 }),
}

// The SDK's two OpenAI models: what each one's converter puts on the wire is counted.
const MODELS = {
  Responses: (client, name) => new OpenAIResponsesModel(client, name),
  'Chat Completions': (client, name) => new OpenAIChatCompletionsModel(client, name),
}

// One run: the Runner to its end, then every request as sent checked.
// Returns each call's gap: tokens sent minus the adapter's count.
async function replay(traj, maxTokens, modelName, config, mode) {
  const makeModel = MODELS[modelName]
  const { api, client, state } = replayApi(traj, mode)
  const reports = []
  const agent = new Agent({ name: 'swe', instructions: traj.system, tools: tools(traj), model: makeModel(client, 'gpt-4o') })
  const filter = turnfitInputFilter({
    ...config(maxTokens),
    model: MODEL,
    summarizer: mode === 'digest' ? false : makeModel(client, 'gpt-4o-mini'),
    onReport: (r) => reports.push(r),
    onWarning: () => {},
  })
  const where = `${traj.name} at ${maxTokens} ${modelName} ${Object.keys(CONFIGS).find((k) => CONFIGS[k] === config) ?? 'no target'} ${mode}`
  const runner = new Runner({ callModelInputFilter: filter, tracingDisabled: true })
  try {
    await runner.run(agent, traj.task, { maxTurns: traj.steps.length + 5 })
  } catch (e) {
    assert.fail(`${where}: stopped at call ${state.step + 1} of ${traj.steps.length + 1}: ${e.code ?? ''} ${e.message}`)
  }
  const calls = api.requests.filter((r) => r.body.tools?.length)
  assert.equal(calls.length, traj.steps.length + 1, `${where}: reached the last call`)
  assert.equal(reports.length, calls.length, `${where}: one fit per call`)
  const gaps = calls.map((req, k) => check(traj, req, api, maxTokens - reports[k].reserved_output, `${where} call ${k}`) - reports[k].tokens_after)
  if (mode === 'summarizer') assert.ok(reports.every((r) => !r.summary || r.summary.source === 'host'), `${where}: the model summarized`)
  if (mode === 'throwing') assert.ok(reports.every((r) => !r.summary || r.summary.fallback?.reason === 'error'), `${where}: the digest stood in`)
  return gaps
}

for (const traj of TRAJECTORIES) {
  for (const maxTokens of budgets(traj)) {
    test(`replay ${traj.name} (${traj.steps.length} calls, ${traj.size} tokens) through the Runner and the SDK's OpenAI models at ${maxTokens} tokens: every model, mode and config reaches the end, within budget`, async () => {
      for (const modelName of Object.keys(MODELS)) {
        // The Chat Completions model: the defaults here, filled to the
        // limit below (its framing is checked there, call by call).
        const configs = modelName === 'Responses' ? Object.values(CONFIGS) : [CONFIGS['defaults (README recipe)']]
        for (const config of configs) {
          for (const mode of ['digest', 'summarizer', 'throwing']) await replay(traj, maxTokens, modelName, config, mode)
        }
      }
    })
  }
}

// Issue 47: OpenAIChatCompletionsModel sends the items as Chat messages,
// which the adapter now counts (the core's `api: 'chat_completions'`, picked
// from the agent's model). Filled to the limit (trigger 1, no target) every
// request is within the budget, and the adapter's count is what was sent,
// call by call (before: 2,066 tokens sent against 2,061, gaps -47 to +5).
const FULL = (maxTokens) => ({ maxTokens, triggerRatio: 1, targetRatio: null })
for (const name of ['mini-swe-agent-astropy-12907-first20', 'swe-agent-marshmallow-1867-fc']) {
  test(`${name}: the Chat Completions model, filled to the limit, is counted as sent and stays within budget`, async () => {
    const traj = TRAJECTORIES.find((t) => t.name === name)
    for (const mode of ['summarizer', 'digest']) {
      const gaps = await replay(traj, budgets(traj)[0], 'Chat Completions', FULL, mode)
      assert.deepEqual(gaps, gaps.map(() => 0), `${name} ${mode}: tokens sent minus counted, per call`)
    }
  })
}

test('the Responses model, filled to the limit, is counted as sent', async () => {
  const traj = TRAJECTORIES.find((t) => t.name === 'mini-swe-agent-astropy-12907-first20')
  const gaps = await replay(traj, budgets(traj)[0], 'Responses', FULL, 'digest')
  assert.deepEqual(gaps, gaps.map(() => 0))
})

test('the framing follows the agent\'s model; `api` overrides it', () => {
  const { apiOfAgent } = require('../openai-agents.js')
  const client = new OpenAI({ apiKey: 'sk-fake' })
  assert.equal(apiOfAgent({ model: new OpenAIChatCompletionsModel(client, 'gpt-4o') }), 'chat_completions')
  assert.equal(apiOfAgent({ model: new OpenAIResponsesModel(client, 'gpt-4o') }), 'responses')
  assert.equal(apiOfAgent({ model: 'gpt-4o' }), undefined)
  assert.throws(() => turnfitInputFilter({ maxTokens: 1000, api: 'grpc' }), /api must be 'responses' or 'chat_completions'/)
})

'use strict'
// Issue 47's replay, AI SDK: each public trajectory of replay-fixtures.js
// replayed as a generateText tool loop through the real @ai-sdk/openai
// provider, whose `fetch` is a fake OpenAI API (fake-openai.js: it records
// each request body and answers with the trajectory's next recorded step).
// The README's two recipes: `prepareStep` with the Responses model
// (`openai('gpt-4o')`), and the middleware with the Chat Completions model.
// Digest, summarizer (an AI SDK model on the same fake API) and
// throwing-summarizer (the API answers 503) modes; the defaults and trigger
// 0.9 / target 0.6; a third and half of each trajectory. Every run reaches its
// last call; what the provider sent (Responses item references expanded as
// the server reads them) is within the budget by turnfit's own
// countConversation; no call without its result or the reverse; the system
// prompt and the task are kept.
const test = require('node:test')
const assert = require('node:assert/strict')
const ck = require('..')
const aisdk = require('../ai-sdk.js')
const { generateText, wrapLanguageModel, tool, jsonSchema, stepCountIs } = require('ai')
const { createOpenAI } = require('@ai-sdk/openai')
const { replayTrajectory } = require('./fake-openai.js')
const { TRAJECTORIES, MODEL, budgets } = require('./replay-fixtures.js')

function tools(traj) {
  return Object.fromEntries(traj.tools.map((t) => [t.function.name, tool({
    description: t.function.description,
    inputSchema: jsonSchema(t.function.parameters),
    execute: async (_input, { toolCallId }) => traj.results.get(toolCallId) ?? 'no result recorded',
  })]))
}

// The fake API's answers: the trajectory's steps to requests with tools, a
// summary (or a 503) to the summarizer's, which has none.
function replayApi(traj, mode) {
  const { api, state } = replayTrajectory(traj, mode)
  const provider = createOpenAI({ apiKey: 'sk-fake', fetch: api.fetch })
  return { api, provider, state }
}

const textOf = (c) => (typeof c === 'string' ? c : (c ?? []).filter((p) => p.text !== undefined).map((p) => p.text).join(''))

// One request as sent: its count, and the checks every request must pass.
function check(traj, req, api, limit, label) {
  let tokens
  let items
  if (req.kind === 'chat') {
    const { messages } = req.body
    tokens = ck.countConversation({ messages, tools: req.body.tools }, { model: MODEL })
    items = messages.flatMap((m) => [
      ...(m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => ({ call: c.id })) : []),
      ...(m.role === 'tool' ? [{ result: m.tool_call_id }] : []),
      ...(m.role === 'system' || m.role === 'user' ? [{ role: m.role, text: textOf(m.content) }] : []),
    ])
  } else {
    const input = api.expand(req.body.input)
    tokens = ck.countConversation({ instructions: req.body.instructions, input, tools: req.body.tools }, { model: MODEL, format: 'responses' })
    items = input.map((it) => (it.type === 'function_call' ? { call: it.call_id }
      : it.type === 'function_call_output' ? { result: it.call_id } : { role: it.role, text: textOf(it.content) }))
  }
  assert.ok(tokens <= limit, `${label}: ${tokens} tokens sent > ${limit}`)
  assert.deepEqual(items[0], { role: 'system', text: traj.system }, `${label}: system prompt first, as given`)
  assert.ok(items.some((it) => it.role === 'user' && it.text === traj.task), `${label}: task kept`)
  const open = new Set()
  for (const it of items) {
    if (it.call) open.add(it.call)
    if (it.result) {
      assert.ok(open.has(it.result), `${label}: orphan result ${it.result}`)
      open.delete(it.result)
    }
  }
  assert.equal(open.size, 0, `${label}: calls without results`)
  return tokens
}

const CONFIGS = {
  defaults: (maxTokens) => ({ maxTokens }),
  'trigger 0.9, target 0.6': (maxTokens) => ({ maxTokens, triggerRatio: 0.9, targetRatio: 0.6 }),
}
// The README's two recipes, each with the provider model it shows.
const RECIPES = {
  'prepareStep, Responses': async (traj, provider, fitting) => generateText({
    model: provider('gpt-4o'),
    system: traj.system,
    prompt: traj.task,
    tools: tools(traj),
    stopWhen: stepCountIs(traj.steps.length + 2),
    prepareStep: aisdk.prepareStep({ ...fitting, system: traj.system, tools: tools(traj) }),
  }),
  'middleware, Chat Completions': async (traj, provider, fitting) => generateText({
    model: wrapLanguageModel({ model: provider.chat('gpt-4o'), middleware: aisdk.middleware(fitting) }),
    system: traj.system,
    prompt: traj.task,
    tools: tools(traj),
    stopWhen: stepCountIs(traj.steps.length + 2),
  }),
}
const MODES = ['digest', 'summarizer', 'throwing']

// One run: the loop to its end, then every request as sent checked.
// Returns each call's gap: tokens sent minus the adapter's count.
async function replay(traj, maxTokens, recipe, config, mode) {
  const { api, provider, state } = replayApi(traj, mode)
  const reports = []
  const fitting = {
    ...config(maxTokens),
    model: MODEL,
    summarizer: mode === 'digest' ? false : provider.chat('gpt-4o-mini'),
    onReport: (r) => reports.push(r),
    onWarning: () => {},
  }
  const where = `${traj.name} at ${maxTokens} (1/${(traj.size / maxTokens).toFixed(1)}) ${recipe} ${Object.keys(CONFIGS).find((k) => CONFIGS[k] === config) ?? 'no target'} ${mode}`
  try {
    await RECIPES[recipe](traj, provider, fitting)
  } catch (e) {
    assert.fail(`${where}: stopped at call ${state.step + 1} of ${traj.steps.length + 1}: ${e.code ?? ''} ${e.message}`)
  }
  const calls = api.requests.filter((r) => r.body.tools?.length)
  assert.equal(calls.length, traj.steps.length + 1, `${where}: reached the last call`)
  assert.equal(reports.length, calls.length, `${where}: one fit per call`)
  const gaps = calls.map((req, k) => check(traj, req, api, maxTokens - reports[k].reserved_output, `${where} call ${k}`) - reports[k].tokens_after)
  if (mode === 'summarizer') assert.ok(reports.every((r) => !r.summary || r.summary.source === 'host'), `${where}: the model summarized`)
  if (mode === 'throwing') assert.ok(reports.every((r) => !r.summary || r.summary.fallback?.reason === 'error'), `${where}: the digest stood in`)
  if (mode !== 'digest' && reports.some((r) => r.summary)) assert.ok(state.summaries > 0, `${where}: the summarizer model was asked`)
  return gaps
}

for (const traj of TRAJECTORIES) {
  for (const maxTokens of budgets(traj)) {
    test(`replay ${traj.name} (${traj.steps.length} calls, ${traj.size} tokens) through @ai-sdk/openai at ${maxTokens} tokens: every recipe, mode and config reaches the end, within budget`, async () => {
      for (const recipe of Object.keys(RECIPES)) {
        for (const config of Object.values(CONFIGS)) {
          for (const mode of MODES) await replay(traj, maxTokens, recipe, config, mode)
        }
      }
    })
  }
}

// Issue 47: `openai('gpt-4o')`, the README's model, is the Responses model;
// the adapter now counts the Responses items it sends (the core's
// `api: 'responses'`, picked from `model.provider`), and the Chat model's
// messages as Chat. Filled to the limit (trigger 1, no target) every request
// is within the budget and the count is what was sent, call by call (before:
// 7,738 tokens sent against 7,680, gaps -5 to +47).
const FULL = (maxTokens) => ({ maxTokens, triggerRatio: 1, targetRatio: null })
for (const recipe of Object.keys(RECIPES)) {
  test(`${recipe}, filled to the limit: counted as sent, within budget`, async () => {
    // The long run (98 calls) once: the README recipe's case the issue found.
    const runs = [['swe-agent-marshmallow-1867-fc', 'digest'], ['swe-agent-marshmallow-1867-fc', 'summarizer']]
    if (recipe.startsWith('prepareStep')) runs.push(['mini-swe-agent-astroid-1866', 'digest'])
    for (const [name, mode] of runs) {
      const traj = TRAJECTORIES.find((t) => t.name === name)
      {
        const gaps = await replay(traj, budgets(traj)[0], recipe, FULL, mode)
        assert.deepEqual(gaps, gaps.map(() => 0), `${name} ${recipe} ${mode}: tokens sent minus counted, per call`)
      }
    }
  })
}

test('the framing follows the language model; `api` overrides it', async () => {
  const provider = createOpenAI({ apiKey: 'sk-fake' })
  assert.equal(aisdk.apiOfModel(provider('gpt-4o')), 'responses')
  assert.equal(aisdk.apiOfModel(provider.chat('gpt-4o')), 'chat_completions')
  assert.equal(aisdk.apiOfModel({ provider: 'anthropic.messages' }), undefined)
  const msgs = [
    { role: 'user', content: 'weather?' },
    { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool-call', toolCallId: 'a', toolName: 'w', input: { city: 'Paris' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'w', output: { type: 'text', value: 'sunny' } }] },
  ]
  const count = async (o) => (await aisdk.fitMessages(msgs, { maxTokens: 10000, ...o })).report.tokens_after
  const chat = await count({})
  assert.equal(await count({ languageModel: provider.chat('gpt-4o') }), chat)
  const responses = await count({ languageModel: provider('gpt-4o') })
  // The call is an item of its own: its message framing (3 + the role).
  assert.equal(responses, chat + 4)
  assert.equal(await count({ languageModel: provider.chat('gpt-4o'), api: 'responses' }), responses)
  assert.throws(() => aisdk.prepareStep({ maxTokens: 1000, api: 'grpc' }), /api must be 'responses' or 'chat_completions'/)
})

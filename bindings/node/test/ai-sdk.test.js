'use strict'
// turnfit/ai-sdk with the real `ai` package (pinned in devDependencies) and
// its MockLanguageModelV3 from `ai/test`: a real trajectory
// (tests/fixtures/trajectories/mini-swe-agent-astroid-1866.ai-sdk.json, 98
// tool rounds) replayed as a generateText loop, the mock re-emitting the
// recorded tool calls and the tool returning the recorded results, with a
// budget of a third of the trajectory's final size. Every prompt the mock
// receives is checked: it fits (counted by turnfit), no call or result is
// orphaned, the system prompt and the task are there as given.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { generateText, streamText, wrapLanguageModel, tool, jsonSchema, stepCountIs } = require('ai')
const { MockLanguageModelV3 } = require('ai/test')
const ck = require('..')
const aisdk = require('../ai-sdk.js')

const ROOT = path.resolve(__dirname, '../../..')
const FIXTURE = JSON.parse(
  fs.readFileSync(path.join(ROOT, 'tests/fixtures/trajectories/mini-swe-agent-astroid-1866.ai-sdk.json'), 'utf8'))
const [SYSTEM, TASK] = FIXTURE.messages
const MODEL = 'gpt-4o'
const RESERVE = 1000
// The trajectory's final exact size (as the AI SDK's OpenAI provider sends it).
const FULL = ck.countConversation({ ...FIXTURE }, { model: MODEL })
const BUDGET = Math.floor(FULL / 3)

// The recorded steps: each assistant message whose calls all have results.
const RESULTS = new Map()
for (const m of FIXTURE.messages) {
  if (m.role === 'tool') for (const p of m.content) RESULTS.set(p.toolCallId, p.output.value)
}
const STEPS = FIXTURE.messages.filter(
  (m) => m.role === 'assistant' && m.content.filter((p) => p.type === 'tool-call').every((p) => RESULTS.has(p.toolCallId)))

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
function stepResult(k) {
  if (k >= STEPS.length) {
    return { content: [{ type: 'text', text: 'Done.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
  }
  const content = STEPS[k].content.map((p) =>
    p.type === 'tool-call' ? { type: 'tool-call', toolCallId: p.toolCallId, toolName: p.toolName, input: JSON.stringify(p.input) } : p)
  return { content, finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] }
}

function tools() {
  return {
    bash: tool({
      description: FIXTURE.tools[0].description,
      inputSchema: jsonSchema(FIXTURE.tools[0].inputSchema),
      execute: async (_input, { toolCallId }) => RESULTS.get(toolCallId),
    }),
  }
}
const TOOL_DEFS = FIXTURE.tools

// A mock that replays the trajectory and records every prompt it gets.
function replayModel() {
  let k = 0
  const prompts = []
  const model = new MockLanguageModelV3({
    doGenerate: async (o) => {
      prompts.push(o.prompt)
      return stepResult(k++)
    },
    doStream: async (o) => {
      prompts.push(o.prompt)
      const r = stepResult(k++)
      const chunks = [{ type: 'stream-start', warnings: [] }]
      for (const p of r.content) {
        if (p.type === 'text') chunks.push({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: p.text }, { type: 'text-end', id: 't' })
        else chunks.push(p)
      }
      chunks.push({ type: 'finish', finishReason: r.finishReason, usage })
      return { stream: new ReadableStream({ start(c) { chunks.forEach((x) => c.enqueue(x)); c.close() } }) }
    },
  })
  return { model, prompts }
}

// A summarizer model (the AI SDK's own mock), counting its calls.
function summaryModel(text = 'Summary: the agent read astroid sources and reproduced the TypeError.') {
  return new MockLanguageModelV3({
    doGenerate: async () => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }),
  })
}

// What every prompt must satisfy.
function checkPrompt(prompt, where, { system = true } = {}) {
  const tokens = ck.countConversation({ messages: prompt, tools: TOOL_DEFS }, { model: MODEL })
  assert.ok(tokens <= BUDGET - RESERVE, `${where}: ${tokens} tokens > ${BUDGET - RESERVE}`)
  // No orphan: every result answers a call in the assistant message before
  // its run of tool messages; every call but a trailing one is answered.
  const open = new Map()
  let lastAssistant = -1
  prompt.forEach((m, i) => {
    if (m.role === 'assistant') {
      for (const [id, at] of open) assert.fail(`${where}: call ${id} (message ${at}) unanswered before message ${i}`)
      lastAssistant = i
      for (const p of m.content) if (p.type === 'tool-call') open.set(p.toolCallId, i)
    } else if (m.role === 'tool') {
      for (const p of m.content) {
        if (p.type !== 'tool-result') continue
        assert.ok(open.has(p.toolCallId), `${where}: result ${p.toolCallId} at ${i} answers no open call`)
        assert.ok(prompt.slice(open.get(p.toolCallId) + 1, i).every((x) => x.role === 'tool'), `${where}: result ${p.toolCallId} misplaced`)
        open.delete(p.toolCallId)
      }
    } else {
      for (const [id, at] of open) assert.fail(`${where}: call ${id} (message ${at}) unanswered before message ${i}`)
    }
  })
  for (const [id, at] of open) assert.ok(at === lastAssistant && at === prompt.length - 1, `${where}: call ${id} orphaned`)
  // The system prompt and the task, as given.
  const texts = (m) => (typeof m.content === 'string' ? m.content : m.content.filter((p) => p.type === 'text').map((p) => p.text).join(''))
  if (system) {
    assert.equal(prompt[0].role, 'system', `${where}: no system prompt`)
    assert.equal(texts(prompt[0]), SYSTEM.content, `${where}: system prompt changed`)
  }
  const task = prompt.find((m) => m.role === 'user')
  assert.ok(task && texts(task) === TASK.content, `${where}: task dropped or changed`)
  return tokens
}

// No target, as these tests were written for (the shared default target, 0.5, is
// replayed by replay-ai-sdk.test.js).
const options = (extra = {}) => ({ model: MODEL, maxTokens: BUDGET, reserveOutput: RESERVE, targetRatio: null, onWarning: null, ...extra })

test('the fixture is a long loop and the budget a third of it', () => {
  assert.ok(STEPS.length >= 50, `${STEPS.length} steps`)
  assert.ok(FULL > 3 * (BUDGET - RESERVE))
})

test('middleware: a 50+ step generateText loop, every prompt fits, summaries by an AI SDK model', async () => {
  const { model, prompts } = replayModel()
  const summarizer = summaryModel()
  const r = await generateText({
    model: wrapLanguageModel({ model, middleware: aisdk.middleware(options({ summarizer, tools: TOOL_DEFS })) }),
    system: SYSTEM.content,
    prompt: TASK.content,
    tools: tools(),
    stopWhen: stepCountIs(STEPS.length + 2),
  })
  assert.equal(r.steps.length, STEPS.length + 1)
  assert.equal(prompts.length, STEPS.length + 1)
  let over = 0
  prompts.forEach((p, i) => {
    const t = checkPrompt(p, `prompt ${i}`)
    if (t > BUDGET * 0.5) over++
  })
  assert.ok(summarizer.doGenerateCalls.length >= 1, 'the summarizer model was never called')
  assert.ok(JSON.stringify(prompts.at(-1)).includes('reproduced the TypeError'), 'the model summary is not in the last prompt')
  assert.ok(over > 0, 'the budget was never used beyond half: compaction did too much')
})

test('prepareStep: a 50+ step streamText loop, every prompt fits', async () => {
  const { model, prompts } = replayModel()
  const summarizer = summaryModel()
  const r = streamText({
    model,
    system: SYSTEM.content,
    prompt: TASK.content,
    tools: tools(),
    stopWhen: stepCountIs(STEPS.length + 2),
    prepareStep: aisdk.prepareStep(options({ summarizer, tools: tools(), system: SYSTEM.content })),
  })
  await r.consumeStream()
  assert.equal((await r.steps).length, STEPS.length + 1)
  prompts.forEach((p, i) => checkPrompt(p, `prompt ${i}`))
  assert.ok(summarizer.doGenerateCalls.length >= 1)
})

test('prepareStep: a span summarized once is carried, not summarized again at every step', async () => {
  // The AI SDK hands every step the whole history: without the turn
  // report's carry each step over the trigger transcribes the same old
  // rounds into a new summarizer prompt.
  const early = FIXTURE.messages.filter((m) => m.role === 'tool').slice(0, 3).map((m) => m.content[0].output.value.slice(0, 120))
  for (const text of early) assert.equal(JSON.stringify(FIXTURE).split(JSON.stringify(text).slice(1, -1)).length, 2, 'marker not unique')
  const run = async (extra) => {
    const { model, prompts } = replayModel()
    const seen = []
    const summarizer = (req) => {
      seen.push(req.prompt)
      return 'Summary: the agent read astroid sources and reproduced the TypeError.'
    }
    const reports = []
    await generateText({
      model,
      system: SYSTEM.content,
      prompt: TASK.content,
      tools: tools(),
      stopWhen: stepCountIs(STEPS.length + 2),
      prepareStep: aisdk.prepareStep(options({ summarizer, tools: tools(), system: SYSTEM.content, onReport: (r) => reports.push(r), ...extra })),
    })
    prompts.forEach((p, i) => checkPrompt(p, `prompt ${i}`))
    return { seen, reports }
  }
  const again = await run({ reuseSummary: false })
  const once = await run({})
  const inPrompts = (seen, text) => seen.filter((p) => p.includes(text)).length
  // Without the carry the first rounds are summarized again and again.
  assert.ok(early.some((t) => inPrompts(again.seen, t) > 1), 'the reproducer did not re-summarize')
  for (const t of early) assert.ok(inPrompts(once.seen, t) <= 1, `${JSON.stringify(t.slice(0, 40))} is in ${inPrompts(once.seen, t)} summarizer prompts`)
  assert.ok(once.reports.some((r) => r.carried && r.carried.messages > 0), 'no step was sent with the carried summary')
  assert.ok(once.seen.length >= 1)
})

test('a summarizer that throws: the digest summarizes, the loop goes on, a warning says so', async () => {
  const { model, prompts } = replayModel()
  const broken = new MockLanguageModelV3({ doGenerate: async () => { throw new Error('rate limited') } })
  const warnings = []
  const r = await generateText({
    model: wrapLanguageModel({
      model,
      middleware: aisdk.middleware(options({ summarizer: broken, tools: TOOL_DEFS, onWarning: (m, rep) => warnings.push([m, rep]) })),
    }),
    system: SYSTEM.content,
    prompt: TASK.content,
    tools: tools(),
    stopWhen: stepCountIs(STEPS.length + 2),
  })
  assert.equal(r.steps.length, STEPS.length + 1)
  prompts.forEach((p, i) => checkPrompt(p, `prompt ${i}`))
  assert.ok(broken.doGenerateCalls.length >= 1)
  assert.ok(warnings.length >= 1, 'no warning')
  assert.match(warnings[0][0], /the digest summarized instead \(error: .*Error: rate limited\)/)
  assert.equal(warnings[0][1].summary.source, 'digest')
})

test('a pending tool approval survives compaction, with no result made up for it', async () => {
  // The AI SDK's own approval flow: the model calls a tool that needs
  // approval; the loop stops with the request in the response messages.
  const model = new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: 'tool-call', toolCallId: 'call_rm', toolName: 'rm', input: '{"path":"build"}' }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
    }),
  })
  const r = await generateText({
    model,
    prompt: 'clean up',
    tools: { rm: tool({ inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } } }), needsApproval: true, execute: async () => 'removed' }) },
  })
  const pending = r.response.messages.at(-1)
  assert.ok(pending.content.some((p) => p.type === 'tool-approval-request'), JSON.stringify(pending))
  const history = [SYSTEM, ...FIXTURE.messages.slice(1, 81), pending]
  const out = await aisdk.fitMessages(history, options({ tools: TOOL_DEFS }))
  assert.strictEqual(out.messages.at(-1), pending, 'the approval request was changed or dropped')
  assert.ok(!JSON.stringify(out.messages).includes('"toolCallId":"call_rm","toolName":"rm","output"'), 'a result was made up')
  checkPrompt(out.messages, 'fitted history')
})

test('an unknown part type passes through untouched and is counted as text', async () => {
  const note = { type: 'x-future-note', text: 'remember: the parser lives in astroid/nodes '.repeat(20) }
  const user = { role: 'user', content: [{ type: 'text', text: 'and one more thing' }, note] }
  const history = [...FIXTURE.messages.slice(0, 41), user]
  const without = ck.countConversation({ messages: history.slice(0, -1).concat([{ role: 'user', content: [{ type: 'text', text: 'and one more thing' }] }]) }, { model: MODEL })
  const withNote = ck.countConversation({ messages: history }, { model: MODEL })
  assert.ok(withNote - without >= ck.countTokens(note.text), `${withNote} - ${without}`)
  const out = await aisdk.fitMessages(history, options({ maxTokens: Math.floor(withNote / 2) }))
  assert.strictEqual(out.messages.at(-1), user)
  assert.strictEqual(out.messages.at(-1).content[1], note)
})

test('messages the turn did not change come back as the same objects, equal to the input', async () => {
  const history = FIXTURE.messages.map((m) => structuredClone(m))
  // Provider options, reasoning and an image on the way (lossless).
  history[2] = { ...history[2], providerOptions: { openai: { itemId: 'msg_x' } } }
  history[2].content = [{ type: 'reasoning', text: 'Look first.', providerOptions: { anthropic: { signature: 'c2ln' } } }, ...history[2].content]
  history[1] = { ...history[1], content: [{ type: 'text', text: TASK.content }, { type: 'image', image: new Uint8Array([137, 80, 78, 71]) }] }
  const before = history.map((m) => JSON.stringify(m))
  const out = await aisdk.fitMessages(history, options())
  assert.ok(out.report.changed)
  let same = 0
  for (const m of out.messages) {
    const i = history.indexOf(m)
    if (i >= 0) {
      same++
      assert.equal(JSON.stringify(m), before[i])
    }
  }
  assert.strictEqual(out.messages[0], history[0])
  assert.strictEqual(out.messages[1], history[1], 'the task with its image was rebuilt')
  assert.ok(same >= 10, `${same} messages kept as they were`)
  assert.ok(same < history.length)
})

test('a tool whose schema cannot be converted is a TypeError naming it, never counted as empty', async () => {
  // A Standard Schema library without JSON Schema support: ai's asSchema throws.
  const tools = { lookup: { description: 'd', inputSchema: { '~standard': { vendor: 'x', validate() {} } } } }
  await assert.rejects(aisdk.fitMessages([{ role: 'user', content: 'hi' }], options({ tools })),
    (e) => e instanceof TypeError && /tool "lookup": its inputSchema cannot be converted/.test(e.message))
})

test('a zod 4 schema (which has a `type` of its own) is counted as the JSON Schema ai sends, not as its JSON', async () => {
  const { z } = require('zod')
  const { asSchema } = require('ai')
  const schema = z.object({ path: z.string().describe('the file to read, relative to the repository root'), lines: z.number().optional() })
  const history = [{ role: 'user', content: 'read it' }]
  const run = async (inputSchema) => (await aisdk.fitMessages(history, options({ tools: { read: tool({ description: 'Read a file.', inputSchema }) } }))).report
  const viaZod = await run(schema)
  const viaJson = await run(jsonSchema(asSchema(schema).jsonSchema))
  assert.equal(viaZod.tokens_before, viaJson.tokens_before)
  assert.equal(viaZod.exact, viaJson.exact)
})

test('a provider-defined tool is counted and the count marked an estimate, never left out', async () => {
  const history = [{ role: 'user', content: 'what is new in astroid?' }]
  const provider = { type: 'provider', id: 'openai.web_search', name: 'web_search', args: { searchContextSize: 'high' } }
  const fn = { type: 'function', name: 'bash', description: 'Run a command.', inputSchema: { type: 'object', properties: { cmd: { type: 'string' } } } }
  const base = (await aisdk.fitMessages(history, options({ tools: [fn] }))).report
  assert.equal(base.exact, true)
  // A provider call's tools (the middleware's params.tools).
  const listed = (await aisdk.fitMessages(history, options({ tools: [fn, provider] }))).report
  assert.ok(listed.tokens_before > base.tokens_before, `${listed.tokens_before} <= ${base.tokens_before}: the provider tool was left out`)
  assert.equal(listed.exact, false, 'a provider tool is counted by an estimate')
  // A ToolSet entry (what openai.tools.webSearch() returns): not a function schema.
  const toolSet = { bash: tool({ description: fn.description, inputSchema: jsonSchema(fn.inputSchema) }), web_search: { type: 'provider', id: 'openai.web_search', args: {}, inputSchema: jsonSchema({ type: 'object', properties: { query: { type: 'string', description: 'x '.repeat(200) } } }) } }
  const set = (await aisdk.fitMessages(history, options({ tools: toolSet }))).report
  assert.equal(set.exact, false)
  assert.ok(set.tokens_before < listed.tokens_before + 50, 'the provider tool was counted as a function schema')
})

test('bad input: a TypeError for a bad maxTokens, a TurnfitError for a malformed message', async () => {
  assert.throws(() => aisdk.prepareStep({ maxTokens: 0 }), TypeError)
  assert.throws(() => aisdk.prepareStep(null), TypeError)
  await assert.rejects(aisdk.fitMessages([{ role: 'tool', content: 'x' }], options()), (e) => e instanceof ck.TurnfitError && /must be an array of parts/.test(e.message))
})

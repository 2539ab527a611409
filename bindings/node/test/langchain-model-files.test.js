'use strict'
// Issue 50's must-show through a Node adapter: a real agent trajectory
// (mini-swe-agent astroid-1866) fitted by the LangChain.js adapter's
// fitModelRequest for open-weight models registered from their files
// (Qwen3, Llama 3, Llama 3.1 with its template from llama.cpp's collection; Gemma 3 on a user/assistant chat, its template requiring
// the turns to alternate). At several budgets, the request the adapter returns is
// never over the limit by the model's own count: the core's template count
// of it (toChat's OpenAI form), taken afresh. Skipped with a message when
// the files are not cached (scripts/templates.sh fetches them).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const ck = require('..')
const { fitModelRequest, toChat } = require('../langchain.js')
const { AIMessage, HumanMessage, SystemMessage, ToolMessage } = require('@langchain/core/messages')

const ROOT = path.resolve(__dirname, '../../..')
const NPM = path.join(ROOT, 'target/open-models/npm')
const FIXTURE = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/trajectories/mini-swe-agent-astroid-1866.openai.json'), 'utf8'))

function history() {
  const msgs = []
  for (const m of FIXTURE.messages.slice(1)) {
    if (m.role === 'user') msgs.push(new HumanMessage({ content: m.content }))
    if (m.role === 'assistant') {
      msgs.push(new AIMessage({
        content: m.content ?? '',
        tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: 'tool_call' })),
      }))
    }
    if (m.role === 'tool') msgs.push(new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id, name: 'bash' }))
  }
  return msgs
}

function ownCount(model, request) {
  const messages = [request.systemMessage, ...request.messages].map((m) => toChat(m).msg)
  const { report } = ck.fit(messages, { model, max_tokens: 1000000 })
  assert.equal(report.exact, true)
  return report.tokens_before
}

const COLLECTION = path.join(ROOT, 'target/open-models/pypi/llama-cpp-python/llama_cpp_python-0.3.36/vendor/llama.cpp/models/templates')

// name, npm package, template from llama.cpp's collection (null: the package's own)
for (const [name, pkg, template] of [
  ['qwen3-lc-files', 'qwen3', null],
  ['llama3-lc-files', 'llama3', null],
  ['llama3.1-lc-files', 'llama3', 'meta-llama-Llama-3.1-8B-Instruct.jinja'],
]) {
  const tokenizer = path.join(NPM, `tokenizer-${pkg}/package/models/tokenizer.json`)
  const templateFile = template && path.join(COLLECTION, template)
  const skip = (!fs.existsSync(tokenizer) && `${tokenizer} not cached: run scripts/templates.sh`) ||
    (templateFile && !fs.existsSync(templateFile) && `${templateFile} not cached: run scripts/templates.sh`) || false
  test(`fitModelRequest never over for ${name} registered from its files`, { skip }, async () => {
    const chatTemplate = templateFile ? fs.readFileSync(templateFile, 'utf8') : undefined
    ck.registerModelFiles(name, { tokenizer, chatTemplate, contextWindow: 131072 })
    const request = { model: null, messages: history(), systemMessage: new SystemMessage(FIXTURE.messages[0].content), tools: [] }
    const before = ownCount(name, request)
    for (const max of [4096, 8192, 16384]) {
      const { request: out, report } = await fitModelRequest(request, { fit: { model: name, max_tokens: max, reserve_output: max / 8 }, summarizer: false })
      const after = ownCount(name, out)
      assert.equal(report.exact, true)
      assert.equal(report.tokens_before, before)
      assert.equal(report.tokens_after, after)
      assert.ok(after <= report.limit_tokens, `${pkg} at ${max}: ${after} over ${report.limit_tokens}`)
      assert.ok(after < before)
    }
  })
}

// Gemma 3's template refuses the tool role and requires user and assistant
// turns to alternate: on OpenHands' Goldbach chat (its last message, a
// pending tool call, left out), compaction leaves two user messages in a
// row, which the fit joins, so the request still renders.
const GOLDBACH = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/chats/openhands-goldbach-chat.openai.json'), 'utf8'))
{
  const tokenizer = path.join(NPM, 'tokenizer-gemma3/package/models/tokenizer.json')
  const skip = !fs.existsSync(tokenizer) && `${tokenizer} not cached: run scripts/templates.sh`
  test('fitModelRequest keeps Gemma 3 turns alternating', { skip }, async () => {
    ck.registerModelFiles('gemma3-lc-files', { tokenizer, contextWindow: 131072 })
    const chat = (GOLDBACH.messages ?? GOLDBACH).slice(0, -1)
    const messages = chat.map((m) => (m.role === 'user' ? new HumanMessage({ content: m.content }) : new AIMessage({ content: m.content })))
    const count = (msgs) => ck.fit(msgs.map((m) => toChat(m).msg), { model: 'gemma3-lc-files', max_tokens: 1000000 }).report.tokens_before
    const before = count(messages)
    let joined = 0
    for (const max of [60, 90, 120]) {
      const { request: out, report } = await fitModelRequest({ model: null, messages, tools: [] }, { fit: { model: 'gemma3-lc-files', max_tokens: max, reserve_output: Math.floor(max / 8) }, summarizer: false })
      const roles = out.messages.map((m) => m._getType())
      assert.ok(roles.every((r, i) => (r === 'human') === (i % 2 === 0)), `${max}: ${roles}`)
      const after = count(out.messages)
      assert.equal(report.tokens_after, after)
      assert.ok(after <= report.limit_tokens && after < before, `${max}: ${after} over ${report.limit_tokens}`)
      joined += report.changes.filter((c) => c.action === 'merged_message').length
    }
    assert.ok(joined > 0, 'no fit joined two turns: the test does not exercise it')
  })
}

'use strict'
// A fake OpenAI API for the replays: a `fetch` that records the JSON body of
// every request a real provider (@ai-sdk/openai, the `openai` client under
// @openai/agents-openai) sends, and answers with a canned Chat Completions or
// Responses reply. No network: the test counts what the provider's own
// converter put on the wire, not what the adapter believes it sends.
//
// `answer(body, kind)` returns { content, calls: [{ id, name, arguments }] },
// or { status, error } for an API error (a summarizer that fails). `kind` is
// 'chat' or 'responses'. With the Responses API's default `store: true`
// the provider sends earlier output as `item_reference`s; `expand` puts back
// the item the fake answered with, as the server would read it.

function json(status, value) {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } })
}

const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
const rUsage = { input_tokens: 1, input_tokens_details: { cached_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 2 }

function fakeOpenAI(answer) {
  const requests = []
  const items = new Map()
  let n = 0
  async function fetch(url, init) {
    const href = typeof url === 'string' ? url : url.url ?? String(url)
    const body = JSON.parse(init.body)
    const kind = href.endsWith('/chat/completions') ? 'chat' : href.endsWith('/responses') ? 'responses' : null
    if (!kind) return json(404, { error: { message: `fake OpenAI: no route ${href}` } })
    requests.push({ kind, body })
    const a = await answer(body, kind)
    if (a.status) return json(a.status, { error: { message: a.error, type: 'server_error', code: null, param: null } })
    const k = n++
    if (kind === 'chat') {
      const message = { role: 'assistant', content: a.content ?? null }
      if (a.calls?.length) message.tool_calls = a.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }))
      return json(200, {
        id: `chatcmpl-${k}`, object: 'chat.completion', created: 1765000000, model: body.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: a.calls?.length ? 'tool_calls' : 'stop' }],
        usage,
      })
    }
    const output = []
    if (a.content) output.push({ type: 'message', id: `msg_${k}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: a.content, annotations: [] }] })
    for (const c of a.calls ?? []) output.push({ type: 'function_call', id: `fc_${k}_${c.id}`, call_id: c.id, name: c.name, arguments: c.arguments, status: 'completed' })
    for (const it of output) {
      items.set(it.id, it.type === 'message'
        ? { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: it.content[0].text }] }
        : { type: 'function_call', call_id: it.call_id, name: it.name, arguments: it.arguments })
    }
    return json(200, {
      id: `resp_${k}`, object: 'response', created_at: 1765000000, status: 'completed', model: body.model,
      output, usage: rUsage, incomplete_details: null, error: null, parallel_tool_calls: true, tool_choice: 'auto', tools: [],
    })
  }
  // A Responses input as the server reads it: references replaced by their items.
  function expand(input) {
    return input.map((it) => {
      if (it.type !== 'item_reference') return it
      const found = items.get(it.id)
      if (!found) throw new Error(`fake OpenAI: reference to unknown item ${it.id}`)
      return found
    })
  }
  return { fetch, requests, expand }
}

// A fake API that replays a trajectory: requests with tools get the
// trajectory's next step (then "Done."), a request without tools is the
// summarizer's and gets a summary, or a 503 in `throwing` mode. Shared by
// the AI SDK and Agents JS replays.
function replayTrajectory(traj, mode) {
  const state = { step: 0, summaries: 0 }
  const api = fakeOpenAI((body) => {
    if (!body.tools?.length) {
      state.summaries++
      if (mode === 'throwing') return { status: 503, error: 'summarizer overloaded' }
      return { content: `Summary ${state.summaries}: the agent worked on the task.` }
    }
    const s = traj.steps[state.step++]
    if (!s) return { content: 'Done.' }
    return { content: s.content || null, calls: s.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) }
  })
  return { api, state }
}

module.exports = { fakeOpenAI, replayTrajectory }

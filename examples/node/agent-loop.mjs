// An agent loop with turnfit from Node: pre-flight before every model call,
// tool spans in a Tracer, compaction with the two-phase summary protocol when
// the window fills up, and a call stack that refuses a delegation cycle.
// No model is called: the "model" and the "tools" are stand-ins.
//
// Runs against the installed package (README, "Installing"):
//   npm install turnfit && node agent-loop.mjs
// bindings/node/test.sh and scripts/dist-test.sh run it that way, from the
// packed tarballs installed into an empty project.
import { ContextWindow, CallStack, Tracer, TurnfitError, countTokens } from 'turnfit'

const window = new ContextWindow('gpt-4o', { context_window: 6000, reserved_output: 500 })
window.load({
  messages: [
    { role: 'system', content: 'You are a coding agent. Use tools to inspect and fix the repository.' },
    { role: 'user', content: 'The test suite fails in src/parser.rs; find out why and fix it.' },
  ],
})
const tracer = new Tracer({})
let clock = 0
const fakeTool = (name, i) => `${name} output ${i}\n` + `line ${i}: parser state ok, token stream advanced\n`.repeat(40 + i)

for (let round = 1; round <= 12; round++) {
  const pre = window.preflight()
  if (pre.verdict !== 'fits') {
    const outcome = window.compact({ strategy: 'summarize' })
    if (outcome.status === 'needs_summary') {
      // Here the host would send outcome.request.prompt to its model.
      const summary = `Rounds summarized (${outcome.request.span_tokens} tokens): read files, ran tests, parser.rs line 40 suspected.`
      const report = window.applySummary(outcome.request.id, summary)
      console.log(`round ${round}: ${pre.verdict} at ${pre.prompt_tokens} tokens; summary applied, ${report.tokens_before} -> ${report.tokens_after}`)
    } else {
      console.log(`round ${round}: compacted ${outcome.report.tokens_before} -> ${outcome.report.tokens_after}`)
    }
  }
  const id = `call_${round}`
  window.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'run_tests', arguments: '{}' } }] })
  const span = tracer.start('run_tests', { tool_call_id: id }, 2, (clock += 1000))
  const output = fakeTool('run_tests', round)
  tracer.end(span, 'success', output.length, null, (clock += 25000 + round * 1000))
  const n = window.push({ role: 'tool', tool_call_id: id, content: output })
  if (round % 3 === 0) window.push({ role: 'user', content: `Round ${round} done; keep going.` })
  if (round % 4 === 0) console.log(`round ${round}: tool result ${n} tokens, window ${window.preflight().prompt_tokens} tokens`)
}

const final = window.preflight()
console.log(`final: ${final.prompt_tokens} prompt tokens of ${final.limit}, verdict ${final.verdict}`)
const [m] = tracer.metrics()
console.log(`tool ${m.tool}: ${m.count} calls, p50 ${m.duration_us.p50} µs`)

// Delegation: planner -> coder -> reviewer, and reviewer may not call planner.
const stack = new CallStack(5).enter('planner').enter('coder').enter('reviewer')
try {
  stack.enter('planner')
  console.log('delegation allowed (unexpected)')
} catch (e) {
  if (!(e instanceof TurnfitError)) throw e
  console.log(`delegation ${stack.chain} -> planner refused (${e.code}): ${e.message}`)
}
console.log(`one-liner: ${countTokens('Hello, world!')} tokens`)

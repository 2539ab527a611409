'use strict'
// The public agent trajectories of tests/fixtures/trajectories (PROVENANCE.md)
// that are one agent loop (a system prompt, a task, then calls and results):
// as scripts a framework's fake model replays. Each step is a recorded
// assistant message whose calls all have a recorded result; the replay ends
// with a final answer. Shared by the adapters' replay tests.
const fs = require('node:fs')
const path = require('node:path')
const ck = require('..')

const DIR = path.resolve(__dirname, '../../../tests/fixtures/trajectories')
const NAMES = [
  'swe-agent-marshmallow-1867-fc',
  'mini-swe-agent-github-issue',
  'mini-swe-agent-astropy-12907-first20',
  'mini-swe-agent-astroid-1866',
  'openhands-2048',
  'swe-agent-missing-colon-fc',
  'mini-swe-agent-sqlfluff-2419',
]
const MODEL = 'gpt-4o'

function load(name) {
  const doc = JSON.parse(fs.readFileSync(path.join(DIR, `${name}.openai.json`), 'utf8'))
  const msgs = doc.messages
  if (msgs[0].role !== 'system' || msgs[1].role !== 'user') throw new Error(`${name}: not system + task first`)
  const results = new Map(msgs.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]))
  const steps = msgs.slice(2).filter((m) => m.role === 'assistant' && (m.tool_calls ?? []).length > 0 && m.tool_calls.every((c) => results.has(c.id)))
  const answered = msgs.filter((m) => m.role !== 'assistant' || !(m.tool_calls ?? []).some((c) => !results.has(c.id)))
  // The size of what the replay sends at its end: every answered round.
  const size = ck.countConversation({ messages: answered, tools: doc.tools }, { model: MODEL })
  // What no compaction can drop: the system prompt, the task and the tools.
  const irreducible = ck.countConversation({ messages: msgs.slice(0, 2), tools: doc.tools }, { model: MODEL })
  return { name, system: msgs[0].content, task: msgs[1].content, steps, results, tools: doc.tools, size, irreducible }
}

// The budgets a trajectory is replayed at: a third and a half of its size (the
// long run at a third only, so the suite stays short on 2 cores), each at least
// twice what no compaction can drop: below that the default reserve (a quarter
// of the budget) leaves no room for a round, and a refusal is the right answer.
function budgets(traj) {
  const divs = traj.steps.length > 40 ? [3] : [3, 2]
  return [...new Set(divs.map((d) => Math.max(Math.floor(traj.size / d), 2 * traj.irreducible)))]
}

const TRAJECTORIES = NAMES.map(load)

module.exports = { TRAJECTORIES, MODEL, budgets }

// Type-checked by `tsc -p test/types` (never run): the adapters' .d.ts
// against the real framework types.
import { createAgent } from 'langchain'
import { Runner } from '@openai/agents-core'
import { turnfitMiddleware, type AdapterTurnReport } from '../../langchain.js'
import { turnfitInputFilter } from '../../openai-agents.js'

const mw = turnfitMiddleware({ fit: { model: 'gpt-4o', max_tokens: 128000 }, writeBack: true, onReport: (r: AdapterTurnReport) => { const n: number = r.adapter.unchanged } })
const agent = createAgent({ model: 'openai:gpt-4o', tools: [], middleware: [mw] })
const last: AdapterTurnReport | null = mw.lastReport
const stats: { loads: number; steps: number } | null = mw.sessionStats
turnfitMiddleware({ session: false })
// @ts-expect-error: summarizer is a model, a function or false
turnfitMiddleware({ summarizer: 'gpt-4o-mini' })

const runner = new Runner({ callModelInputFilter: turnfitInputFilter({ fit: { model: 'gpt-4o', max_tokens: 128000 }, pendingCalls: ['call_1'] }) })
// @ts-expect-error: pendingCalls are ids
turnfitInputFilter({ pendingCalls: 3 })
export { agent, last, runner }

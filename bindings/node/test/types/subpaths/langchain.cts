// Type-checked, never run (bindings/node/test.sh in the repository,
// scripts/dist-test.sh against the installed tarball): turnfit/langchain by
// package name from a CommonJS module, against the framework's own types of the same
// module system. From an .mts this was TS2769 at createAgent({ middleware })
// before the ESM declaration (langchain.d.mts) shipped (issue 47).
import { createAgent } from 'langchain'
import { turnfitMiddleware, fitModelRequest, type AdapterTurnReport } from 'turnfit/langchain'

const mw = turnfitMiddleware({ maxTokens: 128000, reserveOutput: 4000, onReport: (r: AdapterTurnReport) => { const n: number = r.adapter.unchanged; void n } })
export const agent = createAgent({ model: 'openai:gpt-4o', tools: [], middleware: [mw] })
export const last: AdapterTurnReport | null = mw.lastReport
export const fitted = fitModelRequest
// @ts-expect-error: summarizer is a model, a function or false
turnfitMiddleware({ summarizer: 'gpt-4o-mini' })

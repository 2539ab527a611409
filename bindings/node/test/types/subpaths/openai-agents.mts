// Type-checked, never run: turnfit/openai-agents by package name from
// an ES module, against @openai/agents-core's types of the same module system.
import { Runner } from '@openai/agents-core'
import { turnfitInputFilter, fitModelInput } from 'turnfit/openai-agents'

export const runner = new Runner({ callModelInputFilter: turnfitInputFilter({ maxTokens: 128000, pendingCalls: ['call_1'] }) })
export const fit = fitModelInput
// @ts-expect-error: pendingCalls are ids
turnfitInputFilter({ pendingCalls: 3 })

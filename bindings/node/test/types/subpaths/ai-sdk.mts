// Type-checked, never run: turnfit/ai-sdk by package name from an ES module.
import { prepareStep, middleware, fitMessages, type AiSdkFitOptions } from 'turnfit/ai-sdk'
import { countTokens, TurnfitError } from 'turnfit'

const options: AiSdkFitOptions = { model: 'gpt-4o', maxTokens: 32000, reserveOutput: 4000 }
export const step = prepareStep(options)
export const mw = middleware(options)
export const fit = fitMessages([{ role: 'user', content: 'hi' }], options)
export const n: number = countTokens('hi')
export const isError = (e: unknown): boolean => e instanceof TurnfitError
// @ts-expect-error: maxTokens is a number
prepareStep({ maxTokens: '32000' })

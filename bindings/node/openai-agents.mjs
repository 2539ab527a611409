// ESM entry of turnfit/openai-agents: the CommonJS module (openai-agents.js), re-exported.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const m = require('./openai-agents.js')

export const { turnfitInputFilter, fitModelInput, toResponses, apiOfAgent, TESTED, DEFAULTS } = m
export default m

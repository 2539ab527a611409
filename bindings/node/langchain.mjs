// ESM entry of turnfit/langchain: the CommonJS module (langchain.js), re-exported,
// so both module systems share one adapter and one native module instance.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const m = require('./langchain.js')

export const { turnfitMiddleware, fitModelRequest, ModelRequestSession, toChat, turnfitError, TESTED, DEFAULTS } = m
export default m

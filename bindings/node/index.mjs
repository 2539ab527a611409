// ESM entry of the `ctxkit` package: the CommonJS facade (index.js), re-exported,
// so both module systems share one native module instance and one CtxkitError.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const ctxkit = require('./index.js')

export const {
  version,
  ERROR_CODES,
  OUTCOMES,
  CtxkitError,
  Tokenizer,
  countTokens,
  countTokensAsync,
  countConversation,
  lookupModel,
  ContextWindow,
  fit,
  fitJson,
  fitAsync,
  SkillSet,
  handoff,
  classifyError,
  backoff,
  CircuitBreaker,
  CallStack,
  Tracer,
  toolset,
} = ctxkit
export default ctxkit

// ESM entry of the `turnfit` package: the CommonJS facade (index.js), re-exported,
// so both module systems share one native module instance and one TurnfitError.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const turnfit = require('./index.js')

export const {
  version,
  ERROR_CODES,
  OUTCOMES,
  TurnfitError,
  Tokenizer,
  FileTokenizer,
  countTokens,
  countTokensAsync,
  countConversation,
  lookupModel,
  registerModel,
  registerModelFiles,
  listModels,
  ContextWindow,
  fit,
  fitJson,
  fitAsync,
  fitTurn,
  FitSession,
  SkillSet,
  handoff,
  classifyError,
  backoff,
  CircuitBreaker,
  CallStack,
  Tracer,
  toolset,
} = turnfit
export default turnfit

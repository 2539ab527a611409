import m from './ai-sdk.js'
export const { prepareStep, middleware, fitMessages, modelSummarizer, apiOfModel, TESTED_AI, DEFAULTS } = m
export default m

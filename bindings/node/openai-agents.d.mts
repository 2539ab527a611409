// Generated from openai-agents.d.ts by scripts/esm-types.mjs (the ESM declaration: its imports resolve
// with the "import" condition). Edit the .d.ts, then run node scripts/esm-types.mjs.
// turnfit/openai-agents: a callModelInputFilter for the OpenAI Agents SDK
// (tested with @openai/agents-core 0.20.0).
import type { AgentInputItem, CallModelInputFilter, ModelInputData, Model } from '@openai/agents-core'
import type { AdapterBudgetOptions, AdapterDefaults, Summarizer } from './index.js'
import type { AdapterTurnReport } from './langchain.mjs'

export interface TurnfitInputFilterOptions extends AdapterBudgetOptions {
  /** The Model that summarizes (default: the agent's model when it is a Model), a function of the request, or false for the digest. */
  summarizer?: Pick<Model, 'getResponse'> | Summarizer | false | null
  /** Call ids awaiting their result (an approval, a long job), 'auto' (default) or false: kept, never answered synthetically. */
  pendingCalls?: 'auto' | false | null | Iterable<string> | ((items: AgentInputItem[]) => Iterable<string>)
  onReport?: (report: AdapterTurnReport, modelData: ModelInputData) => void | Promise<void>
  /** Called when the digest stood in for a failing summarizer (default: a process warning, TURNFIT_SUMMARY_FALLBACK). */
  onWarning?: (text: string, report: AdapterTurnReport) => void
  /**
   * Default true: the messages (items) the last summary replaced, when the next input
   * holds them again in a row, are sent as that summary instead of being summarized again.
   */
  reuseSummary?: boolean
  /** Throw, instead of warning, when @openai/agents-core is outside the tested range. */
  strictVersion?: boolean
  /**
   * The OpenAI API the model sends the items to, counted in its framing. Default: from the
   * agent's model (OpenAIChatCompletionsModel: 'chat_completions', OpenAIResponsesModel:
   * 'responses'); a model given by name counts as Responses (the SDK's default), so give
   * 'chat_completions' after setOpenAIAPI('chat_completions') or with
   * `new OpenAIProvider({ useResponses: false })`.
   */
  api?: 'responses' | 'chat_completions'
}

/** The RunConfig `callModelInputFilter`: fits the model input before every model call. */
export declare function turnfitInputFilter(options?: TurnfitInputFilterOptions): CallModelInputFilter & { readonly lastReport: AdapterTurnReport | null }

export declare function fitModelInput(
  modelData: ModelInputData,
  agent: { model?: unknown; tools?: unknown[] } | undefined,
  options?: TurnfitInputFilterOptions,
): Promise<{ modelData: ModelInputData; report: AdapterTurnReport }>

/** The OpenAI API the agent's model sends to ('responses', 'chat_completions', or undefined when its model is a name). */
export declare function apiOfAgent(agent: { model?: unknown } | undefined): 'responses' | 'chat_completions' | undefined

export declare const TESTED: Record<string, { min: string; below: string }>
/** The defaults every adapter shares (README, "Adapter defaults"). */
export declare const DEFAULTS: AdapterDefaults
export type { AdapterTurnReport }

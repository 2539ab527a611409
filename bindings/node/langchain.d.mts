// Generated from langchain.d.ts by scripts/esm-types.mjs (the ESM declaration: its imports resolve
// with the "import" condition). Edit the .d.ts, then run node scripts/esm-types.mjs.
// turnfit/langchain: LangChain.js v1 agent middleware (tested with langchain
// 1.5.14 and @langchain/core 1.4.0).
import type { AgentMiddleware } from 'langchain'
import type { BaseMessage } from '@langchain/core/messages'
import type { AdapterBudgetOptions, AdapterDefaults, SummarizerCall, TurnReport, Summarizer } from './index.js'

/** What the adapter adds to the turn report. */
export interface AdapterReport {
  framework: 'langchain' | 'openai-agents'
  /** Messages (system included) or items in and out. */
  messages_in?: number
  messages_out?: number
  items_in?: number
  items_out?: number
  /** Returned as the caller's own objects. */
  unchanged: number
  /** Message or item types the adapter does not know: passed through, counted as text, pinned. */
  unknown_types: { index: number; type: string }[]
  /** How many messages (items) the remembered summary stood for in this call (0: none). */
  reused_summary_for: number
  /** Set when the summarizer failed and the digest stood in. */
  warning?: string
}

export interface AdapterTurnReport extends TurnReport {
  adapter: AdapterReport
}

/** A LangChain chat model (anything with `invoke(messages, options)`). */
export interface InvokableChatModel {
  invoke(input: BaseMessage[], options?: { signal?: AbortSignal }): Promise<unknown>
}

export interface TurnfitMiddlewareOptions extends AdapterBudgetOptions {
  /** The model that summarizes (default: the agent's model), a function of the request, or false for the digest. */
  summarizer?: InvokableChatModel | Summarizer | false | null
  /** Ids of calls awaiting their result (an approval, a long job), 'auto' (default) or false: kept, never answered synthetically. */
  pendingCalls?: 'auto' | false | null | Iterable<string> | ((messages: BaseMessage[]) => Iterable<string>)
  onReport?: (report: AdapterTurnReport, request: unknown) => void | Promise<void>
  /** Called when the digest stood in for a failing summarizer (default: a process warning, TURNFIT_SUMMARY_FALLBACK). */
  onWarning?: (text: string, report: AdapterTurnReport) => void
  /**
   * Also replace the agent state's messages with the fitted history when the turn
   * changed it (a Command with RemoveMessage(REMOVE_ALL_MESSAGES)), so the summary
   * persists. Default false (`DEFAULTS.writeBack`): only the model input is fitted.
   */
  writeBack?: boolean
  /**
   * Default true: the messages (items) the last summary replaced, when the next input
   * holds them again in a row, are sent as that summary instead of being summarized again.
   */
  reuseSummary?: boolean
  /**
   * Default true: the history is kept parsed and counted between calls (a
   * turnfit FitSession), the messages since the last call recognised by
   * identity, so a call costs what changed; the result is the stateless one.
   * false refits the whole history at every call.
   */
  session?: boolean
  /** Throw, instead of warning, when langchain or @langchain/core is outside the tested range. */
  strictVersion?: boolean
  name?: string
}

/** Fits every model call of a `createAgent` agent (its `wrapModelCall`); the agent's state is not changed. */
export declare function turnfitMiddleware(options?: TurnfitMiddlewareOptions): AgentMiddleware & {
  readonly lastReport: AdapterTurnReport | null
  /** Sessions started on a whole history, and calls that reused the previous call's messages; null with `session: false`. */
  readonly sessionStats: { loads: number; steps: number } | null
}

/**
 * The history the middleware keeps between its model calls (a turnfit
 * FitSession; the middleware makes its own). `loads`: sessions started on a
 * whole history; `steps`: calls that reused the previous call's messages.
 */
export declare class ModelRequestSession {
  constructor()
  readonly loads: number
  readonly steps: number
}

/** The conversion and fit one model call gets: the request with `messages` (and `systemMessage`) fitted. */
export declare function fitModelRequest<R extends { messages: BaseMessage[]; systemMessage?: BaseMessage; tools?: unknown[]; model?: unknown }>(
  request: R,
  options?: TurnfitMiddlewareOptions,
): Promise<{ request: R; report: AdapterTurnReport }>

/**
 * The TurnfitError in an error's `cause` chain, or null. LangChain wraps what a
 * middleware throws in a MiddlewareError (`instanceof TurnfitError` is false
 * on it, its `code` undefined); its `cause` is the TurnfitError.
 */
export declare function turnfitError(error: unknown): import('./index.js').TurnfitError | null

export declare const TESTED: Record<string, { min: string; below: string }>
/** The defaults every adapter shares (README, "Adapter defaults"). */
export declare const DEFAULTS: AdapterDefaults
export type { SummarizerCall }

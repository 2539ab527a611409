// turnfit/ai-sdk: the Vercel AI SDK (ai 6) adapter. Structurally typed: no
// import of `ai` (messages are ModelMessage or LanguageModelV3Prompt entries).
import type { AdapterBudgetOptions, AdapterDefaults, TurnReport } from './index.js'

/** An AI SDK message (ModelMessage, or a LanguageModelV3Prompt entry). */
export type AiSdkMessage = { role: 'system' | 'user' | 'assistant' | 'tool'; content: unknown; providerOptions?: unknown }
/** What `modelSummarizer` needs of an AI SDK language model. */
export interface SummarizerModel {
  doGenerate(options: { prompt: unknown[]; maxOutputTokens?: number; providerOptions?: unknown }): PromiseLike<{ content?: Array<{ type: string; text?: string }>; finishReason?: unknown }>
}
export interface AiSdkFitOptions extends AdapterBudgetOptions {
  /** An AI SDK model that writes summaries, or a function (see fitTurn). */
  summarizer?: SummarizerModel | ((request: any) => unknown)
  /** Summarizer request options (`summarizer` of the turn options). */
  summarizerOptions?: Record<string, unknown>
  /** Tools offered to the model (a ToolSet or a provider call's tools), counted. */
  tools?: unknown
  /** generateText's `system`, counted (prepareStep's messages do not hold it). */
  system?: string
  /** Called when the summarizer failed and the digest stood in (default: process.emitWarning); null for silence. */
  onWarning?: ((message: string, report: TurnReport) => void) | null
  onReport?: (report: TurnReport) => void
  /**
   * prepareStep and middleware: send the messages the last summary replaced as
   * that summary while the history still holds them (the turn report's
   * `carry`), instead of summarizing the same span at every step (default true).
   */
  reuseSummary?: boolean
  /**
   * The OpenAI API the prompt is sent to, counted in its framing. Default:
   * from the language model in use (`model.provider`: 'openai.responses' for
   * `openai('gpt-4o')`, 'openai.chat' for `openai.chat(...)`); give it for a
   * model whose provider id does not say (a custom wrapper).
   */
  api?: 'responses' | 'chat_completions'
  /** fitMessages: the language model the messages go to (its API picks the framing, as above). */
  languageModel?: { provider?: string }
}
export declare const TESTED_AI: string
/** The OpenAI API a language model sends to, from its provider id ('responses', 'chat_completions', or undefined). */
export declare function apiOfModel(model: unknown): 'responses' | 'chat_completions' | undefined
/** The defaults every adapter shares (README, "Adapter defaults"). */
export declare const DEFAULTS: AdapterDefaults
export declare function fitMessages<M extends AiSdkMessage>(messages: M[], options: AiSdkFitOptions): Promise<{ messages: M[]; report: TurnReport }>
export declare function prepareStep(options: AiSdkFitOptions): <M extends AiSdkMessage>(step: { messages: M[]; model?: unknown }) => Promise<{ messages: M[] }>
export declare function middleware(options: AiSdkFitOptions): { specificationVersion: 'v3'; transformParams: (o: { params: any; type?: string; model?: unknown }) => Promise<any> }
export declare function modelSummarizer(model: SummarizerModel, options?: { providerOptions?: unknown; maxOutputTokens?: number }): (request: any) => Promise<{ text: string; finishReason?: string }>

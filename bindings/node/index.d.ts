// Types of the public API of `turnfit` (the facade in index.js / index.mjs).
// The JSON shapes follow docs/formats.md; they are written by hand from it
// until schemas/ (generated from the core's serde types) lands, then they
// will be generated from the schemas with a drift check. Fields the core
// adds later are allowed through the index signatures.

export declare const version: string

/** The core's error kinds, spelled as in tests/vectors. */
export type ErrorCode =
  | 'invalid_argument'
  | 'invalid_utf8'
  | 'unknown_encoding'
  | 'unknown_model'
  | 'unknown_token'
  | 'limit_exceeded'
  | 'invalid_json'
  | 'does_not_fit'
  | 'io'
  | 'unsafe_path'
  | 'cycle_detected'
  | 'depth_exceeded'
  | 'internal'

export declare const ERROR_CODES: readonly ErrorCode[]

/** A failure reported by the core; `message` is the core's message. */
export declare class TurnfitError extends Error {
  readonly name: 'TurnfitError'
  readonly code: ErrorCode
  constructor(code: ErrorCode, message: string)
}

/** Text: a JS string (lone surrogates count as U+FFFD) or UTF-8 bytes. */
export type Text = string | Uint8Array

export type EncodingName = 'o200k_base' | 'cl100k_base' | 'p50k_base' | 'r50k_base' | (string & {})

export interface TokenizerOptions {
  /** `'ordinary'` (default): `<|endoftext|>` is plain text; `'recognize'`: special tokens are single ids. */
  special?: 'ordinary' | 'recognize'
}

export interface ForModelOptions extends TokenizerOptions {
  /** Count an unknown model with this encoding (`model.exact` is then false). */
  fallbackEncoding?: EncodingName
}

export interface AsyncOptions {
  signal?: AbortSignal
}

export interface CountLimit {
  /** The exact count when not exceeded; otherwise where counting stopped (> limit). */
  tokens: number
  exceeded: boolean
}

export interface Truncation {
  text: string
  tokens: number
  originalTokens: number
  removedTokens: number
  truncated: boolean
}

export interface TruncateOptions {
  side?: 'head' | 'tail' | 'both'
  /**
   * For `side: 'both'`: a template where `{removed}` becomes the number of
   * removed tokens. Omitted: the default marker; `''` or `null`: no marker.
   */
  marker?: string | null
}

export interface ModelInfo {
  model: string
  encoding: string
  exact: boolean
  context_window: number | null
  max_output: number | null
  [field: string]: unknown
}

export interface TokenizerInfo {
  encoding: string
  specialTokens: 'ordinary' | 'recognize'
  vocabSize: number
  memoryBytes: number
  model: ModelInfo | null
}

/** tiktoken's special-token sets: `'all'` or the token texts. */
export type SpecialSet = 'all' | readonly string[] | ReadonlySet<string>

export interface SpecialOptions {
  /** Special tokens encoded as their ids (default: none). */
  allowedSpecial?: SpecialSet
  /** Text whose presence fails the call (default when either is given: `'all'` not allowed). */
  disallowedSpecial?: SpecialSet
}

export interface DecodedWithOffsets {
  text: string
  offsets: number[]
}

export interface SpecialToken {
  token: string
  id: number
}

export declare class Tokenizer {
  constructor(encoding: EncodingName, options?: TokenizerOptions)
  static forModel(model: string, options?: ForModelOptions): Tokenizer
  readonly info: TokenizerInfo
  /** With `allowedSpecial` / `disallowedSpecial`, tiktoken's special-token rules apply. */
  countTokens(text: Text, options?: SpecialOptions): number
  countUntilLimit(text: Text, limit: number): CountLimit
  /** `false` when over the limit, else the count (gpt-tokenizer's habit). */
  isWithinTokenLimit(text: Text, limit: number): false | number
  /**
   * Token ids. A `Uint8Array` is UTF-8 text (`invalid_utf8` otherwise); see
   * `encodeBytes` for bytes that need not be UTF-8. With `allowedSpecial` /
   * `disallowedSpecial`, tiktoken's rules: disallowed special-token text fails
   * with `invalid_argument`, naming it and its byte offset.
   */
  encode(text: Text, options?: SpecialOptions): Uint32Array
  /** `replace` (U+FFFD, the default), `strict` (`invalid_utf8`) or `ignore` (drop bytes that are not UTF-8). */
  decode(ids: Uint32Array | readonly number[], options?: { mode?: 'replace' | 'strict' | 'ignore' }): string
  /** The exact bytes of `ids` (they may end inside a character). */
  decodeBytes(ids: Uint32Array | readonly number[]): Uint8Array
  /** The text and, per token, where it starts in characters (code points), as tiktoken's `decode_with_offsets`. */
  decodeWithOffsets(ids: Uint32Array | readonly number[]): DecodedWithOffsets
  /** The bytes of one token, ordinary or special (`unknown_token` otherwise). */
  tokenBytes(id: number): Uint8Array
  /** The id of the single token whose bytes are exactly these (a string as UTF-8); `unknown_token` when none. */
  tokenId(token: Text): number
  /** The ids of any bytes, UTF-8 or not (tiktoken's `_encode_bytes`); special-token text is ordinary text. */
  encodeBytes(bytes: Uint8Array): Uint32Array
  /** The encoding's special tokens and their ids, in the encoding's order. */
  specialTokenList(): SpecialToken[]
  isSpecialToken(id: number): boolean
  truncate(text: Text, maxTokens: number, options?: TruncateOptions): Truncation
  assemble(request: AssembleRequest | string): AssembleResult
  countTokensAsync(text: Text, options?: AsyncOptions): Promise<number>
  encodeAsync(text: Text, options?: AsyncOptions): Promise<Uint32Array>
}

export interface FileTokenizerOptions {
  /** Split rules for a tiktoken-format file: a preset (`llama3`, `qwen2`, ...) or a regex. */
  pattern?: string
  /** `ordinary` (default: special-token text is text) or `recognize`. */
  special?: 'ordinary' | 'recognize'
}

export interface FileTokenizerInfo {
  name: string
  vocabSize: number
  specialTokens: 'ordinary' | 'recognize'
  /** Whether `encode(text, { addSpecial: true })` can add the file's BOS/EOS. */
  addSpecial: boolean
  /** GGUF `<architecture>.context_length`, else null. */
  contextLength: number | null
  /** GGUF `tokenizer.ggml.pre`, else null. */
  pre: string | null
  hasChatTemplate: boolean
}

/**
 * A tokenizer loaded from a model's own file: an HF tokenizer.json, a GGUF (metadata
 * only, any size) or a tiktoken-format file with `pattern`. Ids equal HF tokenizers'.
 */
export declare class FileTokenizer {
  constructor(path: string | URL, options?: FileTokenizerOptions)
  static fromBytes(bytes: Uint8Array, options?: FileTokenizerOptions & { name?: string }): FileTokenizer
  readonly info: FileTokenizerInfo
  /** Tokens of `text`, without BOS/EOS. */
  countTokens(text: string): number
  encode(text: string, options?: { addSpecial?: boolean }): Uint32Array
  decode(ids: Uint32Array | readonly number[]): string
}

export interface CountOptions {
  model?: string
  encoding?: EncodingName
}

/** Counts with a tokenizer cached per model / encoding (default `o200k_base`). */
export declare function countTokens(text: Text, options?: CountOptions): number
export declare function countTokensAsync(text: Text, options?: CountOptions & AsyncOptions): Promise<number>
/** Exact prompt tokens of a whole conversation, chat framing included. */
export declare function countConversation(conversation: Conversation | string, options?: { model?: string }): number
export declare function lookupModel(model: string): ModelInfo
/**
 * Registers model profiles (one, an array of them, or JSON text; the core's
 * schema, schemas/model-profile.json) in turnfit's registry for this process
 * (shared by every Worker), used by every call that takes a model name;
 * returns how many names were registered. A profile with an existing name
 * replaces it.
 *
 * `count`: the host's own counter for a model whose tokenizer is not public,
 * with one profile. Every window, `fit`, `fitTurn` and `countConversation`
 * for that model then counts text with it (framing stays the model's). It
 * is called synchronously, on the JavaScript thread that registered it,
 * while turnfit holds what it counts for: it must not call back into
 * turnfit (such a call throws `invalid_argument`). A throw, a result that is
 * not a non-negative integer number, or one above the text's UTF-8 bytes
 * plus 64 fails the counting call with `invalid_argument` naming the model;
 * so does a count needed off that thread (`fitAsync`, `compactAsync`,
 * another Worker). Registering the name again without `count` removes it.
 */
export declare function registerModel(profile: ProfileInput | string, count?: ((text: string) => number) | null): number
/**
 * A model known by its own files (Python's `register_model(name,
 * tokenizer=...)`): its tokenizer.json (the chat template beside it) or
 * GGUF, or `chatTemplate` given; `contextWindow` is the window the server
 * allocated (Ollama's `num_ctx`, llama.cpp's `n_ctx`, vLLM's
 * `max_model_len`). Every fit, turn and window for `name` then reports the
 * template's count (`exact: true`); its conversations are OpenAI Chat.
 * Returns the registry entry (as `lookupModel`).
 */
export declare function registerModelFiles(
  name: string,
  files: {
    /** One of `tokenizer` (a tokenizer.json or GGUF path), `ollama` (an Ollama model name) and `hf` (a Hugging Face repo id or folder). */
    tokenizer?: string
    ollama?: string
    /** The Ollama store [default: $OLLAMA_MODELS, else ~/.ollama/models]. */
    ollamaModels?: string
    hf?: string
    /** The hub cache [default: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub]. */
    hfCache?: string
    contextWindow: number
    chatTemplate?: string | null
    maxOutputTokens?: number | null
    templateKwargs?: Record<string, unknown> | null
  },
): Record<string, unknown>
/** Every registry entry, built-in and registered, with its `source`. */
export declare function listModels(): RegistryList

// ------------------------------------------------------------ conversations

// Options and reports: generated from schemas/ (the core's types) into
// schema-types.d.ts by scripts/schema-types.mjs; drift-checked in test.sh.
import type {
  Budget, Preflight, Change, Issue, Policy, CompactReport, SummaryRequest, CompactOutcome,
  FitOptions, FitReport, AssembleRequest, AssembleResult, Section as AssembleSection,
  TurnReport, SummarizerCall, ProfileInput, ModelProfile, RegistryList, RegistryEntry,
} from './schema-types'
export type {
  Budget, Preflight, Change, Issue, Policy, CompactReport, SummaryRequest, CompactOutcome,
  FitOptions, FitReport, AssembleRequest, AssembleResult, AssembleSection,
  TurnReport, SummarizerCall, ProfileInput, ModelProfile, RegistryList, RegistryEntry,
}

/** A message in OpenAI Chat Completions or Anthropic Messages shape (or an OpenAI Responses item); unknown fields are preserved. */
export interface Message {
  role: string
  content?: unknown
  [field: string]: unknown
}

export interface Conversation {
  messages: Message[]
  system?: unknown
  tools?: unknown[]
  [field: string]: unknown
}

export declare class ContextWindow {
  constructor(model: string, budget?: Budget | string)
  load(conversation: Conversation | string): this
  /** Appends one message; returns its tokens. */
  push(message: Message | string): number
  preflight(newInput?: Message | string): Preflight
  validate(): Issue[]
  repair(options?: { syntheticResult?: string }): Change[]
  readonly conversation: Conversation
  conversationJson(): string
  readonly messageTokens: number[]
  compact(policy?: Policy | string): CompactOutcome
  compactAsync(policy?: Policy | string, options?: AsyncOptions): Promise<CompactOutcome>
  /**
   * One turn on this window (the stateful `fitTurn`): below the trigger it
   * answers from the cached counts and changes nothing (`fired: false`); over
   * it, the window compacts with `summarizer` writing the summary (failures
   * fall back to the digest, as for `fitTurn`) and takes the result:
   * `conversation` is then the request to send. The window holds its model
   * and budget; `options` setting them throws (`invalid_argument`), as does
   * a window changed while the summarizer ran (nothing applied).
   */
  fitTurn(summarizer?: Summarizer | null, options?: WindowTurnOptions | string): Promise<TurnReport>
  applySummary(id: string, summary: string): CompactReport
  /** Records the provider's reported prompt tokens; returns reported / counted. */
  calibrate(reportedPromptTokens: number): number
  /**
   * Sets (null: clears) the listener for this window's events. It runs on the JS
   * thread when the call that raised them returns (compactAsync: before its
   * promise resolves); an exception it throws reaches that call's caller.
   */
  onEvent(listener: ((event: WindowEvent) => void) | null): this
}

/** docs/formats.md, "Events". */
export type WindowEvent =
  | {
      kind: 'compacted'
      strategy: 'recency' | 'relevance' | 'hybrid' | 'summarize'
      tokens_before: number
      tokens_after: number
      messages_dropped: number
      results_masked: number
      results_truncated: number
      summarized: boolean
      within_target: boolean
    }
  | {
      kind: 'repaired'
      results_added: number
      results_removed: number
      results_moved: number
      messages_removed: number
      tokens_before: number
      tokens_after: number
    }
  | {
      kind: 'budget_crossed'
      operation: 'load' | 'push' | 'replace' | 'repair'
      from: 'fits' | 'should_compact' | 'overflow'
      to: 'fits' | 'should_compact' | 'overflow'
      total_tokens: number
      trigger_tokens: number
      limit: number
    }

export declare function fit(conversation: Conversation | string, options: FitOptions | string): { conversation: Conversation; report: FitReport }
/** The conversation text goes to the core untouched and comes back as text. */
export declare function fitJson(conversation: string, options: FitOptions | string): { conversation: string; report: string }
export declare function fitAsync(
  conversation: Conversation | string,
  options: FitOptions | string,
  asyncOptions?: AsyncOptions,
): Promise<{ conversation: Conversation; report: FitReport }>

// ------------------------------------------------------------ turns

/**
 * The host's model as a summarizer: called with each request (send
 * `request.prompt` to `request.model`, reply with at most
 * `request.max_summary_tokens` tokens of plain text). Returns the text, or an
 * object with a string `content` or `text` (an AI SDK result, a LangChain
 * message), or a promise of either.
 */
export type Summarizer = (
  request: SummarizerCall,
) => string | { content: string } | { text: string } | Promise<string | { content: string } | { text: string }>

/**
 * One agent turn: the request to send now, repaired and within the budget, in
 * the input's shape, with the host's model summarizing when the policy says
 * so. A summarizer that throws, rejects, takes longer than
 * `summarizer.timeout_ms` (default 120000; it is abandoned, not awaited),
 * replies with blank text, far too much, or something other than text never
 * fails the turn: the deterministic digest stands in and
 * `report.summary.fallback.reason` says why. Rejects with `TurnfitError`
 * (`does_not_fit`) only when the system prompt, tools, task, newest user
 * message and pins alone exceed the budget.
 */
/** A window turn's options: the fit options without what the window holds. */
export type WindowTurnOptions = Pick<FitOptions, 'policy' | 'summarizer' | 'trigger_messages'> & { model?: string }

export declare function fitTurn(
  conversation: Conversation | string,
  options: FitOptions | string,
  summarizer?: Summarizer | null,
): Promise<{ conversation: Conversation; report: TurnReport }>

/**
 * A history fitted turn after turn, kept parsed and counted in the core
 * between turns: a step reads and counts only what changed. `update(keep,
 * newMessages)` keeps the first `keep` messages and appends `newMessages`;
 * `fitTurn` runs the same turn as `fitTurn` on the whole history and resolves
 * to `conversation: null` when the turn left the history as it is. OpenAI
 * Chat and AI SDK messages update step by step; other formats (and `keep`
 * past `length`) throw `invalid_argument`: start a new session instead.
 */
export declare class FitSession {
  constructor(conversation?: Conversation | Json[] | string | null, options?: { format?: string | null })
  /** The messages the session holds. */
  readonly length: number
  update(keep: number, newMessages: Json[] | string): this
  fitTurn(
    options: FitOptions | string,
    summarizer?: Summarizer | null,
  ): Promise<{ conversation: Conversation | null; report: TurnReport }>
}

// ------------------------------------------------------------ agent primitives

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

export declare class SkillSet {
  private constructor()
  static open(root: string, options?: object | string): SkillSet
  static openAsync(root: string, options?: object | string, asyncOptions?: AsyncOptions): Promise<SkillSet>
  list(): { skills: { name: string; [field: string]: unknown }[]; [field: string]: unknown }
  body(name: string): { name: string; text: string; tokens: number }
  renderIndex(options?: object | string): { text: string; [field: string]: unknown }
}

export declare const handoff: {
  validate(handoff: object | string): { [field: string]: Json }
  render(handoff: object | string, options?: object | string): { text: string; [field: string]: unknown }
  filter(conversation: Conversation | string, options?: object | string): { conversation: Conversation; changes: unknown[]; removed_tools: unknown[] }
}

export interface Classification {
  retryable: boolean
  /** The error's context as given (null when not). */
  agent_id: string | null
  workflow_id: string | null
  metadata: Record<string, unknown> | null
  [field: string]: unknown
}

/** Who met an error (document 000's ErrorContext); every field optional. */
export interface ErrorContext {
  agent_id?: string
  workflow_id?: string
  metadata?: Record<string, unknown>
}

export interface FailureCounts {
  by_agent: Record<string, number>
  by_workflow: Record<string, number>
  unattributed: number
}

export declare function classifyError(request: ({ provider: string; status: number; headers?: Record<string, string>; body?: string } & ErrorContext) | string): Classification
export declare function backoff(request: object | string): { decision: 'retry'; delay_ms: number } | { decision: 'give_up'; reason: string }

export type BreakerState = 'closed' | 'open' | 'half_open'

export declare class CircuitBreaker {
  constructor(config?: { failure_threshold?: number; cool_down_ms?: number; half_open_max_calls?: number; success_threshold?: number } | string)
  allow(key: string, atMs?: number): boolean
  /** Returns the state after recording. */
  recordSuccess(key: string, atMs?: number): BreakerState
  /** With a context, the failure is also counted under its agent and workflow. */
  recordFailure(key: string, atMs?: number, context?: ErrorContext | string): BreakerState
  failureCounts(): FailureCounts
  state(key: string, atMs?: number): { state: BreakerState; [field: string]: unknown }
}

/** Immutable: `enter` returns a new stack, so parallel branches are safe. */
export declare class CallStack {
  constructor(maxDepth: number)
  static fromJSON(value: object | string): CallStack
  enter(agent: string): CallStack
  parent(): CallStack
  contains(agent: string): boolean
  readonly chain: string
  toJSON(): { agents: string[]; max_depth: number; [field: string]: unknown }
}

export type Outcome = 'success' | 'failed' | 'timeout' | 'cancelled'
export declare const OUTCOMES: readonly Outcome[]

/** What a host knows when a span ends besides its outcome. */
export interface SpanEnd {
  output_bytes?: number
  error?: string | null
  /** 1-64 bytes of `[a-z0-9_]`, e.g. a classification's category. */
  error_category?: string | null
  input_tokens?: number | null
  output_tokens?: number | null
  /** At most 16 keys; values are strings (<= 256 bytes), numbers, booleans or null. */
  metadata?: { [key: string]: string | number | boolean | null }
}

export declare class Tracer {
  constructor(config?: object | string)
  /** Starts a span; returns its id. Times are µs (default: now). */
  start(tool: string, info?: { tool_call_id?: string; [field: string]: unknown }, inputBytes?: number, atUs?: number): number
  end(id: number, outcome: Outcome, outputBytes?: number, error?: string | null, atUs?: number): void
  /** `end` with token usage, an error category and metadata (every field optional; caps in the core's `trace::SpanEnd`). */
  endWith(id: number, outcome: Outcome, end?: SpanEnd | string | null, atUs?: number): void
  overdue(atUs?: number): { overdue: unknown[]; interrupted_results: { tool_call_id: string; [field: string]: unknown }[] }
  expire(atUs?: number): { overdue: unknown[]; interrupted_results: { tool_call_id: string; [field: string]: unknown }[] }
  metrics(): { tool: string; count: number; successes: number; errors: number; timeouts: number; cancelled: number; in_flight: number; [field: string]: unknown }[]
  recent(): { tool: string; outcome: Outcome; count: number; [field: string]: unknown }[]
  export(atUs?: number): { [field: string]: Json }
}

export declare const toolset: {
  report(request: object | string): { tool_count: number; agents: { agent: string; tools: string[]; [field: string]: unknown }[]; [field: string]: unknown }
  select(request: object | string, agent: string): Json[]
}

/**
 * The budget and defaults every framework adapter (turnfit/ai-sdk,
 * turnfit/langchain, turnfit/openai-agents) takes, by the core's names
 * camel-cased. Unset: the shared defaults (`DEFAULTS` of each adapter, the
 * README's table).
 */
export interface AdapterBudgetOptions {
  /** The model whose encoding and framing count (default: the framework's model name, else gpt-4o). */
  model?: string
  /** The model's context window: prompt plus reserved output (default: the model's). */
  maxTokens?: number
  /** Tokens kept free for the reply (default: the model's maximum output, at most a quarter of maxTokens). */
  reserveOutput?: number
  /** Compact once prompt plus reserved output reach this share of maxTokens (default 0.8). */
  triggerRatio?: number
  /** ...down to this share of maxTokens, reserved output included (default 0.5); null: no target, only what exceeds the budget is compacted. */
  targetRatio?: number | null
  /** Compact also over this many messages. */
  triggerMessages?: number
  /** The compaction policy (default strategy 'summarize'). */
  policy?: Policy
  /** Any other core fit option (snake_case); the names above win, and must not disagree with it. */
  fit?: FitOptions
  /**
   * Ids of calls awaiting their result (an approval, a long job), a function
   * of the history giving them, 'auto' (default: the newest model reply's calls
   * with no result after it) or false: kept, never answered synthetically.
   */
  pendingCalls?: 'auto' | false | null | Iterable<string> | ((history: any[]) => Iterable<string>)
}

/** The shared adapter defaults. */
export interface AdapterDefaults {
  readonly strategy: 'summarize'
  readonly triggerRatio: number
  readonly targetRatio: number
  readonly pendingCalls: 'auto'
  readonly writeBack: boolean
}

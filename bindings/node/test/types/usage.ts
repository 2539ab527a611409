// Type-checked by `tsc -p test/types` (never run): the public .d.ts must
// accept what the README shows and reject what it should.
import {
  Tokenizer, countTokens, TurnfitError, ContextWindow, fit, fitJson, fitAsync, CallStack,
  CircuitBreaker, Tracer, SkillSet, type ErrorCode, type BreakerState, type CompactOutcome,
  fitTurn, FitSession, type TurnReport, type SummarizerCall, registerModel, listModels, type ModelProfile,
} from '../../index.js'
import { prepareStep as aiPrepareStep, middleware as aiMiddleware, fitMessages } from '../../ai-sdk.js'

const t = new Tokenizer('o200k_base', { special: 'ordinary' })
const n: number = t.countTokens('hello')
const b: number = t.countTokens(new Uint8Array([104, 105]))
const ids: Uint32Array = t.encode('hello')
const s: string = t.decode(ids, { mode: 'strict' })
const within: false | number = t.isWithinTokenLimit('hello', 10)
const cut = t.truncate('long text', 5, { side: 'both', marker: null })
const removed: number = cut.removedTokens
const m = Tokenizer.forModel('gpt-4o').info.model
const one: number = countTokens('hi', { model: 'gpt-4o' })
const p: Promise<number> = t.countTokensAsync('x', { signal: new AbortController().signal })

try {
  Tokenizer.forModel('gtp-4o')
} catch (e) {
  if (e instanceof TurnfitError) {
    const c: ErrorCode = e.code
    // @ts-expect-error: not an error code
    const bad: ErrorCode = 'no_such_code'
  }
}

const w = new ContextWindow('gpt-4o', { context_window: 8000 })
w.load({ messages: [{ role: 'user', content: 'hi' }] })
const verdict: 'fits' | 'should_compact' | 'overflow' = w.preflight().verdict
const out: CompactOutcome = w.compact({ strategy: 'summarize' })
if (out.status === 'needs_summary') w.applySummary(out.request.id, 'summary')
else out.report.tokens_after.toFixed()
w.onEvent((e) => {
  if (e.kind === 'compacted') e.tokens_after.toFixed()
  else if (e.kind === 'budget_crossed') e.to.toUpperCase()
}).onEvent(null)

const r = fit({ messages: [] }, { model: 'gpt-4o', max_tokens: 1000 })
r.report.tokens_after.toFixed()
const j: string = fitJson('{"messages":[]}', { model: 'gpt-4o' }).conversation
const fa: Promise<{ report: { changes: unknown[] } }> = fitAsync({ messages: [] }, { model: 'gpt-4o' })

const st: BreakerState = new CircuitBreaker({ failure_threshold: 3 }).recordFailure('openai')
const stack: CallStack = new CallStack(5).enter('planner').enter('coder')
const chain: string = stack.chain
const tr = new Tracer()
tr.end(tr.start('read_file', { tool_call_id: 'c1' }), 'success')
// @ts-expect-error: not an outcome
tr.end(1, 'finished')
const skills: Promise<SkillSet> = SkillSet.openAsync('examples/data/skills')
// @ts-expect-error: numbers are not text
t.countTokens(42)

export { n, b, s, within, removed, m, one, p, verdict, j, fa, st, chain, skills }

// The byte API and Tracer#endWith (conversion of the core's calls).
{
  const t = new Tokenizer('cl100k_base')
  const b: Uint8Array = t.tokenBytes(0)
  const id: number = t.tokenId(b) + t.tokenId('hello')
  const raw: Uint32Array = t.encodeBytes(new Uint8Array([0x68, 0xc3]))
  const d: { text: string; offsets: number[] } = t.decodeWithOffsets(raw)
  const s: string = t.decode([id], { mode: 'ignore' })
  const ids: Uint32Array = t.encode(s, { allowedSpecial: 'all', disallowedSpecial: new Set(['<|endofprompt|>']) })
  const n: number = t.countTokens(d.text, { allowedSpecial: ['<|endoftext|>'] })
  const list: { token: string; id: number }[] = t.specialTokenList()
  const special: boolean = t.isSpecialToken(ids[0] ?? n + list.length)
  const tr = new Tracer()
  tr.endWith(tr.start('search'), special ? 'failed' : 'success', { input_tokens: 3, metadata: { model: 'gpt-4o' } })
}

// fitTurn: an async or sync summarizer returning text or { content } / { text }.
async function turns(): Promise<void> {
  const opts = { model: 'gpt-4o', max_tokens: 16000, policy: { strategy: 'summarize' as const }, summarizer: { timeout_ms: 200 } }
  const a = await fitTurn({ messages: [] }, opts, async (req: SummarizerCall) => `summary of ${req.prompt_tokens} tokens`)
  const r: TurnReport = a.report
  const reason: string | undefined = r.summary?.fallback?.reason
  await fitTurn({ messages: [] }, opts, () => ({ content: reason ?? '' }))
  await fitTurn({ messages: [] }, opts, async () => ({ text: 'x' }))
  await fitTurn({ messages: [] }, opts)
  // A session: update with what changed, then the same turn; conversation null when unchanged.
  const s = new FitSession([{ role: 'user', content: 'hi' }])
  const held: number = s.update(1, [{ role: 'assistant', content: 'hello' }]).length
  const step = await s.fitTurn(opts, async (req: SummarizerCall) => req.prompt)
  const sr: TurnReport = step.report
  if (step.conversation !== null) fit(step.conversation, opts)
  // @ts-expect-error keep is a number
  s.update('1', [])
  // @ts-expect-error a summarizer returns text, not a number
  await fitTurn({ messages: [] }, opts, () => 42)
  // The stateful form on a window: its options leave out what the window holds.
  const wr: TurnReport = await w.fitTurn(async (req: SummarizerCall) => `${req.piece}`, { policy: { strategy: 'summarize' } })
  const fired: boolean = wr.fired
  await w.fitTurn(null, { trigger_messages: fired ? 40 : 20 })
  // @ts-expect-error the window holds its budget
  await w.fitTurn(null, { max_tokens: 100 })
}
void turns

// turnfit/ai-sdk: structurally typed, no import of `ai`.
async function aiSdk(): Promise<void> {
  const step = aiPrepareStep({ maxTokens: 32000, model: 'gpt-4o' })
  const msgs = [{ role: 'user' as const, content: 'hi' }]
  const r = await step({ messages: msgs })
  r.messages[0].content satisfies string
  const mw = aiMiddleware({ maxTokens: 32000, onWarning: null })
  mw.specificationVersion satisfies 'v3'
  const f = await fitMessages(msgs, { maxTokens: 1000 })
  f.report.tokens_after satisfies number
  // maxTokens defaults to the model's context window, as in every adapter
  aiPrepareStep({ model: 'gpt-4o' })
  // @ts-expect-error maxTokens is a number
  aiPrepareStep({ maxTokens: '32000' })
}
void aiSdk

// Custom models and host counters.
const profile: ModelProfile = { name: 'house-llm', encoding: 'o200k_base', context_window: 8000, exact: false }
const registered: number = registerModel(profile, (text: string) => Math.ceil(text.length / 4))
registerModel([profile, { ...profile, name: 'house-llm-2' }])
registerModel(JSON.stringify(profile))
const sources: string[] = listModels().map((e) => e.source)
// @ts-expect-error an unknown encoding name
registerModel({ name: 'x', encoding: 'o300k', exact: false })
// @ts-expect-error a counter returns a number
registerModel(profile, (text: string) => text)

'use strict'
// Every file in tests/vectors through the public API of the package, printing
// N/N per file. A case this binding cannot run would be listed in PENDING
// with its reason and printed; none is today.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const ck = require('..')

const ROOT = path.resolve(__dirname, '../../..')
const DIR = path.join(ROOT, 'tests/vectors')

// name -> reason. Printed, counted, never silently dropped.
const PENDING = new Map()

const tokenizers = new Map()
function tok(input) {
  const key = `${input.encoding}/${input.special || 'ordinary'}`
  if (!tokenizers.has(key)) tokenizers.set(key, new ck.Tokenizer(input.encoding, { special: input.special || 'ordinary' }))
  return tokenizers.get(key)
}

const fileTokenizers = new Map()
function fileTok(input) {
  const special = input.special || 'ordinary'
  const key = `${input.file}/${special}`
  if (!fileTokenizers.has(key)) fileTokenizers.set(key, new ck.FileTokenizer(path.join(DIR, input.file), { special }))
  return fileTokenizers.get(key)
}

function errorOf(f) {
  try {
    return f()
  } catch (e) {
    if (e instanceof ck.TurnfitError) return { error: e.code }
    throw e
  }
}

function subset(got, expected) {
  const out = {}
  for (const k of Object.keys(expected)) out[k] = got[k]
  return out
}

const ops = {
  // tests/vectors/models.json: the fields of the built-in registry's answer
  // that the vector names.
  model_lookup(i) {
    return errorOf(() => {
      const m = ck.lookupModel(i.model)
      const out = {}
      for (const k of ['family', 'encoding', 'context_window', 'max_output_tokens', 'exact', 'source']) out[k] = m[k]
      return out
    })
  },
  // tests/vectors/file_tokenizer.json: tokenizers loaded from tests/vectors/files/.
  file_encode(i) {
    const t = fileTok(i)
    return { ids: Array.from(t.encode(i.text, { addSpecial: i.add_special })), count: t.countTokens(i.text) }
  },
  file_decode(i) {
    return errorOf(() => ({ text: fileTok(i).decode(i.ids) }))
  },
  encode(i) {
    const t = tok(i)
    const ids = Array.from(t.encode(i.text))
    return { ids, count: t.countTokens(i.text) }
  },
  decode(i) {
    return errorOf(() => ({ text: tok(i).decode(i.ids, { mode: i.mode }) }))
  },
  count_until_limit(i, expected) {
    const r = tok(i).countUntilLimit(i.text, i.limit)
    const within = tok(i).isWithinTokenLimit(i.text, i.limit)
    if (r.exceeded) {
      assert.ok(r.tokens >= expected.tokens_min, `stopped at ${r.tokens} < tokens_min ${expected.tokens_min}`)
      assert.equal(within, false)
      return { exceeded: true, tokens_min: expected.tokens_min }
    }
    assert.equal(within, r.tokens)
    return { tokens: r.tokens, exceeded: false }
  },
  truncate(i) {
    // An explicit "" in the vector is "no marker"; absent is the default.
    const o = { side: i.side }
    if (i.marker !== undefined) o.marker = i.marker
    return errorOf(() => {
      const r = tok(i).truncate(i.text, i.max_tokens, o)
      return {
        text: r.text,
        tokens: r.tokens,
        original_tokens: r.originalTokens,
        removed_tokens: r.removedTokens,
        truncated: r.truncated,
      }
    })
  },
  count_conversation(i) {
    return errorOf(() => ({ prompt_tokens: ck.countConversation(i.conversation, { model: i.model || 'gpt-4o' }) }))
  },
  preflight(i) {
    return errorOf(() => new ck.ContextWindow(i.model || 'gpt-4o', i.budget).load(i.conversation).preflight())
  },
  repair(i) {
    return errorOf(() => {
      const w = new ck.ContextWindow(i.model || 'gpt-4o').load(i.conversation)
      const issues = w.validate()
      const changes = w.repair()
      return { issues, conversation: w.conversation, changes }
    })
  },
  fit(i) {
    return errorOf(() => ck.fit(i.conversation, i.options))
  },
  skills_list(i) {
    return errorOf(() => ck.SkillSet.open(path.join(ROOT, i.root), i.options).list())
  },
  skills_body(i) {
    return errorOf(() => ck.SkillSet.open(path.join(ROOT, i.root), i.options).body(i.name))
  },
  skills_index(i) {
    return errorOf(() => ck.SkillSet.open(path.join(ROOT, i.root), i.options).renderIndex(i.index_options))
  },
  handoff_validate(i) {
    return errorOf(() => ck.handoff.validate(i.handoff))
  },
  handoff_render(i) {
    return errorOf(() => ck.handoff.render(i.handoff, i.options))
  },
  handoff_filter(i) {
    return errorOf(() => ck.handoff.filter(i.conversation, i.options))
  },
  assemble(i) {
    return errorOf(() => tok(i).assemble(i.request))
  },
  classify(i, expected) {
    if (i.fixture) {
      const onDisk = fs.readFileSync(path.join(ROOT, i.fixture), 'utf8')
      assert.equal(onDisk, i.body, `${i.fixture} differs from the vector's body`)
    }
    const { fixture, ...req } = i
    const got = errorOf(() => ck.classifyError(req))
    return subset(got, expected)
  },
  backoff(i) {
    return errorOf(() => ck.backoff(i))
  },
  breaker(i) {
    const b = new ck.CircuitBreaker(i.config)
    const results = i.ops.map(([op, at]) => {
      switch (op) {
        case 'allow': return b.allow('k', at)
        case 'success': return b.recordSuccess('k', at)
        case 'failure': return b.recordFailure('k', at)
        case 'state': return b.state('k', at).state
        default: throw new Error(`unknown breaker op ${op}`)
      }
    })
    return { results }
  },
  callstack(i) {
    return errorOf(() => {
      let s = new ck.CallStack(i.max_depth)
      for (const a of i.enter) s = s.enter(a)
      return s.toJSON()
    })
  },
  trace(i) {
    const t = new ck.Tracer(i.config)
    const ids = []
    const interrupted = []
    const eventErrors = []
    i.events.forEach((e, n) => {
      try {
        switch (e[0]) {
          case 'start':
            ids.push(undefined)
            ids[ids.length - 1] = t.start(e[1], e[2], e[3], e[4])
            break
          case 'end': {
            const id = ids[e[1] - 1]
            // A start that failed has no id; the core's "no such span" is
            // reached with an id no span can have.
            t.end(id === undefined ? Number.MAX_SAFE_INTEGER : id, e[2], e[3], e[4], e[5])
            break
          }
          case 'expire':
            for (const r of t.expire(e[1]).interrupted_results) interrupted.push(r.tool_call_id)
            break
          default:
            throw new Error(`unknown trace event ${e[0]}`)
        }
      } catch (x) {
        if (!(x instanceof ck.TurnfitError)) throw x
        eventErrors.push([n, x.code])
      }
    })
    const tools = {}
    for (const m of t.metrics()) {
      const v = { count: m.count, successes: m.successes, errors: m.errors, timeouts: m.timeouts, cancelled: m.cancelled, in_flight: m.in_flight }
      if (m.duration_us) for (const k of ['min', 'max', 'p50', 'p95', 'p99']) v[k] = m.duration_us[k]
      tools[m.tool] = v
    }
    const recent = t.recent().map((r) => [r.tool, r.outcome, r.count])
    return { tools, recent, interrupted, event_errors: eventErrors }
  },
  toolset(i) {
    return errorOf(() => {
      if (i.select !== undefined) return { selected: ck.toolset.select(i.request, i.select) }
      const r = ck.toolset.report(i.request)
      const agents = {}
      for (const a of r.agents) agents[a.agent] = a.tools
      return { tool_count: r.tool_count, agents }
    })
  },
}

const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json') && !f.endsWith('.cases.json')).sort()

test('tests/vectors has files', () => {
  assert.ok(files.length >= 5, `only ${files.length} vector files`)
})

const summary = []
for (const file of files) {
  // Integers beyond 2^53 (u64 backoff seeds) are read as BigInt, which the
  // package serializes back exactly. The files are pretty-printed, so a
  // number value sits alone after its key on one line.
  const raw = fs.readFileSync(path.join(DIR, file), 'utf8').replace(/^(\s*"[a-z_]+": )(\d{16,})(,?)$/gm, (m, k, d, c) =>
    Number.isSafeInteger(Number(d)) ? m : `${k}"\\u0000bigint:${d}"${c}`)
  const doc = JSON.parse(raw, (_k, v) => (typeof v === 'string' && v.startsWith('\u0000bigint:') ? BigInt(v.slice(8)) : v))
  test(`vectors: ${file}`, () => {
    assert.equal(doc.format, 1)
    let passed = 0
    const failures = []
    const pending = []
    for (const v of doc.vectors) {
      if (PENDING.has(v.name)) {
        pending.push(`${v.name}: ${PENDING.get(v.name)}`)
        continue
      }
      const run = ops[v.op]
      if (!run) {
        failures.push(`${v.name}: op ${v.op} not mapped in the Node runner`)
        continue
      }
      try {
        const got = run(v.input, v.expected)
        assert.deepStrictEqual(got, v.expected)
        passed++
      } catch (e) {
        failures.push(`${v.name}: ${e.message.split('\n').slice(0, 12).join('\n')}`)
      }
    }
    const line = `vectors ${file}: ${passed}/${doc.vectors.length} passed` + (pending.length ? `, ${pending.length} pending` : '')
    summary.push(line)
    console.log(line)
    for (const p of pending) console.log(`  pending ${p}`)
    for (const f of failures.slice(0, 10)) console.log(`  FAIL ${f}`)
    assert.equal(failures.length, 0, `${failures.length} of ${doc.vectors.length} vectors failed in ${file}`)
  })
}

test.after(() => {
  const total = summary.map((l) => l.match(/(\d+)\/(\d+)/)).reduce((a, m) => [a[0] + +m[1], a[1] + +m[2]], [0, 0])
  console.log(`vectors (node): ${total[0]}/${total[1]} passed across ${files.length} files`)
})

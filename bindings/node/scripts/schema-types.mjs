// Generates schema-types.d.ts, the TypeScript interfaces of the JSON shapes
// the Node binding passes through (options and reports), from the committed
// JSON Schemas in schemas/ (themselves generated from the core's types), so
// index.d.ts does not restate them by hand. `--check` fails when the
// committed file differs (the drift check of bindings/node/test.sh).
//
// A small generator rather than json-schema-to-typescript: the schemas use a
// handful of keywords (type, properties, required, $ref to $defs, anyOf /
// oneOf, enum / const, items, additionalProperties), and it needs no
// devDependency. An unknown keyword makes it fail, not guess.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..', '..')
const outPath = join(here, '..', 'schema-types.d.ts')

// schema file stem -> the exported name of its root type.
const ROOTS = {
  'window-budget': 'Budget',
  'preflight-report': 'Preflight',
  'validation-issues': 'Issues',
  'repair-changes': 'Changes',
  'compaction-policy': 'Policy',
  'compact-result': 'CompactOutcome',
  'compact-report': 'CompactReport',
  'fit-options': 'FitOptions',
  'fit-report': 'FitReport',
  'assemble-request': 'AssembleRequest',
  'assemble-result': 'AssembleResult',
  'turn-report': 'TurnReport',
  'summarizer-call': 'SummarizerCall',
  'model-profile': 'ProfileInput',
  'registry-list': 'RegistryList',
}

const KNOWN = new Set([
  '$schema', '$id', 'title', 'description', 'type', 'properties', 'required', '$ref', '$defs',
  'anyOf', 'oneOf', 'allOf', 'enum', 'const', 'items', 'additionalProperties', 'format', 'minimum',
  'maximum', 'default', 'minItems', 'maxItems', 'uniqueItems', 'examples', 'deprecated',
])

const MODIFIERS = new Set(['public', 'private', 'protected', 'readonly', 'static', 'abstract', 'declare', 'get', 'set', 'async', 'override', 'accessor'])

function doc(s, indent) {
  if (!s || !s.description) return ''
  const lines = s.description.replace(/\*\//g, '*\\/').split('\n')
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ' ' + l : ''}`).join('\n')}\n${indent} */\n`
}

function ts(s, indent = '') {
  if (s === true || (typeof s === 'object' && Object.keys(s).length === 0)) return 'unknown'
  if (s === false) return 'never'
  for (const k of Object.keys(s)) if (!KNOWN.has(k)) throw new Error(`schema keyword ${k} is not handled`)
  if (s.$ref) {
    const m = /^#\/\$defs\/(.+)$/.exec(s.$ref)
    if (!m) throw new Error(`$ref ${s.$ref} is not local`)
    return m[1]
  }
  if ('const' in s) return JSON.stringify(s.const)
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ')
  const alts = s.anyOf || s.oneOf
  if (alts) return alts.map((a) => paren(ts(a, indent))).join(' | ')
  if (s.allOf) return s.allOf.map((a) => paren(ts(a, indent))).join(' & ')
  if (Array.isArray(s.type)) return s.type.map((t) => paren(ts({ ...s, type: t }, indent))).join(' | ')
  switch (s.type) {
    case 'string': return 'string'
    case 'integer':
    case 'number': return 'number'
    case 'boolean': return 'boolean'
    case 'null': return 'null'
    case 'array': return `${paren(s.items === undefined ? 'unknown' : ts(s.items, indent))}[]`
    case 'object': return object(s, indent)
    case undefined: return 'unknown'
    default: throw new Error(`type ${s.type} is not handled`)
  }
}

// Parenthesizes a union or intersection that is not already nested in braces.
function paren(t) {
  let depth = 0
  for (const c of t) {
    if (c === '{' || c === '(' || c === '[') depth++
    else if (c === '}' || c === ')' || c === ']') depth--
    else if ((c === '|' || c === '&') && depth === 0) return `(${t})`
  }
  return t
}

function object(s, indent) {
  const inner = indent + '  '
  const required = new Set(s.required || [])
  const lines = []
  for (const [name, p] of Object.entries(s.properties || {})) {
    // Modifier words (`protected`, `readonly`, ...) are quoted: unquoted, tsc
    // reads them as modifiers of what follows.
    const key = /^[A-Za-z_$][\w$]*$/.test(name) && !MODIFIERS.has(name) ? name : JSON.stringify(name)
    lines.push(`${doc(p, inner)}${inner}${key}${required.has(name) ? '' : '?'}: ${ts(p, inner)};`)
  }
  const extra = s.additionalProperties
  if (extra === false) {
    // closed: the library refuses unknown keys here
    // (members end with `;`: a type ending in `[]` must not run into the next line)
  } else if (extra !== undefined && extra !== true) {
    lines.push(`${inner}[key: string]: ${lines.length ? 'unknown' : ts(extra, inner)};`)
  } else {
    lines.push(`${inner}[field: string]: unknown;`)
  }
  return `{\n${lines.join('\n')}\n${indent}}`
}

function declare(name, s) {
  const body = ts(s)
  const text = body.startsWith('{') && paren(body) === body ? `export interface ${name} ${body}` : `export type ${name} = ${body}`
  return `${doc(s, '')}${text}\n`
}

export function generate() {
  const defs = new Map()
  const out = [
    '// Generated by bindings/node/scripts/schema-types.mjs from schemas/*.json',
    '// (which xtask generates from the core\'s types). Do not edit; run',
    '// `node bindings/node/scripts/schema-types.mjs` and commit the result.',
    '',
  ]
  for (const [stem, rootName] of Object.entries(ROOTS)) {
    const schema = JSON.parse(readFileSync(join(root, 'schemas', `${stem}.json`), 'utf8'))
    for (const [name, d] of Object.entries(schema.$defs || {})) {
      const text = declare(name, d)
      if (defs.has(name) && defs.get(name) !== text) {
        throw new Error(`two schemas define ${name} differently (schemas/${stem}.json and an earlier one)`)
      }
      defs.set(name, text)
    }
    const { $defs, ...top } = schema
    out.push(`/** schemas/${stem}.json */`)
    out.push(declare(rootName, { ...top, description: undefined }))
  }
  out.push('// ---- definitions shared by the shapes above')
  out.push('')
  // A definition that is also a root (CompactReport inside compact-result)
  // is the same Rust type: declared once, as the root.
  const roots = new Set(Object.values(ROOTS))
  for (const name of [...defs.keys()].sort()) if (!roots.has(name)) out.push(defs.get(name))
  return out.join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const fresh = generate()
  if (process.argv.includes('--check')) {
    let committed = ''
    try { committed = readFileSync(outPath, 'utf8') } catch {}
    if (committed !== fresh) {
      console.error('schema-types.d.ts is out of date with schemas/; run `node bindings/node/scripts/schema-types.mjs` and commit it')
      process.exit(1)
    }
    console.log('schema-types.d.ts matches schemas/')
  } else {
    writeFileSync(outPath, fresh)
    console.log(`wrote ${outPath}`)
  }
}

// Writes the ESM declarations (X.d.mts) of the subpath exports from their
// CommonJS ones (X.d.ts). Both are needed: the package is "type": "commonjs",
// so TypeScript reads X.d.ts as a CommonJS module and resolves the imports in
// it (`import type { AgentMiddleware } from 'langchain'`) with the "require"
// condition, i.e. to the framework's CJS types. An ESM application gets the
// framework's ESM types for its own imports, and the two do not unify
// (TS2769 at `createAgent({ middleware })` from an .mts). The .d.mts is the
// same text read as ESM, so its imports resolve as the application's do.
// `--check` fails when a committed .d.mts differs (bindings/node/test.sh).
import { readFileSync, writeFileSync, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = join(dirname(fileURLToPath(import.meta.url)), '..')
const pkg = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'))
const check = process.argv.includes('--check')

// Every export whose "import" condition names a .d.mts.
const targets = []
for (const [sub, entry] of Object.entries(pkg.exports)) {
  const types = entry?.import?.types
  if (typeof types !== 'string' || !types.endsWith('.d.mts')) continue
  const cjs = entry.require?.types
  if (typeof cjs !== 'string') throw new Error(`exports["${sub}"]: an import .d.mts needs a require .d.ts to be made from`)
  targets.push([join(here, cjs), join(here, types)])
}

// A relative import of another module with an ESM declaration goes to it
// ('./langchain.js' -> './langchain.mjs'); './index.js' has one declaration.
const esm = new Set(targets.map(([from]) => from.slice(here.length + 1).replace(/\.d\.ts$/, '')))
const relink = (text) => text.replace(/from '\.\/([\w-]+)\.js'/g, (all, base) => (esm.has(base) ? `from './${base}.mjs'` : all))

let drift = 0
for (const [from, to] of targets) {
  const text = `// Generated from ${from.slice(here.length + 1)} by scripts/esm-types.mjs (the ESM declaration: its imports resolve\n` +
    `// with the "import" condition). Edit the .d.ts, then run node scripts/esm-types.mjs.\n` +
    relink(readFileSync(from, 'utf8'))
  if (check) {
    if (!existsSync(to) || readFileSync(to, 'utf8') !== text) {
      console.error(`${to.slice(here.length + 1)} differs from ${from.slice(here.length + 1)}: run node scripts/esm-types.mjs`)
      drift++
    }
  } else {
    writeFileSync(to, text)
  }
}
if (drift) process.exit(1)
if (!check) console.log(`wrote ${targets.map(([, t]) => t.slice(here.length + 1)).join(', ')}`)

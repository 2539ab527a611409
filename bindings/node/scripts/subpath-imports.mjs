// Copied into a project with turnfit installed and run there (bindings/node/test.sh on the
// `npm pack` tarball, scripts/dist-test.sh on dist/'s): every file the
// installed package.json's "files" names is there, and every subpath its
// "exports" names loads through both `import` and `require`, with the same
// exports (the ESM entry re-exports the CommonJS module: one instance).
// Derived from package.json, so a new subpath is checked without editing this.
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createRequire } from 'node:module'

// Resolved from where this file is: copy it into the project that installed turnfit.
const require = createRequire(import.meta.url)
const pkgFile = require.resolve('turnfit/package.json')
const dir = dirname(pkgFile)
const pkg = require(pkgFile)
const problems = []

const present = new Set(readdirSync(dir))
for (const f of pkg.files ?? []) {
  if (f.includes('*')) continue // a pattern (*.node): the platform package's
  if (!present.has(f)) problems.push(`"files" names ${f}, which the package lacks`)
}
// Every file an export condition names, at any depth of the conditions.
const targets = (entry) => (typeof entry === 'string' ? [entry] : Object.values(entry ?? {}).flatMap(targets))
for (const [sub, entry] of Object.entries(pkg.exports)) {
  for (const t of targets(entry)) if (!existsSync(join(dir, t))) problems.push(`exports["${sub}"] names ${t}, which the package lacks`)
}

const checked = []
for (const sub of Object.keys(pkg.exports)) {
  if (sub.endsWith('.json')) continue
  const spec = sub === '.' ? 'turnfit' : `turnfit/${sub.slice(2)}`
  let cjs, esm
  try {
    cjs = require(spec)
  } catch (e) {
    problems.push(`require('${spec}'): ${e.message}`)
    continue
  }
  try {
    esm = await import(spec)
  } catch (e) {
    problems.push(`import('${spec}'): ${e.message}`)
    continue
  }
  // `__` names are test and benchmark hooks, CommonJS only.
  const names = Object.keys(cjs).filter((n) => !n.startsWith('__'))
  if (names.length === 0) problems.push(`require('${spec}') exports nothing`)
  for (const name of names) {
    if (!(name in esm)) problems.push(`import('${spec}') lacks the export ${name}`)
    else if (esm[name] !== cjs[name]) problems.push(`import('${spec}').${name} is not require('${spec}').${name} (two instances)`)
  }
  if (esm.default !== undefined && esm.default !== cjs) problems.push(`import('${spec}').default is not the CommonJS module`)
  checked.push(`${spec} (${names.length})`)
}
if (problems.length) {
  console.error(problems.map((p) => `  ${p}`).join('\n'))
  process.exit(1)
}
console.log(`subpaths: ${checked.join(', ')} load by import and require, same exports; every "files" and "exports" file present`)

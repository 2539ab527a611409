// Generates binding.js (the platform loader) and binding.d.ts (types of the
// native module) with @napi-rs/cli's own generators, from the type-def files
// napi-derive wrote during `cargo build -p turnfit-node` (test.sh sets
// NAPI_TYPE_DEF_TMP_FOLDER), so the build reuses the workspace's target/debug
// instead of `napi build`'s per-triple directory. Then copies the built
// library next to the loader under the name the loader looks for.
//
//   node scripts/binding.mjs --check  fails when the committed files differ
//   node scripts/binding.mjs --write  rewrites them
import { generateTypeDef, writeJsBinding, parseTriple } from '@napi-rs/cli'
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const mode = process.argv[2]
if (mode !== '--check' && mode !== '--write') {
  console.error('usage: binding.mjs --check|--write  [--lib path/to/libturnfit_node.so]')
  process.exit(2)
}
const typeDefDir = process.env.NAPI_TYPE_DEF_TMP_FOLDER
if (!typeDefDir || !existsSync(typeDefDir)) {
  console.error(`NAPI_TYPE_DEF_TMP_FOLDER (${typeDefDir}) does not exist: build with it set first`)
  process.exit(2)
}
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'))

// napi-derive appends one line per definition each time the crate's macros
// expand. `cargo build --all-targets` compiles turnfit-node twice (the library
// and its test harness), sometimes at the same time, so a line can be there
// twice. Identical lines are the same definition from the same source: keep
// the first. Two different lines for one name still reach the generator.
const dedupDir = mkdtempSync(join(tmpdir(), 'turnfit-typedef-'))
for (const f of readdirSync(typeDefDir)) {
  const seen = new Set()
  const lines = readFileSync(join(typeDefDir, f), 'utf8').split('\n').filter((l) => {
    if (l === '' || seen.has(l)) return false
    seen.add(l)
    return true
  })
  writeFileSync(join(dedupDir, f), lines.join('\n') + '\n')
}

const { exports, dts } = await generateTypeDef({
  typeDefDir: dedupDir,
  cwd: pkgDir,
  constEnum: false,
  declareBindingTarget: false,
})
const out = mkdtempSync(join(tmpdir(), 'turnfit-binding-'))
await writeJsBinding({
  platform: true,
  idents: exports,
  jsBinding: 'binding.js',
  format: 'commonjs',
  binaryName: pkg.napi.binaryName,
  packageName: pkg.name,
  version: pkg.version,
  outputDir: out,
})
writeFileSync(join(out, 'binding.d.ts'), dts)

let drift = false
for (const f of ['binding.js', 'binding.d.ts']) {
  const fresh = readFileSync(join(out, f), 'utf8')
  const committed = existsSync(join(pkgDir, f)) ? readFileSync(join(pkgDir, f), 'utf8') : ''
  if (fresh === committed) continue
  if (mode === '--write') {
    writeFileSync(join(pkgDir, f), fresh)
    console.log(`wrote ${f}`)
  } else {
    drift = true
    console.error(`${f} differs from what the Rust sources generate; run: node scripts/binding.mjs --write`)
    try {
      execFileSync('diff', ['-u', join(pkgDir, f), join(out, f)], { stdio: 'inherit' })
    } catch {}
  }
}
if (drift) process.exit(1)

// Copy the library to <binaryName>.<platform-arch-abi>.node for the loader.
const libIdx = process.argv.indexOf('--lib')
if (libIdx > 0) {
  const host = execFileSync('rustc', ['-vV'], { encoding: 'utf8' }).match(/^host: (.*)$/m)[1]
  const t = parseTriple(host)
  const dest = join(pkgDir, `${pkg.napi.binaryName}.${t.platformArchABI}.node`)
  copyFileSync(resolve(process.argv[libIdx + 1]), dest)
  console.log(`${dest.slice(pkgDir.length + 1)} <- ${process.argv[libIdx + 1]}`)
}

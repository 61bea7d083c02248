// Lints the Redis scripts with luacheck (.luacheckrc declares what Redis gives a script): each script of a
// lua/ folder under src/ as Redis runs it, its includes put in (src/store/lua-source.ts), every finding
// reported at the line of the .lua file it is on. A helper of includes/ that a script leaves unused is not a
// finding (another script uses it); one that every script including it leaves unused is.
//   npm run lint:lua
// luacheck comes with Debian's `lua-check` package. Without it the lint is skipped with a message, except in
// CI (CI=true), where a missing luacheck fails the run, as check:alerts does for promtool.
// Exit code 0: clean or skipped; 1: a finding, or luacheck missing in CI.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { luaSource } from '../src/store/lua-source.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const luacheck = process.env.LUACHECK ?? 'luacheck'

if (spawnSync(luacheck, ['--version'], { stdio: 'ignore' }).error !== undefined) {
  const inCi = process.env.CI === 'true' || process.env.CI === '1'
  const why = "lint:lua: luacheck not found (install Debian's lua-check package: apt-get install lua-check)"
  if (inCi) {
    console.error(`${why}; failing because CI is set`)
    process.exit(1)
  }
  console.log(`${why}; SKIPPED the Lua lint`)
  process.exit(0)
}

// W2xx: unused variables and arguments; W3xx: unused values
const unusedKind = (code: string): boolean => /^W[23]\d\d$/.test(code)
const scripts = readdirSync(`${root}src`, { recursive: true, encoding: 'utf8' })
  .filter((f) => /(^|\/)lua\/[^/]+\.lua$/.test(f))
  .sort()
/** per finding at a file's line: how many scripts report it; per file line: how many scripts hold it */
const reported = new Map<string, number>()
const held = new Map<string, number>()
let failed = false
for (const script of scripts) {
  const { text, lines } = luaSource(pathToFileURL(`${root}src/${script}`))
  const r = spawnSync(luacheck, ['--config', '.luacheckrc', '--formatter', 'plain', '--codes', '--no-color', '--filename', `src/${script}`, '-'],
    { cwd: root, input: text, encoding: 'utf8' })
  // 0 clean, 1 warnings, 2 errors (a syntax error too); above: luacheck itself failed
  if (r.error !== undefined || r.status === null || r.status > 2) {
    console.error(`lint:lua: luacheck failed on src/${script}: ${r.error?.message ?? r.stderr}`)
    failed = true
    continue
  }
  for (const at of new Set(lines.map((l) => `${relative(root, l.file)}:${l.line}`))) held.set(at, (held.get(at) ?? 0) + 1)
  for (const out of r.stdout.split('\n')) {
    const m = /^[^:]*:(\d+):(\d+): \((\w+)\) (.*)$/.exec(out)
    if (m === null) continue
    const from = lines[Number(m[1]) - 1]
    const at = from === undefined ? `src/${script}:${m[1] as string}` : `${relative(root, from.file)}:${from.line}`
    const key = `${at}:${m[2] as string}: (${m[3] as string}) ${m[4] as string}`
    reported.set(key, (reported.get(key) ?? 0) + 1)
  }
}
const findings = [...reported].filter(([key, n]) => {
  const [, at, code] = /^(.*?:\d+):\d+: \((\w+)\)/.exec(key) as RegExpExecArray
  return !unusedKind(code as string) || n === held.get(at as string)
}).map(([key]) => key).sort()
for (const f of findings) console.log(f)
console.log(`lint:lua: ${scripts.length} scripts, ${findings.length} findings`)
process.exit(failed || findings.length > 0 ? 1 : 0)

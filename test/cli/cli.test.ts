// `extauth rules check` and `extauth rules test`, through main() and once through the bin shim.
import { execFile } from 'node:child_process'
import { cp, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { main } from '../../src/cli/main.js'
import { loadRuleSet } from '../../src/rules/load.js'
import { tempDir } from '../rules/helpers.js'
import { buildCheckout } from '../../bench/lib/machine.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const rulesDir = join(root, 'rules')

async function cli (args: string[], env: Record<string, string> = {}): Promise<{ code: number, out: string[], err: string[] }> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(args, { out: l => { out.push(l) }, err: l => { err.push(l) }, env })
  return { code, out, err }
}

t.test('check: ok with the count and version of the set', async t => {
  const loaded = await loadRuleSet(rulesDir, { timezone: 'UTC' })
  if (!loaded.ok) return t.fail('the default set must load')
  const r = await cli(['rules', 'check', rulesDir])
  t.equal(r.code, 0)
  t.same(r.out, [`ok: ${loaded.set.rules.length} rules, version ${loaded.set.version}`])
  const fromEnv = await cli(['rules', 'check'], { RULES_DIR: rulesDir })
  t.same(fromEnv.out, r.out, 'the directory defaults to $RULES_DIR')
})

t.test('check: the errors the server would give, exit 1', async t => {
  const dir = join(root, 'test/fixtures/rules-broken/duplicate-id/rules')
  const r = await cli(['rules', 'check', dir])
  t.equal(r.code, 1)
  t.match(r.out[0], /^20-b\.json \/rules\/0\/id \[atm-limit\]: RULE_ID_DUPLICATE: /)
  t.match(r.out.at(-1), /^refused: 1 error/)
  const json = await cli(['rules', 'check', dir, '--json'])
  t.equal(json.code, 1)
  const body = JSON.parse(json.out.join('\n')) as { ok: boolean, errors: Array<{ code: string }> }
  t.equal(body.ok, false)
  t.same(body.errors.map(e => e.code), ['RULE_ID_DUPLICATE'])
})

t.test('usage errors exit 2', async t => {
  t.equal((await cli([])).code, 2)
  t.equal((await cli(['rules', 'lint'])).code, 2)
  t.equal((await cli(['rules', 'check', 'a', 'b'])).code, 2)
  t.equal((await cli(['rules', 'check', '--bogus'])).code, 2)
  t.equal((await cli(['rules', 'check', rulesDir, '--timezone', 'Mars/Olympus'])).code, 2)
  t.equal((await cli(['--help'])).code, 0)
})

t.test('test: the shipped cases pass against the shipped rules', async t => {
  for (const timezone of ['UTC', 'Asia/Kolkata', 'America/New_York']) {
    const r = await cli(['rules', 'test', rulesDir, '--timezone', timezone])
    t.equal(r.code, 0, `all cases pass in ${timezone}`)
    t.match(r.out.at(-1), /^(\d+) case\(s\): \1 passed, 0 failed$/)
    t.notOk(r.out.some(l => l.startsWith('FAIL')), r.out.filter(l => l.startsWith('FAIL')).join('\n'))
  }
  const json = await cli(['rules', 'test', rulesDir, join(rulesDir, 'cases/default.json'), '--json'])
  const body = JSON.parse(json.out.join('\n')) as { ok: boolean, total: number, files: Array<{ results: Array<{ name: string, code: string, ruleId: string | null, shadowHits: string[] }> }> }
  t.equal(body.ok, true)
  t.ok(body.total >= 20)
  const byName = new Map(body.files[0]?.results.map(r => [r.name, r]))
  t.same(byName.get('quasi-cash is only watched (shadow)')?.shadowHits, ['watch-quasi-cash'], 'shadow hits are reported')
  t.equal(byName.get('ATM: the sixth withdrawal on one card in a day is declined 65')?.ruleId, 'atm-daily-count')
})

t.test('test: a failing case fails the run, exit 1', async t => {
  const dir = await tempDir(t)
  const cases = join(dir, 'cases.json')
  await writeFile(cases, JSON.stringify({
    now: '2026-11-21T12:00:00Z',
    cases: [
      { name: 'gambling approved?', request: { mcc: '7995' }, expect: '00' },
      { name: 'gambling declined by the wrong rule?', request: { mcc: '7995' }, expect: '05', expectRuleId: 'other' },
      { name: 'grocery approved', expect: '00' }
    ]
  }))
  const r = await cli(['rules', 'test', rulesDir, cases])
  t.equal(r.code, 1)
  t.match(r.out, [/^rules: /, /^# /, /^FAIL {2}gambling approved\?: expected 00, got 05 \(rule block-gambling\)/, /^FAIL {2}gambling declined by the wrong rule\?: expected 05 \(other\)/, /^ok {4}grocery approved/, /^3 case\(s\): 1 passed, 2 failed$/])
})

t.test('test: a malformed cases file is an error, not a pass', async t => {
  const dir = await tempDir(t)
  const cases = join(dir, 'cases.json')
  await writeFile(cases, JSON.stringify({ cases: [{ name: 'typo', expct: '00' }] }))
  const r = await cli(['rules', 'test', rulesDir, cases])
  t.equal(r.code, 1)
  t.ok(r.err.length > 0)
  t.equal((await cli(['rules', 'test', rulesDir, join(dir, 'missing.json')])).code, 2)
})

t.test('the bin shim runs the TypeScript CLI', async t => {
  const run = promisify(execFile)
  const { stdout } = await run(process.execPath, [join(root, 'bin/extauth.js'), 'rules', 'check', rulesDir], { cwd: root })
  t.match(stdout, /^ok: \d+ rules, version [0-9a-f]{12}\n$/)
  const broken = await run(process.execPath, [join(root, 'bin/extauth.js'), 'rules', 'check', join(root, 'test/fixtures/rules-broken/bad-json/rules')], { cwd: root })
    .then(() => null, (e: { code: number, stdout: string }) => e)
  t.equal(broken?.code, 1)
  t.match(broken?.stdout, /RULE_JSON_INVALID/)
})

t.test('the command line: version, help per command, suggestions for a mistyped command or option', async t => {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }
  const version = await cli(['--version'])
  t.same([version.code, version.out], [0, [pkg.version]])
  const help = await cli(['rules', 'backtest', '--help'])
  t.equal(help.code, 0)
  t.match(help.out.join('\n'), /Usage: extauth rules backtest[\s\S]*--fail-on-change/, 'the command\'s own help')
  const typo = await cli(['rules', 'chek', rulesDir])
  t.equal(typo.code, 2)
  t.match(typo.err.join('\n'), /unknown command 'chek'[\s\S]*Did you mean check\?/)
  const option = await cli(['rules', 'check', rulesDir, '--jsn'])
  t.equal(option.code, 2)
  t.match(option.err.join('\n'), /unknown option '--jsn'[\s\S]*Did you mean --json\?/)
  t.match((await cli(['rules', 'backtest', '--from', '2026-11-01T00:00:00Z', '--to', '2026-11-02T00:00:00Z'])).err[0], /required option '--rules <dir>'/)
})

t.test('the built command line: node dist/cli/main.js runs from any folder, through a link too', async t => {
  const run = promisify(execFile)
  const outDir = await tempDir(t)
  // what `npm run build` makes, the Lua beside the modules that read it (incremental: `npm test` has built it,
  // and tsc finds it up to date), copied away
  buildCheckout(root, 'tsconfig.build.json')
  await cp(join(root, 'dist'), join(outDir, 'dist'), { recursive: true })
  // as in the image: dist/ beside package.json and node_modules
  await writeFile(join(outDir, 'package.json'), await readFile(join(root, 'package.json')))
  await symlink(join(root, 'node_modules'), join(outDir, 'node_modules'))
  const cliJs = join(outDir, 'dist/cli/main.js')
  const elsewhere = await tempDir(t)
  const ok = await run(process.execPath, [cliJs, 'rules', 'check', rulesDir], { cwd: elsewhere })
  t.match(ok.stdout, /^ok: \d+ rules, version [0-9a-f]{12}\n$/)
  await symlink(cliJs, join(elsewhere, 'extauth'))
  const linked = await run(process.execPath, [join(elsewhere, 'extauth'), '--version'], { cwd: elsewhere })
  t.equal(linked.stdout.trim(), JSON.parse(await readFile(join(root, 'package.json'), 'utf8')).version)
  const missing = await run(process.execPath, [cliJs, 'rules', 'check'], { cwd: elsewhere, env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'RULES_DIR')) })
    .then(() => null, (e: { code: number, stdout: string }) => e)
  t.equal(missing?.code, 1, 'no rules folder where it runs: refused, not a silent exit 0')
  t.match(missing?.stdout, /refused: /)
  t.same(await import(pathToFileURL(cliJs).href).then((m: { main: unknown }) => typeof m.main), 'function', 'importing it runs nothing')
})

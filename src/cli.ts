// `extauth` command line: checks and tests rule sets before they reach a running service.
//   extauth rules check [dir]            the errors the server would give, or "ok: N rules, version X"
//   extauth rules test [dir] [cases]     runs test cases through the decision pipeline on an in-memory store
// Exit codes: 0 ok, 1 refused rules or failing cases, 2 wrong usage.
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { assertTimeZone } from './time.js'
import { formatRuleError } from './rules/errors.js'
import { loadRuleSet } from './rules/load.js'
import { parseCasesFile } from './rules/cases-file.js'
import { runCases, type CaseResult } from './rules/run-cases.js'

export interface CliIo {
  out: (line: string) => void
  err: (line: string) => void
  env: Record<string, string | undefined>
}

const USAGE = `usage:
  extauth rules check [dir]          validate a rule set (dir: $RULES_DIR or ./rules)
  extauth rules test [dir] [cases]   run test cases (cases: a file, or a folder of them; default <dir>/cases)
options:
  --timezone <IANA zone>   for hour, dayOfWeek and calendar windows (default $TIMEZONE or UTC)
  --json                   print the result as JSON
  -h, --help`

function caseLine (r: CaseResult): string {
  const got = `${r.code} (${r.reason}${r.ruleId === null ? '' : ` ${r.ruleId}`})`
  const shadow = r.shadowHits.length === 0 ? '' : `; shadow: ${r.shadowHits.join(', ')}`
  const prior = r.priorTotal === 0 ? '' : `; prior ${r.priorApproved}/${r.priorTotal} approved`
  if (r.ok) return `ok    ${r.name}: ${got}${shadow}${prior}`
  const want = `${r.expected}${r.expectedRuleId === null ? '' : ` (${r.expectedRuleId})`}`
  return `FAIL  ${r.name}: expected ${want}, got ${got}${shadow}${prior}`
}

async function caseFiles (path: string): Promise<string[]> {
  const st = await stat(path)
  if (!st.isDirectory()) return [path]
  const names = (await readdir(path)).filter(n => n.endsWith('.json') && !n.startsWith('.')).sort()
  return names.map(n => join(path, n))
}

export async function main (argv: string[], io: CliIo = {
  out: (l) => { process.stdout.write(l + '\n') },
  err: (l) => { process.stderr.write(l + '\n') },
  env: process.env
}): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { timezone: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }
    })
  } catch (err) {
    io.err((err as Error).message)
    io.err(USAGE)
    return 2
  }
  const { values, positionals } = parsed
  const [group, command, dirArg, casesArg, ...rest] = positionals
  if (values.help === true) {
    io.out(USAGE)
    return 0
  }
  if (group !== 'rules' || (command !== 'check' && command !== 'test') || rest.length > 0 || (command === 'check' && casesArg !== undefined)) {
    io.err(USAGE)
    return 2
  }
  const timezone = values.timezone ?? io.env.TIMEZONE ?? 'UTC'
  try {
    assertTimeZone(timezone)
  } catch {
    io.err(`unknown time zone: ${timezone}`)
    return 2
  }
  const dir = resolve(dirArg ?? io.env.RULES_DIR ?? './rules')
  const json = values.json === true

  const loaded = await loadRuleSet(dir, { timezone })
  const warnings = loaded.warnings ?? []
  if (!loaded.ok) {
    if (json) io.out(JSON.stringify({ ok: false, dir, errors: loaded.errors, warnings }, null, 2))
    else {
      for (const e of loaded.errors) io.out(formatRuleError(e))
      for (const w of warnings) io.out(`warning: ${formatRuleError(w)}`)
      io.out(`refused: ${loaded.errors.length} error(s) in ${dir}`)
    }
    return 1
  }
  const set = loaded.set
  if (!json) for (const w of warnings) io.out(`warning: ${formatRuleError(w)}`)
  if (command === 'check') {
    if (json) io.out(JSON.stringify({ ok: true, dir, version: set.version, rules: set.rules.length, files: loaded.files, needsRisk: set.needsRisk, warnings }, null, 2))
    else io.out(`ok: ${set.rules.length} rules, version ${set.version}${warnings.length === 0 ? '' : `, ${warnings.length} warning(s)`}`)
    return 0
  }

  const casesPath = resolve(casesArg ?? join(dir, 'cases'))
  let files: string[]
  try {
    files = await caseFiles(casesPath)
  } catch (err) {
    io.err(`cannot read cases ${casesPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    return 2
  }
  const defaultCurrency = io.env.DEFAULT_CURRENCY ?? '356'
  const report: Array<{ file: string, results: CaseResult[] }> = []
  let failed = 0
  let total = 0
  for (const file of files) {
    const parsedFile = parseCasesFile(await readFile(file, 'utf8'))
    if (!parsedFile.ok) {
      for (const e of parsedFile.errors) io.err(`${file}: ${e}`)
      return 1
    }
    const results = await runCases(parsedFile.file, { rules: set, timezone, defaultCurrency })
    report.push({ file, results })
    total += results.length
    failed += results.filter(r => !r.ok).length
  }
  if (json) {
    io.out(JSON.stringify({ ok: failed === 0, version: set.version, total, failed, files: report }, null, 2))
  } else {
    io.out(`rules: ${set.rules.length}, version ${set.version}`)
    for (const { file, results } of report) {
      io.out(`# ${file}`)
      for (const r of results) io.out(caseLine(r))
    }
    io.out(`${total} case(s): ${total - failed} passed, ${failed} failed`)
  }
  return failed === 0 && total > 0 ? 0 : 1
}

// `extauth` command line: checks and tests rule sets before they reach a running service.
//   extauth rules check [dir]            the errors the server would give, or "ok: N rules, version X"
//   extauth rules test [dir] [cases]     runs test cases through the decision pipeline on an in-memory store
//   extauth rules backtest --rules <dir> --from <ISO> --to <ISO>   replays the decision journal through a candidate set
// Exit codes: 0 ok, 1 refused rules, failing cases or (with --fail-on-change) changed decisions, 2 wrong usage
// or an unreadable journal.
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { assertTimeZone } from './time.js'
import { formatRuleError } from './rules/errors.js'
import { loadRuleSet } from './rules/load.js'
import { parseCasesFile } from './rules/cases-file.js'
import { runCases, type CaseResult } from './rules/run-cases.js'
import type { JournalSource } from './domain/journal.js'
import { runBacktest, type BacktestResult } from './backtest/engine.js'
import { defaultWorkers, runBacktestParallel } from './backtest/parallel.js'
import { JournalLineError, NdjsonJournal, type BacktestSource } from './backtest/ndjson-source.js'
import { formatReport, hasChanges } from './backtest/report.js'
import { decisionsCli, EXPORT_USAGE, openRedisJournal } from './journal/export-cli.js'

export interface CliIo {
  out: (line: string) => void
  err: (line: string) => void
  env: Record<string, string | undefined>
}

/** A journal read from Redis (`REDIS_URL`, `REDIS_KEY_PREFIX` or `REDIS_CLUSTER_NODES` in env). */
export interface OpenedJournal {
  source: JournalSource | BacktestSource
  close: () => Promise<void>
}

export interface CliDeps {
  /** opens the decision journal in Redis; without it, `rules backtest` needs `--journal` */
  redisJournal?: (env: Record<string, string | undefined>) => Promise<OpenedJournal>
}

const NO_REDIS_JOURNAL = 'reading Redis needs the journal (decisions export); use --journal'

const USAGE = `usage:
  extauth rules check [dir]          validate a rule set (dir: $RULES_DIR or ./rules)
  extauth rules test [dir] [cases]   run test cases (cases: a file, or a folder of them; default <dir>/cases)
  extauth rules backtest --rules <dir> [--baseline <dir>] --from <ISO time> --to <ISO time>
                         [--journal <file.ndjson> [--workers <n>]] [--fail-on-change]
                                     replay recorded decisions through a candidate rule set (journal: an
                                     export file, or Redis from $REDIS_URL); baseline: the rules each
                                     decision was made under ($RULES_DIR or ./rules), or <dir>
${EXPORT_USAGE}
options:
  --timezone <IANA zone>   for hour, dayOfWeek and calendar windows (default $TIMEZONE or UTC)
  --json                   print the result as JSON
  --fail-on-change         backtest: exit 1 when any decision changes
  --workers <n>            backtest of a --journal file: threads replaying it (default: processors, at most 4)
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
}, deps: CliDeps = { redisJournal: openRedisJournal }): Promise<number> {
  if (argv[0] === 'decisions') return await decisionsCli(argv.slice(1), io)
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        timezone: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        rules: { type: 'string' },
        baseline: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        journal: { type: 'string' },
        workers: { type: 'string' },
        'fail-on-change': { type: 'boolean' }
      }
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
  const backtestOnly = ['rules', 'baseline', 'from', 'to', 'journal', 'workers', 'fail-on-change'] as const
  const backtest = command === 'backtest'
  if (group !== 'rules' || (command !== 'check' && command !== 'test' && !backtest) || rest.length > 0 ||
      (command === 'check' && casesArg !== undefined) || (backtest && dirArg !== undefined) ||
      (!backtest && backtestOnly.some(k => values[k] !== undefined))) {
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
  if (backtest) return await backtestCommand(values, timezone, io, deps)
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

interface BacktestArgs {
  rules?: string
  baseline?: string
  from?: string
  to?: string
  journal?: string
  workers?: string
  json?: boolean
  'fail-on-change'?: boolean
}

/** An ISO 8601 time with its date, as epoch ms; null when it is not one. */
function isoMs (text: string | undefined): number | null {
  if (text === undefined || !/^\d{4}-\d{2}-\d{2}/.test(text)) return null
  const ms = Date.parse(text)
  return Number.isNaN(ms) ? null : ms
}

async function loadForBacktest (dir: string, timezone: string, io: CliIo): Promise<Awaited<ReturnType<typeof loadRuleSet>>> {
  const loaded = await loadRuleSet(dir, { timezone })
  if (!loaded.ok) {
    for (const e of loaded.errors) io.err(`${dir}: ${formatRuleError(e)}`)
    io.err(`refused: ${loaded.errors.length} error(s) in ${dir}`)
  }
  return loaded
}

async function backtestCommand (values: BacktestArgs, timezone: string, io: CliIo, deps: CliDeps): Promise<number> {
  const fromMs = isoMs(values.from)
  const toMs = isoMs(values.to)
  if (values.rules === undefined || fromMs === null || toMs === null) {
    io.err('rules backtest needs --rules <dir>, --from <ISO time> and --to <ISO time>')
    io.err(USAGE)
    return 2
  }
  const workers = values.workers === undefined ? defaultWorkers() : Number(values.workers)
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
    io.err(`--workers must be an integer from 1 to 64, not ${values.workers as string}`)
    return 2
  }
  if (fromMs >= toMs) {
    io.err(`--from (${values.from as string}) must be before --to (${values.to as string})`)
    return 2
  }
  const candidateDir = resolve(values.rules)
  const baselineDir = resolve(values.baseline ?? io.env.RULES_DIR ?? './rules')
  const candidate = await loadForBacktest(candidateDir, timezone, io)
  const baseline = await loadForBacktest(baselineDir, timezone, io)
  if (!candidate.ok || !baseline.ok) return 1

  let opened: OpenedJournal
  if (values.journal !== undefined) {
    opened = { source: new NdjsonJournal(resolve(values.journal)), close: async () => {} }
  } else if (deps.redisJournal === undefined) {
    io.err(NO_REDIS_JOURNAL)
    return 2
  } else {
    try {
      opened = await deps.redisJournal(io.env)
    } catch (err) {
      io.err(`cannot read the journal from Redis: ${(err as Error).message}`)
      return 2
    }
  }

  const startedAt = Date.now()
  let result: BacktestResult
  const common = {
    candidate: candidate.set,
    baseline: baseline.set,
    baselineMode: values.baseline === undefined ? 'recorded' as const : 'given' as const,
    fromMs,
    toMs,
    timezone,
    ...(io.env.DEFAULT_CURRENCY !== undefined ? { defaultCurrency: io.env.DEFAULT_CURRENCY } : {}),
    onProgress: ({ read, atMs }: { read: number, atMs: number }) => { io.err(`backtest: ${read.toLocaleString('en-US')} decisions read, at ${new Date(atMs).toISOString()}`) }
  }
  try {
    result = values.journal !== undefined && workers > 1
      ? await runBacktestParallel({ ...common, file: resolve(values.journal), candidateDir, baselineDir, workers })
      : await runBacktest({ ...common, source: opened.source })
  } catch (err) {
    if (err instanceof JournalLineError) {
      io.err(`journal refused: ${err.message}`)
      return 2
    }
    const code = (err as NodeJS.ErrnoException).code
    if (code !== undefined && values.journal !== undefined) {
      io.err(`cannot read the journal ${values.journal}: ${code}`)
      return 2
    }
    throw err
  } finally {
    await opened.close()
  }
  const secs = (Date.now() - startedAt) / 1000
  io.err(`backtest: ${result.read.toLocaleString('en-US')} decisions replayed in ${secs.toFixed(1)} s (windows warmed from ${new Date(result.warmFromMs).toISOString()})`)

  const { report } = result
  if (values.json === true) io.out(JSON.stringify(report, null, 2))
  else {
    const label = (dir: string, version: string): string => `${dir} (version ${version})`
    for (const line of formatReport(report, {
      baselineLabel: values.baseline === undefined
        ? `the rules each decision was made under; at hand: ${label(baselineDir, result.baselineVersion)}`
        : label(baselineDir, result.baselineVersion),
      candidateLabel: label(candidateDir, result.candidateVersion)
    })) io.out(line)
  }
  return values['fail-on-change'] === true && hasChanges(report) ? 1 : 0
}

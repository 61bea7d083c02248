#!/usr/bin/env node
// `extauth` command line: checks and tests rule sets before they reach a running service, replays the
// decision journal, exports it. Subcommands, help and "did you mean" come from commander.
//   extauth rules check [dir]            the errors the server would give, or "ok: N rules, version X"
//   extauth rules test [dir] [cases]     runs test cases through the decision pipeline on an in-memory store
//   extauth rules backtest --rules <dir> --from <ISO> --to <ISO>   replays the decision journal through a candidate set
//   extauth decisions export --from <ISO> --to <ISO> [--out file]  the journal as NDJSON
//   extauth decisions reindex            decisions kept from before the reference index put into it
// Exit codes: 0 ok, 1 refused rules, failing cases or (with --fail-on-change) changed decisions, 2 wrong usage
// or an unreadable journal.
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { assertTimeZone } from '../time.js'
import { formatRuleError } from '../rules/errors.js'
import { loadRuleSet } from '../rules/load.js'
import { parseCasesFile } from './cases-file.js'
import { runCases, type CaseResult } from './run-cases.js'
import type { JournalSource } from '../domain/journal.js'
import { runBacktest, type BacktestResult } from '../backtest/engine.js'
import { defaultWorkers, runBacktestParallel } from '../backtest/parallel.js'
import { JournalLineError, NdjsonJournal, type BacktestSource } from '../backtest/ndjson-source.js'
import { formatReport, hasChanges } from '../backtest/report.js'
import { exportDecisions, openRedisJournal, reindexDecisions } from './decisions-export.js'
import { cliProgram, CommanderError, type BacktestOptions, type RulesOptions } from './program.js'
import { isMainModule } from './entry.js'
import { holdsExpire, statementImport } from './settlement-commands.js'

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

const defaultIo: CliIo = {
  out: (l) => { process.stdout.write(l + '\n') },
  err: (l) => { process.stderr.write(l + '\n') },
  env: process.env
}

export async function main (argv: string[], io: CliIo = defaultIo, deps: CliDeps = { redisJournal: openRedisJournal }): Promise<number> {
  let code = 0
  const program = cliProgram(io, {
    check: async (dir, opts) => { code = await rulesCommand('check', dir, undefined, opts, io) },
    test: async (dir, cases, opts) => { code = await rulesCommand('test', dir, cases, opts, io) },
    backtest: async (opts) => {
      const timezone = zoneOf(opts.timezone, io)
      code = timezone === null ? 2 : await backtestCommand(opts, timezone, io, deps)
    },
    exportDecisions: async (opts) => { code = await exportDecisions(opts, io) },
    reindexDecisions: async () => { code = await reindexDecisions(io) },
    importStatement: async (file, opts) => { code = await statementImport(file, opts, io) },
    expireHolds: async (opts) => { code = await holdsExpire(opts, io) }
  })
  try {
    await program.parseAsync(argv, { from: 'user' })
  } catch (err) {
    // help and --version end with exit code 0; every other refusal of the command line is wrong usage
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2
    throw err
  }
  return code
}

/** The zone, or null after saying why it is not one. */
function zoneOf (given: string | undefined, io: CliIo): string | null {
  const timezone = given ?? io.env.TIMEZONE ?? 'UTC'
  try {
    assertTimeZone(timezone)
    return timezone
  } catch {
    io.err(`unknown time zone: ${timezone}`)
    return null
  }
}

async function rulesCommand (command: 'check' | 'test', dirArg: string | undefined, casesArg: string | undefined, opts: RulesOptions, io: CliIo): Promise<number> {
  const timezone = zoneOf(opts.timezone, io)
  if (timezone === null) return 2
  const dir = resolve(dirArg ?? io.env.RULES_DIR ?? './rules')
  const json = opts.json === true

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

async function backtestCommand (values: BacktestOptions, timezone: string, io: CliIo, deps: CliDeps): Promise<number> {
  const fromMs = isoMs(values.from)
  const toMs = isoMs(values.to)
  if (fromMs === null || toMs === null) {
    io.err(`--from and --to must be ISO 8601 times with a date, not ${fromMs === null ? values.from : values.to}`)
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
      candidateLabel: label(candidateDir, result.candidateVersion),
      ...(io.env.DEFAULT_CURRENCY !== undefined ? { currency: io.env.DEFAULT_CURRENCY } : {})
    })) io.out(line)
  }
  return values.failOnChange === true && hasChanges(report) ? 1 : 0
}

// `node dist/cli/main.js ...` (and the image's `extauth`, a link to it) runs the command line; importing it does not
if (isMainModule(import.meta.url)) process.exitCode = await main(process.argv.slice(2))

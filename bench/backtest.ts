// npm run bench:backtest — decisions replayed per second from an NDJSON journal with the default rule set.
//
// Generates a seeded journal (BENCH_DECISIONS entries, default 1,000,000, over about two weeks of traffic;
// BENCH_SEED) into a temporary file, then runs `extauth rules backtest --journal` on it through the CLI's
// main(), progress on stderr, with the default set as baseline and a candidate that raises the ATM count
// limit: once with the default threads, once with one. Prints decisions/s (wall clock, from the start of the
// command to its report) and CPU per decision, beside a baseline of the same run: JSON.parse of each line alone
// on one thread. The file is removed afterwards.
import { createReadStream } from 'node:fs'
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { main } from '../src/cli/main.js'
import { loadRuleSet } from '../src/rules/load.js'
import { defaultWorkers } from '../src/backtest/parallel.js'
import { writeJournal } from './journal-gen.js'

const root = fileURLToPath(new URL('../', import.meta.url))
const count = Number(process.env.BENCH_DECISIONS ?? 1_000_000)
const seed = Number(process.env.BENCH_SEED ?? 7)
const timezone = 'Asia/Kolkata'
const startMs = Date.UTC(2026, 10, 1)
const gapMs = Math.max(1, Math.floor((14 * 86_400_000) / count))

const dir = await mkdtemp(join(tmpdir(), 'extauth-bench-backtest-'))
try {
  const rulesDir = join(root, 'rules')
  const loaded = await loadRuleSet(rulesDir, { timezone })
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors))
  const candidateDir = join(dir, 'candidate')
  await cp(rulesDir, candidateDir, { recursive: true })
  const atm = join(candidateDir, '20-atm.json')
  await writeFile(atm, (await readFile(atm, 'utf8')).replace('"max": 5 }', '"max": 8 }'))

  const file = join(dir, 'journal.ndjson')
  let t0 = Date.now()
  await writeJournal(file, { seed, count, startMs, gapMs, customers: Math.max(10, Math.floor(count / 50)), rules: loaded.set, timezone })
  const bytes = (await stat(file)).size
  console.log(`node ${process.version}; seed ${seed}; ${count.toLocaleString('en-US')} decisions, ${(bytes / 1e6).toFixed(0)} MB, generated in ${((Date.now() - t0) / 1000).toFixed(1)} s`)

  // The baseline of this run: JSON.parse of every line alone, on one thread: the most decisions/s a replay that
  // parses each line with JSON.parse could reach on a thread, whatever the rest of it costs.
  t0 = Date.now()
  let lines = 0
  let rest = Buffer.alloc(0)
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    const b = Buffer.concat([rest, chunk as Buffer])
    let p = 0
    for (let q = b.indexOf(10, p); q >= 0; q = b.indexOf(10, p)) {
      JSON.parse(b.toString('utf8', p, q))
      lines++
      p = q + 1
    }
    rest = b.subarray(p)
  }
  const parseSecs = (Date.now() - t0) / 1000
  console.log(`baseline: JSON.parse of each line alone, one thread: ${Math.round(lines / parseSecs).toLocaleString('en-US')} lines/s (${(parseSecs * 1e6 / lines).toFixed(1)} µs a line)`)

  const first = new Date(startMs).toISOString()
  const last = new Date(startMs + count * gapMs * 2).toISOString()
  for (const workers of [defaultWorkers(), 1]) {
    const out: string[] = []
    const cpu0 = process.cpuUsage()
    const start = process.hrtime.bigint()
    const code = await main(['rules', 'backtest', '--rules', candidateDir, '--baseline', rulesDir, '--from', first, '--to', last, '--journal', file, '--timezone', timezone, '--json', '--workers', String(workers)], {
      out: l => { out.push(l) },
      err: l => { process.stderr.write(l + '\n') },
      env: {}
    })
    const secs = Number(process.hrtime.bigint() - start) / 1e9
    const cpu = process.cpuUsage(cpu0)
    if (code !== 0) throw new Error(`backtest exited ${code}`)
    const report = JSON.parse(out.join('\n')) as { decisions: number, baseline: { reproduced: number, unreproduced: unknown[] }, changes: { declinedToApproved: { count: number } } }
    const rate = Math.round(report.decisions / secs).toLocaleString('en-US')
    const cpuUs = ((cpu.user + cpu.system) / report.decisions).toFixed(1)
    console.log(`${workers} thread(s): ${report.decisions.toLocaleString('en-US')} decisions in ${secs.toFixed(2)} s: ${rate} decisions/s (${cpuUs} µs CPU per decision, all threads)`)
    console.log(`  baseline reproduced ${report.baseline.reproduced.toLocaleString('en-US')}, unreproduced ${report.baseline.unreproduced.length}; candidate (ATM count 5 -> 8) declined -> approved ${report.changes.declinedToApproved.count.toLocaleString('en-US')}`)
    if (report.baseline.unreproduced.length > 0) process.exitCode = 1
  }
} finally {
  await rm(dir, { recursive: true, force: true })
}

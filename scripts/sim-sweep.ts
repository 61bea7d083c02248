// npm run sim:sweep -- --seeds N --steps M [--stores memory,redis] [--jobs J] [--minutes T] [--first-seed S]
// Runs the money simulation on many seeds nobody chose, on each store, in parallel worker processes (each
// run is `scripts/sim-money.ts` in a process of its own, so a run is exactly what its replay command runs),
// and lists every failing seed with the command that replays it. Seeds are random unless --first-seed
// gives the first of consecutive ones. --minutes bounds the whole sweep: no run starts after it, and runs
// still going are stopped and reported as cut, not clean. Exit status 1 when a run failed.
import { spawn, type ChildProcess } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { randomSeed } from './lib/money-sim/options.js'

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '10' },
    steps: { type: 'string', default: '2000' },
    stores: { type: 'string', default: 'memory,redis' },
    jobs: { type: 'string' },
    minutes: { type: 'string' },
    'first-seed': { type: 'string' },
    'redis-url': { type: 'string' }
  }
})

function positive (name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name}: a whole number of at least 1, not ${text}`)
  return n
}

const seedsN = positive('seeds', values.seeds, 10)
const stepsN = positive('steps', values.steps, 2000)
const jobsN = positive('jobs', values.jobs, Math.max(1, availableParallelism() - 1))
const minutes = values.minutes === undefined ? null : Number(values.minutes)
if (minutes !== null && !(minutes > 0)) throw new Error(`--minutes: a number above 0, not ${values.minutes}`)
const stores = values.stores.split(',').map((s) => s.trim()).filter((s) => s !== '')
for (const s of stores) if (s !== 'memory' && s !== 'redis') throw new Error(`--stores: memory and/or redis, not ${s}`)
const redisUrl = values['redis-url'] ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const first = values['first-seed'] === undefined ? null : positive('first-seed', values['first-seed'], 1)

interface Run { seed: number, store: string }
interface Outcome extends Run { result: 'clean' | 'failed' | 'error' | 'cut', detail: string, seconds: number }

const seeds = Array.from({ length: seedsN }, (_, i) => first === null ? randomSeed() : first + i)
const queue: Run[] = seeds.flatMap((seed) => stores.map((store) => ({ seed, store })))
const total = queue.length
const outcomes: Outcome[] = []
const running = new Set<ChildProcess>()
const script = fileURLToPath(new URL('./sim-money.ts', import.meta.url))
const started = Date.now()
let stopping = false

// SIM_SETTLEMENT=holds reaches every run through the environment; the replay lines carry it
const holds = process.env.SIM_SETTLEMENT === 'holds'
process.stdout.write(`sim:sweep: ${seedsN} seeds × ${stores.join(', ')}, ${stepsN} steps each, ${jobsN} at a time${minutes !== null ? `, at most ${minutes} min` : ''}${holds ? ', SETTLEMENT_MODE=holds' : ''}\n`)

function replay (r: Run, steps: number): string {
  return `${holds ? 'SIM_SETTLEMENT=holds ' : ''}SIM_SEED=${r.seed} SIM_STEPS=${steps} SIM_STORE=${r.store} npm run sim:money`
}

async function runOne (r: Run): Promise<Outcome> {
  const t0 = Date.now()
  const child = spawn(process.execPath, ['--import', 'tsx', script, '--seed', String(r.seed), '--steps', String(stepsN), '--store', r.store, '--redis-url', redisUrl], {
    stdio: ['ignore', 'pipe', 'pipe']
  })
  running.add(child)
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d })
  child.stderr.setEncoding('utf8').on('data', (d: string) => { err += d })
  const code = await new Promise<number | null>((resolve) => { child.once('close', (c) => { resolve(c) }) })
  running.delete(child)
  const seconds = (Date.now() - t0) / 1000
  if (stopping && code !== 0) return { ...r, result: 'cut', detail: 'stopped at the time limit', seconds }
  if (code === 0) return { ...r, result: 'clean', detail: '', seconds }
  const violation = out.split('\n').find((l) => l.startsWith('VIOLATION'))
  const replayLine = out.split('\n').find((l) => l.startsWith('replay: '))
  if (code === 1 && violation !== undefined) return { ...r, result: 'failed', detail: `${violation}\n    ${replayLine ?? replay(r, stepsN)}`, seconds }
  return { ...r, result: 'error', detail: `exit ${String(code)}: ${(err.trim().split('\n').slice(-5).join('\n    ') || out.trim().split('\n').slice(-3).join('\n    '))}\n    ${replay(r, stepsN)}`, seconds }
}

async function worker (): Promise<void> {
  for (;;) {
    if (stopping) return
    const r = queue.shift()
    if (r === undefined) return
    const o = await runOne(r)
    outcomes.push(o)
    const label = o.result === 'clean' ? 'clean' : o.result.toUpperCase()
    process.stdout.write(`[${outcomes.length}/${total}] seed ${o.seed} ${o.store}: ${label} (${o.seconds.toFixed(0)} s)${o.detail !== '' ? `\n    ${o.detail}` : ''}\n`)
  }
}

const timer = minutes === null
  ? null
  : setTimeout(() => {
    stopping = true
    for (const c of running) c.kill('SIGTERM')
  }, minutes * 60_000)
await Promise.all(Array.from({ length: Math.min(jobsN, total) }, async () => { await worker() }))
if (timer !== null) clearTimeout(timer)

const lines: string[] = ['', `sim:sweep done in ${((Date.now() - started) / 60_000).toFixed(1)} min`]
for (const store of stores) {
  const mine = outcomes.filter((o) => o.store === store)
  const clean = mine.filter((o) => o.result === 'clean').length
  lines.push(`  ${store}: ${clean} seeds × ${stepsN} steps clean (${clean * stepsN} steps), ${mine.filter((o) => o.result === 'failed' || o.result === 'error').length} failed, ${mine.filter((o) => o.result === 'cut').length} cut at the time limit`)
}
const notRun = queue.length
if (notRun > 0) lines.push(`  ${notRun} runs not started (time limit)`)
const bad = outcomes.filter((o) => o.result === 'failed' || o.result === 'error')
if (bad.length === 0) lines.push('no failing seed')
else {
  lines.push(`failing seeds (${bad.length}):`)
  for (const o of bad) lines.push(`  seed ${o.seed} ${o.store}: ${o.detail}`)
}
process.stdout.write(lines.join('\n') + '\n')
process.exitCode = bad.length > 0 ? 1 : 0

// Open-loop load on POST /api/v1/externalAuth: requests start at a constant arrival rate whatever the
// answers do (like k6's constant-arrival-rate), so a slow service shows up as latency, not as a lower
// rate. The same scenario and pass/fail limits as k6/load.ts (see k6/scenario.ts).
//
//   npm run load -- --spawn --rate 300 --duration 10       start extauth (embedded store, or REDIS_URL with
//                                                           a prefix of its own, deleted afterwards), seed, run
//   BASE_URL=... ADMIN_URL=... ADMIN_TOKEN=... CONSUMER_KEY=... CLIENT_ID=... BANK_ID=... npm run load
//                                                           against a running extauth
// Exit code: 0 all limits held, 1 a limit failed, 2 bad usage or the run could not start.
import { parseArgs } from 'node:util'
import { randomInt } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { Pool } from 'undici'
import {
  AUTH_PATH, DEFAULT_CREDIT_MINOR, DEFAULT_LIMITS, DEFAULT_WARMUP_S, durationSeconds, expectedDeclineRatio, newRunId,
  planRequest, platformHeaders, type Limits, type PlatformKeys, type Scenario
} from '../k6/scenario.js'
import { spawnEnv, spawnExtauth, type SpawnedExtauth } from './lib/extauth.js'
import { seedThroughAdmin } from './lib/seed.js'
import { deleteByPrefix } from './lib/redis-keys.js'
import { bump, countsLine, ms, percentile, sortedCopy } from './lib/stats.js'
import { delta, scrape } from './lib/server-metrics.js'

const RATE_MAX = 20_000
const DURATION_MAX_S = 600
const REQUESTS_MAX = 1_000_000

class UsageError extends Error {}

const HELP = `npm run load -- [options]
  --spawn               start extauth here (embedded store, or REDIS_URL with a temporary key prefix)
  --rate N              requests started per second            (RATE, default 200, max ${RATE_MAX})
  --duration D          seconds, or 30s / 2m                   (DURATION, default 10, max ${DURATION_MAX_S} s)
  --warmup D            at the same rate before the measured part, its answers checked but its
                        latency not held to --p99-ms           (WARMUP, default ${DEFAULT_WARMUP_S}; 0 = none)
  --urns N              funded customers                       (URNS, default 50)
  --connections N       HTTP connections                       (CONNECTIONS, default 32)
  --max-in-flight N     requests outstanding before new ones are dropped (MAX_IN_FLIGHT, default 1000)
  --decline-every N     every N-th request is meant to decline (DECLINE_EVERY, default 10; 0 = none)
  --p99-ms N            limit on client-measured p99           (P99_MS, default ${DEFAULT_LIMITS.p99Ms})
  --decline-band X      allowed distance of the decline ratio from expected (DECLINE_BAND, default ${DEFAULT_LIMITS.declineBand})
  --deadline-ms N       answers slower than this fail the run  (DEADLINE_MS, default ${DEFAULT_LIMITS.deadlineMs})
  --no-seed             the customers exist already (needs --run-id)
  --run-id ID           reuse a run id (its customers), 8 base-36 characters
  --allow-remote        permit a BASE_URL that is not on this machine
Without --spawn: BASE_URL (default http://127.0.0.1:8080), ADMIN_URL (http://127.0.0.1:8081), ADMIN_TOKEN,
CONSUMER_KEY, CLIENT_ID, BANK_ID name the running extauth.`

function numberOpt (name: string, raw: string | undefined, fallback: number, lo: number, hi: number): number {
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n < lo || n > hi) throw new UsageError(`--${name}: "${raw}" must be a number from ${lo} to ${hi}`)
  return n
}

function durationOpt (name: string, raw: string | undefined, fallback: number, zeroOk: boolean): number {
  if (raw === undefined || raw === '') return fallback
  const v = durationSeconds(raw)
  if (v === null) throw new UsageError(`--${name}: "${raw}" is not a duration (10, 10s, 2m)`)
  if (v > DURATION_MAX_S || (v === 0 && !zeroOk)) throw new UsageError(`--${name}: ${zeroOk ? `from 0 to ${DURATION_MAX_S} s` : `more than 0 and at most ${DURATION_MAX_S} s`}`)
  return v
}

function isLoopback (url: string): boolean {
  const host = new URL(url).hostname
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

interface Options {
  spawn: boolean
  rate: number
  durationS: number
  warmupS: number
  urns: number
  connections: number
  maxInFlight: number
  declineEvery: number
  limits: Limits
  seed: boolean
  runId: string | undefined
  allowRemote: boolean
}

function options (argv: string[]): Options | null {
  const { values: v } = parseArgs({
    args: argv,
    strict: true,
    options: {
      spawn: { type: 'boolean', default: false },
      rate: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      urns: { type: 'string' },
      connections: { type: 'string' },
      'max-in-flight': { type: 'string' },
      'decline-every': { type: 'string' },
      'p99-ms': { type: 'string' },
      'decline-band': { type: 'string' },
      'deadline-ms': { type: 'string' },
      'no-seed': { type: 'boolean', default: false },
      'run-id': { type: 'string' },
      'allow-remote': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false }
    }
  })
  if (v.help === true) return null
  const env = process.env
  const o: Options = {
    spawn: v.spawn === true,
    rate: numberOpt('rate', v.rate ?? env.RATE, 200, 0.1, RATE_MAX),
    durationS: durationOpt('duration', v.duration ?? env.DURATION, 10, false),
    warmupS: durationOpt('warmup', v.warmup ?? env.WARMUP, DEFAULT_WARMUP_S, true),
    urns: Math.floor(numberOpt('urns', v.urns ?? env.URNS, 50, 1, 100_000)),
    connections: Math.floor(numberOpt('connections', v.connections ?? env.CONNECTIONS, 32, 1, 1024)),
    maxInFlight: Math.floor(numberOpt('max-in-flight', v['max-in-flight'] ?? env.MAX_IN_FLIGHT, 1000, 1, 100_000)),
    declineEvery: Math.floor(numberOpt('decline-every', v['decline-every'] ?? env.DECLINE_EVERY, 10, 0, 1_000_000)),
    limits: {
      p99Ms: numberOpt('p99-ms', v['p99-ms'] ?? env.P99_MS, DEFAULT_LIMITS.p99Ms, 1, 60_000),
      declineBand: numberOpt('decline-band', v['decline-band'] ?? env.DECLINE_BAND, DEFAULT_LIMITS.declineBand, 0, 1),
      deadlineMs: numberOpt('deadline-ms', v['deadline-ms'] ?? env.DEADLINE_MS, DEFAULT_LIMITS.deadlineMs, 1, 60_000)
    },
    seed: v['no-seed'] !== true,
    runId: v['run-id'],
    allowRemote: v['allow-remote'] === true
  }
  if (o.declineEvery === 1) throw new UsageError('--decline-every 1 would decline everything; use 0 (none) or 2 and up')
  if (o.rate * (o.warmupS + o.durationS) > REQUESTS_MAX) throw new UsageError(`rate × (warm-up + duration) is over ${REQUESTS_MAX} requests`)
  if (!o.seed && o.runId === undefined) throw new UsageError('--no-seed needs --run-id (the customers of an earlier run)')
  if (o.runId !== undefined && !/^[0-9a-z]{8}$/.test(o.runId)) throw new UsageError('--run-id: 8 base-36 characters')
  return o
}

interface Target {
  baseUrl: string
  adminUrl: string
  adminToken: string
  keys: PlatformKeys
  label: string
}

function targetFromEnv (allowRemote: boolean): Target {
  const env = process.env
  const baseUrl = env.BASE_URL ?? 'http://127.0.0.1:8080'
  const adminUrl = env.ADMIN_URL ?? 'http://127.0.0.1:8081'
  for (const u of [baseUrl, adminUrl]) {
    if (!allowRemote && !isLoopback(u)) throw new UsageError(`${u} is not on this machine; pass --allow-remote to load it anyway`)
  }
  const keys = { consumerKey: env.CONSUMER_KEY ?? '', clientId: env.CLIENT_ID ?? '', bankId: env.BANK_ID ?? '' }
  if (keys.consumerKey === '' || keys.clientId === '' || keys.bankId === '') {
    throw new UsageError('set CONSUMER_KEY, CLIENT_ID and BANK_ID (the values extauth expects), or use --spawn')
  }
  return { baseUrl, adminUrl, adminToken: env.ADMIN_TOKEN ?? '', keys, label: baseUrl }
}

interface Result {
  /** seconds from the phase's first planned start to its last answer */
  elapsedS: number
  started: number
  dropped: number
  latenciesMs: number[]
  statuses: Map<string, number>
  codes: Map<string, number>
  declined: number
  answered: number
  unexpected: number
  overDeadline: number
  errors: Map<string, number>
  maxLagMs: number
}

function emptyResult (): Result {
  return {
    elapsedS: 0, started: 0, dropped: 0, latenciesMs: [], statuses: new Map(), codes: new Map(), declined: 0,
    answered: 0, unexpected: 0, overDeadline: 0, errors: new Map(), maxLagMs: 0
  }
}

/**
 * Starts request seq at t0 + seq/rate until rate × (warm-up + duration) have started, then waits for the
 * answers. The first rate × warm-up requests are the warm-up's, the rest the measured part's: one schedule,
 * without a pause between the two.
 */
async function run (t: Target, s: Scenario, o: Options, stopping: { signal: boolean }): Promise<{ warmup: Result, measured: Result }> {
  const pool = new Pool(t.baseUrl, { connections: o.connections, pipelining: 1, keepAliveTimeout: 30_000 })
  const headers = platformHeaders(t.keys)
  const warmupCount = Math.round(o.rate * o.warmupS)
  let total = warmupCount + Math.round(o.rate * o.durationS)
  const intervalMs = 1000 / o.rate
  const warmup = emptyResult()
  const measured = emptyResult()
  const phaseOf = (seq: number): Result => seq < warmupCount ? warmup : measured
  const lastDone = new Map<Result, number>()
  let inFlight = 0
  let settle: () => void = () => {}
  const drained = new Promise<void>((resolve) => { settle = resolve })
  let scheduled = 0
  const t0 = performance.now()

  function fire (seq: number): void {
    const r = phaseOf(seq)
    const planned = planRequest(s, seq)
    const body = JSON.stringify(planned.body)
    inFlight++
    r.started++
    const sentAt = performance.now()
    pool.request({ method: 'POST', path: AUTH_PATH, headers, body, headersTimeout: 5000, bodyTimeout: 5000 })
      .then(async (res) => {
        const text = await res.body.text()
        const latency = performance.now() - sentAt
        r.latenciesMs.push(latency)
        if (latency > o.limits.deadlineMs) r.overDeadline++
        bump(r.statuses, String(res.statusCode))
        let code = ''
        try { code = String((JSON.parse(text) as { responseCode?: unknown }).responseCode ?? '') } catch { code = 'not-json' }
        bump(r.codes, code)
        r.answered++
        if (code !== '00') r.declined++
        if (code !== planned.expectCode) r.unexpected++
      })
      .catch((err: unknown) => {
        bump(r.errors, (err as { code?: string }).code ?? (err as Error).name)
      })
      .finally(() => {
        inFlight--
        lastDone.set(r, performance.now())
        if (inFlight === 0 && scheduled >= total) settle()
      })
  }

  await new Promise<void>((resolve) => {
    const tick = (): void => {
      // Ctrl-C: start nothing more, wait for the answers, report what was measured
      if (stopping.signal) total = scheduled
      const now = performance.now()
      const due = Math.min(total, Math.floor((now - t0) / intervalMs) + 1)
      while (scheduled < due) {
        const r = phaseOf(scheduled)
        const lag = now - (t0 + scheduled * intervalMs)
        if (lag > r.maxLagMs) r.maxLagMs = lag
        if (inFlight >= o.maxInFlight) r.dropped++
        else fire(scheduled)
        scheduled++
      }
      if (scheduled >= total) { resolve(); return }
      setTimeout(tick, Math.max(0, t0 + scheduled * intervalMs - performance.now()))
    }
    tick()
  })
  if (inFlight > 0) await drained
  warmup.elapsedS = ((lastDone.get(warmup) ?? t0) - t0) / 1000
  measured.elapsedS = ((lastDone.get(measured) ?? t0) - (t0 + warmupCount * intervalMs)) / 1000
  await pool.close()
  return { warmup, measured }
}

/** Answers other than HTTP 200 (or none), of the requests started (a dropped request is not started). */
const non200Of = (r: Result): number => r.started - (r.statuses.get('200') ?? 0)
const latencyLine = (sorted: Float64Array): string =>
  `p50 ${ms(percentile(sorted, 50))}  p90 ${ms(percentile(sorted, 90))}  p99 ${ms(percentile(sorted, 99))}  max ${ms(percentile(sorted, 100))}`
const statusLine = (r: Result): string => countsLine(r.statuses) + (r.errors.size > 0 ? `  errors: ${countsLine(r.errors)}` : '')

function report (s: Scenario, o: Options, runs: { warmup: Result, measured: Result }, server: string | null): boolean {
  const { warmup: w, measured: r } = runs
  const sorted = sortedCopy(r.latenciesMs)
  const p99 = percentile(sorted, 99)
  const ratio = r.answered > 0 ? r.declined / r.answered : NaN
  const expected = expectedDeclineRatio(s)
  const checks: Array<[string, boolean]> = [
    [`p99 ${ms(p99)} ms < ${o.limits.p99Ms} ms`, p99 < o.limits.p99Ms],
    [`non-200 answers or transport errors: ${non200Of(r)} == 0`, non200Of(r) === 0],
    [`answers slower than ${o.limits.deadlineMs} ms: ${r.overDeadline} == 0`, r.overDeadline === 0],
    [`decline ratio ${ratio.toFixed(3)} within ${expected.toFixed(3)} ± ${o.limits.declineBand}`, Math.abs(ratio - expected) <= o.limits.declineBand + 1e-9],
    [`dropped (over ${o.maxInFlight} in flight): ${r.dropped} == 0`, r.dropped === 0]
  ]
  const line = (k: string, v: string): void => { process.stdout.write(`${k.padEnd(14)}${v}\n`) }
  if (w.started + w.dropped > 0) {
    // a wrong or late answer is one in the warm-up too; only its latency and drops are not held to the limits
    checks.push(
      [`warm-up: non-200 answers or transport errors: ${non200Of(w)} == 0`, non200Of(w) === 0],
      [`warm-up: answers slower than ${o.limits.deadlineMs} ms: ${w.overDeadline} == 0`, w.overDeadline === 0]
    )
    line('warm-up', `${w.answered} answered in ${w.elapsedS.toFixed(2)} s; latency ms ${latencyLine(sortedCopy(w.latenciesMs))}; ` +
      `status ${statusLine(w)}; dropped ${w.dropped}; not held to the p99 limit`)
  }
  line('achieved', `${(r.answered / r.elapsedS).toFixed(1)} req/s answered (${r.answered} in ${r.elapsedS.toFixed(2)} s; target ${o.rate}/s)`)
  line('latency ms', `${latencyLine(sorted)}  (client: send → full answer)`)
  line('status', statusLine(r))
  line('responseCode', countsLine(r.codes))
  line('declines', `${ratio.toFixed(4)} (expected ${expected.toFixed(4)}); answers not the planned code: ${r.unexpected}`)
  line('late', `${r.overDeadline} answers slower than ${o.limits.deadlineMs} ms`)
  // answers 05 without a decision, as extauth counted them (GET /metrics on the admin listener), warm-up included
  if (server !== null) line('server', server)
  line('generator', `started ${r.started}, dropped ${r.dropped}, worst start lag ${ms(r.maxLagMs)} ms`)
  for (const [what, ok] of checks) process.stdout.write(`  ${ok ? 'ok  ' : 'FAIL'} ${what}\n`)
  const pass = checks.every(([, ok]) => ok)
  process.stdout.write(pass ? 'PASS\n' : 'FAIL\n')
  return pass
}

async function main (): Promise<number> {
  let o: Options | null
  try {
    o = options(process.argv.slice(2))
  } catch (err) {
    process.stderr.write(`load: ${(err as Error).message}\n${HELP}\n`)
    return 2
  }
  if (o === null) { process.stdout.write(`${HELP}\n`); return 0 }

  const scenario: Scenario = {
    runId: o.runId ?? newRunId(Date.now(), randomInt(37)),
    urns: o.urns,
    declineEvery: o.declineEvery,
    creditMinor: DEFAULT_CREDIT_MINOR
  }
  let spawned: SpawnedExtauth | undefined
  let target: Target
  let passed = false
  const stopping = { signal: false }
  const onSignal = (): void => { stopping.signal = true }
  process.once('SIGINT', onSignal)
  try {
    if (o.spawn) {
      const redisUrl = process.env.REDIS_URL
      spawned = await spawnExtauth({
        ...(redisUrl !== undefined && redisUrl !== '' ? { redisUrl, redisPrefix: `extauth-load:${scenario.runId}:` } : {}),
        env: spawnEnv(process.env)
      })
      target = { ...spawned, label: `${spawned.baseUrl} (spawned, ${spawned.redis !== undefined ? `Redis ${spawned.redis.url} prefix ${spawned.redis.prefix}` : 'embedded store'}; log ${spawned.child.logFile})` }
    } else {
      target = targetFromEnv(o.allowRemote)
    }
  } catch (err) {
    process.stderr.write(`load: ${(err as Error).message}\n`)
    return 2
  }

  try {
    const warm = o.warmupS > 0 ? ` after ${o.warmupS} s of warm-up (${Math.round(o.rate * o.warmupS)} requests)` : ''
    process.stdout.write(`extauth load: ${o.rate}/s for ${o.durationS} s (${Math.round(o.rate * o.durationS)} requests)${warm}, ${o.urns} customers, ` +
      `${o.connections} connections, run ${scenario.runId}\n  → ${target.label}\n`)
    if (o.seed) {
      if (target.adminToken === '') throw new UsageError('set ADMIN_TOKEN: the run creates its customers through the admin API (or --no-seed --run-id)')
      const t = performance.now()
      const calls = await seedThroughAdmin(target.adminUrl, target.adminToken, scenario)
      process.stdout.write(`seeded         ${calls} admin calls in ${((performance.now() - t) / 1000).toFixed(2)} s\n`)
    }
    if (stopping.signal) return 2
    const before = await scrape(target.adminUrl)
    const r = await run(target, scenario, o, stopping)
    const server = delta(before, await scrape(target.adminUrl))
    passed = report(scenario, o, r, server)
    return passed ? 0 : 1
  } catch (err) {
    process.stderr.write(`load: ${(err as Error).message}\n`)
    return 2
  } finally {
    if (spawned !== undefined) {
      const code = await spawned.child.stop()
      if (code !== 0) process.stderr.write(`load: extauth exited with ${String(code)}; last lines:\n${spawned.child.tail()}\n`)
      else if (passed) spawned.child.removeLog()
      else process.stdout.write(`extauth log: ${spawned.child.logFile}\n`)
      if (spawned.redis !== undefined) {
        const n = await deleteByPrefix(spawned.redis.url, spawned.redis.prefix)
        process.stdout.write(`cleanup        deleted ${n} keys under ${spawned.redis.prefix}\n`)
      }
    }
  }
}

process.exitCode = await main()

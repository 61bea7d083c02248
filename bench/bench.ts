// extauth against its floor: the same closed-loop load on extauth (on Redis) and on bench/baseline-server.ts
// (same schema, header check and answer, one Redis round trip per request), in one process tree, figures
// side by side. Not a test: nothing here asserts a speed.
//   npm run bench [-- --duration 10 --warmup 2 --connections 32 --urns 1000 --rounds 2 --log-level info]
// REDIS_URL (default redis://127.0.0.1:6379); all keys go under a fresh prefix and are deleted at the end.
//   npm run bench -- --replica [--wait-replicas 1]
// What REDIS_WAIT_REPLICAS costs: a private primary and one replica (redis-server on free loopback ports,
// stopped at the end) instead of REDIS_URL, and extauth with REDIS_WAIT_REPLICAS=N against extauth without
// it, in place of the baseline.
import { parseArgs } from 'node:util'
import { spawn, type ChildProcess } from 'node:child_process'
import { Redis } from 'ioredis'
import { randomBytes, randomInt } from 'node:crypto'
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Pool } from 'undici'
import { AUTH_PATH, DEFAULT_CREDIT_MINOR, newRunId, planRequest, platformHeaders, type PlatformKeys, type Scenario } from '../k6/scenario.js'
import { spawnExtauth, REPO_ROOT, type SpawnedExtauth } from '../scripts/lib/extauth.js'
import { startChild, waitUntilReady, type Child } from '../scripts/lib/child.js'
import { freePort } from '../scripts/lib/free-port.js'
import { seedThroughAdmin } from '../scripts/lib/seed.js'
import { deleteByPrefix, redisVersion } from '../scripts/lib/redis-keys.js'
import { bump, countsLine, ms, percentile, sortedCopy } from '../scripts/lib/stats.js'

/** the whole measured part (warm-ups and runs) must fit in this */
const BUDGET_S = 80

const { values: v } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    urns: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '2' },
    'log-level': { type: 'string', default: 'info' },
    replica: { type: 'boolean', default: false },
    'wait-replicas': { type: 'string', default: '1' }
  }
})
const withReplica = v.replica === true
const waitReplicas = Math.floor(Number(v['wait-replicas']))
if (withReplica && !(waitReplicas >= 1 && waitReplicas <= 1)) {
  process.stderr.write('bench: --wait-replicas must be 1 (one local replica)\n')
  process.exit(2)
}
const durationS = Number(v.duration)
const warmupS = Number(v.warmup)
const connections = Math.floor(Number(v.connections))
const urns = Math.floor(Number(v.urns))
const rounds = Math.floor(Number(v.rounds))
const logLevel = v['log-level']
for (const [name, n] of [['duration', durationS], ['warmup', warmupS], ['connections', connections], ['urns', urns], ['rounds', rounds]] as const) {
  if (!Number.isFinite(n) || n < 0 || (name !== 'warmup' && n === 0)) {
    process.stderr.write(`bench: --${name} must be a positive number\n`)
    process.exit(2)
  }
}
if (2 * warmupS + 2 * rounds * durationS > BUDGET_S) {
  process.stderr.write(`bench: 2 × warmup + 2 × rounds × duration must be at most ${BUDGET_S} s\n`)
  process.exit(2)
}

let redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const prefix = `extauth-bench:${randomBytes(6).toString('hex')}:`

interface Target { name: string, url: string, keys: PlatformKeys }
interface Run {
  target: Target['name']
  completed: number
  elapsedS: number
  latenciesMs: number[]
  statuses: Map<string, number>
  codes: Map<string, number>
  errors: number
}

const scenario: Scenario = { runId: newRunId(Date.now(), randomInt(37)), urns, declineEvery: 0, creditMinor: DEFAULT_CREDIT_MINOR }
let seq = 0

const loadAverage = (): string => loadavg().map((l) => l.toFixed(2)).join(' ')

/** `connections` loops, each sending the next request when its answer has fully arrived, for seconds. */
async function closedLoop (t: Target, seconds: number): Promise<Run> {
  const pool = new Pool(t.url, { connections, pipelining: 1, keepAliveTimeout: 30_000 })
  const headers = platformHeaders(t.keys)
  const r: Run = { target: t.name, completed: 0, elapsedS: 0, latenciesMs: [], statuses: new Map(), codes: new Map(), errors: 0 }
  const start = performance.now()
  const end = start + seconds * 1000
  async function loop (): Promise<void> {
    while (performance.now() < end) {
      const body = JSON.stringify(planRequest(scenario, seq++).body)
      const sentAt = performance.now()
      try {
        const res = await pool.request({ method: 'POST', path: AUTH_PATH, headers, body, headersTimeout: 5000, bodyTimeout: 5000 })
        const text = await res.body.text()
        r.latenciesMs.push(performance.now() - sentAt)
        r.completed++
        bump(r.statuses, String(res.statusCode))
        bump(r.codes, /"responseCode":"(\d\d)"/.exec(text)?.[1] ?? '?')
      } catch {
        r.errors++
      }
    }
  }
  await Promise.all(Array.from({ length: connections }, loop))
  r.elapsedS = (performance.now() - start) / 1000
  await pool.close()
  return r
}

interface Summary { rps: number, p50: number, p99: number }
function summarize (runs: Run[]): Summary {
  const completed = runs.reduce((a, r) => a + r.completed, 0)
  const elapsed = runs.reduce((a, r) => a + r.elapsedS, 0)
  const sorted = sortedCopy(runs.flatMap((r) => r.latenciesMs))
  return { rps: completed / elapsed, p50: percentile(sorted, 50), p99: percentile(sorted, 99) }
}

function row (label: string, s: Summary, extra = ''): string {
  return `${label.padEnd(22)}${s.rps.toFixed(0).padStart(9)}${ms(s.p50).padStart(10)}${ms(s.p99).padStart(10)}  ${extra}\n`
}

/** A primary and one replica of it on free loopback ports, in sync; `stop` kills both. */
async function primaryWithReplica (): Promise<{ url: string, stop: () => Promise<void> }> {
  const procs: ChildProcess[] = []
  const [p, r] = [await freePort(), await freePort()]
  const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  procs.push(spawn('redis-server', ['--port', String(p), ...common], { stdio: 'ignore' }))
  procs.push(spawn('redis-server', ['--port', String(r), ...common, '--replicaof', '127.0.0.1', String(p)], { stdio: 'ignore' }))
  const stop = async (): Promise<void> => {
    await Promise.all(procs.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return
      const exited = new Promise((resolve) => c.once('exit', resolve))
      c.kill('SIGKILL')
      await exited
    }))
  }
  const replica = new Redis({ host: '127.0.0.1', port: r, retryStrategy: () => 50, maxRetriesPerRequest: 0 })
  replica.on('error', () => {})
  try {
    const until = Date.now() + 10_000
    for (;;) {
      const info = await replica.info('replication').catch(() => '')
      if (/master_link_status:up/.test(info)) break
      if (Date.now() > until) throw new Error('the local replica did not sync within 10 s')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  } catch (err) {
    await stop()
    throw err
  } finally {
    replica.disconnect()
  }
  return { url: `redis://127.0.0.1:${p}`, stop }
}

async function main (): Promise<number> {
  const out = process.stdout
  let replicaPair: { url: string, stop: () => Promise<void> } | undefined
  if (withReplica) {
    try {
      replicaPair = await primaryWithReplica()
    } catch (err) {
      process.stderr.write(`bench: ${(err as Error).message}\n`)
      return 2
    }
    redisUrl = replicaPair.url
  }
  try {
    return await measure(out)
  } finally {
    await replicaPair?.stop()
  }
}

async function measure (out: NodeJS.WriteStream): Promise<number> {
  let redis: string
  try {
    redis = await redisVersion(redisUrl)
  } catch (err) {
    process.stderr.write(`bench: Redis at ${redisUrl} does not answer (${(err as Error).message}); set REDIS_URL\n`)
    return 2
  }
  out.write(`node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown cpu'}), ` +
    `redis ${redis} at ${redisUrl}${withReplica ? ' (private, with one local replica)' : ''}\n`)
  if (withReplica) out.write(`comparing extauth with REDIS_WAIT_REPLICAS=${waitReplicas} ("extauth+wait") against extauth without it\n`)
  out.write(`closed loop: ${connections} connections, ${urns} funded customers, unique references, ` +
    `${warmupS} s warm-up each, then ${rounds} × ${durationS} s per server in alternating order; extauth LOG_LEVEL=${logLevel}\n` +
    `load generator, both servers and Redis share this machine; load average now ${loadAverage()}\n\n`)

  let extauth: SpawnedExtauth | undefined
  let extauthWait: SpawnedExtauth | undefined
  let baseline: Child | undefined
  let clean = false
  try {
    const keys: PlatformKeys = { consumerKey: `bench-${randomBytes(6).toString('hex')}`, clientId: 'bench-client', bankId: '1234' }
    let targets: Target[]
    if (withReplica) {
      // the two share one prefix: the customers seeded once serve both
      const [plain, waiting] = await Promise.allSettled([
        spawnExtauth({ redisUrl, redisPrefix: `${prefix}x:`, logLevel, name: 'bench-extauth', keys }),
        spawnExtauth({ redisUrl, redisPrefix: `${prefix}x:`, logLevel, name: 'bench-extauth-wait', keys, env: { REDIS_WAIT_REPLICAS: String(waitReplicas) } })
      ])
      if (plain.status === 'fulfilled') extauth = plain.value
      if (waiting.status === 'fulfilled') extauthWait = waiting.value
      if (plain.status === 'rejected') throw plain.reason
      if (waiting.status === 'rejected') throw waiting.reason
      targets = [
        { name: 'extauth', url: plain.value.baseUrl, keys },
        { name: 'extauth+wait', url: waiting.value.baseUrl, keys }
      ]
    } else {
      const baselinePort = await freePort()
      baseline = startChild(['--import', 'tsx', join(REPO_ROOT, 'bench/baseline-server.ts')], {
        cwd: REPO_ROOT,
        logFile: join(tmpdir(), `bench-baseline-${process.pid}.log`),
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'production',
          PORT: String(baselinePort),
          REDIS_URL: redisUrl,
          REDIS_KEY_PREFIX: `${prefix}b:`,
          EXTAUTH_CONSUMER_KEY: keys.consumerKey,
          EXTAUTH_CLIENT_ID: keys.clientId,
          EXTAUTH_BANK_ID: keys.bankId
        }
      })
      const baseUrl = `http://127.0.0.1:${baselinePort}`
      // allSettled: a started extauth must be stopped in `finally` even when the baseline failed to start
      const [started, baselineReady] = await Promise.allSettled([
        spawnExtauth({ redisUrl, redisPrefix: `${prefix}x:`, logLevel, name: 'bench-extauth', keys }),
        waitUntilReady(baseline, `${baseUrl}/health/ready`)
      ])
      if (started.status === 'rejected') throw started.reason
      extauth = started.value
      if (baselineReady.status === 'rejected') throw baselineReady.reason
      targets = [
        { name: 'extauth', url: started.value.baseUrl, keys },
        { name: 'baseline', url: baseUrl, keys }
      ]
    }
    const ext = extauth
    if (ext === undefined) throw new Error('extauth did not start')

    const t = performance.now()
    const calls = await seedThroughAdmin(ext.adminUrl, ext.adminToken, scenario, 32)
    out.write(`seeded ${urns} customers (${calls} admin calls) in ${((performance.now() - t) / 1000).toFixed(1)} s\n`)

    if (warmupS > 0) for (const tg of targets) await closedLoop(tg, warmupS)

    const runs: Run[] = []
    out.write(`\n${''.padEnd(22)}${'req/s'.padStart(9)}${'p50 ms'.padStart(10)}${'p99 ms'.padStart(10)}\n`)
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse()
      for (const tg of order) {
        const r = await closedLoop(tg, durationS)
        runs.push(r)
        out.write(row(`${tg.name} run ${round + 1}`, summarize([r]), `status ${countsLine(r.statuses)}  codes ${countsLine(r.codes)}${r.errors > 0 ? `  errors ${r.errors}` : ''}`))
      }
    }
    const [first, second] = targets.map((tg) => tg.name) as [string, string]
    const e = summarize(runs.filter((r) => r.target === first))
    const b = summarize(runs.filter((r) => r.target === second))
    out.write('\n')
    out.write(row(`${first} (all runs)`, e))
    out.write(row(`${second} (all runs)`, b))
    out.write(`${`${first} / ${second}`.padEnd(22)}${(e.rps / b.rps).toFixed(2).padStart(9)}${(e.p50 / b.p50).toFixed(2).padStart(10)}${(e.p99 / b.p99).toFixed(2).padStart(10)}\n`)
    out.write(`load average after the runs: ${loadAverage()} (other work on the machine skews the figures)\n`)
    const bad = runs.filter((r) => r.errors > 0 || r.statuses.size !== 1 || !r.statuses.has('200') ||
      (r.target !== 'baseline' && (r.codes.size !== 1 || !r.codes.has('00'))))
    if (bad.length > 0) {
      out.write('\nWARNING: some answers were not 200/00 (see the runs above); the figures are not comparable\n')
      return 1
    }
    clean = true
    return 0
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n`)
    return 2
  } finally {
    const codes = await Promise.all([extauth?.child.stop(), extauthWait?.child.stop(), baseline?.stop()])
    if (clean && codes.every((c) => c === 0 || c === undefined)) {
      extauth?.child.removeLog()
      extauthWait?.child.removeLog()
      baseline?.removeLog()
    } else {
      process.stderr.write(`bench: logs kept: ${[extauth?.child.logFile, extauthWait?.child.logFile, baseline?.logFile].filter(Boolean).join(', ')} (exit codes ${codes.join(', ')})\n`)
    }
    const n = await deleteByPrefix(redisUrl, prefix)
    process.stdout.write(`cleanup: deleted ${n} keys under ${prefix}\n`)
  }
}

process.exitCode = await main()

// extauth against its floors: the same closed-loop load on extauth (on Redis) and on two floors of its
// architecture, in one process tree, each server run as built JavaScript (as production runs it), figures
// side by side. Not a test: nothing here asserts a speed.
//   - the floor (bench/baseline-server.ts): same schema, header check and answer, one Redis round trip;
//   - the fair floor (bench/fair-floor-server.ts): the least extauth's guarantees need on the same stack.
//   npm run bench [-- --duration 10 --warmup 2 --connections 32 --urns 1000 --rounds 2 --log-level info]
//   npm run bench -- --compare DIR   # also an extauth built from another checkout (DIR/dist/server.js), A/B
//   npm run bench -- --tsx           # also extauth from the sources through tsx (what `npm run dev` runs)
// REDIS_URL (default redis://127.0.0.1:6379); all keys go under a fresh prefix and are deleted at the end.
//   npm run bench -- --replica [--wait-replicas 1]
// What REDIS_WAIT_REPLICAS costs: a private primary and one replica (redis-server on free loopback ports,
// stopped at the end) instead of REDIS_URL, and extauth with REDIS_WAIT_REPLICAS=N against extauth without
// it, in place of the floors.
import { parseArgs } from 'node:util'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { Redis } from 'ioredis'
import { randomBytes, randomInt } from 'node:crypto'
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Pool } from 'undici'
import { AUTH_PATH, DEFAULT_CREDIT_MINOR, newRunId, planRequest, platformHeaders, type PlatformKeys, type Scenario } from '../k6/scenario.js'
import { spawnEnv, spawnExtauth, REPO_ROOT, type SpawnedExtauth } from '../scripts/lib/extauth.js'
import { startChild, waitUntilReady, type Child } from '../scripts/lib/child.js'
import { freePort } from '../scripts/lib/free-port.js'
import { until } from '../scripts/lib/until.js'
import { buildCheckout, cpuSeconds } from './lib/machine.js'
import { FAIR_FLOOR_TARGETS } from './lib/fair-floor-script.js'
import { allocation, allocationLines, merged, type HeapProfile } from './lib/heap-profile.js'
import { seedThroughAdmin } from '../scripts/lib/seed.js'
import { deleteByPrefix, redisVersion } from '../scripts/lib/redis-keys.js'
import { bump, countsLine, ms, percentile, sortedCopy } from '../scripts/lib/stats.js'
import { Keys } from '../src/store/keys.js'
import { decodeRecord } from '../src/store/record-format.js'

/** the measured part (warm-up and runs) of each server must fit in this */
const BUDGET_PER_SERVER_S = 45
/** decision records sampled per server for their size in Redis */
const SAMPLES_MAX = 200

const { values: v } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    urns: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '2' },
    'log-level': { type: 'string', default: 'info' },
    compare: { type: 'string' },
    tsx: { type: 'boolean', default: false },
    replica: { type: 'boolean', default: false },
    'wait-replicas': { type: 'string', default: '1' },
    'heap-profile': { type: 'string' }
  }
})
/** --heap-profile DIR: each server's measured runs sampled by V8's heap profiler, the profiles kept in DIR */
const heapDir = v['heap-profile'] !== undefined ? resolve(v['heap-profile']) : undefined
const withReplica = v.replica === true
const waitReplicas = Math.floor(Number(v['wait-replicas']))
if (withReplica && !(waitReplicas >= 1 && waitReplicas <= 1)) {
  process.stderr.write('bench: --wait-replicas must be 1 (one local replica)\n')
  process.exit(2)
}
const compareDir = v.compare !== undefined ? resolve(v.compare) : undefined
if (compareDir !== undefined && !existsSync(join(compareDir, 'tsconfig.build.json'))) {
  process.stderr.write(`bench: --compare ${compareDir} is not an extauth checkout (no tsconfig.build.json)\n`)
  process.exit(2)
}
const durationS = Number(v.duration)
const warmupS = Number(v.warmup)
const connections = Math.floor(Number(v.connections))
const urns = Math.floor(Number(v.urns))
const rounds = Math.floor(Number(v.rounds))
const logLevel = v['log-level']
/** what every extauth takes from this environment (spawnEnv) */
const passed = spawnEnv()
for (const [name, n] of [['duration', durationS], ['warmup', warmupS], ['connections', connections], ['urns', urns], ['rounds', rounds]] as const) {
  if (!Number.isFinite(n) || n < 0 || (name !== 'warmup' && n === 0)) {
    process.stderr.write(`bench: --${name} must be a positive number\n`)
    process.exit(2)
  }
}
if (warmupS + rounds * durationS > BUDGET_PER_SERVER_S) {
  process.stderr.write(`bench: warmup + rounds × duration must be at most ${BUDGET_PER_SERVER_S} s\n`)
  process.exit(2)
}

let redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const prefix = `extauth-bench:${randomBytes(6).toString('hex')}:`

type Kind = 'extauth' | 'floor'
interface Target { name: string, kind: Kind, url: string, keys: PlatformKeys, pid: number, prefix: string, allocFile: string }
interface Run {
  target: Target['name']
  completed: number
  elapsedS: number
  latenciesMs: number[]
  statuses: Map<string, number>
  codes: Map<string, number>
  errors: number
  /** CPU seconds of the server's process, and of Redis (shared: others' work counts too), over the run */
  nodeCpuS: number
  redisCpuS: number
  /** bytes the server's process allocated on V8's heap over the run (bench/lib/alloc-probe.ts) */
  allocBytes: number
  /** some approved (urn, reference) pairs, for the size of their records */
  samples: Array<{ urn: string, reference: string }>
  /** with --heap-profile: the run's heap profile */
  heapFile?: string
}

const scenario: Scenario = { runId: newRunId(Date.now(), randomInt(37)), urns, declineEvery: 0, creditMinor: DEFAULT_CREDIT_MINOR }
let seq = 0

const loadAverage = (): string => loadavg().map((l) => l.toFixed(2)).join(' ')

/** a server's name as a file name: `fair floor` → `fair-floor` */
const slug = (name: string): string => name.replace(/[^A-Za-z0-9.@+-]+/g, '-').replace(/^-|-$/g, '')
/** with --heap-profile: where a server's probe writes its runs' profiles, `<prefix>.<reading>.heapprofile` */
const heapPrefixOf = (name: string): string => join(heapDir ?? '', slug(name))

/** The server's probe loaded into each server: its allocated bytes on SIGWINCH (bench/lib/alloc-probe.ts). */
const probeEnv = (allocFile: string, name: string): Record<string, string> => ({
  NODE_OPTIONS: `--import ${join(REPO_ROOT, '.bench-build/bench/lib/alloc-probe.js')}`,
  ALLOC_PROBE_FILE: allocFile,
  ...(heapDir !== undefined ? { ALLOC_PROBE_HEAP: heapPrefixOf(name) } : {})
})

/** The profile the probe writes for the interval its last reading closed, moved to `to` once whole. */
async function heapProfileOf (t: Target, to: string): Promise<string> {
  const from = `${heapPrefixOf(t.name)}.${probeSeq.get(t.allocFile) ?? 0}.heapprofile`
  // putting a profile into text takes a second or two; the probe writes it whole under its name
  await until(() => existsSync(from), 60_000, `${t.name}'s heap profile at ${from}`)
  renameSync(from, to)
  return to
}
const probeSeq = new Map<string, number>()
/** Bytes the target's process has allocated so far, as its probe writes them; NaN when it does not answer. */
async function allocatedBytes (t: Target): Promise<number> {
  const last = probeSeq.get(t.allocFile) ?? 0
  try {
    process.kill(t.pid, 'SIGWINCH')
  } catch {
    return Number.NaN
  }
  const end = performance.now() + 2000
  while (performance.now() < end) {
    let text = ''
    try {
      text = readFileSync(t.allocFile, 'utf8')
    } catch { /* not written yet */ }
    const [seqText, bytes] = text.trim().split(' ')
    const n = Number(seqText)
    if (n > last) {
      probeSeq.set(t.allocFile, n)
      return Number(bytes)
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return Number.NaN
}

async function redisCpuSeconds (r: Redis): Promise<number> {
  const info = await r.info('cpu')
  const user = Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1])
  const sys = Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1])
  return user + sys
}

/**
 * `connections` loops, each sending the next request when its answer has fully arrived, for seconds. `label`:
 * a measured run, whose heap profile (with --heap-profile) is kept under that name.
 */
async function closedLoop (t: Target, seconds: number, redis: Redis, label?: string): Promise<Run> {
  const pool = new Pool(t.url, { connections, pipelining: 1, keepAliveTimeout: 30_000 })
  const headers = platformHeaders(t.keys)
  const r: Run = { target: t.name, completed: 0, elapsedS: 0, latenciesMs: [], statuses: new Map(), codes: new Map(), errors: 0, nodeCpuS: 0, redisCpuS: 0, allocBytes: 0, samples: [] }
  const alloc0 = await allocatedBytes(t)
  const cpu0 = cpuSeconds(t.pid)
  const redisCpu0 = await redisCpuSeconds(redis)
  const start = performance.now()
  const end = start + seconds * 1000
  async function loop (): Promise<void> {
    while (performance.now() < end) {
      const planned = planRequest(scenario, seq++).body
      const body = JSON.stringify(planned)
      const sentAt = performance.now()
      try {
        const res = await pool.request({ method: 'POST', path: AUTH_PATH, headers, body, headersTimeout: 5000, bodyTimeout: 5000 })
        const text = await res.body.text()
        r.latenciesMs.push(performance.now() - sentAt)
        r.completed++
        bump(r.statuses, String(res.statusCode))
        const code = /"responseCode":"(\d\d)"/.exec(text)?.[1] ?? '?'
        bump(r.codes, code)
        if (code === '00' && r.completed % 97 === 0 && r.samples.length < SAMPLES_MAX) r.samples.push({ urn: planned.urn as string, reference: planned.transactionReferenceNumber as string })
      } catch {
        r.errors++
      }
    }
  }
  await Promise.all(Array.from({ length: connections }, loop))
  r.elapsedS = (performance.now() - start) / 1000
  r.nodeCpuS = cpuSeconds(t.pid) - cpu0
  r.redisCpuS = await redisCpuSeconds(redis) - redisCpu0
  r.allocBytes = await allocatedBytes(t) - alloc0
  await pool.close()
  if (heapDir !== undefined && label !== undefined) r.heapFile = await heapProfileOf(t, join(heapDir, `${label}.heapprofile`))
  return r
}

interface Summary { rps: number, p50: number, p99: number, nodeUs: number, redisUs: number, allocKb: number }
function summarize (runs: Run[]): Summary {
  const completed = runs.reduce((a, r) => a + r.completed, 0)
  const elapsed = runs.reduce((a, r) => a + r.elapsedS, 0)
  const sorted = sortedCopy(runs.flatMap((r) => r.latenciesMs))
  const nodeUs = runs.reduce((a, r) => a + r.nodeCpuS, 0) / completed * 1e6
  const redisUs = runs.reduce((a, r) => a + r.redisCpuS, 0) / completed * 1e6
  const allocKb = runs.reduce((a, r) => a + r.allocBytes, 0) / completed / 1000
  return { rps: completed / elapsed, p50: percentile(sorted, 50), p99: percentile(sorted, 99), nodeUs, redisUs, allocKb }
}

const LABEL = 34
const us = (x: number): string => Number.isFinite(x) ? x.toFixed(1) : '-'
function header (): string {
  return `${''.padEnd(LABEL)}${'req/s'.padStart(9)}${'p50 ms'.padStart(10)}${'p99 ms'.padStart(10)}${'node µs/req'.padStart(13)}${'redis µs/req'.padStart(14)}${'KB/req'.padStart(9)}\n`
}
function row (label: string, s: Summary, extra = ''): string {
  return `${label.padEnd(LABEL)}${s.rps.toFixed(0).padStart(9)}${ms(s.p50).padStart(10)}${ms(s.p99).padStart(10)}${us(s.nodeUs).padStart(13)}${us(s.redisUs).padStart(14)}${us(s.allocKb).padStart(9)}  ${extra}\n`
}
/** a / b for the throughput, b / a for latencies and CPU: above 1 is better for a, in every column */
function ratioRow (a: Summary, b: Summary, label: string): string {
  const f = (x: number): string => Number.isFinite(x) ? x.toFixed(2) : '-'
  return `${label.padEnd(LABEL)}${f(a.rps / b.rps).padStart(9)}${f(b.p50 / a.p50).padStart(10)}${f(b.p99 / a.p99).padStart(10)}${f(b.nodeUs / a.nodeUs).padStart(13)}${f(b.redisUs / a.redisUs).padStart(14)}${f(b.allocKb / a.allocKb).padStart(9)}\n`
}

/**
 * What a program pays per decision beyond the least its guarantees need: extauth's CPU per decision in each
 * process and its allocation, as multiples of the fair floor's, overall and round by round (a round's pair ran
 * minutes apart at most: other work on the machine moves both), beside the targets.
 */
function perDecision (name: string, e: Summary, f: Summary, rounds: Array<[Summary, Summary]>): string {
  const x = (v: number): string => Number.isFinite(v) ? `${v.toFixed(2)}×` : '-'
  const line = (label: string, mine: (s: Summary) => number, target: number): string => {
    const overall = mine(e) / mine(f)
    const each = rounds.map(([a, b]) => x(mine(a) / mine(b))).join(', ')
    return `  ${label.padEnd(12)}${x(overall).padStart(8)}   round by round ${each}   target ≤ ${target.toFixed(1)}×: ${overall <= target ? 'met' : 'not met'}\n`
  }
  return `\n${name} / fair floor, per decision:\n` +
    line('Node CPU', (s) => s.nodeUs, FAIR_FLOOR_TARGETS.node) +
    line('Redis CPU', (s) => s.redisUs, FAIR_FLOOR_TARGETS.redis) +
    `  ${'allocation'.padEnd(12)}${`${e.allocKb.toFixed(1)} KB`.padStart(8)}   fair floor ${f.allocKb.toFixed(1)} KB   target ≤ ${FAIR_FLOOR_TARGETS.allocKb} KB: ${e.allocKb <= FAIR_FLOOR_TARGETS.allocKb ? 'met' : 'not met'}\n`
}

/** A primary and one replica of it on free loopback ports, in sync; `stop` kills both. */
async function primaryWithReplica (): Promise<{ url: string, stop: () => Promise<void> }> {
  const procs: ChildProcess[] = []
  const [p, r] = [await freePort(), await freePort()]
  // the replica's full sync writes a snapshot file even without --save: into a directory of its own
  const dir = mkdtempSync(join(tmpdir(), 'extauth-bench-redis-'))
  const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]
  procs.push(spawn('redis-server', ['--port', String(p), ...common], { stdio: 'ignore' }))
  procs.push(spawn('redis-server', ['--port', String(r), ...common, '--replicaof', '127.0.0.1', String(p)], { stdio: 'ignore' }))
  const stop = async (): Promise<void> => {
    await Promise.all(procs.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return
      const exited = new Promise((resolve) => c.once('exit', resolve))
      c.kill('SIGKILL')
      await exited
    }))
    rmSync(dir, { recursive: true, force: true })
  }
  const replica = new Redis({ host: '127.0.0.1', port: r, retryStrategy: () => 50, maxRetriesPerRequest: 0 })
  replica.on('error', () => {})
  try {
    await until(async () => /master_link_status:up/.test(await replica.info('replication')), 10_000, 'the local replica to sync')
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

/** MEMORY USAGE (exact) of each key, averaged; NaN without keys. */
async function meanBytes (r: Redis, keys: string[]): Promise<number> {
  if (keys.length === 0) return Number.NaN
  const p = r.pipeline()
  for (const k of keys) p.call('MEMORY', 'USAGE', k, 'SAMPLES', '0')
  const sizes = (await p.exec() ?? []).map(([, n]) => Number(n)).filter((n) => n > 0)
  return sizes.reduce((a, n) => a + n, 0) / sizes.length
}

/** Up to `max` keys under a prefix whose name matches the pattern (SCAN; the keyspace may be shared). */
async function scanSome (r: Redis, match: string, max: number): Promise<string[]> {
  const found: string[] = []
  let cursor = '0'
  do {
    const [next, keys] = await r.scan(cursor, 'MATCH', match, 'COUNT', 5000)
    cursor = next
    found.push(...keys)
  } while (cursor !== '0' && found.length < max)
  return found.slice(0, max)
}

/** Bytes per decision record, and per limit-window entry (from the records' `limitEntries`), of one extauth. */
async function extauthBytes (r: Redis, keyPrefix: string, samples: Run['samples']): Promise<{ record: number, limitEntry: number }> {
  const keys = new Keys(keyPrefix)
  const recordKeys = samples.map((s) => keys.decision(s.urn, s.reference))
  const record = await meanBytes(r, recordKeys)
  const windows = new Set<string>()
  const texts = await r.mget(...recordKeys)
  texts.forEach((text, i) => {
    if (text === null) return
    try {
      for (const [key] of decodeRecord(recordKeys[i] as string, text).limitEntries) windows.add(key)
    } catch { /* a record of a format this checkout does not read has no entries to read here */ }
  })
  let bytes = 0
  let entries = 0
  for (const w of windows) {
    const [size, card] = await Promise.all([r.call('MEMORY', 'USAGE', w, 'SAMPLES', '0'), r.zcard(w)])
    bytes += Number(size)
    entries += card
  }
  return { record, limitEntry: entries > 0 ? bytes / entries : Number.NaN }
}

async function measure (out: NodeJS.WriteStream): Promise<number> {
  let version: string
  try {
    version = await redisVersion(redisUrl)
  } catch (err) {
    process.stderr.write(`bench: Redis at ${redisUrl} does not answer (${(err as Error).message}); set REDIS_URL\n`)
    return 2
  }
  out.write(`node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown cpu'}), ` +
    `redis ${version} at ${redisUrl}${withReplica ? ' (private, with one local replica)' : ''}\n`)
  if (withReplica) out.write(`comparing extauth with REDIS_WAIT_REPLICAS=${waitReplicas} ("extauth+wait") against extauth without it\n`)

  const t0 = performance.now()
  try {
    buildCheckout(REPO_ROOT, 'tsconfig.bench.json')
    if (compareDir !== undefined) buildCheckout(compareDir, 'tsconfig.build.json')
  } catch {
    process.stderr.write('bench: the build failed (see above)\n')
    return 2
  }
  out.write(`built as JavaScript (tsc) in ${((performance.now() - t0) / 1000).toFixed(1)} s; every server runs the built code\n`)
  out.write(`closed loop: ${connections} connections, ${urns} funded customers, unique references, ` +
    `${warmupS} s warm-up each, then ${rounds} × ${durationS} s per server in rotating order; extauth LOG_LEVEL=${logLevel}\n` +
    `load generator, servers and Redis share this machine; load average now ${loadAverage()}\n\n`)

  const built = join(REPO_ROOT, '.bench-build')
  const spawned = new Map<string, SpawnedExtauth>()
  const floors: Child[] = []
  const probeDir = mkdtempSync(join(tmpdir(), 'extauth-bench-alloc-'))
  if (heapDir !== undefined) {
    mkdirSync(heapDir, { recursive: true })
    out.write(`heap profiles of each server's measured runs into ${heapDir}: the sampler's own CPU time makes this run's CPU figures no measure of anything; its bytes hardly move\n\n`)
  }
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
  redis.on('error', () => {})
  let clean = false
  try {
    await redis.connect()
    const keys: PlatformKeys = { consumerKey: `bench-${randomBytes(6).toString('hex')}`, clientId: 'bench-client', bankId: '1234' }
    /** without a script: the sources through tsx */
    const extauthAt = async (name: string, script: string | undefined, keyPrefix: string, env?: Record<string, string>): Promise<Target> => {
      const allocFile = join(probeDir, `${spawned.size}.alloc`)
      const e = await spawnExtauth({ redisUrl, redisPrefix: keyPrefix, logLevel, name, keys, env: { ...passed, ...env, ...probeEnv(allocFile, name) }, ...(script !== undefined ? { script } : {}) })
      spawned.set(name, e)
      return { name, kind: 'extauth', url: e.baseUrl, keys, pid: e.child.proc.pid ?? 0, prefix: keyPrefix, allocFile }
    }
    const floorAt = async (name: string, script: string, keyPrefix: string): Promise<Target> => {
      const port = await freePort()
      const allocFile = join(probeDir, `floor-${floors.length}.alloc`)
      const child = startChild([script], {
        cwd: REPO_ROOT,
        logFile: join(tmpdir(), `bench-${basename(script, '.js')}-${process.pid}.log`),
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'production',
          PORT: String(port),
          REDIS_URL: redisUrl,
          REDIS_KEY_PREFIX: keyPrefix,
          EXTAUTH_CONSUMER_KEY: keys.consumerKey,
          EXTAUTH_CLIENT_ID: keys.clientId,
          EXTAUTH_BANK_ID: keys.bankId,
          FLOOR_SEED_RUN_ID: scenario.runId,
          FLOOR_SEED_URNS: String(scenario.urns),
          FLOOR_SEED_CREDIT: String(scenario.creditMinor),
          ...probeEnv(allocFile, name)
        }
      })
      floors.push(child)
      const url = `http://127.0.0.1:${port}`
      await waitUntilReady(child, `${url}/health/ready`)
      return { name, kind: 'floor', url, keys, pid: child.proc.pid ?? 0, prefix: keyPrefix, allocFile }
    }
    // one at a time: a failure leaves only started servers to stop in `finally`
    const targets: Target[] = []
    if (withReplica) {
      // the two share one prefix: the customers seeded once serve both
      targets.push(await extauthAt('extauth', join(built, 'src/server.js'), `${prefix}x:`))
      targets.push(await extauthAt('extauth+wait', join(built, 'src/server.js'), `${prefix}x:`, { REDIS_WAIT_REPLICAS: String(waitReplicas) }))
    } else {
      targets.push(await extauthAt('extauth', join(built, 'src/server.js'), `${prefix}x:`))
      if (compareDir !== undefined) targets.push(await extauthAt(`extauth@${basename(compareDir)}`, join(compareDir, 'dist/server.js'), `${prefix}c:`))
      if (v.tsx === true) targets.push(await extauthAt('extauth (tsx)', undefined, `${prefix}t:`))
      targets.push(await floorAt('fair floor', join(built, 'bench/fair-floor-server.js'), `${prefix}f:`))
      targets.push(await floorAt('floor (1 round trip)', join(built, 'bench/baseline-server.js'), `${prefix}b:`))
    }
    const seeded = new Set<string>()
    for (const tg of targets) {
      if (tg.kind !== 'extauth' || seeded.has(tg.prefix)) continue
      seeded.add(tg.prefix)
      const t = performance.now()
      const e = spawned.get(tg.name) as SpawnedExtauth
      const calls = await seedThroughAdmin(e.adminUrl, e.adminToken, scenario, 32)
      out.write(`${tg.name}: seeded ${urns} customers (${calls} admin calls) in ${((performance.now() - t) / 1000).toFixed(1)} s\n`)
    }

    if (warmupS > 0) for (const tg of targets) await closedLoop(tg, warmupS, redis)

    const runs: Run[] = []
    out.write(`\n${header()}`)
    for (let round = 0; round < rounds; round++) {
      // each round starts with the next server, so none is always measured first or last
      const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target)
      for (const tg of order) {
        const r = await closedLoop(tg, durationS, redis, `${slug(tg.name)}.run${round + 1}`)
        runs.push(r)
        out.write(row(`${tg.name} run ${round + 1}`, summarize([r]), `status ${countsLine(r.statuses)}  codes ${countsLine(r.codes)}${r.errors > 0 ? `  errors ${r.errors}` : ''}`))
      }
    }
    const sums = new Map(targets.map((tg) => [tg.name, summarize(runs.filter((r) => r.target === tg.name))]))
    const first = targets[0] as Target
    const e = sums.get(first.name) as Summary
    out.write(`\n${header()}`)
    for (const tg of targets) out.write(row(`${tg.name} (all runs)`, sums.get(tg.name) as Summary))
    out.write('\n')
    for (const tg of targets.slice(1)) out.write(ratioRow(e, sums.get(tg.name) as Summary, `${first.name} vs ${tg.name}`))
    out.write(`(req/s: ${first.name} / other; p50, p99, µs: other / ${first.name}; 1.00 = as fast as the other)\n`)
    out.write('redis µs/req counts all the work of the Redis server during the run: on a shared Redis, others\' too\n')
    out.write('KB/req: bytes the server allocated on V8\'s heap per request, collected or not (bench/lib/alloc-probe.ts)\n')
    const fair = targets.find((tg) => tg.name === 'fair floor')
    if (fair !== undefined) {
      const ofRound = (name: string, round: number): Summary => summarize(runs.filter((r) => r.target === name).slice(round, round + 1))
      for (const tg of targets.filter((x) => x.kind === 'extauth')) {
        const pairs = Array.from({ length: rounds }, (_, i): [Summary, Summary] => [ofRound(tg.name, i), ofRound(fair.name, i)])
        out.write(perDecision(tg.name, sums.get(tg.name) as Summary, sums.get(fair.name) as Summary, pairs))
      }
    }

    if (heapDir !== undefined) {
      for (const tg of targets) {
        const mine = runs.filter((r) => r.target === tg.name)
        const files = mine.flatMap((r) => r.heapFile !== undefined ? [r.heapFile] : [])
        const requests = mine.reduce((n, r) => n + r.completed, 0)
        const a = merged(files.map((f) => allocation(JSON.parse(readFileSync(f, 'utf8')) as HeapProfile)))
        out.write(`\nwhere ${tg.name} allocates, over its ${requests} measured requests (${files.map((f) => basename(f)).join(', ')}):\n${allocationLines(a, requests, 12).join('\n')}\n`)
      }
      // the warm-ups' profiles are not kept
      for (const f of readdirSync(heapDir)) if (/\.\d+\.heapprofile$/.test(f)) rmSync(join(heapDir, f), { force: true })
    }

    out.write('\nRedis bytes, MEMORY USAGE of sampled keys:\n')
    for (const tg of targets) {
      const samples = runs.filter((r) => r.target === tg.name).flatMap((r) => r.samples)
      if (tg.kind === 'extauth') {
        const b = await extauthBytes(redis, tg.prefix, samples)
        out.write(`  ${tg.name.padEnd(LABEL)}decision record ${b.record.toFixed(0)} B (${samples.length} sampled), limit-window entry ${Number.isFinite(b.limitEntry) ? `${b.limitEntry.toFixed(0)} B` : '-'}\n`)
      } else if (tg.name === 'fair floor') {
        const record = await meanBytes(redis, await scanSome(redis, `${tg.prefix}*:d:*`, SAMPLES_MAX))
        out.write(`  ${tg.name.padEnd(LABEL)}decision record ${record.toFixed(0)} B\n`)
      }
    }
    out.write(`\nload average after the runs: ${loadAverage()} (other work on the machine skews the figures)\n`)
    const bad = runs.filter((r) => r.errors > 0 || r.statuses.size !== 1 || !r.statuses.has('200') || r.codes.size !== 1 || !r.codes.has('00'))
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
    redis.disconnect()
    const logs = [...[...spawned.values()].map((e) => e.child), ...floors]
    const codes = await Promise.all(logs.map(async (c) => await c.stop()))
    if (clean && codes.every((c) => c === 0)) {
      for (const c of logs) c.removeLog()
    } else {
      process.stderr.write(`bench: logs kept: ${logs.map((c) => c.logFile).join(', ')} (exit codes ${codes.join(', ')})\n`)
    }
    rmSync(probeDir, { recursive: true, force: true })
    const n = await deleteByPrefix(redisUrl, prefix)
    process.stdout.write(`cleanup: deleted ${n} keys under ${prefix}\n`)
  }
}

process.exitCode = await main()

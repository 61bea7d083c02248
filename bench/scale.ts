// extauth across Redis Cluster shards and instances, in one run: first one saturated shard (a one-master
// cluster, the baseline), then S shards, each time N extauth instances on the cluster and one closed-loop load
// process per instance. Every process runs on a core of its own when the machine has enough (taskset), and the
// figures are read from /proc: decisions/s, p50/p99, Node µs per decision of each instance, Redis µs per
// decision of each shard, and the per-shard efficiency throughput(S) / (S × throughput(1)). Not a test.
//   npm run bench:scale [-- --shards 4 --instances 6 --duration 10 --warmup 3 --rounds 2 --connections 32]
//   npm run bench:scale -- --events [--relays 1]   # then S shards again with a receiver (relay-only instances send the
//                                                  # events): saturated, and at half of the saturated throughput
//   npm run bench:scale -- --json                  # one JSON document on stdout (progress on stderr)
// Everything is its own: redis-servers on free loopback ports, extauth built as JavaScript (as production runs
// it), all stopped at the end or on SIGINT/SIGTERM. Traffic stays on loopback.
import { parseArgs } from 'node:util'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { availableParallelism, cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Cluster } from 'ioredis'
import { DEFAULT_CREDIT_MINOR, newRunId, type PlatformKeys, type Scenario } from '../k6/scenario.js'
import { spawnEnv, spawnExtauth, REPO_ROOT, type SpawnedExtauth } from '../scripts/lib/extauth.js'
import { seedThroughAdmin } from '../scripts/lib/seed.js'
import { ms } from '../scripts/lib/stats.js'
import { BUCKETS, Keys } from '../src/store/keys.js'
import { buildCheckout, cpuSeconds, has } from './lib/machine.js'
import { ownCluster, type OwnCluster } from './lib/own-cluster.js'
import type { LoadConfig, LoadResult } from './lib/scale-load.js'

/** warm-up and rounds of one phase (two, three with --events) must fit in this */
const BUDGET_PER_PHASE_S = 150
/** how long the events already in the outbox (the seeding's; the saturated rounds') may take to be delivered
 * before the next rounds start anyway */
const OUTBOX_DRAIN_MS = 30_000
/** a master busy this share of a core or more is saturated (Redis runs commands on one thread) */
const SATURATED_BUSY = 0.9
/** a load process that does not answer within its run and this much more has failed */
const LOAD_GRACE_MS = 15_000

const { values: v } = parseArgs({
  options: {
    shards: { type: 'string', default: '4' },
    instances: { type: 'string', default: '6' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    urns: { type: 'string', default: '2000' },
    relays: { type: 'string', default: '1' },
    'log-level': { type: 'string', default: 'info' },
    events: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false }
  }
})

function usage (message: string): never {
  process.stderr.write(`bench:scale: ${message}\n`)
  process.exit(2)
}
const int = (name: string, min: number, max: number): number => {
  const n = Number(v[name as keyof typeof v])
  if (!Number.isInteger(n) || n < min || n > max) usage(`--${name} must be a whole number from ${min} to ${max}`)
  return n
}
const shards = int('shards', 1, 64)
const instances = int('instances', 1, 64)
const rounds = int('rounds', 1, 20)
const connections = int('connections', 1, 1024)
const urns = int('urns', 1, 100_000)
const relays = int('relays', 1, 16)
const durationS = Number(v.duration)
const warmupS = Number(v.warmup)
if (!(durationS > 0)) usage('--duration must be a positive number of seconds')
if (!(warmupS >= 0)) usage('--warmup must be 0 or more seconds')
const withEvents = v.events === true
// with events, the last phase runs its rounds twice: saturated, then at half of the saturated throughput
if (warmupS + (withEvents ? 2 : 1) * rounds * durationS > BUDGET_PER_PHASE_S) usage(`warmup + ${withEvents ? '2 × ' : ''}rounds × duration must be at most ${BUDGET_PER_PHASE_S} s`)
const asJson = v.json === true
const logLevel = v['log-level']
if (!has('redis-server')) usage('redis-server is not installed')

/** progress and the table: stdout, or stderr when stdout carries the JSON document */
const say = (s: string): void => { (asJson ? process.stderr : process.stdout).write(s) }

// one core a process when there are enough: the shards' masters, the instances, the load processes, then
// the relays and the receiver
const coresNeeded = shards + 2 * instances + (withEvents ? relays + 1 : 0)
const coresHere = availableParallelism()
const pin = has('taskset') && coresHere >= coresNeeded
const pinReason = pin
  ? `pinned: one core a process (${coresNeeded} of ${coresHere})`
  : has('taskset') ? `not pinned: ${coresNeeded} cores needed, ${coresHere} here` : 'not pinned: taskset is not installed'
const core = {
  shard: (i: number) => i,
  instance: (i: number) => shards + i,
  load: (i: number) => shards + instances + i,
  relay: (i: number) => shards + 2 * instances + i,
  receiver: () => shards + 2 * instances + relays
}
const wrap = (c: number): string[] | undefined => pin ? ['taskset', '-c', String(c)] : undefined

/** what every extauth takes from this environment (spawnEnv) */
const passed = spawnEnv()

/** every process this run started, so a caller can check that none outlived it */
const pids: number[] = []
/** what to stop on the way out, latest first; each runs once (see once) */
const stoppers: Array<() => Promise<unknown>> = []
/** a stop that a signal's stopAll and a phase's own clean-up may both call: the second waits on the first */
function once (stop: () => Promise<unknown>): () => Promise<unknown> {
  let running: Promise<unknown> | undefined
  return async () => await (running ??= stop())
}
async function stopAll (): Promise<void> {
  for (let s = stoppers.pop(); s !== undefined; s = stoppers.pop()) await s().catch(() => {})
}

/** A node child with an IPC channel: its messages in order, whatever arrives before it is asked for. */
interface IpcChild { proc: ChildProcess, next: (timeoutMs: number) => Promise<unknown>, stop: () => Promise<void> }
function ipcChild (script: string, env: NodeJS.ProcessEnv, c: number): IpcChild {
  const argv = [...(wrap(c) ?? []), process.execPath, script]
  const proc = spawn(argv[0] as string, argv.slice(1), { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  if (proc.pid !== undefined) pids.push(proc.pid)
  const queue: unknown[] = []
  const waiting: Array<(m: unknown) => void> = []
  let gone: Error | undefined
  const failWaiting = (): void => { for (let w = waiting.shift(); w !== undefined; w = waiting.shift()) w(gone) }
  proc.on('message', (m) => { const w = waiting.shift(); if (w !== undefined) w(m); else queue.push(m) })
  proc.on('error', (err) => { gone = err; failWaiting() })
  proc.once('exit', (code, signal) => { gone = new Error(`${script} exited (${code ?? signal ?? '?'})`); failWaiting() })
  return {
    proc,
    next: async (timeoutMs) => {
      if (queue.length > 0) return queue.shift()
      if (gone !== undefined) throw gone
      const m = await new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => { reject(new Error(`${script} did not answer within ${timeoutMs} ms`)) }, timeoutMs)
        waiting.push((x) => { clearTimeout(timer); resolve(x) })
      })
      if (m instanceof Error) throw m
      return m
    },
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return
      const exited = new Promise((resolve) => proc.once('exit', resolve))
      if (proc.connected) proc.disconnect()
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    }
  }
}

interface ProcessFigure { pid: number, core: number | null, cpuS: number }
interface ShardFigure extends ProcessFigure { port: number, share: number, redisUsPerDecision: number, busy: number }
interface InstanceFigure extends ProcessFigure { decisions: number, nodeUsPerDecision: number }
interface EventsFigure {
  delivered: number
  deliveredPerS: number
  relays: Array<ProcessFigure & { nodeUsPerEvent: number }>
  relayNodeUsPerEvent: number
  receiverNodeUsPerEvent: number
  /** events in the outbox (XLEN of every bucket's stream) as each round started and ended */
  backlog: Array<{ start: number, end: number }>
  /** the same instances and relays with the load offered at a fixed rate (open loop): half of the saturated
   * throughput without events */
  atRate?: AtRateFigure
}
/** the answers' statuses, codes and errors, added up over rounds */
interface Tally { statuses: Record<string, number>, codes: Record<string, number>, errors: number }
/** what the load processes were answered over some rounds: the rate, the latencies, the answers */
interface Answered extends Tally {
  decisionsPerS: number
  p50Ms: number
  p99Ms: number
}
interface AtRateFigure extends Answered {
  offeredPerS: number
  /** requests due while every connection of their load process was busy: not sent */
  dropped: number
  deliveredPerS: number
  backlog: Array<{ start: number, end: number }>
  /** the outbox's growth over the rounds, events a second: about 0 when delivery keeps up */
  backlogGrowthPerS: number
}
interface PhaseResult extends Answered {
  shards: number
  decisions: number
  elapsedS: number
  rounds: Array<{ decisionsPerS: number, p50Ms: number, p99Ms: number }>
  nodeUsPerDecision: number
  redisUsPerDecision: number
  instances: InstanceFigure[]
  shardFigures: ShardFigure[]
  load: Array<ProcessFigure & { usPerDecision: number }>
  events?: EventsFigure
}

const add = (into: Record<string, number>, from: Record<string, number>): void => {
  for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n
}
/** nearest-rank percentile of a histogram of 10 µs units, in ms */
function histPercentile (hist: Map<number, number>, p: number): number {
  const buckets = [...hist.keys()].sort((a, b) => a - b)
  const total = [...hist.values()].reduce((a, n) => a + n, 0)
  if (total === 0) return Number.NaN
  const rank = Math.max(1, Math.ceil(p / 100 * total))
  let seen = 0
  for (const b of buckets) {
    seen += hist.get(b) as number
    if (seen >= rank) return b / 100
  }
  return (buckets[buckets.length - 1] as number) / 100
}
/**
 * One round's results added into `into` and each histogram; the round's decisions and its length (the slowest
 * load process's).
 */
function tally (results: LoadResult[], into: Tally, ...hists: Array<Map<number, number>>): { completed: number, seconds: number } {
  let completed = 0
  let seconds = 0
  for (const res of results) {
    completed += res.completed
    seconds = Math.max(seconds, res.elapsedS)
    for (const [bucket, count] of res.histogram) for (const h of hists) h.set(bucket, (h.get(bucket) ?? 0) + count)
    add(into.statuses, res.statuses)
    add(into.codes, res.codes)
    into.errors += res.errors
  }
  return { completed, seconds }
}
const usEach = (cpuS: number, n: number): number => n > 0 ? cpuS / n * 1e6 : Number.NaN
const coreOf = (c: number): number | null => pin ? c : null

async function fcallCalls (c: OwnCluster): Promise<number[]> {
  return await Promise.all(c.nodes.map(async (n) => Number(/cmdstat_fcall:calls=(\d+)/.exec(await n.admin.info('commandstats'))?.[1] ?? 0)))
}

interface Receiver { url: string, count: () => Promise<number>, pid: number }
/**
 * One phase: a cluster of `shardCount` masters, the instances on it, seeded, warmed up, then the rounds: closed
 * loop, and with `openRate` (events only) the same number of rounds again with that many requests a second
 * offered in all.
 */
async function phase (shardCount: number, keys: PlatformKeys, receiver: Receiver | undefined, openRate?: number): Promise<PhaseResult> {
  const label = `${shardCount} shard${shardCount === 1 ? '' : 's'}`
  const ownStoppers: Array<() => Promise<unknown>> = []
  const own = (stop: () => Promise<unknown>): void => {
    const s = once(stop)
    ownStoppers.push(s)
    stoppers.push(s)
  }
  const stopOwn = async (): Promise<void> => {
    for (let s = ownStoppers.pop(); s !== undefined; s = ownStoppers.pop()) {
      const at = stoppers.indexOf(s)
      if (at >= 0) stoppers.splice(at, 1)
      await s().catch(() => {})
    }
  }
  try {
    const t0 = performance.now()
    const cluster = await ownCluster(shardCount, (i) => wrap(core.shard(i)), (pid) => { pids.push(pid) })
    own(cluster.stop)
    const prefix = `extauth-scale:${randomBytes(4).toString('hex')}:`
    const env: Record<string, string> = {
      ...passed,
      REDIS_CLUSTER_NODES: cluster.seeds,
      REDIS_KEY_PREFIX: prefix,
      ...(receiver !== undefined ? { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}` } : {})
    }
    const script = join(REPO_ROOT, '.bench-build/src/server.js')
    const start = async (name: string, c: number, extra: Record<string, string>): Promise<SpawnedExtauth> => {
      const w = wrap(c)
      const e = await spawnExtauth({ script, name, keys, logLevel, env: { ...env, ...extra }, ...(w !== undefined ? { wrap: w } : {}) })
      if (e.child.proc.pid !== undefined) pids.push(e.child.proc.pid)
      own(async () => {
        const code = await e.child.stop()
        if (code === 0) e.child.removeLog()
        else process.stderr.write(`bench:scale: ${name} exited with ${code}; its log: ${e.child.logFile}\n`)
      })
      return e
    }
    // one at a time (a failure leaves only started ones to stop) but not waiting on each: in parallel
    const settled = await Promise.allSettled([
      ...Array.from({ length: instances }, async (_, i) => await start(`scale-extauth-${i + 1}`, core.instance(i), receiver !== undefined ? { EVENTS_RELAY: 'false' } : {})),
      ...(receiver !== undefined ? Array.from({ length: relays }, async (_, i) => await start(`scale-relay-${i + 1}`, core.relay(i), {})) : [])
    ])
    const failed = settled.find((s) => s.status === 'rejected')
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
    const started = settled.map((s) => (s as PromiseFulfilledResult<SpawnedExtauth>).value)
    const deciders = started.slice(0, instances)
    const relayProcs = started.slice(instances)

    const scenario: Scenario = { runId: newRunId(Date.now(), randomInt(37)), urns, declineEvery: 0, creditMinor: DEFAULT_CREDIT_MINOR }
    const first = deciders[0] as SpawnedExtauth
    await seedThroughAdmin(first.adminUrl, first.adminToken, scenario, 32)

    const client = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })), { lazyConnect: true })
    client.on('error', () => {})
    own(async () => { client.disconnect() })
    await client.connect()
    const k = new Keys(prefix)
    const backlog = async (): Promise<number> => (await Promise.all(Array.from({ length: BUCKETS }, async (_, b) => await client.xlen(k.bucketStream(b))))).reduce((a, n) => a + n, 0)
    /** wait (at most OUTBOX_DRAIN_MS) until the relays have delivered what the outbox holds */
    const drain = async (): Promise<void> => {
      const until = Date.now() + OUTBOX_DRAIN_MS
      while (await backlog() > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    if (receiver !== undefined) await drain()

    const loaders = deciders.map((e, i) => ipcChild(join(REPO_ROOT, '.bench-build/bench/lib/scale-load.js'), {
      PATH: process.env.PATH,
      SCALE_LOAD: JSON.stringify({ url: e.baseUrl, keys, scenario, worker: i, workers: instances, connections } satisfies LoadConfig)
    }, core.load(i)))
    for (const l of loaders) own(l.stop)
    for (const l of loaders) await l.next(30_000)
    say(`${label}: cluster, ${instances} instance${instances === 1 ? '' : 's'}${receiver !== undefined ? `, ${relays} relay${relays === 1 ? '' : 's'}` : ''} and ${urns} customers ready in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`)

    const runAll = async (seconds: number, rate?: number): Promise<LoadResult[]> => {
      for (const l of loaders) l.proc.send(rate === undefined ? { seconds } : { seconds, rate: rate / loaders.length })
      return await Promise.all(loaders.map(async (l) => await l.next(seconds * 1000 + LOAD_GRACE_MS) as LoadResult))
    }
    if (warmupS > 0) await runAll(warmupS)

    /** the rounds again, the load offered at `rate` a second in all (open loop): does delivery keep up? */
    const atRate = async (rate: number): Promise<AtRateFigure> => {
      // what the saturated rounds left in the outbox delivered first: the rounds' growth is then their own
      await drain()
      const h = new Map<number, number>()
      const outbox: AtRateFigure['backlog'] = []
      const fig: Tally = { statuses: {}, codes: {}, errors: 0 }
      let done = 0
      let dropped = 0
      let seconds = 0
      let delivered = 0
      for (let r = 0; r < rounds; r++) {
        const b0 = await backlog()
        const received0 = receiver !== undefined ? await receiver.count() : 0
        const results = await runAll(durationS, rate)
        const received1 = receiver !== undefined ? await receiver.count() : 0
        const b1 = await backlog()
        const round = tally(results, fig, h)
        for (const res of results) dropped += res.dropped
        done += round.completed
        seconds += round.seconds
        delivered += received1 - received0
        outbox.push({ start: b0, end: b1 })
        say(`${label} at ${rate.toFixed(0)} requests/s offered, round ${r + 1}: ${(round.completed / round.seconds).toFixed(0)} decisions/s, ` +
          `events delivered ${received1 - received0}, outbox ${b0} → ${b1}\n`)
      }
      const first = outbox[0] as { start: number }
      const last = outbox[outbox.length - 1] as { end: number }
      return {
        offeredPerS: rate,
        decisionsPerS: done / seconds,
        p50Ms: histPercentile(h, 50),
        p99Ms: histPercentile(h, 99),
        dropped,
        ...fig,
        deliveredPerS: delivered / seconds,
        backlog: outbox,
        backlogGrowthPerS: (last.end - first.start) / seconds
      }
    }

    const decPids = deciders.map((e) => e.child.proc.pid ?? 0)
    const relayPids = relayProcs.map((e) => e.child.proc.pid ?? 0)
    const loadPids = loaders.map((l) => l.proc.pid ?? 0)
    const shardPids = cluster.nodes.map((n) => n.pid)
    const cpuOf = (list: number[]): number[] => list.map(cpuSeconds)
    const zero = (n: number): number[] => Array.from({ length: n }, () => 0)
    const sums = { dec: zero(instances), decN: zero(instances), shard: zero(shardCount), fcall: zero(shardCount), load: zero(instances), relay: zero(relayPids.length), receiver: 0, delivered: 0 }
    const hist = new Map<number, number>()
    const answers: Tally = { statuses: {}, codes: {}, errors: 0 }
    let decisions = 0
    let elapsedS = 0
    const roundFigures: PhaseResult['rounds'] = []
    const backlogs: EventsFigure['backlog'] = []
    for (let r = 0; r < rounds; r++) {
      const b0 = receiver !== undefined ? await backlog() : 0
      const received0 = receiver !== undefined ? await receiver.count() : 0
      const [dec0, shard0, load0, relay0] = [cpuOf(decPids), cpuOf(shardPids), cpuOf(loadPids), cpuOf(relayPids)]
      const rec0 = receiver !== undefined ? cpuSeconds(receiver.pid) : 0
      const fcall0 = await fcallCalls(cluster)
      const results = await runAll(durationS)
      const [dec1, shard1, load1, relay1] = [cpuOf(decPids), cpuOf(shardPids), cpuOf(loadPids), cpuOf(relayPids)]
      const rec1 = receiver !== undefined ? cpuSeconds(receiver.pid) : 0
      const fcall1 = await fcallCalls(cluster)
      const received1 = receiver !== undefined ? await receiver.count() : 0
      const b1 = receiver !== undefined ? await backlog() : 0
      const roundHist = new Map<number, number>()
      const { completed: n, seconds: roundS } = tally(results, answers, roundHist, hist)
      results.forEach((res, i) => { sums.decN[i] = (sums.decN[i] as number) + res.completed })
      const inc = (into: number[], a: number[], b: number[]): void => { a.forEach((x, i) => { into[i] = (into[i] as number) + (b[i] as number) - x }) }
      inc(sums.dec, dec0, dec1)
      inc(sums.shard, shard0, shard1)
      inc(sums.load, load0, load1)
      inc(sums.relay, relay0, relay1)
      inc(sums.fcall, fcall0, fcall1)
      sums.receiver += rec1 - rec0
      sums.delivered += received1 - received0
      decisions += n
      elapsedS += roundS
      const fig = { decisionsPerS: n / roundS, p50Ms: histPercentile(roundHist, 50), p99Ms: histPercentile(roundHist, 99) }
      roundFigures.push(fig)
      if (receiver !== undefined) backlogs.push({ start: b0, end: b1 })
      say(`${label} round ${r + 1}: ${fig.decisionsPerS.toFixed(0)} decisions/s, p50 ${ms(fig.p50Ms)} ms, p99 ${ms(fig.p99Ms)} ms` +
        `${receiver !== undefined ? `; events delivered ${received1 - received0}, outbox ${b0} → ${b1}` : ''}\n`)
    }
    const fcallTotal = sums.fcall.reduce((a, x) => a + x, 0)
    const shardFigures: ShardFigure[] = cluster.nodes.map((node, i) => {
      // the authorize function's calls on this master, of all: its share of the decisions (an even split
      // if the store runs its script with EVALSHA, where Redis has no functions)
      const share = fcallTotal > 0 ? (sums.fcall[i] as number) / fcallTotal : 1 / shardCount
      const cpuS = sums.shard[i] as number
      return { pid: node.pid, port: node.port, core: coreOf(core.shard(i)), cpuS, share, redisUsPerDecision: usEach(cpuS, share * decisions), busy: cpuS / elapsedS }
    })
    const result: PhaseResult = {
      shards: shardCount,
      decisions,
      elapsedS,
      decisionsPerS: decisions / elapsedS,
      p50Ms: histPercentile(hist, 50),
      p99Ms: histPercentile(hist, 99),
      ...answers,
      rounds: roundFigures,
      nodeUsPerDecision: usEach(sums.dec.reduce((a, x) => a + x, 0), decisions),
      redisUsPerDecision: usEach(sums.shard.reduce((a, x) => a + x, 0), decisions),
      instances: decPids.map((pid, i) => ({ pid, core: coreOf(core.instance(i)), cpuS: sums.dec[i] as number, decisions: sums.decN[i] as number, nodeUsPerDecision: usEach(sums.dec[i] as number, sums.decN[i] as number) })),
      shardFigures,
      load: loadPids.map((pid, i) => ({ pid, core: coreOf(core.load(i)), cpuS: sums.load[i] as number, usPerDecision: usEach(sums.load[i] as number, sums.decN[i] as number) }))
    }
    if (receiver !== undefined) {
      const relayCpuS = sums.relay.reduce((a, x) => a + x, 0)
      result.events = {
        delivered: sums.delivered,
        deliveredPerS: sums.delivered / elapsedS,
        relays: relayPids.map((pid, i) => ({ pid, core: coreOf(core.relay(i)), cpuS: sums.relay[i] as number, nodeUsPerEvent: usEach(sums.relay[i] as number, sums.delivered) })),
        relayNodeUsPerEvent: usEach(relayCpuS, sums.delivered),
        receiverNodeUsPerEvent: usEach(sums.receiver, sums.delivered),
        backlog: backlogs
      }
      if (openRate !== undefined) result.events.atRate = await atRate(openRate)
    }
    return result
  } finally {
    await stopOwn()
  }
}

const us = (x: number): string => Number.isFinite(x) ? x.toFixed(1) : '-'
const pct = (x: number): string => Number.isFinite(x) ? `${(100 * x).toFixed(0)} %` : '-'
const counts = (c: Record<string, number>): string => Object.entries(c).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k}: ${n}`).join('  ') || '-'
const LABEL = 22
function table (phases: PhaseResult[], efficiency: number, withRelay: PhaseResult | undefined): string {
  let s = `\n${''.padEnd(LABEL)}${'decisions/s'.padStart(12)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'node µs/dec'.padStart(13)}${'redis µs/dec'.padStart(14)}  answers\n`
  for (const p of phases) {
    const name = p.shards === 1 && p === phases[0] ? '1 shard (baseline)' : `${p.shards} shard${p.shards === 1 ? '' : 's'}`
    s += `${name.padEnd(LABEL)}${p.decisionsPerS.toFixed(0).padStart(12)}${ms(p.p50Ms).padStart(9)}${ms(p.p99Ms).padStart(9)}${us(p.nodeUsPerDecision).padStart(13)}${us(p.redisUsPerDecision).padStart(14)}  status ${counts(p.statuses)}  codes ${counts(p.codes)}${p.errors > 0 ? `  errors ${p.errors}` : ''}\n`
  }
  const last = phases[phases.length - 1] as PhaseResult
  s += `\nper-shard efficiency: throughput(${last.shards}) / (${last.shards} × throughput(1)) = ${Number.isFinite(efficiency) ? efficiency.toFixed(2) : '-'}\n`
  const baselineBusy = (phases[0] as PhaseResult).shardFigures[0]?.busy ?? Number.NaN
  if (!(baselineBusy >= SATURATED_BUSY)) {
    s += `(the one shard was busy ${pct(baselineBusy)} of a core, not saturated: the efficiency is not against a saturated shard; ` +
      'give it more load, --instances or --connections, or a machine with a core for each process)\n'
  }
  if (withRelay !== undefined) s += eventsTable(last, withRelay)
  for (const p of [...phases, ...(withRelay !== undefined ? [withRelay] : [])]) {
    s += `\n${p.shards} shard${p.shards === 1 ? '' : 's'}${p === withRelay ? ' with events' : ''}, each process (CPU user + system over the measured rounds):\n`
    const at = (c: number | null): string => c === null ? '' : ` core ${c}`
    p.instances.forEach((x, i) => { s += `  instance ${i + 1} (pid ${x.pid}${at(x.core)})`.padEnd(44) + `node ${us(x.nodeUsPerDecision)} µs/decision over ${x.decisions} decisions\n` })
    p.shardFigures.forEach((x, i) => { s += `  shard ${i + 1} (port ${x.port}${at(x.core)})`.padEnd(44) + `redis ${us(x.redisUsPerDecision)} µs/decision, ${pct(x.share)} of the decisions, busy ${pct(x.busy)} of a core\n` })
    p.load.forEach((x, i) => { s += `  load ${i + 1} (pid ${x.pid}${at(x.core)})`.padEnd(44) + `node ${us(x.usPerDecision)} µs/decision\n` })
    if (p.events !== undefined) {
      const e = p.events
      e.relays.forEach((x, i) => { s += `  relay ${i + 1} (pid ${x.pid}${at(x.core)})`.padEnd(44) + `node ${us(x.nodeUsPerEvent)} µs/delivered event (a decision: node ${us(p.nodeUsPerDecision)} µs)\n` })
      s += '  receiver'.padEnd(44) + `node ${us(e.receiverNodeUsPerEvent)} µs/event\n`
      s += `  events delivered ${e.delivered} (${e.deliveredPerS.toFixed(0)}/s, decisions ${p.decisionsPerS.toFixed(0)}/s); outbox at each round's start → end: ${e.backlog.map((b) => `${b.start} → ${b.end}`).join(', ')}\n`
    }
  }
  return s
}

/** The S shards with events against without: saturated, then at half the saturated throughput. */
function eventsTable (without: PhaseResult, w: PhaseResult): string {
  const e = w.events as EventsFigure
  const a = e.atRate
  const name = `${w.shards} shard${w.shards === 1 ? '' : 's'}`
  let s = `\nwith events to a receiver (${name}, ${relays} relay-only instance${relays === 1 ? '' : 's'}):\n`
  s += `${''.padEnd(LABEL)}${'decisions/s'.padStart(12)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'node µs/dec'.padStart(13)}${'redis µs/dec'.padStart(14)}${'delivered/s'.padStart(13)}  outbox at each round's start → end\n`
  s += `${`${name}, saturated`.padEnd(LABEL)}${w.decisionsPerS.toFixed(0).padStart(12)}${ms(w.p50Ms).padStart(9)}${ms(w.p99Ms).padStart(9)}${us(w.nodeUsPerDecision).padStart(13)}${us(w.redisUsPerDecision).padStart(14)}` +
    `${e.deliveredPerS.toFixed(0).padStart(13)}  ${e.backlog.map((b) => `${b.start} → ${b.end}`).join(', ')}\n`
  if (a !== undefined) {
    s += `${`at ${a.offeredPerS.toFixed(0)}/s offered`.padEnd(LABEL)}${a.decisionsPerS.toFixed(0).padStart(12)}${ms(a.p50Ms).padStart(9)}${ms(a.p99Ms).padStart(9)}${''.padStart(13)}${''.padStart(14)}` +
      `${a.deliveredPerS.toFixed(0).padStart(13)}  ${a.backlog.map((b) => `${b.start} → ${b.end}`).join(', ')}  status ${counts(a.statuses)}  codes ${counts(a.codes)}${a.errors > 0 ? `  errors ${a.errors}` : ''}${a.dropped > 0 ? `  dropped ${a.dropped}` : ''}\n`
  }
  s += `saturated with events / without: ${(w.decisionsPerS / without.decisionsPerS).toFixed(2)} of the throughput ` +
    `(node ${us(w.nodeUsPerDecision)} against ${us(without.nodeUsPerDecision)} µs/decision, the relays ${us(e.relayNodeUsPerEvent)} µs/delivered event)\n`
  if (a !== undefined) {
    s += `at half the saturated throughput without events: the outbox grew ${a.backlogGrowthPerS.toFixed(1)} events/s over the rounds ` +
      `(about 0: delivery keeps up; the decisions' own rate is ${a.decisionsPerS.toFixed(0)}/s)` +
      `${a.dropped > 0 ? `; ${a.dropped} requests were not sent, every connection busy: the instances did not keep up with the rate` : ''}\n`
  }
  return s
}

/** set on SIGINT/SIGTERM: what fails from then on is the stopping, not the run */
let stopping = false

async function main (): Promise<number> {
  const onSignal = (signal: NodeJS.Signals): void => {
    stopping = true
    process.stderr.write(`bench:scale: ${signal}, stopping everything it started\n`)
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  say(`node ${process.version}, ${coresHere} cores (${cpus()[0]?.model.trim() ?? 'unknown cpu'}), load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n` +
    `${shards} shards × ${instances} instances, ${connections} connections a load process, ${warmupS} s warm-up, ${rounds} × ${durationS} s a phase${withEvents ? `, events to a receiver through ${relays} relay-only instance${relays === 1 ? '' : 's'}` : ''}; ${pinReason}\n`)
  if (!pin) say('(not pinned: the processes share the cores, so the figures test that the bench works; they are not a measure of scaling)\n')
  try {
    const t0 = performance.now()
    buildCheckout(REPO_ROOT, 'tsconfig.bench.json')
    say(`built as JavaScript (tsc) in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
  } catch {
    process.stderr.write('bench:scale: the build failed (see above)\n')
    return 2
  }
  const keys: PlatformKeys = { consumerKey: `scale-${randomBytes(6).toString('hex')}`, clientId: 'scale-client', bankId: '1234' }
  let phases: PhaseResult[]
  let withRelay: PhaseResult | undefined
  try {
    phases = [await phase(1, keys, undefined)]
    if (shards > 1) phases.push(await phase(shards, keys, undefined))
    if (withEvents) {
      const rc = ipcChild(join(REPO_ROOT, '.bench-build/bench/lib/scale-receiver.js'), { PATH: process.env.PATH }, core.receiver())
      stoppers.push(once(rc.stop))
      const { port } = await rc.next(10_000) as { port: number }
      const receiver: Receiver = { url: `http://127.0.0.1:${port}/hooks`, pid: rc.proc.pid ?? 0, count: async () => { rc.proc.send('count'); return await rc.next(5000) as number } }
      withRelay = await phase(shards, keys, receiver, (phases[phases.length - 1] as PhaseResult).decisionsPerS / 2)
    }
  } catch (err) {
    if (!stopping) process.stderr.write(`bench:scale: ${(err as Error).stack ?? String(err)}\n`)
    return 2
  } finally {
    await stopAll()
  }
  const [one, many] = [phases[0] as PhaseResult, phases[phases.length - 1] as PhaseResult]
  const efficiency = many.decisionsPerS / (shards * one.decisionsPerS)
  const answered00 = (p: Answered): boolean =>
    p.errors === 0 && Object.keys(p.statuses).join() === '200' && Object.keys(p.codes).join() === '00'
  const allOk = [...phases, ...(withRelay !== undefined ? [withRelay] : [])].every((p) => p.decisions > 0 && answered00(p)) &&
    (withRelay?.events?.atRate === undefined || (withRelay.events.atRate.decisionsPerS > 0 && answered00(withRelay.events.atRate)))
  // what the relay costs the decisions: their saturated throughput with events delivered, against without
  const withEventsRatio = withRelay !== undefined ? withRelay.decisionsPerS / many.decisionsPerS : undefined
  say(table(phases, efficiency, withRelay))
  say(`\nload average after the runs: ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`)
  if (!allOk) say('\nWARNING: some answers were not 200/00 or failed (see above); the figures are not comparable\n')
  if (asJson) {
    process.stdout.write(`${JSON.stringify({
      shards,
      instances,
      cores: coresHere,
      pinned: pin,
      pinning: pinReason,
      events: withEvents,
      phases,
      efficiency,
      ...(withRelay !== undefined ? { withEvents: withRelay, withEventsRatio } : {}),
      allAnswered00: allOk,
      pids
    }, null, 2)}\n`)
  }
  return allOk ? 0 : 1
}

process.exitCode = await main()

// One load process of bench/scale.ts against one extauth instance, started by the parent over IPC so that every
// process of a round runs over the same seconds. A message `{ seconds }` runs a closed loop: `connections`
// loops, each sending its next request when the answer has fully arrived. `{ seconds, rate }` runs an open
// loop instead: requests start at `rate` a second whatever the answers do, at most `connections` in flight (a
// request due beyond that is not sent, and counted as dropped). Either answers with what came back: counts,
// codes and a latency histogram (10 µs buckets, merged by the parent). Not a test.
//   node scale-load.js   (config in SCALE_LOAD as JSON; see LoadConfig)
import { performance } from 'node:perf_hooks'
import { Pool } from 'undici'
import { AUTH_PATH, planRequest, platformHeaders, type PlatformKeys, type Scenario } from '../../k6/scenario.js'

export interface LoadConfig {
  url: string
  keys: PlatformKeys
  scenario: Scenario
  /** this process's index among `workers`: its requests are seq ≡ worker (mod workers), unique in the run */
  worker: number
  workers: number
  connections: number
}

export interface LoadResult {
  completed: number
  elapsedS: number
  /** [latency in 10 µs units, rounded up; count] */
  histogram: Array<[number, number]>
  statuses: Record<string, number>
  codes: Record<string, number>
  errors: number
  /** open loop: requests due while `connections` were in flight, not sent */
  dropped: number
}

/** a request not answered in this long counts as an error (the service's own deadline is at most 2 s) */
const REQUEST_TIMEOUT_MS = 5000

const config = JSON.parse(process.env.SCALE_LOAD ?? '') as LoadConfig
const pool = new Pool(config.url, { connections: config.connections, pipelining: 1, keepAliveTimeout: 30_000 })
const headers = platformHeaders(config.keys)
let k = 0

function newResult (): LoadResult {
  return { completed: 0, elapsedS: 0, histogram: [], statuses: {}, codes: {}, errors: 0, dropped: 0 }
}

/** one request, its answer counted into r and its latency (from sending) into hist */
async function send (r: LoadResult, hist: Map<number, number>): Promise<void> {
  const body = JSON.stringify(planRequest(config.scenario, config.worker + config.workers * k++).body)
  const sentAt = performance.now()
  try {
    const res = await pool.request({ method: 'POST', path: AUTH_PATH, headers, body, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS })
    const text = await res.body.text()
    const bucket = Math.ceil((performance.now() - sentAt) * 100)
    hist.set(bucket, (hist.get(bucket) ?? 0) + 1)
    r.completed++
    r.statuses[res.statusCode] = (r.statuses[res.statusCode] ?? 0) + 1
    const code = /"responseCode":"(\d\d)"/.exec(text)?.[1] ?? '?'
    r.codes[code] = (r.codes[code] ?? 0) + 1
  } catch {
    r.errors++
  }
}

async function closedLoop (seconds: number): Promise<LoadResult> {
  const hist = new Map<number, number>()
  const r = newResult()
  const start = performance.now()
  const end = start + seconds * 1000
  async function loop (): Promise<void> {
    while (performance.now() < end) await send(r, hist)
  }
  await Promise.all(Array.from({ length: config.connections }, loop))
  r.elapsedS = (performance.now() - start) / 1000
  r.histogram = [...hist.entries()]
  return r
}

async function openLoop (seconds: number, rate: number): Promise<LoadResult> {
  const hist = new Map<number, number>()
  const r = newResult()
  const start = performance.now()
  const total = Math.floor(seconds * rate)
  const inFlight = new Set<Promise<void>>()
  let due = 0
  while (due < total) {
    // every request due by now: the i-th is due i / rate seconds after the start
    const now = performance.now()
    const dueNow = Math.min(total, Math.floor((now - start) / 1000 * rate) + 1)
    for (; due < dueNow; due++) {
      if (inFlight.size >= config.connections) {
        r.dropped++
        continue
      }
      const p: Promise<void> = send(r, hist).finally(() => { inFlight.delete(p) })
      inFlight.add(p)
    }
    if (due < total) await new Promise((resolve) => setTimeout(resolve, Math.max(1, start + due / rate * 1000 - performance.now())))
  }
  await Promise.all(inFlight)
  r.elapsedS = (performance.now() - start) / 1000
  r.histogram = [...hist.entries()]
  return r
}

/** the parent may be gone (stopped by a signal) by the time a message is sent: then there is no one to tell */
const tell = (m: unknown): void => { process.send?.(m, undefined, {}, () => {}) }

process.on('message', (m: { seconds: number, rate?: number }) => {
  (m.rate === undefined ? closedLoop(m.seconds) : openLoop(m.seconds, m.rate)).then(tell, (err: unknown) => {
    process.stderr.write(`scale-load: ${String(err)}\n`)
    process.exit(1)
  })
})
// the parent gone (ended or killed): nothing left to measure for
process.on('disconnect', () => { void pool.destroy().finally(() => process.exit(0)) })
tell({ ready: true })

// npm run soak -- [--duration <s>] [--rate <req/s>] [--customers <n>] [--every <s>] [--redis <url>]
//
// Starts extauth as its own process (on the embedded store, or on Redis with --redis / REDIS_URL under a
// key prefix of its own, deleted at the end), seeds funded customers, and sends POST /api/v1/externalAuth at
// a fixed rate for the duration (default 10 minutes). Every --every seconds (default 10) it prints the
// server's RSS, heap and event-loop delay (from GET /metrics on the admin listener) and the client's
// latency percentiles, so that a leak or a creeping slowdown shows as a trend. Not run in CI.
//
// On the embedded store every decision is kept (for 8 days, as on Redis), so the heap grows by design,
// about a kilobyte per decision; run with --redis to watch the process alone.
import { parseArgs } from 'node:util'
import { randomBytes } from 'node:crypto'
import { startServer, metricValue } from '../test/helpers/server-process.js'
import { adminApi, newPool, percentile, postAuth, type Sample } from '../test/helpers/load.js'
import { deleteByPrefix } from '../test/helpers/redis.js'
import { ADMIN_TOKEN, authBody } from '../test/helpers/config.js'

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '600' },
    rate: { type: 'string', default: '200' },
    customers: { type: 'string', default: '50' },
    every: { type: 'string', default: '10' },
    redis: { type: 'string', default: process.env.REDIS_URL ?? '' },
    deadline: { type: 'string', default: '1200' }
  }
})

function positive (name: string, v: string | undefined): number {
  const n = Number(v)
  if (!Number.isFinite(n) || n <= 0) {
    process.stderr.write(`soak: --${name} must be a positive number (got ${String(v)})\n`)
    process.exit(2)
  }
  return n
}

const durationS = positive('duration', args.duration)
const rate = positive('rate', args.rate)
const customers = Math.round(positive('customers', args.customers))
const everyS = positive('every', args.every)
const deadlineMs = Math.round(positive('deadline', args.deadline))
const redisUrl = args.redis
const prefix = `extauth-soak:${randomBytes(4).toString('hex')}:`
const OUTSTANDING_MAX = 1000

const mib = (b: number | null): string => (b === null ? '?' : (b / 2 ** 20).toFixed(1))
const ms = (s: number | null): string => (s === null ? '?' : (s * 1000).toFixed(1))

async function main (): Promise<void> {
  const server = await startServer(null, {
    env: {
      DECISION_DEADLINE_MS: String(deadlineMs),
      ...(redisUrl !== '' ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix } : {})
    },
    logLinesMax: 1000
  })
  const stopServer = async (): Promise<void> => {
    const exit = await server.stop()
    if (redisUrl !== '') await deleteByPrefix(redisUrl, prefix)
    console.log(`extauth stopped: exit code ${String(exit.code)}${exit.signal !== null ? `, signal ${exit.signal}` : ''}`)
  }
  process.once('SIGINT', () => {
    stopServer().then(() => process.exit(130), (err: unknown) => {
      console.error(`soak: stopping extauth after Ctrl-C failed (its process, or its keys under ${prefix}, may be left): ${(err as Error).message}`)
      process.exit(130)
    })
  })

  const admin = adminApi(server.adminUrl, ADMIN_TOKEN)
  const urns = Array.from({ length: customers }, (_, i) => `USOAK${i}`)
  for (const u of urns) await admin.fund(u, 1e14)
  const pool = newPool(server.publicUrl, 64)
  console.log(`extauth pid ${server.pid} on ${server.publicUrl} (${redisUrl !== '' ? `Redis ${redisUrl}, prefix ${prefix}` : 'embedded store'}); ` +
    `${rate}/s for ${durationS} s over ${customers} customers, deadline ${deadlineMs} ms`)
  console.log('     t  sent/s  answered  00  other  err  late  p50ms  p99ms  maxms | RSS MiB  heap MiB  loop p99 ms  comp.pending')

  const readServer = async (): Promise<{ rss: number | null, heap: number | null, lag: number | null, pending: number | null }> => {
    const text = await admin.metrics()
    return {
      rss: metricValue(text, 'extauth_process_resident_memory_bytes'),
      heap: metricValue(text, 'extauth_nodejs_heap_size_used_bytes'),
      lag: metricValue(text, 'extauth_nodejs_eventloop_lag_p99_seconds'),
      pending: metricValue(text, 'extauth_compensations_pending')
    }
  }
  const first = await readServer()

  let window: Sample[] = []
  let outstanding = 0
  let sent = 0
  let dropped = 0
  const total = { answered: 0, approved: 0, late: 0, errors: 0, fiveXx: 0 }
  const record = (s: Sample): void => {
    window.push({ ...s, sent: {}, body: null })
    total.answered++
    if (s.code === '00') total.approved++
    if (s.error !== undefined) total.errors++
    if (s.status >= 500) total.fiveXx++
    if (s.ms > deadlineMs) total.late++
  }
  const t0 = performance.now()
  let nextReport = t0 + everyS * 1000
  let lastSent = 0
  const rows: Array<{ t: number, rss: number | null, heap: number | null }> = [{ t: 0, rss: first.rss, heap: first.heap }]
  const report = async (): Promise<void> => {
    const w = window
    window = []
    const lat = w.map((s) => s.ms)
    const srv = await readServer()
    const t = (performance.now() - t0) / 1000
    rows.push({ t, rss: srv.rss, heap: srv.heap })
    console.log([
      t.toFixed(0).padStart(6),
      ((sent - lastSent) / everyS).toFixed(0).padStart(7),
      String(w.length).padStart(9),
      String(w.filter((s) => s.code === '00').length).padStart(4),
      String(w.filter((s) => s.error === undefined && s.code !== '00').length).padStart(6),
      String(w.filter((s) => s.error !== undefined).length).padStart(4),
      String(w.filter((s) => s.ms > deadlineMs).length).padStart(5),
      percentile(lat, 50).toFixed(1).padStart(6),
      percentile(lat, 99).toFixed(1).padStart(6),
      (lat.length > 0 ? Math.max(...lat) : NaN).toFixed(1).padStart(6),
      '|', mib(srv.rss).padStart(7), mib(srv.heap).padStart(9), ms(srv.lag).padStart(12), String(srv.pending ?? '?').padStart(13)
    ].join(' '))
    lastSent = sent
  }

  const endAt = t0 + durationS * 1000
  const totalDue = Math.round(rate * durationS)
  let due = 0
  while (performance.now() < endAt && due < totalDue) {
    const now = Math.min(totalDue, Math.floor((performance.now() - t0) * rate / 1000))
    for (; due < now; due++) {
      if (outstanding >= OUTSTANDING_MAX) { dropped++; continue }
      outstanding++
      sent++
      void postAuth(pool, authBody({ urn: urns[due % urns.length], transactionAmount: String(100 + (due % 900)) }))
        .then(record).finally(() => { outstanding-- })
    }
    if (performance.now() >= nextReport) {
      nextReport += everyS * 1000
      await report()
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  // eslint-disable-next-line no-unmodified-loop-condition -- each request's finally() lowers it while this loop sleeps
  while (outstanding > 0) await new Promise((resolve) => setTimeout(resolve, 20))
  await report()
  await pool.close()

  const last = rows[rows.length - 1] ?? rows[0]
  const firstRow = rows[0]
  console.log(`\nsent ${sent} (${dropped} not sent: ${OUTSTANDING_MAX} already outstanding), answered ${total.answered}, approved ${total.approved}, ` +
    `socket errors ${total.errors}, 5xx ${total.fiveXx}, answers later than the deadline ${total.late}`)
  console.log(`server RSS ${mib(firstRow?.rss ?? null)} → ${mib(last?.rss ?? null)} MiB, heap ${mib(firstRow?.heap ?? null)} → ${mib(last?.heap ?? null)} MiB over ${(last?.t ?? 0).toFixed(0)} s`)
  // a leak is a floor that rises: the lowest heap and RSS seen in each quarter of the run (the first quarter
  // holds warm-up and JIT), and the least-squares slope over the second half
  const quarters = [0, 1, 2, 3].map((q) => rows.filter((r) => r.t > (last?.t ?? 0) * q / 4 && r.t <= (last?.t ?? 0) * (q + 1) / 4))
  const floor = (rs: typeof rows, k: 'heap' | 'rss'): string => mib(rs.length === 0 ? null : Math.min(...rs.map((r) => r[k] ?? Infinity)))
  console.log(`lowest heap per quarter: ${quarters.map((q) => floor(q, 'heap')).join(' → ')} MiB; lowest RSS per quarter: ${quarters.map((q) => floor(q, 'rss')).join(' → ')} MiB`)
  const half = rows.filter((r) => r.t >= (last?.t ?? 0) / 2)
  const slope = (k: 'heap' | 'rss'): string => {
    const pts = half.filter((r) => r[k] !== null).map((r) => [r.t / 60, (r[k] as number) / 2 ** 20] as const)
    if (pts.length < 3) return '?'
    const mx = pts.reduce((a, p) => a + p[0], 0) / pts.length
    const my = pts.reduce((a, p) => a + p[1], 0) / pts.length
    const num = pts.reduce((a, p) => a + (p[0] - mx) * (p[1] - my), 0)
    const den = pts.reduce((a, p) => a + (p[0] - mx) ** 2, 0)
    return den === 0 ? '?' : (num / den).toFixed(2)
  }
  console.log(`trend over the second half: heap ${slope('heap')} MiB/min, RSS ${slope('rss')} MiB/min`)
  await stopServer()
}

main().catch((err: unknown) => {
  process.stderr.write(`soak: ${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})

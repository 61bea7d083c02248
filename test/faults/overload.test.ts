// Traffic doubles: extauth runs as its own process (the client must not share its event loop). First a short
// closed loop measures what this machine answers now; then an open loop sends at twice that for 5 s.
// Every request is answered 200 with 00 or 05 (no 5xx, no socket error), each 05 is a request shed
// (extauth_shed_total) or answered by the deadline guard, readiness says 503 while it sheds, memory stays
// bounded, and a light load right after gets 00s again.
//
// The client is the platform: 512 connections to this instance (many callers: with few connections the
// server never holds enough requests at once to fall behind its deadline, and never sheds) and a bounded
// queue behind them (1024 outstanding); a request due when that queue is full is not sent and counted as
// dropped, so that on 2 shared cores the client's own cost stays bounded and does not starve the server. The time a
// request waits for a connection in the client is the caller's, not the server's: the time on the wire
// (`wireMs`, see helpers/load.ts) and the time including the client's queue are reported.
import t from 'tap'
import { Pool } from 'undici'
import { startServer, metricSum, metricValue } from '../helpers/server-process.js'
import { adminApi, closedLoop, countBy, newPool, openLoop, percentile, postAuth, type Sample } from '../helpers/load.js'
import { ADMIN_TOKEN, authBody } from '../helpers/config.js'
import { deleteByPrefix, uniquePrefix, SHARED_REDIS_URL } from '../helpers/redis.js'

// the deadline leaves room under the platform's 2000 ms; the shed threshold is low enough that 2x load on
// 2 cores pushes the mean event-loop delay over it, high enough that the closed-loop measure rarely sheds
const DEADLINE_MS = 500
const SHED_MS = 20
// the platform gives up after this long; the time on the wire under overload is printed, not asserted: on a
// 2-core machine loaded by other work as well it measures that machine (a load average of 17 put 106 of
// 8,000 answers past 1,500 ms), and speed is the benchmarks' to prove
const PLATFORM_TIMEOUT_MS = 2000
const RSS_GROWTH_MAX = 200 * 1024 * 1024
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

t.test('twice the measured capacity for 5 s', async (t) => {
  // on Redis (the shared server, a prefix of this test's own): the process's memory is then its own, not the
  // embedded store's growing set of decisions
  const prefix = uniquePrefix()
  t.teardown(async () => { await deleteByPrefix(SHARED_REDIS_URL, prefix) })
  // `--no-opt` (V8 without its optimizing compiler) halves what the server answers per core: the client, on
  // the same 2 cores, then reaches twice that. Without it the client was the bottleneck: a fast run of the
  // server kept the event-loop delay under SHED_MS and nothing was shed (0 of 57,478 in one CI run)
  const server = await startServer(t, {
    nodeArgs: ['--no-opt'],
    env: { DECISION_DEADLINE_MS: String(DEADLINE_MS), SHED_EVENT_LOOP_DELAY_MS: String(SHED_MS), REDIS_URL: SHARED_REDIS_URL, REDIS_KEY_PREFIX: prefix }
  })
  const admin = adminApi(server.adminUrl, ADMIN_TOKEN)
  const urns = Array.from({ length: 20 }, (_, i) => `UOVL${i}`)
  for (const u of urns) await admin.fund(u, 1e12)
  // the server has at most this many requests at once
  const pool = newPool(server.publicUrl, 512)
  t.teardown(async () => { await pool.close() })
  const body = (i: number): Record<string, unknown> => authBody({ urn: urns[i % urns.length], transactionAmount: '100' })

  // warm up (JIT, connections), then measure
  await closedLoop(pool, { concurrency: 16, durationMs: 1000, body })
  const rssBefore = server.rssBytes() ?? 0
  const measured = await closedLoop(pool, { concurrency: 16, durationMs: 2000, body })
  const capacity = measured.length / 2
  t.comment(`capacity now: ${capacity.toFixed(0)} answers/s (closed loop, 16 workers), p99 ${percentile(measured.map((s) => s.ms), 99).toFixed(0)} ms`)

  const readiness: number[] = []
  const probe = new Pool(server.publicUrl, { connections: 1 })
  t.teardown(async () => { await probe.close() })
  let probing = true
  const probeLoop = (async () => {
    // eslint-disable-next-line no-unmodified-loop-condition, @typescript-eslint/no-unnecessary-condition -- cleared by the test once it has measured, while this loop awaits
    while (probing) {
      try {
        const res = await probe.request({ method: 'GET', path: '/health/ready', signal: AbortSignal.timeout(PLATFORM_TIMEOUT_MS) })
        await res.body.dump()
        readiness.push(res.statusCode)
      } catch {
        readiness.push(0)
      }
      await sleep(25)
    }
  })()

  const metricsBefore = await admin.metrics()
  const samples: Sample[] = []
  let offered = 0
  let dropped = 0
  // twice the capacity (the closed loop underestimates what the server answers); once more at 4x if that hardly shed
  for (const [mult, durationMs] of [[2, 5000], [4, 3000]] as const) {
    const rate = Math.max(200, Math.round(capacity * mult))
    const run = await openLoop(pool, { ratePerSec: rate, durationMs, body, post: { timeoutMs: PLATFORM_TIMEOUT_MS }, outstandingMax: 1024 })
    samples.push(...run.samples)
    offered += run.sent + run.dropped
    dropped += run.dropped
    const shedSoFar = metricSum(await admin.metrics(), 'extauth_shed_total') - metricSum(metricsBefore, 'extauth_shed_total')
    t.comment(`open loop at ${mult}x = ${rate}/s for ${durationMs} ms: sent ${run.sent} in ${run.elapsedMs.toFixed(0)} ms, ${run.dropped} dropped by the client's full queue; shed so far ${shedSoFar}`)
    // enough shedding to say something: stop; a machine slow while measuring gets one more round at 4x
    if (shedSoFar >= samples.length / 50) break
  }
  probing = false
  await probeLoop
  const metricsAfter = await admin.metrics()
  const rssAfter = server.rssBytes() ?? 0
  const shed = metricSum(metricsAfter, 'extauth_shed_total') - metricSum(metricsBefore, 'extauth_shed_total')
  const deadlineHits = (metricValue(metricsAfter, 'extauth_deadline_hits_total') ?? 0) - (metricValue(metricsBefore, 'extauth_deadline_hits_total') ?? 0)

  const answered = samples.filter((s) => s.error === undefined)
  // the platform gives up 2 s after it queued a request: one that waited in the client's pool for most of
  // that is given up soon after it went out; only time on the wire is the server's
  const timedOut = samples.filter((s) => s.error === 'TimeoutError')
  const neverSent = timedOut.filter((s) => Number.isNaN(s.wireMs))
  const otherErrors = samples.filter((s) => s.error !== undefined && s.error !== 'TimeoutError')
  const lateOnWire = samples.filter((s) => s.wireMs > DEADLINE_MS + 1000)
  const codes = countBy(answered, (s) => `${s.status}/${s.code}`)
  const wire = answered.map((s) => s.wireMs)
  const wireMax = Math.max(...wire)
  t.comment(`answers ${JSON.stringify(codes)}; shed ${shed}, deadline 05s ${deadlineHits}; ` +
    `on the wire p50 ${percentile(wire, 50).toFixed(0)} / p99 ${percentile(wire, 99).toFixed(0)} / max ${wireMax.toFixed(0)} ms, ${lateOnWire.length} past the deadline + 1000 ms; ` +
    `at the client incl. its own queue p99 ${percentile(answered.map((s) => s.ms), 99).toFixed(0)} ms; ` +
    `of ${offered} offered: ${dropped} dropped by the client's full queue, ${neverSent.length} still in it at the platform timeout, ${timedOut.length - neverSent.length} given up soon after they went out`)
  t.comment(`readiness during the load: ${JSON.stringify(countBy(readiness, String))}; RSS ${(rssBefore / 2 ** 20).toFixed(0)} → ${(rssAfter / 2 ** 20).toFixed(0)} MiB`)

  t.same(countBy(otherErrors, (s) => s.error ?? ''), {}, 'no socket error')
  t.same(Object.keys(codes).filter((k) => k !== '200/00' && k !== '200/05'), [], 'every answer is HTTP 200 with 00 or 05 (no 5xx)')
  t.ok(shed > 0, `the overload was real: ${shed} requests shed`)
  t.ok((codes['200/05'] ?? 0) <= shed + deadlineHits, 'every 05 is a shed request or a deadline answer (the customers are funded)')
  // readiness is sampled; only a shedding that lasted some sample intervals must have been seen
  if (shed >= 500) t.ok(readiness.includes(503), '/health/ready said 503 while shedding')
  else t.comment(`only ${shed} shed: readiness 503 not required to have been sampled`)
  t.ok(rssAfter - rssBefore < RSS_GROWTH_MAX, `RSS grew ${((rssAfter - rssBefore) / 2 ** 20).toFixed(0)} MiB (bound ${RSS_GROWTH_MAX / 2 ** 20} MiB)`)

  // the load drops: 00s at once
  const dropAt = performance.now()
  let first: Sample | null = null
  while (performance.now() - dropAt < 5000) {
    const s = await postAuth(pool, body(0))
    if (s.code === '00') { first = s; break }
    await sleep(20)
  }
  t.ok(first !== null, 'a 00 comes back after the load drops')
  t.comment(`first 00 ${(performance.now() - dropAt).toFixed(0)} ms after the load dropped`)
  // a light load right after is approved; with a shed threshold this low, a machine busy with other work
  // can still make the process shed one now and then: such an answer counts as shed, never as a decline
  const unmade = (m: string): number => metricSum(m, 'extauth_shed_total') + (metricValue(m, 'extauth_deadline_hits_total') ?? 0)
  const unmadeBeforeLight = unmade(await admin.metrics())
  const light = await closedLoop(pool, { concurrency: 2, durationMs: 10_000, requestsMax: 50, body })
  const unmadeLight = unmade(await admin.metrics()) - unmadeBeforeLight
  const lightCodes = countBy(light, (s) => `${s.status}/${s.code}`)
  t.equal(light.length, 50, 'a light load right after: 50 requests')
  t.equal((lightCodes['200/00'] ?? 0) + (lightCodes['200/05'] ?? 0), 50, `all answered 00 or 05 (${JSON.stringify(lightCodes)})`)
  t.equal(lightCodes['200/05'] ?? 0, unmadeLight, `each 05 among them was shed or answered by the deadline guard (${unmadeLight})`)
  t.ok((lightCodes['200/00'] ?? 0) >= 25, 'and most are approved')
  // readiness follows the event-loop samples (every 250 ms): it turns 200 again (the bound ends a wait that would never end)
  let readyStatus = 0
  const readyBy = performance.now() + 10_000
  while (readyStatus !== 200 && performance.now() < readyBy) {
    const ready = await probe.request({ method: 'GET', path: '/health/ready' })
    await ready.body.dump()
    readyStatus = ready.statusCode
    if (readyStatus !== 200) await sleep(50)
  }
  t.equal(readyStatus, 200, 'ready again')
  const exit = await server.stop()
  if (exit.code !== 0) t.comment(`exit ${JSON.stringify(exit)}; stderr: ${server.stderr()}; last log lines:\n${server.rawLogs.slice(-20).join('\n')}`)
  t.equal(exit.code, 0, 'extauth never crashed and exits 0')
})

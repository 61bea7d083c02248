// Redis killed (SIGKILL) in the middle of load, then restarted on the same port and data directory, with
// extauth running as its own process the whole time. While Redis is down every answer is a fast 05 and
// /health/ready is 503; after the restart decisions resume without restarting extauth; no debit is lost
// or doubled: each balance is the opening balance minus the approvals that were answered 00.
import t from 'tap'
import { request } from 'undici'
import { privateRedis } from '../helpers/redis.js'
import { startServer, metricValue } from '../helpers/server-process.js'
import { adminApi, closedLoop, countBy, debitOf, newPool, percentile } from '../helpers/load.js'
import { ADMIN_TOKEN, authBody } from '../helpers/config.js'
import { sleep, until } from '../helpers/wait.js'

const DEADLINE_MS = 1000
// the platform gives up on an answer after this long: the client does too, and an answer it gave up on is a
// socket error (AbortError) below. A bound, with the deadline again as room for a busy machine.
const PLATFORM_TIMEOUT_MS = 2000
const OPENING = 10_000_000
const AMOUNT = 100

async function readyStatus (url: string): Promise<number> {
  try {
    const res = await request(url + '/health/ready', { signal: AbortSignal.timeout(2000) })
    await res.body.dump()
    return res.statusCode
  } catch {
    return 0
  }
}

t.test('Redis killed under load, then restarted', async (t) => {
  const redis = await privateRedis(t, { persist: true })
  const server = await startServer(t, {
    env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'kill:', DECISION_DEADLINE_MS: String(DEADLINE_MS) }
  })
  const admin = adminApi(server.adminUrl, ADMIN_TOKEN)
  const urns = Array.from({ length: 8 }, (_, i) => `UKILL${i}`)
  for (const u of urns) await admin.fund(u, OPENING)
  const pool = newPool(server.publicUrl, 16)
  t.teardown(async () => { await pool.close() })

  let stop = false
  let restartedAt = Infinity
  let firstOkAt = Infinity
  let downFrom = Infinity
  let answeredWhileDown = 0
  const load = closedLoop(pool, {
    concurrency: 8,
    durationMs: 60_000,
    stop: () => stop,
    body: (i) => authBody({ urn: urns[i % urns.length], transactionAmount: String(AMOUNT) }),
    post: { timeoutMs: PLATFORM_TIMEOUT_MS },
    onSample: (s) => {
      if (s.code === '00' && s.sentAt >= restartedAt && firstOkAt === Infinity) firstOkAt = s.sentAt + s.ms
      if (s.sentAt >= downFrom && restartedAt === Infinity) answeredWhileDown++
    }
  })

  await sleep(1000)
  const killAt = performance.now()
  await redis.stop()
  // readiness follows the store: 503 as soon as the connection is seen gone
  const notReadyAfterMs = await until('/health/ready 503 while Redis is down', async () => await readyStatus(server.publicUrl) === 503, 10_000)
  downFrom = performance.now()
  await until('answers while Redis is down', async () => answeredWhileDown >= 50, 15_000, 10)
  t.equal(await readyStatus(server.publicUrl), 503, '/health/ready is still 503 while Redis is down')
  const downTo = performance.now()
  await redis.restart()
  restartedAt = performance.now()
  // decisions resume without restarting extauth: the load's own requests are the probe
  const [, readyAgainMs] = await Promise.all([
    until('an approval after the restart', async () => firstOkAt !== Infinity, 15_000, 10),
    until('/health/ready 200 after the restart', async () => await readyStatus(server.publicUrl) === 200, 15_000, 10)
  ])
  const recoveredInMs = firstOkAt - restartedAt
  await sleep(1000)
  stop = true
  const samples = await load
  t.comment(`Redis down ${(restartedAt - killAt).toFixed(0)} ms (readiness 503 after ${notReadyAfterMs.toFixed(0)} ms); ` +
    `first 00 ${recoveredInMs.toFixed(0)} ms after the restart, /health/ready 200 after ${readyAgainMs.toFixed(0)} ms`)

  t.same(countBy(samples, (s) => s.error ?? 'answered'), { answered: samples.length }, `no socket error: every request answered, inside the platform's ${PLATFORM_TIMEOUT_MS} ms`)
  t.same(samples.filter((s) => s.status !== 200).length, 0, 'every answer is HTTP 200 (no 5xx)')
  t.same(Object.keys(countBy(samples, (s) => s.code)).sort(), ['00', '05'], 'answers are 00 or 05 (and both happened)')
  const whileDown = samples.filter((s) => s.sentAt >= downFrom && s.sentAt + s.ms <= downTo)
  t.ok(whileDown.length >= 50, `requests were sent while Redis was down (${whileDown.length})`)
  t.same(countBy(whileDown, (s) => s.code), { '05': whileDown.length }, 'every answer while Redis is down is 05')
  // fast: the store fails each call at once instead of waiting for Redis, so no answer while Redis is down is
  // the deadline guard's; one shed on arrival (the process's event loop lagging) has no decision at all
  const reasons = new Map(server.logs().filter((l) => l.msg === 'decision').map((l) => [l.reference, String(l.reason)]))
  const downCauses = countBy(whileDown, (s) => reasons.get(s.sent.transactionReferenceNumber) ?? 'shed')
  t.same(Object.keys(downCauses).filter((r) => r !== 'store_error' && r !== 'shed'), [], `while down, every 05 is the store error's at once (${JSON.stringify(downCauses)}), p99 ${percentile(whileDown.map((s) => s.ms), 99).toFixed(0)} ms`)
  t.ok((downCauses.store_error ?? 0) > 0, 'and store errors were answered')
  if ((downCauses.shed ?? 0) > 0) t.ok(server.logs().some((l) => l.msg === 'overloaded: answering 05 without a decision'), 'the process said it was shedding')

  // every compensation of a request cut off by the kill has reached the store
  await until('compensations applied', async () => metricValue(await admin.metrics(), 'extauth_compensations_pending') === 0, 20_000, 100)

  let approvals = 0
  for (const u of urns) {
    const ok = samples.filter((s) => s.sent.urn === u && s.code === '00')
    approvals += ok.length
    const expected = OPENING - ok.reduce((sum, s) => sum + debitOf(s.sent), 0)
    t.equal(await admin.available(u), expected, `${u}: balance = opening − the ${ok.length} approvals answered 00`)
  }
  // the requests in flight when Redis died: each one's stored decision agrees with its answer
  const inFlight = samples.filter((s) => s.sentAt <= killAt && s.sentAt + s.ms >= killAt)
  const seen: string[] = []
  for (const s of inFlight) {
    const r = await admin.call('GET', `/admin/v1/customers/${String(s.sent.urn)}/decisions/${String(s.sent.transactionReferenceNumber)}`)
    seen.push(`${s.code}/${r.status === 200 ? String(r.body.code) + (r.body.answeredOnDeadline === true ? ' compensated' : '') : 'none'}`)
    if (s.code === '00') t.match(r.body, { code: '00', debit: AMOUNT }, 'in flight at the kill, answered 00: held')
    else if (r.status === 200) t.match(r.body, { code: '05' }, 'in flight at the kill, answered 05: nothing held (a 05 holds nothing)')
    else t.equal(r.status, 404, 'in flight at the kill, answered 05: no decision (it never reached Redis)')
  }
  t.comment(`${samples.length} requests, ${approvals} approved, ${whileDown.length} while Redis was down; in flight at the kill (answer/stored): ${JSON.stringify(countBy(seen, (x) => x))}`)
  t.equal((await server.stop()).code, 0, 'extauth exits 0')
})

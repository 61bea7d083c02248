// SIGTERM under load, extauth as its own process on a redis-server of the test's own: every request sent
// before the signal gets its answer, new connections are refused once the listener is closed (while the
// process still finishes its work), the process exits 0, and no decision is left half-committed: each
// balance is the opening balance minus the approvals answered 00.
import t, { type TAP } from 'tap'
import { connect } from 'node:net'
import { privateRedis, uniquePrefix } from '../helpers/redis.js'
import { startServer } from '../helpers/server-process.js'
import { adminApi, closedLoop, countBy, debitOf, newPool, type Sample } from '../helpers/load.js'
import { ADMIN_TOKEN, authBody } from '../helpers/config.js'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'

const OPENING = 10_000_000
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

async function connectResult (port: number): Promise<string> {
  return await new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    s.once('connect', () => { s.destroy(); resolve('connected') })
    s.once('error', (err: Error & { code?: string }) => { resolve(err.code ?? err.message) })
  })
}

async function setup (t: Pick<TAP, 'teardown'>, deadlineMs: number): Promise<{
  redis: Awaited<ReturnType<typeof privateRedis>>
  server: Awaited<ReturnType<typeof startServer>>
  prefix: string
  urns: string[]
}> {
  const redis = await privateRedis(t)
  const prefix = uniquePrefix()
  const server = await startServer(t, { env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, DECISION_DEADLINE_MS: String(deadlineMs) } })
  const admin = adminApi(server.adminUrl, ADMIN_TOKEN)
  const urns = Array.from({ length: 4 }, (_, i) => `UTERM${i}`)
  for (const u of urns) await admin.fund(u, OPENING)
  return { redis, server, prefix, urns }
}

/** After the process is gone: read the balances straight from Redis and hold them against the answers. */
async function checkMoney (t: Pick<TAP, 'equal' | 'fail'>, redisUrl: string, prefix: string, urns: string[], samples: Sample[]): Promise<void> {
  const store = new RedisStore(createRedisClient({ url: redisUrl }), { prefix })
  await store.connect()
  try {
    for (const u of urns) {
      const ok = samples.filter((s) => s.sent.urn === u && s.code === '00')
      t.equal((await store.getCustomer(u))?.available, OPENING - ok.reduce((sum, s) => sum + debitOf(s.sent), 0), `${u}: balance = opening − ${ok.length} approvals`)
    }
    // and an answer that never came was never committed as an approval
    for (const s of samples.filter((x) => x.code !== '00')) {
      const rec = await store.getDecision(s.sent.urn as string, s.sent.transactionReferenceNumber as string)
      if (rec !== null && rec.held !== '0') t.fail(`a request answered ${s.code || s.error || '?'} holds ${rec.held}`)
    }
  } finally {
    await store.close()
  }
}

t.test('SIGTERM with decisions held up in Redis: they are answered, new connections refused, exit 0', async (t) => {
  const DEADLINE_MS = 1500
  const { redis, server, prefix, urns } = await setup(t, DEADLINE_MS)
  const pool = newPool(server.publicUrl, 8)
  t.teardown(async () => { await pool.close() })
  let stop = false
  const load = closedLoop(pool, { concurrency: 8, durationMs: 30_000, stop: () => stop, body: (i) => authBody({ urn: urns[i % urns.length], transactionAmount: '100' }) })
  await sleep(800)

  // hold every decision now in flight inside Redis for a second, and stop extauth in the middle of it
  const admin = await redis.admin()
  const sleeping = admin.call('DEBUG', 'SLEEP', '1')
  await sleep(100)
  const signalAt = performance.now()
  server.signal('SIGTERM')
  stop = true
  // the listener closes at once; the process stays until the answers in flight are out
  let newConnection = ''
  while (performance.now() - signalAt < 2000) {
    newConnection = await connectResult(server.publicPort)
    if (newConnection !== 'connected') break
    await sleep(10)
  }
  const refusedAfterMs = performance.now() - signalAt
  const alive = server.proc.exitCode === null && server.proc.signalCode === null
  t.equal(newConnection, 'ECONNREFUSED', `a new connection is refused once the listener is closed (${refusedAfterMs.toFixed(0)} ms after the signal)`)
  t.ok(alive, 'while extauth is still finishing the requests in flight')
  await sleeping

  const samples = await load
  const exit = await server.exited
  t.same(exit, { code: 0, signal: null }, 'extauth exits 0')
  const before = samples.filter((s) => s.wireAt < signalAt)
  const inFlight = before.filter((s) => s.sentAt + s.ms > signalAt)
  t.ok(inFlight.length >= 4, `requests were in flight at the signal (${inFlight.length})`)
  t.same(countBy(before, (s) => s.error ?? `${s.status}/${s.code}`), { '200/00': before.length }, 'every request sent before the signal is answered 00')
  t.ok(server.logs().some((l) => l.msg === 'shutting down: finishing requests in flight'), 'the process logged the shutdown')
  t.ok(server.logs().some((l) => l.msg === 'stopped'), 'and that it stopped')
  await checkMoney(t, redis.url, prefix, urns, samples)
})

t.test('SIGTERM in the middle of plain load', async (t) => {
  const { redis, server, prefix, urns } = await setup(t, 1000)
  const pool = newPool(server.publicUrl, 16)
  t.teardown(async () => { await pool.close() })
  let signalAt = Infinity
  const load = closedLoop(pool, {
    concurrency: 16,
    durationMs: 30_000,
    // keep sending after the signal until the connection is refused: the test is the edge
    stop: () => performance.now() > signalAt + 500,
    body: (i) => authBody({ urn: urns[i % urns.length], transactionAmount: '100' })
  })
  await sleep(1000)
  signalAt = performance.now()
  server.signal('SIGTERM')
  const samples = await load
  const exit = await server.exited
  t.same(exit, { code: 0, signal: null }, 'extauth exits 0')

  // sent = its bytes went onto a socket (a request still waiting in the client for a connection was not)
  const before = samples.filter((s) => s.wireAt < signalAt)
  const after = samples.filter((s) => !(s.wireAt < signalAt))
  const outcome = (s: Sample): string => s.error ?? `${s.status}/${s.code}`
  t.comment(`sent before the signal: ${JSON.stringify(countBy(before, outcome))}; after it, or never sent: ${JSON.stringify(countBy(after, outcome))}`)
  t.same(Object.keys(countBy(before, outcome)).filter((k) => k !== '200/00' && k !== '200/05'), [], 'every request sent before the signal is answered (00, or 05 when shed)')
  t.ok(before.filter((s) => s.code === '00').length > 0, 'and approvals among them')
  t.ok(after.every((s) => s.error !== undefined || s.status === 200), 'after the signal: an answer, or a refused/closed connection')
  await checkMoney(t, redis.url, prefix, urns, samples)
})

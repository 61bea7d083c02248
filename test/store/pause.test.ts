// Redis paused past the deadline, on a redis-server of the test's own: every answer is a 05 on time, and
// after Redis resumes no debit and no limit counter remains for those transactions.
import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from '../helpers/app.js'
import { privateRedis, uniquePrefix } from '../helpers/redis.js'
import { listen, post } from '../helpers/http.js'
import { authBody, platformHeaders, answerDueMs } from '../helpers/config.js'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'

const DEADLINE_MS = 300

t.test('CLIENT PAUSE past the deadline', async (t) => {
  const redis = await privateRedis(t)
  const store = new RedisStore(createRedisClient({ url: redis.url }), { prefix: uniquePrefix() })
  await store.connect()
  t.teardown(async () => { await store.close() })
  const dir = await mkdtemp(join(tmpdir(), 'extauth-rules-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const K = 20
  await writeFile(join(dir, '10-limit.json'), JSON.stringify({
    rules: [{ id: 'count', when: { channel: { eq: 'POS' } }, limit: { measure: 'count', per: 'urn', window: '1h', max: K }, then: { decline: '65' } }]
  }))
  const { publicApp, deps } = await build(t, { store, env: { DECISION_DEADLINE_MS: String(DEADLINE_MS), RULES_DIR: dir }, logLevel: 'warn' })
  const { pool } = await listen(t, publicApp)
  const urn = `UPAUSE${process.pid}`
  await store.putCustomer(urn, {})
  await store.credit(urn, 100_000, 'seed')

  // writes (every decision script) wait in Redis until this test lets go, so every answer below can only
  // be the deadline guard's; reads go on
  const admin = await redis.admin()
  await admin.call('CLIENT', 'PAUSE', '60000', 'WRITE')
  const bodies = Array.from({ length: K }, () => authBody({ urn, transactionAmount: '100' }))
  const answers = await Promise.all(bodies.map(async (b) => await post(pool, '/api/v1/externalAuth', platformHeaders(), b)))
  const pausedClients = Number(/blocked_clients:(\d+)/.exec(String(await admin.info('clients')))?.[1] ?? 0)
  t.ok(pausedClients > 0, 'Redis still holds the decisions when the answers are in')
  for (const a of answers) {
    t.equal(a.status, 200)
    t.equal(a.body.responseCode, '05')
  }
  const slowest = Math.max(...answers.map((a) => a.ms))
  t.ok(slowest <= answerDueMs(DEADLINE_MS), `slowest answer ${slowest.toFixed(0)} ms, deadline ${DEADLINE_MS} ms`)
  t.ok(Math.min(...answers.map((a) => a.ms)) >= DEADLINE_MS - 20, 'none before the deadline')

  // Redis resumes; the held scripts run (and refuse to commit past the deadline) and the compensations land
  await admin.call('CLIENT', 'UNPAUSE')
  const until = Date.now() + 15_000
  while (deps.compensator.pending > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(deps.compensator.pending, 0, 'every compensation applied')
  t.equal((await store.getCustomer(urn))?.available, 100_000, 'no debit remains')
  for (const b of bodies) {
    const rec = await store.getDecision(urn, b.transactionReferenceNumber as string)
    t.match(rec, { code: '05', answeredOnDeadline: true, held: '0' }, 'the decision says it was answered 05 on the deadline')
  }
  // no counter remains: K more transactions fit in the limit of K
  const after = await Promise.all(Array.from({ length: K }, async () => await post(pool, '/api/v1/externalAuth', platformHeaders(), authBody({ urn, transactionAmount: '100' }))))
  t.same(after.map((a) => a.body.responseCode), Array(K).fill('00'), 'the limit window holds none of the paused transactions')
  // and a retry of a paused reference gets the 05 it was answered, without a debit
  const retry = await post(pool, '/api/v1/externalAuth', platformHeaders(), bodies[0])
  t.equal(retry.body.responseCode, '05')
  t.equal((await store.getCustomer(urn))?.available, 100_000 - K * 100)
})

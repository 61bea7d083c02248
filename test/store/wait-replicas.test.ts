// REDIS_WAIT_REPLICAS through the app, on a primary with one replica of its own: an approval is answered 00
// only once the replica holds it; with the replica frozen (SIGSTOP: connected, but acknowledging nothing) it
// is answered 05 by the deadline and released, and the release itself counts only once the replica has it.
// Declines do not wait.
import t from 'tap'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'
import { Keys } from '../../src/store/keys.js'
import { decodeRecord } from '../../src/store/record-format.js'
import type { DecisionRecord } from '../../src/store/types.js'
import { replicatedRedis } from '../helpers/sentinel.js'
import { build } from '../helpers/app.js'
import { adminHeaders, authBody, platformHeaders, answerDueMs } from '../helpers/config.js'
import { metricValue } from '../helpers/server-process.js'

const DEADLINE_MS = 1500
const PREFIX = 'wait:'
/** the decision record stored under key on one node, or null */
async function recordAt (client: { get: (key: string) => Promise<string | null> }, key: string): Promise<DecisionRecord | null> {
  const raw = await client.get(key)
  return raw === null ? null : decodeRecord(key, raw)
}
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

t.test('an approval waits for its replica; without one it is released and answered 05', async (t) => {
  const redis = await replicatedRedis(t, 1)
  const replica = redis.replicas[0]
  if (replica === undefined) throw new Error('no replica')
  const store = new RedisStore(createRedisClient({ url: `redis://127.0.0.1:${redis.primary.port}` }), { prefix: PREFIX, waitReplicas: 1, abandonWaitMs: 300 })
  await store.connect()
  const b = await build(t, { store, env: { DECISION_DEADLINE_MS: String(DEADLINE_MS) } })
  const fund = await b.adminApp.inject({ method: 'PUT', url: '/admin/v1/customers/UWAIT', headers: adminHeaders, payload: {} })
  t.equal(fund.statusCode, 200)
  await b.adminApp.inject({ method: 'POST', url: '/admin/v1/customers/UWAIT/credits', headers: adminHeaders, payload: { amount: '10000', reference: 'open' } })
  const keys = new Keys(PREFIX)
  const primary = redis.client(redis.primary.port)
  const onReplica = redis.client(replica.port)
  const post = async (body: Record<string, unknown>): Promise<{ code: string, ms: number }> => {
    const t0 = performance.now()
    const res = await b.publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: body })
    return { code: String(res.json().responseCode), ms: performance.now() - t0 }
  }

  const ok = authBody({ urn: 'UWAIT', transactionAmount: '100' })
  t.equal((await post(ok)).code, '00', 'replica up: approved')
  // WAIT returned only once the replica had it, so it is there now, with no further waiting
  const okKey = keys.decision('UWAIT', String(ok.transactionReferenceNumber))
  const rec = await onReplica.get(okKey)
  t.match(rec === null ? {} : decodeRecord(okKey, rec), { code: '00', held: '100' }, 'the approval answered 00 is already on the replica')

  replica.proc.kill('SIGSTOP')
  t.teardown(() => { replica.proc.kill('SIGCONT') })
  const late = authBody({ urn: 'UWAIT', transactionAmount: '250' })
  const r = await post(late)
  t.equal(r.code, '05', 'replica frozen: the approval is answered 05')
  t.ok(r.ms <= answerDueMs(DEADLINE_MS), `within the deadline (${r.ms.toFixed(0)} ms)`)
  const declined = await post(authBody({ urn: 'UNKNOWN-WAIT', transactionAmount: '100' }))
  t.equal(declined.code, '14', 'a decline is answered as decided')
  t.ok(declined.ms < DEADLINE_MS, `a decline does not wait for the replica (${declined.ms.toFixed(0)} ms, deadline ${DEADLINE_MS} ms)`)
  const lateKey = keys.decision('UWAIT', String(late.transactionReferenceNumber))
  // the release reached the primary, but is not confirmed while the replica cannot acknowledge it
  for (let i = 0; i < 100 && (await recordAt(primary, lateKey))?.held !== '0'; i++) await sleep(50)
  t.match(await recordAt(primary, lateKey), { held: '0', answeredOnDeadline: true }, 'released on the primary')
  t.equal(b.deps.compensator.pending, 1, 'the release stays pending while no replica confirms it')

  replica.proc.kill('SIGCONT')
  for (let i = 0; i < 200 && b.deps.compensator.pending > 0; i++) await sleep(50)
  t.equal(b.deps.compensator.pending, 0, 'confirmed once the replica is back')
  t.match(await recordAt(onReplica, lateKey), { held: '0' }, 'the release is on the replica')
  t.equal(Number(await onReplica.hget(keys.customer('UWAIT'), 'available')), 10000 - 100, 'balance on the replica: only the 00 is debited')
  const metrics = await b.deps.metrics.registry.metrics()
  // the WAIT's own timeout normally answers first; on a stalled machine the deadline guard may (same outcome)
  const shortfalls = metricValue(metrics, 'extauth_approvals_not_replicated_total') ?? 0
  const deadlineHits = metricValue(metrics, 'extauth_deadline_hits_total') ?? 0
  t.equal(shortfalls + deadlineHits, 1, `the 05 is counted: not replicated ${shortfalls}, deadline ${deadlineHits}`)
  t.ok(b.logs.some((l) => l.msg === 'decision' && (l.reason === 'not_replicated' || l.reason === 'deadline') && l.code === '05'), 'logged with its reason')
})

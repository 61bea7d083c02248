// Two extauth processes on one Redis send their events to one receiver on loopback; the receiver refuses
// while the first instance holds the events it has read, then that instance is killed (SIGKILL): the
// survivor claims them and every event arrives, in order per customer.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { deleteByPrefix, uniquePrefix, SHARED_REDIS_URL } from '../helpers/redis.js'
import { startServer } from '../helpers/server-process.js'
import { adminApi, newPool, postAuth } from '../helpers/load.js'
import { ADMIN_TOKEN, authBody } from '../helpers/config.js'
import { receiver } from '../helpers/receiver.js'

const CUSTOMERS = 6
const AUTHS = 5

t.test('kill -9 of an instance holding undelivered events loses none', async (t) => {
  const prefix = uniquePrefix()
  t.teardown(async () => { await deleteByPrefix(SHARED_REDIS_URL, prefix) })
  const rx = await receiver(t)
  rx.status = 503
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const env = { REDIS_URL: SHARED_REDIS_URL, REDIS_KEY_PREFIX: prefix, LOG_LEVEL: 'warn', SHED_EVENT_LOOP_DELAY_MS: '0', WEBHOOK_URL: rx.url, WEBHOOK_SECRET: secret }
  const [a, b] = await Promise.all([startServer(t, { env }), startServer(t, { env })])
  const adminA = adminApi(a.adminUrl, ADMIN_TOKEN)
  const urns = Array.from({ length: CUSTOMERS }, (_, i) => `UKILL${process.pid % 10000}${i}`)
  for (const u of urns) await adminA.fund(u, 10_000)
  const pool = newPool(a.publicUrl, 4)
  t.teardown(async () => { await pool.close() })
  for (let i = 0; i < AUTHS; i++) for (const u of urns) await postAuth(pool, authBody({ urn: u, transactionAmount: '10' }))
  // per customer: its creation and funding, each with its audit record, then its decisions
  const first = ['customer.updated', 'audit.recorded', 'funds.credited', 'audit.recorded']
  const expected = CUSTOMERS * (first.length + AUTHS)
  // A has read (and failed to send) events: they are pending in its name when it dies
  await rx.until(() => rx.received.length >= CUSTOMERS)
  await a.kill()
  const killedAt = Date.now()
  rx.status = 200
  await rx.until(() => new Set(rx.accepted().map((e) => e.id)).size >= expected)
  t.comment(`all ${expected} events accepted ${Date.now() - killedAt} ms after the kill`)

  const wh = new Webhook(secret)
  for (const r of rx.received.filter((x) => x.status === 200)) wh.verify(r.body, r.headers)
  const accepted = rx.accepted()
  for (const u of urns) {
    const mine = [...new Map(accepted.filter((e) => e.data.urn === u).map((e) => [e.id, e])).values()]
    t.same(mine.map((e) => e.type), [...first, ...Array(AUTHS).fill('decision.created')], `${u}: every event, in order`)
  }
  const metrics = await adminApi(b.adminUrl, ADMIN_TOKEN).metrics()
  t.match(metrics, /extauth_events_delivered_total/, 'the survivor counts its deliveries')
})

// Two extauth processes on one Redis (the shared server, a key prefix of this test's own), under concurrent
// load on the same customers: the money invariants hold across both. Each customer is funded for exactly
// N debits and is sent 3·N requests split over the two instances at once: exactly N are approved, the rest
// are 51, and the balance is the opening balance minus the approvals (zero).
import t from 'tap'
import { deleteByPrefix, uniquePrefix, SHARED_REDIS_URL } from '../helpers/redis.js'
import { startServer } from '../helpers/server-process.js'
import { adminApi, countBy, debitOf, newPool, postAuth, type Sample } from '../helpers/load.js'
import { ADMIN_TOKEN, authBody } from '../helpers/config.js'

const CUSTOMERS = 6
const N = 40
const AMOUNT = 250

t.test('two instances, one Redis, the same customers', async (t) => {
  const prefix = uniquePrefix()
  t.teardown(async () => { await deleteByPrefix(SHARED_REDIS_URL, prefix) })
  // shedding off: this test is about money, and a shed 05 decides nothing
  const env = { REDIS_URL: SHARED_REDIS_URL, REDIS_KEY_PREFIX: prefix, LOG_LEVEL: 'warn', SHED_EVENT_LOOP_DELAY_MS: '0' }
  const [a, b] = await Promise.all([startServer(t, { env }), startServer(t, { env })])
  const adminA = adminApi(a.adminUrl, ADMIN_TOKEN)
  const adminB = adminApi(b.adminUrl, ADMIN_TOKEN)
  const urns = Array.from({ length: CUSTOMERS }, (_, i) => `UTWO${process.pid % 10000}${i}`)
  // funded through one instance, seen by the other: they share the store
  for (const u of urns) await adminA.fund(u, N * AMOUNT)
  for (const u of urns) t.equal(await adminB.available(u), N * AMOUNT, `${u} is seen funded through the other instance`)

  const poolA = newPool(a.publicUrl, 32)
  const poolB = newPool(b.publicUrl, 32)
  t.teardown(async () => { await poolA.close(); await poolB.close() })
  // 3·N requests per customer, the customers interleaved, taken by 32 workers on each instance at once
  const bodies = Array.from({ length: 3 * N }, () => urns.map((u) => authBody({ urn: u, transactionAmount: String(AMOUNT) }))).flat()
  const via = new Map<Record<string, unknown>, 'A' | 'B'>()
  const samples: Sample[] = []
  let next = 0
  const worker = async (name: 'A' | 'B'): Promise<void> => {
    for (let body = bodies[next++]; body !== undefined; body = bodies[next++]) {
      via.set(body, name)
      samples.push(await postAuth(name === 'A' ? poolA : poolB, body))
    }
  }
  await Promise.all(Array.from({ length: 64 }, async (_, i) => { await worker(i % 2 === 0 ? 'A' : 'B') }))

  t.same(countBy(samples, (s) => s.error ?? String(s.status)), { 200: samples.length }, 'every request answered 200')
  for (const u of urns) {
    const mine = samples.filter((s) => s.sent.urn === u)
    const codes = countBy(mine, (s) => s.code)
    t.same(codes, { '00': N, 51: 2 * N }, `${u}: exactly ${N} approved, the rest 51 (${JSON.stringify(codes)})`)
    const viaA = mine.filter((s) => s.code === '00' && via.get(s.sent) === 'A').length
    t.ok(viaA > 0 && viaA < N, `${u}: approvals came through both instances (${viaA} via A, ${N - viaA} via B)`)
    const approved = mine.filter((s) => s.code === '00').reduce((sum, s) => sum + debitOf(s.sent), 0)
    t.equal(await adminA.available(u), N * AMOUNT - approved, `${u}: balance = opening − approvals`)
    t.equal(await adminB.available(u), 0, `${u}: both instances see the balance at 0`)
  }
  // a replay through the other instance is the same answer and no second debit
  const first = samples.find((s) => s.code === '00')
  if (first !== undefined) {
    const again = await postAuth(via.get(first.sent) === 'A' ? poolB : poolA, first.sent)
    t.equal(again.code, '00', 'a replay through the other instance gets the same 00')
    t.equal(await adminA.available(first.sent.urn as string), 0, 'and debits nothing more')
  }
  t.equal((await a.stop()).code, 0, 'instance A exits 0')
  t.equal((await b.stop()).code, 0, 'instance B exits 0')
})
